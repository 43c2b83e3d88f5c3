"""Copies of a running environment continue exactly like the original.

``copy.deepcopy``, ``pickle`` and ``cloudpickle`` of ``env()``, ``raw_env`` and the single-agent
adapter, taken mid-episode, must play on identically under the same actions: observations,
masks, rewards, terminations, infos, and the deals of later episodes (the deal RNG is copied too).
Stepping the copy must leave the original untouched, and a copied ``env()`` keeps its "reset
first" guard. Search, checkpointing and vector environments rely on this.
"""

from __future__ import annotations

import copy
import pickle
import random
from collections.abc import Callable
from typing import Any

import cloudpickle
import numpy as np
import pytest
from pettingzoo import AECEnv

import draw_env
from draw_env.single_agent import DrawSingleAgentEnv

COPIES: dict[str, Callable[[Any], Any]] = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda env: pickle.loads(pickle.dumps(env)),
    "cloudpickle": lambda env: cloudpickle.loads(cloudpickle.dumps(env)),
}
SCHEMES = [
    ("hand", "zero_sum"),
    ("hand", "points"),
    ("match", "zero_sum"),
    ("match", "points"),
    ("match", "win_loss"),
]
MAKERS = {"env": draw_env.env, "raw_env": draw_env.raw_env}


def aec_trace(env: AECEnv, rng: random.Random, decisions: int) -> list[tuple]:
    """Play ``decisions`` random legal decisions (dealing anew, unseeded, when an episode ends).

    Returns everything the environment showed along the way.
    """
    trace: list[tuple] = []
    while decisions > 0:
        if not env.agents:
            env.reset()  # no seed: the deal comes from the environment's own RNG
        agent = env.agent_selection
        observation, reward, terminated, truncated, info = env.last()
        trace.append(
            (agent, observation["observation"].tobytes(), observation["action_mask"].tobytes(), reward,
             terminated, truncated, dict(info), dict(env.rewards))
        )
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
        decisions -= 1
    return trace


@pytest.mark.parametrize("how", list(COPIES))
@pytest.mark.parametrize("make", list(MAKERS))
@pytest.mark.parametrize(("episode", "reward"), SCHEMES, ids=[f"{e}-{r}" for e, r in SCHEMES])
def test_a_copy_of_a_running_aec_env_plays_on_like_the_original(
    num_players: int, episode: str, reward: str, make: str, how: str
) -> None:
    original = MAKERS[make](num_players=num_players, episode=episode, reward=reward)
    original.reset(seed=11 * num_players)
    aec_trace(original, random.Random(1), 13)  # into the hand, draws and placements made
    twin = COPIES[how](original)
    before = original.last()

    # The copy first, far enough for several hands (and, in hand mode, several deals).
    copied = aec_trace(twin, random.Random(2), 400)
    after = original.last()
    assert before[0]["observation"].tobytes() == after[0]["observation"].tobytes()
    assert before[1:] == after[1:]
    assert original.unwrapped.state_ref is not twin.unwrapped.state_ref

    assert aec_trace(original, random.Random(2), 400) == copied


@pytest.mark.parametrize("how", list(COPIES))
def test_a_copy_taken_before_reset_keeps_the_guard(how: str) -> None:
    twin = COPIES[how](draw_env.env(num_players=3))
    with pytest.raises(RuntimeError, match="reset"):
        twin.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        twin.observe("player_0")
    twin.reset(seed=5)
    fresh = draw_env.env(num_players=3)
    fresh.reset(seed=5)
    assert aec_trace(twin, random.Random(0), 50) == aec_trace(fresh, random.Random(0), 50)


@pytest.mark.parametrize("how", list(COPIES))
def test_an_illegal_action_in_the_guarded_copy_ends_only_the_copy(how: str) -> None:
    original = draw_env.env(num_players=2)
    original.reset(seed=3)
    twin = COPIES[how](original)
    legal = set(np.flatnonzero(twin.observe(twin.agent_selection)["action_mask"]).tolist())
    illegal = next(action for action in range(58) if action not in legal)
    twin.step(illegal)  # PettingZoo logs the illegal move and the copy's episode ends
    assert all(twin.terminations.values())
    assert not any(original.terminations.values())
    assert original.observe(original.agent_selection)["action_mask"].any()


# ---------------------------------------------------------------------- the single-agent adapter


class SeededOpponent:
    """An agent object with its own RNG state, which a copy must carry along."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[self.rng.randrange(len(legal))])


def lowest_legal(observation: dict[str, np.ndarray]) -> int:
    """A plain function opponent (pickled by reference)."""
    return int(np.flatnonzero(observation["action_mask"])[0])


def adapter_trace(env: DrawSingleAgentEnv, rng: random.Random, steps: int) -> list[tuple]:
    trace: list[tuple] = []
    for _ in range(steps):
        legal = np.flatnonzero(env.action_masks())
        observation, reward, terminated, truncated, info = env.step(int(legal[rng.randrange(len(legal))]))
        trace.append((observation.tobytes(), reward, terminated, truncated, info))
        if terminated or truncated:
            observation, info = env.reset()  # unseeded: seat, opponents and deal from the copied RNGs
            trace.append((observation.tobytes(), info))
    return trace


ADAPTER_CASES = [
    ("random", 2, "hand", "zero_sum", False),
    ("agents", 3, "hand", "points", True),
    ("agents", 4, "match", "win_loss", False),
    ("function", 2, "match", "zero_sum", True),
]


@pytest.mark.parametrize("how", list(COPIES))
@pytest.mark.parametrize(("opponents", "players", "episode", "reward", "skip_forced"), ADAPTER_CASES)
def test_a_copy_of_the_single_agent_adapter_plays_on_like_the_original(
    how: str, opponents: str, players: int, episode: str, reward: str, skip_forced: bool
) -> None:
    policies = {
        "random": None,
        "agents": [SeededOpponent(1), SeededOpponent(2)],
        "function": [lowest_legal, SeededOpponent(3)],
    }[opponents]
    original = DrawSingleAgentEnv(
        num_players=players, opponents=policies, episode=episode, reward=reward, skip_forced=skip_forced
    )
    original.reset(seed=7)
    adapter_trace(original, random.Random(0), 5)
    twin = COPIES[how](original)
    copied = adapter_trace(twin, random.Random(1), 150)
    # Opponents are copied with the environment (their RNGs too): had the copy shared them, its
    # steps would have moved the original's opponents on.
    assert adapter_trace(original, random.Random(1), 150) == copied


def test_a_lambda_opponent_pickles_with_cloudpickle_only() -> None:
    env = DrawSingleAgentEnv(num_players=2, opponents=lambda obs: lowest_legal(obs))
    env.reset(seed=1)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(env)
    twin = cloudpickle.loads(cloudpickle.dumps(env))
    assert adapter_trace(twin, random.Random(4), 40) == adapter_trace(env, random.Random(4), 40)
