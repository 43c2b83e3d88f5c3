"""One decision's search tree in preallocated arrays: its layout, the walk from the root to a leaf
(selection and expansion), the back-up, and the plain search (:func:`search_chunk`).

Node ``k`` has a row ``children[k]`` of the set's 2T + 2 child indices (-1 for none; below a
searcher's draw the row is indexed by the tile drawn), ``visits[k]``, ``total[k]`` (the backed-up
values of the seat that moved into it) and ``available[k]``, and for the lockstep search
``has_prior[k]`` and ``prior[k]``. A decision allocates at most :data:`NODES_PER_SIMULATION`
nodes per simulation (the expanded action, and the tile drawn when the searcher draws, once
mid-path and once at the leaf). Several trees may share the arrays, each a region of nodes that
its meta row describes (:data:`M_NODES` to :data:`M_ROOT`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from agents.compiled_search.deals import weighted_determinize
from agents.compiled_search.generators import SLOT_SIM, shared_seed, uniform
from agents.compiled_search.playout import rollout
from draw_env import engine as E
from draw_env.observation import SEATS

#: :func:`search_chunk`'s answers besides 0: the tree is full (grow it and call again), or the view admits no deal.
NEED_ROOM = 1
NO_DEAL = 2
#: Longer than any hand of any set of T tiles: at most T placements, T draws, and a round of passes
#: before each placement and at the end.
PATH = 2 * E.MAX_TILES + SEATS * (E.MAX_TILES + 1)
#: The most nodes one simulation allocates.
NODES_PER_SIMULATION = 3
#: A tree's meta row: next free node, end of its node region, simulations done, index of the
#: root action the next simulation starts with, root node.
M_NODES, M_END, M_DONE, M_NEXT_ROOT, M_ROOT = 0, 1, 2, 3, 4
META_SIZE = 5


@njit(cache=True, inline="always")
def _new_node(meta: np.ndarray, children: np.ndarray, visits: np.ndarray, total: np.ndarray,
              available: np.ndarray, has_prior: np.ndarray) -> int:
    node = meta[M_NODES]
    meta[M_NODES] = node + 1
    children[node, :] = -1
    visits[node] = 0
    total[node] = 0.0
    available[node] = 0
    has_prior[node] = False
    return node


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
            u = uniform(words) * mass
            for k in range(count):
                u -= max(weights[untried[k]], 0.0)
                if u < 0.0:
                    return untried[k]
            return untried[count - 1]
    return untried[E.random_below_at(words, SLOT_SIM, count)]


@njit(cache=True)
def walk(
    state: np.ndarray, root: int, root_action: int, searcher: int, exploration: float, prior_weight: float,
    meta: np.ndarray, children: np.ndarray, visits: np.ndarray, total: np.ndarray, available: np.ndarray,
    has_prior: np.ndarray, prior: np.ndarray, words: np.ndarray, path_nodes: np.ndarray, path_seats: np.ndarray,
    scratch: np.ndarray,
) -> tuple[int, int]:
    """Select and expand from ``root`` with ``root_action`` first; returns ``(leaf node, path length)``.

    A child is chosen by UCB1 with availability counts, plus ``prior_weight * prior / (1 + visits)``
    at a node that holds priors; an untried action is expanded uniformly, or in proportion to the
    node's priors. ``state`` ends at the leaf position; ``path_nodes``/``path_seats`` hold the
    nodes passed and the seat that moved into each.
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


@njit(cache=True, inline="always")
def backup(path_nodes: np.ndarray, path_seats: np.ndarray, length: int, rewards: np.ndarray,
           visits: np.ndarray, total: np.ndarray) -> None:
    """Add one visit and the value ``rewards[seat]`` of the seat that moved into it to every node of a path."""
    for k in range(length):
        node = path_nodes[k]
        visits[node] += 1
        total[node] += rewards[path_seats[k]]


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
    :func:`~agents.compiled_search.deals.weighted_determinize`'s with ``log_place`` and ``candidates``. Returns 0, or
    ``NEED_ROOM`` when the tree cannot take another determinization (grow it and call again),
    or ``NO_DEAL``.
    """
    width = children.shape[1]
    world = np.empty(base.shape[0], np.int64)
    state = np.empty(base.shape[0], np.int64)
    roots = np.empty(width, np.int64)
    scratch = np.empty(2 * width, np.int64)
    path_nodes = np.empty(PATH, np.int64)
    path_seats = np.empty(PATH, np.int64)
    rewards = np.zeros(SEATS)
    prior = np.zeros((1, width), np.float32)  # the plain search has no priors
    n_roots = E.legal_actions(base, roots)
    done = 0
    while done < determinizations and (meta[M_DONE] == 0 or meta[M_DONE] < simulations):
        if meta[M_NODES] + NODES_PER_SIMULATION * n_roots > meta[M_END]:
            return NEED_ROOM
        if not weighted_determinize(base, counts, searcher, words, world, log_place, candidates):
            return NO_DEAL
        shared = shared_seed(words)
        # The root actions are the searcher's own legal moves: the same in every world.
        for r in range(n_roots):
            state[:] = world
            words[SLOT_SIM] = shared
            _leaf, length = walk(state, meta[M_ROOT], roots[r], searcher, exploration, 0.0, meta, children, visits, total,
                                 available, has_prior, prior, words, path_nodes, path_seats, scratch)
            rollout(state, threshold, words, scratch, rewards)
            backup(path_nodes, path_seats, length, rewards, visits, total)
            meta[M_DONE] += 1
        done += 1
    return 0
