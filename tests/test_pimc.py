"""The PIMC agent (``agents.make("pimc")``): its solver against a plain minimax over the rules,
its move generation against the rules, legality, seeding and budgets.

The reference here is written plainly over :mod:`draw_env.rules`: paranoid minimax (the seat to
act at the root maximises its zero-sum hand points, every other seat minimises them), the legal
placements searched, the draw (or the pass) only when no tile fits, depth counted in nodes with two
or more actions, and at the horizon a playout in which every seat plays as the ``heaviest``
agent. The compiled solver must give every root action the same
value: exactly to the end of small endgames, and depth-limited earlier in the hand.
"""

from __future__ import annotations

import math
import pickle
import random
import time

import numpy as np
import pytest

import agents
from agents.base import observe
from agents.baselines import heaviest_placement, placements_or_forced
from agents.ismcts import REWARD_SCALE
from agents.ismcts_compiled import state_from_view
from agents.pimc import UNLIMITED, PIMCAgent, Table, alphabeta, search_moves, solve_state, tiles_left
from draw_env import engine as E
from draw_env.observation import view_from_observation
from draw_env.rules import DRAW, NUM_ACTIONS, PASS, DrawGame, DrawState
from draw_env.tiles import PIPS
from tests.positions import random_positions
from tests.test_ismcts import block_position, strand_position


def engine_state(state: DrawState) -> np.ndarray:
    """The compiled engine's state of the rules ``state`` (hand in play), every hidden tile included."""
    array, _counts = state_from_view(state.view(state.current))
    hands = np.zeros(E.SEATS, np.int64)
    hands[: state.num_players] = state.hands
    E.redeal(array, hands, np.array(state.boneyard, np.int64), len(state.boneyard))
    return array


class Minimax:
    """Paranoid minimax over the rules, written plainly; counts the kinds of hand ends it scores."""

    def __init__(self, searcher: int) -> None:
        self.searcher = searcher
        self.ends = {"domino": 0, "blocked": 0}
        self.draws = 0

    def score(self, state: DrawState) -> float:
        assert state.result is not None
        self.ends[state.result.kind] += 1
        return state.result.zero_sum[self.searcher] / REWARD_SCALE

    def playout(self, state: DrawState) -> float:
        """Every seat plays as ``heaviest`` to the end of the hand."""
        state = state.clone()
        while state.result is None:
            choices = placements_or_forced(state.legal_actions())
            state.apply_action(choices[0] if choices[0] >= DRAW else heaviest_placement(choices))
        return self.score(state)

    def value(self, state: DrawState, depth: int | None) -> float:
        if state.result is not None:
            return self.score(state)
        actions = placements_or_forced(state.legal_actions())
        if depth == 0 and len(actions) > 1:
            return self.playout(state)
        values = list(self.root(state, depth).values())
        return max(values) if state.current == self.searcher else min(values)

    def root(self, state: DrawState, depth: int | None) -> dict[int, float]:
        """Each searched action's value: the legal placements, the draw or the pass only when no tile fits."""
        actions = placements_or_forced(state.legal_actions())
        below = depth - 1 if depth is not None and len(actions) > 1 else depth  # forced moves are free
        values = {}
        for action in actions:
            self.draws += action == DRAW
            child = state.clone()
            child.apply_action(action)
            values[action] = self.value(child, below)
        return values


def endgames(num_players: int, most_tiles: int, count: int, seed: int) -> list[DrawState]:
    """Decision points of random hands with at most ``most_tiles`` tiles left to place or draw."""
    found = []
    for state in random_positions(num_players, hands=400, seed=seed, min_legal=2):
        if tiles_left(engine_state(state)) <= most_tiles:
            found.append(state)
            if len(found) == count:
                break
    return found


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_exact_solves_of_small_endgames_agree_with_a_plain_minimax_over_the_rules(num_players: int) -> None:
    states = endgames(num_players, most_tiles=7, count=40, seed=60 + num_players)
    assert len(states) == 40
    ends = {"domino": 0, "blocked": 0}
    table = Table()  # one table for all: entries of earlier positions must never leak into later ones
    draws = 0
    for state in states:
        reference = Minimax(state.current)
        expected = reference.root(state, None)
        solved = solve_state(engine_state(state), None, table)
        assert solved == pytest.approx(expected, abs=1e-12), state
        for kind, seen in reference.ends.items():
            ends[kind] += seen
        draws += reference.draws
    # The endgames reach both kinds of hand end; with two players (the largest boneyard) some lines still
    # draw. The depth-limited test below draws with every number of players.
    assert ends["domino"] > 0 and ends["blocked"] > 0 and (draws > 0 or num_players > 2), (ends, draws)


@pytest.mark.parametrize(("num_players", "depth"), [(2, 1), (2, 2), (2, 4), (3, 3), (4, 3)])
def test_depth_limited_solves_agree_with_a_plain_depth_limited_minimax(num_players: int, depth: int) -> None:
    states = random_positions(num_players, hands=12, seed=70 + depth, min_legal=2)[::5][:30]
    assert len(states) == 30
    table = Table()
    draws = 0
    for state in states:
        reference = Minimax(state.current)
        expected = reference.root(state, depth)
        assert solve_state(engine_state(state), depth, table) == pytest.approx(expected, abs=1e-12), state
        draws += reference.draws
    assert draws > 0


@pytest.mark.parametrize(("num_players", "depth"), [(2, UNLIMITED), (3, UNLIMITED), (2, 3), (4, 3)])
def test_searches_in_any_window_bound_the_value_while_sharing_one_table(num_players: int, depth: int) -> None:
    """Fail-soft alpha-beta: a value at or below alpha is an upper bound of the true value, one at or above
    beta a lower bound, one in between the value itself. Many windows share one table and one stamp, so
    entries stored as bounds in one window are read in the others."""
    rng = random.Random(num_players)
    if depth == UNLIMITED:
        states = endgames(num_players, most_tiles=10, count=12, seed=100 + num_players)
    else:
        states = random_positions(num_players, hands=4, seed=100 + num_players, min_legal=2)[::4][:12]
    assert len(states) == 12
    outcomes = {"upper": 0, "lower": 0, "exact": 0}
    for state in states:
        world = engine_state(state)
        fresh = Table()
        truth, _nodes = alphabeta(world, state.current, depth, -math.inf, math.inf, 1, fresh.entries, fresh.values)
        shared = Table()
        for _ in range(30):
            # Windows around the value, a null window now and then: points / REWARD_SCALE differ by >= 1/120.
            alpha = truth + rng.uniform(-0.4, 0.4)
            beta = alpha + (1e-6 if rng.random() < 0.3 else rng.uniform(0.0, 0.6))
            value, _nodes = alphabeta(world, state.current, depth, alpha, beta, 1, shared.entries, shared.values)
            if value <= alpha:
                assert truth <= value + 1e-12, (state, alpha, beta, value, truth)
                outcomes["upper"] += 1
            elif value >= beta:
                assert truth >= value - 1e-12, (state, alpha, beta, value, truth)
                outcomes["lower"] += 1
            else:
                assert value == pytest.approx(truth, abs=1e-12), (state, alpha, beta, value, truth)
                outcomes["exact"] += 1
        full, _nodes = alphabeta(world, state.current, depth, -math.inf, math.inf, 1, shared.entries, shared.values)
        assert full == pytest.approx(truth, abs=1e-12)
    assert min(outcomes.values()) > 30, outcomes


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_move_generation_agrees_with_the_rules_and_orders_heaviest_first(num_players: int) -> None:
    """The search's moves are the rules' legal actions, less the draw where a tile fits."""
    rng = random.Random(num_players)
    out = np.empty(NUM_ACTIONS, np.int64)
    states = random_positions(num_players, hands=30, seed=80 + num_players)
    kinds = {"placements": 0, "forced draw": 0, "pass": 0}
    for state in states:
        legal = state.legal_actions()
        placements = [action for action in legal if action < DRAW]
        expected = placements or legal
        kinds["placements" if placements else "forced draw" if legal == [DRAW] else "pass"] += 1
        first = rng.choice(expected + [-1])
        moves = out[: search_moves(engine_state(state), first, out)].tolist()
        assert sorted(moves) == expected
        if first >= 0:
            assert moves[0] == first
            moves = moves[1:]
        if placements:
            assert moves == sorted(moves, key=lambda move: (-PIPS[move >> 1], move))  # heaviest first, lower id first
    assert len(states) > 500 and min(kinds.values()) >= 5, kinds


def test_a_world_with_one_consistent_deal_gets_the_solvers_values() -> None:
    """When the view admits one deal only (the opponent's voids exclude both protected boneyard tiles), every
    world is the real state: the agent's means are the solver's values of that state, exact near the end."""
    checked = 0
    for state in random_positions(2, hands=300, seed=9, min_legal=2):
        view = state.view(state.current)
        opponent = 1 - state.current
        if len(state.boneyard) != 2 or view.allowed(opponent) != state.hands[opponent]:
            continue
        agent = PIMCAgent(worlds=3, depth=2, exact_tiles=0, seed=checked)
        assert agent.action_values(observe(state, state.current)) == pytest.approx(
            solve_state(engine_state(state), 2), abs=1e-12
        )
        exact = PIMCAgent(worlds=2, exact_tiles=28, seed=checked)
        assert exact.action_values(view) == pytest.approx(solve_state(engine_state(state)), abs=1e-12)
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_plays_legal_actions_in_random_positions(num_players: int) -> None:
    agent = agents.make("pimc", worlds=4, depth=2, seed=num_players)
    states = random_positions(num_players, hands=16, seed=90 + num_players, min_legal=2)[::2]
    for state in states:
        action = agent.act(observe(state, state.current, match=num_players == 3))
        assert type(action) is int and state.is_legal(action), (state, action)
        assert action in placements_or_forced(state.legal_actions())  # it never draws while a tile fits
    assert len(states) >= 100


def test_same_seed_same_values_and_view_or_observation_alike() -> None:
    states = random_positions(3, hands=4, seed=5, min_legal=3)[::6]
    for index, state in enumerate(states):
        observation = observe(state, state.current)
        view = view_from_observation(observation["observation"], 3)
        first = PIMCAgent(worlds=6, seed=index).action_values(observation)
        again = PIMCAgent(worlds=6, seed=index).action_values(view)
        other = PIMCAgent(worlds=6, seed=index + 1000).action_values(observation)
        assert first == again
        assert first != other
        assert sorted(first) == placements_or_forced(state.legal_actions())
    assert len(states) >= 6


def test_a_seeded_agent_replays_its_moves_and_survives_pickling() -> None:
    states = random_positions(2, hands=3, seed=12, min_legal=2)
    observations = [observe(state, state.current) for state in states]
    one, two = PIMCAgent(worlds=4, seed=7), PIMCAgent(worlds=4, seed=7)
    half = len(observations) // 2
    assert [one.act(o) for o in observations[:half]] == [two.act(o) for o in observations[:half]]
    copy = pickle.loads(pickle.dumps(one))
    assert [copy.act(o) for o in observations[half:]] == [one.act(o) for o in observations[half:]]


def test_finds_the_clear_best_move() -> None:
    """The positions where greed strands a tile or blocks a sure domino (see tests/test_ismcts.py)."""
    for state, best in ((strand_position(), {26, 31}), (block_position(), {19})):
        observation = observe(state, state.current)
        for seed in range(3):
            assert agents.make("pimc", seed=seed).act(observation) in best
            assert agents.make("pimc", worlds=2, depth=1, exact_tiles=0, seed=seed).act(observation) in best


def test_a_single_legal_action_is_returned_without_search() -> None:
    state = block_position()
    state.apply_action(17)  # every 2 is on the line: seat 1 can only pass
    agent = agents.make("pimc", worlds=10**6, seed=0)
    started = time.perf_counter()
    assert agent.act(observe(state, state.current)) == PASS
    assert time.perf_counter() - started < 0.5


def test_a_time_budget_stops_between_worlds() -> None:
    state = random_positions(2, hands=1, seed=3, min_legal=3)[0]
    agent = PIMCAgent(worlds=10**6, depth=2, seconds=0.05, seed=0)
    started = time.perf_counter()
    values = agent.action_values(observe(state, state.current))
    assert 0.05 <= time.perf_counter() - started < 2.0  # generous: the machine running the tests may be busy
    assert sorted(values) == placements_or_forced(state.legal_actions())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"worlds": 0}, r"worlds must be an integer in \[1, 1000000000\]"),
        ({"depth": 0}, r"depth must be an integer in \[1, 160\]"),
        ({"exact_tiles": -1}, r"exact_tiles must be an integer in \[0, 28\]"),
        ({"seconds": 0.0}, r"seconds must be a finite number in \(0, 3600.0\]"),
        ({"seed": -1}, "seed must be a non-negative integer or None"),
        ({"budget": 3}, "it takes: worlds, depth, exact_tiles, seconds, seed"),
    ],
)
def test_bad_settings_are_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        agents.make("pimc", **kwargs)


def test_registry_builds_the_agent_and_a_view_must_be_of_the_player_to_act() -> None:
    agent = agents.make("pimc", seed=0)
    assert type(agent) is PIMCAgent and agent.name == "pimc"
    state = DrawGame(2).new_state(random.Random(0))
    with pytest.raises(ValueError, match="player to act"):
        agent.action_values(observe(state, 1 - state.current))
