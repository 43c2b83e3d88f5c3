"""Bounded readers for the JSON, YAML and NumPy ``.npz`` files that people exchange (records,
policy files, configs, run state): every such file is treated as hostile.

Each reader bounds the size of the input, the nesting depth and the number of values *before* a
recursive parser or validator sees it (Python's ``json`` and anything that walks the result
recurse, so 100,000 nested ``[`` would otherwise end in a ``RecursionError``; each value a parser
builds takes memory, 50 bytes or more, and PyYAML's time): JSON by a count of its separators
before parsing, YAML event by event as PyYAML parses it. It rejects what no file of ours holds
(YAML anchors and aliases, whose expansion a 500-byte file can blow up; ``NaN``; repeated keys;
integers of more than :data:`MAX_INT_DIGITS` digits in JSON or :data:`MAX_YAML_INT_CHARACTERS`
characters in YAML, numbers beyond a float's range) and reports
every problem as one :class:`UntrustedInputError` (a ``ValueError``) whose message starts with
the file's name. Nothing in a file is ever executed or unpickled here.

An ``.npz`` (:func:`loads_npz`, :func:`read_npz`) is checked from its zip directory and each
member's ``.npy`` header before any array is read: member names, dtypes (plain numbers only),
shapes and sizes, which the caller checks against what it expects; then each array is read with
at most the bytes its header promises (a compressed member that decompresses to more is refused).
A zip's directory is bounded before :mod:`zipfile` reads it (:func:`open_zip`).

PyYAML is imported only by the YAML functions (``draw_env`` itself needs only NumPy,
Gymnasium, PettingZoo and numba).
"""

from __future__ import annotations

import functools
import io
import json
import lzma
import math
import os
import re
import stat
import tokenize
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from draw_env.io.files import file_kind

__all__ = [
    "MAX_ARRAY_BYTES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_INT_DIGITS",
    "MAX_JSON_VALUES",
    "MAX_YAML_INT_CHARACTERS",
    "MAX_YAML_VALUES",
    "ArrayHeader",
    "ZIP_ERRORS",
    "UntrustedInputError",
    "check_depth",
    "check_headers",
    "loads_json",
    "loads_npz",
    "loads_yaml",
    "open_zip",
    "read_bytes",
    "read_json",
    "read_npz",
    "read_text",
    "read_yaml",
]

#: The deepest nesting of lists and mappings a file may have; our deepest file (a game
#: record: record -> hands -> hand -> actions -> [seat, action]) needs 5.
MAX_DEPTH = 32
#: The largest file read by default (a 2,000-hand match record is about 2 MB).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: The most values (lists, objects, keys, numbers, strings) one JSON text may hold. Python keeps
#: each in memory (a list of two numbers takes 72 bytes), so this bounds what a parse allocates to
#: a few hundred MB whatever the text's shape; a 2,000-hand match record holds about 700,000.
MAX_JSON_VALUES = 4_000_000
#: The most values (scalars, sequences, mappings) one YAML text may hold: configs hold under 100,
#: and PyYAML takes about 20 microseconds for each.
MAX_YAML_VALUES = 10_000
#: Longest YAML integer accepted, in characters: any 64-bit integer in any of YAML's notations fits
#: (0b and 64 binary digits); PyYAML builds a longer base-60 one (1:1:1:...) in time that grows
#: with the square of its length.
MAX_YAML_INT_CHARACTERS = 80
#: Longest integer literal accepted: int64 needs 19 digits; Python's own guard (4,300 digits)
#: comes with a message that names no file.
MAX_INT_DIGITS = 20
#: The most bytes the arrays of one ``.npz`` may hold together, uncompressed.
MAX_ARRAY_BYTES = 256 * 1024 * 1024
#: The most members one ``.npz`` may hold.
MAX_NPZ_MEMBERS = 4096
#: Bytes of an array read at a time (:func:`loads_npz`).
_READ_CHUNK = 1024 * 1024


class UntrustedInputError(ValueError):
    """A file or text that cannot be used; the message is one line that names it."""


def read_bytes(path: str | os.PathLike[str], max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, refused before reading when larger than ``max_bytes``.

    Only a regular file (or a link to one) is read: a FIFO, a device, a socket or a directory is
    refused before it is opened (opening a FIFO waits for a writer, forever if none comes, and a
    device may never end), and again on the open file, in case the path changed in between (it is
    opened without waiting, so a FIFO put there meanwhile cannot hang the read either).
    """
    name = os.fspath(path)
    try:
        _check_regular(name, os.stat(name).st_mode)
        descriptor = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(descriptor, "rb") as handle:
            status = os.fstat(handle.fileno())
            _check_regular(name, status.st_mode)
            size = status.st_size
            if size > max_bytes:
                raise UntrustedInputError(f"{name}: the file is {size} bytes, more than the {max_bytes} allowed")
            # In chunks: one read(max_bytes + 1) would reserve max_bytes of memory for any file.
            chunks: list[bytes] = []
            total = 0
            while total <= max_bytes:
                chunk = handle.read(min(1024 * 1024, max_bytes + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
            data = b"".join(chunks)
    except FileNotFoundError:
        raise UntrustedInputError(f"{name}: no such file") from None
    except OSError as error:
        raise UntrustedInputError(f"{name}: cannot be read ({error.strerror or error})") from None
    if len(data) > max_bytes:  # a file that grew while being read
        raise UntrustedInputError(f"{name}: more than the {max_bytes} bytes allowed")
    return data


def _check_regular(name: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise UntrustedInputError(f"{name}: is {file_kind(mode)}, not a regular file: only regular files are read")


def read_text(path: str | os.PathLike[str], max_bytes: int = MAX_FILE_BYTES) -> str:
    """``path`` decoded as strict UTF-8 (a leading byte-order mark is dropped), size-bounded."""
    data = read_bytes(path, max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UntrustedInputError(
            f"{os.fspath(path)}: not UTF-8 text (byte {error.start} is {data[error.start]:#04x})"
        ) from None


def _first_too_deep(text: str, max_depth: int, is_json: bool) -> tuple[int, int] | None:
    """The 1-based line and column of the first ``[`` or ``{`` in ``text`` that opens more than
    ``max_depth`` levels, or ``None``.

    A linear scan, safe on any input. With ``is_json``, brackets inside JSON strings are skipped;
    without (YAML, whose quotes are too subtle to parse here), every bracket counts, and a
    closing one never takes the depth below zero.
    """
    depth = 0
    in_string = False
    escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"' and is_json:
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index)
        elif char in "]}" and (is_json or depth > 0):
            depth -= 1
    return None


def check_depth(text: str, source: str, max_depth: int = MAX_DEPTH) -> None:
    """Refuse JSON ``text`` whose lists and objects nest deeper than ``max_depth``.

    A linear scan that skips string contents, so it is safe on any input, and a recursive parser
    run after it never recurses deeper than ``max_depth``.
    """
    where = _first_too_deep(text, max_depth, is_json=True)
    if where is not None:
        raise UntrustedInputError(
            f"{source}: nested deeper than {max_depth} levels (line {where[0]}, column {where[1]})"
        )


def _no_duplicates(source: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        mapping: dict[str, Any] = {}
        for key, value in pairs:
            if key in mapping:
                raise UntrustedInputError(f"{source}: the key {key!r} appears twice in one object")
            mapping[key] = value
        return mapping

    return build


def _bounded_int(source: str) -> Callable[[str], int]:
    def parse(literal: str) -> int:
        if len(literal.lstrip("-")) > MAX_INT_DIGITS:
            raise UntrustedInputError(
                f"{source}: an integer of {len(literal.lstrip('-'))} digits (at most {MAX_INT_DIGITS})"
            )
        return int(literal)

    return parse


def _finite_float(source: str) -> Callable[[str], float]:
    def parse(literal: str) -> float:
        value = float(literal)
        if value - value != 0.0:  # inf (1e999 overflows) or nan
            raise UntrustedInputError(f"{source}: {literal[:40]} is out of a float's range")
        return value

    return parse


def _no_constant(source: str) -> Callable[[str], float]:
    def parse(literal: str) -> float:
        raise UntrustedInputError(f"{source}: {literal} is not a number JSON allows")

    return parse


def loads_json(
    text: str,
    source: str,
    max_depth: int = MAX_DEPTH,
    max_values: int = MAX_JSON_VALUES,
    expect: type[dict[Any, Any]] | type[list[Any]] | None = None,
) -> Any:
    """Parse JSON ``text`` (named ``source`` in messages) within the bounds of this module.

    Before the parser sees it, the text is refused if it may hold more than ``max_values`` values
    (Python holds each in memory, 50 to 100 bytes for a list or object), nests deeper than
    ``max_depth`` or, with ``expect`` (``dict`` or ``list``), does not hold a JSON object or array.

    Raises:
        UntrustedInputError: too many values, too deep, not what ``expect`` says, not JSON, a
            repeated key, ``NaN``/``Infinity``, or an over-long integer; the message starts with
            ``source``.
    """
    _check_values(text, source, max_values)
    check_depth(text, source, max_depth)
    if expect is not None:
        _check_top(text, source, expect)
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicates(source),
            parse_int=_bounded_int(source),
            parse_float=_finite_float(source),
            parse_constant=_no_constant(source),
        )
    except json.JSONDecodeError as error:
        raise UntrustedInputError(
            f"{source}: not valid JSON at line {error.lineno}, column {error.colno} ({error.msg})"
        ) from None
    except UntrustedInputError:
        raise
    except (ValueError, RecursionError) as error:  # e.g. a float literal Python cannot hold
        raise UntrustedInputError(f"{source}: not valid JSON ({error})") from None


def _check_values(text: str, source: str, max_values: int) -> None:
    """Refuse JSON ``text`` that may hold more than ``max_values`` values, counted in C time.

    Every value but the outermost comes right after a ``[``, ``{``, ``,`` or ``:`` of its own,
    so one more than their count bounds the values (those inside strings count too: a bound).
    """
    bound = 1 + sum(text.count(separator) for separator in "[{,:")
    if bound > max_values:
        raise UntrustedInputError(
            f"{source}: may hold {bound} JSON values (one after each '[', '{{', ',' and ':'), "
            f"more than the {max_values} allowed"
        )


#: How a JSON text's outermost value starts -> what it is.
_JSON_STARTS = {"{": "an object", "[": "an array", '"': "a string"}
_JSON_WHITESPACE = re.compile(r"[ \t\r\n]*")


def _check_top(text: str, source: str, expect: type[dict[Any, Any]] | type[list[Any]]) -> None:
    """Refuse JSON ``text`` whose outermost value is not an object (``dict``) or array (``list``)."""
    wanted = "{" if expect is dict else "["
    start = _JSON_WHITESPACE.match(text).end()  # type: ignore[union-attr]  # it matches anything
    found = text[start : start + 1]
    if found != wanted:
        what = _JSON_STARTS.get(found, "a number or constant" if found else "nothing")
        raise UntrustedInputError(f"{source}: its JSON must be {_JSON_STARTS[wanted]}, not {what}")


def read_json(
    path: str | os.PathLike[str],
    max_bytes: int = MAX_FILE_BYTES,
    max_depth: int = MAX_DEPTH,
    max_values: int = MAX_JSON_VALUES,
    expect: type[dict[Any, Any]] | type[list[Any]] | None = None,
) -> Any:
    """:func:`loads_json` of a file: size-bounded, strict UTF-8, messages name the file."""
    return loads_json(read_text(path, max_bytes), os.fspath(path), max_depth, max_values, expect)


def loads_yaml(text: str, source: str, max_depth: int = MAX_DEPTH, max_values: int = MAX_YAML_VALUES) -> Any:
    """Parse YAML ``text`` with PyYAML's safe loader, within the bounds of this module.

    The parser's events are checked as they come, before the composer sees them: no anchors or
    aliases, at most ``max_depth`` levels of nesting and ``max_values`` values (scalars,
    sequences, mappings), so a text PyYAML would take long over is refused after at most
    ``max_values`` events; then a mapping that repeats a key is refused (PyYAML would silently
    keep the last value), and the text is built into plain Python data.

    Raises:
        UntrustedInputError: the message starts with ``source`` and gives the line (and column)
            of the problem; a repeated key is named with its dotted path, for example
            ``line 4: duplicate key 'ppo.gamma' (first on line 2)``.
    """
    import yaml

    _check_brackets(text, source, max_depth)
    try:
        return _load_yaml(_bounded_yaml_loader()(text, source, max_depth, max_values), source)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        raise UntrustedInputError(
            f"{source}{_where(mark)}: not valid YAML ({_one_line(error.problem or error.context)})"
        ) from None
    except yaml.YAMLError as error:
        raise UntrustedInputError(f"{source}: not valid YAML ({_one_line(error)})") from None
    except (ValueError, OverflowError) as error:  # e.g. a timestamp or number PyYAML cannot build
        if isinstance(error, UntrustedInputError):
            raise
        raise UntrustedInputError(f"{source}: not valid YAML ({_one_line(error)})") from None


def _load_yaml(loader: Any, source: str) -> Any:
    """The one document of ``loader``: composed (checking each event), its keys checked, built."""
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_yaml_keys(node, source)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _where(mark: Any) -> str:
    return f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


@functools.cache
def _bounded_yaml_loader() -> type[Any]:
    """PyYAML's safe loader, checking each event as the composer takes it (a class made on first
    use: ``draw_env`` imports PyYAML only to read YAML)."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, text: str, source: str, max_depth: int, max_values: int) -> None:
            super().__init__(text)
            self.source, self.max_depth, self.max_values = source, max_depth, max_values
            self.depth = self.values = 0

        def get_event(self) -> Any:
            event = super().get_event()
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise UntrustedInputError(
                    f"{self.source}{_where(event.start_mark)}: YAML anchors and aliases (& and *) are not allowed"
                )
            if isinstance(event, yaml.CollectionEndEvent):
                self.depth -= 1
            elif isinstance(event, yaml.NodeEvent):
                self.values += 1
                if self.values > self.max_values:
                    raise UntrustedInputError(
                        f"{self.source}{_where(event.start_mark)}: more than {self.max_values} values"
                    )
                if isinstance(event, yaml.CollectionStartEvent):
                    self.depth += 1
                    if self.depth > self.max_depth:
                        raise UntrustedInputError(
                            f"{self.source}{_where(event.start_mark)}: nested deeper than {self.max_depth} levels"
                        )
            return event

        def construct_yaml_int(self, node: Any) -> int:
            if len(node.value) > MAX_YAML_INT_CHARACTERS:
                raise UntrustedInputError(
                    f"{self.source}{_where(node.start_mark)}: an integer of {len(node.value)} characters "
                    f"(at most {MAX_YAML_INT_CHARACTERS})"
                )
            return int(super().construct_yaml_int(node))

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    return BoundedLoader


def _one_line(text: object) -> str:
    """``text`` with its line breaks and runs of spaces made single spaces (PyYAML's messages
    span lines)."""
    return " ".join(str(text).split())


def _check_brackets(text: str, source: str, max_depth: int) -> None:
    """Refuse YAML ``text`` with more than ``max_depth`` unclosed ``[`` or ``{`` at any point.

    PyYAML's scanner reads a whole nested flow collection before it yields the first event (each
    open bracket may start a mapping key), in time that grows with the square of its depth, so
    the event check alone would come too late. Quotes are not parsed here (YAML's are subtle, and
    a quote inside a plain scalar must not hide what follows): brackets inside strings count too,
    which only a string of more than ``max_depth`` unbalanced brackets would notice.
    """
    where = _first_too_deep(text, max_depth, is_json=False)
    if where is not None:
        raise UntrustedInputError(
            f"{source}, line {where[0]}, column {where[1]}: nested deeper than {max_depth} levels"
        )


def _check_yaml_keys(node: Any, source: str, keys: tuple[str, ...] = ()) -> None:
    """Refuse a mapping that repeats a key (depth is already bounded, so recursion is safe)."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                dotted = ".".join((*keys, key))
                raise UntrustedInputError(
                    f"{source}, line {line}: duplicate key {dotted!r} (first on line {seen[key]})"
                )
            seen[key] = line
            _check_yaml_keys(value_node, source, (*keys, key))
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _check_yaml_keys(item, source, keys)


def read_yaml(path: str | os.PathLike[str], max_bytes: int = 1024 * 1024, max_depth: int = MAX_DEPTH) -> Any:
    """:func:`loads_yaml` of a file (1 MiB at most by default: configs are small)."""
    return loads_yaml(read_text(Path(path), max_bytes), os.fspath(path), max_depth)


# ---------------------------------------------------------------------------------------------
# NumPy .npz archives


@dataclass(frozen=True)
class ArrayHeader:
    """What a member's ``.npy`` header says, read before the array itself."""

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    fortran_order: bool

    @property
    def nbytes(self) -> int:
        """The bytes the array's data takes (Python integers: no overflow)."""
        return math.prod(self.shape) * self.dtype.itemsize


#: The headers an archive reader hands its caller's check (:func:`check_headers`).
_Headers = TypeVar("_Headers")

#: Errors the zip and decompression libraries raise on malformed input.
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    NotImplementedError,  # an unsupported compression method
    RuntimeError,  # an encrypted member
    EOFError,
    OSError,
    ValueError,
    zlib.error,
    lzma.LZMAError,
)
_PLAIN_KINDS = "biufc"  # bool, signed and unsigned integers, floats, complex numbers
#: What starts each entry of a zip's central directory.
_DIRECTORY_ENTRY = b"PK\x01\x02"


def open_zip(data: bytes, max_members: int, fail: Callable[[str], ValueError], what: str) -> zipfile.ZipFile:
    """The zip archive ``data``, refused before its directory is read if it may list more than
    ``max_members`` members.

    :mod:`zipfile` builds an object of a few hundred bytes for each of the directory's entries
    (46 bytes each at least), so a directory is bounded before it is read: each entry starts with
    a signature, and their count in ``data`` bounds how many entries it can hold.

    Raises:
        ValueError: ``fail("WHAT (REASON)")``, with ``what`` what the data should be: not a zip,
            or too many members.
    """
    try:
        if data.count(_DIRECTORY_ENTRY) > max_members:
            raise zipfile.BadZipFile(f"its directory may list more than the {max_members} members allowed")
        return zipfile.ZipFile(io.BytesIO(data))
    except ZIP_ERRORS as error:
        raise fail(f"{what} ({error})") from None


def check_headers(check: Callable[[_Headers], None] | None, headers: _Headers, source: str) -> None:
    """Let ``check`` see the ``headers`` of an archive (named ``source``) before its data is read.

    Raises:
        UntrustedInputError: ``check``'s own, or its ``ValueError`` prefixed with ``source``.
    """
    if check is None:
        return
    try:
        check(headers)
    except UntrustedInputError:
        raise
    except ValueError as error:
        raise UntrustedInputError(f"{source}: {error}") from None


def _npy_header(member: Any, name: str, fail: Callable[[str], UntrustedInputError]) -> tuple[ArrayHeader, int]:
    """The header of the ``.npy`` stream ``member`` (positioned at its start) and its length."""
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(member)
        if version == (1, 0):
            shape, fortran_order, dtype = npy.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, fortran_order, dtype = npy.read_array_header_2_0(member)
        else:
            raise fail(f"member {name!r} is .npy format {version[0]}.{version[1]} (1.0 and 2.0 are read)")
    except UntrustedInputError:
        raise
    except (*ZIP_ERRORS, SyntaxError, TypeError, tokenize.TokenError) as error:
        # NumPy re-tokenizes a header that does not parse: an unclosed bracket raises TokenError.
        raise fail(f"member {name!r} has no valid .npy header ({error})") from None
    dtype = np.dtype(dtype)
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None or dtype.kind not in _PLAIN_KINDS:
        raise fail(f"member {name!r} holds {dtype} values, not plain numbers")
    if not all(type(size) is int and size >= 0 for size in shape):
        raise fail(f"member {name!r} has the shape {shape!r}")
    return ArrayHeader(tuple(shape), dtype, bool(fortran_order)), member.tell()


def loads_npz(
    data: bytes,
    source: str,
    check: Callable[[Mapping[str, ArrayHeader]], None] | None = None,
    max_array_bytes: int = MAX_ARRAY_BYTES,
) -> dict[str, np.ndarray]:
    """The arrays of the ``.npz`` bytes ``data`` (named ``source`` in messages), read safely.

    First the zip directory and every member's ``.npy`` header are read: each member must be a
    ``NAME.npy`` of plain numbers (no objects, no records: nothing is ever unpickled), named once,
    and the arrays must hold at most ``max_array_bytes`` together. ``check`` then sees
    ``{NAME: ArrayHeader}`` and raises ``ValueError`` on a name, shape or dtype it does not
    expect, *before* any array is read. Each array is then read with at most the bytes its header
    promises.

    Raises:
        UntrustedInputError: the message starts with ``source``; a ``ValueError`` of ``check``
            is passed on as one, prefixed with ``source``.
    """

    def fail(message: str) -> UntrustedInputError:
        return UntrustedInputError(f"{source}: not a NumPy .npz of plain arrays ({message})")

    with open_zip(data, MAX_NPZ_MEMBERS, fail, "not a zip archive") as archive:
        members = archive.infolist()
        headers: dict[str, ArrayHeader] = {}
        offsets: dict[str, int] = {}
        total = 0
        for info in members:
            name = info.filename
            if not name.endswith(".npy") or info.is_dir():
                raise fail(f"member {name[:80]!r} is not a .npy array")
            key = name[: -len(".npy")]
            if key in headers:
                raise fail(f"member {name[:80]!r} appears twice")
            if info.flag_bits & 0x1:
                raise fail(f"member {name[:80]!r} is encrypted")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise fail(f"member {name[:80]!r} uses compression method {info.compress_type}")
            try:
                with archive.open(info) as member:
                    header, offset = _npy_header(member, name, fail)
            except UntrustedInputError:
                raise
            except ZIP_ERRORS as error:
                raise fail(f"member {name[:80]!r} cannot be read: {error}") from None
            total += header.nbytes
            if total > max_array_bytes:
                raise fail(f"the arrays hold more than the {max_array_bytes} bytes allowed")
            if info.file_size != offset + header.nbytes:
                raise fail(
                    f"member {name[:80]!r} is {info.file_size} bytes but its header promises {offset + header.nbytes}"
                )
            headers[key] = header
            offsets[key] = offset
        check_headers(check, headers, source)
        arrays: dict[str, np.ndarray] = {}
        for key, header in headers.items():
            # Read in chunks into the array itself: the data is held once, not as bytes and a copy.
            buffer = np.empty(header.nbytes, np.uint8)
            filled = 0
            try:
                with archive.open(f"{key}.npy") as member:
                    member.read(offsets[key])
                    while filled < header.nbytes:
                        chunk = member.read(min(_READ_CHUNK, header.nbytes - filled))
                        if not chunk:
                            break
                        buffer[filled : filled + len(chunk)] = np.frombuffer(chunk, np.uint8)
                        filled += len(chunk)
                    extra = member.read(1)  # reaching the end checks the member's CRC
            except ZIP_ERRORS as error:
                raise fail(f"member {key + '.npy'!r} cannot be read: {error}") from None
            if filled != header.nbytes or extra:
                raise fail(f"member {key + '.npy'!r} does not hold the {header.nbytes} bytes its header promises")
            array = buffer.view(header.dtype)
            arrays[key] = array.reshape(header.shape, order="F" if header.fortran_order else "C")
        return arrays


def read_npz(
    path: str | os.PathLike[str],
    check: Callable[[Mapping[str, ArrayHeader]], None] | None = None,
    max_bytes: int = MAX_ARRAY_BYTES,
) -> dict[str, np.ndarray]:
    """:func:`loads_npz` of a file of at most ``max_bytes`` bytes; messages name the file."""
    return loads_npz(read_bytes(path, max_bytes), os.fspath(path), check, max_bytes)
