"""``draw_env.files``: atomic writes leave the old file or the whole new one, and nothing else.

Each test lists the folder afterwards: a leftover temporary file (hidden names included) fails
it, as does a target whose bytes changed when the write failed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from draw_env.files import (
    atomic_path,
    temporary_name,
    write_bytes_atomic,
    write_json_atomic,
    write_text_atomic,
)


def listing(folder: Path) -> list[str]:
    """Every name in ``folder``, hidden ones too, sorted."""
    return sorted(path.name for path in folder.iterdir())


def test_success_writes_the_target_and_leaves_nothing_else(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "out.txt"  # the parents are created
    with atomic_path(target) as temporary:
        assert temporary.parent == target.parent and not temporary.exists() and not target.exists()
        temporary.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert listing(target.parent) == ["out.txt"]
    with atomic_path(str(target)) as temporary:  # a str target; an existing target is replaced
        temporary.write_bytes(b"newer")
    assert target.read_bytes() == b"newer" and listing(target.parent) == ["out.txt"]


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()])
def test_an_exception_keeps_the_old_content_and_removes_the_temporary_file(
    tmp_path: Path, error: BaseException
) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b'{"old": 1}')
    with pytest.raises(type(error)):
        with atomic_path(target) as temporary:
            temporary.write_bytes(b'{"half')  # a write cut short
            raise error
    assert target.read_bytes() == b'{"old": 1}'
    assert listing(tmp_path) == ["state.json"]


def test_an_exception_without_an_old_file_leaves_no_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bad"):
        with atomic_path(tmp_path / "new.csv") as temporary:
            temporary.write_text("a,b\n")
            raise ValueError("bad")
    assert listing(tmp_path) == []


def test_a_failed_rename_removes_the_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()  # a file cannot replace a folder
    with pytest.raises(OSError):
        with atomic_path(tmp_path / "taken") as temporary:
            temporary.write_bytes(b"x")
    assert listing(tmp_path) == ["taken"] and (tmp_path / "taken").is_dir()


def test_a_body_that_writes_nothing_fails_instead_of_leaving_an_empty_target(tmp_path: Path) -> None:
    target = tmp_path / "kept.txt"
    target.write_text("kept")
    with pytest.raises(FileNotFoundError):
        with atomic_path(target):
            pass
    assert target.read_text() == "kept" and listing(tmp_path) == ["kept.txt"]


@pytest.mark.parametrize("name", ["final.npz", "strength.png", "step_100.zip", "step_100.pool.npz", "plain"])
def test_the_temporary_name_keeps_the_suffix_is_hidden_and_unique(tmp_path: Path, name: str) -> None:
    target = tmp_path / name
    first, second = temporary_name(target), temporary_name(target)
    assert first != second
    for temporary in (first, second):
        assert temporary.parent == tmp_path and temporary.name.endswith(".partial" + target.suffix)
        assert temporary.name.startswith(f".{target.stem}.")


def test_writers_that_pick_the_format_from_the_suffix_write_the_yielded_path(tmp_path: Path) -> None:
    # np.savez appends ".npz" to a name without it; the temporary name must already end in it.
    arrays = {"a": np.arange(6, dtype=np.int16).reshape(2, 3), "b": np.float64(0.5)}
    with atomic_path(tmp_path / "shard.npz") as temporary:
        np.savez_compressed(temporary, **arrays)
    with np.load(tmp_path / "shard.npz", allow_pickle=False) as data:
        np.testing.assert_array_equal(data["a"], arrays["a"])
        assert float(data["b"]) == 0.5
    # savefig without format= reads it from the suffix (the project's plot_learning_curve does).
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(1, 1))
    try:
        with atomic_path(tmp_path / "chart.png") as temporary:
            figure.savefig(temporary, dpi=20)
    finally:
        plt.close(figure)
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert listing(tmp_path) == ["chart.png", "shard.npz"]


def test_text_json_and_bytes_helpers_write_exact_bytes(tmp_path: Path) -> None:
    data = {"é": [1, 2.5, None], "b": {"c": True}}
    assert write_json_atomic(tmp_path / "a.json", data, indent=1) == tmp_path / "a.json"
    assert (tmp_path / "a.json").read_bytes() == json.dumps(data, indent=1).encode("utf-8")
    write_json_atomic(tmp_path / "b.json", data)
    assert (tmp_path / "b.json").read_bytes() == json.dumps(data).encode("ascii")
    text = "line one\r\nline two\n\u00e9\n"  # no newline translation, whatever the platform
    write_text_atomic(tmp_path / "c.txt", text)
    assert (tmp_path / "c.txt").read_bytes() == text.encode("utf-8")
    write_text_atomic(tmp_path / "d.txt", "\u00e9", encoding="latin-1")
    assert (tmp_path / "d.txt").read_bytes() == b"\xe9"
    write_bytes_atomic(tmp_path / "sub" / "e.bin", b"\x00\x01")
    assert (tmp_path / "sub" / "e.bin").read_bytes() == b"\x00\x01"
    assert listing(tmp_path) == ["a.json", "b.json", "c.txt", "d.txt", "sub"]
    assert listing(tmp_path / "sub") == ["e.bin"]


def test_a_text_that_cannot_be_encoded_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "t.txt"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(target, "\u2603", encoding="ascii")
    assert target.read_text() == "old" and listing(tmp_path) == ["t.txt"]
