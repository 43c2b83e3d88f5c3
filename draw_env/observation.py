"""What each player observes, kept apart from the rules (as OpenSpiel keeps observers apart).

The observation vector (``float32``, length :data:`OBSERVATION_SIZE`) is a sequence of blocks,
listed in :data:`BLOCKS`. Seats are relative: slot 0 is the observer, then the others
clockwise; slots past the number of players are always zero, so one layout serves 2, 3 and 4
players. The first three blocks (own hand, tiles on the line, open ends) are a fixed
contract that outside code may rely on (``docs/environment.md``, Observations).

Speed: an :class:`ObservationTable` keeps every block in absolute seats in one array (its layout,
:data:`TABLE_SHAPES`, is derived from :data:`BLOCKS`), updates it in place after each action
through named views of that array, and serves a player's observation with one gather through a
per-player index (which also rotates the seats and copies the data). :func:`observe_state`
builds the same vector from scratch; the tests check the two agree after every action.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from draw_env import tiles
from draw_env.rules import DRAW, MAX_PLAYERS, MIN_PLAYERS, PROTECTED_BONEYARD, DrawGame, DrawState, PlayerView
from draw_env.tiles import NUM_TILES, NUM_VALUES

SEATS = MAX_PLAYERS
#: Upper bound of any score: a starting score below the target (at most 99) plus one hand's
#: points (at most :data:`draw_env.rules.MAX_HAND_POINTS`).
MAX_SCORE = 300


@dataclass(frozen=True)
class Block:
    """One block of the observation vector.

    ``seats`` says how the block relates to seats: ``"none"`` (one value or row for the table),
    ``"relative"`` (4 rows, one per relative seat, the observer first) or ``"observer"`` (the
    observer's own row of a per-seat fact, such as its hand).
    """

    name: str
    size: int
    high: float
    meaning: str
    seats: str = "none"

    @property
    def width(self) -> int:
        """The length of one seat's row (the whole block for ``seats="none"``)."""
        return self.size // SEATS if self.seats == "relative" else self.size


BLOCKS: tuple[Block, ...] = (
    Block("hand", NUM_TILES, 1, "1 for each tile id in the observer's hand", "observer"),
    Block("line", NUM_TILES, 1, "1 for each tile id on the line"),
    Block("left_end", NUM_VALUES, 1, "one-hot value open at the left end (zeros on an empty line)"),
    Block("right_end", NUM_VALUES, 1, "one-hot value open at the right end (zeros on an empty line)"),
    Block(
        "placed_by",
        SEATS * NUM_TILES,
        1,
        "4 rows (relative seat) x 28 tile ids: 1 where that seat placed that tile",
        "relative",
    ),
    Block("placement_order", NUM_TILES, NUM_TILES, "per tile id, k if it was the k-th tile placed, else 0"),
    Block("hand_sizes", SEATS, NUM_TILES - PROTECTED_BONEYARD, "tiles held, per relative seat", "relative"),
    Block("boneyard_size", 1, NUM_TILES - MIN_PLAYERS, "tiles in the boneyard"),
    Block("can_draw", 1, 1, "1 while the boneyard holds 3 or more tiles"),
    Block(
        "lacks",
        SEATS * NUM_VALUES,
        1,
        "4 rows (relative seat) x 7 values: 1 where that seat passed with the value open",
        "relative",
    ),
    Block("to_act", SEATS, 1, "one-hot relative seat to act (zeros once the hand is over)", "relative"),
    Block("in_play", SEATS, 1, "1 for each relative seat taken by a player", "relative"),
    Block("passes_in_row", 1, SEATS, "passes since the last placement (the hand blocks at n)"),
    Block(
        "scores", SEATS, MAX_SCORE, "match scores per relative seat (zeros with episode='hand')", "relative"
    ),
    Block("target", 1, 100, "the match target (0 with episode='hand')"),
)

OFFSETS: dict[str, int] = {}
_position = 0
for _block in BLOCKS:
    OFFSETS[_block.name] = _position
    _position += _block.size
OBSERVATION_SIZE = _position
HIGH = np.concatenate([np.full(block.size, block.high, np.float32) for block in BLOCKS])

#: The absolute table that :class:`ObservationTable` keeps (and ``raw_env.state()`` returns): the
#: same blocks in the same order with seats absolute, per-seat blocks as ``(SEATS, width)`` rows
#: (every seat's hand, not only the observer's; one value per seat as ``(SEATS,)``), then one
#: always-zero cell that observations read for seats nobody sits in. ``TABLE_SHAPES[name]`` is a
#: block's shape, ``TABLE_OFFSETS[name]`` where it starts.
def _table_shape(block: Block) -> tuple[int, ...]:
    if block.seats == "none":
        return (block.size,)
    return (SEATS, block.width) if block.width > 1 else (SEATS,)


TABLE_SHAPES: dict[str, tuple[int, ...]] = {block.name: _table_shape(block) for block in BLOCKS}
TABLE_SHAPES["zero"] = (1,)
TABLE_OFFSETS: dict[str, int] = {}
_position = 0
for _name, _shape in TABLE_SHAPES.items():
    TABLE_OFFSETS[_name] = _position
    _position += math.prod(_shape)
TABLE_SIZE = _position

# _ENDS_ONE_HOT[left, right] is the 14 entries of the left_end and right_end blocks, side by side.
_ENDS_ONE_HOT = np.zeros((NUM_VALUES, NUM_VALUES, 2 * NUM_VALUES), np.float32)
for _left in range(NUM_VALUES):
    for _right in range(NUM_VALUES):
        _ENDS_ONE_HOT[_left, _right, _left] = 1
        _ENDS_ONE_HOT[_left, _right, NUM_VALUES + _right] = 1


#: _VALUES_OF_MASK[mask] is the 7-entry row with 1 for each value whose bit is set in ``mask``.
_VALUES_OF_MASK = ((np.arange(1 << NUM_VALUES)[:, None] >> np.arange(NUM_VALUES)) & 1).astype(np.float32)


def _gather_index(num_players: int, player: int) -> np.ndarray:
    """For each observation entry, the table cell it reads, seen from ``player``."""
    index: list[int] = []
    for block in BLOCKS:
        start, width = TABLE_OFFSETS[block.name], block.width
        if block.seats == "none":
            index += range(start, start + width)
        elif block.seats == "observer":
            index += range(start + player * width, start + (player + 1) * width)
        else:
            for relative in range(SEATS):
                if relative < num_players:
                    seat = (player + relative) % num_players
                    index += range(start + seat * width, start + (seat + 1) * width)
                else:
                    index += [TABLE_OFFSETS["zero"]] * width
    assert len(index) == OBSERVATION_SIZE
    return np.asarray(index, dtype=np.intp)


class ObservationTable:
    """Every player's observation of one state, kept up to date action by action.

    ``table`` is one ``float32`` array of :data:`TABLE_SIZE`; ``views[name]`` are named views of
    its blocks (shapes :data:`TABLE_SHAPES`), as OpenSpiel's observers keep theirs. Call
    :meth:`rebuild` after dealing (or whenever the state changed in a way not reported), and
    :meth:`record` after each action applied to the state.
    """

    def __init__(self, game: DrawGame, match: bool) -> None:
        self.num_players = game.num_players
        self.match = match
        self.target = game.target if match else 0
        self.gathers = [_gather_index(self.num_players, p) for p in range(self.num_players)]
        self._bind(np.zeros(TABLE_SIZE, np.float32))

    def _bind(self, table: np.ndarray) -> None:
        """Make ``table`` the array and set up the named views of its blocks."""
        self.table = table
        self.views = {
            name: table[TABLE_OFFSETS[name] : TABLE_OFFSETS[name] + math.prod(shape)].reshape(shape)
            for name, shape in TABLE_SHAPES.items()
        }
        # The views the per-action update writes, bound once (it runs at every step).
        views = self.views
        self._hand, self._line, self._placed_by = views["hand"], views["line"], views["placed_by"]
        self._order, self._sizes, self._lacks = views["placement_order"], views["hand_sizes"], views["lacks"]
        self._to_act, self._counts = views["to_act"], views["boneyard_size"]
        self._can_draw, self._passes = views["can_draw"], views["passes_in_row"]
        self._in_play, self._scores, self._target = views["in_play"], views["scores"], views["target"]
        # left_end and right_end are neighbours: one write of _ENDS_ONE_HOT sets both.
        self._ends = table[TABLE_OFFSETS["left_end"] : TABLE_OFFSETS["right_end"] + NUM_VALUES]

    # Copies (deepcopy, pickle) would turn the views into arrays of their own, detached from the
    # table: carry the table alone and bind fresh views to the copy.
    def __getstate__(self) -> dict[str, object]:
        return {"num_players": self.num_players, "match": self.match, "target": self.target,
                "gathers": self.gathers, "table": self.table}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.num_players, self.match, self.target = state["num_players"], state["match"], state["target"]
        self.gathers = state["gathers"]
        self._bind(state["table"])

    def observe(self, player: int) -> np.ndarray:
        """``player``'s observation vector: a new array the table never writes again."""
        return self.table[self.gathers[player]]

    def rebuild(self, state: DrawState) -> None:
        self.table[:] = 0
        hand, lacks, sizes = self._hand, self._lacks, self._sizes
        for seat in range(self.num_players):
            for tile in state.hand_tiles(seat):
                hand[seat, tile] = 1
            sizes[seat] = state.hand_count(seat)
            if state.voids[seat]:
                lacks[seat] = _VALUES_OF_MASK[state.voids[seat]]
        self._in_play[: self.num_players] = 1
        if self.match:
            self._scores[: self.num_players] = state.scores
        line, placed_by, order = self._line, self._placed_by, self._order
        for position, (tile, seat, _end) in enumerate(state.line, start=1):
            line[tile] = 1
            placed_by[seat, tile] = 1
            order[tile] = position
        if state.ends is not None:
            self._ends[:] = _ENDS_ONE_HOT[state.ends]
        self._counts[0] = len(state.boneyard)
        self._can_draw[0] = state.can_draw
        if not state.is_hand_over:
            self._to_act[state.current] = 1
        self._passes[0] = state.passes_in_row
        self._target[0] = self.target

    def record(self, state: DrawState, seat: int, action: int, drawn: int) -> None:
        """Bring the table up to date after ``seat`` played ``action`` on ``state``.

        Args:
            drawn: the tile drawn, when ``action`` was a draw.
        """
        if state.is_hand_over:
            self.rebuild(state)
            return
        if action < DRAW:
            tile = action >> 1
            self._hand[seat, tile] = 0
            self._line[tile] = 1
            self._placed_by[seat, tile] = 1
            self._order[tile] = len(state.line)
            self._ends[:] = _ENDS_ONE_HOT[state.left, state.right]
            self._sizes[seat] -= 1
            self._passes[0] = 0
        elif action == DRAW:
            self._hand[seat, drawn] = 1
            self._sizes[seat] += 1
            self._counts[0] -= 1
            self._can_draw[0] = state.can_draw
            return  # the drawer keeps the turn
        else:
            lacks = self._lacks[seat]
            lacks[state.left] = 1
            lacks[state.right] = 1
            self._passes[0] = state.passes_in_row
        self._to_act[seat] = 0
        self._to_act[state.current] = 1


def observe_state(state: DrawState, player: int, match: bool = False) -> np.ndarray:
    """``player``'s observation of ``state``, built from scratch (the reference for the table)."""
    table = ObservationTable(state.game, match)
    table.rebuild(state)
    return table.observe(player)


def split(observation: np.ndarray) -> dict[str, np.ndarray]:
    """The observation vector cut into its named blocks (views, not copies)."""
    return {
        block.name: observation[OFFSETS[block.name] : OFFSETS[block.name] + block.size]
        for block in BLOCKS
    }


def view_from_observation(observation: np.ndarray, num_players: int) -> PlayerView:
    """Rebuild what the observer knows from its observation vector, in relative seats.

    The observer is seat 0 of the returned view and the others follow clockwise, as in the
    observation. Ends of placements are not observed and come back as -1; the opener is unknown
    and comes back as 0. Enough for search: ``view.sample_state(rng)`` deals hidden tiles
    consistently with everything observed.
    """
    blocks = split(np.asarray(observation))

    def mask(bits: np.ndarray) -> int:
        return tiles.mask_of(int(t) for t in np.flatnonzero(bits > 0.5))

    placed_by = blocks["placed_by"].reshape(SEATS, NUM_TILES)
    order = blocks["placement_order"]
    line_tiles = sorted(np.flatnonzero(order > 0.5), key=lambda t: order[t])
    line = tuple(
        (int(tile), int(np.argmax(placed_by[:, tile])), -1) for tile in line_tiles
    )
    left = blocks["left_end"]
    right = blocks["right_end"]
    ends = (int(np.argmax(left)), int(np.argmax(right))) if left.any() else None
    lacks = blocks["lacks"].reshape(SEATS, NUM_VALUES)
    to_act = blocks["to_act"][:num_players]
    scores = blocks["scores"][:num_players]
    return PlayerView(
        game=DrawGame(num_players),
        player=0,
        hand=mask(blocks["hand"]),
        line=line,
        line_mask=mask(blocks["line"]),
        ends=ends,
        hand_counts=tuple(int(round(x)) for x in blocks["hand_sizes"][:num_players]),
        boneyard_count=int(round(blocks["boneyard_size"][0])),
        voids=tuple(tiles.mask_of(int(v) for v in np.flatnonzero(row > 0.5)) for row in lacks[:num_players]),
        current=int(np.argmax(to_act)) if to_act.any() else 0,
        passes_in_row=int(round(blocks["passes_in_row"][0])),
        scores=tuple(int(round(s)) for s in scores),
        opener=0,
    )
