"""``draw-train``: one command for the learning pipelines, each chosen by its config's ``pipeline:``.

Examples::

    draw-train --config configs/selfplay_2p.yaml
    draw-train --config configs/quick.yaml total_timesteps=5000 ppo.learning_rate=1e-4
    draw-train --config configs/selfplay_2p.yaml --resume runs/selfplay_2p/checkpoints/step_200000.zip
    draw-train --config configs/exit_2p.yaml          # pipeline: exit, expert iteration (train/exit/)
    draw-train --config configs/exploit.yaml target=ppo cpu_minutes=30   # pipeline: exploit (train/exploit/)

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

from draw_env.commands import reported_errors
from train.config import load_pipeline
from train.exit.config import ExitConfig
from train.exploit.config import ExploitConfig


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-train",
        description="Self-play MaskablePPO training for Draw dominoes, evaluated against the baselines.",
        epilog="Every config key is described in the pipeline's guide: docs/training_selfplay.md, "
        "docs/training_exit.md, docs/training_exploit.md.",
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with reported_errors(parser):
        try:
            config = load_pipeline(args.config, args.overrides)
            # The heavy imports (torch) come once the config is valid.
            if isinstance(config, ExitConfig):
                from train.exit.run import exit_main

                return exit_main(config, args)
            if isinstance(config, ExploitConfig):
                from train.exploit.run import exploit_main

                return exploit_main(config, args)
            from train.selfplay.run import selfplay_main

            return selfplay_main(config, args)
        except KeyboardInterrupt:
            return 130


def distill_main(argv: Sequence[str] | None = None) -> int:
    """The former ``draw-distill``: one line naming the command that replaced it, exit status 2."""
    print(
        "draw-distill: error: draw-distill was replaced by expert iteration's first iteration: "
        "run draw-train --config configs/distill_2p.yaml (a config of pipeline: exit with iterations: 1)",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
