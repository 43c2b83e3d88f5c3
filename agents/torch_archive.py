"""The tensors of a ``torch.save`` archive, read as hostile data: without torch, never unpickled.

An archive ``torch.save`` writes is a zip holding ``PREFIX/data.pkl`` (a pickle of the saved
object, here a mapping of names to tensors) and one member ``PREFIX/data/KEY`` per storage (the
raw bytes of its elements). :func:`read_tensors` does not run the pickle: it interprets the few
instructions ``torch.save`` writes for such a mapping as data, where a call is only recorded
(which function, which arguments), never made. From that record each tensor's header (dtype,
shape, strides, storage and offset into it) is checked, then the caller's ``check`` sees the
headers, all before any storage is read; each storage is then read with exactly the bytes its
header claims.

What is read: a mapping with string keys of dense, contiguous float32, float64 or float16
tensors (``torch._utils._rebuild_tensor_v2`` over a ``FloatStorage``, ``DoubleStorage`` or
``HalfStorage``), little- or big-endian. Anything else (another dtype, a sparse or quantized
tensor, a view with other strides, a tensor past the end of its storage, a non-string key) is
one :class:`~draw_env.io.untrusted.UntrustedInputError` naming the file and the tensor.
"""

from __future__ import annotations

import io
import math
import pickletools
import reprlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from draw_env.io.untrusted import ZIP_ERRORS, UntrustedInputError, check_headers, open_zip

__all__ = ["MAX_PICKLE_BYTES", "TensorHeader", "read_tensors"]

#: The largest ``data.pkl`` read: a state dict's takes about 100 bytes per tensor.
MAX_PICKLE_BYTES = 256 * 1024
#: The most members an archive may hold (a state dict has one per tensor and a few more).
MAX_MEMBERS = 4096
#: Storage type (as ``torch.save`` names it) -> NumPy dtype of its elements, little-endian.
STORAGE_DTYPES = {"FloatStorage": "<f4", "DoubleStorage": "<f8", "HalfStorage": "<f2"}

_REBUILD_TENSOR = ("torch._utils", "_rebuild_tensor_v2")
#: How ``torch.save`` writes a tensor of a dtype without a storage type of its own (float8, ...).
_REBUILD_TENSOR_DTYPE = ("torch._utils", "_rebuild_tensor_v3")
_ORDERED_DICT = ("collections", "OrderedDict")


@dataclass(frozen=True)
class TensorHeader:
    """What ``data.pkl`` says about one tensor, checked before its storage is read.

    Attributes:
        shape: its size in each dimension.
        dtype: its elements' dtype, with the archive's byte order.
        storage: the key of its storage (the member ``PREFIX/data/{storage}``).
        offset: the element of the storage where it starts (it is contiguous from there).
    """

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    storage: str
    offset: int

    @property
    def size(self) -> int:
        """Its number of elements (a Python integer: no overflow)."""
        return math.prod(self.shape)


@dataclass(eq=False)
class _Global:
    """A ``module.name`` the pickle refers to: a name, never imported."""

    module: str
    name: str

    def __repr__(self) -> str:
        return f"{self.module[:60]}.{self.name[:60]}"


@dataclass(eq=False)
class _Call:
    """A call the pickle asks for (``REDUCE``): recorded, never made."""

    function: Any
    arguments: Any

    def __repr__(self) -> str:  # shallow: the arguments may nest as deep as the pickle
        return f"a call of {self.function!r}" if isinstance(self.function, _Global) else "a call"


@dataclass(eq=False)
class _Storage:
    """A storage reference (``BINPERSID``): ``('storage', type, key, location, size)``."""

    reference: Any

    def __repr__(self) -> str:
        return "a storage"


class _PickleRefused(Exception):
    """The pickle uses something a mapping of plain tensors never needs."""


def _pop(stack: list[Any], count: int) -> list[Any]:
    """The top ``count`` items of ``stack``, taken off it."""
    if len(stack) < count:
        raise IndexError("the stack is too short")
    items = stack[len(stack) - count :]
    del stack[len(stack) - count :]
    return items


def _pop_mark(stack: list[Any], marks: list[int]) -> list[Any]:
    """The items above the last ``MARK``, taken off ``stack``."""
    return _pop(stack, max(len(stack) - marks.pop(), 0))


def _set_items(target: Any, items: list[Any]) -> None:
    if not isinstance(target, dict) or len(items) % 2:
        raise _PickleRefused("sets items of something that is not a mapping")
    for key, value in zip(items[::2], items[1::2], strict=True):
        if key in target:
            raise _PickleRefused(f"sets the key {_short(key)} twice")
        target[key] = value


def _global(module: Any, name: Any) -> _Global:
    if not (isinstance(module, str) and isinstance(name, str)):
        raise _PickleRefused("names a global by something that is not a string")
    return _Global(module, name)


#: What the instructions that push one constant push.
_CONSTANTS = {"NEWTRUE": True, "NEWFALSE": False, "NONE": None, "EMPTY_TUPLE": ()}
#: The instructions whose decoded argument is the value they push.
_LITERALS = ("BINUNICODE", "SHORT_BINUNICODE", "BININT", "BININT1", "BININT2", "LONG1", "BINFLOAT")


def _interpret(data: bytes) -> Any:
    """The object ``data.pkl`` describes, built from data only: calls become :class:`_Call`,
    storages :class:`_Storage`; ``collections.OrderedDict()`` is the one call made (an empty
    dict).

    Raises:
        _PickleRefused: an instruction beyond what ``torch.save`` writes for a state dict.
        ValueError, IndexError, KeyError, TypeError: a malformed pickle.
    """
    stack: list[Any] = []
    marks: list[int] = []
    memo: dict[int, Any] = {}
    for opcode, decoded, _ in pickletools.genops(io.BytesIO(data)):
        name, argument = opcode.name, cast(Any, decoded)
        if name in ("PROTO", "FRAME"):
            continue
        if name == "STOP":
            return _pop(stack, 1)[0]
        if name == "MARK":
            marks.append(len(stack))
        elif name in _LITERALS:
            stack.append(argument)
        elif name in _CONSTANTS:
            stack.append(_CONSTANTS[name])
        elif name == "GLOBAL":
            stack.append(_global(*argument.split(" ", 1)))
        elif name == "STACK_GLOBAL":
            stack.append(_global(*_pop(stack, 2)))
        elif name in ("BINPUT", "LONG_BINPUT", "MEMOIZE"):
            memo[len(memo) if name == "MEMOIZE" else argument] = stack[-1]
        elif name in ("BINGET", "LONG_BINGET"):
            stack.append(memo[argument])
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            stack.append(tuple(_pop(stack, int(name[-1]))))
        elif name == "TUPLE":
            stack.append(tuple(_pop_mark(stack, marks)))
        elif name in ("EMPTY_LIST", "EMPTY_DICT"):
            stack.append([] if name == "EMPTY_LIST" else {})
        elif name in ("APPEND", "APPENDS"):
            items = _pop(stack, 1) if name == "APPEND" else _pop_mark(stack, marks)
            if not isinstance(stack[-1], list):
                raise _PickleRefused("appends to something that is not a list")
            stack[-1].extend(items)
        elif name in ("SETITEM", "SETITEMS"):
            items = _pop(stack, 2) if name == "SETITEM" else _pop_mark(stack, marks)
            _set_items(stack[-1], items)
        elif name == "BINPERSID":
            stack.append(_Storage(_pop(stack, 1)[0]))
        elif name == "REDUCE":
            function, arguments = _pop(stack, 2)
            new_dict = isinstance(function, _Global) and (function.module, function.name) == _ORDERED_DICT
            stack.append({} if new_dict and arguments == () else _Call(function, arguments))
        elif name == "BUILD":
            _pop(stack, 1)  # an object's attributes (a state dict's ``_metadata``): not needed
        else:
            raise _PickleRefused(f"uses the pickle instruction {name}")
    raise ValueError("no STOP")  # genops raises first: it ends only at STOP


def _short(value: Any) -> str:
    """``repr(value)`` cut short, however long or deeply nested ``value`` is."""
    shortener = reprlib.Repr()  # keyword arguments only from Python 3.12
    shortener.maxlevel, shortener.maxstring, shortener.maxother, shortener.maxlong = 3, 60, 60, 40
    return shortener.repr(value)


def _describe(value: Any) -> str:
    if not (isinstance(value, _Call) and isinstance(value.function, _Global)):
        return f"a {type(value).__name__.lstrip('_').lower()}"
    function = (value.function.module, value.function.name)
    arguments = value.arguments if isinstance(value.arguments, tuple) else ()
    if function == _REBUILD_TENSOR_DTYPE and len(arguments) > 6 and isinstance(arguments[6], _Global):
        return f"a tensor of {arguments[6].name[:60]} values (float32, float64 and float16 tensors are read)"
    return f"built by {value.function!r}, not a plain dense tensor"


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = []
    step = 1
    for length in reversed(shape):
        strides.append(step)
        step *= length
    return tuple(reversed(strides))


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _tensor_header(key: str, value: Any, big_endian: bool) -> tuple[TensorHeader, int]:
    """The header of tensor ``key`` and the size (in elements) its storage claims."""
    where = f"tensor {key!r}"
    if not (
        isinstance(value, _Call)
        and isinstance(value.function, _Global)
        and (value.function.module, value.function.name) == _REBUILD_TENSOR
    ):
        raise ValueError(f"{where} is {_describe(value)}")
    arguments = value.arguments
    if not isinstance(arguments, tuple) or len(arguments) not in (6, 7):
        raise ValueError(f"{where} is built from {_short(arguments)}, not a tensor's storage, offset, shape and strides")
    storage, offset, shape, strides = arguments[:4]
    reference = storage.reference if isinstance(storage, _Storage) else None
    if not (isinstance(reference, tuple) and len(reference) == 5 and reference[0] == "storage"):
        raise ValueError(f"{where} refers to {_short(reference)}, not a storage of the archive")
    kind, storage_key, _location, storage_size = reference[1:]
    kind_name = kind.name if isinstance(kind, _Global) and kind.module == "torch" else _short(kind)
    if kind_name not in STORAGE_DTYPES:
        raise ValueError(
            f"{where} holds {kind_name.removesuffix('Storage')} values; "
            "float32, float64 and float16 tensors are read"
        )
    if not isinstance(storage_key, str) or not storage_key.isdigit() or not _is_count(storage_size):
        raise ValueError(f"{where} refers to the storage {_short(storage_key)} of {_short(storage_size)} elements")
    if not (
        isinstance(shape, tuple)
        and isinstance(strides, tuple)
        and len(shape) == len(strides)
        and all(_is_count(length) for length in shape)
        and all(_is_count(step) for step in strides)
        and _is_count(offset)
    ):
        raise ValueError(
            f"{where} has the shape {_short(shape)}, strides {_short(strides)} and offset {_short(offset)}"
        )
    if strides != _contiguous_strides(shape):
        raise ValueError(f"{where} is a view of shape {shape} with strides {strides}, not a contiguous tensor")
    dtype = np.dtype(STORAGE_DTYPES[kind_name]).newbyteorder(">" if big_endian else "<")
    header = TensorHeader(shape, dtype, storage_key, offset)
    if offset + header.size > storage_size:
        raise ValueError(
            f"{where} needs elements {offset}..{offset + header.size} of storage {storage_key!r}, "
            f"which holds {storage_size}"
        )
    return header, storage_size


def read_tensors(
    payload: bytes,
    source: str,
    check: Callable[[Mapping[str, TensorHeader]], None] | None = None,
    max_elements: int = 64 * 1024 * 1024,
) -> dict[str, np.ndarray]:
    """The tensors of the ``torch.save`` archive ``payload`` (named ``source`` in messages), as
    read-only arrays of their own dtype.

    First ``data.pkl`` is interpreted (never run) into one :class:`TensorHeader` per tensor,
    each checked against its storage's claimed size; the tensors, and the storages, may hold at
    most ``max_elements`` together. ``check`` then sees ``{name: TensorHeader}`` and raises
    ``ValueError`` on a name or shape it does not expect. Only then is each storage read: its
    member must hold exactly the bytes its size claims.

    Raises:
        UntrustedInputError: the message starts with ``source`` and names the tensor where there
            is one; a ``ValueError`` of ``check`` is passed on as one, prefixed with ``source``.
    """

    def fail(message: str) -> UntrustedInputError:
        return UntrustedInputError(f"{source}: {message}")

    with open_zip(payload, MAX_MEMBERS, fail, "not a torch archive") as archive:
        prefix = _prefix(archive, fail)
        data = _read_member(archive, f"{prefix}data.pkl", MAX_PICKLE_BYTES, fail)
        big_endian = _big_endian(archive, prefix, fail)
        try:
            with warnings.catch_warnings():
                # pickletools decodes an instruction's argument before it is refused: quietly.
                warnings.simplefilter("ignore", DeprecationWarning)
                state = _interpret(data)
        except _PickleRefused as error:
            raise fail(f"data.pkl is not a mapping of plain tensors (it {error})") from None
        except (ValueError, IndexError, KeyError, TypeError, RecursionError) as error:
            raise fail(f"data.pkl is not a valid pickle ({type(error).__name__}: {error})") from None
        if not isinstance(state, dict):
            raise fail(f"data.pkl holds {_short(state)}, not a mapping of names to tensors")
        headers, storage_sizes = _headers(state, big_endian, fail)
        for what, sizes in (("tensors", [header.size for header in headers.values()]), ("storages", storage_sizes.values())):
            if sum(sizes) > max_elements:
                raise fail(f"the {what} hold {sum(sizes)} elements, more than the {max_elements} allowed")
        check_headers(check, headers, source)
        itemsizes = {header.storage: header.dtype.itemsize for header in headers.values()}
        storages = {
            key: _read_storage(archive, f"{prefix}data/{key}", size * itemsizes[key], fail)
            for key, size in storage_sizes.items()
        }
    return {
        name: np.frombuffer(storages[header.storage], header.dtype, header.size, header.offset * header.dtype.itemsize)
        .reshape(header.shape)
        for name, header in headers.items()
    }


def _prefix(archive: Any, fail: Callable[[str], UntrustedInputError]) -> str:
    """``PREFIX/`` of the archive's members: the folder of its one ``data.pkl``."""
    names = archive.namelist()
    if len(set(names)) != len(names):
        raise fail("not a torch archive (a member name appears twice)")
    pickles = [name for name in names if name.endswith("/data.pkl") and name.count("/") == 1]
    if len(pickles) != 1:
        raise fail(f"not a torch archive ({len(pickles)} PREFIX/data.pkl members, not one)")
    return pickles[0].removesuffix("data.pkl")


def _big_endian(archive: Any, prefix: str, fail: Callable[[str], UntrustedInputError]) -> bool:
    """Whether the storages are big-endian (torch's ``byteorder`` member; little without one)."""
    if f"{prefix}byteorder" not in archive.namelist():
        return False
    order = _read_member(archive, f"{prefix}byteorder", 16, fail)
    if order not in (b"little", b"big"):
        raise fail(f"its byteorder member says {order!r}, not little or big")
    return order == b"big"


def _headers(
    state: dict[Any, Any], big_endian: bool, fail: Callable[[str], UntrustedInputError]
) -> tuple[dict[str, TensorHeader], dict[str, int]]:
    """Each tensor's header, and each storage's claimed size; a storage's tensors share its dtype."""
    headers: dict[str, TensorHeader] = {}
    storage_sizes: dict[str, int] = {}
    storage_dtypes: dict[str, np.dtype[Any]] = {}
    for key, value in state.items():
        if not isinstance(key, str):
            raise fail(f"the key {_short(key)} is not a tensor name (a string)")
        try:
            header, storage_size = _tensor_header(key, value, big_endian)
        except ValueError as error:
            raise fail(str(error)) from None
        if storage_dtypes.setdefault(header.storage, header.dtype) != header.dtype:
            raise fail(f"tensor {key!r} reads storage {header.storage!r} as another dtype than another tensor")
        if storage_sizes.setdefault(header.storage, storage_size) != storage_size:
            raise fail(f"tensor {key!r} gives storage {header.storage!r} another size than another tensor")
        headers[key] = header
    return headers, storage_sizes


def _read_storage(archive: Any, member: str, nbytes: int, fail: Callable[[str], UntrustedInputError]) -> bytes:
    """The ``nbytes`` bytes of the storage ``member``, which must hold exactly those."""
    data = _read_member(archive, member, nbytes, fail)
    if len(data) != nbytes:
        short = member.partition("/")[2]
        raise fail(f"its member {short} holds {len(data)} bytes, not the {nbytes} its tensors claim")
    return data


def _read_member(archive: Any, name: str, max_bytes: int, fail: Callable[[str], UntrustedInputError]) -> bytes:
    """The bytes of member ``name``, at most ``max_bytes`` of them whatever the directory says."""
    short = name.partition("/")[2]
    try:
        info = archive.getinfo(name)
        if info.file_size > max_bytes:
            raise fail(f"its member {short} is {info.file_size} bytes, more than the {max_bytes} expected")
        with archive.open(info) as handle:
            data: bytes = handle.read(max_bytes + 1)
    except KeyError:
        raise fail(f"not a torch archive (no member {short})") from None
    except UntrustedInputError:
        raise
    except ZIP_ERRORS as error:
        raise fail(f"its member {short} cannot be read ({error})") from None
    if len(data) > max_bytes:
        raise fail(f"its member {short} holds more than the {max_bytes} bytes expected")
    return data
