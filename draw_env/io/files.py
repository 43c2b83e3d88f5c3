"""Atomic file writes: write under a temporary name in the target's folder, then rename onto it.

An interrupted run (Ctrl-C, an exception, a full disk) then never leaves a truncated file at
the target: the target holds either its old content or the whole new one, because
:func:`os.replace` within one folder (one filesystem) is atomic. The temporary name lives in
the same folder for that reason (a rename across filesystems is a copy).

Only regular files are written (and read: :func:`draw_env.io.untrusted.read_bytes` refuses the
others, naming them with :func:`file_kind`). A symbolic link at the target is followed: its target is the
file replaced (the link stays a link). A directory, a device (such as ``/dev/null``), a FIFO or a
socket at the target, directly or behind a link, is refused with a ``ValueError`` naming the path
and what it is: a rename would replace the special file itself. :func:`check_writable` checks it
before a long job, :func:`atomic_path` again when it writes (the path may have changed since).
:func:`check_distinct` refuses a command's output path that is one of its inputs or another of
its outputs. On the reading side, :func:`check_regular_file` refuses an input that is not a
regular file before it is opened (opening a FIFO waits for a writer), and :func:`not_regular`
says what such a path is.

Every atomic write of the project goes through :func:`atomic_path`; ``agents`` and ``train``
import it from here (``draw_env`` imports neither of them).
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_path",
    "check_distinct",
    "check_regular_file",
    "check_writable",
    "file_kind",
    "not_regular",
    "regular_file_target",
    "temporary_name",
    "write_bytes_atomic",
    "write_json_atomic",
    "write_text_atomic",
]

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


#: What a file that is not a regular file is, by its ``stat`` mode test.
_SPECIAL_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a file of ``stat`` mode ``mode`` is, for messages: ``"a regular file"``, ``"a FIFO
    (named pipe)"``, ``"a character device"``..."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _SPECIAL_KINDS if test(mode)), "a special file")


def not_regular(path: str | os.PathLike[str], *, follow_links: bool = True) -> str | None:
    """What ``path`` is if it is no regular file, in words (``"a FIFO (named pipe)"``, ``"a
    directory"``...; without ``follow_links``, ``"a symbolic link"`` too), or ``None`` for a
    regular file. Only the file's status is read: a FIFO is never opened (opening one waits for a
    writer).

    Raises:
        OSError: ``path`` cannot be looked at (``FileNotFoundError``: nothing there).
    """
    mode = os.stat(path).st_mode if follow_links else os.lstat(path).st_mode
    if stat.S_ISREG(mode):
        return None
    return "a symbolic link" if stat.S_ISLNK(mode) else file_kind(mode)


def check_regular_file(name: str, path: str | os.PathLike[str]) -> Path:
    """``path`` as a ``Path`` if it is, or links to, a regular file: checked before the file is
    opened, so that a FIFO or a device given as an input is refused at once instead of blocking
    the reader (or feeding it without end).

    Raises:
        ValueError: naming ``name``, the path and what is there (or that nothing is).
    """
    try:
        kind = not_regular(path)
    except FileNotFoundError:
        raise ValueError(f"{name} {os.fspath(path)!r} does not exist") from None
    except OSError as error:
        raise ValueError(f"{name} {os.fspath(path)!r} cannot be read ({error.strerror or error})") from None
    if kind is not None:
        raise ValueError(f"{name} {os.fspath(path)!r} is {kind}, not a regular file: only regular files are read")
    return Path(path)


def regular_file_target(path: str | os.PathLike[str]) -> Path:
    """The file that writing ``path`` replaces: ``path`` with every symbolic link resolved.

    The result is a regular file or nothing yet (a missing target, or a link to a missing file).

    Raises:
        ValueError: naming ``path`` and what is there, if it is (or links to) a directory, a
            device, a FIFO, a socket or another special file, or cannot be looked at.
    """
    resolved = Path(os.path.realpath(path))
    try:
        mode = os.stat(resolved).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return resolved  # nothing there yet: the write creates it (or names the missing folder)
    except OSError as error:
        raise ValueError(f"{path}: cannot write there: {error.strerror or error}") from None
    if stat.S_ISREG(mode):
        return resolved
    where = "" if os.path.abspath(path) == str(resolved) else f" links to {resolved}, which"
    raise ValueError(f"{path}{where} is {file_kind(mode)}, not a regular file: only regular files are written")


@contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write ``target``'s new content to; rename it onto ``target`` after.

    Use::

        with atomic_path(output / "shard.npz") as temporary:
            np.savez_compressed(temporary, observations=observations)

    ``target`` is resolved first (:func:`regular_file_target`: a link's target is the file
    written; a directory or a special file is refused) and its parent folders are created. The
    temporary file (:func:`temporary_name`: same folder, same suffix) is not created here: the body
    writes it, by name, with any writer. When the body returns, ``target`` is checked again (the
    body may have run for long) and the temporary file is renamed onto it (replacing an existing
    file); if the body, the check or the rename raises anything, also ``KeyboardInterrupt`` or
    ``SystemExit``, the temporary file is removed, ``target`` is left as it was and the exception
    propagates.

    Raises:
        ValueError: ``target`` is, or links to, a directory or a special file (before the body
            runs, or after it if one appeared there meanwhile).
        FileNotFoundError: the body returned without writing the temporary path (nothing was
            renamed; a silent empty target would hide the bug).
    """
    final = regular_file_target(target)
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_name(final)
    try:
        yield temporary
        if regular_file_target(final) != final:  # a link appeared there meanwhile
            raise ValueError(f"{target} became a link to another file while it was being written: nothing written")
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
    unwritable place fails in a second rather than after an hour. A file path must be, or link
    to, a regular file or nothing yet (:func:`regular_file_target`). With ``create`` (the default)
    missing parent directories (or the directory itself) are created and a probe file is written
    and removed; without it nothing is created: the nearest existing folder must be a writable
    directory.

    Raises:
        ValueError: naming ``name`` and the reason.
    """
    target = Path(path)
    if not directory:
        try:
            folder = regular_file_target(target).parent  # where atomic_path will write
        except ValueError as error:
            raise ValueError(f"{name}: {error}") from None
    else:
        folder = target
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


def _same_file(first: Path, second: Path) -> bool:
    """Whether two paths name one file: the same inode where both exist (hard links too), else
    the same path once symbolic links are resolved."""
    try:
        return os.path.samefile(first, second)
    except OSError:  # one of them does not exist (yet)
        return os.path.realpath(first) == os.path.realpath(second)


def check_distinct(
    outputs: Iterable[tuple[str, str | os.PathLike[str] | None]],
    inputs: Iterable[tuple[str, str | os.PathLike[str] | None]] = (),
) -> None:
    """Refuse a command whose outputs would overwrite one of its inputs or one another.

    ``outputs`` and ``inputs`` are ``(name, path)`` pairs, the name as the message shows it
    (``"--json"``, ``"the record"``); a ``None`` path (an option not given) is skipped. Two paths
    are one file if they are the same file on disk (hard and symbolic links included) or, where
    one does not exist yet, the same path once links are resolved. Meant to run before anything
    is written.

    Raises:
        ValueError: naming both paths, if an output is the same file as an input or as an
            earlier output.
    """
    given = [(name, Path(path)) for name, path in inputs if path is not None]
    written: list[tuple[str, Path]] = []
    for name, path in ((name, Path(path)) for name, path in outputs if path is not None):
        for other, read in given:
            if _same_file(path, read):
                raise ValueError(
                    f"{name} {path} is the same file as {other} ({read}), which this command reads: "
                    "writing it would destroy it; give another path"
                )
        for other, earlier in written:
            if _same_file(path, earlier):
                raise ValueError(f"{name} {path} is the same file as {other} ({earlier}): give each output its own path")
        written.append((name, path))
