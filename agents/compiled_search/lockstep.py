"""Batched network evaluation: many decisions searched in lockstep, one simulation of each per round.

A round walks every decision's tree to its leaf (:func:`lockstep_walk`), writes the leaf position
as one observation per seat (the AEC environment's layout, with that seat's legal-action mask,
all zeros for the seats not to act), lets the caller evaluate all of them at once, then finishes
each simulation (:func:`lockstep_finish`): the value backed up for each seat is
``value_weight * values[row of that seat] + (1 - value_weight) * rollout`` (no rollout at all
when ``value_weight`` is 1), and the acting seat's priors are stored at the leaf node. There they
choose which untried action a later walk expands (sampled in proportion to the prior instead of
uniformly) and, with ``prior_weight > 0``, add a progressive-bias term
``prior_weight * prior / (1 + visits)`` to UCB1. Each decision's own sequence of simulations is
exactly that of the plain search (:func:`agents.compiled_search.tree.search_chunk`): with uniform
priors, ``value_weight=0`` and ``prior_weight=0`` the results are identical to the plain search
with the same seed. A value is the observing seat's expected zero-sum hand points divided by
:data:`agents.ismcts.REWARD_SCALE`, so a value network is trained on the ``zero_sum`` reward /
``REWARD_SCALE``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.compiled_search.deals import weighted_determinize
from agents.compiled_search.generators import SLOT_SIM, shared_seed
from agents.compiled_search.playout import rollout, zero_sum
from agents.compiled_search.tree import M_DONE, M_NEXT_ROOT, M_ROOT, backup, walk
from draw_env import engine as E
from draw_env.observation import SEATS


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
    determinizations are :func:`~agents.compiled_search.deals.weighted_determinize`'s with ``log_places[b]`` and the scratch
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
        if meta[M_NEXT_ROOT] == 0:
            if not weighted_determinize(bases[b], counts[b], searchers[b], words[b], worlds[b], log_places[b],
                                        candidates):
                return -1
            shared[b] = shared_seed(words[b])
        state = states[b]
        state[:] = worlds[b]
        words[b, SLOT_SIM] = shared[b]
        leaf, length = walk(state, meta[M_ROOT], roots[meta[M_NEXT_ROOT]], searchers[b], exploration, prior_weight,
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
        backup(paths[b], seats[b], lengths[b], rewards, visits, total)
        meta = metas[b]
        meta[M_DONE] += 1
        meta[M_NEXT_ROOT] += 1
        if meta[M_NEXT_ROOT] == E.legal_actions(bases[b], scratch):
            meta[M_NEXT_ROOT] = 0
            if meta[M_DONE] >= simulations:
                active[b] = False
                continue
        still += 1
    return still
