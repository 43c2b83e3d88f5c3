"""The Gymnasium VectorEnv view of the batched learner games (train.gym_learner)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.utils.passive_env_checker import check_obs
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from gymnasium.wrappers.vector import RecordEpisodeStatistics
from threadpoolctl import threadpool_limits

from agents.policy_network import NumpyPolicy, shipped_policy
from draw_env import IllegalActionError
from train.gym_learner import DrawLearnerVectorEnv
from train.vector_learner import DrawLearnerVecEnv

ROOT = Path(__file__).resolve().parents[1]
POOL = {"self": 0.3, "snapshots": 0.2, "heaviest": 0.2, "variety": 0.2, "random": 0.1}


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """Small matrices, shared cores: one BLAS thread, as draw-train runs."""
    with threadpool_limits(1, user_api="blas"):
        yield


def _pooled(num_envs: int, num_players: int = 2, **kwargs: object) -> DrawLearnerVectorEnv:
    """Games against the whole pool: baselines, a sampling one, and two network opponents."""
    env = DrawLearnerVectorEnv(num_envs, num_players, opponents=POOL, **kwargs)  # type: ignore[arg-type]
    policy = NumpyPolicy.load(shipped_policy(num_players))
    env.update_pool(policy, [policy])
    return env


def _legal_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])


def _play(env: DrawLearnerVectorEnv, steps: int, seed: int, action_seed: int = 0) -> list[tuple[object, ...]]:
    """Everything the env returns over ``steps`` random legal steps after ``reset(seed=seed)``."""
    rng = np.random.default_rng(action_seed)
    obs, infos = env.reset(seed=seed)
    seen: list[tuple[object, ...]] = [(obs, infos)]
    for _ in range(steps):
        seen.append(env.step(_legal_actions(infos["action_mask"], rng)))
        infos = seen[-1][-1]  # type: ignore[assignment]
    return seen


def test_spaces_and_metadata_follow_gymnasium() -> None:
    env = DrawLearnerVectorEnv(8, 3, features="extended")
    assert isinstance(env, VectorEnv)
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert env.single_observation_space == spaces.Box(0.0, 1.0, (340,), np.float32)
    assert env.observation_space == batch_space(env.single_observation_space, 8)
    assert env.single_action_space == spaces.Discrete(58)
    assert env.action_space == spaces.MultiDiscrete([58] * 8)
    assert DrawLearnerVectorEnv(4, features="scaled").single_observation_space.shape == (258,)
    assert env.num_envs == 8 and env.render_mode is None
    env.close()
    assert env.closed


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_observations_rewards_and_masks_are_what_gymnasium_expects(num_players: int) -> None:
    env = _pooled(24, num_players, episode="match")
    env.action_space.seed(num_players)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gymnasium's passive checker warns on a bad observation
        obs, infos = env.reset(seed=1)
        check_obs(obs, env.observation_space, "reset")
        ended = 0
        for _ in range(120):
            masks = infos["action_mask"]
            assert masks.dtype == np.int8 and masks.shape == (24, 58) and infos["_action_mask"].all()
            # Every game waits for the learner, and the mask is its legal actions there.
            games = env.games
            assert np.array_equal(games.venv.current_player, games.learner_seat)
            assert np.array_equal(games.venv.action_mask, masks)
            assert masks.any(axis=1).all()
            actions = env.action_space.sample(mask=tuple(m.astype(np.int8) for m in masks))
            obs, rewards, terminations, truncations, infos = env.step(actions)
            check_obs(obs, env.observation_space, "step")
            assert rewards.dtype == np.float32 and rewards.shape == (24,)
            assert terminations.dtype == np.bool_ and truncations.dtype == np.bool_
            assert not truncations.any()
            # skip_forced: a learner decision is a real choice, except the first of a new episode
            assert (infos["action_mask"].sum(axis=1)[~terminations] >= 2).all()
            ended += int(terminations.sum())
    assert ended > 0


def test_same_step_autoreset_gives_the_final_observation_and_a_fresh_deal() -> None:
    env = _pooled(48, 2, episode="hand")
    rng = np.random.default_rng(0)
    obs, infos = env.reset(seed=4)
    ends = scored = 0
    for _ in range(60):
        masks = infos["action_mask"]
        previous_obs, previous_masks = obs, masks
        obs, rewards, terminations, _, infos = env.step(_legal_actions(masks, rng))
        done = terminations
        if not done.any():
            assert "final_obs" not in infos and "final_info" not in infos
            continue
        assert np.array_equal(infos["_final_obs"], done) and np.array_equal(infos["_final_info"], done)
        for game in range(48):
            if done[game]:
                # the learner's last decision of the ended hand, and a new hand of 7 tiles to decide in
                assert np.array_equal(infos["final_obs"][game], previous_obs[game])
                assert np.array_equal(infos["final_info"]["action_mask"][game], previous_masks[game])
                assert obs[game, :28].sum() == 7
            else:
                assert infos["final_obs"][game] is None
                assert rewards[game] == 0  # hand episodes: the only reward comes at the end
        ends += int(done.sum())
        scored += int((rewards[done] != 0).sum())  # only a blocked hand with tied lowest totals scores 0
    assert ends > 48 and scored > ends // 2


def test_record_episode_statistics_counts_same_step_episodes() -> None:
    env = RecordEpisodeStatistics(_pooled(32, 2, episode="match", reward_scale=0.02))
    rng = np.random.default_rng(1)
    _, infos = env.reset(seed=2)
    returns, lengths = np.zeros(32), np.zeros(32, int)
    checked = 0
    for _ in range(150):
        _, rewards, terminations, _, infos = env.step(_legal_actions(infos["action_mask"], rng))
        returns += rewards
        lengths += 1
        if terminations.any():
            assert np.array_equal(infos["_episode"], terminations)
            np.testing.assert_allclose(infos["episode"]["r"][terminations], returns[terminations], rtol=1e-5)
            assert np.array_equal(infos["episode"]["l"][terminations], lengths[terminations])
            checked += int(terminations.sum())
            returns[terminations], lengths[terminations] = 0, 0
    assert checked >= 5


def test_same_seed_same_games_and_reset_reseeds_everything() -> None:
    first = _play(_pooled(16, 3, episode="match"), 50, seed=7)
    second_env = _pooled(16, 3, episode="match")
    second = _play(second_env, 50, seed=7)
    assert data_equivalence(first, second, exact=True)
    # Reseeding the same env replays it exactly, the sampling opponents' streams included.
    assert data_equivalence(_play(second_env, 50, seed=7), first, exact=True)
    assert not data_equivalence(_play(second_env, 50, seed=8), first)


def test_unseeded_resets_continue_the_streams_from_the_constructor_seed() -> None:
    a = _pooled(8, 2, seed=3)
    b = _pooled(8, 2, seed=3)
    obs_a, _ = a.reset()
    obs_b, _ = b.reset()
    assert np.array_equal(obs_a, obs_b)
    later = a.reset()[0]
    assert np.array_equal(later, b.reset()[0])
    assert not np.array_equal(later, obs_a)  # the streams went on: new deals
    assert np.array_equal(a.reset(seed=3)[0], obs_a)  # reseeding gives the first deals back


def test_the_gymnasium_and_sb3_views_play_the_same_games() -> None:
    gym_env = _pooled(12, 2, episode="match", reward_scale=0.02, seed=5)
    sb3_env = DrawLearnerVecEnv(12, 2, episode="match", opponents=POOL, seed=5)
    policy = NumpyPolicy.load(shipped_policy(2))
    sb3_env.env_method("update_pool", policy, [policy])
    rng = np.random.default_rng(2)
    obs, infos = gym_env.reset(seed=5)
    assert np.array_equal(sb3_env.reset(), obs)
    for _ in range(80):
        actions = _legal_actions(infos["action_mask"], rng)
        assert np.array_equal(sb3_env.action_masks(), infos["action_mask"].astype(bool))
        obs, rewards, terminations, _, infos = gym_env.step(actions)
        sb3_obs, sb3_rewards, dones, sb3_infos = sb3_env.step(actions)
        assert np.array_equal(obs, sb3_obs) and np.array_equal(rewards, sb3_rewards) and np.array_equal(terminations, dones)
        for game in np.flatnonzero(dones):
            assert np.array_equal(infos["final_obs"][game], sb3_infos[game]["terminal_observation"])


def test_an_illegal_action_is_a_value_error_that_changes_nothing() -> None:
    env = _pooled(16, 2, episode="match")
    twin = _pooled(16, 2, episode="match")
    obs, infos = env.reset(seed=9)
    twin.reset(seed=9)
    rng = np.random.default_rng(3)
    for _ in range(5):  # some way into the games
        actions = _legal_actions(infos["action_mask"], rng)
        obs, _, _, _, infos = env.step(actions)
        twin.step(actions)
    masks = infos["action_mask"]
    legal = _legal_actions(masks, rng)
    game = int(np.flatnonzero((masks == 0).any(axis=1))[-1])
    illegal = legal.copy()
    illegal[game] = int(np.flatnonzero(masks[game] == 0)[0])
    bad_inputs: list[object] = [
        illegal,
        np.where(np.arange(16) == game, 58, legal),  # outside 0..57
        np.where(np.arange(16) == game, -1, legal),
        legal[:-1],  # wrong shape
        legal.astype(np.float64),  # not integers
    ]
    for bad in bad_inputs:
        with pytest.raises(ValueError) as raised:
            env.step(bad)
        if bad is illegal:
            assert isinstance(raised.value, IllegalActionError) and f"games [{game}]" in str(raised.value)
    # Nothing changed: the env goes on exactly as its twin, which never saw the bad actions.
    assert data_equivalence(env.step(legal), twin.step(legal), exact=True)


def test_bad_arguments_are_value_errors_naming_them() -> None:
    for kwargs, name in [
        ({"num_envs": 0}, "num_envs"),
        ({"num_players": 5}, "num_players"),
        ({"reward_scale": 0.0}, "reward_scale"),
        ({"features": "raw"}, "features"),
        ({"skip_forced": 1}, "skip_forced"),
        ({"opponents": {"heaviest": -1.0}}, "opponents"),
        ({"opponents": {"heaviest": 0.0}}, "opponents"),
        ({"opponents": {"nobody": 1.0}}, "nobody"),
        ({"seed": -1}, "seed"),
    ]:
        arguments: dict[str, object] = {"num_envs": 4, **kwargs}
        with pytest.raises(ValueError, match=name):
            DrawLearnerVectorEnv(**arguments)  # type: ignore[arg-type]
    env = DrawLearnerVectorEnv(4)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(4, np.int64))
    obs, _ = env.reset(seed=0)
    for seed in (-1, 1.5, [1, 2, 3, 4]):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)  # type: ignore[arg-type]
    with pytest.warns(UserWarning, match="reset_mask"):
        env.reset(seed=0, options={"reset_mask": np.ones(4, bool)})


def test_self_play_opponents_play_once_sent() -> None:
    env = DrawLearnerVectorEnv(16, 2, opponents={"self": 1.0}, seed=0)
    env.reset()
    assert all(type(player).__name__ == "RandomBatch" for player in env.games._players)  # nothing sent yet
    policy = NumpyPolicy.load(shipped_policy(2))
    env.update_pool(policy)
    _play(env, 30, seed=1)
    codes = env.games._seat_codes[env.games._seat_codes >= 0]
    assert codes.size and all(env.games._players[code].weights is policy.weights for code in codes)


def test_it_imports_without_torch_or_stable_baselines3() -> None:
    code = (
        "import sys, train.gym_learner; "
        "print(sorted(m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
