"""Environment steps per second of MaskablePPO self-play: the one-game adapters against the batched learner view.

Runs ``MaskablePPO.learn`` on the default training config (``configs/selfplay_2p.yaml``: 16 envs,
256 steps per rollout, self/snapshot/heaviest/variety opponents) with each ``vec_env`` in turn,
``--rollouts`` rollouts each, in the same process, interleaved over ``--rounds`` rounds, and
splits the wall time into:

* ``opponents``: time inside the opponents' choices (network forward passes and baselines);
* ``environment``: the rest of the time inside ``VecEnv.step`` and ``reset`` (rules, observations,
  encodings, the learner's forced moves);
* ``learner``: everything else (the learner's forward passes while collecting, and the PPO update).

The learner's current actor is sent to the pool before learning, so the ``self`` opponents are
network opponents as in a real run. Figures are medians over rounds; the speed-up is the median
of per-round ratios against ``dummy`` (today's default before ``batched``).

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
    subjects = ("dummy", "batched")
    results: dict[str, list[dict[str, float]]] = {name: [] for name in subjects}
    run(args.config, "batched", 1, opponents)  # warm-up: numba compiles or loads its cache
    for round_number in range(args.rounds):
        for name in subjects:
            results[name].append(run(args.config, name, args.rollouts, opponents))
        print(f"round {round_number + 1}: " + ", ".join(f"{n} {results[n][-1]['steps_per_second']:,.0f}/s" for n in subjects))
    print(f"\nMaskablePPO self-play, {args.config.name}, {args.rollouts} rollouts per run, medians of {args.rounds} rounds")
    print(f"{'vec_env':<10} {'env steps/s':>12} {'opponents':>10} {'environment':>12} {'learner':>9}  (share of wall time)")
    for name in subjects:
        rows = results[name]
        median = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
        shares = [median[key] / median["total"] for key in ("opponents", "environment", "learner")]
        print(f"{name:<10} {median['steps_per_second']:>12,.0f} {shares[0]:>10.0%} {shares[1]:>12.0%} {shares[2]:>9.0%}")
    ratios = [b["steps_per_second"] / d["steps_per_second"] for b, d in zip(results["batched"], results["dummy"])]
    print(f"\nbatched / dummy: {statistics.median(ratios):.2f}x (median of per-round ratios)")


if __name__ == "__main__":
    main()
