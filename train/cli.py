"""``draw-train``: train a MaskablePPO self-play agent from a YAML config.

Examples::

    draw-train --config configs/selfplay_2p.yaml
    draw-train --config configs/quick.yaml total_timesteps=5000 ppo.learning_rate=1e-4
    draw-train --config configs/selfplay_2p.yaml --resume runs/selfplay_2p/checkpoints/step_200000.zip
    draw-train --config configs/exit_2p.yaml          # pipeline: exit, expert iteration (train/exit.py)
    draw-train --config configs/exploit.yaml target=ppo cpu_minutes=30   # pipeline: exploit (train/exploit.py)

Running the same command again continues the run in ``output_dir`` (a finished run says so and
prints its results); ``--overwrite`` starts it over. A config problem, an ``output_dir`` holding
another run or one made with other settings, or a checkpoint that does not fit the config is one
``draw-train: error: ...`` line and exit status 2, before anything is written. Ctrl-C saves what
the run has done and exits with status 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from draw_env.commands import reported_errors
from train.config import ConfigError, load_config, pipeline_of
from train.evaluation import evaluation_table


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-train",
        description="Self-play MaskablePPO training for Draw dominoes, evaluated against the baselines.",
        epilog="Every config key is described in docs/training.md.",
    )
    parser.add_argument(
        "--config",
        required=True,
        help="a YAML config: configs/quick.yaml (a self-play run of seconds), configs/selfplay_2p.yaml "
        "(self-play PPO), configs/exit_2p.yaml (expert iteration), configs/exploit.yaml (a best response)",
    )
    start = parser.add_mutually_exclusive_group()
    start.add_argument(
        "--resume",
        help="self-play only: a checkpoint .zip of an earlier run (yours: its data is unpickled) to continue "
        "from (rerunning the same command continues the run in output_dir without it)",
    )
    start.add_argument(
        "--overwrite", action="store_true", help="start over: replace the earlier run in output_dir (default: continue it)"
    )
    parser.add_argument(
        "--address",
        help="pipeline: exit only: collect on the actors of the Ray cluster at this address "
        "(such as 127.0.0.1:6379) instead of local worker processes",
    )
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="config overrides; dotted keys reach sections (ppo.learning_rate=1e-4, eval.matches=100)",
    )
    return parser


def results_table(summary: dict[str, Any], num_players: int) -> str:
    """The final evaluation of a ``draw-train`` summary as a text table (one row per baseline)."""
    return evaluation_table(
        summary["final_eval"],
        num_players,
        title=(
            f"{num_players}-player policy after {summary['timesteps']:,} steps "
            f"({summary['train_seconds'] / 60:.1f} min): match win rate, duplicate format"
        ),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with reported_errors(parser):
        try:
            pipeline = pipeline_of(args.config, args.overrides)
            if pipeline == "exit":
                from train.exit import exit_main  # expert iteration (docs/training.md)

                return exit_main(args)
            if pipeline == "exploit":
                from train.exploit import exploit_main  # approximate exploitability (docs/training.md)

                return exploit_main(args)
            if args.address is not None:
                raise ConfigError("--address applies to configs with pipeline: exit only")
            config = load_config(args.config, args.overrides)
            from train.selfplay import train  # heavy imports (torch) only once the config is valid

            summary = train(config, resume=args.resume, overwrite=args.overwrite)
        except KeyboardInterrupt:
            return 130
    print(results_table(summary, config.num_players))
    if summary["learning_curve"]:
        print(f"Learning curve: {summary['learning_curve']}")
    reached = summary["seconds_to_75pct_vs_heaviest"]
    if reached is not None:
        print(f"75% match win rate vs heaviest first reached after {reached / 60:.1f} training minutes")
    print(f"Summary: {config.output_dir}/summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
