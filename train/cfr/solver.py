"""CFR+, Predictive CFR+ and DCFR over the enumerated game tree of a small 2-player variant, compiled.

Counterfactual regret minimisation (Zinkevich et al. 2007) with alternating updates (seat 0, then
seat 1 against seat 0's updated strategy), in one of three forms (:class:`Rule`), which differ
only in how an information state's cumulative regrets ``R`` take the iteration's instantaneous
counterfactual regrets ``r``, and in the weights of the average strategy:

- ``cfr_plus``, CFR+ (Tammelin 2014): ``R <- max(R + r, 0)``; the strategy of iteration ``t``
  weighted by ``t``.
- ``pcfr_plus``, Predictive CFR+ (Farina, Kroer and Sandholm 2021): ``R <- max(R + r, 0)``, and
  the next strategy is regret matching on ``max(R + m, 0)``, where the prediction ``m`` is the
  last instantaneous regret ``r``; weighted by ``t**2``.
- ``dcfr``, Discounted CFR (Brown and Sandholm 2019): ``R <- R + r``, then positive regrets times
  ``t**alpha / (t**alpha + 1)``, negative ones times ``t**beta / (t**beta + 1)``; weighted by
  ``t**gamma`` (by default alpha 1.5, beta 0, gamma 2).

The average strategy converges to a Nash equilibrium of the 2-player zero-sum hand; the exact
exploitability of that average (:func:`arena.exploitability.exploitability_of_tables`, the same
best response ``draw-exploit`` computes) is the measure of how close it is.

Tables are laid out as the tree's ``actions[seat]`` (one entry per legal action of each
information state). An iteration works on the tree's sequence form
(:attr:`draw_env.exact.game_tree.GameTree.sequence_form`, derived once per tree), not its nodes:
per seat, one pass over the pairs of last sequences at the hands' ends and two over the seat's
entries.

A table plays one policy in both seats (the ``tabular`` agent answers whoever asks), and an
environment's information state says nothing of the absolute seat: the information state of seat
0 and the one of seat 1 in the mirrored position are the same vector (:func:`mirrored_entries`).
The solver's two average strategies differ there; :func:`symmetric_strategies` mixes them into one
policy of both seats (the mean of their realisation plans), which a best response exploits at most
as much as the pair (its best-response value is convex in the plan: on ``mini``, less), and which a
table keyed by information states (:func:`information_table`) plays exactly. A table keyed by
observations merges more: :func:`observation_table`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from draw_env.exact.game_tree import GameTree, distinct_rows, reach_probabilities

#: The update rules the solver runs (:class:`Rule`), by the name a config gives them.
ALGORITHMS = ("cfr_plus", "pcfr_plus", "dcfr")

#: Each algorithm's name as written in the literature, for messages and provenance.
DISPLAY_NAMES = {"cfr_plus": "CFR+", "pcfr_plus": "PCFR+", "dcfr": "DCFR"}


@dataclass(frozen=True)
class Rule:
    """Which regret minimiser runs at each information state, and its parameters.

    Attributes:
        algorithm: one of :data:`ALGORITHMS`.
        alpha, beta, gamma: DCFR's discounts (the other algorithms ignore them): at iteration
            ``t`` positive cumulative regrets are multiplied by ``t**alpha / (t**alpha + 1)``,
            negative ones by ``t**beta / (t**beta + 1)``, and the strategy of iteration ``t``
            enters the average with weight ``t**gamma``.
    """

    algorithm: str = "cfr_plus"
    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 2.0

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {self.algorithm!r}")

    @property
    def name(self) -> str:
        return DISPLAY_NAMES[self.algorithm]

    @property
    def predictive(self) -> bool:
        """Whether the rule carries a prediction of the next instantaneous regret (PCFR+)."""
        return self.algorithm == "pcfr_plus"

    def averaging_weight(self, iteration: int) -> float:
        """The weight of iteration ``iteration``'s strategy in the average: linear for CFR+,
        quadratic for PCFR+, ``t**gamma`` for DCFR (the paper's discount of the sum by
        ``(t / (t + 1))**gamma`` each iteration, up to the normalisation)."""
        t = float(iteration)
        if self.algorithm == "cfr_plus":
            return t
        if self.algorithm == "pcfr_plus":
            return t * t
        return t**self.gamma


@dataclass
class SolverState:
    """What the solver carries from one iteration to the next (and what a checkpoint saves).

    Attributes:
        iteration: iterations done.
        regrets: per seat, the cumulative regrets (floored at zero but for DCFR's).
        strategy_sums: per seat, the weighted sums of the strategies played.
        predictions: per seat, PCFR+'s prediction of the next instantaneous regrets (the last
            ones); empty arrays for the other rules.
        rule: the update rule.
    """

    iteration: int
    regrets: list[np.ndarray]
    strategy_sums: list[np.ndarray]
    predictions: list[np.ndarray] = field(default_factory=lambda: [np.zeros(0), np.zeros(0)])
    rule: Rule = field(default_factory=Rule)
    # Scratch arrays of one per entry, kept to spare the allocation at every iteration.
    _scratch: tuple[np.ndarray, ...] = field(default=(), repr=False)
    # The strategies regret matching left at the end of the last call of iterate, and the iteration
    # they follow: the next call starts from them rather than matching again.
    _played: tuple[int, list[np.ndarray]] | None = field(default=None, repr=False)

    @classmethod
    def fresh(cls, tree: GameTree, rule: Rule | None = None) -> SolverState:
        rule = rule or Rule()
        sizes = [len(tree.actions[s]) for s in (0, 1)]
        return cls(0, [np.zeros(n) for n in sizes], [np.zeros(n) for n in sizes],
                   [np.zeros(n if rule.predictive else 0) for n in sizes], rule)

    def check_fits(self, tree: GameTree) -> None:
        """Raise ``ValueError`` unless the tables have the tree's shapes."""
        for seat in (0, 1):
            size = len(tree.actions[seat])
            tables = [("regrets", self.regrets[seat], size), ("strategy_sums", self.strategy_sums[seat], size),
                      ("predictions", self.predictions[seat], size if self.rule.predictive else 0)]
            for name, table, expected in tables:
                if table.shape != (expected,):
                    raise ValueError(f"{name}[{seat}] must hold {expected} entries for this game, got shape {table.shape}")


def current_strategy(tree: GameTree, seat: int, regrets: np.ndarray, prediction: np.ndarray | None = None) -> np.ndarray:
    """Regret matching: each information state plays its actions in proportion to their
    positive regrets, plus the prediction where one is given (PCFR+); uniformly when none is
    positive."""
    strategy = np.zeros(len(regrets))
    regret_matching(regrets, np.zeros(0) if prediction is None else prediction, tree.action_start[seat], strategy)
    return strategy


def mirrored_entries(tree: GameTree) -> tuple[np.ndarray, np.ndarray]:
    """Per seat, int64 ``(len(tree.actions[seat]),)``: for each entry (an information state's
    action), the other seat's entry of the same information-state vector
    (:meth:`draw_env.exact.game_tree.GameTree.information_states`) and the same action; -1 where the
    other seat has no such information state.

    Raises:
        ValueError: if two information states of one vector have different legal actions (the
            vector holds the mask's facts, so this would be a bug of the tree).
    """
    vectors = [tree.information_states(seat) for seat in (0, 1)]
    count = len(vectors[0])
    _, _, inverse = distinct_rows(np.concatenate(vectors))
    del vectors
    rows = int(inverse.max()) + 1 if len(inverse) else 0
    infoset_of_row = []  # per seat: each state's row, and each row's state (-1: none)
    for shared in (inverse[:count], inverse[count:]):
        found = np.full(rows, -1, np.int64)
        found[shared] = np.arange(len(shared))
        infoset_of_row.append((shared, found))
    pairs = []
    for seat in (0, 1):
        other = 1 - seat
        shared = infoset_of_row[seat][0]
        partner = infoset_of_row[other][1][shared]  # the other seat's information state of the same vector
        start, other_start = tree.action_start[seat], tree.action_start[other]
        counts = np.diff(start)
        owner = np.repeat(np.arange(len(counts)), counts)
        offset = np.arange(len(tree.actions[seat])) - start[owner]
        mate = partner[owner]
        pair = np.where(mate >= 0, other_start[np.maximum(mate, 0)] + offset, -1)
        matched = mate >= 0
        if np.any(np.diff(other_start)[mate[matched]] != counts[owner[matched]]) or np.any(
            tree.actions[other][pair[matched]] != tree.actions[seat][matched]
        ):
            raise ValueError("information states of one vector must have the same legal actions")
        pairs.append(pair.astype(np.int64))
    return pairs[0], pairs[1]


def symmetric_strategies(
    tree: GameTree, strategies: tuple[np.ndarray, np.ndarray], mirror: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """One policy of both seats from the seats' ``strategies``: at each pair of mirrored
    information states (``mirror``: :func:`mirrored_entries`), the seats' distributions weighted
    by how likely each seat's own actions make its state (its own reach: the behaviour of the
    mean of the two realisation plans); elsewhere each seat's own.

    A best response's value is convex in the plan it answers, so the result is exploited at most
    as much as ``strategies``.
    """
    own = []
    for seat in (0, 1):
        # The other seat's actions all at probability 1: a node's reach is chance's share times
        # this seat's own reach, the same at every node of one information state.
        played = tuple(strategies[s] if s == seat else np.ones(len(tree.actions[s])) for s in (0, 1))
        reach = reach_probabilities(tree, (played[0], played[1]))
        acting = tree.player == seat
        of_state = np.zeros(tree.num_infosets(seat))
        of_state[tree.infoset[acting]] = reach[acting]
        owner = np.repeat(np.arange(tree.num_infosets(seat)), np.diff(tree.action_start[seat]))
        own.append(of_state[owner])
    pair = mirror[0]
    matched = np.flatnonzero(pair >= 0)
    mates = pair[matched]
    weight0, weight1 = own[0][matched], own[1][mates]
    total = weight0 + weight1
    mixed = np.where(
        total > 0,
        (weight0 * strategies[0][matched] + weight1 * strategies[1][mates]) / np.where(total > 0, total, 1.0),
        (strategies[0][matched] + strategies[1][mates]) / 2,
    )
    first, second = strategies[0].copy(), strategies[1].copy()
    first[matched] = mixed
    second[mates] = mixed
    return first, second


def average_strategy(tree: GameTree, seat: int, strategy_sums: np.ndarray) -> np.ndarray:
    """The normalised average strategy of ``seat`` (uniform where an information state was never reached)."""
    strategy = np.zeros(len(strategy_sums))
    regret_matching(strategy_sums, np.zeros(0), tree.action_start[seat], strategy)  # the sums are non-negative
    return strategy


def iterate(tree: GameTree, state: SolverState, iterations: int) -> None:
    """Run ``iterations`` iterations of ``state.rule`` on ``state`` in place.

    Updates alternate: seat 0's, then seat 1's against seat 0's updated strategy. Each seat's
    update is one pass over the tree's sequence form (:func:`_half_iteration`: the strategy played
    enters the average, the instantaneous counterfactual regrets are summed per entry), then the
    rule's update of the cumulative regrets (:func:`cfr_plus_update`, :func:`pcfr_plus_update`,
    :func:`dcfr_update`) and regret matching (:func:`regret_matching`) for the next strategy.
    """
    state.check_fits(tree)
    rule = state.rule
    form = tree.sequence_form
    if not state._scratch:
        largest = max(len(tree.actions[0]), len(tree.actions[1])) + 1
        state._scratch = (np.zeros(largest), np.zeros(largest), np.zeros(largest))
    plan, values, scratch = state._scratch
    if state._played is not None and state._played[0] == state.iteration:
        strategies = state._played[1]
    else:
        strategies = [current_strategy(tree, seat, state.regrets[seat], state.predictions[seat]) for seat in (0, 1)]
    for _ in range(iterations):
        state.iteration += 1
        weight = rule.averaging_weight(state.iteration)
        for seat in (0, 1):
            other = 1 - seat
            regrets, instant = state.regrets[seat], scratch[: len(state.regrets[seat])]
            _half_iteration(
                form.first, form.second, form.payoff, seat, tree.action_start[seat], form.parent[seat],
                strategies[seat], tree.action_start[other], form.parent[other], strategies[other], instant,
                state.strategy_sums[seat], weight, plan, values,
            )
            if rule.algorithm == "cfr_plus":
                cfr_plus_update(regrets, instant)
            elif rule.algorithm == "pcfr_plus":
                pcfr_plus_update(regrets, instant, state.predictions[seat])
            else:
                dcfr_update(regrets, instant, float(state.iteration), rule.alpha, rule.beta)
            regret_matching(regrets, state.predictions[seat], tree.action_start[seat], strategies[seat])
    state._played = (state.iteration, strategies)


def warm_up(tree: GameTree, rule: Rule | None = None) -> None:
    """Compile the solver's functions for ``tree``'s arrays (or load them from numba's cache) and
    derive the tree's sequence form, by one iteration on a throwaway state, so that a clock started
    after it counts iterations only: the first call's compile takes about a second, the sequence
    form of ``mini`` some seconds, far more than an iteration."""
    iterate(tree, SolverState.fresh(tree, rule), 1)


# The update rules, one entry (an information state's action) at a time; ``instant`` holds the
# instantaneous counterfactual regrets of the iteration, summed over the information state's
# histories. Written on flat arrays so that any solver that sums those regrets can call them.


@njit(cache=True)
def cfr_plus_update(regrets: np.ndarray, instant: np.ndarray) -> None:
    """CFR+ (regret matching+, Tammelin 2014): ``R <- max(R + r, 0)``."""
    for j in range(regrets.shape[0]):
        regrets[j] = max(regrets[j] + instant[j], 0.0)


@njit(cache=True)
def pcfr_plus_update(regrets: np.ndarray, instant: np.ndarray, prediction: np.ndarray) -> None:
    """Predictive CFR+ (Farina, Kroer and Sandholm 2021): ``R <- max(R + r, 0)``, and the
    prediction of the next instantaneous regrets is the last one, ``m <- r``; the next strategy
    is regret matching on ``max(R + m, 0)`` (:func:`regret_matching`)."""
    for j in range(regrets.shape[0]):
        regrets[j] = max(regrets[j] + instant[j], 0.0)
        prediction[j] = instant[j]


@njit(cache=True)
def dcfr_update(regrets: np.ndarray, instant: np.ndarray, t: float, alpha: float, beta: float) -> None:
    """Discounted CFR (Brown and Sandholm 2019) at iteration ``t``: ``R <- R + r``, then a
    positive ``R`` times ``t**alpha / (t**alpha + 1)`` and a negative one times
    ``t**beta / (t**beta + 1)``."""
    positive = t**alpha / (t**alpha + 1.0)
    negative = t**beta / (t**beta + 1.0)
    for j in range(regrets.shape[0]):
        total = regrets[j] + instant[j]
        regrets[j] = total * (positive if total >= 0 else negative)


@njit(cache=True)
def regret_matching(regrets: np.ndarray, prediction: np.ndarray, start: np.ndarray, out: np.ndarray) -> None:
    """The next strategy: at each information state (``start``: its first entry, and one past
    the last), the actions in proportion to ``max(R + m, 0)`` (``m``: ``prediction``, or zero
    where it is empty), uniformly where none is positive."""
    predictive = prediction.shape[0] > 0
    for index in range(start.shape[0] - 1):
        first, stop = start[index], start[index + 1]
        total = 0.0
        for j in range(first, stop):
            weight = regrets[j] + prediction[j] if predictive else regrets[j]
            out[j] = weight if weight > 0 else 0.0
            total += out[j]
        for j in range(first, stop):
            out[j] = out[j] / total if total > 0 else 1.0 / (stop - first)


@njit(cache=True)
def _realisation_plan(start: np.ndarray, parent: np.ndarray, strategy: np.ndarray, plan: np.ndarray) -> None:
    """``plan[1 + j]``: the product of a seat's action probabilities along its sequence ending in
    entry ``j``; ``plan[0]``, the empty sequence, is 1. Information states in their order: each
    one's parent sequence is set before it (:class:`~draw_env.exact.game_tree.SequenceForm`)."""
    plan[0] = 1.0
    for index in range(start.shape[0] - 1):
        above = plan[parent[index]]
        for j in range(start[index], start[index + 1]):
            plan[j + 1] = above * strategy[j]


@njit(cache=True)
def _half_iteration(
    first: np.ndarray, second: np.ndarray, payoff: np.ndarray, seat: int, start: np.ndarray, parent: np.ndarray,
    strategy: np.ndarray, other_start: np.ndarray, other_parent: np.ndarray, other_strategy: np.ndarray,
    instant: np.ndarray, strategy_sums: np.ndarray, weight: float, plan: np.ndarray, values: np.ndarray,
) -> None:
    """One seat's update on the sequence form (:class:`~draw_env.exact.game_tree.SequenceForm`):
    the instantaneous counterfactual regrets of ``seat`` into ``instant``, and its strategy into
    ``strategy_sums`` weighted by ``weight`` and its own reach.

    The seat's counterfactual value of each of its sequences (into ``values``, 1 + entry) is the
    payoff of the hands ending there, times the other seat's realisation plan (chance is in the
    payoff), plus the values of the information states that follow it; an information state's
    value is its actions' values weighted by the strategy, and the regret of an action its value
    less the state's. ``plan`` is scratch of one more than the larger seat's entries.
    """
    _realisation_plan(other_start, other_parent, other_strategy, plan)
    entries = start[-1]
    values[: entries + 1] = 0.0
    if seat == 0:  # the payoff is seat 0's points, seat 1's the opposite
        for k in range(payoff.shape[0]):
            values[first[k]] += payoff[k] * plan[second[k]]
    else:
        for k in range(payoff.shape[0]):
            values[second[k]] -= payoff[k] * plan[first[k]]
    # Information states from the last: those following a sequence add to its value before it is read.
    for index in range(start.shape[0] - 2, -1, -1):
        total = 0.0
        for j in range(start[index], start[index + 1]):
            total += strategy[j] * values[j + 1]
        for j in range(start[index], start[index + 1]):
            instant[j] = values[j + 1] - total
        values[parent[index]] += total
    _realisation_plan(start, parent, strategy, plan)
    for index in range(start.shape[0] - 1):
        own = plan[parent[index]]
        for j in range(start[index], start[index + 1]):
            strategy_sums[j] += weight * own * strategy[j]


def information_table(tree: GameTree, strategies: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The strategies as a table from information states to action probabilities, for play on an
    environment of ``obs_type="information_state"``: one row per distinct vector of either seat,
    the strategy of its first information state (seat 0's before seat 1's).

    Where the seats' information states of one vector have the same strategy
    (:func:`symmetric_strategies`), the table plays exactly ``strategies``.

    Returns:
        ``(vectors, probabilities)``: uint8 ``(K, L)`` distinct rows, float64 ``(K, 2T + 2)``.
    """
    width = tree.game.num_actions
    vectors, dense = [], []
    for seat in (0, 1):
        count = tree.num_infosets(seat)
        rows = np.repeat(np.arange(count), np.diff(tree.action_start[seat]))
        table = np.zeros((count, width))
        table[rows, tree.actions[seat]] = strategies[seat]
        dense.append(table)
        vectors.append(tree.information_states(seat))
    distinct, first, _ = distinct_rows(np.concatenate(vectors))
    return distinct, np.concatenate(dense)[first]


def observation_table(tree: GameTree, strategies: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The strategies as a table from observations to action probabilities, for play on the
    environment, where an agent sees observations rather than information states.

    An observation forgets some of the history (when the opponent drew, at which end a tile that
    fits both went), so several information states (of either seat) can share one. Its row is
    their strategies averaged, each weighted by how often the hand reaches it when both seats play
    ``strategies`` (the plain mean where none is reached): the play of the table is then the play
    of ``strategies`` wherever the information states sharing an observation agree.

    Returns:
        ``(observations, probabilities)``: uint8 ``(K, L)`` distinct rows, float64 ``(K, 2T + 2)``.
    """
    reach = reach_probabilities(tree, strategies)
    width = tree.game.num_actions
    observations, dense, weights = [], [], []
    for seat in (0, 1):
        count = tree.num_infosets(seat)
        acting = tree.player == seat
        weights.append(np.bincount(tree.infoset[acting], weights=reach[acting], minlength=count))
        rows = np.repeat(np.arange(count), np.diff(tree.action_start[seat]))
        table = np.zeros((count, width), np.float32)
        table[rows, tree.actions[seat]] = strategies[seat]
        dense.append(table)
        observations.append(tree.observations[seat])
    merged = np.concatenate(observations)
    distinct, _, inverse = distinct_rows(merged)
    weight = np.concatenate(weights)
    table = np.concatenate(dense)
    totals = np.bincount(inverse, weights=weight, minlength=len(distinct))
    counts = np.bincount(inverse, minlength=len(distinct))
    unreached = totals <= 0
    probabilities = np.zeros((len(distinct), width))
    for action in range(width):
        column = table[:, action].astype(np.float64)
        weighted = np.bincount(inverse, weights=column * weight, minlength=len(distinct))
        plain = np.bincount(inverse, weights=column, minlength=len(distinct))
        probabilities[:, action] = np.where(unreached, plain / counts, weighted / np.where(unreached, 1.0, totals))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    return distinct, probabilities


#: Per seat, the mirrored entries of the other seat (:func:`mirrored_entries`) where the solution is
#: played from a table of information states, else ``None``.
Mirror = tuple[np.ndarray, np.ndarray] | None


def solution(tree: GameTree, state: SolverState, mirror: Mirror) -> tuple[np.ndarray, np.ndarray]:
    """The solution so far: the seats' average strategies, mixed into one policy of both seats
    (:func:`symmetric_strategies`) where it is played from a table of information states."""
    averages = average_strategy(tree, 0, state.strategy_sums[0]), average_strategy(tree, 1, state.strategy_sums[1])
    return averages if mirror is None else symmetric_strategies(tree, averages, mirror)


def solution_table(
    tree: GameTree, strategies: tuple[np.ndarray, np.ndarray], mirror: Mirror
) -> tuple[np.ndarray, np.ndarray]:
    """``strategies`` (a :func:`solution`) as the table that plays it: keyed by information states
    where ``mirror`` is given (:func:`information_table`), else by observations
    (:func:`observation_table`)."""
    return (observation_table if mirror is None else information_table)(tree, strategies)
