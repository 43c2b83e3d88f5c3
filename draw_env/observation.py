"""What each player observes, kept apart from the rules (as OpenSpiel keeps observers apart).

The observation vector (``float32``) is a sequence of blocks: the declaration every engine
reads. Each :class:`Block` names the fact its entries read and how (:data:`FACTS`, :data:`READS`);
a variant's :class:`Layout` (:func:`layout`) holds its blocks, their offsets and bounds, and the
names :data:`BLOCKS`, :data:`OFFSETS`, :data:`OBSERVATION_SIZE`, :data:`HIGH` are the seeds'
game's (258 entries). Seats are relative: slot 0 is the observer, then the others clockwise;
slots past the number of players are always zero, so one layout serves 2, 3 and 4 players. The
first three blocks (own hand, tiles on the line, open ends) are a fixed contract that outside
code may rely on (``docs/environment.md``, Observations).

Speed: an :class:`ObservationTable` keeps every block in absolute seats in one array (its layout,
``Layout.table_shapes``, is derived from the blocks), updates it in place after each action
through named views of that array, and serves a player's observation with one gather through a
per-player index (which also rotates the seats and copies the data). :func:`observe_state`
builds the same vector from scratch; the tests check the two agree after every action.

The information state (``obs_type="information_state"``) is declared here too: the observation
as a prefix, then the history blocks (:data:`HISTORY_FACTS`, :func:`information_layout`), written
from the rules' history by :func:`information_state` (the reference) and kept up to date for the
AEC environment by :class:`InformationTable`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from draw_env import tiles
from draw_env.rules import DEFAULT_GAME, MAX_PLAYERS, MIN_PLAYERS, DrawGame, DrawState, PlayerView

SEATS = MAX_PLAYERS
#: Upper bound of any score in the seeds' game: a starting score below the target (at most 99)
#: plus one hand's points (at most :data:`draw_env.rules.MAX_HAND_POINTS`). A variant with more
#: pips raises it (:func:`layout`).
MAX_SCORE = 300

#: How an entry reads its fact (per seat row for per-seat blocks): ``"bit"``: entry ``i`` is bit
#: ``i`` of a mask; ``"value"``: entry ``i`` is the fact's ``i``-th number; ``"one_hot"``: entry
#: ``i`` is 1 where the fact equals ``i``.
READS = ("bit", "value", "one_hot")


@dataclass(frozen=True)
class Block:
    """One block of the observation vector, and the fact each of its entries reads.

    ``seats`` says how the block relates to seats: ``"none"`` (one value or row for the table),
    ``"relative"`` (4 rows, one per relative seat, the observer first; a seat nobody sits in
    reads zeros) or ``"observer"`` (the observer's own row of a per-seat fact, such as its
    hand). ``fact`` names the number (or, per seat, numbers) the entries are read from and
    ``read`` how (:data:`READS`); every engine computes the facts of :data:`FACTS` its own way
    and derives the vector from these blocks.
    """

    name: str
    size: int
    high: float
    meaning: str
    seats: str = "none"
    fact: str = ""
    read: str = "value"

    @property
    def width(self) -> int:
        """The length of one seat's row (the whole block for ``seats="none"``)."""
        return self.size // SEATS if self.seats == "relative" else self.size


#: The facts an observation reads, with what each is; per-seat facts (``seats`` of their blocks
#: ``"relative"`` or ``"observer"``) hold one entry per absolute seat.
FACTS: dict[str, str] = {
    "hand": "per seat, the mask of the tiles it holds",
    "line": "the mask of the tiles on the line",
    "left": "the value open at the left end, -1 on an empty line",
    "right": "the value open at the right end, -1 on an empty line",
    "placed": "per seat, the mask of the tiles it placed",
    "order": "per tile id, k if it was the k-th tile placed, else 0",
    "sizes": "per seat, the tiles it holds",
    "bones": "tiles in the boneyard",
    "can_draw": "1 while the boneyard holds more than the protected tiles",
    "voids": "per seat, the mask of the values it passed with open",
    "to_act": "per seat, 1 for the seat to act (0 for all once the hand is over)",
    "in_play": "per seat, 1 (a seat nobody sits in reads 0)",
    "passes": "passes since the last placement",
    "scores": "per seat, the match score (0 with episode='hand')",
    "target": "the match target (0 with episode='hand')",
}


@dataclass(frozen=True)
class Layout:
    """The observation of one variant: its blocks, where each starts, and the absolute table.

    Attributes:
        blocks: the blocks in order.
        offsets: ``offsets[name]``, where a block starts in the vector.
        size: the vector's length.
        high: float32 ``(size,)``, each entry's upper bound (the lower is 0).
        table_shapes, table_offsets, table_size: the absolute table :class:`ObservationTable`
            keeps (and ``raw_env.state()`` returns): the same blocks in the same order with seats
            absolute, per-seat blocks as ``(SEATS, width)`` rows (every seat's hand, not only the
            observer's; one value per seat as ``(SEATS,)``), then one always-zero cell
            (``"zero"``) that observations read for seats nobody sits in.
    """

    blocks: tuple[Block, ...]
    num_values: int
    offsets: dict[str, int] = field(init=False)
    size: int = field(init=False)
    high: np.ndarray = field(init=False, repr=False)
    table_shapes: dict[str, tuple[int, ...]] = field(init=False)
    table_offsets: dict[str, int] = field(init=False)
    table_size: int = field(init=False)

    def __post_init__(self) -> None:
        offsets, position = {}, 0
        for block in self.blocks:
            offsets[block.name] = position
            position += block.size
        shapes = {block.name: _table_shape(block) for block in self.blocks}
        shapes["zero"] = (1,)
        table_offsets, table_position = {}, 0
        for name, shape in shapes.items():
            table_offsets[name] = table_position
            table_position += math.prod(shape)
        high = np.concatenate([np.full(block.size, block.high, np.float32) for block in self.blocks])
        for name, value in (("offsets", offsets), ("size", position), ("high", high), ("table_shapes", shapes),
                            ("table_offsets", table_offsets), ("table_size", table_position)):
            object.__setattr__(self, name, value)

    def gather_index(self, num_players: int, player: int) -> np.ndarray:
        """For each observation entry, the table cell it reads, seen from ``player``."""
        index: list[int] = []
        for block in self.blocks:
            start, width = self.table_offsets[block.name], block.width
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
                        index += [self.table_offsets["zero"]] * width
        assert len(index) == self.size
        return np.asarray(index, dtype=np.intp)

    def split(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        """The observation vector cut into its named blocks (views, not copies)."""
        return {
            block.name: observation[self.offsets[block.name] : self.offsets[block.name] + block.size]
            for block in self.blocks
        }

    def fact_sizes(self) -> dict[str, int]:
        """How many numbers each fact of :data:`FACTS` is: one per relative seat for per-seat
        facts, one per tile for ``order``, else one."""
        sizes = {name: 1 for name in FACTS}
        for block in self.blocks:
            if block.seats != "none":
                sizes[block.fact] = SEATS
            elif block.read == "value":
                sizes[block.fact] = block.size
        return sizes

    def fact_table(self) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
        """How an engine writes the vector from a facts vector: the generic observation writer.

        The facts vector holds every fact of :data:`FACTS` in that order (sizes
        :meth:`fact_sizes`), per-seat facts in relative seats (the observer first; seats nobody
        sits in hold 0), and ``-1`` for an end of the empty line. Entry ``i`` of the observation
        is then, with ``x = facts[source[i]]``: ``(x >> argument[i]) & 1`` where ``kind[i]`` is 0
        (``"bit"``), ``x`` where it is 1 (``"value"``), ``x == argument[i]`` where it is 2
        (``"one_hot"``).

        Returns:
            ``(fact_offsets, source, kind, argument)``: where each fact starts in the facts
            vector, and three int64 arrays of the observation's length.
        """
        fact_offsets, position = {}, 0
        for name, size in self.fact_sizes().items():
            fact_offsets[name] = position
            position += size
        source: list[int] = []
        kind: list[int] = []
        argument: list[int] = []
        for block in self.blocks:
            code = READS.index(block.read)
            start = fact_offsets[block.fact]
            rows = range(SEATS) if block.seats == "relative" else range(1)
            for row in rows:
                for index in range(block.width):
                    per_entry = block.seats == "none" and block.read == "value"
                    source.append(start + row + (index if per_entry else 0))
                    kind.append(code)
                    argument.append(0 if block.read == "value" else index)
        assert len(source) == self.size
        return fact_offsets, np.array(source, np.int64), np.array(kind, np.int64), np.array(argument, np.int64)


def _table_shape(block: Block) -> tuple[int, ...]:
    if block.seats == "none":
        return (block.size,)
    return (SEATS, block.width) if block.width > 1 else (SEATS,)


def _blocks(num_tiles: int, num_values: int, protected: int, max_score: int) -> tuple[Block, ...]:
    """The blocks of a set of ``num_tiles`` tiles and ``num_values`` values (the seeds': 28 and 7)."""
    return (
        Block("hand", num_tiles, 1, "1 for each tile id in the observer's hand", "observer", "hand", "bit"),
        Block("line", num_tiles, 1, "1 for each tile id on the line", fact="line", read="bit"),
        Block("left_end", num_values, 1, "one-hot value open at the left end (zeros on an empty line)",
              fact="left", read="one_hot"),
        Block("right_end", num_values, 1, "one-hot value open at the right end (zeros on an empty line)",
              fact="right", read="one_hot"),
        Block(
            "placed_by",
            SEATS * num_tiles,
            1,
            f"4 rows (relative seat) x {num_tiles} tile ids: 1 where that seat placed that tile",
            "relative",
            "placed",
            "bit",
        ),
        Block("placement_order", num_tiles, num_tiles, "per tile id, k if it was the k-th tile placed, else 0",
              fact="order"),
        Block("hand_sizes", SEATS, num_tiles - protected, "tiles held, per relative seat", "relative", "sizes"),
        Block("boneyard_size", 1, num_tiles - MIN_PLAYERS, "tiles in the boneyard", fact="bones"),
        Block("can_draw", 1, 1, "1 while the boneyard holds more than the protected tiles (3 or more)",
              fact="can_draw"),
        Block(
            "lacks",
            SEATS * num_values,
            1,
            f"4 rows (relative seat) x {num_values} values: 1 where that seat passed with the value open",
            "relative",
            "voids",
            "bit",
        ),
        Block("to_act", SEATS, 1, "one-hot relative seat to act (zeros once the hand is over)", "relative",
              "to_act"),
        Block("in_play", SEATS, 1, "1 for each relative seat taken by a player", "relative", "in_play"),
        Block("passes_in_row", 1, SEATS, "passes since the last placement (the hand blocks at n)", fact="passes"),
        Block(
            "scores", SEATS, max_score, "match scores per relative seat (zeros with episode='hand')", "relative",
            "scores",
        ),
        Block("target", 1, 100, "the match target (0 with episode='hand')", fact="target"),
    )


def layout(game: DrawGame) -> Layout:
    """The observation layout of ``game``'s variant (shared: one object per variant)."""
    return _layout(game.max_pip, game.protected)


@functools.cache
def _layout(max_pip: int, protected: int) -> Layout:
    tile_set = tiles.tile_set(max_pip)
    # A score below the target (at most 99) plus one hand's points.
    max_score = max(MAX_SCORE, 99 + tile_set.total_pips)
    blocks = _blocks(tile_set.num_tiles, tile_set.num_values, protected, max_score)
    return Layout(blocks, tile_set.num_values)


#: The seeds' game's layout; the names below are its fields.
DEFAULT_LAYOUT = layout(DEFAULT_GAME)
BLOCKS = DEFAULT_LAYOUT.blocks
OFFSETS = DEFAULT_LAYOUT.offsets
OBSERVATION_SIZE = DEFAULT_LAYOUT.size
HIGH = DEFAULT_LAYOUT.high


@functools.cache
def _ends_one_hot(num_values: int) -> np.ndarray:
    """``[left, right]`` -> the entries of the left_end and right_end blocks, side by side."""
    table = np.zeros((num_values, num_values, 2 * num_values), np.float32)
    for left in range(num_values):
        for right in range(num_values):
            table[left, right, left] = 1
            table[left, right, num_values + right] = 1
    return table


@functools.cache
def _values_of_mask(num_values: int) -> np.ndarray:
    """``[mask]`` -> the row with 1 for each value whose bit is set in ``mask``."""
    return ((np.arange(1 << num_values)[:, None] >> np.arange(num_values)) & 1).astype(np.float32)


class ObservationTable:
    """Every player's observation of one state, kept up to date action by action.

    ``table`` is one ``float32`` array of the layout's ``table_size``; ``views[name]`` are named
    views of its blocks (shapes ``table_shapes``), as OpenSpiel's observers keep theirs. Call
    :meth:`rebuild` after dealing (or whenever the state changed in a way not reported), and
    :meth:`record` after each action applied to the state.
    """

    def __init__(self, game: DrawGame, match: bool) -> None:
        self.game = game
        self.match = match
        self._bind(np.zeros(layout(game).table_size, np.float32))

    def _bind(self, table: np.ndarray) -> None:
        """Make ``table`` the array and set up the named views of its blocks."""
        game = self.game
        self.num_players = game.num_players
        self.target = game.target if self.match else 0
        self.layout = layout(game)
        self.gathers = [self.layout.gather_index(self.num_players, p) for p in range(self.num_players)]
        self._draw_action = game.draw_action
        self.table = table
        shapes, offsets = self.layout.table_shapes, self.layout.table_offsets
        self.views = {
            name: table[offsets[name] : offsets[name] + math.prod(shape)].reshape(shape)
            for name, shape in shapes.items()
        }
        # The views the per-action update writes, bound once (it runs at every step), by the fact
        # each block reads: the declaration names the blocks, their sizes and where they start.
        block_of = {block.fact: block for block in self.layout.blocks}
        fact = {name: self.views[block.name] for name, block in block_of.items()}
        self._hand, self._line, self._placed_by = fact["hand"], fact["line"], fact["placed"]
        self._order, self._sizes, self._lacks = fact["order"], fact["sizes"], fact["voids"]
        self._to_act, self._counts = fact["to_act"], fact["bones"]
        self._can_draw, self._passes = fact["can_draw"], fact["passes"]
        self._in_play, self._scores, self._target = fact["in_play"], fact["scores"], fact["target"]
        self._values_of_mask = _values_of_mask(block_of["voids"].width)
        # The two ends' one-hot blocks stand side by side: one write of _ends_table sets both.
        left, right = block_of["left"], block_of["right"]
        start, stop = offsets[left.name], offsets[right.name] + right.size
        if stop - start != left.size + right.size or left.size != right.size:
            raise ValueError(f"the blocks {left.name!r} and {right.name!r} must be neighbours of one width")
        self._ends_table = _ends_one_hot(left.size)
        self._ends = table[start:stop]

    # Copies (deepcopy, pickle) would turn the views into arrays of their own, detached from the
    # table: carry the table alone and bind fresh views to the copy.
    def __getstate__(self) -> dict[str, object]:
        return {"game": self.game, "match": self.match, "table": self.table}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.game, self.match = state["game"], state["match"]
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
                lacks[seat] = self._values_of_mask[state.voids[seat]]
        self._in_play[: self.num_players] = 1
        if self.match:
            self._scores[: self.num_players] = state.scores
        line, placed_by, order = self._line, self._placed_by, self._order
        for position, (tile, seat, _end) in enumerate(state.line, start=1):
            line[tile] = 1
            placed_by[seat, tile] = 1
            order[tile] = position
        if state.ends is not None:
            self._ends[:] = self._ends_table[state.ends]
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
        if action < self._draw_action:
            tile = action >> 1
            self._hand[seat, tile] = 0
            self._line[tile] = 1
            self._placed_by[seat, tile] = 1
            self._order[tile] = len(state.line)
            self._ends[:] = self._ends_table[state.left, state.right]
            self._sizes[seat] -= 1
            self._passes[0] = 0
        elif action == self._draw_action:
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


def facts_of_state(state: DrawState, player: int, match: bool = False) -> np.ndarray:
    """The facts vector of ``player``'s view of ``state`` (:meth:`Layout.fact_table`): the
    reference fact functions, which every engine computes its own way."""
    game = state.game
    observed = layout(game)
    offsets, _, _, _ = observed.fact_table()
    facts = np.zeros(sum(observed.fact_sizes().values()), np.int64)
    players = game.num_players
    seats = [(player + relative) % players for relative in range(players)]
    placed = [0] * players
    for position, (tile, seat, _end) in enumerate(state.line, start=1):
        placed[seat] |= 1 << tile
        facts[offsets["order"] + tile] = position
    per_seat = {
        "hand": state.hands,
        "placed": placed,
        "sizes": [state.hand_count(seat) for seat in range(players)],
        "voids": state.voids,
        "to_act": [int(state.result is None and seat == state.current) for seat in range(players)],
        "in_play": [1] * players,
        "scores": state.scores if match else [0] * players,
    }
    for name, values in per_seat.items():
        for relative, seat in enumerate(seats):
            facts[offsets[name] + relative] = values[seat]
    left, right = state.ends if state.ends is not None else (-1, -1)
    single = {
        "line": state.line_mask,
        "left": left,
        "right": right,
        "bones": len(state.boneyard),
        "can_draw": int(state.can_draw),
        "passes": state.passes_in_row,
        "target": game.target if match else 0,
    }
    for name, value in single.items():
        facts[offsets[name]] = value
    return facts


def observe_facts(observed: Layout, facts: np.ndarray) -> np.ndarray:
    """The observation vector that ``facts`` give under ``observed``'s blocks (the generic writer)."""
    _, source, kind, argument = observed.fact_table()
    values = facts[source]
    entries = np.where(kind == 0, (values >> argument) & 1, np.where(kind == 1, values, values == argument))
    return entries.astype(np.float32)


def facts_of_observation(observed: Layout, observation: np.ndarray) -> np.ndarray:
    """The facts an observation holds under ``observed``'s blocks: the inverse of :func:`observe_facts`.

    int64, of the facts vector's length (:meth:`Layout.fact_table`). Each fact is read back as
    its blocks write it: a ``"bit"`` entry sets bit ``argument`` of its fact, a ``"value"`` entry
    is the fact, a ``"one_hot"`` entry sets its fact to ``argument`` (and a one-hot fact with no
    entry set reads ``-1``, as an end of the empty line). A fact the observation does not show
    reads 0: the other seats' hands (the ``hand`` block is the observer's row alone).
    """
    _, source, kind, argument = observed.fact_table()
    vector = np.asarray(observation)
    if vector.shape != (observed.size,):
        raise ValueError(f"an observation of this layout has shape ({observed.size},), not {vector.shape}")
    facts = np.zeros(sum(observed.fact_sizes().values()), np.int64)
    on = vector > 0.5
    bits = (kind == READS.index("bit")) & on
    np.bitwise_or.at(facts, source[bits], np.left_shift(1, argument[bits], dtype=np.int64))
    values = kind == READS.index("value")
    facts[source[values]] = np.rint(vector[values]).astype(np.int64)
    one_hot = kind == READS.index("one_hot")
    facts[source[one_hot]] = -1
    facts[source[one_hot & on]] = argument[one_hot & on]
    return facts


# ---------------------------------------------------------------------- the information state
#
# The observation forgets part of what its player knows: when another seat drew, and the order of
# events beyond the placements. The information state keeps it all (perfect recall within the
# hand): the observation unchanged as a prefix, then the observer's dealt tiles and the hand's
# actions in order. It is a function of exactly the variant and table size, the public match
# state (scores and target, in the prefix), the observer's dealt tiles, who opens the hand (the
# prefix's to_act before any action) and the hand's actions so far, each with the relative seat
# that took it, a placement's tile and end, a draw (with its tile where the observer drew it) and
# a pass.

#: What the vector can be: the observation alone, or the information state.
OBS_TYPES = ("observation", "information_state")
#: The columns of one row of the ``events`` block: the relative seat that acted (one-hot, the
#: observer first, then clockwise), the kind of action (one-hot) and a placement's end (one-hot).
EVENT_COLUMNS = ("seat_0", "seat_1", "seat_2", "seat_3", "place", "draw", "pass", "left", "right")
EVENT_WIDTH = len(EVENT_COLUMNS)
_SEAT_COLUMN = EVENT_COLUMNS.index("seat_0")
_PLACE, _DRAW, _PASS = (EVENT_COLUMNS.index(kind) for kind in ("place", "draw", "pass"))
_LEFT_COLUMN = EVENT_COLUMNS.index("left")

#: The facts the history blocks read, beside the observation's :data:`FACTS`.
HISTORY_FACTS: dict[str, str] = {
    "dealt": "per seat, the mask of the tiles it held when the hand started",
    "placed_at": "per tile id, k if the hand's k-th action placed it, else 0",
    "drawn_at": "per tile id, k if the hand's k-th action was the observer drawing it, else 0",
    "events": "the hand's actions in order: seat, kind and end",
}


def _history_blocks(num_tiles: int, max_events: int) -> tuple[Block, ...]:
    return (
        Block("dealt", num_tiles, 1, "1 for each tile id the observer held when the hand started (its deal)",
              "observer", "dealt", "bit"),
        Block("placed_at", num_tiles, max_events, "per tile id, k if the hand's k-th action placed it, else 0",
              fact="placed_at"),
        Block("drawn_at", num_tiles, max_events,
              "per tile id, k if the hand's k-th action was the observer drawing it, else 0 (others' draws: never)",
              fact="drawn_at"),
        Block(
            "events",
            max_events * EVENT_WIDTH,
            1,
            f"{max_events} rows x {EVENT_WIDTH}: row k-1 is the hand's k-th action: relative seat one-hot (4), "
            "kind one-hot (place, draw, pass), end one-hot (left, right; placements only); zeros past the last",
            fact="events",
        ),
    )


@dataclass(frozen=True)
class InformationLayout:
    """The information state of one variant and table size: the observation's :class:`Layout`
    unchanged as a prefix, then the history blocks (:data:`HISTORY_FACTS`).

    Attributes:
        observation: the prefix's layout (the variant's observation).
        max_events: the rows of the ``events`` block, :attr:`draw_env.rules.DrawGame.max_hand_actions`.
        blocks: the history blocks, in order after the prefix.
        offsets: where every block starts in the vector, the prefix's and the history's.
        size: the vector's length; ``high``: float32 ``(size,)``, each entry's upper bound (the
            lower is 0). Every entry is an integer of at most ``max(max_events, prefix bound)``.
    """

    observation: Layout
    max_events: int
    blocks: tuple[Block, ...]
    offsets: dict[str, int] = field(init=False)
    size: int = field(init=False)
    high: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        offsets, position = dict(self.observation.offsets), self.observation.size
        for block in self.blocks:
            offsets[block.name] = position
            position += block.size
        high = np.concatenate(
            [self.observation.high, *(np.full(block.size, block.high, np.float32) for block in self.blocks)]
        )
        for name, value in (("offsets", offsets), ("size", position), ("high", high)):
            object.__setattr__(self, name, value)

    @property
    def history_size(self) -> int:
        """The entries after the prefix."""
        return self.size - self.observation.size

    @property
    def num_tiles(self) -> int:
        """T, the tiles of the set (one ``dealt`` entry each)."""
        return next(block.size for block in self.blocks if block.name == "dealt")

    def split(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """The vector cut into its named blocks, the prefix's and the history's (views)."""
        blocks = {**self.observation.split(vector[: self.observation.size])}
        for block in self.blocks:
            start = self.offsets[block.name]
            blocks[block.name] = vector[start : start + block.size]
        blocks["events"] = blocks["events"].reshape(self.max_events, EVENT_WIDTH)
        return blocks


def information_layout(game: DrawGame) -> InformationLayout:
    """The information-state layout of ``game``'s variant and table size (shared: one object each)."""
    return _information_layout(game.num_players, game.max_pip, game.hand_size, game.protected)


@functools.cache
def _information_layout(num_players: int, max_pip: int, hand_size: int, protected: int) -> InformationLayout:
    game = DrawGame(num_players, max_pip, hand_size, protected)
    return InformationLayout(layout(game), game.max_hand_actions, _history_blocks(game.num_tiles, game.max_hand_actions))


def check_history_room(game: DrawGame, boneyard_size: int) -> None:
    """Refuse a deal whose boneyard outgrows the information state's ``events`` rows.

    :attr:`draw_env.rules.DrawGame.max_hand_actions` bounds the actions of a hand whose hands
    hold at least the variant's ``n * hand_size`` tiles, i.e. whose boneyard holds at most
    ``T - n * hand_size``; a set-up deal with a longer boneyard could take more actions.

    Raises:
        ValueError: naming the boneyard's size and the most it may hold.
    """
    room = game.num_tiles - game.num_players * game.hand_size
    if boneyard_size > room:
        raise ValueError(
            f"with obs_type='information_state' the boneyard may hold at most {room} tiles (the variant deals "
            f"{game.hand_size} to each of {game.num_players} players; the information state has rows for the "
            f"actions of such a hand), got {boneyard_size}"
        )


def write_history(
    info: InformationLayout, num_players: int, player: int, dealt: int, history: list[tuple[int, int, int]],
    out: np.ndarray,
) -> None:
    """Write ``player``'s history blocks into ``out`` (the vector past the prefix, all zeros).

    Args:
        dealt: the mask of the tiles ``player`` held when the hand started.
        history: the hand's actions in order, ``(absolute seat, action, tile drawn or -1)``
            (:attr:`draw_env.rules.DrawState.history`; a draw whose tile is not known yet reads -1).

    Raises:
        ValueError: for more actions than the ``events`` rows (a deal :func:`check_history_room`
            refuses).
    """
    if len(history) > info.max_events:
        raise ValueError(f"{len(history)} actions, more than the {info.max_events} rows of the information state")
    prefix = info.observation.size
    start = {block.name: info.offsets[block.name] - prefix for block in info.blocks}
    for tile in tiles.tiles_in(dealt):
        out[start["dealt"] + tile] = 1
    draw = 2 * info.num_tiles
    for index, (seat, action, tile) in enumerate(history, start=1):
        row = start["events"] + (index - 1) * EVENT_WIDTH
        out[row + _SEAT_COLUMN + (seat - player) % num_players] = 1
        if action < draw:
            out[row + _PLACE] = 1
            out[row + _LEFT_COLUMN + (action & 1)] = 1
            out[start["placed_at"] + (action >> 1)] = index
        elif action == draw:
            out[row + _DRAW] = 1
            if seat == player and tile >= 0:  # OpenSpiel's chance node picks a draw's tile after it
                out[start["drawn_at"] + tile] = index
        else:
            out[row + _PASS] = 1


def information_state(state: DrawState, player: int, match: bool = False) -> np.ndarray:
    """``player``'s information state of ``state``, from the rules' deal and history: the
    reference every engine's writer is checked against."""
    info = information_layout(state.game)
    vector = np.zeros(info.size, np.float32)
    vector[: info.observation.size] = observe_state(state, player, match)
    write_history(info, state.num_players, player, state.dealt[player], state.history,
                  vector[info.observation.size :])
    return vector


class InformationTable:
    """Every player's information state of one hand, kept up to date action by action (the AEC
    environment's): an :class:`ObservationTable` for the prefix and one history row per seat,
    each action writing its event into every seat's row (:meth:`rebuild`, :meth:`record` as the
    observation table's)."""

    def __init__(self, game: DrawGame, match: bool) -> None:
        self.game = game
        self.info = information_layout(game)
        self.observations = ObservationTable(game, match)
        self.history = np.zeros((game.num_players, self.info.history_size), np.float32)
        self._draw = game.draw_action
        prefix = self.info.observation.size
        self._start = {block.name: self.info.offsets[block.name] - prefix for block in self.info.blocks}

    @property
    def table(self) -> np.ndarray:
        """The observation table's absolute array (``raw_env.state()``)."""
        return self.observations.table

    def observe(self, player: int) -> np.ndarray:
        """``player``'s information state: a new array the table never writes again."""
        return np.concatenate((self.observations.observe(player), self.history[player]))

    def rebuild(self, state: DrawState) -> None:
        self.observations.rebuild(state)
        self.history[:] = 0
        for player in range(self.game.num_players):
            write_history(self.info, self.game.num_players, player, state.dealt[player], state.history,
                          self.history[player])

    def record(self, state: DrawState, seat: int, action: int, drawn: int) -> None:
        """Bring the tables up to date after ``seat`` played ``action`` (``drawn``: a draw's tile)."""
        self.observations.record(state, seat, action, drawn)
        if state.is_hand_over:
            self.rebuild(state)
            return
        index = len(state.history)
        row = self._start["events"] + (index - 1) * EVENT_WIDTH
        players = self.game.num_players
        history = self.history
        for player in range(players):
            history[player, row + _SEAT_COLUMN + (seat - player) % players] = 1
        if action < self._draw:
            history[:, row + _PLACE] = 1
            history[:, row + _LEFT_COLUMN + (action & 1)] = 1
            history[:, self._start["placed_at"] + (action >> 1)] = index
        elif action == self._draw:
            history[:, row + _DRAW] = 1
            history[seat, self._start["drawn_at"] + drawn] = index
        else:
            history[:, row + _PASS] = 1


def split(observation: np.ndarray) -> dict[str, np.ndarray]:
    """The seeds' game's observation vector cut into its named blocks (views, not copies);
    :meth:`Layout.split` cuts a variant's."""
    return DEFAULT_LAYOUT.split(observation)


def view_from_observation(observation: np.ndarray, num_players: int, game: DrawGame | None = None) -> PlayerView:
    """Rebuild what the observer knows from its observation vector, in relative seats: the facts
    :func:`facts_of_observation` reads back through the variant's layout.

    The observer is seat 0 of the returned view and the others follow clockwise, as in the
    observation. Ends of placements are not observed and come back as -1; the opener is unknown
    and comes back as 0. Enough for search: ``view.sample_state(rng)`` deals hidden tiles
    consistently with everything observed.

    Args:
        game: the variant (its ``num_players`` must be ``num_players``); default the seeds' game.
    """
    game = game or DrawGame(num_players)
    if game.num_players != num_players:
        raise ValueError(f"num_players={num_players} but the game seats {game.num_players}")
    observed = layout(game)
    facts = [int(fact) for fact in facts_of_observation(observed, observation)]
    start, _, _, _ = observed.fact_table()

    def per_seat(name: str) -> list[int]:
        return facts[start[name] : start[name] + num_players]

    placed = facts[start["placed"] : start["placed"] + SEATS]
    order = facts[start["order"] : start["order"] + game.num_tiles]
    line_tiles = sorted((tile for tile in range(game.num_tiles) if order[tile]), key=lambda tile: order[tile])
    # The seat that placed a tile: the first whose mask holds it (0 where none does).
    line = tuple((tile, next((s for s in range(SEATS) if placed[s] >> tile & 1), 0), -1) for tile in line_tiles)
    left, right = facts[start["left"]], facts[start["right"]]
    to_act = per_seat("to_act")
    return PlayerView(
        game=game,
        player=0,
        hand=facts[start["hand"]],  # the observer's row: relative seat 0
        line=line,
        line_mask=facts[start["line"]],
        ends=(left, right) if left >= 0 else None,
        hand_counts=tuple(per_seat("sizes")),
        boneyard_count=facts[start["bones"]],
        voids=tuple(per_seat("voids")),
        current=to_act.index(1) if 1 in to_act else 0,
        passes_in_row=facts[start["passes"]],
        scores=tuple(per_seat("scores")),
        opener=0,
    )
