"""Reading the JSON files a training run keeps (run state, its config, evaluation rows) for a resume.

Such a file may have been edited, cut short or swapped: it is read with
:func:`draw_env.untrusted.read_json` (bounded size and depth) and its whole structure (keys,
types, rows) is checked against a pydantic schema *before* the run acts on it or writes anything.
Every problem is one :class:`train.config.ConfigError` line naming the file and the field, for
example ``runs/exit_2p/state.json: field 'completed' must be an integer >= 0, got -1``.
"""

from __future__ import annotations

import os
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from draw_env.untrusted import read_json
from train.config import ConfigError

T = TypeVar("T")

#: The largest run file read (an evaluation history of thousands of rows is well below it).
MAX_RUN_FILE_BYTES = 16 * 1024 * 1024


class RunFile(BaseModel):
    """Base of every run-file schema: strict types (no coercion), no NaN; unknown keys are ignored
    (a later version may add some)."""

    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="ignore")


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
