"""Tianshou: ``PettingZooEnv`` over the AEC env and the masked-DQN example, trained for real (briefly)."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest
import torch
from pettingzoo.utils.wrappers import BaseWrapper
from tianshou.data import Collector, CollectStats
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv

import draw_env


class LegalityRecorder(BaseWrapper):
    """Counts, for the live agent of each step, whether its action was in its mask."""

    def __init__(self, env: draw_env.GuardedEnv) -> None:
        super().__init__(env)
        self.legal = 0
        self.illegal = 0

    def step(self, action: int) -> None:
        agent = self.env.agent_selection
        if not (self.env.terminations[agent] or self.env.truncations[agent]):
            if self.env.observe(agent)["action_mask"][action]:
                self.legal += 1
            else:
                self.illegal += 1
        self.env.step(action)


@pytest.fixture(scope="module")
def example(script: Callable[[str], ModuleType]) -> ModuleType:
    torch.set_num_threads(1)
    return script("examples/tianshou_masked_dqn.py")


def test_short_training_run_collects_and_measures(example: ModuleType) -> None:
    stats = example.train(num_players=2, epochs=1, steps_per_epoch=400, test_hands=6, seed=0)
    assert stats.env_steps >= 400
    assert stats.steps_per_second > 0
    assert math.isfinite(stats.reward_before) and math.isfinite(stats.reward_after)


@pytest.mark.parametrize("num_players", [2, 3])
def test_masked_policies_only_play_legal_actions_while_exploring(
    example: ModuleType, num_players: int
) -> None:
    recorders = [LegalityRecorder(draw_env.env(num_players=num_players)) for _ in range(2)]
    algorithm = example.build_algorithm(PettingZooEnv(draw_env.env(num_players=num_players)))
    envs = DummyVectorEnv([lambda recorder=recorder: PettingZooEnv(recorder) for recorder in recorders])
    envs.seed(num_players)
    # exploration_noise: the DQN's epsilon-random actions go through the mask too.
    stats = Collector[CollectStats](algorithm, envs, exploration_noise=True).collect(
        n_episode=6, reset_before_collect=True
    )
    assert stats.n_collected_episodes >= 6
    assert sum(r.legal for r in recorders) == stats.n_collected_steps > 0
    assert sum(r.illegal for r in recorders) == 0
    # Every seat's zero_sum rewards of a hand sum to 0 in Tianshou's multi-agent returns.
    assert np.allclose(stats.returns.sum(axis=1), 0.0)
