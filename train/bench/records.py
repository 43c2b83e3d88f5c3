"""A benchmark cell's record (``cells/KEY.json``): its schema, read as a hostile file, and what
it says of the software that made it (versions, commit)."""

from __future__ import annotations

import functools
import importlib.metadata
import json
import platform
import subprocess
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from agents.inputs import OBS_TYPES
from draw_env.io.files import write_text_atomic
from train.bench.protocol import Cell
from train.config import ConfigError
from train.run_dir import RunFile, check_run_data, read_run_file

FORMAT = "draw-bench-cell"
VERSION = 1
#: The largest magnitude of a score or a raw value (exploitability, points per hand) a record may
#: hold: a hand of any game the benchmark plays is worth a few hundred points at most, so anything
#: near this is no measurement (and values near a float's range overflow the aggregate to NaN).
MAX_VALUE = 1e6
#: The most CPU or wall seconds a record may count (a budget allows 1e7 CPU seconds).
MAX_SECONDS = 1e9
#: The most environment steps a record may count (a budget allows 1e13).
MAX_STEPS = 10**15

#: A score or raw value: finite (the base model allows no NaN or infinity) and bounded.
Value = Annotated[float, Field(ge=-MAX_VALUE, le=MAX_VALUE)]
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS)]
Steps = Annotated[int, Field(ge=0, le=MAX_STEPS)]
#: Each algorithm's libraries, whose versions its records carry.
LIBRARIES = {
    "cfr": ("numba",),
    "sb3_ppo": ("stable-baselines3", "sb3-contrib", "torch"),
    "jax_ppo": ("jax", "flax", "optax"),
    "jax_mmd": ("jax", "flax", "optax"),
    "exit": ("torch", "numba"),
    "rllib_ppo": ("ray", "torch"),
    "nfsp": ("open_spiel",),
    "psro": ("open_spiel",),
    "mmd": ("open_spiel",),
    "mccfr": ("open_spiel",),
}


class CurvePoint(RunFile):
    """A point of a cell's learning curve: the budget spent so far and the policy's measure."""

    env_steps: Steps
    cpu_seconds: Seconds
    score: Value
    measure: dict[str, Any]


class Final(RunFile):
    """The final policy: its saved spec, and its measure (taken on the saved file)."""

    spec: str
    metric: Literal["exploitability", "panel_score"]
    value: Value
    score: Value
    measure: dict[str, Any]
    exploiter: dict[str, Any] | None = None


class Used(RunFile):
    env_steps: Steps
    cpu_seconds: Seconds
    wall_seconds: Seconds
    measure_cpu_seconds: Seconds


class CellRecord(RunFile):
    """``cells/KEY.json``: what one cell ran and measured (read as a hostile file)."""

    format: Literal["draw-bench-cell"]
    version: Literal[1]
    algorithm: str
    settings: dict[str, Any]
    game: dict[str, Any]
    seed: int = Field(ge=0)
    budget: dict[str, Any]
    curve_points: int = Field(ge=1)
    obs_type: Literal[OBS_TYPES] = "observation"  # type: ignore[valid-type]  # absent in the records before it
    step_unit: str
    used: Used
    versions: dict[str, str | None]
    commit: str | None
    curve: list[CurvePoint] = Field(min_length=1, max_length=100_000)
    final: Final
    command: str


def versions(name: str) -> dict[str, str | None]:
    """Python's, NumPy's, torch's, JAX's and the algorithm's libraries' versions (``None``: not installed)."""

    def version(distribution: str) -> str | None:
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            return None

    names = ("numpy", "torch", "jax", *LIBRARIES.get(name, ()))
    return {"python": platform.python_version(), **{library: version(library) for library in dict.fromkeys(names)}}


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The checkout's commit (``+dirty`` when tracked files differ from it), or ``None`` outside git."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=30, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD", "--"], capture_output=True,
                               timeout=30).returncode != 0
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")


def read_record(path: Path) -> CellRecord:
    """A cell record, checked (:class:`CellRecord`: its whole structure, every figure finite and bounded).

    Raises:
        ConfigError: naming the file and the field.
    """
    record: CellRecord = read_run_file(path, CellRecord)
    return record


def check_cell(record: CellRecord, cell: Cell, path: Path) -> None:
    """Refuse the record ``path`` of ``cell`` if it was made with other settings or another budget.

    Raises:
        ConfigError: naming the file, the field and both values.
    """
    expected = {"algorithm": cell.algorithm, "game": cell.game.to_dict(), "seed": cell.seed,
                "budget": cell.budget.to_dict(), "settings": dict(cell.settings), "curve_points": cell.curve_points,
                "obs_type": cell.obs_type}
    for key, value in expected.items():
        if getattr(record, key) != value:
            raise ConfigError(
                f"{path}: field {key!r} is {getattr(record, key)!r}, the suite's is {value!r}: move the record "
                "away to rerun the cell, or run with the settings it was made with"
            )


def write_record(path: Path, record: dict[str, Any]) -> None:
    """Write a cell's record atomically, once it passes the checks its reader makes
    (:func:`read_record`): a record the benchmark cannot read back is never written.

    Raises:
        ConfigError: naming the cell's file and the field (a NaN anywhere included).
    """
    check_run_data(record, CellRecord, str(path))
    try:
        text = json.dumps(record, indent=1, allow_nan=False)
    except ValueError as error:  # a NaN or an infinity in a free-form part (a measure)
        raise ConfigError(f"{path}: {error}") from None
    write_text_atomic(path, text)
