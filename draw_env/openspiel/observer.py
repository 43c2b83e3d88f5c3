"""What one seat of ``python_draw_dominoes`` observes: OpenSpiel's observation and information state.

``tensor`` is the environment's observation vector of the game's variant (the blocks of
:func:`draw_env.observation.layout`, 258 entries in the seeds' game); the information state
(perfect recall within the hand) is the environment's ``obs_type="information_state"`` vector
(:func:`draw_env.observation.information_layout`): that observation, then the observer's deal
and the hand's actions in order. The strings hold the same facts as text; the information state
string lists every action since the deal, with the tile of each of the observer's own draws and
nothing of the others'. In a match, earlier hands enter both only through the scores, which is
all they bear on the rest of the match.

The observer reads a game and its states through :class:`ObservedGame` and
:class:`ObservedState`, so that it needs nothing from :mod:`draw_env.openspiel.game` (which
imports it).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import pyspiel

from draw_env import tiles
from draw_env.observation import ObservationTable, information_layout, layout, write_history
from draw_env.openspiel.progress import OPENER, Progress, events_text
from draw_env.rules import DrawGame, DrawState


class ObservedGame(Protocol):
    """What the observer reads of a game: its rules and whether an episode is a match."""

    rules: DrawGame
    match: bool


class ObservedState(Protocol):
    """What the observer reads of a state: how far its game has got."""

    _play: Progress


def _view_string(core: DrawState, player: int) -> str:
    """What ``player`` sees of ``core`` (the facts of the observation vector), as text."""
    view = core.view(player)
    tile_set = core.game.tiles
    hand = "".join(tile_set.names[t] for t in tiles.tiles_in(view.hand))
    line = " ".join(f"{seat}:{tile_set.names[tile]}" for tile, seat, _ in view.line)
    ends = "-" if view.ends is None else f"{view.ends[0]}-{view.ends[1]}"
    lacks = " ".join(
        f"{seat}:" + "".join(str(v) for v in range(tile_set.num_values) if voids >> v & 1)
        for seat, voids in enumerate(view.voids)
        if voids
    )
    to_act = "-" if core.result is not None else str(view.current)
    sizes = " ".join(str(count) for count in view.hand_counts)
    return (
        f"hand {hand} line {line or '-'} ends {ends} sizes {sizes} boneyard {view.boneyard_count} "
        f"lacks {lacks or '-'} to_act {to_act} passes {view.passes_in_row}"
    )


def _tile_names(tile_ids: list[int], rules: DrawGame) -> str:
    return "".join(rules.tiles.names[t] for t in sorted(tile_ids))


def write_facts(table: ObservationTable, facts: dict[str, Any]) -> None:
    """Set ``table`` (absolute seats) to ``facts``, block by block of its layout.

    ``facts`` maps facts blocks read (:data:`draw_env.observation.FACTS`) to their number, or per
    seat to one number per absolute seat; each block reads its fact as it declares (bits of a
    mask, values, or a one-hot index). A block whose fact ``facts`` leaves out reads zeros
    (OpenSpiel observes a fresh deal at every tensor it writes, so a deal writes only what is
    not zero). ``table.observe(player)`` then turns the seats relative to ``player``.
    """
    table.table[:] = 0
    players = table.num_players
    for block in table.layout.blocks:
        fact = facts.get(block.fact)
        if fact is None:
            continue
        view = table.views[block.name]
        if block.seats == "none":
            _read(view, fact, block.read)
        elif block.read == "value":
            view[:players] = fact
        else:
            for seat in range(players):
                _read(view[seat], fact[seat], block.read)


def _read(entries: np.ndarray, fact: Any, read: str) -> None:
    """Write one fact (one seat's row of a per-seat fact) as ``read`` says."""
    if read == "bit":
        for index in tiles.tiles_in(fact):
            entries[index] = 1
    elif read == "one_hot":
        if fact >= 0:
            entries[fact] = 1
    else:
        entries[:] = fact


def _dealing_facts(play: Progress, player: int, match: bool, target: int) -> dict[str, Any]:
    """What ``player`` observes of a hand being dealt: its tiles so far, the counts, the seats
    and scores (the other facts are zero: nothing is on the line, nobody draws or acts yet)."""
    rules = play.rules
    players = play.num_players
    size = rules.hand_size
    hands = [0] * players
    hands[player] = tiles.mask_of(play.own_deal(player))
    facts = {
        "hand": hands,
        "sizes": [min(max(len(play.dealt) - seat * size, 0), size) for seat in range(players)],
        "bones": rules.num_tiles - len(play.dealt),
        "in_play": [1] * players,
        "target": target,
    }
    if match:
        facts["scores"] = play.scores
    return facts


class DrawDominoesObserver:
    """OpenSpiel's PyObserver: the observation (default) or the information state (perfect recall)."""

    def __init__(self, game: ObservedGame, iig_obs_type: pyspiel.IIGObservationType | None) -> None:
        perfect_recall = False
        if iig_obs_type is not None:
            if not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
                raise ValueError(
                    "python_draw_dominoes observes for one player: public_info=True and "
                    "private_info=SINGLE_PLAYER are the only supported observation type fields"
                )
            perfect_recall = iig_obs_type.perfect_recall
        self.rules = game.rules
        self.match = game.match
        self.target = game.rules.target if game.match else 0
        self.perfect_recall = perfect_recall
        self.layout = layout(game.rules)
        self.information = information_layout(game.rules)
        # The environment's observation table, rebuilt from the rules state at each call.
        self._table = ObservationTable(game.rules, game.match)
        observed = self.layout.size
        self.tensor = np.zeros(self.information.size if perfect_recall else observed, np.float32)
        self.dict: dict[str, Any] = {"observation": self.tensor[:observed]}
        if perfect_recall:
            history = self.information.split(self.tensor)
            self.dict.update((block.name, history[block.name]) for block in self.information.blocks)
        # OpenSpiel sets an observer from a fresh initial state before each tensor it asks of a
        # state (to size it): the last deal observed, and its vector, are kept.
        self._deal_seen: tuple[Any, ...] | None = None
        self._deal_vector = np.zeros(observed, np.float32)

    def set_from(self, state: ObservedState, player: int) -> None:
        """Fill ``tensor`` with what ``player`` observes of ``state``."""
        play = state._play
        observed = self.layout.size
        if play.core is not None:
            self._table.rebuild(play.core)
            self.tensor[:observed] = self._table.observe(player)
        else:
            self.tensor[:observed] = self._deal_observation(play, player)
        if self.perfect_recall:
            history = self.tensor[observed:]
            history[:] = 0
            # A hand from a position starts with the hand the observer held there.
            dealt = play.start.hands[player] if play.start is not None else tiles.mask_of(play.own_deal(player))
            write_history(self.information, play.num_players, player, dealt, play.events, history)

    def _deal_observation(self, play: Progress, player: int) -> np.ndarray:
        """What ``player`` observes of the hand being dealt (kept while the deal stays the same)."""
        seen = (player, len(play.dealt), tuple(play.own_deal(player)), tuple(play.scores))
        if seen != self._deal_seen:
            write_facts(self._table, _dealing_facts(play, player, self.match, self.target))
            self._deal_vector = self._table.observe(player)
            self._deal_seen = seen
        return self._deal_vector

    def string_from(self, state: ObservedState, player: int) -> str:
        """What ``player`` observes of ``state``, as text."""
        play = state._play
        head = f"p{player}"
        if self.match:
            head += f" hand {play.hand_number} scores {' '.join(map(str, play.scores))}"
        if not self.perfect_recall:
            if play.core is None:
                return f"{head} dealing {len(play.dealt)} hand {_tile_names(play.own_deal(player), self.rules)}"
            return f"{head} {_view_string(play.core, player)}"
        if play.start is not None:
            head += f" from {_view_string(play.start, player)}"
        else:
            opener = "?" if play.phase == OPENER else str(play.opener)
            head += f" opener {opener} dealt {len(play.dealt)} {_tile_names(play.own_deal(player), self.rules)}"
        return f"{head} | {events_text(play, player)}"
