"""Environment steps per second of MaskablePPO self-play: the old default PPO settings against the new ones.

Runs ``MaskablePPO.learn`` (``draw-train``'s model and environments, without its evaluations and
checkpoints) on two configs in the same process, interleaved over ``--rounds`` rounds, each for
``--steps`` learner steps (whole rollouts), both on the batched learner games:

* ``old default``: ``configs/selfplay_2p.yaml``'s PPO settings as they were at commit b4ac0c0,
  spelled out as overrides (:data:`OLD_DEFAULT`): 16 games x 256 steps a rollout, minibatches of
  512, 4 epochs, learning rate 3e-4;
* ``new default``: the config file as it is now.

``--subject NAME='KEY=VALUE ...'`` adds a config of your own (overrides on ``--config``). The
wall time of each run is split into:

* ``environment``: inside ``VecEnv.step`` and ``reset``, the opponents' choices excepted (rules,
  observations, encodings, the learner's forced moves);
* ``opponents``: inside the opponents' choices (network forward passes and baselines);
* ``collection forward``: the learner's own policy forward passes while collecting (SB3's
  ``policy.forward``: actor, critic, masked sampling);
* ``PPO update``: ``MaskablePPO.train`` (the epochs of minibatch gradient steps);
* ``other``: the rest (rollout buffer, action masks, GAE, callbacks).

The learner's current actor is sent to the pool before learning (and a snapshot of it), so the
``self`` and ``snapshots`` opponents are network opponents as in a real run. Figures are medians
over rounds; speed-ups are medians of per-round ratios against the first subject (one torch and
one BLAS thread, as ``draw-train`` runs).

Usage::

    python benchmarks/selfplay_speed.py [--rounds 5] [--steps 32768] [--config configs/selfplay_2p.yaml]
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from threadpoolctl import threadpool_limits

import agents.batched
from agents.policy_network import NumpyPolicy
from train.config import load
from train.sb3_adapter import weights_of
from train.selfplay.config import TrainConfig
from train.selfplay.run import build_model, build_vec_env, unchecked_distributions

ROOT = Path(__file__).resolve().parents[1]

#: ``configs/selfplay_2p.yaml``'s settings at commit b4ac0c0 that the new default changed (but
#: its one-game environments, which the batched learner games replaced).
OLD_DEFAULT = [
    "n_envs=16",
    "ppo.num_steps=256",
    "ppo.minibatch_size=512",
    "ppo.update_epochs=4",
    "ppo.learning_rate=3e-4",
]
#: The parts of the wall time, in the order printed.
PARTS = ("environment", "opponents", "collection forward", "PPO update", "other")


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
    NumpyPolicy.act = watch.wrap(NumpyPolicy.act)  # type: ignore[method-assign]
    NumpyPolicy.act_batch = watch.wrap(NumpyPolicy.act_batch)  # type: ignore[method-assign]
    batched_classes = {agents.batched_class(name) for name in agents.available()}
    for batched in batched_classes - {None, NumpyPolicy}:
        assert batched is not None
        batched.act_batch = watch.wrap(batched.act_batch)  # type: ignore[attr-defined]
    from agents import baselines

    for one_game in (baselines.HeaviestAgent, baselines.VarietyAgent, baselines.RandomAgent, baselines.RandomForcedAgent):
        one_game.act = watch.wrap(one_game.act)  # type: ignore[method-assign]


def run(config_path: Path, overrides: list[str], steps: int, opponents: Stopwatch) -> dict[str, float]:
    """One ``learn`` of about ``steps`` learner steps; seconds by part, and steps per second."""
    config = load(TrainConfig, config_path, [*overrides, "tensorboard=false", "progress_bar=false"])
    venv = build_vec_env(config)
    stepping = Stopwatch()
    venv.step_wait = stepping.wrap(venv.step_wait)  # type: ignore[method-assign]
    venv.reset = stepping.wrap(venv.reset)  # type: ignore[method-assign]
    model = build_model(config, venv, None)
    forward, update = Stopwatch(), Stopwatch()
    model.policy.forward = forward.wrap(model.policy.forward)  # type: ignore[method-assign]
    model.train = update.wrap(model.train)  # type: ignore[method-assign]
    actor = NumpyPolicy(weights_of(model, config.num_players, value=False))
    venv.env_method("update_pool", actor, [actor])
    rollout = config.n_envs * config.ppo.num_steps
    steps = max(1, round(steps / rollout)) * rollout
    opponents.seconds = 0.0
    with unchecked_distributions():  # as draw-train runs
        started = time.perf_counter()
        model.learn(total_timesteps=steps)
        total = time.perf_counter() - started
    venv.close()
    parts = {
        "environment": stepping.seconds - opponents.seconds,
        "opponents": opponents.seconds,
        "collection forward": forward.seconds,
        "PPO update": update.seconds,
    }
    parts["other"] = total - sum(parts.values())
    return {"steps_per_second": model.num_timesteps / total, "total": total, "steps": model.num_timesteps, **parts}


def _describe(config_path: Path, overrides: list[str]) -> str:
    config = load(TrainConfig, config_path, overrides)
    ppo = config.ppo
    return (
        f"{config.n_envs} games x {ppo.num_steps} "
        f"steps a rollout, minibatch {ppo.minibatch_size}, "
        f"{ppo.update_epochs} epochs, lr {ppo.learning_rate:g}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "selfplay_2p.yaml")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=32768, help="learner steps per run (rounded to whole rollouts)")
    parser.add_argument(
        "--subject",
        action="append",
        default=[],
        metavar="NAME='KEY=VALUE ...'",
        help="another config to measure: overrides on --config (repeatable)",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    threadpool_limits(1, user_api="blas")  # as draw-train does
    opponents = Stopwatch()
    _patch_opponents(opponents)
    subjects: dict[str, list[str]] = {"old default": OLD_DEFAULT, "new default": []}
    for text in args.subject:
        name, _, overrides = text.partition("=")
        subjects[name] = shlex.split(overrides)
    for name, overrides in subjects.items():
        print(f"{name}: {_describe(args.config, overrides)}")
    results: dict[str, list[dict[str, float]]] = {name: [] for name in subjects}
    run(args.config, [], 4096, opponents)  # warm-up: numba compiles or loads its cache
    for round_number in range(args.rounds):
        for name, overrides in subjects.items():
            results[name].append(run(args.config, overrides, args.steps, opponents))
        print(
            f"round {round_number + 1}: "
            + ", ".join(f"{n} {results[n][-1]['steps_per_second']:,.0f}/s" for n in subjects),
            flush=True,
        )
    print(
        f"\nMaskablePPO self-play, {args.config.name}, {args.steps:,} learner steps per run, "
        f"medians of {args.rounds} rounds; ms per 1,000 steps by part (share of the wall time)"
    )
    print(f"{'subject':<14} {'steps/s':>8} {'speed-up':>9}  " + "  ".join(f"{part:>20}" for part in PARTS))
    reference = results[next(iter(subjects))]
    for name, rows in results.items():
        median = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
        ratio = statistics.median(r["steps_per_second"] / d["steps_per_second"] for r, d in zip(rows, reference))
        cells = []
        for part in PARTS:
            per_thousand = statistics.median(1e6 * row[part] / row["steps"] for row in rows)
            cells.append(f"{per_thousand:7.1f} ms ({median[part] / median['total']:4.0%})".rjust(20))
        print(f"{name:<14} {median['steps_per_second']:>8,.0f} {ratio:>8.2f}x  " + "  ".join(cells))
    print("\nold default / new default, time per learner step by part (medians of per-round ratios):")
    new = results["new default"]
    for part in PARTS:
        ratio = statistics.median((o[part] / o["steps"]) / max(n[part] / n["steps"], 1e-12) for o, n in zip(reference, new))
        print(f"  {part:<20} {ratio:6.2f}x")


if __name__ == "__main__":
    main()
