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

This module is the agent, :class:`CompiledISMCTSAgent`: its budgets, its tree arrays and the
calls into the kernels. The kernels live in :mod:`agents.compiled_search`, one module a job:

* :mod:`~agents.compiled_search.information`: the searcher's information set as an engine state,
  from a view or an observation of any set;
* :mod:`~agents.compiled_search.deals`: the determinizations, uniform or weighted by a model of
  where the hidden tiles lie (``inference``, ``candidates``: importance resampling);
* :mod:`~agents.compiled_search.weights`: that model, asked once per decision, as the table the
  weighted sampler reads;
* :mod:`~agents.compiled_search.playout`: the rollouts and the value of a finished hand;
* :mod:`~agents.compiled_search.tree`: the tree's arrays, the walk, the back-up and the plain
  search;
* :mod:`~agents.compiled_search.lockstep`: many decisions searched in lockstep with one batched
  network evaluation per round (:meth:`CompiledISMCTSAgent.action_values_many`);
* :mod:`~agents.compiled_search.generators` and :mod:`~agents.compiled_search.sets`: the random
  numbers and the sets' tables they share.

The names this module exports from them (``__all__``) stay importable from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from agents.base import Observation
from agents.compiled_search.deals import BONEYARD_ROW, determinize, log_weight, weighted_determinize
from agents.compiled_search.generators import SLOT_MAIN, TWO_32
from agents.compiled_search.information import (
    information_set,
    read_facts,
    read_program,
    set_layout,
    state_from_observation,
    state_from_view,
)
from agents.compiled_search.lockstep import lockstep_finish, lockstep_walk
from agents.compiled_search.playout import rollout, zero_sum
from agents.compiled_search.sets import PIPS_OF_SET
from agents.compiled_search.tree import (
    M_DONE,
    M_END,
    M_NODES,
    M_ROOT,
    META_SIZE,
    NEED_ROOM,
    NO_DEAL,
    NODES_PER_SIMULATION,
    PATH,
    search_chunk,
)
from agents.compiled_search.weights import (
    DEFAULT_CANDIDATES,
    MAX_CANDIDATES,
    LocationModel,
    load_location_model,
    log_placements,
    observation_vector,
    weighting,
)
from agents.ismcts import MAX_SIMULATIONS, REWARD_SCALE, SearchAgent
from draw_env import engine as E
from draw_env import tiles
from draw_env.checks import check_number
from draw_env.observation import SEATS
from draw_env.rules import NUM_ACTIONS, PlayerView

__all__ = [
    "BONEYARD_ROW",
    "DEFAULT_CANDIDATES",
    "DEFAULT_SIMULATIONS",
    "MAX_CANDIDATES",
    "META_SIZE",
    "PIPS_OF_SET",
    "REWARD_SCALE",
    "CompiledISMCTSAgent",
    "Evaluator",
    "LocationModel",
    "SearchResult",
    "determinize",
    "information_set",
    "load_location_model",
    "lockstep_finish",
    "lockstep_walk",
    "log_placements",
    "log_weight",
    "observation_vector",
    "read_facts",
    "read_program",
    "rollout",
    "search_chunk",
    "set_layout",
    "state_from_observation",
    "state_from_view",
    "weighted_determinize",
    "weighting",
    "zero_sum",
]

#: Default budget: simulations per decision, chosen to take a little less time than the
#: pure-Python agent spends on 200 (docs/agents.md gives the measurement).
DEFAULT_SIMULATIONS = 5000

#: ``evaluate(observations (N, 258) float32, masks (N, 58) int8) -> (priors (N, 58), values (N,))``.
Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


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


def _width(state: np.ndarray) -> int:
    """The actions of a state's set: 2T + 2."""
    return 2 * int(state[E.S_NUM_TILES]) + 2


class CompiledISMCTSAgent(SearchAgent):
    """Single-observer ISMCTS of :mod:`agents.ismcts`, compiled (``agents.make("ismcts")``); the
    arguments are :class:`agents.ismcts.SearchAgent`'s (default budget :data:`DEFAULT_SIMULATIONS`),
    ``protected`` included: it plays every variant. With ``inference``, its determinizations are
    weighted by the model of where the hidden tiles lie (:func:`weighted_determinize`).
    """

    name = "ismcts"
    default_simulations = DEFAULT_SIMULATIONS

    @property
    def _threshold(self) -> int:
        """``rollout_randomness`` as a threshold on the generator's 32-bit draws."""
        return round(self.rollout_randomness * TWO_32)

    _tree: _Tree | None = None

    def _tree_for(self, width: int) -> _Tree:
        """The arrays :meth:`search` reuses while the set stays the same: room for the whole budget up
        to 64k nodes (15 MB in the seeds' set); a larger or a timed search grows them."""
        if self._tree is None or self._tree.children.shape[1] != width:
            self._tree = _Tree(min(NODES_PER_SIMULATION * ((self.simulations or 0) + width) + 1, 1 << 16), width)
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
        most = NODES_PER_SIMULATION * (simulations + _width(base)) + 1
        seconds = self.seconds
        deadline = None if seconds is None else time.perf_counter() + seconds
        chunk = 1 if deadline is not None else np.iinfo(np.int64).max
        while True:
            started = time.perf_counter()
            status = search_chunk(base, counts, searcher, self.exploration, self._threshold, simulations, chunk,
                                  meta, tree.children, tree.visits, tree.total, tree.available, tree.has_prior, words,
                                  log_place, candidates)
            if status == NO_DEAL:
                raise ValueError("no deal of the hidden tiles is consistent with this view")
            if status == NEED_ROOM:
                tree.grow(min(2 * tree.capacity, most))
                meta[M_END] = tree.capacity
                continue
            if meta[M_DONE] >= simulations:
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
                            int(meta[M_DONE]), int(meta[M_NODES]))

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
        values (N,))`` sees them all at once (:mod:`agents.compiled_search.lockstep` says how
        values and priors are used). ``evaluate=None`` searches with rollouts only. The budget is
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
        region = NODES_PER_SIMULATION * (simulations + width) + 1
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
        metas[:, M_ROOT] = np.arange(count) * region
        metas[:, M_NODES] = metas[:, M_ROOT] + 1
        metas[:, M_END] = metas[:, M_ROOT] + region
        prior = np.zeros((tree.capacity, width), np.float32)
        words = np.zeros((count, 2), np.int64)
        words[:, SLOT_MAIN] = [self._decision_seed() for _ in range(count)]
        worlds = np.zeros((count, size), np.int64)
        states = np.zeros((count, size), np.int64)
        shared = np.zeros(count, np.int64)
        leaves = np.zeros(count, np.int64)
        paths = np.zeros((count, PATH), np.int64)
        seats = np.zeros((count, PATH), np.int64)
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
            nodes = tree.children[metas[b, M_ROOT], actions]
            results.append({int(a): float(tree.total[k] / tree.visits[k]) for a, k in zip(actions, nodes, strict=True)})
        return results

    def _decision_seed(self) -> int:
        """The next decision's generator seed, from the agent's seeded :class:`random.Random`."""
        return self.rng.getrandbits(63)
