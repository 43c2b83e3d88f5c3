"""SB3 checkpoints built by hand, as ``torch.save`` lays them out, with any tensor header, true or
not: the material of the checkpoint reader's tests (no torch needed).

A torch archive is a zip of ``archive/data.pkl`` (a protocol-2 pickle of the state dict, each
tensor a ``torch._utils._rebuild_tensor_v2`` call over a storage reference) and one
``archive/data/KEY`` per storage; ``tests/test_policy_files.py`` checks that torch reads what
:func:`torch_archive` writes.
"""

from __future__ import annotations

import io
import math
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.sb3_checkpoint import write_checkpoint_record

#: NumPy dtype -> the storage type ``torch.save`` names for it.
STORAGE_TYPES = {np.dtype("<f4"): "FloatStorage", np.dtype("<f8"): "DoubleStorage", np.dtype("<f2"): "HalfStorage"}


@dataclass(frozen=True)
class Global:
    """``module.name`` in the pickle (the ``GLOBAL`` instruction)."""

    module: str
    name: str


@dataclass(frozen=True)
class Call:
    """``function(*arguments)`` in the pickle (``REDUCE``)."""

    function: Any
    arguments: tuple[Any, ...]


@dataclass(frozen=True)
class Persistent:
    """A persistent reference (``BINPERSID``), how torch refers to a storage."""

    reference: Any


def _write(value: Any, out: bytearray) -> None:
    if isinstance(value, bool) or value is None:
        out += {True: b"\x88", False: b"\x89", None: b"N"}[value]
    elif isinstance(value, int):
        if -(2**31) <= value < 2**31:
            out += b"J" + struct.pack("<i", value)
        else:
            data = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
            out += b"\x8a" + bytes([len(data)]) + data
    elif isinstance(value, float):
        out += b"G" + struct.pack(">d", value)
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        out += b"X" + struct.pack("<I", len(data)) + data
    elif isinstance(value, tuple):
        out += b"("
        for item in value:
            _write(item, out)
        out += b"t"
    elif isinstance(value, list):
        out += b"](" if value else b"]"
        for item in value:
            _write(item, out)
        out += b"e" if value else b""
    elif isinstance(value, dict):
        out += b"}(" if value else b"}"
        for key, item in value.items():
            _write(key, out)
            _write(item, out)
        out += b"u" if value else b""
    elif isinstance(value, Global):
        out += b"c" + f"{value.module}\n{value.name}\n".encode()
    elif isinstance(value, Call):
        _write(value.function, out)
        _write(value.arguments, out)
        out += b"R"
    elif isinstance(value, Persistent):
        _write(value.reference, out)
        out += b"Q"
    else:
        raise TypeError(f"cannot write {type(value).__name__}")


def pickle_of(value: Any) -> bytes:
    """``value`` as a protocol-2 pickle, as ``torch.save`` writes one (a mapping is an
    ``OrderedDict`` with its items set, as a state dict's is)."""
    out = bytearray(b"\x80\x02")
    if isinstance(value, dict):
        _write(Call(Global("collections", "OrderedDict"), ()), out)
        if value:
            out += b"("
            for key, item in value.items():
                _write(key, out)
                _write(item, out)
            out += b"u"
    else:
        _write(value, out)
    return bytes(out + b".")


def tensor(
    storage: str,
    size: int,
    shape: tuple[Any, ...],
    strides: tuple[Any, ...] | None = None,
    offset: Any = 0,
    storage_type: str = "FloatStorage",
    function: str = "_rebuild_tensor_v2",
) -> Call:
    """A tensor of ``shape`` over storage ``storage`` of ``size`` elements, as ``data.pkl`` says it
    (contiguous unless ``strides`` says otherwise, or ``shape`` is no tuple of integers)."""
    if strides is None:
        counts = isinstance(shape, tuple) and all(type(length) is int for length in shape)
        strides = tuple(math.prod(shape[index + 1 :]) for index in range(len(shape))) if counts else ()
    reference = ("storage", Global("torch", storage_type), storage, "cpu", size)
    hooks = Call(Global("collections", "OrderedDict"), ())
    return Call(Global("torch._utils", function), (Persistent(reference), offset, shape, strides, False, hooks))


def torch_archive(state: Any, storages: dict[str, bytes], byteorder: bytes | None = b"little") -> bytes:
    """The bytes ``torch.save`` would write for ``state`` (whose tensors refer to ``storages``)."""
    members = {"archive/data.pkl": pickle_of(state), "archive/.format_version": b"1"}
    if byteorder is not None:
        members["archive/byteorder"] = byteorder
    members |= {f"archive/data/{key}": data for key, data in storages.items()}
    members["archive/version"] = b"3\n"
    return zip_of(members)


def archive_of(arrays: dict[str, np.ndarray]) -> bytes:
    """A torch archive of ``arrays`` (float16, float32 or float64), one storage each, as torch saves them."""
    state = {
        name: tensor(str(index), array.size, array.shape, storage_type=STORAGE_TYPES[array.dtype])
        for index, (name, array) in enumerate(arrays.items())
    }
    return torch_archive(state, {str(index): array.tobytes() for index, array in enumerate(arrays.values())})


def sb3_arrays(hidden: int = 8, inputs: int = 340, seed: int = 0) -> dict[str, np.ndarray]:
    """The parameters of an SB3 MLP policy with one hidden layer of ``hidden`` units, SB3's names."""
    rng = np.random.default_rng(seed)
    shapes = {
        "mlp_extractor.policy_net.0.weight": (hidden, inputs),
        "mlp_extractor.policy_net.0.bias": (hidden,),
        "mlp_extractor.value_net.0.weight": (hidden, inputs),
        "mlp_extractor.value_net.0.bias": (hidden,),
        "action_net.weight": (58, hidden),
        "action_net.bias": (58,),
        "value_net.weight": (1, hidden),
        "value_net.bias": (1,),
    }
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def write_checkpoint(path: Path, policy_pth: bytes) -> Path:
    """An SB3 checkpoint ``path`` holding ``policy_pth``, with the side file of a 2-player policy."""
    path.write_bytes(zip_of({"data": b"{}", "policy.pth": policy_pth}))
    write_checkpoint_record(path, num_players=2, features="extended", activation="relu")
    return path
