"""``draw-tune``: a tuning sweep of a ``draw-train`` config, chosen by final exact exploitability.

Examples::

    draw-tune --config configs/sweeps/jax_ppo_micro.yaml
    draw-tune --config configs/sweeps/selfplay_mini.yaml workers=8
    draw-tune --config configs/sweeps/selfplay_mini.yaml --address 10.0.0.5:6379   # on a Ray cluster

Rerunning the same command resumes the sweep: finished trials are skipped. A config problem
(an unknown key, a bad value, a game that cannot be measured exactly) is one
``draw-tune: error: ...`` line and exit status 2, before anything runs. docs/tuning.md describes
the protocol and the outputs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from draw_env.commands import check_extras, reported_errors


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-tune",
        description="Sweep a grid of draw-train settings as Ray Tune trials; choose the settings of lowest final "
        "exact exploitability on the tuning seeds and report them on held-out seeds.",
        epilog="The sweep's keys and outputs: docs/tuning.md.",
    )
    parser.add_argument("--config", required=True, help="a sweep config, such as configs/sweeps/jax_ppo_micro.yaml")
    parser.add_argument(
        "--address",
        help="run the trials on the Ray cluster at this address (such as 127.0.0.1:6379, or auto) instead of a "
        "Ray instance of `workers` CPUs started here",
    )
    parser.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE",
        help="sweep config overrides (workers=4, output_dir=runs/my_sweep)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    check_extras("draw-tune")
    from train.config import load
    from train.sweep.config import SweepConfig
    from train.sweep.run import run_sweep, summary_lines

    parser = build_parser()
    args = parser.parse_args(argv)
    with reported_errors(parser):
        config = load(SweepConfig, args.config, args.overrides)
        summary = run_sweep(config, args.address)
        print("\n".join(summary_lines(summary)))
        print(f"records, summary, figure and the winning config (best.yaml) in {config.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
