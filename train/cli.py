"""``draw-train``: train a MaskablePPO self-play agent from a YAML config.

Examples::

    draw-train --config configs/selfplay_2p.yaml
    draw-train --config configs/quick.yaml total_timesteps=5000 ppo.learning_rate=1e-4
    draw-train --config configs/selfplay_2p.yaml --resume runs/selfplay_2p/checkpoints/step_200000.zip
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from train.config import load_config


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-train",
        description="Self-play MaskablePPO training for Draw dominoes, evaluated against the baselines.",
        epilog="Every config key is described in docs/training.md.",
    )
    parser.add_argument(
        "--config", help="a YAML config, e.g. configs/selfplay_2p.yaml (default: built-in defaults)"
    )
    parser.add_argument("--resume", help="a checkpoint .zip of an earlier run to continue from")
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="config overrides; dotted keys reach sections (ppo.learning_rate=1e-4, eval.matches=100)",
    )
    return parser


def results_table(summary: dict[str, Any]) -> str:
    """The final evaluation of a ``draw-train`` summary as a text table (one row per baseline)."""
    config = summary["config"]
    return evaluation_table(
        summary["final_eval"],
        config["num_players"],
        title=(
            f"{config['num_players']}-player policy after {summary['timesteps']:,} steps "
            f"({summary['train_seconds'] / 60:.1f} min): match win rate, duplicate format"
        ),
    )


def evaluation_table(rows: Sequence[dict[str, Any]], num_players: int, title: str) -> str:
    """Evaluation rows (``train.selfplay.EvalRow`` as dicts) as a text table."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in ("opponent", "matches", "win rate", "95% Wilson interval", "points/hand"):
        table.add_column(column, justify="left" if column == "opponent" else "right")
    for row in rows:
        table.add_row(
            f"{row['opponent']}" + (f" x{num_players - 1}" if num_players > 2 else ""),
            str(row["matches"]),
            f"{row['win_rate']:.1%}",
            f"[{row['win_low']:.1%}, {row['win_high']:.1%}]",
            f"{row['points_per_hand']:.2f}",
        )
    console = Console(width=110, record=True)
    with console.capture() as capture:
        console.print(table)
    return capture.get()


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config, args.overrides)
    except (ValueError, FileNotFoundError) as error:
        parser.error(str(error))
    from train.selfplay import train  # heavy imports (torch) only once the config is valid

    summary = train(config, resume=args.resume)
    print(results_table(summary))
    if summary["learning_curve"]:
        print(f"Learning curve: {summary['learning_curve']}")
    reached = summary["seconds_to_75pct_vs_heaviest"]
    if reached is not None:
        print(f"75% match win rate vs heaviest first reached after {reached / 60:.1f} training minutes")
    print(f"Summary: {config.output_dir}/summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
