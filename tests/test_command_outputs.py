"""The commands' output files: never an input, never another output, never a special file, and
never left half written by a signal.

A refused output is one line on standard error and exit code 2, before anything is played or
written; a signal ends a command with the usual status (128 + the signal), no traceback and no
temporary file (``*.partial*``) left, worker processes included.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.cli import main as eval_main
from arena.play import main as play_main
from draw_env.io.replay import main as replay_main
from tests.test_replay_html import make_record

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "agents" / "policies" / "ppo_2p"


def snapshot(folder: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every entry under ``folder``: its mode and, for a regular file, its bytes."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        mode = os.lstat(path).st_mode
        entries[str(path.relative_to(folder))] = (mode, path.read_bytes() if path.is_file() and not path.is_symlink() else None)
    return entries


def one_error_line(stderr: str, prog: str, *named: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), stderr
    for name in named:
        assert name in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder to run in, holding a policy file pair ``policy.npz`` + ``policy.json`` and a FIFO."""
    monkeypatch.chdir(tmp_path)
    for suffix in (".npz", ".json"):
        shutil.copy(POLICY.with_suffix(suffix), tmp_path / f"policy{suffix}")
    os.mkfifo(tmp_path / "fifo")
    return tmp_path


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["heaviest", "variety", "--json", "X", "--png", "X"], "--png X is the same file as --json (X)"),
        (["heaviest", "variety", "--json", "out", "--records", "./out"], "--records out is the same file as --json (out)"),
        (["network:path=policy.npz", "heaviest", "--png", "policy.json"], "--png policy.json is the same file as a file of agent network(path=policy.npz) ("),
        (["network", "heaviest", "--sweep", "path=policy.npz", "--json", "policy.npz"], "--json policy.npz is the same file as a file of --sweep path=policy.npz (policy.npz), which this command reads"),
        (["heaviest", "variety", "--json", "fifo"], "--json: fifo is a FIFO (named pipe), not a regular file"),
    ],
    ids=["json is png", "json is records", "png is a policy's record", "json is a swept policy", "json is a fifo"],
)
def test_draw_eval_refuses_outputs_before_playing(
    workdir: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], named: str
) -> None:
    before = snapshot(workdir)
    with pytest.raises(SystemExit) as exited:
        eval_main([*arguments, "--games", "2", "--quiet"])
    assert exited.value.code == 2
    captured = capsys.readouterr()
    one_error_line(captured.err, "draw-eval", named)
    assert "win rate" not in captured.out  # nothing was played
    assert snapshot(workdir) == before  # nothing was written


@pytest.mark.parametrize("html", ["game.json", "alias.json", "./game.json", "fifo"])
def test_draw_replay_never_writes_over_its_record_or_a_special_file(
    workdir: Path, capsys: pytest.CaptureFixture[str], html: str
) -> None:
    make_record(workdir)
    (workdir / "alias.json").symlink_to("game.json")
    before = snapshot(workdir)
    assert replay_main(["game.json", "--html", html], stdout=io.StringIO()) == 2
    if html == "fifo":
        one_error_line(capsys.readouterr().err, "draw-replay", "--html: fifo is a FIFO")
    else:
        one_error_line(capsys.readouterr().err, "draw-replay", f"--html {Path(html)} is the same file as the record (game.json)")
    assert snapshot(workdir) == before


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--opponents", "network:path=policy.npz", "--record", "policy.json"], "a file of agent network(path=policy.npz) ("),
        (["--opponents", "heaviest", "--hint-agent", "network:path=policy.npz", "--record", "policy.npz"], "a file of agent network(path=policy.npz) ("),
        (["--opponents", "heaviest", "--record", "fifo"], "--record: fifo is a FIFO"),
    ],
    ids=["record is the opponent's policy record", "record is the hint agent's policy", "record is a fifo"],
)
def test_draw_play_refuses_a_record_path_before_the_game(
    workdir: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], named: str
) -> None:
    before = snapshot(workdir)
    stdout = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        play_main(["--seed", "1", *arguments], stdin=io.StringIO("quit\n"), stdout=stdout)
    assert exited.value.code == 2
    assert stdout.getvalue() == ""  # no game was played
    one_error_line(capsys.readouterr().err, "draw-play", named)
    assert snapshot(workdir) == before


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["final.zip", "final.policy.npz"], "OUTPUT's record final.policy.json is the same file as CHECKPOINT's side file"),
        (["final.zip", "out.npz", "--provenance", "out.json"], "OUTPUT's record out.json is the same file as --provenance"),
        (["final.zip", "final.zip"], "OUTPUT final.zip is the same file as CHECKPOINT"),
    ],
    ids=["record is the side file", "record is the provenance", "output is the checkpoint"],
)
def test_export_refuses_to_write_over_what_it_reads(
    workdir: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], named: str
) -> None:
    from train.export import main as export_main

    (workdir / "final.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: checked, never read
    (workdir / "final.policy.json").write_text("{}")
    (workdir / "out.json").write_text("{}")
    before = snapshot(workdir)
    with pytest.raises(SystemExit) as exited:
        export_main(arguments)
    assert exited.value.code == 2
    one_error_line(capsys.readouterr().err, "python -m train.export", named)
    assert snapshot(workdir) == before


# ---------------------------------------------------------------------------------------------
# Signals: draw-eval with worker processes that write game records, stopped mid-run.


def group_is_gone(group: int, seconds: float = 5.0) -> bool:
    """Whether no process of ``group`` is left (within ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _stop_signals_at_their_defaults() -> None:
    """The command starts as from a terminal: a runner (or nohup, or a shell's background job) may
    start the tests with these signals ignored, which children inherit and keep on purpose."""
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, signal.SIG_DFL)


@pytest.mark.parametrize(
    ("sent", "to_group", "status"),
    [(signal.SIGTERM, True, 143), (signal.SIGTERM, False, 143), (signal.SIGINT, True, 130)],
    ids=["timeout (SIGTERM to the group)", "kill (SIGTERM to the command only)", "Ctrl-C (SIGINT to the group)"],
)
def test_a_signal_stops_draw_eval_and_its_workers_without_partial_files(
    tmp_path: Path, sent: signal.Signals, to_group: bool, status: int
) -> None:
    records, result = tmp_path / "records", tmp_path / "out.json"
    command = [sys.executable, "-m", "arena.cli", "heaviest", "variety", "--games", "100000", "--workers", "2",
               "--records", str(records), "--json", str(result), "--quiet"]
    with open(tmp_path / "stdout", "w") as stdout, open(tmp_path / "stderr", "w") as stderr:
        process = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=stdout, stderr=stderr,
            start_new_session=True,  # its own process group, as `timeout` gives it
            preexec_fn=_stop_signals_at_their_defaults,
        )
    try:
        deadline = time.monotonic() + 60
        while not any(records.rglob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.02)  # the workers are writing records now
        (os.killpg if to_group else os.kill)(process.pid, sent)
        assert process.wait(timeout=60) == status, (tmp_path / "stderr").read_text()
        assert group_is_gone(process.pid), "a worker outlived the command"
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert "Traceback" not in (tmp_path / "stderr").read_text()
    written = list(records.rglob("*"))
    assert not [path for path in written if ".partial" in path.name]
    for path in (path for path in written if path.is_file()):
        json.loads(path.read_text())  # every record is whole
    assert not result.exists()  # the evaluation did not finish: no results
