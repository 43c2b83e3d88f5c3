"""Reading the JSON files a training run keeps (run state, its config, evaluation rows) for a resume.

Such a file may have been edited, cut short or swapped: it is read with
:func:`draw_env.untrusted.read_json` (bounded size and depth) and its whole structure (keys,
types, rows) is checked against a pydantic schema *before* the run acts on it or writes anything.
Every problem is one :class:`train.config.ConfigError` line naming the file and the field, for
example ``runs/exit_2p/state.json: field 'completed' must be an integer >= 0, got -1``.
"""

from __future__ import annotations

import dataclasses
import os
import typing
from collections.abc import Collection, Mapping
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from draw_env.files import check_writable
from draw_env.untrusted import ArrayHeader, read_json, read_npz
from train.config import ConfigError

T = TypeVar("T")

#: The largest run file read (an evaluation history of thousands of rows is well below it).
MAX_RUN_FILE_BYTES = 16 * 1024 * 1024


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


def check_output_dir_writable(output_dir: str | os.PathLike[str]) -> None:
    """Refuse an ``output_dir`` where the run could not write (nothing is created here).

    Raises:
        ConfigError: naming the config key ``output_dir`` and the reason.
    """
    try:
        check_writable("config key 'output_dir'", output_dir, directory=True, create=False)
    except ValueError as error:
        raise ConfigError(str(error)) from None


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
        return read_npz(path, check)
    except ValueError as error:
        raise ConfigError(str(error)) from None
