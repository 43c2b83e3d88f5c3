"""Exact best responses of a small 2-player variant without storing its game tree.

:func:`draw_env.exact.game_tree.build_tree` keeps every history (``mini``: 22.4 million nodes, about
1.9 GB). This module keeps only each seat's information states (``mini``: 3.0 million, about
0.3 GB) and walks the histories depth first, again for each pass, with a stack of a few hundred
positions (:mod:`draw_env.engine`'s kernels play the moves):

1. :func:`enumerate_states` lists every information state of both seats into compact tables: an
   open-addressing hash table from a key to the state's row, and per row its legal actions and
   its *parent sequence* (the seat's previous information state and the action it took there).
   A key is exact and built along the path: ``parent sequence * M + what the seat observed since``
   (the tile it drew, or the opponent's draws and its placement or pass), which with perfect
   recall identifies the seat's whole view. Rows are numbered in the order the walk meets them,
   so a parent comes before its children. The same walk writes the vector of ``obs_type`` of each
   state when it is first met and keeps each distinct vector once (:class:`Vectors`; a vector of
   the other kind takes one more walk, :meth:`StateTables.add_vectors`); both tables then share
   one set of distinct vectors (:func:`shared_vectors`).
2. A policy is asked once per distinct vector (:mod:`arena.exploitability`, which asks agents).
3. :func:`best_response_values`, given the policy's answers per distinct vector, walks once more
   and adds, at every end of a hand ``z``, ``chance(z) * opponent's reach(z) * u_r(z)`` to the
   last sequence of seat ``r`` on the path (for both seats at once; a subtree the policy never
   reaches is skipped). Then, from the last rows back, ``value(I) = max_a [direct(I, a) +
   sum of value(J) over the states J whose parent sequence is (I, a)]``; the seat's best
   response wins the sum over its first states, plus what it wins where it never acts.

The deals of each opener are walked in a thread of their own (the compiled walks release the
GIL): a seat's information states hold the opener, so the two halves share none and keep tables
of their own. :data:`STATE_BYTES` per information state bounds the memory, estimated before the
walk from a sample of hands (:func:`estimate_states`), which also sizes the tables:
``DrawGame.named("midi")``, 5.7e8 histories, has 7.1e7 information states (6.5e7 by the
estimate) and takes 4.6 GB.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numba import njit

from draw_env.engine import (
    PLAYING,
    S_BONE_POS,
    S_BONEYARD,
    S_CURRENT,
    S_POINTS,
    apply_action,
    deal_fixed,
    history_state_size,
    init_variant_state,
    legal_actions,
    record_event,
    write_information_state,
    write_observation,
)
from draw_env.exact.game_tree import check_tree_game, deals
from draw_env.observation import information_layout, layout
from draw_env.rules import DrawGame

#: Bytes per information state while the best response runs: its hash slot (a key and a row in
#: one int64, the table sized from the estimate, about half full), its first action's place,
#: its parent sequence and its vector's row (int32 each), its legal actions (int8, about 1.4)
#: with the responder's sum of each (float64), and its share of the distinct vectors and of the
#: policy's answers for them (float64 per action). Measured: ``draw-exploit random heaviest
#: variety`` on ``mini`` peaks 0.45 GB, 0.28 GB above Python's start with its imports, for 3.0
#: million information states: 91 bytes each.
STATE_BYTES = 100
#: Default bound on the memory, as :data:`draw_env.exact.game_tree.DEFAULT_MAX_BYTES` for the tree.
DEFAULT_MAX_BYTES = 8 * 1024**3
#: Hands sampled by :func:`estimate_states` (each a walk of every deal that gives it to seat 0).
SAMPLED_HANDS = 4
#: A hash slot holds ``key << ROW_BITS | row``: rows below ``2 ** ROW_BITS`` per seat and table,
#: keys below ``2 ** (63 - ROW_BITS)`` (the walk raises beyond either).
ROW_BITS = 28

_EMPTY = -1
_ROW_MASK = (1 << ROW_BITS) - 1
_MAX_KEY = 1 << (63 - ROW_BITS)
_NO_VECTORS, _OBSERVATION, _INFORMATION = 0, 1, 2
_NO_STRATEGY = np.zeros((0, 0))
_NO_ANSWERS = np.zeros((0, 0, 1))
_BOTH = 3


@dataclass(frozen=True)
class Vectors:
    """The distinct vectors of one kind (observation or information state) of a table's states.

    Attributes:
        rows: uint8 ``(distinct, size)``, each distinct vector once (as float32 exactly the
            environment's); a view of a larger array whose rows beyond are never written.
        masks: int8 ``(distinct, num_actions)``, the legal actions where each is seen.
        index: per seat, int32 ``(states,)``: the row of ``rows`` of each information state.
    """

    rows: np.ndarray
    masks: np.ndarray
    index: tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class StateTables:
    """Both seats' information states among the deals of one opener.

    Attributes:
        game: the variant.
        deals: int64, the deals walked (rows of :func:`draw_env.exact.game_tree.deals`).
        roots: int64 ``(deals, 2)``, each seat's code for its hand and the opener (negative:
            the parent of a seat's first information state).
        table: per seat, the hash table, int64 ``(slots,)``: a key and its state's row,
            ``key << ROW_BITS | row`` (-1 where free).
        action_start: per seat, int32 ``(states + 1,)``: state ``i``'s legal actions are
            ``actions[seat][action_start[seat][i] : action_start[seat][i + 1]]``, ascending; the
            sequence ``(i, k-th action)`` is number ``action_start[seat][i] + k``.
        actions: per seat, int8, the legal actions.
        parent: per seat, int32 ``(states,)``: the parent sequence, or a root code (negative).
        nodes: the histories walked (every node, the ends of the hand included).
        total_deals: every deal of the game (the chance of each is ``1 / total_deals``).
        vectors: by obs_type, the states' vectors (:class:`Vectors`).
    """

    game: DrawGame
    deals: np.ndarray
    roots: np.ndarray
    table: tuple[np.ndarray, np.ndarray]
    action_start: tuple[np.ndarray, np.ndarray]
    actions: tuple[np.ndarray, np.ndarray]
    parent: tuple[np.ndarray, np.ndarray]
    nodes: int
    total_deals: int
    vectors: dict[str, Vectors]

    def num_states(self, seat: int) -> int:
        return len(self.parent[seat])

    def add_vectors(self, obs_type: str) -> Vectors:
        """The vectors of ``obs_type`` (``"observation"`` or ``"information_state"``), written by a
        walk of the deals the first time they are asked for."""
        if obs_type not in self.vectors:
            self.vectors[obs_type] = _vectors(self, obs_type)
        return self.vectors[obs_type]


def check_memory(
    game: DrawGame, max_bytes: int, obs_types: tuple[str, ...] = ("observation",), extra_bytes: int = 0
) -> int:
    """The estimated information states of ``game``, or a ``ValueError`` (with the estimate) if
    they would take more than ``max_bytes``: :data:`STATE_BYTES` each, the vector of each for
    ``"information_state"`` (distinct but for the mirrored pairs), and ``extra_bytes`` each for
    the caller's own arrays (a solver's)."""
    check_tree_game(game)
    estimate = estimate_states(game)
    per_state = STATE_BYTES + extra_bytes + (information_layout(game).size if "information_state" in obs_types else 0)
    if estimate * per_state > max_bytes:
        raise ValueError(
            f"the information states of max_pip={game.max_pip}, hand_size={game.hand_size}, "
            f"protected={game.protected} number about {estimate:.3g} and would take about "
            f"{estimate * per_state / 1024**3:.3g} GiB, more than the {max_bytes / 1024**3:.3g} GiB allowed"
        )
    return estimate


def estimate_states(game: DrawGame, hands: int = SAMPLED_HANDS) -> int:
    """Both seats' information states, estimated from a few hands: seat 0's states with one hand
    are met only in the deals that give it that hand, so walking those deals counts them exactly;
    the mean over ``hands`` hands spread over the list, times the hands, times two seats (the
    seats are symmetric)."""
    listed = deals(game)
    masks = np.unique(listed[:, 1])
    chosen = masks[np.linspace(0, len(masks) - 1, min(hands, len(masks))).astype(np.int64)]
    counted = 0
    for mask in chosen:
        counted += _enumerate(game, listed[listed[:, 1] == mask], masks, len(listed), "", 0).num_states(0)
    return math.ceil(2 * counted / len(chosen) * len(masks))


def enumerate_states(
    game: DrawGame, obs_types: tuple[str, ...] = ("observation",), max_bytes: int = DEFAULT_MAX_BYTES,
    extra_bytes: int = 0,
) -> tuple[StateTables, StateTables]:
    """Pass 1: the information states of the deals of each opener (one thread each), with their
    vectors of ``obs_types[0]`` (none if ``obs_types`` is empty; the others' vectors are written
    when asked for, :meth:`StateTables.add_vectors`).

    Raises:
        ValueError: for a game of more than two players, or one whose information states would
            take more than ``max_bytes`` with the vectors of ``obs_types`` and ``extra_bytes`` each
            (:func:`check_memory`, before anything large is allocated).
    """
    expected = check_memory(game, max_bytes, obs_types, extra_bytes) // 4  # per seat and opener
    obs_type = obs_types[0] if obs_types else ""
    listed = deals(game)
    masks = np.unique(listed[:, 1])
    with ThreadPoolExecutor(2) as pool:
        halves = list(pool.map(lambda opener: _enumerate(
            game, listed[listed[:, 0] == opener], masks, len(listed), obs_type, expected), (0, 1)))
    if obs_type:
        shared_vectors((halves[0], halves[1]), obs_type)
    return halves[0], halves[1]


def shared_vectors(halves: tuple[StateTables, StateTables], obs_type: str) -> tuple[Vectors, Vectors]:
    """Both tables' vectors of ``obs_type`` (:meth:`StateTables.add_vectors`) with one set of
    distinct rows: the second table's distinct vectors are merged into the first's (once; each
    table's ``vectors[obs_type]`` is replaced by the shared one), so that each distinct vector is
    kept, and asked, once."""
    first, second = (half.add_vectors(obs_type) for half in halves)
    if first.rows is second.rows:
        return first, second
    total = len(first.rows) + len(second.rows)
    rows = np.zeros((total, first.rows.shape[1]), np.uint8)  # pages written only as filled
    masks = np.zeros((total, first.masks.shape[1]), np.int8)
    hashes = np.full(1 << max(11, math.ceil(math.log2(2 * total))), -1, np.int64)
    counts = np.zeros(4, np.int64)
    mapping = _merge(first.rows, first.masks, second.rows, second.masks, rows, masks, hashes, counts)
    for index in second.index:
        index[:] = mapping[index]
    rows, masks = rows[: counts[2]], masks[: counts[2]]
    shared = [Vectors(rows, masks, vectors.index) for vectors in (first, second)]
    for half, vectors in zip(halves, shared, strict=True):
        half.vectors[obs_type] = vectors
    return shared[0], shared[1]


def _params(game: DrawGame) -> np.ndarray:
    """The walk's constants; the last, ``2 * hands``, lifts the root codes above zero in keys."""
    num_tiles = game.num_tiles
    boneyard = num_tiles - 2 * game.hand_size
    return np.array([
        game.max_pip, game.hand_size, game.protected, history_state_size(game), num_tiles, boneyard,
        (boneyard + 1) * (2 * num_tiles + 3), game.max_hand_actions, 2 * math.comb(num_tiles, game.hand_size),
    ], np.int64)


def _root_codes(masks: np.ndarray, listed: np.ndarray) -> np.ndarray:
    """Each seat's root code per deal: ``-(2 * hand's rank among masks + opener) - 1``."""
    codes = np.zeros((len(listed), 2), np.int64)
    for seat in (0, 1):
        codes[:, seat] = -(2 * np.searchsorted(masks, listed[:, 1 + seat]) + listed[:, 0]) - 1
    return codes


def _vector_kind(game: DrawGame, obs_type: str) -> tuple[int, int]:
    """The walk's code of ``obs_type`` and the vector's length."""
    if obs_type == "information_state":
        return _INFORMATION, information_layout(game).size
    if obs_type == "observation":
        return _OBSERVATION, layout(game).size
    if obs_type == "":
        return _NO_VECTORS, 1
    raise ValueError(f"obs_type must be 'observation' or 'information_state', got {obs_type!r}")


def _enumerate(
    game: DrawGame, listed: np.ndarray, masks: np.ndarray, total_deals: int, obs_type: str, expected: int
) -> StateTables:
    """Pass 1 over the deals ``listed`` (``masks``: every hand, ascending), sized for ``expected``
    states per seat (grown if more come)."""
    roots = _root_codes(masks, listed)
    kind, size = _vector_kind(game, obs_type)
    counts = np.zeros(4, np.int64)
    # Room for a few more states than expected: pages never written are never resident, so the
    # rows' arrays are kept as views of their first part rather than copied.
    room = expected + expected // 4 + (1 << 10)
    per_seat = [
        (_table(expected), np.zeros(room + 1, np.int32), np.empty(room * 6, np.int8), np.empty(room, np.int32),
         np.empty(room, np.int32)) for _ in (0, 1)
    ]
    (table0, start0, actions0, parent0, index0), (table1, start1, actions1, parent1, index1) = per_seat
    arrays = _walk(
        False, listed, roots, _params(game), table0, table1, start0, actions0, parent0, start1, actions1, parent1,
        counts, 0, len(listed), kind, *_vector_store(size, game.num_actions, 2 * room), index0, index1, *_no_reach(), 0,
        total_deals,
    )
    table0, table1, start0, actions0, parent0, start1, actions1, parent1, rows, row_masks, _, index0, index1 = arrays
    states0, states1, distinct, nodes = (int(x) for x in counts)
    vectors = {}
    if kind != _NO_VECTORS:
        vectors[obs_type] = Vectors(rows[:distinct], row_masks[:distinct], (index0[:states0], index1[:states1]))
    return StateTables(
        game, listed, roots, (table0, table1), (start0[: states0 + 1], start1[: states1 + 1]),
        (actions0[: start0[states0]], actions1[: start1[states1]]),
        (parent0[:states0], parent1[:states1]), nodes, total_deals, vectors,
    )


def _vectors(tables: StateTables, obs_type: str) -> Vectors:
    """The vectors of ``obs_type`` of ``tables``' states: a walk that writes each state's once."""
    game = tables.game
    kind, size = _vector_kind(game, obs_type)
    counts = np.zeros(4, np.int64)
    index = (np.full(tables.num_states(0), -1, np.int32), np.full(tables.num_states(1), -1, np.int32))
    arrays = _walk(
        False, tables.deals, tables.roots, _params(game), tables.table[0], tables.table[1], tables.action_start[0],
        tables.actions[0], tables.parent[0], tables.action_start[1], tables.actions[1], tables.parent[1], counts,
        0, len(tables.deals), kind,
        *_vector_store(size, game.num_actions, tables.num_states(0) + tables.num_states(1)), index[0], index[1],
        *_no_reach(), 0, tables.total_deals,
    )
    return Vectors(arrays[8][: counts[2]], arrays[9][: counts[2]], index)


def best_response_values(tables: StateTables, vectors: Vectors, answers: np.ndarray) -> tuple[float, float]:
    """Pass 3 and the backward pass: what each seat's best response wins (zero-sum points, this
    table's deals' share of the expectation) against the policy of ``answers`` in the other seat:
    float64 ``(distinct, num_actions)``, each action's probability at each row of
    ``vectors.rows`` (one of ``tables.vectors``), read at each state through ``vectors.index``."""
    values = best_responses(tables, vectors, np.asarray(answers, np.float64)[None])[0]
    return float(values[0]), float(values[1])


def best_responses(tables: StateTables, vectors: Vectors, answers: np.ndarray) -> np.ndarray:
    """:func:`best_response_values` of ``K`` policies in one walk: ``answers`` float64 ``(K,
    distinct, num_actions)``; float64 ``(K, 2)``, each policy's best-response values by seat.
    The walk's cost is mostly the histories', shared by all ``K``."""
    answers = np.ascontiguousarray(answers, np.float64)
    expected = (len(vectors.rows), tables.game.num_actions)
    if answers.ndim != 3 or answers.shape[1:] != expected:
        raise ValueError(f"answers must be (K, {expected[0]}, {expected[1]}), got {answers.shape}")
    policies = answers.shape[0]
    sums = (np.zeros((policies, len(tables.actions[0]))), np.zeros((policies, len(tables.actions[1]))))
    root = np.zeros((policies, 2))
    _reach_walk(tables, vectors.index, answers, (_NO_STRATEGY, _NO_STRATEGY), _BOTH, sums, root)
    return np.array([_best_values(tables, (sums[0][j], sums[1][j]), root[j]) for j in range(policies)])


def strategy_best_response_values(
    tables: StateTables, strategies: tuple[np.ndarray, np.ndarray]
) -> tuple[float, float]:
    """:func:`best_response_values` against strategies given per sequence: ``strategies[seat]``,
    float64 laid out as ``tables.actions[seat]``, each legal action's probability at each of the
    seat's information states (a solver's, :mod:`train.cfr.streaming_solver`). Seat 0's best
    response answers ``strategies[1]`` and seat 1's ``strategies[0]``."""
    checked = _checked_strategies(tables, strategies)
    sums = (np.zeros((1, len(tables.actions[0]))), np.zeros((1, len(tables.actions[1]))))
    root = np.zeros((1, 2))
    _reach_walk(tables, _no_index(), _NO_ANSWERS, (checked[0][None], checked[1][None]), _BOTH, sums, root)
    return _best_values(tables, (sums[0][0], sums[1][0]), root[0])


def counterfactual_sums(
    tables: StateTables, strategies: tuple[np.ndarray, np.ndarray], seat: int, sums: np.ndarray
) -> float:
    """Seat ``seat``'s counterfactual values against ``strategies`` (as
    :func:`strategy_best_response_values` takes them), added into ``sums`` (float64, laid out as
    ``tables.actions[seat]``): at each of its sequences, what the hands it ends win for it,
    weighted by chance and the other seat's reach. Returns what it wins where it never acts.
    A subtree the other seat never plays into is skipped.

    From these, the value of a sequence is its sum plus the values of the information states it
    leads to (the parent sequences, ``tables.parent``), each the strategy's mean of its own
    sequences: :func:`train.cfr.streaming_solver.counterfactual_regrets`.
    """
    checked = _checked_strategies(tables, strategies)
    if sums.shape != (len(tables.actions[seat]),) or sums.dtype != np.float64:
        raise ValueError(f"sums must be float64 ({len(tables.actions[seat])},), got {sums.dtype} {sums.shape}")
    root = np.zeros((1, 2))
    pair = (sums[None], _NO_STRATEGY) if seat == 0 else (_NO_STRATEGY, sums[None])
    _reach_walk(tables, _no_index(), _NO_ANSWERS, (checked[0][None], checked[1][None]), 1 << seat, pair, root)
    return float(root[0, seat])


def _checked_strategies(
    tables: StateTables, strategies: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    checked = tuple(np.ascontiguousarray(strategy, np.float64) for strategy in strategies)
    for seat in (0, 1):
        if checked[seat].shape != (len(tables.actions[seat]),):
            raise ValueError(
                f"strategies[{seat}] must hold one probability per sequence, {len(tables.actions[seat])}, "
                f"got shape {checked[seat].shape}")
    return checked[0], checked[1]


def _no_index() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(0, np.int32), np.zeros(0, np.int32)


def _reach_walk(
    tables: StateTables, index: tuple[np.ndarray, np.ndarray], answers: np.ndarray,
    strategies: tuple[np.ndarray, np.ndarray], responders: int, sums: tuple[np.ndarray, np.ndarray], root: np.ndarray,
) -> None:
    """The reach pass over ``tables``' deals, the policy read from ``answers`` through ``index``
    or, where given, per sequence from ``strategies``."""
    _walk(
        True, tables.deals, tables.roots, _params(tables.game), tables.table[0], tables.table[1],
        tables.action_start[0], tables.actions[0], tables.parent[0], tables.action_start[1], tables.actions[1],
        tables.parent[1], np.zeros(4, np.int64), 0, len(tables.deals), _NO_VECTORS,
        *_vector_store(1, 1), index[0], index[1], answers, strategies[0], strategies[1],
        sums[0], sums[1], root, responders, tables.total_deals,
    )


def _best_values(tables: StateTables, sums: tuple[np.ndarray, np.ndarray], root: np.ndarray) -> tuple[float, float]:
    """Each seat's best response from the reach pass's sums (the backward pass)."""
    values = tuple(
        float(root[seat] + _backward(tables.action_start[seat], tables.parent[seat], sums[seat])) for seat in (0, 1)
    )
    return values[0], values[1]


def _table(expected: int) -> np.ndarray:
    """A hash table for ``expected`` keys, at most about 5/8 full: a power of two slots."""
    return np.full(1 << max(10, math.ceil(math.log2(1.6 * max(expected, 1)))), _EMPTY, np.int64)


def _vector_store(
    size: int, num_actions: int, room: int = 1 << 10
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Room for ``room`` distinct vectors (grown as needed) and their masks, the hash table over
    them, and the float32 row the engine writes. The room is zeroed by the system as its pages
    are first written (``np.zeros``), so room for as many vectors as states costs only what they
    fill, and the filled part is kept as a view."""
    return (np.zeros((room, size), np.uint8), np.zeros((room, num_actions), np.int8),
            np.full(1 << 11, -1, np.int64), np.zeros(size, np.float32), np.zeros(size, np.uint8))


def _no_reach() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The reach pass's arrays of a walk that makes none."""
    return _NO_ANSWERS, _NO_STRATEGY, _NO_STRATEGY, _NO_STRATEGY, _NO_STRATEGY, np.zeros((0, 2))


@njit(cache=True, inline="always")
def _slot(table: np.ndarray, key: int) -> int:
    """The slot of ``key`` (non-negative) in ``table`` (a power of two long), or the free slot
    where it goes."""
    mask = table.shape[0] - 1
    index = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(29)) & mask
    while table[index] != _EMPTY and table[index] >> ROW_BITS != key:
        index = (index + 1) & mask
    return index


@njit(cache=True)
def _grown_table(table: np.ndarray) -> np.ndarray:
    grown = np.full(2 * table.shape[0], _EMPTY, np.int64)
    for i in range(table.shape[0]):
        if table[i] != _EMPTY:
            grown[_slot(grown, table[i] >> ROW_BITS)] = table[i]
    return grown


@njit(cache=True)
def _grown(array: np.ndarray, need: int, fill: int) -> np.ndarray:
    if need <= array.shape[0]:
        return array
    grown = np.full(max(array.shape[0] + array.shape[0] // 2, need), fill, array.dtype)
    grown[: array.shape[0]] = array
    return grown


@njit(cache=True)
def _grown_rows(array: np.ndarray) -> np.ndarray:
    grown = np.zeros((2 * array.shape[0], array.shape[1]), array.dtype)
    grown[: array.shape[0]] = array
    return grown


@njit(cache=True, inline="always")
def _row_hash(row: np.ndarray, mask: int) -> int:
    """FNV-1a over a row's bytes, folded into a slot of a table of ``mask + 1`` slots."""
    code = np.uint64(14695981039346656037)
    for j in range(row.shape[0]):
        code = (code ^ np.uint64(row[j])) * np.uint64(1099511628211)
    return np.int64(code ^ (code >> np.uint64(32))) & mask


@njit(cache=True)
def _add_vector(
    written: np.ndarray, legal: np.ndarray, count: int, rows: np.ndarray, masks: np.ndarray, hashes: np.ndarray,
    counts: np.ndarray,
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """The row of the vector ``written`` (uint8) among the distinct ``rows`` (added if new, with
    its legal actions), and the grown arrays. Exact: a hash finds candidates, the bytes decide."""
    mask = hashes.shape[0] - 1
    slot = _row_hash(written, mask)
    while hashes[slot] >= 0:
        row = hashes[slot]
        same = True
        for j in range(written.shape[0]):
            if rows[row, j] != written[j]:
                same = False
                break
        if same:
            return row, rows, masks, hashes
        slot = (slot + 1) & mask
    row = counts[2]
    counts[2] += 1
    if row >= rows.shape[0]:
        rows, masks = _grown_rows(rows), _grown_rows(masks)
    rows[row] = written
    for k in range(count):
        masks[row, legal[k]] = 1
    hashes[slot] = row
    if 2 * counts[2] > hashes.shape[0]:
        hashes = np.full(2 * hashes.shape[0], -1, np.int64)
        for old in range(counts[2]):
            slot = _row_hash(rows[old], hashes.shape[0] - 1)
            while hashes[slot] >= 0:
                slot = (slot + 1) & (hashes.shape[0] - 1)
            hashes[slot] = old
    return row, rows, masks, hashes


@njit(cache=True)
def _merge(
    rows0: np.ndarray, masks0: np.ndarray, rows1: np.ndarray, masks1: np.ndarray, rows: np.ndarray,
    masks: np.ndarray, hashes: np.ndarray, counts: np.ndarray,
) -> np.ndarray:
    """``rows0`` then ``rows1`` added to the distinct ``rows`` (room for both, ``hashes`` over
    them at most half full), with the union of their legal actions; the row of each of ``rows1``."""
    legal = np.zeros(0, np.int64)
    for row in range(rows0.shape[0]):
        _add_vector(rows0[row], legal, 0, rows, masks, hashes, counts)
        masks[row] |= masks0[row]
    mapping = np.zeros(rows1.shape[0], np.int32)
    for row in range(rows1.shape[0]):
        found = _add_vector(rows1[row], legal, 0, rows, masks, hashes, counts)[0]
        masks[found] |= masks1[row]
        mapping[row] = found
    return mapping


@njit(cache=True, nogil=True)
def _walk(
    reach_pass: bool, deals: np.ndarray, roots: np.ndarray, params: np.ndarray, table0: np.ndarray, table1: np.ndarray,
    start0: np.ndarray, actions0: np.ndarray, parent0: np.ndarray, start1: np.ndarray, actions1: np.ndarray,
    parent1: np.ndarray, counts: np.ndarray, first_deal: int, stop_deal: int, kind: int,
    rows: np.ndarray, row_masks: np.ndarray, hashes: np.ndarray, written: np.ndarray, written_bytes: np.ndarray,
    index0: np.ndarray, index1: np.ndarray, answers: np.ndarray, strategy0: np.ndarray, strategy1: np.ndarray,
    sums0: np.ndarray, sums1: np.ndarray, root: np.ndarray, responders: int, total_deals: int,
):  # noqa: ANN202 - a tuple of arrays, typed by numba
    """One depth-first walk of deals ``first_deal .. stop_deal - 1``, for every pass, so that they
    meet the same states by the same keys: a state not in the tables is added (only the listing
    meets one), a state without a vector of ``kind`` gets one, and ``reach_pass`` adds up the ends
    of the hand for the best responses.

    ``counts``: states of seat 0, of seat 1, distinct vectors, nodes. Each stack entry is an
    engine state and, per seat, its last sequence (a root code before it acts) and what it
    observed since, coded ``1 + tile`` after its own draw, else ``(2T + 3) * draws + 1 +
    action`` of the opponent's turn so far; the key of the seat to act is ``last * M +
    observed`` (``last`` lifted by ``params[8]`` to be non-negative). Each new vector
    (``written``) is added to the distinct ``rows`` (``index0``/``index1`` -1 where a state has
    none yet). The reach pass follows ``K`` policies at once, policy ``j`` read at
    ``answers[j, index[row]]``, or, where ``strategy0`` is not empty, per sequence
    (``strategy0[j, sequence]``, laid out as ``actions0``); it sums into ``sums0[j]``,
    ``sums1[j]`` and ``root[j]`` for the seats of the bit mask ``responders`` (1: seat 0, 2:
    seat 1), and skips a subtree no policy reaches for them.
    """
    max_pip, hand_size, protected, size, num_tiles = params[0], params[1], params[2], params[3], params[4]
    boneyard, m, longest, lift = params[5], params[6], params[7], params[8]
    draw = 2 * num_tiles
    depth = (2 * num_tiles + 2) * (longest + 2)
    states = np.zeros((depth, size), np.int64)
    seen = np.zeros((depth, 4), np.int64)  # last sequence of seat 0, of seat 1; observed by seat 0, by seat 1
    by_sequence = strategy0.shape[1] > 0
    policies = strategy0.shape[0] if by_sequence else answers.shape[0]
    # Per responder and policy, the chance and the opponent's part of the reach.
    reach = np.zeros((depth, 2, policies))
    node_reach = np.zeros((2, policies))
    child_reach = np.zeros((2, policies))
    legal = np.zeros(2 * num_tiles + 2, np.int64)
    hands = np.zeros(4, np.int64)
    bones = np.zeros(num_tiles, np.int64)
    chance = 1.0 / total_deals
    state = np.zeros(size, np.int64)
    respond0, respond1 = (responders & 1) != 0, (responders & 2) != 0
    for d in range(first_deal, stop_deal):
        deal = deals[d]
        hands[0], hands[1] = deal[1], deal[2]
        held = deal[1] | deal[2]
        for k in range(deal.shape[0] - 3):
            bones[k] = deal[3 + k]
            held |= np.int64(1) << deal[3 + k]
        k = deal.shape[0] - 3
        for tile in range(num_tiles):  # the protected tiles, in any order: never drawn
            if not (held >> tile) & 1:
                bones[k] = tile
                k += 1
        init_variant_state(states[0], 2, 0, max_pip, hand_size, protected)
        deal_fixed(states[0], hands, bones, boneyard, deal[0])
        seen[0, 0], seen[0, 1], seen[0, 2], seen[0, 3] = roots[d, 0], roots[d, 1], 0, 0
        reach[0, :, :] = chance
        top = 1
        while top:
            top -= 1
            state[:] = states[top]
            last0, last1, observed0, observed1 = seen[top, 0], seen[top, 1], seen[top, 2], seen[top, 3]
            if reach_pass:
                node_reach[:, :] = reach[top]
            counts[3] += 1
            seat = state[S_CURRENT]
            count = legal_actions(state, legal)
            table = table0 if seat == 0 else table1
            key = (last0 + lift) * m + observed0 if seat == 0 else (last1 + lift) * m + observed1
            slot = _slot(table, key)
            if table[slot] == _EMPTY:  # only while enumerating: every state is met then
                row = counts[seat]
                counts[seat] += 1
                if row > _ROW_MASK or key >= _MAX_KEY:
                    raise ValueError("too many information states for the hash table's slots")
                if seat == 0:
                    start0 = _grown(start0, row + 2, 0)
                    parent0 = _grown(parent0, row + 1, 0)
                    actions0 = _grown(actions0, start0[row] + count, 0)
                    index0 = _grown(index0, row + 1, -1)
                    if start0[row] + count >= 1 << 31:
                        raise ValueError("too many legal actions for int32 places")
                    parent0[row] = last0
                    row_start = start0[row]
                    for k in range(count):
                        actions0[row_start + k] = legal[k]
                    start0[row + 1] = row_start + count
                else:
                    start1 = _grown(start1, row + 2, 0)
                    parent1 = _grown(parent1, row + 1, 0)
                    actions1 = _grown(actions1, start1[row] + count, 0)
                    index1 = _grown(index1, row + 1, -1)
                    if start1[row] + count >= 1 << 31:
                        raise ValueError("too many legal actions for int32 places")
                    parent1[row] = last1
                    row_start = start1[row]
                    for k in range(count):
                        actions1[row_start + k] = legal[k]
                    start1[row + 1] = row_start + count
                table[slot] = key << ROW_BITS | row
                if 8 * counts[seat] > 5 * table.shape[0]:
                    if seat == 0:
                        table0 = _grown_table(table0)
                    else:
                        table1 = _grown_table(table1)
                if seat == 0:
                    index0[row] = -1
                else:
                    index1[row] = -1
            else:
                row = table[slot] & _ROW_MASK
                row_start = start0[row] if seat == 0 else start1[row]
            if kind != _NO_VECTORS and (index0[row] if seat == 0 else index1[row]) < 0:
                if kind == _INFORMATION:
                    write_information_state(state, seat, False, written)
                else:
                    write_observation(state, seat, False, written)
                for j in range(written.shape[0]):
                    written_bytes[j] = np.uint8(written[j])
                found, rows, row_masks, hashes = _add_vector(written_bytes, legal, count, rows, row_masks, hashes, counts)
                if seat == 0:
                    index0[row] = found
                else:
                    index1[row] = found
            if reach_pass and not by_sequence:
                vector = index0[row] if seat == 0 else index1[row]
            for k in range(count):
                action = legal[k]
                if reach_pass:
                    # Responder r meets the other seat's policy; its own choices count as 1.
                    reached = False
                    for j in range(policies):
                        if by_sequence:
                            chance_of = strategy0[j, row_start + k] if seat == 0 else strategy1[j, row_start + k]
                        else:
                            chance_of = answers[j, vector, action]
                        child_reach[0, j] = node_reach[0, j] * chance_of if seat == 1 else node_reach[0, j]
                        child_reach[1, j] = node_reach[1, j] * chance_of if seat == 0 else node_reach[1, j]
                        reached = reached or (respond0 and child_reach[0, j] != 0.0) or (
                            respond1 and child_reach[1, j] != 0.0)
                    if not reached:
                        continue  # nothing below counts for a responder
                child = states[top]
                child[:] = state
                if kind == _INFORMATION:
                    record_event(child, action)
                drawn = child[S_BONEYARD + child[S_BONE_POS]] if action == draw else -1
                status = apply_action(child, action)
                sequence = row_start + k
                own = 1 + drawn if action == draw else 0
                step = 2 * num_tiles + 3 if action == draw else 1 + action
                if seat == 0:
                    child_last0, child_last1, child_observed0, child_observed1 = sequence, last1, own, observed1 + step
                else:
                    child_last0, child_last1, child_observed0, child_observed1 = last0, sequence, observed0 + step, own
                if status == PLAYING:
                    seen[top, 0], seen[top, 1], seen[top, 2], seen[top, 3] = (
                        child_last0, child_last1, child_observed0, child_observed1)
                    if reach_pass:
                        reach[top] = child_reach
                    top += 1
                    continue
                counts[3] += 1
                if reach_pass:
                    points = float(child[S_POINTS] - child[S_POINTS + 1])
                    for j in range(policies):
                        if respond0 and child_last0 >= 0:
                            sums0[j, child_last0] += child_reach[0, j] * points
                        elif respond0:
                            root[j, 0] += child_reach[0, j] * points
                        if respond1 and child_last1 >= 0:
                            sums1[j, child_last1] -= child_reach[1, j] * points
                        elif respond1:
                            root[j, 1] -= child_reach[1, j] * points
    return table0, table1, start0, actions0, parent0, start1, actions1, parent1, rows, row_masks, hashes, index0, index1


@njit(cache=True)
def _backward(start: np.ndarray, parent: np.ndarray, sums: np.ndarray) -> float:
    """A best response's value from its sequences' direct sums: every state after its children
    (rows from the last), its best sequence added to its parent sequence, or to the value if it
    is a first state."""
    total = 0.0
    for row in range(parent.shape[0] - 1, -1, -1):
        best = sums[start[row]]
        for index in range(start[row] + 1, start[row + 1]):
            best = max(best, sums[index])
        if parent[row] >= 0:
            sums[parent[row]] += best
        else:
            total += best
    return total
