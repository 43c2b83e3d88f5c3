"""The batched learner view: SB3's VecEnv protocol over DrawVectorEnv, opponents inside step."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.vec_env import VecMonitor
from threadpoolctl import threadpool_limits

from agents.policy_network import NumpyPolicy, load_policy, shipped_policy
from train.config import load
from train.selfplay.config import TrainConfig
from train.selfplay.run import build_vec_env
from train.vector_learner import DrawLearnerVecEnv


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """Small matrices, shared cores: one BLAS and one torch thread, as draw-train runs."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with threadpool_limits(1, user_api="blas"):
        yield
    torch.set_num_threads(threads)


def _play(env: DrawLearnerVecEnv, steps: int, seed: int = 0) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    seen = [(env.reset(),)]
    for _ in range(steps):
        masks = get_action_masks(env)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, _ = env.step(actions)
        seen.append((obs, rewards, dones))
    return seen


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_every_returned_observation_is_a_learner_decision(num_players: int) -> None:
    env = DrawLearnerVecEnv(32, num_players, opponents={"heaviest": 1, "variety": 1, "random": 1}, seed=1)
    assert is_masking_supported(env)
    rng = np.random.default_rng(0)
    env.reset()
    ended = 0
    for _ in range(150):
        masks = get_action_masks(env)
        assert (env.games._current == env.games._learner).all()  # the learner is to act in every game
        assert masks.any(axis=1).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = env.step(actions)
        assert obs.shape == (32, 340) and obs.dtype == np.float32 and (0 <= obs).all() and (obs <= 1).all()
        # forced moves are played for the learner, except right after an episode ended
        assert (get_action_masks(env).sum(axis=1)[~dones] >= 2).all()
        for game in np.flatnonzero(dones):
            assert infos[game]["terminal_observation"].shape == (340,)
        ended += int(dones.sum())
        assert (rewards[~dones] == 0).all()  # hand episodes: rewards arrive when the hand ends
    assert ended > 50
    assert set(np.unique(env.games._learner)) == set(range(num_players))  # the learner sits everywhere


def test_zero_sum_rewards_of_two_players_are_won_or_lost_points() -> None:
    env = DrawLearnerVecEnv(64, 2, reward_scale=1.0, opponents={"heaviest": 1.0}, seed=2)
    finals = [r[dones] for _, r, dones in _play(env, 200)[1:]]
    rewards = np.concatenate(finals)
    assert rewards.size > 100 and (rewards > 0).any() and (rewards < 0).any()
    # With two players the zero-sum reward is the winner's points, plus or minus: whole numbers.
    assert np.array_equal(rewards, np.round(rewards))


def test_same_seed_same_episodes() -> None:
    first = _play(DrawLearnerVecEnv(16, 3, episode="match", opponents={"variety": 1}, seed=5), 60)
    second = _play(DrawLearnerVecEnv(16, 3, episode="match", opponents={"variety": 1}, seed=5), 60)
    for a, b in zip(first, second):
        for x, y in zip(a, b):
            assert np.array_equal(x, y)


def test_pool_updates_apply_to_new_episodes_and_network_opponents_play() -> None:
    policy = load_policy(shipped_policy(2))
    env = DrawLearnerVecEnv(16, 2, opponents={"self": 0.5, "snapshots": 0.5}, seed=3)
    env.reset()
    assert all(type(player).__name__ == "RandomBatch" for player in env.games._players)  # nothing sent yet
    env.env_method("update_pool", policy, [policy])
    assert sum(_sampled_network(player) for player in env.games._players) == 2
    _play(env, 80)
    codes = env.games._seat_codes[env.games._seat_codes >= 0]
    assert all(_sampled_network(env.games._players[code]) for code in codes)


def _sampled_network(player: object) -> bool:
    """A network opponent that samples its moves, as the learner does while training."""
    return isinstance(player, NumpyPolicy) and not player.deterministic


def test_maskable_ppo_learns_on_it_through_the_config_key() -> None:
    config = load(TrainConfig, None, ["vec_env=batched", "n_envs=32", "ppo.num_steps=16", "ppo.minibatch_size=256"])
    venv = build_vec_env(config)
    assert isinstance(venv, VecMonitor) and isinstance(venv.venv, DrawLearnerVecEnv)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=256, seed=0, device="cpu")
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512


def test_opponents_are_asked_only_where_they_have_a_choice() -> None:
    env = DrawLearnerVecEnv(32, 3, episode="match", opponents={"variety": 1.0, "random": 1.0}, seed=4)
    seen: list[np.ndarray] = []

    def recording(original: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
        def recorded(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            seen.append(masks.sum(axis=1))
            return original(observations, masks)

        return recorded

    for player in env.games._players:
        player.act_batch = recording(player.act_batch)  # type: ignore[method-assign]
    steps = _play(env, 60)
    assert len(steps) == 61 and seen
    choices = np.concatenate(seen)
    # Forced moves (a forced draw, mostly) are played without asking: every row asked has a choice.
    assert choices.size > 500 and (choices >= 2).all()


def test_the_vec_env_uses_the_shared_core() -> None:
    from train.learner_games import LearnerGames

    env = DrawLearnerVecEnv(8, 2, opponents={"heaviest": 1.0}, seed=0)
    assert isinstance(env.games, LearnerGames)
    obs = env.reset()
    assert np.array_equal(env.action_masks(), env.games.action_mask.astype(bool))
    assert np.array_equal(obs[:, 258:316], env.games.action_mask)  # extended features carry the mask


def test_reset_replaces_an_episode_that_ends_before_the_learners_first_decision() -> None:
    """As the one-game adapter's reset: with 4 players a hand can end with every learner move forced;
    reset (no step, so no step to keep two episodes apart) deals the next one and goes on skipping
    forced moves. Seed 101's 4096 games hold such a game (3856) whose next episode opened with a forced
    learner move, which the first observation used to show."""
    env = DrawLearnerVecEnv(4096, 4, opponents={"heaviest": 1, "variety": 1, "random": 1}, seed=101)
    ended: list[int] = []
    step = env.games.venv.step

    def recording_step(actions: np.ndarray, games: np.ndarray | None = None) -> object:
        out = step(actions, games=games)
        ended.extend(np.asarray(games)[out.terminated].tolist())
        return out

    env.games.venv.step = recording_step  # type: ignore[method-assign]
    env.reset()
    assert ended == [3856]  # the situation under test happened, inside reset
    assert (env.games.venv.current_player == env.games.learner_seat).all()
    assert (env.action_masks().sum(axis=1) >= 2).all()  # every first observation is a real decision
    env.games.venv.step = step  # type: ignore[method-assign]
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
