"""python_draw_dominoes in OpenSpiel: OpenSpiel's own checks, chance, information, and the AEC twin."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import ismcts, mcts
from open_spiel.python.observation import make_observation

import draw_env
from draw_env import openspiel as draw_openspiel
from draw_env.observation import information_layout
from draw_env.rules import DRAW, DrawGame, IllegalActionError

SPECS = [
    {"players": 2},
    {"players": 3},
    {"players": 4},
    {"players": 2, "reward": "points"},
    {"players": 3, "episode": "match"},
    {"players": 2, "episode": "match", "reward": "win_loss"},
]


def _load(params: dict) -> pyspiel.Game:
    return pyspiel.load_game(draw_openspiel.SHORT_NAME, params)


def _play_chance(state: pyspiel.State, rng: np.random.Generator) -> None:
    outcomes, probabilities = zip(*state.chance_outcomes())
    state.apply_action(int(rng.choice(outcomes, p=probabilities)))


@pytest.mark.parametrize("params", SPECS, ids=str)
def test_random_sim_test(params: dict) -> None:
    """OpenSpiel's conformance simulation (clone, history, serialization, masks, returns, bounds)."""
    game = _load(params)
    pyspiel.random_sim_test(game, num_sims=2 if params.get("episode") == "match" else 6, serialize=True, verbose=False)


def test_game_type_and_info_follow_the_parameters() -> None:
    game = _load({"players": 4})
    assert game.get_type().short_name == "python_draw_dominoes"
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert game.num_distinct_actions() == 58 and game.max_chance_outcomes() == 28
    assert game.observation_tensor_shape() == [258]
    assert game.information_state_tensor_shape() == [information_layout(DrawGame(4)).size] == [1161]
    assert game.max_game_length() == draw_openspiel.max_hand_length(4)
    points = _load({"players": 3, "reward": "points"})
    assert points.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    match = _load({"players": 2, "episode": "match"})
    assert match.get_type().reward_model == pyspiel.GameType.RewardModel.REWARDS
    assert match.max_utility() == 100 - 1 + 168


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("python_draw_dominoes(players=5)", "players must be one of 2, 3, 4"),
        ("python_draw_dominoes(episode=set)", "episode must be one of 'hand', 'match'"),
        ("python_draw_dominoes(reward=win_loss)", "needs episode='match'"),
    ],
)
def test_bad_parameters_are_named(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game(text)


def test_chance_nodes_have_the_right_outcomes() -> None:
    """Opener lottery 1/n; deal uniform over the tiles not dealt; each draw uniform over the boneyard."""
    game = _load({"players": 3})
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(seat, pytest.approx(1 / 3)) for seat in range(3)]
    state.apply_action(1)
    dealt: list[int] = []
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        assert [tile for tile, _ in outcomes] == sorted(set(range(28)) - set(dealt))
        assert all(p == pytest.approx(1 / len(outcomes)) for _, p in outcomes)
        dealt.append(outcomes[-1][0])
        state.apply_action(outcomes[-1][0])
    assert state.current_player() == 1 and len(dealt) == 21
    state.apply_action(DRAW)
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert [tile for tile, _ in outcomes] == sorted(state.core.boneyard) == list(range(7))
    assert all(p == pytest.approx(1 / 7) for _, p in outcomes)
    with pytest.raises(ValueError, match="not possible"):
        state.apply_action(27)
    state.apply_action(5)
    assert 5 in state.core.hand_tiles(1) and state.current_player() == 1
    assert state.information_state_string(1).endswith("1:draw[0|5]")
    assert state.information_state_string(0).endswith("1:draw")


def test_an_illegal_action_changes_nothing() -> None:
    game = _load({"players": 2})
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    while state.is_chance_node():
        _play_chance(state, rng)
    before, history = str(state), state.history()
    with pytest.raises(IllegalActionError):
        state.apply_action(57)
    assert str(state) == before and state.history() == history


def test_the_history_replays_the_same_game_and_pickles() -> None:
    game = _load({"players": 3, "episode": "match"})
    rng = np.random.default_rng(1)
    state = game.new_initial_state()
    for _ in range(150):
        if state.is_chance_node():
            _play_chance(state, rng)
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    replay = game.new_initial_state()
    for action in state.history():
        replay.apply_action(action)
    assert str(replay) == str(state)
    assert [replay.information_state_string(p) for p in range(3)] == [state.information_state_string(p) for p in range(3)]
    unpickled = pickle.loads(pickle.dumps(state))
    assert str(unpickled) == str(state) and unpickled.history() == state.history()
    assert str(pickle.loads(pickle.dumps(game))) == str(game)
    clone = state.clone()
    assert clone.history() == state.history() and clone.returns() == state.returns()


@pytest.mark.parametrize("params", [{"players": 2}, {"players": 3}, {"players": 4}, {"players": 2, "episode": "match"}], ids=str)
def test_resample_from_infostate_keeps_the_information_state(params: dict) -> None:
    """OpenSpiel's ResampleInfostateTest, and the resampled state is a whole consistent game."""
    game = _load(params)
    sampler = pyspiel.UniformProbabilitySampler(7, 0.0, 1.0)
    rng = np.random.default_rng(2)
    changed = checked = 0
    for _ in range(3 if params.get("episode") == "match" else 6):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                _play_chance(state, rng)
                continue
            for player in range(game.num_players()):
                other = state.resample_from_infostate(player, sampler)
                assert other.information_state_string(player) == state.information_state_string(player)
                assert other.information_state_tensor(player) == state.information_state_tensor(player)
                assert other.observation_tensor(player) == state.observation_tensor(player)
                assert other.current_player() == state.current_player()
                assert other.returns() == state.returns()
                # Replaying its history rebuilds it: it is a state of the game, not a patched copy.
                replay = game.new_initial_state()
                for action in other.history():
                    replay.apply_action(action)
                assert str(replay) == str(other)
                changed += other.core.hands != state.core.hands
                checked += 1
            state.apply_action(int(rng.choice(state.legal_actions())))
            if checked > 150:
                break
    assert changed > checked // 2  # the hidden tiles really are dealt afresh


def test_the_information_state_ignores_hidden_tiles_and_remembers_own_draws() -> None:
    game = _load({"players": 2})
    state = game.new_initial_state()
    state.apply_action(0)
    for tile in range(14):  # seat 0 gets tiles 0..6, seat 1 tiles 7..13
        state.apply_action(tile)
    twin = game.new_initial_state()
    twin.apply_action(0)
    for tile in [*range(7), *range(20, 27)]:  # seat 1 holds other tiles
        twin.apply_action(tile)
    for current in (state, twin):
        current.apply_action(DRAW)
        current.apply_action(27)
    assert state.information_state_string(0) == twin.information_state_string(0)
    assert state.information_state_tensor(0) == twin.information_state_tensor(0)
    assert state.information_state_string(1) != twin.information_state_string(1)
    assert "0:draw[6|6]" in state.information_state_string(0)
    info = information_layout(game.rules)
    own, other = (info.split(np.asarray(state.information_state_tensor(seat))) for seat in (0, 1))
    assert np.flatnonzero(own["drawn_at"]).tolist() == [27] and own["drawn_at"][27] == 1  # its first action
    assert not other["drawn_at"].any() and other["events"][0, 1] == 1 and other["events"][0, 5] == 1  # seat 0 drew


def test_python_observers_match_the_state_methods() -> None:
    game = _load({"players": 3})
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    while state.is_chance_node():
        _play_chance(state, rng)
    info = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    observation = make_observation(game)
    for player in range(3):
        info.set_from(state, player)
        observation.set_from(state, player)
        np.testing.assert_array_equal(info.tensor, state.information_state_tensor(player))
        np.testing.assert_array_equal(observation.tensor, state.observation_tensor(player))
        assert info.string_from(state, player) == state.information_state_string(player)


def _hands_of(env) -> list[list[int]]:
    core = env.unwrapped.state_ref
    return [core.hand_tiles(seat) for seat in range(core.num_players)]


@pytest.mark.parametrize(
    ("players", "episode", "reward", "games"),
    [
        (2, "hand", "zero_sum", 60),
        (3, "hand", "points", 40),
        (4, "hand", "zero_sum", 40),
        (2, "match", "zero_sum", 4),
        (3, "match", "win_loss", 4),
        (4, "match", "points", 3),
    ],
)
def test_same_deal_and_actions_as_the_aec_environment(players: int, episode: str, reward: str, games: int) -> None:
    """Differential test: legal actions, every observation and the returns agree step by step."""
    game = _load({"players": players, "episode": episode, "reward": reward})
    env = draw_env.env(num_players=players, episode=episode, reward=reward)
    rng = random.Random(players)
    for index in range(games):
        env.reset(seed=1000 * players + index)
        queue = draw_openspiel.deal_actions(_hands_of(env), env.unwrapped.state_ref.current)
        state = game.new_initial_state()
        totals = dict.fromkeys(env.agents, 0.0)
        drawn = -1
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(drawn if state.core is not None else queue.pop(0))
                continue
            agent = env.agent_selection
            assert agent == f"player_{state.current_player()}"
            mask = env.observe(agent)["action_mask"]
            assert state.legal_actions() == np.flatnonzero(mask).tolist()
            for seat, name in enumerate(env.agents):
                np.testing.assert_array_equal(state.observation_tensor(seat), env.observe(name)["observation"])
            action = rng.choice(state.legal_actions())
            core = env.unwrapped.state_ref
            drawn = core.boneyard[0] if action == DRAW else -1
            hand_number = core.hand_number
            state.apply_action(action)
            env.step(action)
            for name in totals:
                totals[name] += env.rewards[name]
            if episode == "match" and not all(env.terminations.values()) and env.unwrapped.state_ref.hand_number != hand_number:
                queue = draw_openspiel.deal_actions(_hands_of(env))
        assert all(env.terminations.values())
        assert state.returns() == pytest.approx([totals[name] for name in env.agents])
        for seat, name in enumerate(env.agents):
            np.testing.assert_array_equal(state.observation_tensor(seat), env.observe(name)["observation"])


def test_states_from_a_position_search_with_ismcts() -> None:
    """OpenSpiel's Python ISMCTSBot runs on the game (it calls resample_from_infostate)."""
    game = _load({"players": 2})
    bot = ismcts.ISMCTSBot(
        game, mcts.RandomRolloutEvaluator(random_state=np.random.RandomState(0)), 40.0, 30,
        random_state=np.random.RandomState(0),
    )
    rng = np.random.default_rng(4)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            _play_chance(state, rng)
        else:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
    assert sum(state.returns()) == pytest.approx(0)
    position = DrawGame(3).new_state(random.Random(5))
    position.apply_action(position.legal_actions()[0])
    started = _load({"players": 3}).new_state_from_position(position)
    assert started.current_player() == position.current and started.history() == []
    assert started.information_state_string(position.current).startswith(f"p{position.current} from hand ")
    with pytest.raises(ValueError, match="players"):
        game.new_state_from_position(position)
