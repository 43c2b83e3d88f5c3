"""PPO in JAX from the command line: train a Draw dominoes policy end to end, export a policy file.

The training is the pipeline ``jax_ppo`` of ``draw-train`` (:mod:`train.jax_ppo`; a config such as
``configs/jax_ppo_quick.yaml`` runs it with a run folder and evaluations); this script runs the
same trainer from flags, prints its progress and writes the policy file alone.

Example::

    nice python examples/jax_ppo.py --output runs/jax_ppo/policy.npz
    draw-eval "ppo:path=runs/jax_ppo/policy.npz" heaviest --games 1000 --seed 0
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax

from agents.policy_file import save_policy_file
from train.config import build
from train.jax_ppo.config import OPPONENTS, JaxPPOConfig
from train.jax_ppo.policy import ACTIVATIONS, encode, heaviest_action, policy_weights, random_action
from train.jax_ppo.trainer import Result, Trainer, summary, train

__all__ = ["JaxPPOConfig", "Result", "Trainer", "encode", "heaviest_action", "main", "random_action", "summary", "train"]


def _opponents(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(","))
    if not names or not set(names) <= set(OPPONENTS):
        raise argparse.ArgumentTypeError(f"a comma-separated list of {', '.join(OPPONENTS)}, got {text!r}")
    return names


def _hidden(text: str) -> tuple[int, ...]:
    try:
        widths = tuple(int(width) for width in text.split(","))
    except ValueError:
        widths = ()
    if not widths or min(widths) < 1:
        raise argparse.ArgumentTypeError(f"comma-separated positive widths, got {text!r}")
    return widths


def build_parser() -> argparse.ArgumentParser:
    defaults = build(JaxPPOConfig, {})
    parser = argparse.ArgumentParser(
        description="Train a Draw dominoes policy with PPO in JAX (rollouts and updates in one jitted "
        "function) and export it as a policy file for draw-eval.",
    )
    parser.add_argument(
        "--output", type=Path, help="write the policy file here (.npz, with its .json record)"
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=defaults.num_players)
    parser.add_argument("--num-envs", type=int, default=defaults.num_envs, help="games played side by side")
    parser.add_argument(
        "--num-steps", type=int, default=defaults.num_steps, help="actions per game per update"
    )
    parser.add_argument("--updates", type=int, default=defaults.updates)
    parser.add_argument(
        "--chunk", type=int, default=defaults.chunk, help="updates per jitted call (progress line)"
    )
    parser.add_argument("--update-epochs", type=int, default=defaults.update_epochs)
    parser.add_argument("--num-minibatches", type=int, default=defaults.num_minibatches)
    parser.add_argument(
        "--lr", type=float, default=defaults.learning_rate, help="Adam's rate, decayed linearly to 0"
    )
    parser.add_argument("--ent-coef", type=float, default=defaults.ent_coef)
    parser.add_argument("--hidden", type=_hidden, default=defaults.hidden, help="hidden widths, e.g. 256,256")
    parser.add_argument("--activation", choices=tuple(ACTIVATIONS), default=defaults.activation)
    parser.add_argument(
        "--opponents",
        type=_opponents,
        default=defaults.opponents,
        help=f"opponent of each game slot, round robin (default {','.join(defaults.opponents)})",
    )
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser


def main(argv: Sequence[str] | None = None, compiler_options: dict[str, Any] | None = None) -> Result:
    """The command: parse ``argv``, train, export, print the summary (``compiler_options``: see :func:`train`)."""
    args = build_parser().parse_args(argv)
    if args.output is not None and args.output.suffix != ".npz":
        build_parser().error(f"--output must end in .npz, got {str(args.output)!r}")
    try:
        config = build(JaxPPOConfig, {
            "num_players": args.players,
            "num_envs": args.num_envs,
            "num_steps": args.num_steps,
            "updates": args.updates,
            "chunk": min(args.chunk, args.updates),
            "update_epochs": args.update_epochs,
            "num_minibatches": args.num_minibatches,
            "learning_rate": args.lr,
            "ent_coef": args.ent_coef,
            "hidden": list(args.hidden),
            "activation": args.activation,
            "opponents": list(args.opponents),
            "seed": args.seed,
        })
    except ValueError as error:
        build_parser().error(str(error))
    result = train(config, progress=not args.quiet, compiler_options=compiler_options)
    if args.output is not None:
        provenance = {
            "trainer": "examples/jax_ppo.py (PPO in JAX on draw_env.jax)",
            "command": " ".join(["python", "examples/jax_ppo.py", *(sys.argv[1:] if argv is None else argv)]),
            "config": config.training(),
            "env_steps": result.env_steps,
            "wall_seconds": round(result.wall_seconds, 1),
            "cpu_seconds": round(result.cpu_seconds, 1),
            "backend": jax.default_backend(),
        }
        weights = policy_weights(
            result.trainer.graphdef, result.params, config.activation, result.trainer.game, provenance,
            value_unit=config.value_unit,
        )
        save_policy_file(weights, args.output)
    if not args.quiet:
        print(summary(result, args.output))
    return result


if __name__ == "__main__":
    main()
