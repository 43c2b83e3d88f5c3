"""Environment steps per second of MaskablePPO self-play: the one-game adapters against the batched learner view.

Runs ``MaskablePPO.learn`` on the default training config (``configs/selfplay_2p.yaml``: 16 envs,
256 steps per rollout, self/snapshot/heaviest/variety opponents) as it is (``vec_env: dummy``), on
the batched learner view with the same 16 x 256 rollout, and on the batched view with the same
rollout size spread over 256 games (256 x 16), ``--rollouts`` rollouts each, in the same process,
interleaved over ``--rounds`` rounds, and splits the wall time into:

* ``opponents``: time inside the opponents' choices (network forward passes and baselines);
* ``environment``: the rest of the time inside ``VecEnv.step`` and ``reset`` (rules, observations,
  encodings, the learner's forced moves);
* ``learner``: everything else (the learner's forward passes while collecting, and the PPO update).

The learner's current actor is sent to the pool before learning, so the ``self`` opponents are
network opponents as in a real run. Figures are medians over rounds; the speed-ups are medians
of per-round ratios against the first subject.

Usage::

    python benchmarks/selfplay_speed.py [--rounds 3] [--rollouts 4] [--config configs/selfplay_2p.yaml]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from threadpoolctl import threadpool_limits

import agents.batched
import agents.ppo
from agents.ppo import NumpyPolicy
from train.config import load_config
from train.opponents import SampledPolicy
from train.selfplay import build_model, build_vec_env

ROOT = Path(__file__).resolve().parents[1]


class Stopwatch:
    """Adds up the seconds spent inside wrapped functions."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return timed


def _patch_opponents(watch: Stopwatch) -> None:
    """Time every opponent's choice, one-game and batched alike."""
    SampledPolicy.act = watch.wrap(SampledPolicy.act)  # type: ignore[method-assign]
    agents.ppo.NumpyPolicy.act_batch = watch.wrap(agents.ppo.NumpyPolicy.act_batch)  # type: ignore[method-assign]
    for cls in list(agents.batched.BATCHED.values()):
        cls.act_batch = watch.wrap(cls.act_batch)  # type: ignore[method-assign]
    from agents import baselines

    for cls in (baselines.HeaviestAgent, baselines.VarietyAgent, baselines.RandomAgent, baselines.RandomForcedAgent):
        cls.act = watch.wrap(cls.act)  # type: ignore[method-assign]


def run(config_path: Path, overrides: list[str], rollouts: int, opponents: Stopwatch) -> dict[str, float]:
    config = load_config(config_path, [*overrides, "tensorboard=false", "progress_bar=false"])
    venv = build_vec_env(config)
    environment = Stopwatch()
    venv.step_wait = environment.wrap(venv.step_wait)  # type: ignore[method-assign]
    venv.reset = environment.wrap(venv.reset)  # type: ignore[method-assign]
    model = build_model(config, venv, None)
    venv.env_method("update_pool", NumpyPolicy.from_sb3(model.policy, config.num_players), [])
    steps = rollouts * config.n_envs * config.ppo.n_steps
    opponents.seconds = 0.0
    started = time.perf_counter()
    model.learn(total_timesteps=steps)
    total = time.perf_counter() - started
    venv.close()
    return {
        "steps_per_second": steps / total,
        "total": total,
        "opponents": opponents.seconds,
        "environment": environment.seconds - opponents.seconds,
        "learner": total - environment.seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "selfplay_2p.yaml")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rollouts", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(1)
    threadpool_limits(1, user_api="blas")  # as draw-train does
    opponents = Stopwatch()
    _patch_opponents(opponents)
    subjects = {
        "dummy 16x256": ["vec_env=dummy"],
        "batched 16x256": ["vec_env=batched"],
        "batched 256x16": ["vec_env=batched", "n_envs=256", "ppo.n_steps=16"],
    }
    results: dict[str, list[dict[str, float]]] = {name: [] for name in subjects}
    run(args.config, ["vec_env=batched"], 1, opponents)  # warm-up: numba compiles or loads its cache
    for round_number in range(args.rounds):
        for name, overrides in subjects.items():
            results[name].append(run(args.config, overrides, args.rollouts, opponents))
        print(f"round {round_number + 1}: " + ", ".join(f"{n} {results[n][-1]['steps_per_second']:,.0f}/s" for n in subjects))
    print(f"\nMaskablePPO self-play, {args.config.name}, {args.rollouts} rollouts of 4,096 steps per run, medians of {args.rounds} rounds")
    print(f"{'subject':<16} {'env steps/s':>12} {'speed-up':>9} {'opponents':>10} {'environment':>12} {'learner':>9}  (share of wall time)")
    reference = results[next(iter(subjects))]
    for name in subjects:
        rows = results[name]
        median = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
        shares = [median[key] / median["total"] for key in ("opponents", "environment", "learner")]
        ratio = statistics.median(r["steps_per_second"] / d["steps_per_second"] for r, d in zip(rows, reference))
        print(
            f"{name:<16} {median['steps_per_second']:>12,.0f} {ratio:>8.2f}x {shares[0]:>10.0%} "
            f"{shares[1]:>12.0%} {shares[2]:>9.0%}"
        )

if __name__ == "__main__":
    main()
