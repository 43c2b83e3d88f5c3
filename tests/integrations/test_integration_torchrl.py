"""TorchRL: ``PettingZooWrapper(use_mask=True)`` over the AEC env and the rollout example, for real."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
import torch

from draw_env.observation import OBSERVATION_SIZE
from draw_env.rules import NUM_ACTIONS

INFO_KEYS = {"hand_points", "hand_pips", "score", "blocked"}


@pytest.fixture(scope="module")
def example(script: Callable[[str], ModuleType]) -> ModuleType:
    torch.set_num_threads(1)
    return script("examples/torchrl_rollouts.py")


@pytest.mark.parametrize("num_players", [2, 4])
def test_collected_rollouts_are_legal_masked_and_zero_sum(example: ModuleType, num_players: int) -> None:
    batches, stats = example.collect(num_players=num_players, frames=240, frames_per_batch=120, seed=1)
    assert stats.frames == 240 and len(batches) == 2
    assert stats.hands >= 2 and stats.steps_per_second > 0
    for batch in batches:
        group = batch["agents"]
        assert group["observation", "observation"].shape == (120, num_players, OBSERVATION_SIZE)
        assert group["action_mask"].shape == (120, num_players, NUM_ACTIONS)
        # Exactly one seat acts per step, and the policy picked one of its legal actions.
        acting = group["mask"]
        assert torch.equal(acting.sum(-1), torch.ones(120, dtype=torch.long))
        chosen = group["action"][acting]
        legal = group["action_mask"][acting]
        assert legal.gather(-1, chosen[:, None]).all()
        # Infos arrive as tensors with the env's fixed numeric keys.
        assert set(group["info"].keys()) == INFO_KEYS
        # Rewards come only at the end of a hand, for every seat, and sum to zero ("zero_sum").
        rewards = batch["next", "agents", "reward"].squeeze(-1)
        done = batch["next", "done"].squeeze(-1)
        assert torch.all(rewards[~done] == 0)
        assert torch.allclose(rewards[done].sum(-1), torch.zeros(int(done.sum())), atol=1e-4)


def test_the_example_script_reports_its_speed(
    script: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    stats = script("examples/torchrl_rollouts.py").main(
        ["--num-players", "3", "--frames", "100", "--frames-per-batch", "50"]
    )
    assert stats.frames == 100
    assert "env steps/s" in capsys.readouterr().out
