"""What one seat of ``python_draw_dominoes`` observes: OpenSpiel's observation and information state.

``tensor`` is the environment's observation vector of the game's variant (the blocks of
:func:`draw_env.observation.layout`, 258 entries in the seeds' game); the information state
(perfect recall within the hand) adds the ``drawn`` block: one entry per tile (28 in the seeds'
game), ``k`` where the observer drew that tile as its ``k``-th draw of the hand. The strings hold
the same facts as text; the information state string lists every action since the deal, with the
tile of each of the observer's own draws and nothing of the others'. In a match, earlier hands
enter both only through the scores, which is all they bear on the rest of the match.

The observer reads a game and its states through :class:`ObservedGame` and
:class:`ObservedState`, so that it needs nothing from :mod:`draw_env.openspiel.game` (which
imports it).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import pyspiel

from draw_env import tiles
from draw_env.observation import OBSERVATION_SIZE, SEATS, Layout, ObservationTable, layout
from draw_env.openspiel.progress import OPENER, Progress, event_token
from draw_env.rules import DrawGame, DrawState
from draw_env.tiles import NUM_TILES

#: Size of the ``drawn`` block in the seeds' game (a variant's: its number of tiles).
DRAWN_SIZE = NUM_TILES
#: The information state tensor's size in the seeds' game (:func:`information_state_size`).
INFORMATION_STATE_SIZE = OBSERVATION_SIZE + DRAWN_SIZE


def information_state_size(rules: DrawGame) -> int:
    """The information state tensor's size: the observation vector, then one entry per tile."""
    return layout(rules).size + rules.num_tiles


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


def write_blocks(
    vector: np.ndarray, game_layout: Layout, facts: dict[str, Any], player: int, num_players: int
) -> None:
    """Write into ``vector`` what ``player`` observes of ``facts``, block by block of ``game_layout``.

    ``facts`` maps each fact a block reads (:data:`draw_env.observation.FACTS`) to its number, or
    per seat to one number per absolute seat; each block reads it as it declares (bits of a
    mask, values, or a one-hot index, -1 for none), seats turned relative to ``player``.
    """
    vector[:] = 0
    for block in game_layout.blocks:
        start = game_layout.offsets[block.name]
        entries = vector[start : start + block.size]
        fact = facts[block.fact]
        if block.seats == "none":
            _read(entries, fact, block.read)
        elif block.seats == "observer":
            _read(entries, fact[player], block.read)
        else:
            rows = entries.reshape(SEATS, block.width)
            for relative in range(num_players):
                _read(rows[relative], fact[(player + relative) % num_players], block.read)


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


def _dealing_facts(play: Progress, match: bool, target: int) -> dict[str, Any]:
    """The facts of a hand being dealt: the tiles dealt so far, the counts, the seats and scores."""
    rules = play.rules
    seats = range(play.num_players)
    size = rules.hand_size
    nobody = [0] * play.num_players
    return {
        "hand": [tiles.mask_of(play.own_deal(seat)) for seat in seats],
        "line": 0,
        "left": -1,
        "right": -1,
        "placed": nobody,
        "order": 0,
        "sizes": [min(max(len(play.dealt) - seat * size, 0), size) for seat in seats],
        "bones": rules.num_tiles - len(play.dealt),
        "can_draw": 0,  # nobody draws before the hand is in play
        "voids": nobody,
        "to_act": nobody,
        "in_play": [1] * play.num_players,
        "passes": 0,
        "scores": play.scores if match else nobody,
        "target": target,
    }


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
        # The environment's observation table, rebuilt from the rules state at each call.
        self._table = ObservationTable(game.rules, game.match)
        observed = self.layout.size
        self.tensor = np.zeros(information_state_size(game.rules) if perfect_recall else observed, np.float32)
        self.dict: dict[str, Any] = {"observation": self.tensor[:observed]}
        if perfect_recall:
            self.dict["drawn"] = self.tensor[observed:]

    def set_from(self, state: ObservedState, player: int) -> None:
        """Fill ``tensor`` with what ``player`` observes of ``state``."""
        play = state._play
        observed = self.layout.size
        if play.core is not None:
            self._table.rebuild(play.core)
            self.tensor[:observed] = self._table.observe(player)
        else:
            facts = _dealing_facts(play, self.match, self.target)
            write_blocks(self.tensor[:observed], self.layout, facts, player, play.num_players)
        if self.perfect_recall:
            drawn = self.tensor[observed:]
            drawn[:] = 0
            for order, tile in enumerate(play.own_draws(player), 1):
                drawn[tile] = order

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
        events = " ".join(event_token(event, player, self.rules) for event in play.events)
        return f"{head} | {events}"
