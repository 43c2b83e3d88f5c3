"""``draw-train``: one command for the learning pipelines, each chosen by its config's ``pipeline:``.

Examples::

    draw-train --config configs/selfplay_2p.yaml
    draw-train --config configs/quick.yaml total_timesteps=5000 ppo.learning_rate=1e-4
    draw-train --config configs/selfplay_2p.yaml --resume runs/selfplay_2p/checkpoints/step_200000.zip
    draw-train --config configs/exit_2p.yaml          # pipeline: exit, expert iteration (train/exit/)
    draw-train --config configs/exploit.yaml target=ppo cpu_minutes=30   # pipeline: exploit (train/exploit/)
    draw-train --config configs/jax_ppo_quick.yaml    # pipeline: jax_ppo, PPO in JAX (train/jax_ppo/)
    draw-train --config configs/nfsp_micro.yaml       # pipeline: nfsp, OpenSpiel's NFSP (train/nfsp/)

Each pipeline is one entry of :data:`train.pipelines.PIPELINES`.

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

from draw_env.commands import check_extras, reported_errors
from train.provenance import source


def build_parser() -> argparse.ArgumentParser:
    # The pipelines' configs are pydantic models (the train extra): imported once check_extras passed.
    from train.pipelines import PIPELINES

    parser = argparse.ArgumentParser(
        prog="draw-train",
        description="Train a Draw dominoes policy with one of the pipelines (the config's pipeline: key) and evaluate it.",
        epilog="Every config key is described in the pipeline's guide: "
        + ", ".join(f"{entry.guide} (pipeline: {name})" for name, entry in PIPELINES.items())
        + ".",
    )
    parser.add_argument(
        "--config",
        required=True,
        help="a YAML config: configs/quick.yaml (a self-play run of seconds), configs/selfplay_2p.yaml "
        "(self-play PPO), configs/exit_2p.yaml (expert iteration), configs/exploit.yaml (a best response), "
        "configs/jax_ppo_quick.yaml (PPO in JAX), configs/nfsp_micro.yaml (NFSP); its pipeline: key picks the pipeline "
        f"({', '.join(PIPELINES)}; none: selfplay)",
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
    check_extras("draw-train")
    from train.pipelines import check_options, load_run

    parser = build_parser()
    args = parser.parse_args(argv)
    with reported_errors(parser):
        try:
            pipeline, config = load_run(args.config, args.overrides)
            check_options(pipeline, args)
            source()  # read now: the files a run writes record the code it started from
            # The heavy imports (torch, JAX) come once the config is valid.
            return pipeline.runner()(config, args)
        except KeyboardInterrupt:
            return 130


def distill_main(argv: Sequence[str] | None = None) -> int:
    """The former ``draw-distill``: one line naming the command that replaced it, exit status 2."""
    check_extras("draw-distill")
    print(
        "draw-distill: error: draw-distill was replaced by expert iteration's first iteration: "
        "run draw-train --config configs/distill_2p.yaml (a config of pipeline: exit with iterations: 1)",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
