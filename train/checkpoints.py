"""``draw-train`` checkpoints: written atomically, read back for ``--resume`` without unpickling side files.

A checkpoint ``step_N.zip`` (the SB3 model with its optimizer, as ``MaskablePPO.save`` writes it)
has three side files: ``step_N.policy.json`` (what
:func:`agents.sb3_checkpoint.read_checkpoint` needs to play the zip as weights only),
``step_N.pool.npz`` (the snapshot pool, float32 arrays ``{i}/{j}/weight`` and ``{i}/{j}/bias``:
snapshot ``i``'s layer ``j``) and ``step_N.state.json`` (the run state: ``timesteps``, training
clock, evaluation history, the run's config, and what the pool's arrays are).

:func:`save_checkpoint` writes everything under temporary names, renames the side files, and
renames the zip last: a zip on disk always has its side files. :func:`read_resume_state` checks a
checkpoint before a run writes anything. Resuming loads the zip itself with
``MaskablePPO.load``, which unpickles its ``data`` entry: resume only from checkpoints your own
runs wrote (``docs/agents.md``, which files are safe to load).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from agents.inputs import DEFAULT_OBS_TYPE, OBS_TYPES
from agents.policy_file import ACTIVATIONS, PolicyWeights
from agents.policy_network import NumpyPolicy
from agents.sb3_checkpoint import read_checkpoint, read_zip_member, write_checkpoint_record
from arena.learner import EvalRow
from draw_env.checks import is_integer
from draw_env.features import FEATURES
from draw_env.io.files import atomic_path
from draw_env.io.untrusted import ArrayHeader, loads_json, read_npz
from draw_env.rules import DrawGame
from train.config import ConfigError
from train.run_dir import RunFile, read_run_file, row_schema, seconds

STATE_FORMAT = "draw-train-state"
STATE_VERSION = 1
#: Config keys that fix the model: a resume under other values would keep the old model silently.
MODEL_KEYS = (
    "num_players", "max_pip", "hand_size", "protected", "features", "obs_type", "ppo.net_arch", "ppo.activation"
)
#: Model keys added since earlier checkpoints were saved, with the value those played: the seeds'
#: game, read through observations.
_ADDED_MODEL_KEYS = {"max_pip": 6, "hand_size": None, "protected": 2, "obs_type": DEFAULT_OBS_TYPE}


def pool_path(checkpoint: Path) -> Path:
    return checkpoint.with_suffix(".pool.npz")


def state_path(checkpoint: Path) -> Path:
    return checkpoint.with_suffix(".state.json")


def _pool_arrays(snapshots: Sequence[NumpyPolicy]) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
    arrays: dict[str, np.ndarray] = {}
    described = []
    for index, snapshot in enumerate(snapshots):
        weights = snapshot.weights
        for layer, (weight, bias) in enumerate(weights.policy):
            arrays[f"{index}/{layer}/weight"] = weight
            arrays[f"{index}/{layer}/bias"] = bias
        described.append(
            {
                "layers": len(weights.policy),
                "activation": weights.activation,
                "features": weights.features,
                "num_players": weights.num_players,
                **({"variant": dict(weights.variant)} if weights.variant is not None else {}),
                **({"obs_type": weights.obs_type} if weights.obs_type != DEFAULT_OBS_TYPE else {}),
            }
        )
    return arrays, described


def save_model(
    model: Any,
    path: Path,
    *,
    num_players: int,
    features: str,
    side_files: Mapping[Path, bytes] | None = None,
    game: DrawGame | None = None,
    obs_type: str = DEFAULT_OBS_TYPE,
) -> None:
    """Write the model zip ``path``, its ``.policy.json`` and ``side_files``, the zip renamed last
    (``game``: the variant the model plays, recorded in ``.policy.json``; ``None``: the seeds' game;
    ``obs_type``: what it reads, recorded there too).

    Every file is written under a temporary name and renamed into place, so that an interrupted
    save leaves no truncated file and no zip without its side files.
    """
    # The zip's atomic_path is entered first so that it renames last; the side files rename when
    # the inner stack closes, after the model is saved and before the record and the zip.
    with atomic_path(path) as zip_temporary:
        with ExitStack() as side_files_written:
            for target, data in (side_files or {}).items():
                side_files_written.enter_context(atomic_path(target)).write_bytes(data)
            model.save(zip_temporary)  # the temporary name ends in .zip, so SB3 adds no suffix
        write_checkpoint_record(
            path,
            num_players=num_players,
            features=features,
            activation=model.policy.activation_fn.__name__.lower(),
            game=game,
            obs_type=obs_type,
        )


def save_checkpoint(
    model: Any,
    path: Path,
    snapshots: Sequence[NumpyPolicy],
    state: Mapping[str, Any],
    *,
    num_players: int,
    features: str,
    game: DrawGame | None = None,
    obs_type: str = DEFAULT_OBS_TYPE,
) -> None:
    """Write the checkpoint ``path`` (the model zip) and all its side files (see :func:`save_model`).

    Args:
        model: the ``MaskablePPO`` model.
        snapshots: the snapshot pool.
        state: run state (JSON data) stored in ``.state.json``, with ``timesteps`` and the pool's layout added.
        num_players, features, game, obs_type: what the policy plays and reads, for
            ``.policy.json`` (``game``: the variant, ``None`` for the seeds' game).
    """
    arrays, described = _pool_arrays(snapshots)
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **arrays)
    record = {
        "format": STATE_FORMAT,
        "version": STATE_VERSION,
        "timesteps": int(model.num_timesteps),
        **state,
        "snapshots": described,
    }
    side = {
        pool_path(path): buffer.getvalue(),
        state_path(path): (json.dumps(record, indent=1) + "\n").encode("utf-8"),
    }
    save_model(model, path, num_players=num_players, features=features, side_files=side, game=game, obs_type=obs_type)


@dataclass
class ResumeState:
    """What ``--resume`` continues from, read and checked before anything is written."""

    checkpoint: Path
    timesteps: int
    train_seconds: float
    eval_rows: list[dict[str, Any]]
    snapshots: list[NumpyPolicy]


def _dotted(config: Mapping[str, Any], key: str) -> Any:
    value: Any = config
    for part in key.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


#: The largest ``data`` entry of an SB3 zip read for its timestep count (it is JSON of a few kB).
MAX_DATA_BYTES = 16 * 1024 * 1024


def _zip_timesteps(path: Path, name: str) -> int:
    """``num_timesteps`` from the zip's ``data`` entry, read as bounded JSON (nothing decoded)."""
    try:
        payload = read_zip_member(path, "data", MAX_DATA_BYTES, what="a model zip written by SB3")
        data = loads_json(payload.decode("utf-8", errors="strict"), f"{path}'s data entry")
    except UnicodeDecodeError:
        raise ConfigError(f"{name}: not a model zip written by SB3 (its data entry is not UTF-8)") from None
    except ValueError as error:
        raise ConfigError(f"{name}: {error}") from None
    steps = data.get("num_timesteps") if isinstance(data, dict) else None
    if not is_integer(steps) or steps < 0:
        raise ConfigError(f"{name}: not a model zip written by SB3 (its data entry has no num_timesteps)")
    return int(steps)


class SnapshotEntry(RunFile):
    """One snapshot of the pool, as ``.state.json`` describes it."""

    layers: int = Field(ge=1, le=64)
    activation: Literal[ACTIVATIONS]  # type: ignore[valid-type]
    features: Literal[FEATURES]  # type: ignore[valid-type]
    num_players: Literal[2, 3, 4]
    variant: dict[str, int] | None = None  # the seeds' game when absent
    obs_type: Literal[OBS_TYPES] = DEFAULT_OBS_TYPE  # type: ignore[valid-type]


EVAL_ROW = row_schema(EvalRow)


class TrainState(RunFile):
    """``step_N.state.json``: what :func:`save_checkpoint` writes beside the model zip."""

    format: Literal[STATE_FORMAT]  # type: ignore[valid-type]
    version: Literal[STATE_VERSION]  # type: ignore[valid-type]
    timesteps: int = Field(ge=0)
    train_seconds: float = seconds()
    eval_rows: list[EVAL_ROW]  # type: ignore[valid-type]
    config: dict[str, Any]
    snapshots: list[SnapshotEntry]


def read_resume_state(checkpoint: str | Path, config: Mapping[str, Any]) -> ResumeState:
    """Read ``checkpoint``'s side files and check them against the zip and against ``config``.

    Args:
        checkpoint: a ``.zip`` written by :func:`save_checkpoint`.
        config: the new run's config (as a dict).

    Raises:
        ConfigError: if the checkpoint or a side file is missing or malformed, the side files do
            not belong to the zip, or ``config`` contradicts the checkpoint on a key of
            :data:`MODEL_KEYS` (the message names every such key with both values).
    """
    path = Path(checkpoint)
    name = f"--resume {str(path)!r}"
    if path.suffix != ".zip":
        raise ConfigError(
            f"{name}: a checkpoint is a .zip written by draw-train (checkpoints/step_N.zip or final.zip)"
        )
    if not path.is_file():
        raise ConfigError(f"{name}: no such checkpoint")
    for needed in (state_path(path), pool_path(path)):
        if not needed.is_file():
            old = path.with_suffix(".pool.pkl").is_file()
            reason = (
                " (it was written by an older draw-train whose pickled .pool.pkl is never loaded)"
                if old
                else ""
            )
            raise ConfigError(f"{name}: its side file {needed.name} is missing{reason}")
    state = read_run_file(state_path(path), TrainState, what=f"{name}: its side file {state_path(path).name}")
    timesteps = _zip_timesteps(path, name)
    if timesteps != state.timesteps:
        raise ConfigError(
            f"{name}: its side files belong to step {state.timesteps}, the model to step {timesteps}"
        )
    try:
        read_checkpoint(path)  # the weights load (as weights only) before the run writes anything
    except ValueError as error:
        raise ConfigError(f"{name}: {error}") from None
    saved = {**_ADDED_MODEL_KEYS, **state.config}
    contradictions = [
        f"{key} is {_dotted(saved, key)!r} in the checkpoint and {_dotted(config, key)!r} in the config"
        for key in MODEL_KEYS
        if _dotted(saved, key) != _dotted(config, key)
    ]
    if contradictions:
        raise ConfigError(f"{name} contradicts the config: " + "; ".join(contradictions))
    return ResumeState(
        checkpoint=path,
        timesteps=timesteps,
        train_seconds=state.train_seconds,
        eval_rows=[row.model_dump() for row in state.eval_rows],
        snapshots=_read_pool(pool_path(path), state.snapshots, name),
    )


def _read_pool(path: Path, described: list[SnapshotEntry], name: str) -> list[NumpyPolicy]:
    """The snapshot pool: names, dtypes and ranks checked from the headers before any array is read."""
    expected = {
        f"{index}/{layer}/{part}": 2 if part == "weight" else 1
        for index, entry in enumerate(described)
        for layer in range(entry.layers)
        for part in ("weight", "bias")
    }

    def check(headers: Mapping[str, ArrayHeader]) -> None:
        if set(headers) != set(expected):
            unexpected = sorted(set(headers) ^ set(expected))[:4]
            raise ValueError(f"its arrays do not match the snapshots of the state file (first differences: {unexpected})")
        for key, rank in expected.items():
            if headers[key].dtype != np.float32 or len(headers[key].shape) != rank:
                raise ValueError(f"{key} must be a float32 array of rank {rank}, got {headers[key].dtype} {headers[key].shape}")

    try:
        arrays = read_npz(path, check)
        return [
            NumpyPolicy(
                PolicyWeights(
                    policy=tuple(
                        (arrays[f"{index}/{layer}/weight"], arrays[f"{index}/{layer}/bias"])
                        for layer in range(entry.layers)
                    ),
                    activation=entry.activation,
                    features=entry.features,
                    num_players=entry.num_players,
                    variant=entry.variant,
                    obs_type=entry.obs_type,
                )
            )
            for index, entry in enumerate(described)
        ]
    except ValueError as error:
        raise ConfigError(f"{name}: its snapshot pool {path.name} is malformed ({error})") from None
