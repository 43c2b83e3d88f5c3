"""Compiled ISMCTS: the algorithm of :mod:`agents.ismcts`, in numba, on the kernels of :mod:`draw_env.engine`.

The search is the same as the pure-Python one (read its module docstring for the method):
determinizations consistent with the player's view (hand sizes and shown voids, uniform by
rejection with a constrained fallback), paired root actions (each root action on its own copy of
the same determinization, with the same random numbers after), one tree shared by the
determinizations in which the searcher's own draws branch on the tile drawn, UCB1 with
availability counts, heaviest-first rollouts with ``rollout_randomness``, and the back-up of every
seat's zero-sum hand points / :data:`REWARD_SCALE`, each node keeping the value of the seat that
moved into it. Only the random numbers differ (a splitmix64 generator instead of Python's
Mersenne Twister), so the two agents play equally well at equal simulations but not move for
move.

The module is longer than 600 lines on purpose: the search's kernels (the sampler, the walk, the
rollout, the back-up and their lockstep variants) are one algorithm that calls itself and shares
one tree layout; split across files, no part would be usable alone.

**Weighted determinizations** (``inference``, ``candidates``): with a model of where the hidden
tiles lie, each determinization draws ``candidates`` deals from the sampler above and keeps one in
proportion to the product, over the hidden tiles, of the model's probability of the place the deal
gives each tile (importance resampling, :func:`weighted_determinize`). The model is asked once per
decision; with one candidate or no model the search is the plain one, random numbers included.

Trees are preallocated arrays: node ``k`` has a row ``children[k]`` of 58 child indices (-1 for
none; below a searcher's draw the row is indexed by the tile drawn), ``visits[k]``, ``total[k]``
and ``available[k]``. A decision allocates at most three nodes per simulation (the expanded
action, and the tile drawn when the searcher draws, once mid-path and once at the leaf).

**Batched network evaluation** (:meth:`CompiledISMCTSAgent.action_values_many`): many decisions
are searched in lockstep, one simulation of each per round. A round walks every decision's tree
to its leaf, writes the leaf position as one observation per seat (the AEC environment's
layout, with that seat's legal-action mask, all zeros for the seats not to act), calls
``evaluate(observations (N, 258) float32, masks (N, 58) int8) -> (priors (N, 58), values (N,))``
once for all of them, then finishes each simulation: the value backed up for each seat is
``value_weight * values[row of that seat] + (1 - value_weight) * rollout`` (no rollout at all
when ``value_weight`` is 1), and the acting seat's priors are stored at the leaf node. There they
choose which untried action a later walk expands (sampled in proportion to the prior instead of
uniformly) and, with ``prior_weight > 0``, add a progressive-bias term
``prior_weight * prior / (1 + visits)`` to UCB1. Each decision's own sequence of simulations is
exactly that of :meth:`CompiledISMCTSAgent.search`: with uniform priors, ``value_weight=0`` and
``prior_weight=0`` the results are identical to the plain search with the same seed. A value is
the observing seat's expected zero-sum hand points divided by :data:`REWARD_SCALE` (the same
unit as :meth:`CompiledISMCTSAgent.action_values`), so a value network is trained on the
``zero_sum`` reward / :data:`REWARD_SCALE`. See docs/agents.md for the design.
"""

from __future__ import annotations

import functools
import math
import os
import random
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from numba import njit

from agents.base import Observation, tile_set_of
from agents.ismcts import MAX_SIMULATIONS, REWARD_SCALE, SearchAgent
from draw_env import engine as E
from draw_env import tiles
from draw_env.checks import check_int, check_number
from draw_env.observation import SEATS, Layout, layout, observe_state
from draw_env.rules import NUM_ACTIONS, PROTECTED_BONEYARD, DrawGame, PlayerView
from draw_env.tiles import TileSet

#: Default budget: simulations per decision, chosen to take a little less time than the
#: pure-Python agent spends on 200 (docs/agents.md gives the measurement).
DEFAULT_SIMULATIONS = 5000

#: ``evaluate(observations (N, 258) float32, masks (N, 58) int8) -> (priors (N, 58), values (N,))``.
Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

_SLOT_MAIN = 0  # the decision's generator: determinizations, the pick among candidates and the shared seeds
_SLOT_SIM = 1  # one simulation's generator, restarted from the shared seed for each root action
_NEED_ROOM = 1
_NO_DEAL = 2
# Longer than any hand of any set of T tiles: at most T placements, T draws, and a round of passes
# before each placement and at the end.
_PATH = 2 * E.MAX_TILES + SEATS * (E.MAX_TILES + 1)
_NODES_PER_SIMULATION = 3
# A tree's meta row: next free node, end of its node region, simulations done, index of the
# root action the next simulation starts with, root node.
_M_NODES, _M_END, _M_DONE, _M_NEXT_ROOT, _M_ROOT = 0, 1, 2, 3, 4
META_SIZE = 5

#: Candidate deals drawn per determinization when a hidden-tile model weights them.
DEFAULT_CANDIDATES = 8
#: The most candidates: each is a state held at once while they are weighed.
MAX_CANDIDATES = 4096
#: The row of the boneyard in a table of log placements (the rows before it are absolute seats).
BONEYARD_ROW = SEATS

_TWO_32 = 1 << 32


def _set_tables() -> tuple[np.ndarray, np.ndarray]:
    """Every set's tile pips and per-value holding masks, indexed by ``max_pip`` first."""
    pips = np.zeros((tiles.MAX_PIP + 1, E.MAX_TILES), np.int64)
    holding = np.zeros((tiles.MAX_PIP + 1, E.MAX_VALUES), np.int64)
    for max_pip in range(tiles.MIN_PIP, tiles.MAX_PIP + 1):
        tile_set = tiles.tile_set(max_pip)
        pips[max_pip, : tile_set.num_tiles] = tile_set.pips
        holding[max_pip, : tile_set.num_values] = tile_set.holding
    return pips, holding


#: ``PIPS_OF_SET[max_pip, tile]``: the pips of each tile of each set.
PIPS_OF_SET, _HOLDING_OF_SET = _set_tables()

# The facts state_from_observation reads, in the order of its program's slots.
_READ_FACTS = ("hand", "line", "left", "right", "placed", "order", "sizes", "bones", "voids", "passes", "scores")
_F_HAND, _F_LINE, _F_LEFT, _F_RIGHT, _F_PLACED, _F_ORDER, _F_SIZES, _F_BONES, _F_VOIDS, _F_PASSES, _F_SCORES = (
    range(len(_READ_FACTS)))


@functools.cache
def set_layout(tile_set: TileSet) -> Layout:
    """The observation layout of ``tile_set``'s games (where blocks start depends on the set only)."""
    return layout(DrawGame(2, tile_set.max_pip, hand_size=1, protected=0))


@functools.cache
def read_program(tile_set: TileSet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """How :func:`state_from_observation` reads an observation of ``tile_set``'s games, from its layout.

    Returns:
        ``(slots, source, kind, argument)``, int64: ``slots`` holds where each fact it reads
        starts in the facts vector (the order of ``_READ_FACTS``), then the facts vector's
        length; the others are the layout's :meth:`~draw_env.observation.Layout.fact_table`.
    """
    observed = set_layout(tile_set)
    fact_offsets, source, kind, argument = observed.fact_table()
    slots = [fact_offsets[name] for name in _READ_FACTS] + [sum(observed.fact_sizes().values())]
    return np.array(slots, np.int64), source, kind, argument


@njit(cache=True)
def read_facts(obs: np.ndarray, source: np.ndarray, kind: np.ndarray, argument: np.ndarray, facts: np.ndarray) -> None:
    """The facts ``obs`` holds, into ``facts`` (int64, zeroed): compiled
    :func:`draw_env.observation.facts_of_observation`, which the tests check it against."""
    for i in range(source.shape[0]):
        if kind[i] == 2:
            facts[source[i]] = -1  # a one-hot fact with no entry set: an end of the empty line
    for i in range(source.shape[0]):
        on = obs[i] > 0.5
        if kind[i] == 0:
            if on:
                facts[source[i]] |= np.int64(1) << argument[i]
        elif kind[i] == 1:
            facts[source[i]] = int(obs[i] + 0.5)  # counts, scores, ranks: whole and >= 0
        elif on:
            facts[source[i]] = argument[i]


@njit(cache=True)
def state_from_observation(obs: np.ndarray, n: int, state: np.ndarray, counts: np.ndarray, max_pip: int,
                           protected: int, program: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> None:
    """The observer's information set as a state (observer = seat 0, seats relative).

    The game is the double-``max_pip`` set with ``protected`` boneyard tiles; ``program`` says
    how its observation holds the facts (:func:`read_program` of the set, from its layout).
    ``state`` int64 (at least :func:`draw_env.engine.state_size` slots) gets the observer's hand,
    the line (placements in order, ends unknown and written as 0), the open ends, the voids,
    passes and scores; the opponents' hands and the boneyard stay empty until
    :func:`determinize` deals them. ``counts`` int64 ``(4,)`` gets every seat's hand size. The
    observer is to act.
    """
    slots, source, kind, argument = program
    facts = np.zeros(slots[len(_READ_FACTS)], np.int64)
    read_facts(obs, source, kind, argument, facts)
    num_tiles = (max_pip + 1) * (max_pip + 2) // 2
    E.init_variant_state(state, n, 0, max_pip, E.hand_size(n), protected)
    line_start = E.line_start(state)
    line = facts[slots[_F_LINE]]
    for t in range(num_tiles):
        if (line >> t) & 1:
            seat = 0
            for s in range(SEATS):
                if (facts[slots[_F_PLACED] + s] >> t) & 1:
                    seat = s
            state[line_start + facts[slots[_F_ORDER] + t] - 1] = t | seat << E.LINE_SEAT_SHIFT
    state[E.S_HANDS] = facts[slots[_F_HAND]]  # the observer's row: relative seat 0
    state[E.S_LINE_MASK] = line
    state[E.S_LINE_COUNT] = E.popcount(line)
    if facts[slots[_F_LEFT]] >= 0:
        state[E.S_LEFT] = facts[slots[_F_LEFT]]
        state[E.S_RIGHT] = facts[slots[_F_RIGHT]]
    for s in range(n):
        counts[s] = facts[slots[_F_SIZES] + s]
        state[E.S_VOIDS + s] = facts[slots[_F_VOIDS] + s]
        state[E.S_SCORES + s] = facts[slots[_F_SCORES] + s]
    # The size, for the root's legal actions; determinize deals the tiles.
    state[E.S_BONE_END] = facts[slots[_F_BONES]]
    state[E.S_PASSES] = facts[slots[_F_PASSES]]
    state[E.S_CURRENT] = 0


def state_from_view(view: PlayerView) -> tuple[np.ndarray, np.ndarray]:
    """``view``'s information set as ``(state, counts)``, seats absolute (see :func:`state_from_observation`)."""
    game = view.game
    n = game.num_players
    state = np.zeros(E.state_size(game.max_pip), np.int64)
    E.init_variant_state(state, n, 0, game.max_pip, game.hand_size, game.protected)
    state[E.S_HANDS + view.player] = view.hand
    state[E.S_LINE_MASK] = view.line_mask
    state[E.S_LINE_COUNT] = len(view.line)
    for k, (tile, seat, end) in enumerate(view.line):
        state[E.S_BONEYARD + game.num_tiles + k] = tile | seat << E.LINE_SEAT_SHIFT | max(end, 0) << E.LINE_END_SHIFT
    if view.ends is not None:
        state[E.S_LEFT], state[E.S_RIGHT] = view.ends
    for seat in range(n):
        state[E.S_VOIDS + seat] = view.voids[seat]
        state[E.S_SCORES + seat] = view.scores[seat]
    state[E.S_BONE_END] = view.boneyard_count
    state[E.S_PASSES] = view.passes_in_row
    state[E.S_CURRENT] = view.current
    state[E.S_OPENER] = view.opener
    counts = np.zeros(SEATS, np.int64)
    counts[:n] = view.hand_counts
    return state, counts


# ---------------------------------------------------------------------- determinizations


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
            _shuffle(row, size, words, _SLOT_MAIN)
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
    holding = _HOLDING_OF_SET[base[E.S_MAX_PIP]]
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
        _shuffle(pool, size, words, _SLOT_MAIN)
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
    _shuffle(pool, bones, words, _SLOT_MAIN)
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
    u = E.random_below_at(words, _SLOT_MAIN, _TWO_32) / _TWO_32
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


# ---------------------------------------------------------------------- one simulation


@njit(cache=True, inline="always")
def _new_node(meta: np.ndarray, children: np.ndarray, visits: np.ndarray, total: np.ndarray,
              available: np.ndarray, has_prior: np.ndarray) -> int:
    node = meta[_M_NODES]
    meta[_M_NODES] = node + 1
    children[node, :] = -1
    visits[node] = 0
    total[node] = 0.0
    available[node] = 0
    has_prior[node] = False
    return node


@njit(cache=True, inline="always")
def _uniform(words: np.ndarray) -> float:
    return E.random_below_at(words, _SLOT_SIM, _TWO_32) / _TWO_32


@njit(cache=True)
def _pick_untried(untried: np.ndarray, count: int, weights: np.ndarray, use_weights: bool, words: np.ndarray) -> int:
    """One of ``untried[:count]``: uniform, or in proportion to ``weights[action]``."""
    if use_weights:
        first = weights[untried[0]]
        equal = True
        mass = 0.0
        for k in range(count):
            w = max(weights[untried[k]], 0.0)
            mass += w
            if w != first:
                equal = False
        if not equal and mass > 0.0:
            u = _uniform(words) * mass
            for k in range(count):
                u -= max(weights[untried[k]], 0.0)
                if u < 0.0:
                    return untried[k]
            return untried[count - 1]
    return untried[E.random_below_at(words, _SLOT_SIM, count)]


@njit(cache=True)
def _walk(
    state: np.ndarray, root: int, root_action: int, searcher: int, exploration: float, prior_weight: float,
    meta: np.ndarray, children: np.ndarray, visits: np.ndarray, total: np.ndarray, available: np.ndarray,
    has_prior: np.ndarray, prior: np.ndarray, words: np.ndarray, path_nodes: np.ndarray, path_seats: np.ndarray,
    scratch: np.ndarray,
) -> tuple[int, int]:
    """Select and expand from ``root`` with ``root_action`` first; returns ``(leaf node, path length)``.

    ``state`` ends at the leaf position; ``path_nodes``/``path_seats`` hold the nodes passed and
    the seat that moved into each.
    """
    width = children.shape[1]  # the set's 2T + 2 actions
    legal = scratch[:width]
    untried = scratch[width:]
    draw = E.draw_action(state)
    node = root
    action = root_action
    length = 0
    while True:
        mover = state[E.S_CURRENT]
        child = children[node, action]
        expanded = child < 0
        if expanded:
            child = _new_node(meta, children, visits, total, available, has_prior)
            children[node, action] = child
            available[child] = 1
        path_nodes[length] = child
        path_seats[length] = mover
        length += 1
        node = child
        if action == draw and mover == searcher:
            # The searcher sees what it draws: its later choices hang below that tile.
            drawn = state[E.S_BONEYARD + state[E.S_BONE_POS]]
            outcome = children[node, drawn]
            if outcome < 0:
                outcome = _new_node(meta, children, visits, total, available, has_prior)
                children[node, drawn] = outcome
            node = outcome
        status = E.apply_action(state, action)
        if expanded or status != E.PLAYING:
            return node, length
        count = E.legal_actions(state, legal)
        tried = 0
        best = -math.inf
        for k in range(count):
            a = legal[k]
            candidate = children[node, a]
            if candidate < 0:
                untried[tried] = a
                tried += 1
                continue
            available[candidate] += 1
            n_visits = visits[candidate]
            score = total[candidate] / n_visits + exploration * math.sqrt(math.log(available[candidate]) / n_visits)
            if prior_weight > 0.0 and has_prior[node]:
                score += prior_weight * prior[node, a] / (1.0 + n_visits)
            if score > best:
                best = score
                action = a
        if tried == 1:
            action = untried[0]
        elif tried > 1:
            weighted = has_prior[node]  # the plain search's prior array is one unused row
            action = _pick_untried(untried, tried, prior[node if weighted else 0], weighted, words)


@njit(cache=True)
def zero_sum(state: np.ndarray, out: np.ndarray) -> None:
    """Every seat's zero-sum hand points / REWARD_SCALE into ``out`` float64 (the hand is over)."""
    E.hand_rewards(state, E.ZERO_SUM, True, out)
    for s in range(state[E.S_NUM_PLAYERS]):
        out[s] /= REWARD_SCALE


@njit(cache=True)
def rollout(state: np.ndarray, threshold: int, words: np.ndarray, legal: np.ndarray, out: np.ndarray) -> None:
    """Finish the hand: the heaviest playable tile, or with probability threshold / 2**32 a random one;
    every seat's zero-sum hand points / REWARD_SCALE into ``out``."""
    draw = E.draw_action(state)
    pips = PIPS_OF_SET[state[E.S_MAX_PIP]]
    while state[E.S_STATUS] == E.PLAYING:
        count = E.legal_actions(state, legal)
        if legal[0] >= draw:  # nothing fits: draw, or pass once drawing is over
            E.apply_action(state, legal[0])
            continue
        if legal[count - 1] == draw:  # rollouts never draw by choice
            count -= 1
        if count > 1 and E.random_below_at(words, _SLOT_SIM, _TWO_32) < threshold:
            E.apply_action(state, legal[E.random_below_at(words, _SLOT_SIM, count)])
            continue
        best = legal[0]
        best_pips = pips[best >> 1]
        for k in range(1, count):
            if pips[legal[k] >> 1] > best_pips:
                best = legal[k]
                best_pips = pips[best >> 1]
        E.apply_action(state, best)
    zero_sum(state, out)


@njit(cache=True, inline="always")
def _backup(path_nodes: np.ndarray, path_seats: np.ndarray, length: int, rewards: np.ndarray,
            visits: np.ndarray, total: np.ndarray) -> None:
    for k in range(length):
        node = path_nodes[k]
        visits[node] += 1
        total[node] += rewards[path_seats[k]]


@njit(cache=True, inline="always")
def _shared_seed(words: np.ndarray) -> int:
    high = E.random_below_at(words, _SLOT_MAIN, _TWO_32)
    low = E.random_below_at(words, _SLOT_MAIN, _TWO_32)
    return (high << 32) | low


# ---------------------------------------------------------------------- the plain search


@njit(cache=True)
def search_chunk(
    base: np.ndarray, counts: np.ndarray, searcher: int, exploration: float, threshold: int,
    simulations: int, determinizations: int, meta: np.ndarray, children: np.ndarray, visits: np.ndarray,
    total: np.ndarray, available: np.ndarray, has_prior: np.ndarray, words: np.ndarray, log_place: np.ndarray,
    candidates: np.ndarray,
) -> int:
    """Search up to ``determinizations`` whole determinizations, stopping once ``simulations`` are done.

    The tree's root is node 0 (``meta`` holds the next free node, the capacity and the count of
    simulations done); ``words`` the generators. Determinizations are
    :func:`weighted_determinize`'s with ``log_place`` and ``candidates``. Returns 0, or
    ``_NEED_ROOM`` when the tree cannot take another determinization (grow it and call again),
    or ``_NO_DEAL``.
    """
    width = children.shape[1]
    world = np.empty(base.shape[0], np.int64)
    state = np.empty(base.shape[0], np.int64)
    roots = np.empty(width, np.int64)
    scratch = np.empty(2 * width, np.int64)
    path_nodes = np.empty(_PATH, np.int64)
    path_seats = np.empty(_PATH, np.int64)
    rewards = np.zeros(SEATS)
    prior = np.zeros((1, width), np.float32)  # the plain search has no priors
    n_roots = E.legal_actions(base, roots)
    done = 0
    while done < determinizations and (meta[_M_DONE] == 0 or meta[_M_DONE] < simulations):
        if meta[_M_NODES] + _NODES_PER_SIMULATION * n_roots > meta[_M_END]:
            return _NEED_ROOM
        if not weighted_determinize(base, counts, searcher, words, world, log_place, candidates):
            return _NO_DEAL
        shared = _shared_seed(words)
        # The root actions are the searcher's own legal moves: the same in every world.
        for r in range(n_roots):
            state[:] = world
            words[_SLOT_SIM] = shared
            _leaf, length = _walk(state, meta[_M_ROOT], roots[r], searcher, exploration, 0.0, meta, children, visits, total,
                                  available, has_prior, prior, words, path_nodes, path_seats, scratch)
            rollout(state, threshold, words, scratch, rewards)
            _backup(path_nodes, path_seats, length, rewards, visits, total)
            meta[_M_DONE] += 1
        done += 1
    return 0


# ---------------------------------------------------------------------- the lockstep search


@njit(cache=True)
def lockstep_walk(
    bases: np.ndarray, counts: np.ndarray, searchers: np.ndarray, match: np.ndarray, active: np.ndarray,
    exploration: float, prior_weight: float, metas: np.ndarray, children: np.ndarray, visits: np.ndarray,
    total: np.ndarray, available: np.ndarray, has_prior: np.ndarray, prior: np.ndarray, words: np.ndarray,
    worlds: np.ndarray, states: np.ndarray, shared: np.ndarray, leaves: np.ndarray, paths: np.ndarray,
    seats: np.ndarray, lengths: np.ndarray, rows: np.ndarray, obs: np.ndarray, masks: np.ndarray,
    log_places: np.ndarray, candidates: np.ndarray,
) -> int:
    """Walk one simulation of every active decision ``b`` to its leaf; write the leaves' observations.

    Decision ``b``'s tree is the node region ``metas[b]`` describes (root at its first node); its
    determinizations are :func:`weighted_determinize`'s with ``log_places[b]`` and the scratch
    ``candidates`` (shared: the decisions deal one after another). A
    non-terminal leaf writes one row per seat into ``obs`` (N, 258) and ``masks`` (N, 58), from
    row ``rows[b]`` on (-1 for a hand that ended). Returns the number of rows. Returns -1 when a
    decision's view admits no deal.
    """
    scratch = np.empty(2 * children.shape[1], np.int64)
    roots = np.empty(children.shape[1], np.int64)
    row = 0
    for b in range(bases.shape[0]):
        rows[b] = -1
        if not active[b]:
            continue
        meta = metas[b]
        E.legal_actions(bases[b], roots)
        if meta[_M_NEXT_ROOT] == 0:
            if not weighted_determinize(bases[b], counts[b], searchers[b], words[b], worlds[b], log_places[b],
                                        candidates):
                return -1
            shared[b] = _shared_seed(words[b])
        state = states[b]
        state[:] = worlds[b]
        words[b, _SLOT_SIM] = shared[b]
        leaf, length = _walk(state, meta[_M_ROOT], roots[meta[_M_NEXT_ROOT]], searchers[b], exploration, prior_weight,
                             meta, children, visits, total, available, has_prior, prior, words[b], paths[b],
                             seats[b], scratch)
        leaves[b] = leaf
        lengths[b] = length
        if state[E.S_STATUS] != E.PLAYING:
            continue
        rows[b] = row
        n = state[E.S_NUM_PLAYERS]
        for s in range(n):
            E.write_observation(state, s, match[b], obs[row])
            if s == state[E.S_CURRENT]:
                E.legal_mask(state, masks[row])
            else:
                masks[row, :] = 0
            row += 1
    return row


@njit(cache=True)
def lockstep_finish(
    active: np.ndarray, simulations: int, threshold: int, value_weight: float, metas: np.ndarray,
    visits: np.ndarray, total: np.ndarray, has_prior: np.ndarray, prior: np.ndarray, words: np.ndarray,
    bases: np.ndarray, states: np.ndarray, leaves: np.ndarray, paths: np.ndarray, seats: np.ndarray,
    lengths: np.ndarray, rows: np.ndarray, priors: np.ndarray, values: np.ndarray,
) -> int:
    """Back up every active decision's simulation (network values mixed with rollouts); returns how many stay active."""
    scratch = np.empty(prior.shape[1], np.int64)
    rolled = np.zeros(SEATS)
    rewards = np.zeros(SEATS)
    still = 0
    for b in range(bases.shape[0]):
        if not active[b]:
            continue
        state = states[b]
        n = state[E.S_NUM_PLAYERS]
        row = rows[b]
        if row < 0:
            zero_sum(state, rewards)
        else:
            leaf = leaves[b]
            prior[leaf, :] = priors[row + state[E.S_CURRENT]]
            has_prior[leaf] = True
            if value_weight < 1.0:
                rollout(state, threshold, words[b], scratch, rolled)
            for s in range(n):
                mixed = value_weight * values[row + s]
                if value_weight < 1.0:
                    mixed += (1.0 - value_weight) * rolled[s]
                rewards[s] = mixed
        _backup(paths[b], seats[b], lengths[b], rewards, visits, total)
        meta = metas[b]
        meta[_M_DONE] += 1
        meta[_M_NEXT_ROOT] += 1
        if meta[_M_NEXT_ROOT] == E.legal_actions(bases[b], scratch):
            meta[_M_NEXT_ROOT] = 0
            if meta[_M_DONE] >= simulations:
                active[b] = False
                continue
        still += 1
    return still


# ---------------------------------------------------------------------- where the hidden tiles lie


class LocationModel(Protocol):
    """A model of where the hidden tiles lie (:func:`agents.hidden_tiles.load_hidden_tile_model` loads one)."""

    def location_probabilities(self, observation: np.ndarray) -> np.ndarray:
        """float64 ``(P + 1, T)`` from the observer's observation vector float32 ``(L,)``: row 0
        the observer's hand, row ``i`` the seat ``i`` places after it, row ``P`` the boneyard;
        columns in the set's tile order, each summing to 1."""
        ...


def load_location_model(path: str | os.PathLike[str], game: DrawGame | None = None) -> LocationModel:
    """The hidden-tile model in the file ``path`` (for ``game``, if given: a model recorded for
    another game is refused, naming its record and the field).

    Raises:
        ValueError: naming the file, if it cannot be read, is not such a model or is of another game.
    """
    # Imported on use: a search without a model never loads the model's code.
    from agents.hidden_tiles import load_hidden_tile_model

    try:
        return load_hidden_tile_model(path, game)
    except (OSError, ValueError) as error:
        raise ValueError(f"inference={os.fspath(path)}: {error}") from None


def observation_vector(source: PlayerView | Observation) -> np.ndarray:
    """The searcher's observation vector float32 ``(L,)``: an observation dict's, or the one a view's
    player has (of any deal the view allows: the vector shows nothing hidden)."""
    if isinstance(source, PlayerView):
        return observe_state(source.sample_state(random.Random(0)), source.player)
    return np.asarray(source["observation"], np.float32)


def log_placements(model: LocationModel, source: PlayerView | Observation, base: np.ndarray,
                   searcher: int) -> np.ndarray:
    """The log of ``model``'s probability of each place of each tile, float64 ``(SEATS + 1, MAX_TILES)``:
    row ``s`` is the absolute seat ``s`` of the search's state ``base`` (the model's rows are seats
    relative to ``searcher``), row :data:`BONEYARD_ROW` the boneyard; a probability 0 is ``-inf``.

    Raises:
        ValueError: if the model is of another table size or set than ``base`` (a model that says
            its game), or its answer is not ``(P + 1, T)`` of finite probabilities.
    """
    n, num_tiles = int(base[E.S_NUM_PLAYERS]), int(base[E.S_NUM_TILES])
    game = getattr(model, "game", None)
    if isinstance(game, DrawGame) and (game.num_players, game.num_tiles) != (n, num_tiles):
        raise ValueError(f"the model is of {game.num_players} players and the double-{game.max_pip} set, "
                         f"this decision of {n} players and the double-{int(base[E.S_MAX_PIP])} set")
    probabilities = np.asarray(model.location_probabilities(observation_vector(source)), np.float64)
    if probabilities.shape != (n + 1, num_tiles) or not np.all(np.isfinite(probabilities) & (probabilities >= 0)):
        raise ValueError(f"a hidden-tile model must give ({n + 1}, {num_tiles}) probabilities (finite, >= 0) "
                         f"for this observation, got shape {probabilities.shape}")
    table = np.zeros((SEATS + 1, E.MAX_TILES), np.float64)
    with np.errstate(divide="ignore"):
        logs = np.log(probabilities)
    for relative in range(n):
        table[(searcher + relative) % n, :num_tiles] = logs[relative]
    table[BONEYARD_ROW, :num_tiles] = logs[n]
    return table


def weighting(model: LocationModel | None, candidates: int, source: PlayerView | Observation, base: np.ndarray,
              searcher: int, model_file: str | os.PathLike[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`weighted_determinize`'s ``(log_place, candidates)`` for one decision: without a model
    or with one candidate, a single row of candidates (the uniform sampler, the model not asked).

    Raises:
        ValueError: as :func:`log_placements`, naming ``model_file`` (``inference=PATH: ...``) if given.
    """
    if model is None or candidates <= 1:
        return np.zeros((SEATS + 1, E.MAX_TILES), np.float64), np.zeros((1, base.shape[0]), np.int64)
    try:
        log_place = log_placements(model, source, base, searcher)
    except ValueError as error:
        if model_file is None:
            raise
        raise ValueError(f"inference={os.fspath(model_file)}: {error}") from None
    return log_place, np.zeros((candidates, base.shape[0]), np.int64)


# ---------------------------------------------------------------------- the agent


class _Tree:
    """The arrays of one or more trees (node regions), grown on demand."""

    def __init__(self, capacity: int, width: int = NUM_ACTIONS) -> None:
        self.children = np.full((capacity, width), -1, np.int32)  # a row per node: the set's 2T + 2 actions
        self.visits = np.zeros(capacity, np.int64)
        self.total = np.zeros(capacity, np.float64)
        self.available = np.zeros(capacity, np.int64)
        self.has_prior = np.zeros(capacity, np.bool_)

    @property
    def capacity(self) -> int:
        return len(self.visits)

    def grow(self, capacity: int) -> None:
        """Keep the nodes, make room for ``capacity`` in all."""
        old = self.capacity
        for name in ("children", "visits", "total", "available", "has_prior"):
            array = getattr(self, name)
            bigger = np.zeros((capacity, *array.shape[1:]), array.dtype)
            bigger[:old] = array
            setattr(self, name, bigger)


class SearchResult:
    """The root of a finished search: per legal root action, its visits and total value.

    Attributes:
        actions: the legal root actions, ascending.
        visits: simulations that started with each of them (equal: whole determinizations).
        totals: the searcher's summed backed-up values (zero-sum points / REWARD_SCALE).
        simulations: simulations done in all.
        nodes: tree nodes allocated.
    """

    def __init__(self, actions: np.ndarray, visits: np.ndarray, totals: np.ndarray, simulations: int, nodes: int):
        self.actions = actions
        self.visits = visits
        self.totals = totals
        self.simulations = simulations
        self.nodes = nodes

    def values(self) -> dict[int, float]:
        """Each root action's mean value."""
        return {int(a): float(t / v) for a, v, t in zip(self.actions, self.visits, self.totals, strict=True)}


def information_set(
    source: PlayerView | Observation, protected: int | None = None,
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """``(state, counts, searcher, match)`` of a view or of an observation dict.

    A view carries its game. An observation's set is read from its action mask's length and its
    blocks from the set's layout; its protected boneyard tiles are ``protected``, or with
    ``None`` read or guessed from the observation (:func:`_protected_of`).

    Raises:
        ValueError: if the source is not of the player to act, its vector does not fit its mask,
            or its ``can_draw`` and ``boneyard_size`` contradict ``protected``.
    """
    if isinstance(source, PlayerView):
        if source.current != source.player:
            raise ValueError(f"view must be of the player to act: player {source.player}, to act {source.current}")
        state, counts = state_from_view(source)
        return state, counts, source.player, False  # a view does not say it is a match: hand layout
    if not isinstance(source, dict):
        raise ValueError("observation must be an observation dict with 'observation' and 'action_mask'")
    tile_set = tile_set_of(source)
    observed = set_layout(tile_set)
    offsets = observed.offsets
    vector = np.asarray(source["observation"], np.float32)
    if vector.shape != (observed.size,):
        raise ValueError(f"observation must have shape ({observed.size},) for its mask of "
                         f"{2 * tile_set.num_tiles + 2} actions, got {vector.shape}")
    if vector[offsets["to_act"]] < 0.5:
        raise ValueError("observation must be of the player to act (its to_act block starts with 1)")
    protected = _protected_of(vector, offsets, protected)
    num_players = round(float(vector[offsets["in_play"] : offsets["in_play"] + SEATS].sum()))
    state = np.zeros(E.state_size(tile_set.max_pip), np.int64)
    counts = np.zeros(SEATS, np.int64)
    state_from_observation(vector, num_players, state, counts, tile_set.max_pip, protected, read_program(tile_set))
    return state, counts, 0, bool(vector[offsets["target"]] > 0)


def _protected_of(vector: np.ndarray, offsets: dict[str, int], protected: int | None) -> int:
    """The protected boneyard tiles of an observation's game.

    Drawing stops when the boneyard holds exactly the protected tiles, so with ``can_draw`` 0 the
    boneyard's size is the protected count. While a draw is left the observation says only that
    fewer are protected than the boneyard holds: ``None`` then takes the seeds' 2, or the most
    the boneyard allows when it holds 2 or fewer. A given ``protected`` must agree with the observation.
    """
    boneyard = round(float(vector[offsets["boneyard_size"]]))
    can_draw = bool(vector[offsets["can_draw"]] > 0.5)
    if can_draw and boneyard < 1:
        raise ValueError(f"observation: can_draw 1 with boneyard_size {boneyard}")
    if protected is None:
        return min(PROTECTED_BONEYARD, boneyard - 1) if can_draw else boneyard
    if can_draw != (boneyard > protected):
        raise ValueError(f"observation: boneyard_size {boneyard} with can_draw {int(can_draw)} contradicts "
                         f"protected={protected}")
    return protected


def _width(state: np.ndarray) -> int:
    """The actions of a state's set: 2T + 2."""
    return 2 * int(state[E.S_NUM_TILES]) + 2


class CompiledISMCTSAgent(SearchAgent):
    """Single-observer ISMCTS of :mod:`agents.ismcts`, compiled (``agents.make("ismcts")``); the
    arguments are :class:`agents.ismcts.SearchAgent`'s (default budget :data:`DEFAULT_SIMULATIONS`),
    ``protected`` included: it plays every variant. Two more weight its determinizations by a
    model of where the hidden tiles lie (:func:`weighted_determinize`):

    Args:
        inference: a hidden-tile model file (:func:`load_location_model`, read once here), or
            ``None`` for the uniform deals.
        candidates: deals drawn per determinization, one of them kept in proportion to the model's
            weight (1 to :data:`MAX_CANDIDATES`; 1, or no model: the uniform deals).

    Raises:
        ValueError: if an argument is out of range or the file is not a model (naming it).
    """

    name = "ismcts"
    default_simulations = DEFAULT_SIMULATIONS

    def __init__(
        self,
        simulations: int | None = None,
        seconds: float | None = None,
        exploration: float = 1.0,
        rollout_randomness: float = 0.25,
        seed: int | None = None,
        protected: int | None = None,
        inference: str | os.PathLike[str] | None = None,
        candidates: int = DEFAULT_CANDIDATES,
    ) -> None:
        super().__init__(simulations, seconds, exploration, rollout_randomness, seed, protected)
        self.candidates = check_int("candidates", candidates, minimum=1, maximum=MAX_CANDIDATES)
        #: The model's file, named by errors at a decision (a model of another game).
        self.inference = inference
        self.model = None if inference is None else load_location_model(inference)

    @property
    def _threshold(self) -> int:
        """``rollout_randomness`` as a threshold on the generator's 32-bit draws."""
        return round(self.rollout_randomness * _TWO_32)

    _tree: _Tree | None = None

    def _tree_for(self, width: int) -> _Tree:
        """The arrays :meth:`search` reuses while the set stays the same: room for the whole budget up
        to 64k nodes (15 MB in the seeds' set); a larger or a timed search grows them."""
        if self._tree is None or self._tree.children.shape[1] != width:
            self._tree = _Tree(min(_NODES_PER_SIMULATION * ((self.simulations or 0) + width) + 1, 1 << 16), width)
        return self._tree

    def action_values(self, view: PlayerView | Observation) -> dict[int, float]:
        """Search from ``view`` (a :class:`PlayerView` of the player to act, or an observation dict).

        Returns each legal root action's mean backed-up value: the searcher's zero-sum hand
        points divided by :data:`REWARD_SCALE`.
        """
        return self.search(view).values()

    def search(self, view: PlayerView | Observation) -> SearchResult:
        """Run the simulations from ``view`` and return the root's statistics."""
        base, counts, searcher, _match = information_set(view, self.protected)
        log_place, candidates = weighting(self.model, self.candidates, view, base, searcher, self.inference)
        words = np.array([self._decision_seed(), 0], np.int64)
        tree = self._tree_for(_width(base))
        meta = np.array([1, tree.capacity, 0, 0, 0], np.int64)
        tree.children[0, :] = -1
        # A seconds budget alone stops at MAX_SIMULATIONS too: the tree never needs more than
        # `most` nodes (whole determinizations: up to one more simulation per root action).
        simulations = self.simulations if self.simulations is not None else MAX_SIMULATIONS
        most = _NODES_PER_SIMULATION * (simulations + _width(base)) + 1
        seconds = self.seconds
        deadline = None if seconds is None else time.perf_counter() + seconds
        chunk = 1 if deadline is not None else np.iinfo(np.int64).max
        while True:
            started = time.perf_counter()
            status = search_chunk(base, counts, searcher, self.exploration, self._threshold, simulations, chunk,
                                  meta, tree.children, tree.visits, tree.total, tree.available, tree.has_prior, words,
                                  log_place, candidates)
            if status == _NO_DEAL:
                raise ValueError("no deal of the hidden tiles is consistent with this view")
            if status == _NEED_ROOM:
                tree.grow(min(2 * tree.capacity, most))
                meta[_M_END] = tree.capacity
                continue
            if meta[_M_DONE] >= simulations:
                break
            if deadline is not None and seconds is not None:
                now = time.perf_counter()
                if now >= deadline:
                    break
                # Chunks of about a tenth of the budget: few calls, little overshoot.
                spent = max(now - started, 1e-6)
                chunk = max(1, min(4 * chunk, int(chunk * 0.1 * seconds / spent)))
        roots = np.empty(_width(base), np.int64)
        actions = roots[: E.legal_actions(base, roots)].copy()
        nodes = tree.children[0, actions]
        return SearchResult(actions, tree.visits[nodes].copy(), tree.total[nodes].copy(),
                            int(meta[_M_DONE]), int(meta[_M_NODES]))

    def action_values_many(
        self,
        views: Sequence[PlayerView | Observation],
        evaluate: Evaluator | None = None,
        value_weight: float = 0.5,
        prior_weight: float = 0.0,
    ) -> list[dict[int, float]]:
        """Search many decisions in lockstep, evaluating all their leaves in one call per round.

        Each round runs one simulation of every unfinished decision: the walks stop at their
        leaves, the leaves of hands still in play become one observation per seat, and
        ``evaluate(observations (N, 258) float32, masks (N, 58) int8) -> (priors (N, 58),
        values (N,))`` sees them all at once (the module docstring says how values and priors
        are used). ``evaluate=None`` searches with rollouts only. The budget is
        ``simulations`` (a ``seconds`` budget does not apply here; the default is
        :data:`DEFAULT_SIMULATIONS`).

        Args:
            views: :class:`PlayerView` objects of the player to act, or observation dicts.
            evaluate: the batched network, or ``None``.
            value_weight: weight of the network's value against the rollout's, in 0..1.
            prior_weight: weight of the progressive-bias term ``prior / (1 + visits)``, >= 0.

        Returns:
            Per decision, each legal root action's mean value (as :meth:`action_values`).
        """
        value_weight = check_number("value_weight", value_weight, minimum=0, maximum=1)
        prior_weight = check_number("prior_weight", prior_weight, minimum=0)
        if evaluate is None:
            value_weight, prior_weight = 0.0, 0.0
        count = len(views)
        simulations = self.simulations if self.simulations is not None else DEFAULT_SIMULATIONS
        sets = [information_set(view, self.protected) for view in views]
        size = sets[0][0].shape[0] if sets else E.STATE_SIZE
        if any(state.shape[0] != size for state, *_ in sets):
            raise ValueError("views must all be of one set (one max_pip)")
        width = NUM_ACTIONS if not sets else _width(sets[0][0])
        region = _NODES_PER_SIMULATION * (simulations + width) + 1
        bases = np.zeros((count, size), np.int64)
        counts = np.zeros((count, SEATS), np.int64)
        searchers = np.zeros(count, np.int64)
        match = np.zeros(count, np.bool_)
        log_places = np.zeros((count, SEATS + 1, E.MAX_TILES), np.float64)
        candidates = np.zeros((1, size), np.int64)
        for b, (base, seat_counts, searcher, in_match) in enumerate(sets):
            bases[b], counts[b], searchers[b], match[b] = base, seat_counts, searcher, in_match
            log_places[b], candidates = weighting(self.model, self.candidates, views[b], base, searcher, self.inference)
        observation_size = set_layout(tiles.tile_set(int(bases[0, E.S_MAX_PIP]) if count else tiles.DEFAULT_MAX_PIP)).size
        tree = _Tree(region * count, width)
        metas = np.zeros((count, META_SIZE), np.int64)
        metas[:, _M_ROOT] = np.arange(count) * region
        metas[:, _M_NODES] = metas[:, _M_ROOT] + 1
        metas[:, _M_END] = metas[:, _M_ROOT] + region
        prior = np.zeros((tree.capacity, width), np.float32)
        words = np.zeros((count, 2), np.int64)
        words[:, _SLOT_MAIN] = [self._decision_seed() for _ in range(count)]
        worlds = np.zeros((count, size), np.int64)
        states = np.zeros((count, size), np.int64)
        shared = np.zeros(count, np.int64)
        leaves = np.zeros(count, np.int64)
        paths = np.zeros((count, _PATH), np.int64)
        seats = np.zeros((count, _PATH), np.int64)
        lengths = np.zeros(count, np.int64)
        rows = np.zeros(count, np.int64)
        obs = np.zeros((count * SEATS, observation_size), np.float32)
        masks = np.zeros((count * SEATS, width), np.int8)
        active = np.ones(count, np.bool_)
        priors = np.ones((count * SEATS, width), np.float32)
        values = np.zeros(count * SEATS, np.float64)
        remaining = count
        while remaining:
            used = lockstep_walk(bases, counts, searchers, match, active, self.exploration, prior_weight, metas,
                                 tree.children, tree.visits, tree.total, tree.available, tree.has_prior, prior,
                                 words, worlds, states, shared, leaves, paths, seats, lengths, rows, obs, masks,
                                 log_places, candidates)
            if used < 0:
                raise ValueError("no deal of the hidden tiles is consistent with one of the views")
            if used and evaluate is not None:
                got_priors, got_values = evaluate(obs[:used], masks[:used])
                priors[:used] = np.asarray(got_priors, np.float32).reshape(used, width)
                values[:used] = np.asarray(got_values, np.float64).reshape(used)
            remaining = lockstep_finish(active, simulations, self._threshold, value_weight, metas, tree.visits,
                                        tree.total, tree.has_prior, prior, words, bases, states, leaves, paths,
                                        seats, lengths, rows, priors, values)
        results = []
        roots = np.empty(width, np.int64)
        for b in range(count):
            actions = roots[: E.legal_actions(bases[b], roots)]
            nodes = tree.children[metas[b, _M_ROOT], actions]
            results.append({int(a): float(tree.total[k] / tree.visits[k]) for a, k in zip(actions, nodes, strict=True)})
        return results

    def _decision_seed(self) -> int:
        """The next decision's generator seed, from the agent's seeded :class:`random.Random`."""
        return self.rng.getrandbits(63)
