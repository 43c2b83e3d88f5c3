"""CFR+ over the enumerated game tree of a small 2-player variant, compiled.

Counterfactual regret minimisation (Zinkevich et al. 2007) in its CFR+ form (Tammelin 2014):
regret matching on regrets floored at zero, alternating updates (seat 0, then seat 1 against
seat 0's updated strategy), and the average strategy weighted linearly by the iteration. Its
average strategy converges to a Nash equilibrium of the 2-player zero-sum hand; the exact
exploitability of that average (:func:`arena.exploitability.exploitability_of_tables`, the same
best response ``draw-exploit`` computes) is the measure of how close it is.

Tables are laid out as the tree's ``actions[seat]`` (one entry per legal action of each
information state). One iteration costs two passes over every node per seat.

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

from draw_env.game_tree import GameTree, distinct_rows, reach_probabilities


@dataclass
class SolverState:
    """What CFR+ carries from one iteration to the next (and what a checkpoint saves).

    Attributes:
        iteration: iterations done.
        regrets: per seat, the cumulative regrets (floored at zero).
        strategy_sums: per seat, the linearly weighted sums of the strategies played.
    """

    iteration: int
    regrets: list[np.ndarray]
    strategy_sums: list[np.ndarray]
    # Scratch arrays of one per node, kept to spare the allocation at every iteration.
    _scratch: tuple[np.ndarray, ...] = field(default=(), repr=False)

    @classmethod
    def fresh(cls, tree: GameTree) -> SolverState:
        return cls(0, [np.zeros(len(tree.actions[s])) for s in (0, 1)], [np.zeros(len(tree.actions[s])) for s in (0, 1)])

    def check_fits(self, tree: GameTree) -> None:
        """Raise ``ValueError`` unless the tables have the tree's shapes."""
        for seat in (0, 1):
            size = len(tree.actions[seat])
            for name, table in (("regrets", self.regrets[seat]), ("strategy_sums", self.strategy_sums[seat])):
                if table.shape != (size,):
                    raise ValueError(f"{name}[{seat}] must hold {size} entries for this game, got shape {table.shape}")


def current_strategy(tree: GameTree, seat: int, regrets: np.ndarray) -> np.ndarray:
    """Regret matching: each information state plays its actions in proportion to their
    positive regrets (uniformly when none is positive)."""
    strategy = np.zeros(len(regrets))
    _normalise(np.maximum(regrets, 0.0), tree.action_start[seat], strategy)
    return strategy


def mirrored_entries(tree: GameTree) -> tuple[np.ndarray, np.ndarray]:
    """Per seat, int64 ``(len(tree.actions[seat]),)``: for each entry (an information state's
    action), the other seat's entry of the same information-state vector
    (:meth:`draw_env.game_tree.GameTree.information_states`) and the same action; -1 where the
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
    _normalise(strategy_sums, tree.action_start[seat], strategy)
    return strategy


def iterate(tree: GameTree, state: SolverState, iterations: int) -> None:
    """Run ``iterations`` iterations of CFR+ on ``state`` in place."""
    nodes = tree.num_nodes
    if not state._scratch:
        state._scratch = (np.zeros(nodes), np.zeros(nodes), np.zeros(nodes), np.zeros(0, np.int64), np.zeros(0, np.int64))
        state._scratch = (*state._scratch[:3], np.full(tree.num_infosets(0), -1, np.int64),
                          np.full(tree.num_infosets(1), -1, np.int64))
    own, other, value, stamp0, stamp1 = state._scratch
    strategies = [current_strategy(tree, seat, state.regrets[seat]) for seat in (0, 1)]
    for _ in range(iterations):
        state.iteration += 1
        weight = float(state.iteration)  # CFR+'s linear averaging
        for seat in (0, 1):
            _half_iteration(
                tree.player, tree.infoset, tree.first_child, tree.num_children, tree.utility, tree.num_deals, seat,
                tree.action_start[0], tree.action_start[1], strategies[0], strategies[1], state.regrets[seat],
                state.strategy_sums[seat], weight, own, other, value, stamp0 if seat == 0 else stamp1,
                state.iteration,
            )
            np.maximum(state.regrets[seat], 0.0, out=state.regrets[seat])
            strategies[seat] = current_strategy(tree, seat, state.regrets[seat])


def warm_up(tree: GameTree) -> None:
    """Compile the solver's functions for ``tree``'s arrays (or load them from numba's cache),
    by one iteration on a throwaway state, so that a clock started after it counts iterations only:
    the first call's compile takes about a second, far more than an iteration of a small game."""
    iterate(tree, SolverState.fresh(tree), 1)


@njit(cache=True)
def _normalise(sums: np.ndarray, start: np.ndarray, out: np.ndarray) -> None:
    for index in range(start.shape[0] - 1):
        first, stop = start[index], start[index + 1]
        total = 0.0
        for j in range(first, stop):
            total += sums[j]
        for j in range(first, stop):
            out[j] = sums[j] / total if total > 0 else 1.0 / (stop - first)


@njit(cache=True)
def _half_iteration(
    player: np.ndarray, infoset: np.ndarray, first_child: np.ndarray, num_children: np.ndarray, utility: np.ndarray,
    num_deals: int, seat: int, start0: np.ndarray, start1: np.ndarray, strategy0: np.ndarray, strategy1: np.ndarray,
    regrets: np.ndarray, strategy_sums: np.ndarray, weight: float, own: np.ndarray, other: np.ndarray,
    value: np.ndarray, stamp: np.ndarray, mark: int,
) -> None:
    """One seat's update: reaches forward, values and counterfactual regrets backward."""
    nodes = player.shape[0]
    own[:num_deals] = 1.0
    other[:num_deals] = 1.0 / num_deals  # chance is the other side's reach
    mine_start = start0 if seat == 0 else start1
    mine = strategy0 if seat == 0 else strategy1
    theirs_start = start1 if seat == 0 else start0
    theirs = strategy1 if seat == 0 else strategy0
    for node in range(nodes):
        acting = player[node]
        if acting < 0:
            continue
        first = first_child[node]
        if acting == seat:
            index = infoset[node]
            start = mine_start[index]
            if stamp[index] != mark:  # the seat's own reach is one per information state
                stamp[index] = mark
                for k in range(num_children[node]):
                    strategy_sums[start + k] += weight * own[node] * mine[start + k]
            for k in range(num_children[node]):
                own[first + k] = own[node] * mine[start + k]
                other[first + k] = other[node]
        else:
            start = theirs_start[infoset[node]]
            for k in range(num_children[node]):
                own[first + k] = own[node]
                other[first + k] = other[node] * theirs[start + k]
    sign = 1.0 if seat == 0 else -1.0
    for node in range(nodes - 1, -1, -1):
        acting = player[node]
        if acting < 0:
            value[node] = utility[node]
            continue
        first = first_child[node]
        count = num_children[node]
        if acting == 0:
            start = start0[infoset[node]]
            strategy = strategy0
        else:
            start = start1[infoset[node]]
            strategy = strategy1
        total = 0.0
        for k in range(count):
            total += strategy[start + k] * value[first + k]
        value[node] = total
        if acting == seat:
            reach = other[node]
            if reach > 0:
                for k in range(count):
                    regrets[start + k] += reach * sign * (value[first + k] - total)


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
