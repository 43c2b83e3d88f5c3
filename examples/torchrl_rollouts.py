"""Collect Draw dominoes rollouts with TorchRL: ``PettingZooWrapper(..., use_mask=True)`` and a masked policy.

All seats share one group (``"agents"``) and one policy network; each step only the seat to act
has ``("agents", "mask")`` set, and its legal actions are ``("agents", "action_mask")``. The other
seats' masks are all True in TorchRL's convention, so the masked distribution stays defined for
them, and the wrapper ignores their actions.

Run (prints the rollout size and the measured env steps per second)::

    .venv/bin/python examples/torchrl_rollouts.py --num-players 3 --frames 4000
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import torch
from tensordict import TensorDictBase
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType
from torchrl.modules import MaskedCategorical, ProbabilisticActor

import draw_env
from draw_env.observation import HIGH, OBSERVATION_SIZE
from draw_env.rules import NUM_ACTIONS

GROUP = "agents"  # the group name TorchRL gives MarlGroupMapType.ALL_IN_ONE_GROUP


def make_env(num_players: int = 2, seed: int = 0) -> PettingZooWrapper:
    """The AEC env wrapped for TorchRL; tensors are batched over the ``num_players`` seats."""
    return PettingZooWrapper(
        draw_env.env(num_players=num_players),
        use_mask=True,  # AEC: one seat acts per step
        group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
        categorical_actions=True,
        seed=seed,
    )


class _ScaledMLP(nn.Module):
    """Observation (..., 258) scaled to [0, 1] by ``HIGH`` -> logits (..., 58)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.register_buffer("high", torch.as_tensor(HIGH))
        self.body = nn.Sequential(
            nn.Linear(OBSERVATION_SIZE, hidden), nn.Tanh(), nn.Linear(hidden, NUM_ACTIONS)
        )

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return self.body(observation / self.high)


def make_policy(hidden: int = 64) -> ProbabilisticActor:
    """A policy shared by every seat that samples only legal actions (``MaskedCategorical``)."""
    logits = TensorDictModule(
        _ScaledMLP(hidden),
        in_keys=[(GROUP, "observation", "observation")],
        out_keys=[(GROUP, "logits")],
    )
    return ProbabilisticActor(
        logits,
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )


@dataclass
class RolloutStats:
    """What :func:`collect` gathered: ``frames`` env steps in ``seconds`` of wall-clock time and
    ``cpu_seconds`` of this process's CPU time (the fairer figure on a shared machine), ``hands`` finished."""

    frames: int
    hands: int
    seconds: float
    cpu_seconds: float

    @property
    def steps_per_second(self) -> float:
        return self.frames / self.seconds


def collect(
    num_players: int = 2, frames: int = 2000, frames_per_batch: int = 500, seed: int = 0
) -> tuple[list[TensorDictBase], RolloutStats]:
    """Collect ``frames`` env steps with :func:`make_policy` through TorchRL's ``Collector``.

    Returns the batches (each a TensorDict of batch size ``[frames_per_batch]``, seats inside
    the ``"agents"`` sub-dict) and the timing.
    """
    torch.manual_seed(seed)
    collector = Collector(
        lambda: make_env(num_players, seed),
        make_policy(),
        frames_per_batch=frames_per_batch,
        total_frames=frames,
        auto_register_policy_transforms=False,  # the policy keeps no state: no InitTracker needed
    )
    batches: list[TensorDictBase] = []
    start, start_cpu = time.perf_counter(), time.process_time()
    for batch in collector:
        batches.append(batch)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
    collector.shutdown()
    hands = sum(int(batch["next", "done"].sum()) for batch in batches)
    return batches, RolloutStats(sum(batch.numel() for batch in batches), hands, seconds, cpu_seconds)


def main(argv: list[str] | None = None) -> RolloutStats:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--frames", type=int, default=4000, help="env steps to collect")
    parser.add_argument("--frames-per-batch", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # a small MLP on a few seats per step: more threads only contend
    _, stats = collect(args.num_players, args.frames, args.frames_per_batch, args.seed)
    print(
        f"TorchRL: collected {stats.frames} env steps ({stats.hands} hands, {args.num_players} players) "
        f"in {stats.seconds:.1f} s: {stats.steps_per_second:,.0f} env steps/s "
        f"({stats.frames / stats.cpu_seconds:,.0f} per CPU-second)"
    )
    return stats


if __name__ == "__main__":
    main()
