"""Atomic file writes: write under a temporary name in the target's folder, then rename onto it.

An interrupted run (Ctrl-C, an exception, a full disk) then never leaves a truncated file at
the target: the target holds either its old content or the whole new one, because
:func:`os.replace` within one folder (one filesystem) is atomic. The temporary name lives in
the same folder for that reason (a rename across filesystems is a copy).

Every atomic write of the project goes through :func:`atomic_path`; ``agents`` and ``train``
import it from here (``draw_env`` imports neither of them).
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["atomic_path", "check_writable", "temporary_name", "write_bytes_atomic", "write_json_atomic", "write_text_atomic"]

#: Marks every temporary name (``.{stem}.{pid}-{token}.partial{suffix}``), so that a test or a
#: person can tell leftovers of a killed process (``kill -9`` runs no cleanup) from real files.
PARTIAL = ".partial"


def temporary_name(target: Path) -> Path:
    """A fresh temporary path next to ``target`` that keeps ``target``'s suffix.

    ``runs/eval.csv`` -> ``runs/.eval.{pid}-{token}.partial.csv``: hidden (a leading dot) so a
    listing or a glob such as ``step_*.zip`` skips it, unique to this process and call (the pid
    and 32 random bits) so that two writers of one target never share a temporary file, and
    ending in the target's suffix because some writers pick the format from it or append their
    own suffix otherwise (``np.savez`` adds ``.npz``, matplotlib's ``savefig`` reads ``.png``,
    SB3's ``save`` adds ``.zip``).
    """
    return target.with_name(f".{target.stem}.{os.getpid()}-{secrets.token_hex(4)}{PARTIAL}{target.suffix}")


@contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write ``target``'s new content to; rename it onto ``target`` after.

    Use::

        with atomic_path(output / "shard.npz") as temporary:
            np.savez_compressed(temporary, observations=observations)

    The target's parent folders are created first. The temporary file (:func:`temporary_name`:
    same folder, same suffix) is not created here: the body writes it, by name, with any writer.
    When the body returns it is renamed onto ``target`` (replacing an existing file); if the body
    (or the rename) raises anything, also ``KeyboardInterrupt``, the temporary file is removed,
    ``target`` is left as it was and the exception propagates.

    Raises:
        FileNotFoundError: the body returned without writing the temporary path (nothing was
            renamed; a silent empty target would hide the bug).
    """
    final = Path(target)
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_name(final)
    try:
        yield temporary
        os.replace(temporary, final)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`atomic_path`); returns ``path`` as a Path."""
    target = Path(path)
    with atomic_path(target) as temporary:
        temporary.write_bytes(data)
    return target


def write_text_atomic(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically, encoded with ``encoding``; returns ``path`` as a Path.

    The characters are written as they are: no newline translation (``"\\n"`` stays one byte on
    every platform), so the bytes on disk are ``text.encode(encoding)``.
    """
    return write_bytes_atomic(path, text.encode(encoding))


def write_json_atomic(path: str | os.PathLike[str], data: Any, indent: int | None = None) -> Path:
    """Write ``json.dumps(data, indent=indent)`` to ``path`` atomically (UTF-8, no final newline).

    Returns ``path`` as a Path. ``json.dumps``'s defaults otherwise (ASCII only, ``", "`` and
    ``": "`` separators), so the text is exactly what ``json.dumps(data, indent=indent)`` gives.
    """
    return write_text_atomic(path, json.dumps(data, indent=indent))


def check_writable(name: str, path: str | os.PathLike[str], directory: bool = False, create: bool = True) -> Path:
    """``path`` as a ``Path`` once a file (or, with ``directory``, files inside it) can be written there.

    Meant to run before a long job (an evaluation, a game, a training run), so that a typo or an
    unwritable place fails in a second rather than after an hour. With ``create`` (the default)
    missing parent directories (or the directory itself) are created and a probe file is written
    and removed; without it nothing is created: the nearest existing folder must be a writable
    directory.

    Raises:
        ValueError: naming ``name`` and the reason.
    """
    target = Path(path)
    folder = target if directory else target.parent
    if not directory and target.is_dir():
        raise ValueError(f"{name} must be a file path, but {target} is a directory")
    if directory and target.exists() and not target.is_dir():
        raise ValueError(f"{name} must be a directory, but {target} is a file")
    if not create:
        existing = folder
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            raise ValueError(f"{name}: cannot write to {folder}: {existing} is not a directory")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise ValueError(f"{name}: cannot write to {folder}: {existing} is not writable")
        return target
    try:
        folder.mkdir(parents=True, exist_ok=True)
        descriptor, probe = tempfile.mkstemp(prefix=".draw-probe-", dir=folder)
        os.close(descriptor)
        os.unlink(probe)
    except OSError as error:
        raise ValueError(f"{name}: cannot write to {folder}: {error.strerror or error}") from None
    return target
