"""The solver's iteration on the tree's sequence form against the node passes it replaced: the same
instantaneous regrets and strategy sums, and the sequence form's own checks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from numba import njit

from draw_env.exact import game_tree
from draw_env.rules import DrawGame
from train.cfr.solver import (
    Rule,
    SolverState,
    _half_iteration,
    cfr_plus_update,
    current_strategy,
    dcfr_update,
    iterate,
    pcfr_plus_update,
    regret_matching,
)

MICRO = DrawGame(2, max_pip=2, hand_size=1, protected=2)
SMALL = DrawGame(2, max_pip=2, hand_size=2, protected=1)
RULES = [Rule("cfr_plus"), Rule("pcfr_plus"), Rule("dcfr"), Rule("dcfr", alpha=2.0, beta=0.0, gamma=3.0)]


@pytest.fixture(scope="module", params=[MICRO, SMALL], ids=["micro", "small"])
def tree(request: pytest.FixtureRequest) -> game_tree.GameTree:
    return game_tree.build_tree(request.param)


@njit(cache=True)
def _node_passes(
    player: np.ndarray, infoset: np.ndarray, first_child: np.ndarray, num_children: np.ndarray, utility: np.ndarray,
    num_deals: int, seat: int, start0: np.ndarray, start1: np.ndarray, strategy0: np.ndarray, strategy1: np.ndarray,
    instant: np.ndarray, strategy_sums: np.ndarray, weight: float,
) -> None:
    """The reference: one seat's half-iteration as two passes over every node. Forward, each node's
    reach by the seat's own actions and by chance and the other seat's (the strategy enters
    ``strategy_sums`` once per information state, at its own reach); backward, each node's value
    and, at the seat's nodes, the other's reach times each action's value less the node's."""
    nodes = player.shape[0]
    own, other, value = np.zeros(nodes), np.zeros(nodes), np.zeros(nodes)
    seen = np.zeros(start0.shape[0] if seat == 0 else start1.shape[0], np.bool_)
    instant[:] = 0.0
    own[:num_deals] = 1.0
    other[:num_deals] = 1.0 / num_deals
    for node in range(nodes):
        acting = player[node]
        if acting < 0:
            continue
        first = first_child[node]
        start = start0[infoset[node]] if acting == 0 else start1[infoset[node]]
        strategy = strategy0 if acting == 0 else strategy1
        if acting == seat and not seen[infoset[node]]:
            seen[infoset[node]] = True
            for k in range(num_children[node]):
                strategy_sums[start + k] += weight * own[node] * strategy[start + k]
        for k in range(num_children[node]):
            own[first + k] = own[node] * (strategy[start + k] if acting == seat else 1.0)
            other[first + k] = other[node] * (1.0 if acting == seat else strategy[start + k])
    sign = 1.0 if seat == 0 else -1.0
    for node in range(nodes - 1, -1, -1):
        acting = player[node]
        if acting < 0:
            value[node] = utility[node]
            continue
        first = first_child[node]
        start = start0[infoset[node]] if acting == 0 else start1[infoset[node]]
        strategy = strategy0 if acting == 0 else strategy1
        total = 0.0
        for k in range(num_children[node]):
            total += strategy[start + k] * value[first + k]
        value[node] = total
        if acting == seat:
            for k in range(num_children[node]):
                instant[start + k] += other[node] * sign * (value[first + k] - total)


def _update(rule: Rule, state: SolverState, seat: int, instant: np.ndarray) -> None:
    if rule.algorithm == "cfr_plus":
        cfr_plus_update(state.regrets[seat], instant)
    elif rule.algorithm == "pcfr_plus":
        pcfr_plus_update(state.regrets[seat], instant, state.predictions[seat])
    else:
        dcfr_update(state.regrets[seat], instant, float(state.iteration), rule.alpha, rule.beta)


def _both(tree: game_tree.GameTree, state: SolverState, seat: int, strategies: list[np.ndarray],
          weight: float) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``seat``'s instantaneous regrets and strategy-sum increments by the solver's sequence form and
    by the reference's node passes, from the same strategies."""
    other = 1 - seat
    form = tree.sequence_form
    size = len(tree.actions[seat])
    largest = max(len(tree.actions[0]), len(tree.actions[1])) + 1
    instant, sums = np.zeros(size), np.zeros(size)
    _half_iteration(form.first, form.second, form.payoff, seat, tree.action_start[seat], form.parent[seat],
                    strategies[seat], tree.action_start[other], form.parent[other], strategies[other], instant, sums,
                    weight, np.zeros(largest), np.zeros(largest))
    expected, expected_sums = np.zeros(size), np.zeros(size)
    _node_passes(tree.player, tree.infoset, tree.first_child, tree.num_children, tree.utility, tree.num_deals, seat,
                 tree.action_start[0], tree.action_start[1], strategies[0], strategies[1], expected, expected_sums,
                 weight)
    return (instant, expected), (sums, expected_sums)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: f"{rule.algorithm}-{rule.alpha}-{rule.beta}-{rule.gamma}")
def test_each_half_iteration_computes_what_the_node_passes_computed(tree: game_tree.GameTree, rule: Rule) -> None:
    """Along 12 iterations of the rule, each seat's regrets and strategy sums from the sequence form
    equal the node passes' from the same strategies (their sums in another order: to rounding)."""
    state = SolverState.fresh(tree, rule)
    strategies = [current_strategy(tree, seat, state.regrets[seat]) for seat in (0, 1)]
    for _ in range(12):
        state.iteration += 1
        for seat in (0, 1):
            (instant, expected), (sums, expected_sums) = _both(
                tree, state, seat, strategies, rule.averaging_weight(state.iteration))
            np.testing.assert_allclose(instant, expected, rtol=1e-10, atol=1e-14)
            np.testing.assert_allclose(sums, expected_sums, rtol=1e-12, atol=0)
            state.strategy_sums[seat] += sums
            _update(rule, state, seat, instant)
            regret_matching(state.regrets[seat], state.predictions[seat], tree.action_start[seat], strategies[seat])
    assert all(np.any(instant != 0) for instant in (instant, expected))  # the comparison saw regrets


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: f"{rule.algorithm}-{rule.alpha}-{rule.beta}-{rule.gamma}")
def test_iterate_equals_the_node_passes_on_micro(rule: Rule) -> None:
    """Whole iterations: the solver's tables after 6 iterations (in two calls) are the node passes'
    (on micro no action's regret is decided by rounding, so the runs never part)."""
    tree = game_tree.build_tree(MICRO)
    state = SolverState.fresh(tree, rule)
    iterate(tree, state, 2)
    iterate(tree, state, 4)
    reference = SolverState.fresh(tree, rule)
    strategies = [current_strategy(tree, seat, reference.regrets[seat]) for seat in (0, 1)]
    for _ in range(6):
        reference.iteration += 1
        for seat in (0, 1):
            instant = np.zeros(len(tree.actions[seat]))
            _node_passes(tree.player, tree.infoset, tree.first_child, tree.num_children, tree.utility, tree.num_deals,
                         seat, tree.action_start[0], tree.action_start[1], strategies[0], strategies[1], instant,
                         reference.strategy_sums[seat], rule.averaging_weight(reference.iteration))
            _update(rule, reference, seat, instant)
            regret_matching(reference.regrets[seat], reference.predictions[seat], tree.action_start[seat],
                            strategies[seat])
    for seat in (0, 1):
        np.testing.assert_allclose(state.regrets[seat], reference.regrets[seat], rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(state.strategy_sums[seat], reference.strategy_sums[seat], rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(state.predictions[seat], reference.predictions[seat], rtol=1e-9, atol=1e-13)


def test_the_sequence_form_values_the_game(tree: game_tree.GameTree) -> None:
    """Seat 0's expected points from the pairs of last sequences and the realisation plans are the
    tree's, for random strategies; each information state follows a sequence of an earlier one."""
    rng = np.random.default_rng(0)
    strategies = [current_strategy(tree, seat, rng.random(len(tree.actions[seat])) - 0.3) for seat in (0, 1)]
    form = tree.sequence_form
    plans = []
    for seat in (0, 1):
        start, parent = tree.action_start[seat], form.parent[seat]
        owner = np.searchsorted(start, np.maximum(parent - 1, 0), side="right") - 1
        assert np.all((parent == 0) | (owner < np.arange(len(parent))))
        plan = np.ones(len(tree.actions[seat]) + 1)
        for index in range(tree.num_infosets(seat)):
            plan[start[index] + 1:start[index + 1] + 1] = plan[parent[index]] * strategies[seat][start[index]:start[index + 1]]
        plans.append(plan)
    reach = game_tree.reach_probabilities(tree, (strategies[0], strategies[1]))
    ends = tree.player < 0
    expected = float(np.dot(reach[ends], tree.utility[ends]))
    assert float(np.sum(form.payoff * plans[0][form.first] * plans[1][form.second])) == pytest.approx(expected, abs=1e-12)
    keys = form.first.astype(np.int64) * (len(tree.actions[1]) + 1) + form.second
    assert np.all(np.diff(keys) > 0)  # each pair once, in order


def test_a_tree_without_perfect_recall_or_out_of_order_is_refused() -> None:
    tree = game_tree.build_tree(MICRO)
    # Two nodes of seat 0 after different sequences of its own, put in one information state.
    nodes = np.flatnonzero(tree.player == 0)
    follows = tree.sequence_form.parent[0][tree.infoset[nodes]]
    deep, shallow = nodes[follows > 0][0], nodes[follows == 0][0]
    infoset = tree.infoset.copy()
    infoset[deep] = infoset[shallow]
    with pytest.raises(ValueError, match="perfect recall"):
        game_tree.sequence_form(dataclasses.replace(tree, infoset=infoset))
    # Seat 0's information states numbered backwards: the later ones first.
    count = tree.num_infosets(0)
    reversed_start = np.concatenate([[0], np.cumsum(np.diff(tree.action_start[0])[::-1])])
    infoset = np.where(tree.player == 0, count - 1 - tree.infoset, tree.infoset).astype(np.int32)
    backwards = dataclasses.replace(tree, infoset=infoset, action_start=(reversed_start, tree.action_start[1]))
    with pytest.raises(ValueError, match="numbered after"):
        game_tree.sequence_form(backwards)
