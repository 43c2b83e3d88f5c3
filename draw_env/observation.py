"""What each player observes, kept apart from the rules (as OpenSpiel keeps observers apart).

The observation vector (``float32``, length :data:`OBSERVATION_SIZE`) is a sequence of blocks,
listed in :data:`BLOCKS`. Seats are relative: slot 0 is the observer, then the others
clockwise; slots past the number of players are always zero, so one layout serves 2, 3 and 4
players. The first three blocks are the public contract (SPEC section 3).

Speed: an :class:`ObservationTable` keeps every block in absolute seats in one array, updates it
in place after each action, and serves a player's observation with one gather through a
per-player index (which also rotates the seats and copies the data). :func:`observe_state`
builds the same vector from scratch; the tests check the two agree after every action.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from draw_env import tiles
from draw_env.rules import MAX_PLAYERS, MIN_PLAYERS, PROTECTED_BONEYARD, DrawGame, DrawState, PlayerView
from draw_env.tiles import NUM_TILES, NUM_VALUES

SEATS = MAX_PLAYERS
#: Upper bound of any score: a starting score below the target (at most 99) plus one hand's
#: points (at most 168, every pip of the set).
MAX_SCORE = 300


@dataclass(frozen=True)
class Block:
    """One block of the observation vector."""

    name: str
    size: int
    high: float
    meaning: str


BLOCKS: tuple[Block, ...] = (
    Block("hand", NUM_TILES, 1, "1 for each tile id in the observer's hand"),
    Block("line", NUM_TILES, 1, "1 for each tile id on the line"),
    Block("left_end", NUM_VALUES, 1, "one-hot value open at the left end (zeros on an empty line)"),
    Block("right_end", NUM_VALUES, 1, "one-hot value open at the right end (zeros on an empty line)"),
    Block(
        "placed_by",
        SEATS * NUM_TILES,
        1,
        "4 rows (relative seat) x 28 tile ids: 1 where that seat placed that tile",
    ),
    Block("placement_order", NUM_TILES, NUM_TILES, "per tile id, k if it was the k-th tile placed, else 0"),
    Block("hand_sizes", SEATS, NUM_TILES - PROTECTED_BONEYARD, "tiles held, per relative seat"),
    Block("boneyard_size", 1, NUM_TILES - MIN_PLAYERS, "tiles in the boneyard"),
    Block("can_draw", 1, 1, "1 while the boneyard holds 3 or more tiles"),
    Block(
        "lacks",
        SEATS * NUM_VALUES,
        1,
        "4 rows (relative seat) x 7 values: 1 where that seat passed with the value open",
    ),
    Block("to_act", SEATS, 1, "one-hot relative seat to act (zeros once the hand is over)"),
    Block("in_play", SEATS, 1, "1 for each relative seat taken by a player"),
    Block("passes_in_row", 1, SEATS, "passes since the last placement (the hand blocks at n)"),
    Block("scores", SEATS, MAX_SCORE, "match scores per relative seat (zeros with episode='hand')"),
    Block("target", 1, 100, "the match target (0 with episode='hand')"),
)

OFFSETS: dict[str, int] = {}
_position = 0
for _block in BLOCKS:
    OFFSETS[_block.name] = _position
    _position += _block.size
OBSERVATION_SIZE = _position
HIGH = np.concatenate([np.full(block.size, block.high, np.float32) for block in BLOCKS])

# The absolute table: the same blocks with seats absolute, every seat's hand, and one
# always-zero cell that the gathers read for seats nobody sits in.
_T_HANDS = 0
_T_LINE = _T_HANDS + SEATS * NUM_TILES
_T_ENDS = _T_LINE + NUM_TILES
_T_PLACED_BY = _T_ENDS + 2 * NUM_VALUES
_T_ORDER = _T_PLACED_BY + SEATS * NUM_TILES
_T_SIZES = _T_ORDER + NUM_TILES
_T_BONEYARD = _T_SIZES + SEATS
_T_CAN_DRAW = _T_BONEYARD + 1
_T_LACKS = _T_CAN_DRAW + 1
_T_TO_ACT = _T_LACKS + SEATS * NUM_VALUES
_T_IN_PLAY = _T_TO_ACT + SEATS
_T_PASSES = _T_IN_PLAY + SEATS
_T_SCORES = _T_PASSES + 1
_T_TARGET = _T_SCORES + SEATS
_T_ZERO = _T_TARGET + 1
_TABLE_SIZE = _T_ZERO + 1

# _ENDS_ONE_HOT[left, right] is the 14-entry ends block.
_ENDS_ONE_HOT = np.zeros((NUM_VALUES, NUM_VALUES, 2 * NUM_VALUES), np.float32)
for _left in range(NUM_VALUES):
    for _right in range(NUM_VALUES):
        _ENDS_ONE_HOT[_left, _right, _left] = 1
        _ENDS_ONE_HOT[_left, _right, NUM_VALUES + _right] = 1


def _gather_index(num_players: int, player: int) -> np.ndarray:
    """For each observation entry, the table cell it reads, seen from ``player``."""

    def seat_rows(table_offset: int, width: int) -> list[int]:
        index = []
        for relative in range(SEATS):
            if relative < num_players:
                seat = (player + relative) % num_players
                index.extend(range(table_offset + seat * width, table_offset + (seat + 1) * width))
            else:
                index.extend([_T_ZERO] * width)
        return index

    index: list[int] = []
    index += range(_T_HANDS + player * NUM_TILES, _T_HANDS + (player + 1) * NUM_TILES)
    index += range(_T_LINE, _T_LINE + NUM_TILES)
    index += range(_T_ENDS, _T_ENDS + 2 * NUM_VALUES)
    index += seat_rows(_T_PLACED_BY, NUM_TILES)
    index += range(_T_ORDER, _T_ORDER + NUM_TILES)
    index += seat_rows(_T_SIZES, 1)
    index += [_T_BONEYARD, _T_CAN_DRAW]
    index += seat_rows(_T_LACKS, NUM_VALUES)
    index += seat_rows(_T_TO_ACT, 1)
    index += seat_rows(_T_IN_PLAY, 1)
    index += [_T_PASSES]
    index += seat_rows(_T_SCORES, 1)
    index += [_T_TARGET]
    assert len(index) == OBSERVATION_SIZE
    return np.asarray(index, dtype=np.intp)


class ObservationTable:
    """Every player's observation of one state, kept up to date action by action.

    Call :meth:`rebuild` after dealing (or whenever the state changed in a way not reported),
    and :meth:`record` after each action applied to the state.
    """

    def __init__(self, game: DrawGame, match: bool) -> None:
        self.num_players = game.num_players
        self.match = match
        self.target = game.target if match else 0
        self.table = np.zeros(_TABLE_SIZE, np.float32)
        self.gathers = [_gather_index(self.num_players, p) for p in range(self.num_players)]

    def observe(self, player: int) -> np.ndarray:
        """``player``'s observation vector: a new array the table never writes again."""
        return self.table[self.gathers[player]]

    def rebuild(self, state: DrawState) -> None:
        table = self.table
        table[:] = 0
        for seat in range(self.num_players):
            for tile in state.hand_tiles(seat):
                table[_T_HANDS + seat * NUM_TILES + tile] = 1
            table[_T_SIZES + seat] = state.hand_count(seat)
            for value in range(NUM_VALUES):
                table[_T_LACKS + seat * NUM_VALUES + value] = state.voids[seat] >> value & 1
            table[_T_IN_PLAY + seat] = 1
            if self.match:
                table[_T_SCORES + seat] = state.scores[seat]
        for order, (tile, seat, _end) in enumerate(state.line, start=1):
            table[_T_LINE + tile] = 1
            table[_T_PLACED_BY + seat * NUM_TILES + tile] = 1
            table[_T_ORDER + tile] = order
        if state.ends is not None:
            table[_T_ENDS : _T_ENDS + 2 * NUM_VALUES] = _ENDS_ONE_HOT[state.ends]
        table[_T_BONEYARD] = len(state.boneyard)
        table[_T_CAN_DRAW] = state.can_draw
        if not state.is_hand_over:
            table[_T_TO_ACT + state.current] = 1
        table[_T_PASSES] = state.passes_in_row
        table[_T_TARGET] = self.target

    def record(self, state: DrawState, seat: int, action: int, drawn: int) -> None:
        """Bring the table up to date after ``seat`` played ``action`` on ``state``.

        Args:
            drawn: the tile drawn, when ``action`` was a draw.
        """
        if state.is_hand_over:
            self.rebuild(state)
            return
        table = self.table
        if action < 56:
            tile = action >> 1
            table[_T_HANDS + seat * NUM_TILES + tile] = 0
            table[_T_LINE + tile] = 1
            table[_T_PLACED_BY + seat * NUM_TILES + tile] = 1
            table[_T_ORDER + tile] = len(state.line)
            table[_T_ENDS : _T_ENDS + 2 * NUM_VALUES] = _ENDS_ONE_HOT[state.left, state.right]
            table[_T_SIZES + seat] -= 1
            table[_T_PASSES] = 0
        elif action == 56:
            table[_T_HANDS + seat * NUM_TILES + drawn] = 1
            table[_T_SIZES + seat] += 1
            table[_T_BONEYARD] -= 1
            table[_T_CAN_DRAW] = state.can_draw
            return  # the drawer keeps the turn
        else:
            table[_T_LACKS + seat * NUM_VALUES + state.left] = 1
            table[_T_LACKS + seat * NUM_VALUES + state.right] = 1
            table[_T_PASSES] = state.passes_in_row
        table[_T_TO_ACT + seat] = 0
        table[_T_TO_ACT + state.current] = 1


def observe_state(state: DrawState, player: int, match: bool = False) -> np.ndarray:
    """``player``'s observation of ``state``, built from scratch (the reference for the table)."""
    table = ObservationTable(state.game, match)
    table.rebuild(state)
    return table.observe(player)


def split(observation: np.ndarray) -> dict[str, np.ndarray]:
    """The observation vector cut into its named blocks (views, not copies)."""
    return {block.name: observation[OFFSETS[block.name] : OFFSETS[block.name] + block.size] for block in BLOCKS}


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
