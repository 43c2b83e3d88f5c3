"""A benchmark cell's record (``cells/KEY.json``): its schema, read as a hostile file, and what
it says of the software that made it (versions, commit)."""

from __future__ import annotations

import functools
import importlib.metadata
import platform
import subprocess
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from agents.inputs import OBS_TYPES
from train.bench.protocol import Cell
from train.config import ConfigError
from train.run_dir import RunFile, read_run_file

FORMAT = "draw-bench-cell"
VERSION = 1
#: Each algorithm's libraries, whose versions its records carry.
LIBRARIES = {
    "cfr": ("numba",),
    "sb3_ppo": ("stable-baselines3", "sb3-contrib", "torch"),
    "jax_ppo": ("jax", "flax", "optax"),
    "exit": ("torch", "numba"),
    "rllib_ppo": ("ray", "torch"),
    "nfsp": ("open_spiel",),
    "psro": ("open_spiel",),
    "mmd": ("open_spiel",),
    "mccfr": ("open_spiel",),
}


class CurvePoint(RunFile):
    """A point of a cell's learning curve: the budget spent so far and the policy's measure."""

    env_steps: int = Field(ge=0)
    cpu_seconds: float = Field(ge=0)
    score: float
    measure: dict[str, Any]


class Final(RunFile):
    """The final policy: its saved spec, and its measure (taken on the saved file)."""

    spec: str
    metric: Literal["exploitability", "panel_score"]
    value: float
    score: float
    measure: dict[str, Any]
    exploiter: dict[str, Any] | None = None


class Used(RunFile):
    env_steps: int = Field(ge=0)
    cpu_seconds: float = Field(ge=0)
    wall_seconds: float = Field(ge=0)
    measure_cpu_seconds: float = Field(ge=0)


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


def read_record(path: Path, cell: Cell | None = None) -> CellRecord:
    """A cell record, checked; with ``cell``, it must be that cell's (same settings and budget).

    Raises:
        ConfigError: naming the file and the field, or what differs.
    """
    record: CellRecord = read_run_file(path, CellRecord)
    if cell is not None:
        expected = {"algorithm": cell.algorithm, "game": cell.game.to_dict(), "seed": cell.seed,
                    "budget": cell.budget.to_dict(), "settings": dict(cell.settings), "curve_points": cell.curve_points,
                    "obs_type": cell.obs_type}
        for key, value in expected.items():
            if getattr(record, key) != value:
                raise ConfigError(
                    f"{path}: field {key!r} is {getattr(record, key)!r}, the suite's is {value!r}: move the record "
                    "away to rerun the cell, or run with the settings it was made with"
                )
    return record
