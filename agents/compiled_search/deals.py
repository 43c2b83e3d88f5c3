"""Determinizations: deals of the tiles a searcher cannot see, consistent with its information
set, uniform (:func:`determinize`) or weighted by a model of where the hidden tiles lie
(:func:`weighted_determinize`, importance resampling).

A weighted determinization draws ``K`` candidate deals from the uniform sampler and keeps one in
proportion to the product, over the hidden tiles, of the model's probability of the place the
deal gives each tile; with one candidate it is the uniform sampler, random numbers included.
:mod:`agents.compiled_search.weights` turns a model's answer into the table of log placements
these kernels read.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from agents.compiled_search.generators import SLOT_MAIN, TWO_32
from agents.compiled_search.sets import HOLDING_OF_SET
from draw_env import engine as E
from draw_env.observation import SEATS

#: The row of the boneyard in a table of log placements (the rows before it are absolute seats).
BONEYARD_ROW = SEATS


@njit(cache=True, inline="always")
def _shuffle(items: np.ndarray, count: int, words: np.ndarray, slot: int) -> None:
    for i in range(count - 1, 0, -1):
        j = E.random_below_at(words, slot, i + 1)
        swap = items[i]
        items[i] = items[j]
        items[j] = swap


@njit(cache=True, inline="always")
def _tiles_of(mask: int, out: np.ndarray) -> int:
    count = 0
    while mask:
        out[count] = E.trailing_zeros(mask)
        count += 1
        mask &= mask - 1
    return count


@njit(cache=True)
def _constrained_deal(
    order: np.ndarray, opponents: int, unseen: int, allowed: np.ndarray, counts: np.ndarray, hands: np.ndarray,
    words: np.ndarray,
) -> bool:
    """Deal ``order``'s seats in turn from ``unseen``, backtracking when a choice strands a later seat.

    ``PlayerView._constrained_deal`` without recursion (numba cannot cache recursive functions):
    at each seat, 16 random picks of its allowed tiles, then every combination of them.
    """
    choices = np.empty((SEATS, E.MAX_TILES), np.int64)
    sizes = np.zeros(SEATS, np.int64)
    tries = np.zeros(SEATS, np.int64)
    pick = np.zeros((SEATS, E.MAX_TILES), np.int64)
    free = np.zeros(SEATS + 1, np.int64)
    free[0] = unseen
    level = 0
    entering = True
    while True:
        if level == opponents:
            return True
        seat = order[level]
        need = counts[seat]
        if entering:
            sizes[level] = _tiles_of(allowed[seat] & free[level], choices[level])
            tries[level] = 0
            if sizes[level] < need:
                level -= 1  # stranded: the previous seat picks again
                if level < 0:
                    return False
                entering = False
                continue
        size = sizes[level]
        row = choices[level]
        if tries[level] < 16:
            _shuffle(row, size, words, SLOT_MAIN)
            for k in range(need):
                pick[level, k] = k
        elif tries[level] == 16:
            for k in range(need):  # the first combination, in the order of the last shuffle
                pick[level, k] = k
        else:
            i = need - 1
            while i >= 0 and pick[level, i] == i + size - need:
                i -= 1
            if i < 0:  # every combination strands a later seat
                level -= 1
                if level < 0:
                    return False
                entering = False
                continue
            pick[level, i] += 1
            for j in range(i + 1, need):
                pick[level, j] = pick[level, j - 1] + 1
        tries[level] += 1
        mask = 0
        for k in range(need):
            mask |= 1 << row[pick[level, k]]
        hands[seat] = mask
        free[level + 1] = free[level] & ~mask
        level += 1
        entering = True


@njit(cache=True)
def determinize(base: np.ndarray, counts: np.ndarray, searcher: int, words: np.ndarray, world: np.ndarray) -> bool:
    """Deal the tiles ``searcher`` cannot see into ``world`` (``PlayerView.sample_state``).

    Opponents' hands are uniform among the deals that respect their sizes ``counts`` and their
    shown voids (32 rejection tries, then a constrained deal), the boneyard gets the rest in
    random order; the generator is ``words[0]``. Returns False when no deal is consistent.
    """
    n = base[E.S_NUM_PLAYERS]
    all_tiles = (1 << base[E.S_NUM_TILES]) - 1
    holding = HOLDING_OF_SET[base[E.S_MAX_PIP]]
    unseen = all_tiles & ~base[E.S_HANDS + searcher] & ~base[E.S_LINE_MASK]
    allowed = np.zeros(SEATS, np.int64)
    hands = np.zeros(SEATS, np.int64)
    order = np.empty(SEATS, np.int64)
    opponents = 0
    for seat in range(n):
        lacking = 0
        for v in range(base[E.S_MAX_PIP] + 1):
            if base[E.S_VOIDS + seat] >> v & 1:
                lacking |= holding[v]
        allowed[seat] = unseen & ~lacking
        if seat != searcher:
            order[opponents] = seat
            opponents += 1
    hands[searcher] = base[E.S_HANDS + searcher]
    pool = np.empty(E.MAX_TILES, np.int64)
    size = _tiles_of(unseen, pool)
    dealt = False
    for _ in range(32):
        _shuffle(pool, size, words, SLOT_MAIN)
        position = 0
        dealt = True
        for k in range(opponents):
            seat = order[k]
            mask = 0
            for j in range(position, position + counts[seat]):
                mask |= 1 << pool[j]
            if mask & ~allowed[seat]:
                dealt = False
                break
            hands[seat] = mask
            position += counts[seat]
        if dealt:
            break
    if not dealt:
        # Most constrained first (a stable sort by the number of allowed tiles, as sorted()).
        for i in range(1, opponents):
            j = i
            while j > 0 and E.popcount(allowed[order[j - 1]]) > E.popcount(allowed[order[j]]):
                swap = order[j]
                order[j] = order[j - 1]
                order[j - 1] = swap
                j -= 1
        if not _constrained_deal(order, opponents, unseen, allowed, counts, hands, words):
            return False
    taken = 0
    for seat in range(n):
        if seat != searcher:
            taken |= hands[seat]
    bones = _tiles_of(unseen & ~taken, pool)
    _shuffle(pool, bones, words, SLOT_MAIN)
    world[:] = base
    E.redeal(world, hands, pool, bones)
    return True


@njit(cache=True)
def log_weight(world: np.ndarray, searcher: int, log_place: np.ndarray) -> float:
    """The log of a model's weight of ``world``: the sum over the tiles ``searcher`` cannot see of
    ``log_place[place, tile]``, where the place is the opponent's seat (absolute) holding the tile,
    or :data:`BONEYARD_ROW`."""
    hidden = ((1 << world[E.S_NUM_TILES]) - 1) & ~world[E.S_HANDS + searcher] & ~world[E.S_LINE_MASK]
    total = 0.0
    for seat in range(world[E.S_NUM_PLAYERS]):
        if seat == searcher:
            continue
        mask = world[E.S_HANDS + seat]
        hidden &= ~mask
        while mask:
            total += log_place[seat, E.trailing_zeros(mask)]
            mask &= mask - 1
    while hidden:
        total += log_place[BONEYARD_ROW, E.trailing_zeros(hidden)]
        hidden &= hidden - 1
    return total


@njit(cache=True)
def weighted_determinize(
    base: np.ndarray, counts: np.ndarray, searcher: int, words: np.ndarray, world: np.ndarray,
    log_place: np.ndarray, candidates: np.ndarray,
) -> bool:
    """:func:`determinize`, weighted by a model of where the hidden tiles lie (importance resampling).

    With ``candidates`` int64 ``(K, state size)`` of K > 1 rows, deals K candidates with
    :func:`determinize` into them, weighs each by :func:`log_weight` of ``log_place`` float64
    ``(SEATS + 1, MAX_TILES)``, and copies into ``world`` one picked in proportion to its weight,
    with one more draw of ``words[0]`` (uniformly, when the model gives every candidate weight 0).
    With K <= 1 it is :func:`determinize` itself: the same random numbers, the same world.
    """
    k_count = candidates.shape[0]
    if k_count <= 1:
        return determinize(base, counts, searcher, words, world)
    logs = np.empty(k_count)
    best = -math.inf
    for k in range(k_count):
        if not determinize(base, counts, searcher, words, candidates[k]):
            return False
        logs[k] = log_weight(candidates[k], searcher, log_place)
        best = max(best, logs[k])
    u = E.random_below_at(words, SLOT_MAIN, TWO_32) / TWO_32
    pick = min(int(u * k_count), k_count - 1)
    if best > -math.inf:  # weights relative to the largest, so that none overflows
        mass = 0.0
        for k in range(k_count):
            logs[k] = math.exp(logs[k] - best)
            mass += logs[k]
        u *= mass
        pick = k_count - 1
        for k in range(k_count):
            u -= logs[k]
            if u < 0.0:
                pick = k
                break
    world[:] = candidates[pick]
    return True
