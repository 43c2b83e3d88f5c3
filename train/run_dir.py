"""A training run's output directory: one protocol for every pipeline of ``draw-train``.

:class:`RunDir` checks ``output_dir`` before a run writes anything: a directory (or none yet)
where the run can write, empty or holding a run of the same pipeline whose saved settings
(``config.json``) match the config, but for the pipeline's free keys (those that do not change
what the run computes, such as ``iterations`` or ``progress_bar``). A run is recognised by its
marker :data:`MARKER`, never by a ``config.json`` alone, and starting over removes only the files
its pipeline writes (the ``files`` of the :class:`RunKind` its caller gives). :func:`read_run_file` reads the JSON files a run keeps
(which may have been edited, cut short or swapped) bounded, and checks their whole structure
against a pydantic schema *before* the run acts on them. Every problem is one
:class:`~train.config.ConfigError` line naming the file and the field.

One rule holds for everything inside a run directory (:func:`check_entries`): it is a regular
file or a folder, never a symbolic link, a FIFO, a device or a socket. A run that continues, one
that starts over and a report of one refuse such an entry before anything is read or written,
so nothing is ever written through a link to a file elsewhere. And one process at a time works
in a run directory: :class:`RunDir` holds an advisory lock on it (``flock``) while the run lives;
the kernel releases it when the process ends, killed or not.

The protocol as users see it (resume, ``--overwrite``): the docs page "Training"
(``docs/training.md``, run directories).
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import typing
import weakref
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from draw_env.io.files import PARTIAL, check_writable, not_regular, write_json_atomic
from draw_env.io.untrusted import ArrayHeader, read_json, read_npz
from train.config import ConfigError, Section, build, shown

T = TypeVar("T")

try:
    import fcntl
except ImportError:  # Windows: no flock; runs there are not locked against each other
    fcntl = None  # type: ignore[assignment]

#: The largest run file read (an evaluation history of thousands of rows is well below it).
MAX_RUN_FILE_BYTES = 16 * 1024 * 1024
#: The largest data shard a run reads back, its file and its arrays alike. An iteration of the
#: shipped 2-player expert iteration holds about a million decisions, 0.8 GB of arrays (more than
#: a received file's default bound); this leaves room for four such iterations in one shard.
MAX_SHARD_BYTES = 4 * 1024 * 1024 * 1024

#: The file that marks a directory as a run of ``draw-train``, written with the run's config.
MARKER = ".draw-run.json"
RUN_FORMAT = "draw-dominoes-run"
RUN_VERSION = 1

#: The config keys that may differ when a run of any pipeline is continued: how it shows its
#: progress and where it writes (a run folder may be moved).
FREE_KEYS = ("progress_bar", "output_dir")


@dataclasses.dataclass(frozen=True)
class RunKind:
    """What a run directory knows of the runs of one pipeline, given by its caller.

    Attributes:
        name: the ``pipeline:`` of its configs, as :data:`MARKER` records it.
        config: its config model.
        files: what a run writes in ``output_dir`` besides ``config.json`` and the marker: paths
            relative to it, ``/`` between folders, each part a regular expression. Starting a run
            over removes these (and the temporary files a killed process left of them) and nothing else.
        free: top-level config keys, beyond :data:`FREE_KEYS`, that may differ when a run is
            continued (they do not change what the run computes); :attr:`free_keys` holds all of them.
    """

    name: str
    config: type[Section]
    files: tuple[str, ...]
    free: tuple[str, ...] = ()

    @property
    def free_keys(self) -> tuple[str, ...]:
        """Every top-level key that may differ when a run is continued: :data:`FREE_KEYS` and :attr:`free`."""
        return (*FREE_KEYS, *self.free)

#: The files of every run: its settings and its marker.
_EVERY_RUN = (r"config\.json", re.escape(MARKER))
#: Keys of the ``config.json`` of every run, whatever its version and pipeline.
_SAVED_BY_EVERY_RUN = ("num_players", "seed", "output_dir")
#: ``draw_env.io.files.temporary_name``'s names: ``.{stem}.{pid}-{token}.partial{suffix}``.
_TEMPORARY = re.compile(rf"\.(?P<stem>.+)\.\d+-[0-9a-f]+{re.escape(PARTIAL)}(?P<suffix>\.[^.]*)?")


class RunMarker(BaseModel):
    """:data:`MARKER`: what made the run (strict: another format or version is not read)."""

    model_config = ConfigDict(strict=True, extra="ignore")

    format: Literal[RUN_FORMAT]  # type: ignore[valid-type]
    version: Literal[RUN_VERSION]  # type: ignore[valid-type]
    pipeline: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")


@dataclasses.dataclass
class RunFiles:
    """The files and folders of a run directory, every one of them written by its pipeline."""

    files: list[Path]
    folders: list[Path]

    def remove(self) -> None:
        """Remove them all, the marker last (a run cut short here is still recognised as one)."""
        for path in sorted(self.files, key=lambda file: file.name == MARKER):
            path.unlink(missing_ok=True)
        for folder in sorted(self.folders, key=lambda folder: -len(folder.parts)):
            try:
                folder.rmdir()
            except OSError:  # something appeared there since the check: kept, with its folder
                pass


def _patterns(kind: RunKind) -> list[tuple[str, ...]]:
    return [tuple(pattern.split("/")) for pattern in (*_EVERY_RUN, *kind.files)]


def _matches(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Whether the first ``len(parts)`` parts of ``pattern`` match ``parts``, one by one."""
    return all(re.fullmatch(part_pattern, part) for part_pattern, part in zip(pattern, parts))


def _is_run_file(parts: tuple[str, ...], patterns: list[tuple[str, ...]]) -> bool:
    temporary = _TEMPORARY.fullmatch(parts[-1])
    if temporary is not None:
        parts = (*parts[:-1], temporary["stem"] + (temporary["suffix"] or ""))
    return any(len(pattern) == len(parts) and _matches(pattern, parts) for pattern in patterns)


def _is_run_folder(parts: tuple[str, ...], patterns: list[tuple[str, ...]]) -> bool:
    return any(len(pattern) > len(parts) and _matches(pattern, parts) for pattern in patterns)


def scan_run(path: Path, kind: RunKind) -> tuple[RunFiles, Path | None]:
    """The files and folders of the directory ``path`` that a run of ``kind`` writes, up to the first
    entry that it does not write (``None``: there is none).

    Symbolic links and special files are never a run's: they count as foreign, never followed.

    Raises:
        ConfigError: a folder cannot be listed.
    """
    patterns = _patterns(kind)
    found = RunFiles([], [])

    def scan(folder: Path, parts: tuple[str, ...]) -> Path | None:
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda entry: entry.name):
                inside = (*parts, entry.name)
                if entry.is_dir(follow_symlinks=False) and _is_run_folder(inside, patterns):
                    found.folders.append(Path(entry.path))
                    foreign = scan(Path(entry.path), inside)
                    if foreign is not None:
                        return foreign
                elif entry.is_file(follow_symlinks=False) and _is_run_file(inside, patterns):
                    found.files.append(Path(entry.path))
                else:
                    return Path(entry.path)
        return None

    try:
        return found, scan(path, ())
    except OSError as error:
        raise ConfigError(f"output_dir {str(path)!r} cannot be listed ({error.strerror or error})") from None


def run_files(path: Path, kind: RunKind) -> RunFiles:
    """:func:`scan_run`'s files and folders, all there is in ``path``.

    Raises:
        ConfigError: naming the first entry that the run did not write.
    """
    found, foreign = scan_run(path, kind)
    if foreign is not None:
        raise ConfigError(
            f"output_dir {str(path)!r} holds {str(foreign)!r}, which no run of pipeline: {kind.name} writes: "
            "a run is replaced only when all it holds is its own; move that away or choose another output_dir"
        )
    return found


def check_entries(path: Path) -> None:
    """Refuse a run directory that holds, at any depth, anything but regular files and folders.

    Links are looked at, never followed: a link in a run directory would make the run write
    through it, or read someone else's file as its own.

    Raises:
        ConfigError: naming the first such entry and what it is, or a folder that cannot be listed.
    """
    folders = [path]  # a stack, not recursion: a folder may be nested thousands deep
    try:
        while folders:
            with os.scandir(folders.pop()) as listed:
                entries = sorted(listed, key=lambda entry: entry.name)
            inside = [Path(entry.path) for entry in entries if entry.is_dir(follow_symlinks=False)]
            folders.extend(reversed(inside))  # the first in name order comes next
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    continue
                try:
                    kind = not_regular(entry.path, follow_links=False)
                except FileNotFoundError:  # removed since it was listed
                    continue
                if kind is not None:
                    raise ConfigError(
                        f"{entry.path!r} in the run directory {str(path)!r} is {kind}: a run directory holds "
                        "only the regular files and folders its run writes, and nothing in it is followed; "
                        "move that away or choose another output_dir"
                    )
    except OSError as error:
        raise ConfigError(f"output_dir {str(path)!r} cannot be listed ({error.strerror or error})") from None


class _Lock:
    """An exclusive ``flock`` held on an open directory until this object is collected (or the
    process ends: the kernel releases it then, so a killed run never leaves a folder locked)."""

    def __init__(self, descriptor: int) -> None:
        weakref.finalize(self, os.close, descriptor)


#: The directories this process holds locked, by (device, inode): a run started again in the same
#: interpreter (a command called twice) shares the lock, which only keeps other processes out.
_HELD: weakref.WeakValueDictionary[tuple[int, int], _Lock] = weakref.WeakValueDictionary()


def lock_directory(path: Path) -> _Lock | None:
    """Lock the directory ``path`` against every other process, for as long as the result lives
    (``None`` where the system has no ``flock``).

    Raises:
        ConfigError: another process holds it, or it cannot be opened.
    """
    if fcntl is None:
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as error:
        raise ConfigError(f"output_dir {str(path)!r} cannot be opened ({error.strerror or error})") from None
    try:
        status = os.fstat(descriptor)
        held = _HELD.get((status.st_dev, status.st_ino))
        if held is not None:
            os.close(descriptor)
            return held
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise ConfigError(
            f"output_dir {str(path)!r} is in use by another run (its process holds the folder's lock): "
            "wait for that run to end, or choose another output_dir"
        ) from None
    except BaseException:
        os.close(descriptor)
        raise
    lock = _HELD[(status.st_dev, status.st_ino)] = _Lock(descriptor)
    return lock


def _is_regular_file(path: Path) -> bool:
    """Whether ``path`` is a regular file itself (not a link to one: reading a FIFO would block)."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


class RunDir:
    """``config.output_dir``, checked for a run of ``kind`` (nothing is written or removed here).

    Args:
        config: the run's validated config (it has an ``output_dir``).
        kind: what the run's pipeline writes and may change (its caller's entry; the name is what
            :data:`MARKER` records).
        known: the kinds of run the directory may already hold, by name (``None``: ``kind``'s
            alone): a run of one of them is recognised (and replaced with ``overwrite``), one of
            another pipeline is no run.
        overwrite: start over (:meth:`start` removes the earlier run's files).
        free: top-level keys that may differ from the saved config when the run continues
            (``None``: the kind's ``free_keys``).
        overwrite_option: the command's option that starts a run over, as messages name it
            (``None``: the command has none, and messages do not offer it).

    Attributes:
        path: the directory.
        earlier: the saved config of the run to continue, or ``None`` for a new run.

    Raises:
        ConfigError: ``output_dir`` is a file or cannot be written; another process works in it
            (it holds the directory's lock); it holds files but no run (refused even with
            ``overwrite``: nothing of someone else's is removed); it holds a link or a special file
            (:func:`check_entries`); with ``overwrite``, the run there holds a file its pipeline
            does not write (named); without it, a run of another pipeline or a run made with other
            settings (the message names every differing key with both values).
    """

    def __init__(
        self,
        config: Section,
        kind: RunKind,
        *,
        known: Mapping[str, RunKind] | None = None,
        overwrite: bool = False,
        free: Collection[str] | None = None,
        overwrite_option: str | None = "--overwrite",
    ) -> None:
        self.path = Path(config.output_dir)
        self.kind = kind
        self.pipeline = kind.name
        self.known: Mapping[str, RunKind] = {kind.name: kind} if known is None else {**known, kind.name: kind}
        self.overwrite = overwrite
        self.overwrite_option = overwrite_option
        #: The directory's lock, once it exists (:meth:`start` creates it and takes the lock then).
        self._lock: _Lock | None = None
        self._locked = False
        self.settings = config.to_dict()
        # A key the saved config lacks (added since, at the top or in a section) counts as its default.
        self.defaults = type(config)().to_dict()
        self.earlier: dict[str, Any] | None = None
        #: The pipeline of the run already in the directory (``None``: the directory is empty).
        self.found: str | None = None
        self.earlier = self._check(kind.free_keys if free is None else free)

    def __str__(self) -> str:
        return str(self.path)

    def _check(self, free: Collection[str]) -> dict[str, Any] | None:
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(f"config key 'output_dir' must be a directory, got the file {str(self.path)!r}")
        try:
            check_writable("config key 'output_dir'", self.path, directory=True, create=False)
        except ValueError as error:
            raise ConfigError(str(error)) from None
        if not self.path.is_dir():
            return None
        self._lock = lock_directory(self.path)  # before anything is read: what is read stays so
        self._locked = True
        if not any(self.path.iterdir()):
            return None
        self.found = self._identify()
        check_entries(self.path)
        if self.overwrite:
            run_files(self.path, self.known[self.found])
            return None
        if self.found != self.pipeline:
            raise ConfigError(
                f"output_dir {str(self.path)!r} holds a run of pipeline: {self.found}, not {self.pipeline}: "
                f"{self._replace('replace it')}choose another output_dir"
            )
        self.earlier = read_run_file(self.path / "config.json", dict[str, Any])
        self.check_keys([key for key in self.settings if key not in free])
        return self.earlier

    def _identify(self) -> str:
        """The pipeline of the run in the directory: its marker's, or for a run written before
        markers, its ``config.json``'s if that is a config of the pipeline and every file is one
        the pipeline writes.

        Raises:
            ConfigError: the directory holds no run (with ``overwrite`` too).
        """
        marker = self.path / MARKER
        try:
            if os.path.lexists(marker):
                if not _is_regular_file(marker):
                    raise ConfigError(f"{marker} is not a regular file")
                named = str(read_run_file(marker, RunMarker).pipeline)
                if named not in self.known:
                    raise ConfigError(
                        f"{marker}: field 'pipeline': input should be {self._kinds()}, got {named!r}"
                    )
                return named
            config = self.path / "config.json"
            if not _is_regular_file(config):
                raise ConfigError(f"no {MARKER} and no config.json")
            saved: dict[str, Any] = read_run_file(config, dict[str, Any])
            # A config that names no pipeline is of the kind whose configs name none (self-play's).
            unnamed = [name for name, kind in self.known.items() if "pipeline" not in kind.config.model_fields]
            pipeline = saved.get("pipeline", unnamed[0] if unnamed else None)
            missing = [key for key in _SAVED_BY_EVERY_RUN if key not in saved]
            if missing:  # a run saves its whole config, defaults included
                raise ConfigError(f"no {MARKER}, and config.json lacks {', '.join(map(repr, missing))}")
            if pipeline not in self.known:
                raise ConfigError(f"no {MARKER}, and config.json names no pipeline of draw-train: {shown(pipeline)}")
            try:
                build(self.known[pipeline].config, saved)
            except ConfigError as error:
                raise ConfigError(f"no {MARKER}, and config.json is no config of pipeline: {pipeline} ({error})") from None
            foreign = scan_run(self.path, self.known[pipeline])[1]
            if foreign is not None:
                raise ConfigError(f"no {MARKER}, and {str(foreign)!r} is no file of a run of pipeline: {pipeline}")
            return str(pipeline)
        except ConfigError as error:
            raise ConfigError(
                f"output_dir {str(self.path)!r} already holds files but no run of draw-train: {error}; "
                "choose another output_dir" + (" (--overwrite does not remove it)" if self.overwrite else "")
            ) from None

    def _kinds(self) -> str:
        return " or ".join(repr(name) for name in self.known)

    def _replace(self, what: str) -> str:
        """``pass --overwrite to WHAT, or `` where the command has an option that starts over."""
        return f"pass {self.overwrite_option} to {what}, or " if self.overwrite_option else ""

    def check_keys(self, keys: Collection[str]) -> None:
        """Refuse to continue a run whose saved settings differ from the config's on ``keys``.

        Raises:
            ConfigError: naming every differing key with both values.
        """
        earlier = {
            key: {**self.defaults[key], **value}
            if isinstance(value, dict) and isinstance(self.defaults.get(key), dict)
            else value
            for key, value in {**self.defaults, **(self.earlier or {})}.items()
        }
        differing = [key for key in keys if self.earlier is not None and earlier.get(key) != self.settings[key]]
        if differing:
            details = "; ".join(
                f"{key} is {shown(earlier.get(key))} there, {shown(self.settings[key])} here" for key in differing
            )
            raise ConfigError(
                f"output_dir {str(self.path)!r} holds a run made with other settings ({details}): rerun with "
                f"its settings to continue it, {self._replace('replace it')}choose another output_dir"
            )

    @property
    def resuming(self) -> bool:
        """Whether the directory holds an earlier run of these settings to continue."""
        return self.earlier is not None

    def start_over(self) -> None:
        """Replace the run found in the directory when :meth:`start` comes (as ``overwrite``).

        Raises:
            ConfigError: it holds a file its pipeline does not write (named); nothing is removed.
        """
        if self.found is not None:
            run_files(self.path, self.known[self.found])
        self.overwrite = True

    def start(self) -> None:
        """Remove the earlier run's files (with ``overwrite``), create the directory, save the
        config and then the marker (a run cut short between them is still recognised).

        Raises:
            ConfigError: with ``overwrite``, a file appeared that the earlier run did not write;
                for a directory that did not exist when it was checked, another run took it or
                wrote in it since.
        """
        if self.overwrite and self.found is not None:
            run_files(self.path, self.known[self.found]).remove()
        self.path.mkdir(parents=True, exist_ok=True)
        if not self._locked:  # the directory is new: locked now, and still empty
            self._lock = lock_directory(self.path)
            self._locked = True
            if any(self.path.iterdir()):
                raise ConfigError(
                    f"output_dir {str(self.path)!r} was written by another run since it was checked: "
                    "run the command again"
                )
        self.write_json("config.json", self.settings)
        self.write_json(MARKER, {"format": RUN_FORMAT, "version": RUN_VERSION, "pipeline": self.pipeline})

    def write_json(self, name: str, data: Any) -> None:
        """``name`` in the directory, written atomically (indented JSON)."""
        write_json_atomic(self.path / name, data, indent=1)

    def complete(self, progress: str, summary: str = "summary.json") -> str:
        """The line a rerun of a finished run prints before its results: ``DIR is complete (...)``."""
        return f"{self.path} is complete ({progress}); its summary: {self.path / summary}"

    def finished(self, schema: type[RunSummary], name: str, why: str) -> dict[str, Any] | None:
        """For a pipeline whose runs do not continue: the summary ``name`` of the finished run in
        the directory (with its :meth:`complete` line printed), or ``None`` for a new run.

        Raises:
            ConfigError: the directory holds an unfinished run of these settings (``why`` says why
                it does not continue), or its summary is no ``schema``.
        """
        if not self.resuming:
            return None
        path = self.path / name
        if not path.is_file():
            raise ConfigError(
                f"output_dir {str(self.path)!r} holds an unfinished run of pipeline: {self.pipeline} ({why}): "
                f"{self._replace('start it again')}choose another output_dir"
            )
        summary = read_run_file(path, schema)
        print(self.complete(summary.progress(), name))
        return summary.model_dump()


class RunFile(BaseModel):
    """Base of every run-file schema: strict types (no coercion), no NaN; unknown keys are ignored
    (a later version may add some)."""

    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="ignore")


class RunSummary(RunFile):
    """Base of the summary a finished run writes and a rerun prints (unknown keys are kept)."""

    model_config = ConfigDict(extra="allow")

    def progress(self) -> str:  # pragma: no cover - abstract
        """How far the run went, for the line a rerun prints (:meth:`RunDir.complete`)."""
        raise NotImplementedError


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
    return check_run_data(data, schema, name)


def check_run_data(data: Any, schema: type[T] | Any, name: str) -> T:
    """``data`` validated as ``schema``, as :func:`read_run_file` checks a file: also what a run is
    about to write, so that it never writes a file its own reader refuses.

    Raises:
        ConfigError: ``name``, the field and what is wrong with it.
    """
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
    """The arrays of a data shard ``.npz`` a run wrote (:func:`draw_env.io.untrusted.read_npz`).

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
