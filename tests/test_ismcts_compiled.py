"""The compiled ISMCTS (``agents.make("ismcts")``): legality, determinizations, seeding, budgets,
agreement with the pure-Python search, and the lockstep search with a batched evaluator."""

from __future__ import annotations

import itertools
import time
from collections import Counter

import numpy as np
import pytest

import agents
from agents.base import Observation, observe
from agents.baselines import heaviest_placement, placements_or_forced
from agents.ismcts import MAX_SIMULATIONS, REWARD_SCALE, ISMCTSAgent
from agents.ismcts_compiled import (
    CompiledISMCTSAgent,
    _Tree,
    determinize,
    read_program,
    rollout,
    state_from_observation,
    state_from_view,
)
from draw_env import engine as E
from draw_env import tiles
from draw_env.features import encode_batch, feature_size
from draw_env.observation import OFFSETS, view_from_observation
from draw_env.rules import DRAW, NUM_ACTIONS, DrawGame, DrawState, PlayerView
from draw_env.tiles import ALL_TILES_MASK, HOLDING, NUM_TILES, tile_id
from tests.positions import random_positions
from tests.test_ismcts import block_position, strand_position
from tests.test_pimc import engine_state


def to_act(state: DrawState) -> Observation:
    """The observation of the player to act in ``state``."""
    return observe(state, state.current)


def test_registry_gives_the_compiled_agent_and_keeps_the_python_one() -> None:
    assert type(agents.make("ismcts")) is CompiledISMCTSAgent
    assert type(agents.make("ismcts_python")) is ISMCTSAgent
    with pytest.raises(ValueError, match="simulations"):
        agents.make("ismcts", simulations=0)
    with pytest.raises(ValueError, match="rollout_randomness"):
        agents.make("ismcts", rollout_randomness=1.5)
    with pytest.raises(ValueError, match="seconds"):
        agents.make("ismcts", seconds=float("nan"))


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_plays_legal_actions_in_random_positions(num_players: int) -> None:
    agent = agents.make("ismcts", simulations=30, seed=num_players)
    states = random_positions(num_players, hands=40, seed=20 + num_players, min_legal=2)[:600]
    for state in states:
        action = agent.act(observe(state, state.current, match=num_players == 3))
        assert type(action) is int and state.is_legal(action), (state, action)
    assert len(states) >= 450


def _determinized(state_observation: np.ndarray, num_players: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    base = np.zeros(E.STATE_SIZE, np.int64)
    counts = np.zeros(4, np.int64)
    state_from_observation(state_observation, num_players, base, counts, 6, 2, read_program(tiles.DOUBLE_SIX))
    world = np.zeros(E.STATE_SIZE, np.int64)
    assert determinize(base, counts, 0, np.array([seed, 0], np.int64), world)
    return world, counts


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_determinizations_are_consistent_with_the_view(num_players: int) -> None:
    """The world dealt is one the player cannot tell from the real one: same observation, sizes, voids."""
    states = random_positions(num_players, hands=12, seed=40 + num_players)
    for index, state in enumerate(states):
        player = state.current
        vector = observe(state, player)["observation"]
        world, counts = _determinized(vector, num_players, seed=index)
        seen = np.zeros_like(vector)
        E.write_observation(world, 0, False, seen)
        assert np.array_equal(seen, vector)
        view = state.view(player)
        hands = [int(world[E.S_HANDS + s]) for s in range(num_players)]
        boneyard = world[E.S_BONEYARD + world[E.S_BONE_POS] : E.S_BONEYARD + world[E.S_BONE_END]]
        assert hands[0] == view.hand
        everything = view.line_mask | int(sum(1 << int(t) for t in boneyard))
        for relative in range(1, num_players):
            seat = (player + relative) % num_players
            assert hands[relative].bit_count() == view.hand_counts[seat] == counts[relative]
            assert not hands[relative] & ~view.allowed(seat)  # unseen tiles only, no value it showed it lacks
            everything |= hands[relative]
        assert len(boneyard) == view.boneyard_count
        assert (everything | view.hand) == ALL_TILES_MASK and sum(h.bit_count() for h in hands) + len(boneyard) + \
            view.line_mask.bit_count() == NUM_TILES
    assert len(states) > 100


def test_determinizations_are_uniform_over_the_consistent_deals() -> None:
    """Two unseen opponent tiles out of five, one value shown lacking: the 6 allowed pairs equally often."""
    hand = [tile_id(t) for t in ("[0|0]", "[1|1]")]
    unseen = [tile_id(t) for t in ("[2|3]", "[2|4]", "[3|4]", "[3|5]", "[2|6]")]
    line = [t for t in range(NUM_TILES) if t not in hand and t not in unseen]
    view = PlayerView(
        game=DrawGame(2), player=0, hand=sum(1 << t for t in hand), line=tuple((t, 0, 0) for t in line),
        line_mask=sum(1 << t for t in line), ends=(0, 1), hand_counts=(2, 2), boneyard_count=3,
        voids=(0, 1 << 6), current=0, passes_in_row=0, scores=(0, 0), opener=0,
    )
    allowed = [t for t in unseen if not HOLDING[6] >> t & 1]
    assert len(unseen) == 5 and len(allowed) == 4
    base, counts = state_from_view(view)
    words = np.array([7, 0], np.int64)
    world = np.zeros(E.STATE_SIZE, np.int64)
    seen: Counter[int] = Counter()
    for _ in range(6000):
        assert determinize(base, counts, 0, words, world)
        seen[int(world[E.S_HANDS + 1])] += 1
    pairs = {(1 << a) | (1 << b) for a, b in itertools.combinations(allowed, 2)}
    assert set(seen) == pairs
    assert all(abs(count - 1000) < 150 for count in seen.values()), seen


def test_a_tightly_constrained_view_falls_back_to_a_constrained_deal() -> None:
    """Opponent 1 may only hold the six tiles made of 4, 5 and 6 and holds six: one deal in 54,264."""
    view = _constrained_view(hand_counts=(6, 6, 4))
    base, counts = state_from_view(view)
    world = np.zeros(E.STATE_SIZE, np.int64)
    only = sum(1 << tile_id((a, b)) for a in (4, 5, 6) for b in (4, 5, 6) if a <= b)
    words = np.array([3, 0], np.int64)
    for _ in range(50):
        assert determinize(base, counts, 0, words, world)
        assert world[E.S_HANDS + 1] == only
        assert int(world[E.S_HANDS + 2]).bit_count() == 4 and not world[E.S_HANDS + 2] & only
    # One tile too many for the allowed ones: no deal at all, and the agent says so.
    impossible = _constrained_view(hand_counts=(6, 7, 3))
    assert not determinize(*state_from_view(impossible), 0, words, world)
    with pytest.raises(ValueError, match="no deal"):
        CompiledISMCTSAgent(simulations=10, seed=0).action_values(impossible)


def _constrained_view(hand_counts: tuple[int, int, int]) -> PlayerView:
    hand = [tile_id(t) for t in ("[0|0]", "[0|1]", "[0|2]", "[0|3]", "[1|1]", "[1|2]")]
    line = [tile_id(t) for t in ("[2|2]",)]
    return PlayerView(
        game=DrawGame(3), player=0, hand=sum(1 << t for t in hand), line=tuple((t, 1, 0) for t in line),
        line_mask=sum(1 << t for t in line), ends=(2, 2), hand_counts=hand_counts,
        boneyard_count=NUM_TILES - len(hand) - len(line) - sum(hand_counts[1:]),
        voids=(0, 0b0001111, 0), current=0, passes_in_row=0, scores=(0, 0, 0), opener=0,
    )


def test_same_seed_same_search_and_view_or_observation_alike() -> None:
    states = random_positions(3, hands=4, seed=5, min_legal=2)[::5]
    for index, state in enumerate(states):
        observation = observe(state, state.current)
        view = view_from_observation(observation["observation"], 3)
        first = CompiledISMCTSAgent(simulations=300, seed=index).action_values(observation)
        again = CompiledISMCTSAgent(simulations=300, seed=index).action_values(view)
        other = CompiledISMCTSAgent(simulations=300, seed=index + 1000).action_values(observation)
        assert first == again
        assert first != other
        assert sorted(first) == state.legal_actions()
    assert len(states) >= 8


def test_the_budget_is_spent_in_whole_determinizations() -> None:
    state = random_positions(2, hands=1, seed=4, min_legal=3)[0]
    actions = state.legal_actions()
    result = CompiledISMCTSAgent(simulations=50, seed=1).search(observe(state, state.current))
    rounded = -(-50 // len(actions)) * len(actions)
    assert result.simulations == rounded
    assert list(result.actions) == actions and set(result.visits.tolist()) == {rounded // len(actions)}
    # A tree outgrowing its arrays grows them and keeps the search the same.
    small = CompiledISMCTSAgent(simulations=50, seed=1)
    small._tree = _Tree(8)
    assert small.search(observe(state, state.current)).values() == result.values()


def test_a_time_budget_bounds_the_decision_and_simulations_bind_first() -> None:
    observation = to_act(random_positions(4, hands=1, seed=1, min_legal=2)[0])
    agent = CompiledISMCTSAgent(seconds=0.05, seed=0)
    started = time.perf_counter()
    result = agent.search(observation)
    elapsed = time.perf_counter() - started
    assert 0.05 <= elapsed < 1.0  # generous: the machine running the tests may be busy
    assert result.simulations > 0
    both = CompiledISMCTSAgent(simulations=40, seconds=30.0, seed=0)
    assert both.search(observation).simulations < 40 + 58


def test_a_single_legal_action_is_returned_without_search() -> None:
    state = block_position()
    state.apply_action(17)  # every 2 is on the line: seat 1 can only pass
    agent = agents.make("ismcts", simulations=MAX_SIMULATIONS, seed=0)
    started = time.perf_counter()
    assert agent.act(observe(state, state.current)) == 57
    assert time.perf_counter() - started < 0.5


def test_agrees_with_the_python_search_where_the_best_move_is_clear() -> None:
    for state, best in ((strand_position(), {26, 31}), (block_position(), {19})):
        observation = observe(state, state.current)
        for seed in range(3):
            assert agents.make("ismcts_python", seed=seed).act(observation) in best
            assert agents.make("ismcts", simulations=200, seed=seed).act(observation) in best
            assert agents.make("ismcts", seed=seed).act(observation) in best


# ---------------------------------------------------------------------- batched evaluation


class Recorder:
    """An evaluator that records its batches and answers with ``answer(observations, masks)``."""

    def __init__(self, answer) -> None:  # type: ignore[no-untyped-def]
        self.answer = answer
        self.sizes: list[int] = []

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        assert observations.dtype == np.float32 and observations.shape[1:] == (258,)
        assert masks.dtype == np.int8 and masks.shape == (len(observations), 58)
        self.sizes.append(len(observations))
        return self.answer(observations, masks)


def uniform(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.ones((len(observations), 58), np.float32), np.zeros(len(observations), np.float32)


def test_lockstep_with_uniform_priors_and_no_value_is_the_plain_search() -> None:
    states = random_positions(3, hands=3, seed=8, min_legal=2)[::4]
    observations = [observe(state, state.current) for state in states]
    recorder = Recorder(uniform)
    lockstep = CompiledISMCTSAgent(simulations=120, seed=3).action_values_many(
        observations, recorder, value_weight=0.0, prior_weight=0.0
    )
    plain_agent = CompiledISMCTSAgent(simulations=120, seed=3)
    assert lockstep == [plain_agent.action_values(observation) for observation in observations]
    # One call per round, every unfinished decision's leaf in it (one row per seat): batches > 1.
    assert max(recorder.sizes) == 3 * len(observations) and len(recorder.sizes) >= 120
    assert all(size % 3 == 0 for size in recorder.sizes)


def test_each_leaf_row_is_one_seats_observation_and_only_the_acting_seat_has_moves() -> None:
    state = random_positions(4, hands=1, seed=2, min_legal=2)[3]
    root = observe(state, state.current)["observation"]

    def check(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        for group in range(0, len(observations), 4):
            rows, moves = observations[group : group + 4], masks[group : group + 4]
            assert (moves.sum(axis=1) > 0).sum() == 1  # exactly one seat to act
            line = OFFSETS["line"]
            assert np.all(rows[:, line : line + NUM_TILES] == rows[0, line : line + NUM_TILES])
            assert np.all(rows[0, line : line + NUM_TILES] >= root[line : line + NUM_TILES])
        return uniform(observations, masks)

    recorder = Recorder(check)
    CompiledISMCTSAgent(simulations=60, seed=0).action_values_many([observe(state, state.current)] * 3, recorder)
    assert max(recorder.sizes) == 12


def test_an_oracle_value_steers_the_search() -> None:
    """Values that reward laying one tile next turn the search to the move the plain search likes least."""
    state = random_positions(2, hands=1, seed=3, min_legal=4)[2]
    observation = to_act(state)
    agent = CompiledISMCTSAgent(simulations=400, seed=0)
    plain = agent.action_values_many([observation])[0]
    worst = min((a for a in plain if a < 56), key=plain.get)
    order = OFFSETS["placement_order"] + (worst >> 1)
    next_placement = len(state.line) + 1

    def oracle(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        good = np.round(observations[:, order]) == next_placement
        return np.ones((len(observations), 58), np.float32), np.where(good, 1.0, -1.0)

    steered = agent.action_values_many([observation], Recorder(oracle), value_weight=1.0)[0]
    assert max(plain, key=plain.get) >> 1 != worst >> 1
    assert max(steered, key=steered.get) >> 1 == worst >> 1  # either end of that tile
    assert steered[worst] > 0.5 > -0.5 > max(v for a, v in steered.items() if a < 56 and a >> 1 != worst >> 1)


def test_a_tiny_numpy_network_drives_the_search_through_its_priors_and_values() -> None:
    rng = np.random.default_rng(0)
    weights = rng.normal(0, 0.3, (feature_size("extended"), 59)).astype(np.float32)

    def network(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = encode_batch(observations, masks, "extended") @ weights
        logits = np.where(masks > 0, out[:, :58], -np.inf)
        priors = np.exp(logits - logits.max(axis=1, keepdims=True, initial=-1e9, where=masks > 0))
        priors = np.where(masks > 0, priors, 0.0)
        return priors, np.tanh(out[:, 58])

    states = random_positions(2, hands=2, seed=11, min_legal=2)[::3]
    observations = [observe(state, state.current) for state in states]
    recorder = Recorder(network)
    agent = CompiledISMCTSAgent(simulations=150, seed=1)
    guided = agent.action_values_many(observations, recorder, value_weight=0.5, prior_weight=1.0)
    plain = CompiledISMCTSAgent(simulations=150, seed=1).action_values_many(observations)
    assert [sorted(values) for values in guided] == [state.legal_actions() for state in states]
    assert guided != plain
    assert all(abs(v) <= 5 for values in guided for v in values.values())
    assert max(recorder.sizes) == 2 * len(observations) > 2


def test_lockstep_arguments_are_checked() -> None:
    agent = CompiledISMCTSAgent(simulations=10, seed=0)
    observation = to_act(block_position())
    with pytest.raises(ValueError, match="value_weight"):
        agent.action_values_many([observation], uniform, value_weight=2.0)
    with pytest.raises(ValueError, match="prior_weight"):
        agent.action_values_many([observation], uniform, prior_weight=-1.0)
    state = block_position()
    with pytest.raises(ValueError, match="player to act"):
        agent.action_values(observe(state, 1 - state.current))


def test_python_and_compiled_views_of_one_position_match() -> None:
    for state in random_positions(4, hands=3, seed=6)[::7]:
        vector = observe(state, state.current, match=True)["observation"]
        from_view, counts_view = state_from_view(view_from_observation(vector, 4))
        from_obs = np.zeros(E.STATE_SIZE, np.int64)
        counts_obs = np.zeros(4, np.int64)
        state_from_observation(vector, 4, from_obs, counts_obs, 6, 2, read_program(tiles.DOUBLE_SIX))
        assert np.array_equal(from_view, from_obs) and np.array_equal(counts_view, counts_obs)



@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_a_rollout_without_randomness_plays_the_heaviest_agents_moves_over_the_rules(num_players: int) -> None:
    """A rollout (``rollout_randomness`` 0) from a full position is the hand the ``heaviest`` agent's
    choice plays out over :mod:`draw_env.rules`, to the same zero-sum points."""
    states = random_positions(num_players, hands=12, seed=70 + num_players, min_legal=1)[::3]
    assert len(states) >= 40
    words = np.array([1, 1], np.int64)
    legal = np.empty(2 * NUM_ACTIONS, np.int64)
    values = np.zeros(E.SEATS)
    for state in states:
        rollout(engine_state(state), 0, words, legal, values)
        reference = state.clone()
        while reference.result is None:
            choices = placements_or_forced(reference.legal_actions())
            reference.apply_action(choices[0] if choices[0] >= DRAW else heaviest_placement(choices))
        expected = [points / REWARD_SCALE for points in reference.result.zero_sum]
        assert values[:num_players].tolist() == pytest.approx(expected), state
