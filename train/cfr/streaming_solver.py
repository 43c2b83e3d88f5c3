"""CFR+, Predictive CFR+ and DCFR without the game tree, on the streaming best response's tables.

:mod:`train.cfr.solver` runs on the stored tree, which a game the size of ``midi`` (5.7e8
histories) cannot afford. This solver keeps only what :func:`draw_env.exact.streaming.enumerate_states`
keeps, each seat's information states with their legal actions and parent sequences (one table
per opener), and per sequence (an information state's action) its cumulative regret, its
strategy sum and its current strategy; it walks the histories again at every half-iteration.

It runs the same algorithm as the tree's solver, in sequence form:

- A half-iteration of seat ``r`` walks the histories once with the current strategies
  (:func:`draw_env.exact.streaming.counterfactual_sums`), adding at each end of a hand what it wins
  for ``r``, weighted by chance and the other seat's reach, to ``r``'s last sequence on the path;
  a subtree the other seat never plays into is skipped (regret-matching strategies put zero
  weight on many actions, so later walks skip more).
- :func:`counterfactual_regrets` then goes over ``r``'s information states from the last (children
  after parents): a sequence's counterfactual value ``q(I, a)`` is its sum plus the values
  ``v(J) = sum_b sigma(J, b) q(J, b)`` of the states ``J`` it leads to, and the instantaneous
  regret is ``q(I, a) - v(I)``, the tree solver's sum over the histories of ``I``.
- The strategy sums take the current strategy weighted by ``r``'s own reach of each information
  state, the product of its own probabilities along its parent sequences (:func:`accumulate_average`),
  which perfect recall makes one number per state; no walk is needed.
- The rule's update and regret matching are the tree solver's own functions.

Updates alternate as in the tree solver (seat 0, then seat 1 against seat 0's updated strategy),
so both solvers compute the same iterates: equal to 1e-9 on small variants (tests). A seat's
information states hold the opener, so the two openers' tables are two separate games: each is
solved in a thread of its own (the walks release the GIL), and only the measures add them up.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from numba import njit

from draw_env.exact import streaming
from draw_env.exact.streaming import StateTables
from train.cfr.solver import Rule, cfr_plus_update, dcfr_update, pcfr_plus_update, regret_matching

Halves = tuple[StateTables, StateTables]

#: Bytes per sequence the solver adds to the tables (float64 regret, strategy sum, current
#: strategy and the walk's sums; PCFR+'s prediction is one more).
SEQUENCE_BYTES = 32
#: Bytes per information state the solver adds: 1.43 sequences a state on ``mini`` and ``midi``
#: (4.3 million of 3.0 million states), rounded up to 1.5.
STATE_BYTES = 3 * SEQUENCE_BYTES // 2


@dataclass
class HalfState:
    """The solver's arrays of one opener's tables, per seat laid out as ``tables.actions[seat]``."""

    regrets: list[np.ndarray]
    strategy_sums: list[np.ndarray]
    predictions: list[np.ndarray]
    current: list[np.ndarray]

    @classmethod
    def fresh(cls, tables: StateTables, rule: Rule) -> HalfState:
        sizes = [len(tables.actions[seat]) for seat in (0, 1)]
        current = []
        for seat in (0, 1):
            strategy = np.zeros(sizes[seat])
            regret_matching(np.zeros(sizes[seat]), np.zeros(0), tables.action_start[seat], strategy)  # uniform
            current.append(strategy)
        return cls([np.zeros(n) for n in sizes], [np.zeros(n) for n in sizes],
                   [np.zeros(n if rule.predictive else 0) for n in sizes], current)


@dataclass
class StreamingSolverState:
    """What the solver carries between iterations: the iterations done, the rule and, per opener,
    :class:`HalfState`."""

    iteration: int
    rule: Rule
    halves: list[HalfState] = field(default_factory=list)

    @classmethod
    def fresh(cls, tables: Halves, rule: Rule | None = None) -> StreamingSolverState:
        rule = rule or Rule()
        return cls(0, rule, [HalfState.fresh(half, rule) for half in tables])

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays a checkpoint saves, named as :func:`checkpoint_shapes` names them (the
        current strategies follow from the regrets)."""
        saved = {}
        for h, half in enumerate(self.halves):
            for seat in (0, 1):
                saved[f"regrets_{h}_{seat}"] = half.regrets[seat]
                saved[f"strategy_sums_{h}_{seat}"] = half.strategy_sums[seat]
                if self.rule.predictive:
                    saved[f"predictions_{h}_{seat}"] = half.predictions[seat]
        return saved

    @classmethod
    def from_arrays(cls, tables: Halves, rule: Rule, iteration: int, arrays: dict[str, np.ndarray]) -> StreamingSolverState:
        """A state from a checkpoint's :meth:`arrays`; ``ValueError`` naming an array missing or
        of another shape than :func:`checkpoint_shapes` gives."""
        for key, shape in checkpoint_shapes(tables, rule).items():
            if key not in arrays or arrays[key].shape != shape:
                raise ValueError(f"{key} must have shape {shape} for this game, got "
                                 f"{arrays[key].shape if key in arrays else 'none'}")
        state = cls.fresh(tables, rule)
        state.iteration = iteration
        for h, (half, half_tables) in enumerate(zip(state.halves, tables, strict=True)):
            for seat in (0, 1):
                half.regrets[seat][:] = arrays[f"regrets_{h}_{seat}"]
                half.strategy_sums[seat][:] = arrays[f"strategy_sums_{h}_{seat}"]
                if rule.predictive:
                    half.predictions[seat][:] = arrays[f"predictions_{h}_{seat}"]
                regret_matching(half.regrets[seat], half.predictions[seat], half_tables.action_start[seat],
                                half.current[seat])
        return state


def checkpoint_shapes(tables: Halves, rule: Rule) -> dict[str, tuple[int, ...]]:
    """The arrays of :meth:`StreamingSolverState.arrays` for ``tables`` and ``rule``, by name:
    per opener ``h`` and seat ``s``, ``regrets_h_s``, ``strategy_sums_h_s`` (and PCFR+'s
    ``predictions_h_s``), one float64 per sequence."""
    kinds = ("regrets", "strategy_sums", "predictions") if rule.predictive else ("regrets", "strategy_sums")
    return {f"{kind}_{h}_{seat}": (len(half.actions[seat]),)
            for h, half in enumerate(tables) for seat in (0, 1) for kind in kinds}


def iterate(tables: Halves, state: StreamingSolverState, iterations: int) -> None:
    """Run ``iterations`` iterations of ``state.rule`` in place, both openers at once."""
    scratch = [np.zeros(max(len(half.actions[0]), len(half.actions[1]))) for half in tables]
    with ThreadPoolExecutor(2) as pool:
        for _ in range(iterations):
            state.iteration += 1
            iteration = partial(_iterate_half, rule=state.rule, t=state.iteration)
            list(pool.map(iteration, tables, state.halves, scratch))


def _iterate_half(tables: StateTables, half: HalfState, scratch: np.ndarray, *, rule: Rule, t: int) -> None:
    """Iteration ``t`` on one opener's tables: seat 0's update, then seat 1's."""
    weight = rule.averaging_weight(t)
    for seat in (0, 1):
        start, parent = tables.action_start[seat], tables.parent[seat]
        values = scratch[: len(tables.actions[seat])]
        accumulate_average(start, parent, half.current[seat], half.strategy_sums[seat], weight, values)
        values[:] = 0.0
        streaming.counterfactual_sums(tables, (half.current[0], half.current[1]), seat, values)
        counterfactual_regrets(start, parent, half.current[seat], values)
        regrets = half.regrets[seat]
        if rule.algorithm == "cfr_plus":
            cfr_plus_update(regrets, values)
        elif rule.algorithm == "pcfr_plus":
            pcfr_plus_update(regrets, values, half.predictions[seat])
        else:
            dcfr_update(regrets, values, float(t), rule.alpha, rule.beta)
        regret_matching(regrets, half.predictions[seat], start, half.current[seat])


def average_strategies(tables: Halves, state: StreamingSolverState) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per opener, both seats' normalised average strategies (uniform where a state was never reached)."""
    averages = []
    for half_tables, half in zip(tables, state.halves, strict=True):
        pair = []
        for seat in (0, 1):
            average = np.zeros(len(half.strategy_sums[seat]))
            regret_matching(half.strategy_sums[seat], np.zeros(0), half_tables.action_start[seat], average)
            pair.append(average)
        averages.append((pair[0], pair[1]))
    return averages


def best_response_values(tables: Halves, strategies: list[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float]:
    """What each seat's best response wins against the other seat's ``strategies`` (per opener,
    as :func:`average_strategies` gives them), over the whole game: the two openers' shares added."""
    with ThreadPoolExecutor(2) as pool:
        halves = list(pool.map(streaming.strategy_best_response_values, tables, strategies))
    return halves[0][0] + halves[1][0], halves[0][1] + halves[1][1]


@njit(cache=True, nogil=True)
def accumulate_average(
    start: np.ndarray, parent: np.ndarray, strategy: np.ndarray, strategy_sums: np.ndarray, weight: float,
    own: np.ndarray,
) -> None:
    """Add ``strategy`` to ``strategy_sums`` weighted by ``weight`` times the seat's own reach of
    each information state: the product of its probabilities along its parent sequences (rows
    come after their parents). ``own``: scratch, laid out as the sequences (each sequence's own reach)."""
    for row in range(parent.shape[0]):
        before = parent[row]
        reach = own[before] if before >= 0 else 1.0
        for j in range(start[row], start[row + 1]):
            own[j] = reach * strategy[j]
            strategy_sums[j] += weight * own[j]


@njit(cache=True, nogil=True)
def counterfactual_regrets(start: np.ndarray, parent: np.ndarray, strategy: np.ndarray, values: np.ndarray) -> None:
    """In place, ``values`` from :func:`draw_env.exact.streaming.counterfactual_sums` to the
    instantaneous counterfactual regrets: from the last information state back, each sequence's
    value is its sum plus the values of the states it leads to (already added when its turn
    comes), the state's value is the strategy's mean of them, added to its parent sequence, and a
    sequence's regret is its value less its state's."""
    for row in range(parent.shape[0] - 1, -1, -1):
        first, stop = start[row], start[row + 1]
        mean = 0.0
        for j in range(first, stop):
            mean += strategy[j] * values[j]
        for j in range(first, stop):
            values[j] -= mean
        if parent[row] >= 0:
            values[parent[row]] += mean
