"""What one seat of ``python_draw_dominoes`` observes: OpenSpiel's observation and information state.

``tensor`` is the environment's 258-entry observation vector (:mod:`draw_env.observation`); the
information state (perfect recall within the hand) adds the ``drawn`` block: 28 entries, ``k``
where the observer drew that tile as its ``k``-th draw of the hand. The strings hold the same
facts as text; the information state string lists every action since the deal, with the tile of
each of the observer's own draws and nothing of the others'. In a match, earlier hands enter
both only through the scores, which is all they bear on the rest of the match.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel

from draw_env import tiles
from draw_env.observation import OBSERVATION_SIZE, OFFSETS, ObservationTable
from draw_env.openspiel.progress import OPENER, Progress, event_token
from draw_env.rules import DrawState
from draw_env.tiles import NUM_TILES

if TYPE_CHECKING:
    from draw_env.openspiel.game import DrawDominoesGame, DrawDominoesState

#: Size of the ``drawn`` block that the information state tensor adds to the observation vector.
DRAWN_SIZE = NUM_TILES
INFORMATION_STATE_SIZE = OBSERVATION_SIZE + DRAWN_SIZE


def _view_string(core: DrawState, player: int) -> str:
    """What ``player`` sees of ``core`` (the facts of the observation vector), as text."""
    view = core.view(player)
    hand = "".join(tiles.NAMES[t] for t in tiles.tiles_in(view.hand))
    line = " ".join(f"{seat}:{tiles.NAMES[tile]}" for tile, seat, _ in view.line)
    ends = "-" if view.ends is None else f"{view.ends[0]}-{view.ends[1]}"
    lacks = " ".join(
        f"{seat}:" + "".join(str(v) for v in range(tiles.NUM_VALUES) if voids >> v & 1)
        for seat, voids in enumerate(view.voids)
        if voids
    )
    to_act = "-" if core.result is not None else str(view.current)
    sizes = " ".join(str(count) for count in view.hand_counts)
    return (
        f"hand {hand} line {line or '-'} ends {ends} sizes {sizes} boneyard {view.boneyard_count} "
        f"lacks {lacks or '-'} to_act {to_act} passes {view.passes_in_row}"
    )


def _tile_names(tile_ids: list[int]) -> str:
    return "".join(tiles.NAMES[t] for t in sorted(tile_ids))


class DrawDominoesObserver:
    """OpenSpiel's PyObserver: the observation (default) or the information state (perfect recall)."""

    def __init__(self, game: DrawDominoesGame, iig_obs_type: pyspiel.IIGObservationType | None) -> None:
        perfect_recall = False
        if iig_obs_type is not None:
            if not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
                raise ValueError(
                    "python_draw_dominoes observes for one player: public_info=True and "
                    "private_info=SINGLE_PLAYER are the only supported observation type fields"
                )
            perfect_recall = iig_obs_type.perfect_recall
        self.match = game.match
        self.target = game.rules.target if game.match else 0
        self.perfect_recall = perfect_recall
        # The environment's observation table, rebuilt from the rules state at each call.
        self._table = ObservationTable(game.rules, game.match)
        size = INFORMATION_STATE_SIZE if perfect_recall else OBSERVATION_SIZE
        self.tensor = np.zeros(size, np.float32)
        self.dict: dict[str, Any] = {"observation": self.tensor[:OBSERVATION_SIZE]}
        if perfect_recall:
            self.dict["drawn"] = self.tensor[OBSERVATION_SIZE:]

    def set_from(self, state: DrawDominoesState, player: int) -> None:
        """Fill ``tensor`` with what ``player`` observes of ``state``."""
        play = state._play
        if play.core is not None:
            self._table.rebuild(play.core)
            self.tensor[:OBSERVATION_SIZE] = self._table.observe(player)
        else:
            self._set_dealing(play, player)
        if self.perfect_recall:
            drawn = self.tensor[OBSERVATION_SIZE:]
            drawn[:] = 0
            for order, tile in enumerate(play.own_draws(player), 1):
                drawn[tile] = order

    def _set_dealing(self, play: Progress, player: int) -> None:
        """The observation during a deal: own tiles so far, counts, seats, scores."""
        vector = self.tensor[:OBSERVATION_SIZE]
        vector[:] = 0
        n = play.num_players
        size = play.rules.hand_size
        for tile in play.own_deal(player):
            vector[OFFSETS["hand"] + tile] = 1
        for relative in range(n):
            seat = (player + relative) % n
            vector[OFFSETS["hand_sizes"] + relative] = min(max(len(play.dealt) - seat * size, 0), size)
            vector[OFFSETS["in_play"] + relative] = 1
            if self.match:
                vector[OFFSETS["scores"] + relative] = play.scores[seat]
        vector[OFFSETS["boneyard_size"]] = NUM_TILES - len(play.dealt)
        vector[OFFSETS["target"]] = self.target

    def string_from(self, state: DrawDominoesState, player: int) -> str:
        """What ``player`` observes of ``state``, as text."""
        play = state._play
        head = f"p{player}"
        if self.match:
            head += f" hand {play.hand_number} scores {' '.join(map(str, play.scores))}"
        if not self.perfect_recall:
            if play.core is None:
                return f"{head} dealing {len(play.dealt)} hand {_tile_names(play.own_deal(player))}"
            return f"{head} {_view_string(play.core, player)}"
        if play.start is not None:
            head += f" from {_view_string(play.start, player)}"
        else:
            opener = "?" if play.phase == OPENER else str(play.opener)
            head += f" opener {opener} dealt {len(play.dealt)} {_tile_names(play.own_deal(player))}"
        events = " ".join(event_token(event, player) for event in play.events)
        return f"{head} | {events}"
