"""``draw_env.io.files``: atomic writes leave the old file or the whole new one, and nothing else.

Each test lists the folder afterwards: a leftover temporary file (hidden names included) fails
it, as does a target whose bytes changed when the write failed.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from draw_env.io import files
from draw_env.io.files import (
    atomic_path,
    check_distinct,
    check_writable,
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


def test_a_failed_rename_removes_the_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    (tmp_path / "kept").write_bytes(b"old")
    monkeypatch.setattr(files.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space"):
        with atomic_path(tmp_path / "kept") as temporary:
            temporary.write_bytes(b"x")
    assert listing(tmp_path) == ["kept"] and (tmp_path / "kept").read_bytes() == b"old"


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


# ---------------------------------------------------------------------------------------------
# Only regular files are written: what else stands at the target is refused and kept.


def _directory(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))  # the socket file stays after the socket is closed


def _null_device(path: Path) -> None:
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    except PermissionError:
        pytest.skip("making a device file needs root")


SPECIAL: dict[str, tuple[Callable[[Path], None], str]] = {
    "directory": (_directory, "a directory"),
    "fifo": (_fifo, "a FIFO (named pipe)"),
    "socket": (_socket, "a socket"),
    "device": (_null_device, "a character device"),
}


@pytest.fixture(params=sorted(SPECIAL))
def special(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A special file ``out.json`` (short path: a socket's name is at most ~100 bytes) and its kind."""
    make, kind = SPECIAL[request.param]
    path = tmp_path / "out.json"
    make(path)
    yield path, kind


def identity(path: Path) -> tuple[int, int]:
    """What a path is on disk (its mode and inode), not following a link."""
    status = os.lstat(path)
    return status.st_mode, status.st_ino


def test_a_special_file_at_the_target_is_refused_before_the_body_and_kept(special: tuple[Path, str]) -> None:
    path, kind = special
    before = identity(path)
    ran = []
    with pytest.raises(ValueError, match=re.escape(f"out.json is {kind}, not a regular file")):
        with atomic_path(path) as temporary:
            ran.append(True)
            temporary.write_text("{}")
    assert not ran and identity(path) == before and listing(path.parent) == ["out.json"]


def test_a_link_to_a_special_file_is_refused_and_both_are_kept(special: tuple[Path, str]) -> None:
    path, kind = special
    link = path.parent / "link.json"
    link.symlink_to(path.name)
    before = identity(path), identity(link)
    with pytest.raises(ValueError, match=re.escape(f"link.json links to {path}, which is {kind}")):
        write_text_atomic(link, "{}")
    assert (identity(path), identity(link)) == before and listing(path.parent) == ["link.json", "out.json"]


def test_check_writable_refuses_a_special_file_naming_the_option(special: tuple[Path, str]) -> None:
    path, kind = special
    with pytest.raises(ValueError, match=re.escape(f"--json: {path} is {kind}")):
        check_writable("--json", path)
    assert listing(path.parent) == ["out.json"]  # no probe left either


def test_a_link_is_followed_its_target_written_and_the_link_kept(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to("real.json")
    (tmp_path / "dangling.json").symlink_to("missing.json")
    (tmp_path / "far").mkdir()
    (tmp_path / "away.json").symlink_to(tmp_path / "far" / "target.json")
    write_text_atomic(tmp_path / "link.json", "new")
    write_text_atomic(tmp_path / "dangling.json", "created")
    check_writable("--json", tmp_path / "away.json")
    with atomic_path(tmp_path / "away.json") as temporary:
        assert temporary.parent == tmp_path / "far"  # the rename stays within the target's folder
        temporary.write_text("far")
    assert [os.readlink(tmp_path / name) for name in ("link.json", "dangling.json", "away.json")] == [
        "real.json", "missing.json", str(tmp_path / "far" / "target.json")
    ]
    assert (tmp_path / "real.json").read_text() == "new" and (tmp_path / "missing.json").read_text() == "created"
    assert listing(tmp_path / "far") == ["target.json"] and (tmp_path / "far" / "target.json").read_text() == "far"
    assert listing(tmp_path) == ["away.json", "dangling.json", "far", "link.json", "missing.json", "real.json"]


@pytest.mark.parametrize("appears", ["fifo", "link"])
def test_what_appears_at_the_target_during_the_write_is_not_replaced(tmp_path: Path, appears: str) -> None:
    target, elsewhere = tmp_path / "out.json", tmp_path / "elsewhere.json"
    elsewhere.write_text("kept")
    with pytest.raises(ValueError, match="out.json"):
        with atomic_path(target) as temporary:
            temporary.write_text("new")
            if appears == "fifo":
                os.mkfifo(target)
            else:
                target.symlink_to(elsewhere)
    assert stat.S_ISFIFO(os.lstat(target).st_mode) if appears == "fifo" else target.is_symlink()
    assert elsewhere.read_text() == "kept" and listing(tmp_path) == ["elsewhere.json", "out.json"]


# ---------------------------------------------------------------------------------------------
# check_distinct: no output overwrites an input or another output.


def test_an_output_that_is_an_input_under_any_name_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    record = tmp_path / "game.json"
    record.write_text("{}")
    (tmp_path / "alias.json").symlink_to("game.json")
    os.link(record, tmp_path / "hard.json")
    outputs: list[str | Path] = ["game.json", record, "./missing/../game.json", "alias.json", "hard.json"]
    for output in outputs:
        with pytest.raises(ValueError, match=r"^--html .* is the same file as the record \(game.json\), which this command reads"):
            check_distinct([("--html", output)], [("the record", "game.json")])
    assert listing(tmp_path) == ["alias.json", "game.json", "hard.json"] and record.read_text() == "{}"


def test_two_outputs_at_one_path_are_refused_and_distinct_ones_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"^--png .*X is the same file as --json \(X\): give each output its own path$"):
        check_distinct([("--json", "X"), ("--png", tmp_path / "X")])  # neither exists yet
    check_distinct([("--json", "a.json"), ("--png", "a.png"), ("--records", None)], [("the record", "a")])
    assert listing(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# A signal in the middle of a write: the command exits as is usual, the old file stays.

WRITER = """
import argparse, os, signal, sys, time
from draw_env.commands import reported_errors
from draw_env.io.files import atomic_path

# As from a terminal: the signal at its default action (a runner or nohup may have it ignored,
# and an ignored signal stays ignored on purpose).
signal.signal(getattr(signal, sys.argv[2]), signal.SIG_DFL if sys.argv[2] != "SIGINT" else signal.default_int_handler)
with reported_errors(argparse.ArgumentParser(prog="writer")):
    with atomic_path(sys.argv[1]) as temporary:
        temporary.write_text("half")
        os.kill(os.getpid(), getattr(signal, sys.argv[2]))
        time.sleep(30)
"""


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_during_a_write_exits_cleanly_and_leaves_the_old_file(tmp_path: Path, name: str) -> None:
    import signal

    target = tmp_path / "out.txt"
    target.write_text("old")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(target), name],
        capture_output=True, text=True, timeout=60, cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert done.returncode == 128 + getattr(signal, name), done.stderr
    assert "Traceback" not in done.stderr
    assert listing(tmp_path) == ["out.txt"] and target.read_text() == "old"
