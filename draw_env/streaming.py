"""Exact best responses of a small 2-player variant without storing its game tree.

:func:`draw_env.game_tree.build_tree` keeps every history (``mini``: 22.4 million nodes, about
1.9 GB); ``DrawGame(2, max_pip=3, hand_size=3, protected=2)`` has about 5.8e8 and does not fit,
although its information states (about 30 million) do. This module keeps only each seat's
information states and walks the histories depth first, again for each pass, with a stack of a
few hundred positions (:mod:`draw_env.engine`'s kernels play the moves):

1. :func:`enumerate_states` lists every information state of both seats into compact tables: an
   open-addressing hash table from a key to the state's row, and per row its legal actions and
   its *parent sequence* (the seat's previous information state and the action it took there).
   A key is exact and built along the path: ``parent sequence * M + what the seat observed since``
   (the tile it drew, or the opponent's draws and its placement or pass), which with perfect
   recall identifies the seat's whole view. Rows are numbered in the order the walk meets them,
   so a parent comes before its children, and the deals' rows are contiguous
   (:attr:`StateTables.deal_first`).
2. :func:`write_vectors` writes the observation or information-state vector of the states first
   met in a range of deals (a walk of those deals only): a policy is asked in chunks, once per
   state.
3. :func:`best_response_values`, given the policy at every information state, walks once more
   and adds, at every end of a hand ``z``, ``chance(z) * opponent's reach(z) * u_r(z)`` to the
   last sequence of seat ``r`` on the path (for both seats at once; a subtree the policy never
   reaches is skipped). Then, from the last rows back, ``value(I) = max_a [direct(I, a) +
   sum of value(J) over the states J whose parent sequence is (I, a)]``; the seat's best
   response wins the sum over its first states, plus what it wins where it never acts.

The deals of each opener are walked in a thread of their own (the compiled walks release the
GIL): a seat's information states hold the opener, so the two halves share none and keep tables
of their own. :data:`STATE_BYTES` per information state bounds the memory, estimated before the
walk from a sample of hands (:func:`estimate_states`).
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
from draw_env.game_tree import check_tree_game, deals
from draw_env.observation import information_layout, layout
from draw_env.rules import DrawGame

#: Bytes per information state while the best response runs: its hash slot (a key and a row, at
#: most half the slots full, up to twice that just after the table grows), its first action's
#: place, its parent sequence, about three legal actions with the policy's probability and the
#: responder's sum of each, and the arrays' doubling as they grow.
STATE_BYTES = 200
#: Default bound on the memory, as :data:`draw_env.game_tree.DEFAULT_MAX_BYTES` for the tree.
DEFAULT_MAX_BYTES = 8 * 1024**3
#: Hands sampled by :func:`estimate_states` (each a walk of every deal that gives it to seat 0).
SAMPLED_HANDS = 4

_EMPTY = np.iinfo(np.int64).min
_ENUMERATE, _VECTORS, _REACH = 0, 1, 2


@dataclass(frozen=True)
class StateTables:
    """Both seats' information states among the deals of one opener.

    Attributes:
        game: the variant.
        deals: int64, the deals walked (rows of :func:`draw_env.game_tree.deals`).
        roots: int64 ``(deals, 2)``, each seat's code for its hand and the opener (negative:
            the parent of a seat's first information state).
        keys, rows: per seat, the hash table: int64 keys (``_EMPTY`` where free) and int32 rows.
        action_start: per seat, int64 ``(states + 1,)``: state ``i``'s legal actions are
            ``actions[seat][action_start[seat][i] : action_start[seat][i + 1]]``, ascending; the
            sequence ``(i, k-th action)`` is number ``action_start[seat][i] + k``.
        actions: per seat, int16, the legal actions.
        parent: per seat, int64 ``(states,)``: the parent sequence, or a root code (negative).
        deal_first: int64 ``(deals + 1, 2)``: the first row each deal met, per seat.
        nodes: the histories walked (every node, the ends of the hand included).
        total_deals: every deal of the game (the chance of each is ``1 / total_deals``).
    """

    game: DrawGame
    deals: np.ndarray
    roots: np.ndarray
    keys: tuple[np.ndarray, np.ndarray]
    rows: tuple[np.ndarray, np.ndarray]
    action_start: tuple[np.ndarray, np.ndarray]
    actions: tuple[np.ndarray, np.ndarray]
    parent: tuple[np.ndarray, np.ndarray]
    deal_first: np.ndarray
    nodes: int
    total_deals: int

    def num_states(self, seat: int) -> int:
        return len(self.parent[seat])

    def action_mask(self, seat: int, first: int, stop: int) -> np.ndarray:
        """int8 ``(stop - first, num_actions)``: the legal actions of rows ``first .. stop - 1``."""
        start = self.action_start[seat]
        mask = np.zeros((stop - first, self.game.num_actions), np.int8)
        counts = np.diff(start[first : stop + 1])
        rows = np.repeat(np.arange(stop - first), counts)
        mask[rows, self.actions[seat][start[first] : start[stop]]] = 1
        return mask


def check_memory(game: DrawGame, max_bytes: int) -> int:
    """The estimated information states of ``game``, or a ``ValueError`` (with the estimate) if
    their tables would take more than ``max_bytes``."""
    check_tree_game(game)
    estimate = estimate_states(game)
    if estimate * STATE_BYTES > max_bytes:
        raise ValueError(
            f"the information states of max_pip={game.max_pip}, hand_size={game.hand_size}, "
            f"protected={game.protected} number about {estimate:.3g} and would take about "
            f"{estimate * STATE_BYTES / 1024**3:.3g} GiB, more than the {max_bytes / 1024**3:.3g} GiB allowed"
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
        tables = _enumerate(game, listed[listed[:, 1] == mask], masks, len(listed))
        counted += tables.num_states(0)
    return math.ceil(2 * counted / len(chosen) * len(masks))


def enumerate_states(game: DrawGame) -> tuple[StateTables, StateTables]:
    """Pass 1: the information states of the deals of each opener (one thread each)."""
    check_tree_game(game)
    listed = deals(game)
    masks = np.unique(listed[:, 1])
    with ThreadPoolExecutor(2) as pool:
        halves = list(pool.map(
            lambda opener: _enumerate(game, listed[listed[:, 0] == opener], masks, len(listed)), (0, 1)))
    return halves[0], halves[1]


def _params(game: DrawGame, information: bool) -> np.ndarray:
    num_tiles = game.num_tiles
    boneyard = num_tiles - 2 * game.hand_size
    return np.array([
        game.max_pip, game.hand_size, game.protected, history_state_size(game), num_tiles, boneyard,
        (boneyard + 1) * (2 * num_tiles + 3), game.max_hand_actions, int(information),
    ], np.int64)


def _root_codes(masks: np.ndarray, listed: np.ndarray) -> np.ndarray:
    """Each seat's root code per deal: ``-(2 * hand's rank among ``masks`` + opener) - 1``."""
    codes = np.zeros((len(listed), 2), np.int64)
    for seat in (0, 1):
        codes[:, seat] = -(2 * np.searchsorted(masks, listed[:, 1 + seat]) + listed[:, 0]) - 1
    return codes


def _enumerate(game: DrawGame, listed: np.ndarray, masks: np.ndarray, total_deals: int) -> StateTables:
    """Pass 1 over the deals ``listed`` (``masks``: every hand, ascending)."""
    roots = _root_codes(masks, listed)
    arrays = _walk(
        _ENUMERATE, listed, roots, _params(game, False), _table(1 << 12), _rows(1 << 12), _table(1 << 12),
        _rows(1 << 12), np.zeros(1 << 10, np.int64), np.zeros(1 << 12, np.int16), np.zeros(1 << 10, np.int64),
        np.zeros(1 << 10, np.int64), np.zeros(1 << 12, np.int16), np.zeros(1 << 10, np.int64),
        np.zeros(2, np.int64), np.zeros((len(listed) + 1, 2), np.int64), 0, len(listed), *_no_vectors(),
        *_no_reach(), total_deals,
    )
    keys0, rows0, keys1, rows1, start0, actions0, parent0, start1, actions1, parent1, counts, deal_first, nodes = arrays
    return StateTables(
        game, listed, roots, (keys0, keys1), (rows0, rows1),
        (start0[: counts[0] + 1].copy(), start1[: counts[1] + 1].copy()),
        (actions0[: start0[counts[0]]].copy(), actions1[: start1[counts[1]]].copy()),
        (parent0[: counts[0]].copy(), parent1[: counts[1]].copy()), deal_first, int(nodes), total_deals,
    )


def write_vectors(tables: StateTables, first_deal: int, stop_deal: int, information: bool) -> tuple[np.ndarray, np.ndarray]:
    """Pass 2: per seat, float32 ``(rows, size)``: the vector the environment gives the seat at
    each information state first met in deals ``first_deal .. stop_deal - 1`` (rows
    ``deal_first[first_deal] .. deal_first[stop_deal] - 1``), the information state's with
    ``information``, else the observation."""
    game = tables.game
    size = information_layout(game).size if information else layout(game).size
    lo, hi = tables.deal_first[first_deal], tables.deal_first[stop_deal]
    out0 = np.zeros((hi[0] - lo[0], size), np.float32)
    out1 = np.zeros((hi[1] - lo[1], size), np.float32)
    _walk(
        _VECTORS, tables.deals, tables.roots, _params(game, information), tables.keys[0], tables.rows[0],
        tables.keys[1], tables.rows[1], tables.action_start[0], tables.actions[0], tables.parent[0],
        tables.action_start[1], tables.actions[1], tables.parent[1], np.zeros(2, np.int64), tables.deal_first,
        first_deal, stop_deal, lo.copy(), out0, out1, np.zeros(len(out0), np.bool_), np.zeros(len(out1), np.bool_),
        *_no_reach(), tables.total_deals,
    )
    return out0, out1


def best_response_values(tables: StateTables, policies: tuple[np.ndarray, np.ndarray]) -> tuple[float, float]:
    """Pass 3 and the backward pass: what each seat's best response wins (zero-sum points, this
    half's deals' share of the expectation) against ``policies`` in the other seat, laid out as
    ``tables.actions[seat]`` (float64)."""
    for seat in (0, 1):
        if policies[seat].shape != tables.actions[seat].shape:
            raise ValueError(f"policies[{seat}] must hold {tables.actions[seat].shape[0]} probabilities")
    sums = (np.zeros(len(tables.actions[0])), np.zeros(len(tables.actions[1])))
    root = np.zeros(2)
    _walk(
        _REACH, tables.deals, tables.roots, _params(tables.game, False), tables.keys[0], tables.rows[0],
        tables.keys[1], tables.rows[1], tables.action_start[0], tables.actions[0], tables.parent[0],
        tables.action_start[1], tables.actions[1], tables.parent[1], np.zeros(2, np.int64), tables.deal_first,
        0, len(tables.deals), *_no_vectors(), np.asarray(policies[0], np.float64), np.asarray(policies[1], np.float64),
        sums[0], sums[1], root, tables.total_deals,
    )
    values = tuple(
        root[seat] + _backward(tables.action_start[seat], tables.parent[seat], sums[seat]) for seat in (0, 1)
    )
    return values[0], values[1]


def _table(size: int) -> np.ndarray:
    return np.full(size, _EMPTY, np.int64)


def _rows(size: int) -> np.ndarray:
    return np.zeros(size, np.int32)


def _no_vectors() -> tuple[np.ndarray, ...]:
    empty = np.zeros((0, 1), np.float32)
    return np.zeros(2, np.int64), empty, empty, np.zeros(0, np.bool_), np.zeros(0, np.bool_)


def _no_reach() -> tuple[np.ndarray, ...]:
    return np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(2)


@njit(cache=True, inline="always")
def _slot(keys: np.ndarray, key: int) -> int:
    """The slot of ``key`` in ``keys`` (a power of two long), or the free slot where it goes."""
    mask = keys.shape[0] - 1
    index = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(29)) & mask
    while keys[index] != key and keys[index] != _EMPTY:
        index = (index + 1) & mask
    return index


@njit(cache=True)
def _grown_table(keys: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    new_keys = np.full(2 * keys.shape[0], _EMPTY, np.int64)
    new_rows = np.zeros(2 * keys.shape[0], np.int32)
    for i in range(keys.shape[0]):
        if keys[i] != _EMPTY:
            slot = _slot(new_keys, keys[i])
            new_keys[slot] = keys[i]
            new_rows[slot] = rows[i]
    return new_keys, new_rows


@njit(cache=True)
def _grown(array: np.ndarray, need: int) -> np.ndarray:
    if need <= array.shape[0]:
        return array
    grown = np.zeros(max(2 * array.shape[0], need), array.dtype)
    grown[: array.shape[0]] = array
    return grown


@njit(cache=True, nogil=True)
def _walk(
    mode: int, deals: np.ndarray, roots: np.ndarray, params: np.ndarray, keys0: np.ndarray, rows0: np.ndarray,
    keys1: np.ndarray, rows1: np.ndarray, start0: np.ndarray, actions0: np.ndarray, parent0: np.ndarray,
    start1: np.ndarray, actions1: np.ndarray, parent1: np.ndarray, counts: np.ndarray, deal_first: np.ndarray,
    first_deal: int, stop_deal: int, vector_first: np.ndarray, out0: np.ndarray, out1: np.ndarray,
    written0: np.ndarray, written1: np.ndarray, policy0: np.ndarray, policy1: np.ndarray, sums0: np.ndarray,
    sums1: np.ndarray, root: np.ndarray, total_deals: int,
):  # noqa: ANN202 - a tuple of arrays, typed by numba
    """One depth-first walk of deals ``first_deal .. stop_deal - 1``: the three passes share it
    (``mode``) so that they meet the same states by the same keys.

    Each stack entry is an engine state and, per seat, its last sequence (a root code before it
    acts) and what it observed since, coded ``1 + tile`` after its own draw, else ``(2T + 3) *
    draws + 1 + action`` of the opponent's turn so far; the key of the seat to act is ``last * M
    + observed``.
    """
    max_pip, hand_size, protected, size, num_tiles = params[0], params[1], params[2], params[3], params[4]
    boneyard, m, longest, information = params[5], params[6], params[7], params[8] == 1
    draw = 2 * num_tiles
    depth = (2 * num_tiles + 2) * (longest + 2)
    states = np.zeros((depth, size), np.int64)
    seen = np.zeros((depth, 4), np.int64)  # last sequence of seat 0, of seat 1; observed by seat 0, by seat 1
    reach = np.zeros((depth, 2))  # the chance and the opponent's part of the reach, per responder
    legal = np.zeros(2 * num_tiles + 2, np.int64)
    hands = np.zeros(4, np.int64)
    bones = np.zeros(num_tiles, np.int64)
    chance = 1.0 / total_deals
    nodes = 0
    for d in range(first_deal, stop_deal):
        if mode == _ENUMERATE:
            deal_first[d, 0], deal_first[d, 1] = counts[0], counts[1]
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
        reach[0, 0], reach[0, 1] = chance, chance
        top = 1
        while top:
            top -= 1
            state = states[top].copy()
            last0, last1, observed0, observed1 = seen[top, 0], seen[top, 1], seen[top, 2], seen[top, 3]
            reach0, reach1 = reach[top, 0], reach[top, 1]
            nodes += 1
            seat = state[S_CURRENT]
            count = legal_actions(state, legal)
            key = last0 * m + observed0 if seat == 0 else last1 * m + observed1
            slot = _slot(keys0 if seat == 0 else keys1, key)
            if mode == _ENUMERATE and (keys0[slot] if seat == 0 else keys1[slot]) == _EMPTY:
                row = counts[seat]
                counts[seat] += 1
                if seat == 0:
                    keys0[slot], rows0[slot] = key, row
                    start0 = _grown(start0, row + 2)
                    parent0 = _grown(parent0, row + 1)
                    actions0 = _grown(actions0, start0[row] + count)
                    parent0[row] = last0
                    for k in range(count):
                        actions0[start0[row] + k] = legal[k]
                    start0[row + 1] = start0[row] + count
                    if 2 * counts[0] > keys0.shape[0]:
                        keys0, rows0 = _grown_table(keys0, rows0)
                else:
                    keys1[slot], rows1[slot] = key, row
                    start1 = _grown(start1, row + 2)
                    parent1 = _grown(parent1, row + 1)
                    actions1 = _grown(actions1, start1[row] + count)
                    parent1[row] = last1
                    for k in range(count):
                        actions1[start1[row] + k] = legal[k]
                    start1[row + 1] = start1[row] + count
                    if 2 * counts[1] > keys1.shape[0]:
                        keys1, rows1 = _grown_table(keys1, rows1)
                row_start = start0[row] if seat == 0 else start1[row]
            else:
                row = rows0[slot] if seat == 0 else rows1[slot]
                row_start = start0[row] if seat == 0 else start1[row]
            if mode == _VECTORS:
                index = row - vector_first[seat]
                written = written0 if seat == 0 else written1
                if 0 <= index < written.shape[0] and not written[index]:
                    written[index] = True
                    out = out0[index] if seat == 0 else out1[index]
                    if information:
                        write_information_state(state, seat, False, out)
                    else:
                        write_observation(state, seat, False, out)
            for k in range(count):
                action = legal[k]
                child_reach0, child_reach1 = reach0, reach1
                if mode == _REACH:
                    # Responder r meets the other seat's policy; its own choices count as 1.
                    if seat == 0:
                        child_reach1 = reach1 * policy0[row_start + k]
                    else:
                        child_reach0 = reach0 * policy1[row_start + k]
                    if child_reach0 == 0.0 and child_reach1 == 0.0:
                        continue
                child = states[top]
                child[:] = state
                if information:
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
                    reach[top, 0], reach[top, 1] = child_reach0, child_reach1
                    top += 1
                    continue
                nodes += 1
                if mode == _REACH:
                    points = float(child[S_POINTS] - child[S_POINTS + 1])
                    if child_last0 >= 0:
                        sums0[child_last0] += child_reach0 * points
                    else:
                        root[0] += child_reach0 * points
                    if child_last1 >= 0:
                        sums1[child_last1] -= child_reach1 * points
                    else:
                        root[1] -= child_reach1 * points
    if mode == _ENUMERATE:
        deal_first[stop_deal, 0], deal_first[stop_deal, 1] = counts[0], counts[1]
    return keys0, rows0, keys1, rows1, start0, actions0, parent0, start1, actions1, parent1, counts, deal_first, nodes


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
