"""A training run's output directory: one protocol for every pipeline of ``draw-train``.

:class:`RunDir` checks ``output_dir`` before a run writes anything: a directory (or none yet)
where the run can write, empty or holding a run of the same pipeline whose saved settings
(``config.json``) match the config, but for the pipeline's free keys (those that do not change
what the run computes, such as ``iterations`` or ``progress_bar``). :func:`read_run_file` reads
the JSON files a run keeps (which may have been edited, cut short or swapped) bounded, and checks
their whole structure against a pydantic schema *before* the run acts on them. Every problem is
one :class:`~train.config.ConfigError` line naming the file and the field. The protocol as users
see it (resume, ``--overwrite``): the docs page "Training" (``docs/training.md``, run directories).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import typing
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from draw_env.files import check_writable, write_json_atomic
from draw_env.untrusted import ArrayHeader, read_json, read_npz
from train.config import ConfigError, Section

T = TypeVar("T")

#: The largest run file read (an evaluation history of thousands of rows is well below it).
MAX_RUN_FILE_BYTES = 16 * 1024 * 1024
#: The largest data shard a run reads back, its file and its arrays alike. An iteration of the
#: shipped 2-player expert iteration holds about a million decisions, 0.8 GB of arrays (more than
#: a received file's default bound); this leaves room for four such iterations in one shard.
MAX_SHARD_BYTES = 4 * 1024 * 1024 * 1024
#: The pipeline of a saved config without a ``pipeline`` key (self-play's configs name none).
DEFAULT_PIPELINE = "selfplay"


class RunDir:
    """``config.output_dir``, checked for a run of ``pipeline`` (nothing is written or removed here).

    Args:
        config: the run's validated config (it has an ``output_dir``).
        pipeline: the pipeline's name, as ``config.json``'s ``pipeline`` key holds it.
        overwrite: start over (:meth:`start` removes the earlier run).
        free: top-level keys that may differ from the saved config when the run continues.

    Attributes:
        path: the directory.
        earlier: the saved config of the run to continue, or ``None`` for a new run.

    Raises:
        ConfigError: ``output_dir`` is a file or cannot be written; it holds files but no run
            (refused even with ``overwrite``: nothing of someone else's is removed), a run of
            another pipeline (without ``overwrite``), or a run made with other settings (without
            ``overwrite``; the message names every differing key with both values).
    """

    def __init__(self, config: Section, pipeline: str, *, overwrite: bool = False, free: Collection[str] = ()) -> None:
        self.path = Path(config.output_dir)
        self.pipeline = pipeline
        self.overwrite = overwrite
        self.settings = config.to_dict()
        # A key the saved config lacks (added since) counts as its default.
        self.defaults = type(config)().to_dict()
        self.earlier: dict[str, Any] | None = None
        self.earlier = self._check(free)

    def __str__(self) -> str:
        return str(self.path)

    def _check(self, free: Collection[str]) -> dict[str, Any] | None:
        where = f"output_dir {str(self.path)!r}"
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(f"config key 'output_dir' must be a directory, got the file {str(self.path)!r}")
        try:
            check_writable("config key 'output_dir'", self.path, directory=True, create=False)
        except ValueError as error:
            raise ConfigError(str(error)) from None
        if not self.path.is_dir() or not any(self.path.iterdir()):
            return None
        if not (self.path / "config.json").is_file():
            raise ConfigError(
                f"{where} already holds files but no run (no config.json): choose another output_dir"
                + ("; --overwrite does not remove it" if self.overwrite else "")
            )
        earlier = read_run_file(self.path / "config.json", dict[str, Any])
        if self.overwrite:
            return None
        if earlier.get("pipeline") != self.settings.get("pipeline"):
            raise ConfigError(
                f"{where} holds a run of pipeline: {earlier.get('pipeline', DEFAULT_PIPELINE)}, not {self.pipeline}: "
                "pass --overwrite to replace it, or choose another output_dir"
            )
        self.earlier = earlier
        self.check_keys([key for key in self.settings if key not in free])
        return earlier

    def check_keys(self, keys: Collection[str]) -> None:
        """Refuse to continue a run whose saved settings differ from the config's on ``keys``.

        Raises:
            ConfigError: naming every differing key with both values.
        """
        earlier = {**self.defaults, **(self.earlier or {})}
        differing = [key for key in keys if self.earlier is not None and earlier.get(key) != self.settings[key]]
        if differing:
            details = "; ".join(f"{key} is {earlier.get(key)!r} there, {self.settings[key]!r} here" for key in differing)
            raise ConfigError(
                f"output_dir {str(self.path)!r} holds a run made with other settings ({details}): rerun with "
                "its settings to continue it, pass --overwrite to replace it, or choose another output_dir"
            )

    @property
    def resuming(self) -> bool:
        """Whether the directory holds an earlier run of these settings to continue."""
        return self.earlier is not None

    def start(self) -> None:
        """Remove the earlier run (with ``overwrite``), create the directory, save the config."""
        if self.overwrite and self.path.is_dir():
            shutil.rmtree(self.path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.write_json("config.json", self.settings)

    def write_json(self, name: str, data: Any) -> None:
        """``name`` in the directory, written atomically (indented JSON)."""
        write_json_atomic(self.path / name, data, indent=1)

    def complete(self, progress: str, summary: str = "summary.json") -> str:
        """The line a rerun of a finished run prints before its results: ``DIR is complete (...)``."""
        return f"{self.path} is complete ({progress}); its summary: {self.path / summary}"


class RunFile(BaseModel):
    """Base of every run-file schema: strict types (no coercion), no NaN; unknown keys are ignored
    (a later version may add some)."""

    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="ignore")


def row_schema(cls: type) -> type[RunFile]:
    """A strict schema for a JSON object of the dataclass ``cls``'s fields (an evaluation row).

    Pydantic's strict mode takes only instances for a dataclass, never JSON: hence a model.
    """
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {
        field.name: (hints[field.name], ... if field.default is dataclasses.MISSING else field.default)
        for field in dataclasses.fields(cls)
    }
    return create_model(cls.__name__, __base__=RunFile, **fields)


def seconds() -> Any:
    """A field of elapsed seconds: a finite number >= 0."""
    return Field(ge=0.0, allow_inf_nan=False)


def read_run_file(path: str | os.PathLike[str], schema: type[T] | Any, *, what: str | None = None) -> T:
    """The JSON file ``path`` validated as ``schema`` (a pydantic model or a type such as ``list[Row]``).

    Args:
        what: how messages name the file (default: its path).

    Raises:
        ConfigError: the file is missing, unreadable, not bounded JSON, or not of ``schema``.
    """
    name = what or os.fspath(path)
    try:
        data = read_json(path, max_bytes=MAX_RUN_FILE_BYTES)
    except ValueError as error:
        raise ConfigError(str(error) if what is None else f"{name}: {error}") from None
    try:
        return TypeAdapter(schema).validate_python(data, strict=True)  # type: ignore[no-any-return]
    except ValidationError as error:
        raise ConfigError(f"{name}: {_describe(error)}") from None


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"])
    value = repr(first.get("input"))
    if len(value) > 120:
        value = value[:120] + "..."
    where = f"field {field!r}" if field else "the file"
    message = first["msg"][0].lower() + first["msg"][1:]
    return f"{where}: {message}, got {value}"


def read_rows(
    path: str | os.PathLike[str],
    columns: Mapping[str, int],
    scalars: Collection[str] = (),
    optional: Collection[str] = (),
) -> dict[str, np.ndarray]:
    """The arrays of a data shard ``.npz`` a run wrote (:func:`draw_env.untrusted.read_npz`).

    Args:
        columns: name -> rank of each array with one row per item (all with the same row count).
        scalars: names of 0-d arrays that must be present; ``optional``: those that may be.

    Raises:
        ConfigError: another set of arrays, another rank, rows that differ, or a malformed file.
    """
    required = {**columns, **dict.fromkeys(scalars, 0)}
    allowed = {**required, **dict.fromkeys(optional, 0)}

    def check(headers: Mapping[str, ArrayHeader]) -> None:
        if not set(required) <= set(headers) <= set(allowed):
            raise ValueError(f"holds the arrays {sorted(headers)[:8]}, expected {sorted(required)}")
        for name, header in headers.items():
            if len(header.shape) != allowed[name]:
                raise ValueError(f"{name} must have {allowed[name]} dimensions, got the shape {header.shape}")
        if len({headers[name].shape[0] for name in columns}) > 1:
            raise ValueError(f"its arrays differ in rows: {[headers[name].shape for name in columns]}")

    try:
        return read_npz(path, check, MAX_SHARD_BYTES)
    except ValueError as error:
        raise ConfigError(str(error)) from None
