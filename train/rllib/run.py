"""Multi-agent PPO self-play on Draw dominoes with RLlib, local or on an existing Ray cluster.

The shared learner policy (masked PPO) takes some seats of every episode; the other seats are
played by the learner itself or by frozen baselines from :mod:`agents`, sampled per episode
(see ``configs/rllib_selfplay.yaml``). Env runners are Ray actors, so the same command scales
from this machine (``--address`` left out: a local Ray instance) to a cluster
(``--address HEAD:6379``, or ``auto`` on a cluster node): nothing else changes.

At the end the learner is saved as an RLlib checkpoint and measured against the baselines with
the project's own evaluation (``arena.evaluation.evaluate``, duplicate deals, Wilson intervals).

Run it in ``.venv-rllib`` (``make integrations-env``: RLlib pins gymnasium 1.2.x)::

    .venv-rllib/bin/python train/rllib_selfplay.py --config configs/rllib_selfplay.yaml --iterations 20
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.charts import save_figure
from draw_env.commands import reported_errors
from draw_env.io.files import check_writable, write_text_atomic
from train.config import load
from train.rllib.config import RLlibConfig
from train.rllib.learner import build_algorithm_config, learn


def load_config(path: str | Path | None, overrides: Sequence[str] = ()) -> RLlibConfig:
    """The config file at ``path`` (``None``: the defaults) with ``KEY=VALUE`` overrides, checked.

    The one config system of :mod:`train.config`: unknown keys, wrong types, NaN and infinity
    are a :class:`train.config.ConfigError` naming the key.
    """
    return load(RLlibConfig, path, overrides)


@dataclass
class IterationRecord:
    """One training iteration: totals so far and the learner's mean episode return."""

    iteration: int
    env_steps: int
    seconds: float
    learner_return: float


def _learner_return(result: Mapping[str, Any]) -> float:
    from integrations.rllib import LEARNER

    returns = result.get("env_runners", {}).get("module_episode_returns_mean", {})
    return float(returns.get(LEARNER, float("nan")))


def train(config: Mapping[str, Any], address: str | None) -> tuple[Path, list[IterationRecord]]:
    """Train for ``config["iterations"]`` and save a checkpoint; returns its path and the curve."""
    import ray
    from tqdm.auto import tqdm

    # address None: a new local instance ("local"), even if this machine runs a Ray cluster;
    # else the cluster at address ("auto", "HOST:PORT", "ray://HOST:10001"). Nothing else differs.
    ray.init(address=address or "local", include_dashboard=False, log_to_driver=False)
    algorithm = build_algorithm_config(config).build_algo()
    records: list[IterationRecord] = []
    start = time.perf_counter()
    try:
        with tqdm(total=config["iterations"], desc="RLlib PPO", unit="iter", dynamic_ncols=True) as bar:

            def record(result: Mapping[str, Any]) -> None:
                """The curve's point of an iteration, and the bar."""
                records.append(IterationRecord(
                    len(records) + 1,
                    int(result.get("num_env_steps_sampled_lifetime", 0)),
                    time.perf_counter() - start,
                    _learner_return(result),
                ))
                bar.update(1)
                bar.set_postfix(steps=records[-1].env_steps, learner_return=f"{records[-1].learner_return:.3f}")

            # The learner's loop (train.rllib.learner), bounded by the iterations alone.
            learn(algorithm, None, iterations=config["iterations"], on_iteration=record)
        checkpoint = Path(config["output_dir"]).resolve() / "checkpoint"
        algorithm.save_to_path(checkpoint)
    finally:
        algorithm.stop()
        ray.shutdown()
    return checkpoint, records


def plot_curve(records: Sequence[IterationRecord], path: Path) -> None:
    """The learner's mean episode return against env steps sampled, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 3.5))
    axes.plot([r.env_steps for r in records], [r.learner_return for r in records], marker="o")
    axes.set_xlabel("env steps sampled")
    axes.set_ylabel("learner return per episode (scaled)")
    axes.set_title("RLlib PPO self-play on Draw dominoes")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    save_figure(figure, path)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rllib_selfplay.py", description=__doc__.splitlines()[0], epilog="Every key is described in configs/rllib_selfplay.yaml."
    )
    parser.add_argument("--config", default="configs/rllib_selfplay.yaml", help="YAML config file")
    parser.add_argument(
        "--address",
        default=None,
        help="Ray cluster to join: HEAD_IP:6379, 'auto' on a cluster node, or ray://HEAD_IP:10001; "
        "left out, a local Ray instance is started",
    )
    parser.add_argument("--iterations", help="training iterations (overrides the config)")
    parser.add_argument(
        "--num-env-runners", help="Ray env-runner actors (overrides env_runners.num_env_runners)"
    )
    parser.add_argument(
        "--eval-games", help="games per evaluation opponent; 0 skips (overrides evaluation.num_games)"
    )
    parser.add_argument("--output-dir", help="where the checkpoint and results go (overrides output_dir)")
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="config overrides; dotted keys reach sections (ppo.learning_rate=1e-4, env.num_players=3)",
    )
    return parser


#: Command-line options that are shorthands for config keys.
_OPTION_KEYS = {
    "iterations": "iterations",
    "num_env_runners": "env_runners.num_env_runners",
    "eval_games": "evaluation.num_games",
    "output_dir": "output_dir",
}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = build_parser()
    args = parser.parse_args(argv)
    shorthands = [
        f"{key}={getattr(args, option)}" for option, key in _OPTION_KEYS.items() if getattr(args, option)
    ]
    with reported_errors(parser):
        config = load_config(args.config, [*args.overrides, *shorthands]).to_dict()
        output = check_writable("config key 'output_dir'", config["output_dir"], directory=True)

    checkpoint, records = train(config, args.address)
    minutes = records[-1].seconds / 60
    summary: dict[str, Any] = {
        "config": config,
        "address": args.address,
        "checkpoint": str(checkpoint),
        "iterations": len(records),
        "env_steps": records[-1].env_steps,
        "train_minutes": minutes,
        "iterations_per_minute": len(records) / minutes,
        "env_steps_per_second": records[-1].env_steps / records[-1].seconds,
        "curve": [vars(record) for record in records],
        "evaluation": [],
    }
    plot_curve(records, output / "learning_curve.png")
    print(
        f"\nTrained {len(records)} iterations ({records[-1].env_steps} env steps) in {minutes:.2f} min: "
        f"{summary['iterations_per_minute']:.2f} iterations/min, "
        f"{summary['env_steps_per_second']:.0f} env steps/s"
    )
    print(f"Checkpoint: {checkpoint}\nLearning curve: {output / 'learning_curve.png'}")
    settings = config["evaluation"]
    if settings["num_games"] > 0:
        from arena.evaluation import evaluate
        from integrations.rllib import register_agent

        register_agent()
        for baseline in settings["opponents"]:
            env = config["env"]
            result = evaluate(
                [("rllib", {"path": str(checkpoint)})] + [baseline] * (env["num_players"] - 1),
                num_games=settings["num_games"],
                seed=config["seed"],
                episode=settings["episode"],
                workers=1,  # the "rllib" agent name exists in this process only
                max_pip=env["max_pip"],
                hand_size=env["hand_size"],
                protected=env["protected"],
                obs_type=env["obs_type"],
            )
            print(result.summary())
            summary["evaluation"].append(result.to_dict())
    write_text_atomic(output / "summary.json", json.dumps(summary, indent=2, default=str))
    return summary
