"""The one writer and reader of the project's artefacts: NumPy arrays in ``NAME.npz`` with a JSON
record ``NAME.json`` beside them.

Policy files (:mod:`agents.policy_file`), hidden-tile models (:mod:`agents.hidden_tiles`) and
tables (:mod:`agents.tabular`) are such pairs. Every record has the same header fields, around
its format's own::

    {"format": "draw-dominoes-...", "version": N,
     ...,                                 # the format's own fields
     "sha256": "...",                     # of NAME.npz: a pair that does not match is refused
     "provenance": {...}}                 # free-form JSON object: how it was made

:func:`save_artefact` writes the npz, then the record, each atomically, so an interrupted save
never leaves a pair that loads as something else. :func:`open_artefact` reads the record (bounded,
:func:`draw_env.io.untrusted.read_json`) and checks its header; :meth:`Artefact.arrays` reads the
archive (bounded), refuses it unless its sha256 is the record's, and hands the archive's names,
shapes and dtypes to the format's check before any array is read (never a pickle:
:func:`draw_env.io.untrusted.loads_npz`). Every problem is a ``ValueError`` naming the file and the
field. A format may still read its older versions (``older``): their records may lack
``sha256`` (then the archive is read unchecked against it) and name header fields otherwise
(a table's ``about`` is its ``provenance``).

This module imports numpy and draw_env only.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from draw_env.io.files import write_bytes_atomic, write_text_atomic
from draw_env.io.untrusted import MAX_ARRAY_BYTES, ArrayHeader, loads_npz, read_bytes, read_json

#: The header fields of every record, beside the format's own.
HEADER_KEYS = ("format", "version", "sha256", "provenance")
#: The largest record read by default (records are small; their provenance is free-form).
MAX_RECORD_BYTES = 4 * 1024 * 1024


def record_path(path: str | os.PathLike[str]) -> Path:
    """The JSON record beside the arrays ``path`` (``x.npz`` -> ``x.json``)."""
    return Path(path).with_suffix(".json")


def arrays_sha256(data: bytes) -> str:
    """The ``sha256`` a record holds of its archive's bytes ``data``."""
    return hashlib.sha256(data).hexdigest()


def save_artefact(
    path: str | os.PathLike[str],
    format_name: str,
    version: int,
    arrays: Mapping[str, np.ndarray],
    fields: Mapping[str, Any],
    provenance: Mapping[str, Any],
    *,
    compressed: bool = False,
) -> Path:
    """Write ``arrays`` as ``path`` (``.npz``, deflated with ``compressed``) and the record of
    ``format_name`` and ``version`` beside it: the header, the format's ``fields`` (JSON-ready, in
    their order) and ``provenance``. The npz is renamed into place before the record.

    Returns:
        The npz path written (parent directories are created).

    Raises:
        ValueError: ``path`` does not end in ``.npz``, or ``fields`` names a header field.
    """
    target = Path(path)
    if target.suffix != ".npz":
        raise ValueError(f"path must end in .npz, got {str(target)!r}")
    clash = sorted(set(fields) & set(HEADER_KEYS))
    if clash:
        raise ValueError(f"a format's own fields may not be header fields, got {clash}")
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, allow_pickle=False, **arrays)
    data = buffer.getvalue()
    record = {"format": format_name, "version": version, **fields, "sha256": arrays_sha256(data),
              "provenance": dict(provenance)}
    text = json.dumps(record, indent=1, ensure_ascii=False) + "\n"
    write_bytes_atomic(target, data)
    write_text_atomic(record_path(target), text)
    return target


def short(value: Any) -> str:
    """``repr(value)``, cut to 200 characters (a hostile record may hold anything)."""
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def fail(where: Path, key: str, message: str) -> NoReturn:
    """Raise the ``ValueError`` naming the file ``where`` and its field ``key``."""
    raise ValueError(f"{where}: '{key}' {message}")


@dataclass(frozen=True)
class Artefact:
    """An artefact whose record was read and whose header was checked (:func:`open_artefact`).

    Attributes:
        target: the ``.npz``.
        record_file: the ``.json`` beside it.
        record: the record (the format's own fields still to check).
        provenance: the record's ``provenance`` (a JSON object; empty when it has none).
        checked: whether the archive is checked against the record's ``sha256`` (an older
            version's record may lack one).
    """

    target: Path
    record_file: Path
    record: dict[str, Any]
    provenance: dict[str, Any]
    checked: bool = True

    def fail(self, key: str, message: str) -> NoReturn:
        """Raise the ``ValueError`` naming the record and its field ``key``."""
        fail(self.record_file, key, message)

    def arrays(
        self, check: Callable[[Mapping[str, ArrayHeader]], None], max_bytes: int = MAX_ARRAY_BYTES
    ) -> dict[str, np.ndarray]:
        """The archive's arrays: its bytes (at most ``max_bytes``) refused unless their sha256 is
        the record's, then ``check`` of its names, shapes and dtypes (it raises ``ValueError``)
        before any array is read (:func:`draw_env.io.untrusted.loads_npz`)."""
        data = read_bytes(self.target, max_bytes)
        if self.checked and self.record.get("sha256") != arrays_sha256(data):
            self.fail("sha256", f"does not match {self.target.name}: the arrays are not the ones this record describes")
        return loads_npz(data, str(self.target), check, max_bytes)


def open_artefact(
    path: str | os.PathLike[str],
    what: str,
    format_name: str,
    version: int,
    *,
    max_record_bytes: int = MAX_RECORD_BYTES,
    older: Mapping[int, Mapping[str, str]] | None = None,
) -> Artefact:
    """Read and check the record of the artefact ``path`` (``.npz``) of ``format_name``.

    Args:
        what: the kind of file, for messages (``"policy file"``).
        version: the version written; ``older`` maps each earlier version still read to the
            header fields its records name otherwise (old name -> header name).

    Raises:
        ValueError: either file missing, the record not a bounded JSON object of this format and
            a version read, its ``sha256`` or ``provenance`` malformed; naming the file and field.
    """
    target = Path(path)
    record_file = record_path(target)
    for needed in (target, record_file):
        if not needed.exists():  # what is there but not a regular file, the readers refuse naming it
            raise ValueError(f"{what} {str(target)!r} needs {str(needed)!r}, which does not exist")
    record = read_json(record_file, max_bytes=max_record_bytes, expect=dict)
    if not isinstance(record, dict) or record.get("format") != format_name:
        fail(record_file, "format", f"must be {format_name!r}")
    older = older or {}
    found = record.get("version")
    if found != version and not (type(found) is int and found in older):
        read = ", ".join(map(str, sorted({version, *older})))
        fail(record_file, "version", f"must be {version} (this code reads version {read}), got {short(found)}")
    if found != version:
        record = {older[found].get(key, key): value for key, value in record.items()}
    sha = record.get("sha256")
    checked = found == version or sha is not None
    if checked and (not isinstance(sha, str) or len(sha) != 64):
        fail(record_file, "sha256", f"must be the 64 hex digits of {target.name}'s sha256, got {short(sha)}")
    provenance = record.get("provenance", {})
    if not isinstance(provenance, dict):
        fail(record_file, "provenance", f"must be a JSON object, got {type(provenance).__name__}")
    return Artefact(target, record_file, record, provenance, checked)
