"""``draw_env.io.untrusted``: the bounded readers of JSON, YAML and ``.npz`` files people exchange.

Each refusal is one ``UntrustedInputError`` (a ``ValueError``) line that starts with the file's
name; nothing recurses without a bound, nothing expands an alias, nothing unpickles, and no
array is read before its name, dtype and shape passed the caller's check. The fuzz tests feed
random text and mutated archives and accept only a clean ``ValueError`` or a result.
"""

from __future__ import annotations

import io
import json
import struct
import time
import tracemalloc
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draw_env.io.untrusted import (
    MAX_DEPTH,
    MAX_JSON_VALUES,
    MAX_YAML_VALUES,
    ArrayHeader,
    UntrustedInputError,
    loads_json,
    loads_npz,
    loads_yaml,
    read_json,
    read_npz,
    read_text,
    read_yaml,
)


def npz_bytes(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def npy_member(header: dict[str, Any], payload: bytes) -> bytes:
    """A version-1.0 ``.npy`` stream with a hand-written header (it may lie)."""
    text = repr(header).encode("latin1")
    text += b" " * ((64 - (10 + len(text) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + payload


def zip_of(members: Mapping[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------- JSON


def test_json_bounds_depth_before_parsing() -> None:
    assert loads_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x") is not None
    for text in ("[" * 100_000, "{\"a\":" * 100_000, "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)):
        with pytest.raises(UntrustedInputError, match=r"^x: nested deeper than 32 levels"):
            loads_json(text, "x")
    assert loads_json(json.dumps(["[" * 100]), "x") == ["[" * 100]  # brackets in strings do not count


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "a": 2}', "the key 'a' appears twice"),
        ("[NaN]", "NaN is not a number JSON allows"),
        ("[1e999]", "out of a float's range"),
        ("[" + "9" * 30 + "]", "an integer of 30 digits"),
        ("{", "not valid JSON at line 1, column 2"),
    ],
)
def test_json_refuses_what_no_file_of_ours_holds(text: str, message: str) -> None:
    with pytest.raises(UntrustedInputError, match=message) as raised:
        loads_json(text, "state.json")
    assert str(raised.value).startswith("state.json: ") and "\n" not in str(raised.value)


def test_json_bounds_its_values_before_parsing() -> None:
    lists = MAX_JSON_VALUES // 3 + 1
    many = "[" + ",".join(["[[]]"] * lists) + "]"  # 7 MB that Python would hold in 300 MB
    tracemalloc.start()
    try:
        bound = 2 * lists + (lists - 1) + 2  # its [ and , and the outermost value
        with pytest.raises(UntrustedInputError, match=rf"^record.json: may hold {bound} JSON values .* more than the {MAX_JSON_VALUES} allowed$"):
            loads_json(many, "record.json")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak  # nothing parsed
    # 7 values: the object, 2 keys, the list and its 2 numbers, "x".
    assert loads_json('{"a": [1, 2], "b": "x"}', "x", max_values=7) == {"a": [1, 2], "b": "x"}
    with pytest.raises(UntrustedInputError, match="may hold 8 JSON values"):
        loads_json('{"a": [1, 2], "b": ["x"]}', "x", max_values=7)


@pytest.mark.parametrize(
    ("text", "expect", "found"),
    [("[1]", dict, "an array"), (' \n"x"', dict, "a string"), ("3", list, "a number or constant"), ("", dict, "nothing")],
)
def test_json_refuses_another_outer_value_before_parsing(text: str, expect: type[Any], found: str) -> None:
    what = "an object" if expect is dict else "an array"
    with pytest.raises(UntrustedInputError, match=f"^game.json: its JSON must be {what}, not {found}$"):
        loads_json(text, "game.json", expect=expect)
    assert loads_json(' {"a": 1}', "x", expect=dict) == {"a": 1} and loads_json("[1]", "x", expect=list) == [1]


def test_read_json_names_the_file_and_bounds_its_size(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    path.write_text('{"a": [1, 2]}')
    assert read_json(path) == {"a": [1, 2]}
    with pytest.raises(UntrustedInputError, match=r"record.json: the file is 13 bytes, more than the 5 allowed"):
        read_json(path, max_bytes=5)
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(UntrustedInputError, match=r"record.json: not UTF-8 text \(byte 7 is 0xff\)"):
        read_json(path)
    with pytest.raises(UntrustedInputError, match="no such file"):
        read_json(tmp_path / "missing.json")
    with pytest.raises(UntrustedInputError, match="is a directory"):
        read_text(tmp_path)


# ---------------------------------------------------------------------------------------- YAML


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x: &a [*a]\n", "anchors and aliases"),
        ("a: &a [1]\nb: *a\n", "anchors and aliases"),
        ("[" * 5000 + "]" * 5000, "nested deeper than 32 levels"),
        ("- " * 5000 + "1\n", "nested deeper than 32 levels"),
        ("a: 1\na: 2\n", r"line 2: duplicate key 'a' \(first on line 1\)"),
        ("a: [1\n", "not valid YAML"),
        ("a: !!python/object:os.system x\n", "not valid YAML"),
        ("a: " + "1:" * 2000 + "1\n", r"line 1, column 4: an integer of 4001 characters \(at most 80\)"),
    ],
)
def test_yaml_refuses_aliases_depth_and_repeated_keys(text: str, message: str) -> None:
    with pytest.raises(UntrustedInputError, match=message) as raised:
        loads_yaml(text, "config file 'c.yaml'")
    assert str(raised.value).startswith("config file 'c.yaml'") and "\n" not in str(raised.value)


def test_a_billion_laughs_is_refused_at_once(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    started = time.perf_counter()
    with pytest.raises(UntrustedInputError, match="anchors and aliases"):
        read_yaml(path)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    "text",
    [
        "a: [" + ",".join(["[" * 30 + "]" * 30] * 15_600) + "]",  # 0.95 MB that PyYAML took a minute over
        "a: [" + ",".join(["1"] * 200_000) + "]",
        "a:\n" + "- 1\n" * 200_000,
        "".join(f"k{index}: {{x: 1}}\n" for index in range(50_000)),
    ],
    ids=["nested flow", "flow", "block", "mappings"],
)
def test_yaml_is_refused_after_its_first_values_beyond_the_bound(text: str) -> None:
    started = time.perf_counter()
    with pytest.raises(UntrustedInputError, match=rf"^c.yaml, line \d+, column \d+: more than {MAX_YAML_VALUES} values$"):
        loads_yaml(text, "c.yaml")
    assert time.perf_counter() - started < 5.0  # about 0.5 s: only the first 10,000 values are parsed
    # 10 values: 2 mappings, 2 sequences, 3 keys and 3 numbers.
    assert loads_yaml("a: [1, [2]]\nb: {c: 3}", "x", max_values=10) == {"a": [1, [2]], "b": {"c": 3}}
    with pytest.raises(UntrustedInputError, match=r"^x, line 2, column 9: more than 10 values$"):
        loads_yaml("a: [1, [2]]\nb: {c: [3]}", "x", max_values=10)


def test_yaml_reads_plain_configs(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("seed: 3\nppo: {gamma: 0.9, net_arch: [64, 64]}\n")
    assert read_yaml(path) == {"seed": 3, "ppo": {"gamma": 0.9, "net_arch": [64, 64]}}
    assert loads_yaml("", "empty") is None


# ---------------------------------------------------------------------------------------- npz


def test_npz_round_trip_and_the_check_sees_headers_first() -> None:
    arrays = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "f": np.asfortranarray(np.eye(3))}
    seen: dict[str, ArrayHeader] = {}
    result = loads_npz(npz_bytes(**arrays), "p.npz", seen.update)
    assert seen == {
        "w": ArrayHeader((2, 3), np.dtype(np.float32), False),
        "f": ArrayHeader((3, 3), np.dtype(np.float64), True),
    }
    for name, array in arrays.items():
        np.testing.assert_array_equal(result[name], array)
        assert result[name].dtype == array.dtype and result[name].flags.writeable


def test_the_check_refuses_before_any_array_is_read() -> None:
    data = npz_bytes(big=np.zeros((4000, 1000), dtype=np.float32))  # 16 MB

    def refuse(headers: Mapping[str, ArrayHeader]) -> None:
        raise ValueError(f"unexpected arrays {sorted(headers)}")

    tracemalloc.start()
    try:
        with pytest.raises(UntrustedInputError, match=r"^p.npz: unexpected arrays \['big'\]$"):
            loads_npz(data, "p.npz", refuse)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000  # the 16 MB array was never read


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ({"a": b"x"}, r"member 'a' is not a .npy array"),
        ({"a.npy": b"not npy"}, "has no valid .npy header"),
        ({"a.npy": npy_member({"descr": "|O", "fortran_order": False, "shape": (1,)}, b"")}, "holds object values"),
        ({"a.npy": npy_member({"descr": "<U4", "fortran_order": False, "shape": (1,)}, b"")}, "not plain numbers"),
        (
            {"a.npy": npy_member({"descr": "<f4", "fortran_order": False, "shape": (20_000_000_000,)}, b"")},
            "more than the .* bytes allowed",
        ),
        (
            {"a.npy": npy_member({"descr": "<f4", "fortran_order": False, "shape": (4,)}, b"\0" * 8)},
            "header promises",
        ),
    ],
)
def test_malformed_members_are_refused(members: dict[str, bytes], message: str) -> None:
    with pytest.raises(UntrustedInputError, match=message) as raised:
        loads_npz(zip_of(members), "p.npz")
    assert str(raised.value).startswith("p.npz: not a NumPy .npz of plain arrays")


def test_a_pickled_object_array_never_runs() -> None:
    with pytest.raises(UntrustedInputError, match="holds object values"):
        loads_npz(npz_bytes(a=np.array([print], dtype=object)), "p.npz")


def test_a_member_that_decompresses_to_more_than_its_header_says_is_refused() -> None:
    honest = npy_member({"descr": "<f4", "fortran_order": False, "shape": (2,)}, b"\0" * 8)
    data = bytearray(zip_of({"a.npy": honest + b"\0" * 1_000_000}, zipfile.ZIP_DEFLATED))
    # Rewrite the sizes in both directory entries so that they agree with the header.
    size = len(honest)
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        where = data.find(signature) + offset
        data[where : where + 4] = struct.pack("<I", size)
    with pytest.raises(UntrustedInputError, match="Bad CRC-32|cannot be read|header promises"):
        loads_npz(bytes(data), "p.npz")


def test_read_npz_bounds_the_file(tmp_path: Path) -> None:
    path = tmp_path / "p.npz"
    path.write_bytes(npz_bytes(a=np.zeros(1000)))
    assert read_npz(path)["a"].shape == (1000,)
    with pytest.raises(UntrustedInputError, match="more than the 100 allowed"):
        read_npz(path, max_bytes=100)
    with pytest.raises(UntrustedInputError, match="not a zip archive"):
        loads_npz(b"PK\x03\x04 nonsense", "p.npz")


# ---------------------------------------------------------------------------------------- fuzz

FUZZ = settings(max_examples=200, deadline=1000, suppress_health_check=[HealthCheck.too_slow])
JSONISH = st.text(alphabet='[]{}":,0123456789.eE-+ \ntruefalsn\\ua&*!|>-#', max_size=400)


@FUZZ
@given(st.one_of(st.text(max_size=400), JSONISH))
def test_fuzz_loads_json_gives_data_or_a_value_error(text: str) -> None:
    try:
        loads_json(text, "fuzz")
    except UntrustedInputError as error:
        assert str(error).startswith("fuzz") and "\n" not in str(error)


@FUZZ
@given(st.one_of(st.text(max_size=400), JSONISH))
def test_fuzz_loads_yaml_gives_data_or_a_value_error(text: str) -> None:
    try:
        loads_yaml(text, "fuzz")
    except UntrustedInputError as error:
        assert str(error).startswith("fuzz") and "\n" not in str(error)


_SAMPLE = npz_bytes(a=np.arange(12, dtype=np.float32).reshape(3, 4), b=np.ones(5, dtype=np.int16))


@settings(max_examples=300, deadline=1000)
@given(st.lists(st.tuples(st.integers(0, len(_SAMPLE) - 1), st.integers(0, 255)), min_size=1, max_size=8))
def test_fuzz_mutated_npz_gives_arrays_or_a_value_error(edits: list[tuple[int, int]]) -> None:
    data = bytearray(_SAMPLE)
    for where, byte in edits:
        data[where] = byte
    try:
        arrays = loads_npz(bytes(data), "fuzz.npz")
    except UntrustedInputError as error:
        assert str(error).startswith("fuzz.npz: ")
    else:
        assert all(array.dtype.kind in "biufc" for array in arrays.values())


def test_fuzz_json_of_every_depth_is_bounded() -> None:
    for depth in (1, 31, 32, 33, 1000, 200_000):
        text = json.dumps(0)
        text = "[" * depth + text + "]" * depth
        try:
            loads_json(text, "deep")
        except UntrustedInputError as error:
            assert depth > MAX_DEPTH and "nested deeper" in str(error)
        else:
            assert depth <= MAX_DEPTH
