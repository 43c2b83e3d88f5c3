"""Export a trained policy as a policy file: weights-only ``.npz`` plus its JSON record.

A policy file is what to share and ship: anyone can load it without running code from it
(:mod:`agents.policy_file`), and playing it needs NumPy only. ``draw-train``'s PPO pipelines
call :func:`export_policy` at the end of a run; by hand::

    python -m train.export runs/selfplay_2p/final.zip runs/selfplay_2p/final.npz --players 2
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.policy_file import PLAYER_COUNTS, record_path, save_policy_file
from agents.sb3_checkpoint import WeightsRecord, checkpoint_record_path, read_checkpoint
from draw_env.checks import check_bool, check_choice
from draw_env.commands import reported_errors
from draw_env.io.files import check_distinct
from draw_env.io.untrusted import read_json

if TYPE_CHECKING:
    from typing_extensions import Unpack


def export_policy(
    source: Any, path: str | os.PathLike[str], *, num_players: int | None = None, **record: Unpack[WeightsRecord]
) -> Path:
    """Write ``source``'s networks as the policy file ``path`` (``.npz``) and its ``.json`` record.

    Args:
        source: a ``MaskablePPO`` model, its ``policy``, or the path of a checkpoint ``.zip``
            (read weights-only: its ``policy.pth`` and its side file ``NAME.policy.json``).
        path: the ``.npz`` to write; the record goes beside it (``NAME.json``). Both are written
            atomically.
        num_players: the table size the policy was trained for; required for a model, and for a
            checkpoint without a side file.
        record: what the file records beside the networks
            (:class:`agents.sb3_checkpoint.WeightsRecord`): ``value`` (default True) keeps the
            value network: pass False when it was not trained, so that nobody mistakes it for a
            trained critic; ``provenance``, JSON data: what it was trained or distilled from, the
            commands, the results; ``value_unit``, zero-sum hand points per unit of the value
            network's output (:attr:`train.learner_config.LearnerSettings.value_unit`, ``None``:
            unknown, no value is shown); ``game``, the variant a model plays (``None``: the seeds' game;
            a checkpoint ``.zip`` says its own in its side file).

    Returns:
        The ``.npz`` path.

    Raises:
        ValueError: if the network is not an MLP policy, the player count is missing or
            contradicts the checkpoint's side file, or ``path`` does not end in ``.npz``.
    """
    value = check_bool("value", record.get("value", True))
    if num_players is not None:
        check_choice("num_players", num_players, PLAYER_COUNTS)
    if isinstance(source, (str, os.PathLike)):
        weights = read_checkpoint(source)
        if num_players is not None and weights.num_players not in (None, num_players):
            raise ValueError(
                f"num_players={num_players} contradicts the side file of {str(source)!r}, "
                f"which says {weights.num_players}"
            )
        weights = dataclasses.replace(
            weights,
            num_players=num_players if num_players is not None else weights.num_players,
            value=weights.value if value else None,
            provenance={"exported_from": str(source), **(record.get("provenance") or {})},
            value_unit=record.get("value_unit") if value else None,
        )
    else:
        from train.sb3_adapter import weights_of

        weights = weights_of(source, num_players, **record)
    if weights.num_players is None:
        raise ValueError(
            f"num_players must be one of {', '.join(map(str, PLAYER_COUNTS))} to export, got None"
        )
    return save_policy_file(weights, path)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m train.export CHECKPOINT OUTPUT.npz [--players N] [--no-value] [--provenance JSON]``."""
    parser = argparse.ArgumentParser(
        prog="python -m train.export",
        description="Convert a training checkpoint (.zip) into a policy file (.npz + .json) safe to share.",
    )
    parser.add_argument(
        "checkpoint", help="a MaskablePPO checkpoint .zip saved by draw-train"
    )
    parser.add_argument("output", help="the policy file to write (.npz; the .json record goes beside it)")
    parser.add_argument(
        "--players", type=int, choices=PLAYER_COUNTS, help="default: the checkpoint's side file"
    )
    parser.add_argument("--no-value", action="store_true", help="leave out the value network")
    parser.add_argument("--provenance", help="a JSON file whose object is stored as the record's provenance")
    parser.add_argument(
        "--value-unit", type=float,
        help="zero-sum hand points per unit of the value network's output, 1 / the run's reward_scale "
        "(50 for reward_scale 0.02); default: none recorded, and no value is shown",
    )
    args = parser.parse_args(argv)
    with reported_errors(parser):
        check_distinct(
            [("OUTPUT", args.output), ("OUTPUT's record", record_path(args.output))],
            [
                ("CHECKPOINT", args.checkpoint),
                ("CHECKPOINT's side file", checkpoint_record_path(args.checkpoint)),
                ("--provenance", args.provenance),
            ],
        )
        provenance = None if args.provenance is None else read_json(args.provenance)
        if provenance is not None and not isinstance(provenance, dict):
            raise ValueError(f"{args.provenance}: must hold a JSON object, got {type(provenance).__name__}")
        written = export_policy(
            args.checkpoint,
            args.output,
            num_players=args.players,
            value=not args.no_value,
            provenance=provenance,
            value_unit=args.value_unit,
        )
    print(f"Policy file: {written} (record: {written.with_suffix('.json')})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
