"""``draw-distill``: distil the search agent into a policy network, one step of expert iteration.

A reactive network trained by self-play stops improving long before it plays like a search that
plays every candidate move out on hundreds of dealt worlds (the self-play policy wins 28% of
matches against ``ismcts``). This pipeline trains a network to play like the search instead,
driven by one :class:`train.config.DistillConfig`:

1. **collect** (:mod:`train.distill_data`): the teacher labels every real decision of
   ``matches`` matches, in shards under ``output_dir/data``;
2. **fit** (:mod:`train.distill_fit`): the student's policy network learns the teacher's soft
   choices; the result is the policy file ``final.npz`` + ``final.json`` (weights only: the file
   to share) and ``final.zip`` (the same network as an SB3 checkpoint, with its ``.policy.json``);
3. **evaluate**: ``final_eval`` against the baselines;
4. **curve**: fit again on the first ``curve`` match counts and evaluate each fit and the final
   policy with ``eval``: the learning curve against the data collected.

Rerunning into the same ``output_dir`` with the same collection settings continues the run
(the shards on disk are kept); other collection settings there are refused unless
``--overwrite`` is given, so that two collections never mix.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from draw_env.commands import reported_errors
from draw_env.files import write_json_atomic
from train.config import DistillConfig, load_distill_config
from train.distill_data import Decisions, collect, shard_paths
from train.evaluation import EvalRow, evaluate_checkpoint, evaluation_table, learner_row
from train.plots import plot_learning_curve
from train.run_dir import RunDir, RunFile, read_run_file

if TYPE_CHECKING:  # torch is imported by the stages that fit
    from train.network import PolicyValueNetwork

STAGES = ("collect", "fit", "evaluate", "curve")
#: The settings that make the shards: a run directory holds one collection.
COLLECTION_KEYS = ("num_players", "seed", "teacher_simulations", "partners", "shard_matches")


class DistillSummary(RunFile):
    """``summary.json`` of an earlier run, of which a rerun keeps every key (and reads ``decisions``)."""

    model_config = ConfigDict(extra="allow")

    decisions: int = Field(0, ge=0)


def check_output_dir(config: DistillConfig, overwrite: bool) -> None:
    """Refuse an ``output_dir`` that holds another collection (nothing is written or removed here).

    Raises:
        ConfigError: if it holds files but no ``config.json`` of a distillation, or one whose
            :data:`COLLECTION_KEYS` differ from ``config``'s (unless ``overwrite``; the message
            names the keys).
    """
    RunDir(config, "distill", overwrite=overwrite, free=[key for key in config.to_dict() if key not in COLLECTION_KEYS])


def save_student(network: PolicyValueNetwork, config: DistillConfig, path: Path, provenance: dict[str, Any]) -> Path:
    """Write the fitted student as the policy file
    ``path`` with suffix ``.npz`` (+ ``.json``; the policy network only: the value network is not
    trained) and as the SB3 checkpoint ``path`` (``.zip``, with its side file); return the ``.npz``."""
    from train.sb3_adapter import save_network_checkpoint

    save_network_checkpoint(network, path, num_players=config.num_players, seed=config.seed)
    return network.save(path.with_suffix(".npz"), config.num_players, value=False, provenance=provenance)


def _evaluate(
    config: DistillConfig, policy: Path, settings: Any, seed: int, decisions: int, seconds: float
) -> list[EvalRow]:
    return [
        learner_row(result, baseline, decisions, seconds)
        for baseline, result in evaluate_checkpoint(
            ("network", {"path": str(policy)}),
            settings.opponents,
            config.num_players,
            settings.matches,
            seed=seed,
            duplicate=settings.duplicate,
            workers=settings.workers,
            progress=config.progress_bar,
        )
    ]


def distill(config: DistillConfig, stages: Sequence[str] = STAGES, overwrite: bool = False) -> dict[str, Any]:
    """Run the given stages; write ``final.zip``, ``final.npz``, ``summary.json`` and ``learning_curve.png``.

    Stages: ``collect`` (play the matches not on disk yet), ``fit`` (train on every collected
    decision, save the final policy), ``evaluate`` (``final_eval`` against the baselines),
    ``curve`` (fit again on the first ``curve`` match counts and evaluate each fit and the
    final policy with ``eval``: the learning curve against the data collected).

    Raises:
        ConfigError: before anything is written: an ``output_dir`` holding another collection
            (see :func:`check_output_dir`), or an ``init`` that is not a policy file.
    """
    from train.distill_fit import fit, init_weights

    check_output_dir(config, overwrite)
    if config.init is not None:
        init_weights(config.init)  # a bad init is refused before anything is written
    output_dir = Path(config.output_dir)
    if overwrite and output_dir.is_dir():
        shutil.rmtree(output_dir)
    summary_path = output_dir / "summary.json"
    summary: dict[str, Any] = (
        read_run_file(summary_path, DistillSummary).model_dump() if summary_path.exists() else {}
    )
    output_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(output_dir / "config.json", config.to_dict(), indent=1)
    final_path = output_dir / "final.zip"
    policy_path = final_path.with_suffix(".npz")
    summary["config"] = config.to_dict()
    if "collect" in stages or "fit" in stages:
        decisions = collect(config)
        summary["decisions"] = len(decisions)
        summary["collect_worker_seconds"] = decisions.seconds
    if "fit" in stages:
        started = time.perf_counter()
        network, reports = fit(config, decisions)
        summary["fit_seconds"] = round(time.perf_counter() - started, 1)
        summary["fit"] = [dataclasses.asdict(report) for report in reports]
        save_student(
            network,
            config,
            final_path,
            {
                "distilled_by": "draw-distill",
                "config": config.to_dict(),
                "decisions": len(decisions),
                "fit": summary["fit"],
            },
        )
        print(f"Fitted policy -> {policy_path} (and {final_path})")
    if "evaluate" in stages:
        rows = _evaluate(
            config, policy_path, config.final_eval, config.seed + 2, summary.get("decisions", 0), 0.0
        )
        summary["final_eval"] = [dataclasses.asdict(row) for row in rows]
    if "curve" in stages and config.curve:
        rows = learning_curve(config, policy_path)
        summary["learning_curve"] = [dataclasses.asdict(row) for row in rows]
        figure = output_dir / "learning_curve.png"
        plot_learning_curve(
            rows,
            figure,
            title=f"{config.num_players}-player distillation of ismcts ({config.teacher_simulations} simulations)",
            num_players=config.num_players,
            x_axes=(("timesteps", "decisions searched by the teacher"),),
        )
        summary["learning_curve_png"] = str(figure)
    write_json_atomic(summary_path, summary, indent=1)
    return summary


def learning_curve(config: DistillConfig, final_policy: Path) -> list[EvalRow]:
    """Win rates after fitting on the first ``config.curve`` matches.

    Each fit starts afresh with the config's settings (``curve/matches_N.npz``); the last point
    is ``final_policy``, fitted on every match. ``timesteps`` holds the decisions fitted on.
    """
    from train.distill_fit import fit

    curve_dir = Path(config.output_dir) / "curve"
    rows = []
    for matches in [*config.curve, config.matches]:
        decisions = Decisions.load(shard_paths(config, matches))
        policy = final_policy
        if matches < config.matches:
            network, _ = fit(config, decisions)
            policy = network.save(curve_dir / f"matches_{matches}.npz", config.num_players, value=False)
        for row in _evaluate(
            config, policy, config.eval, config.seed + 1, len(decisions), decisions.seconds or 0.0
        ):
            rows.append(row)
            print(
                f"[curve] {matches:>5} matches ({len(decisions):,} decisions) vs {row.opponent:<9} "
                f"win {row.win_rate:6.1%} [{row.win_low:.1%}, {row.win_high:.1%}]",
                flush=True,
            )
    return rows


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-distill",
        description="Distil the ismcts search agent into a policy network (collect, fit, evaluate, curve).",
        epilog="Every config key is described in docs/training.md.",
    )
    parser.add_argument(
        "--config", help="a YAML config, e.g. configs/distill_2p.yaml (default: built-in defaults)"
    )
    parser.add_argument(
        "--stage",
        action="append",
        choices=STAGES,
        help="run only this stage (repeatable; default: all four). 'fit' and 'curve' read the collected shards.",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier run in output_dir made with other collection settings (default: refuse)",
    )
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="config overrides; dotted keys reach sections (matches=100, final_eval.matches=200)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    stages = tuple(stage for stage in STAGES if args.stage is None or stage in args.stage)
    with reported_errors(parser):
        try:
            config = load_distill_config(args.config, args.overrides)
            summary = distill(config, stages, overwrite=args.overwrite)
        except KeyboardInterrupt:
            print(
                "\nInterrupted: the shards written so far stay in output_dir/data; rerun the command to continue."
            )
            return 130
    if "final_eval" in summary and "evaluate" in stages:
        print(
            evaluation_table(
                summary["final_eval"],
                config.num_players,
                title=f"{config.num_players}-player distilled policy: match win rate, duplicate format",
            )
        )
    print(f"Summary: {config.output_dir}/summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
