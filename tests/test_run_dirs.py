"""Run directories: a run is recognised by its marker, and starting over removes only its own files.

Hypothesis builds directories of run files and other files (in a run's folders and in others,
links, folders named like files) beside a marker and a ``config.json`` that are valid, damaged
or absent, and runs :class:`train.run_dir.RunDir` on them (every pipeline, with and without
``--overwrite``, and :meth:`start`): the result is a run or a ``ConfigError``, never another
exception, a refusal changes nothing, and no file that is not a run's is ever removed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from train.config import ConfigError, Section, load
from train.exit.config import ExitConfig
from train.exploit.config import ExploitConfig
from train.run_dir import MARKER, run_files
from train.runs import RUNS, open_run_dir
from train.selfplay.config import TrainConfig

MODELS: dict[str, type[Section]] = {"selfplay": TrainConfig, "exit": ExitConfig, "exploit": ExploitConfig}
#: Names each pipeline writes (some of them, and a temporary file of a killed process).
RUN_NAMES = {
    "selfplay": (
        "summary.json",
        "eval.csv",
        "final.zip",
        "final.npz",
        "checkpoints/step_256.zip",
        "checkpoints/step_256.pool.npz",
        "checkpoints/.step_256.12-abcdef01.partial.zip",
        "tensorboard/ppo_1/events.out.tfevents.1.host.2.0",
    ),
    "exit": (
        "summary.json",
        "state.json",
        "final.npz",
        "iter_000/policy.npz",
        "iter_001/data.npz",
        "tensorboard/events.out.tfevents.1.host.3.0",
    ),
    "exploit": ("exploit.json", "eval.csv", "final.zip", "interrupted.zip", "checkpoints/cpu_00060s.npz"),
}
#: Names no pipeline writes, some of them beside run files or named like them.
FOREIGN_NAMES = (
    "notes.txt",
    "FINAL.ZIP",
    "final.zip.bak",
    ".git/config",
    "sub/keep",
    "checkpoints/notes.txt",
    "checkpoints/step_x.zip",
    "checkpoints/step_1.zip/inside",
    "iter_001/mine.npz",
    "tensorboard/ppo_1/readme",
    ".notes.12-abcdef01.partial.txt",
)
#: What starting over may remove: the run's files and folders (see RUN_NAMES), its config and marker.
REMOVABLE = {
    "file": {name for names in RUN_NAMES.values() for name in names} | {"config.json", MARKER},
    "folder": {"checkpoints", "iter_000", "iter_001", "tensorboard", "tensorboard/ppo_1"},
}

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=12), children, max_size=3),
    max_leaves=10,
)


def marker_of(pipeline: str) -> str:
    return json.dumps({"format": "draw-dominoes-run", "version": 1, "pipeline": pipeline})


DAMAGED_MARKERS = st.one_of(
    JSON_VALUES.map(json.dumps),
    st.fixed_dictionaries(
        {"format": st.sampled_from(["draw-dominoes-run", "other"]), "version": st.integers(0, 3),
         "pipeline": st.sampled_from([*RUNS, "rllib", 1])}
    ).map(json.dumps),
    st.binary(max_size=40).map(lambda data: data.decode("latin-1")),
    st.just("a folder"),
)
PIPELINES = st.sampled_from(sorted(MODELS))
ALL_RUN_NAMES = sorted({name for names in RUN_NAMES.values() for name in names})


@dataclasses.dataclass
class Case:
    """A directory to lay out, mostly a run of pipeline ``layout``, and the run to start in it."""

    names: list[str]
    marker: str | None  # "a folder": a folder of that name
    config: str | None  # a pipeline's name: a whole config of it, as a run saves it
    link_checkpoints: bool
    link_file: bool
    pipeline: str
    overwrite: bool
    start_over: bool


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """Mostly a run's files, marker and config.json (of one pipeline, as a run leaves them), each
    now and then absent, damaged, of another pipeline, or beside files no run writes."""
    layout = draw(PIPELINES)
    names = draw(st.lists(st.sampled_from(RUN_NAMES[layout]), unique=True, max_size=6)
                 | st.lists(st.sampled_from(ALL_RUN_NAMES), unique=True, max_size=6))
    foreign = draw(st.sampled_from([[], []]) | st.lists(st.sampled_from(FOREIGN_NAMES), unique=True, min_size=1, max_size=2))
    now_and_then = st.sampled_from([False, False, False, True])
    marker = draw(st.sampled_from([marker_of(layout), marker_of(layout), None]) | PIPELINES.map(marker_of) | DAMAGED_MARKERS)
    config = draw(st.sampled_from([layout, layout, None, "{}"]) | PIPELINES | JSON_VALUES.map(json.dumps))
    return Case(
        names + foreign,
        marker,
        config,
        link_checkpoints=draw(now_and_then),
        link_file=draw(now_and_then),
        pipeline=draw(st.sampled_from([layout, layout]) | PIPELINES),
        overwrite=draw(st.sampled_from([True, True, False])),
        start_over=draw(st.booleans()),
    )


def snapshot(root: Path) -> dict[str, Any]:
    """Every entry under ``root`` (links not followed): its kind and content."""
    entries: dict[str, Any] = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder) / name
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                entries[key] = ("link", os.readlink(path))
            elif path.is_dir():
                entries[key] = ("folder",)
            elif path.is_fifo():  # never opened: that would wait for a writer
                entries[key] = ("fifo",)
            else:
                entries[key] = ("file", path.read_bytes())
    return entries


def config_of(pipeline: str, output: Path) -> Section:
    return load(MODELS[pipeline], None, [f"output_dir={output}"])


def build_directory(output: Path, outside: Path, case: Case) -> None:
    """Lay out ``case``'s directory at ``output``; ``outside`` holds someone else's files."""
    for name in case.names:
        if case.link_checkpoints and name.startswith("checkpoints/"):
            continue
        path = output / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"content of {name}")
    output.mkdir(exist_ok=True)
    if case.link_checkpoints:  # a link to someone else's folder of checkpoints: never followed
        (outside / "theirs").mkdir()
        (outside / "theirs" / "step_999.zip").write_text("theirs")
        (output / "checkpoints").symlink_to(outside / "theirs", target_is_directory=True)
    if case.link_file and "summary.json" not in case.names:  # named like a run file, to someone else's
        (output / "summary.json").symlink_to(outside / "kept.txt")
    if case.marker == "a folder":
        (output / MARKER).mkdir()
    elif case.marker is not None:
        (output / MARKER).write_text(case.marker)
    if case.config in MODELS:
        (output / "config.json").write_text(json.dumps(config_of(case.config, output).to_dict()))
    elif case.config is not None:
        (output / "config.json").write_text(case.config)


def is_valid_marker(text: str | None) -> bool:
    try:
        data = json.loads(text) if text not in (None, "a folder") else None
    except ValueError:
        return False
    return (
        isinstance(data, dict)
        and data.get("format") == "draw-dominoes-run"
        and data.get("version") == 1
        and type(data.get("version")) is int
        and data.get("pipeline") in RUNS
    )


@FUZZ
@given(case=cases())
def test_no_file_a_run_did_not_write_is_ever_removed(case: Case) -> None:
    with tempfile.TemporaryDirectory() as folder:
        output, outside = Path(folder) / "run", Path(folder) / "outside"
        outside.mkdir()
        (outside / "kept.txt").write_text("kept")
        build_directory(output, outside, case)
        before = snapshot(Path(folder))
        try:
            run_dir = open_run_dir(config_of(case.pipeline, output), case.pipeline, overwrite=case.overwrite)
            if case.start_over:
                run_dir.start_over()
            run_dir.start()
        except ConfigError as error:
            assert "\n" not in str(error)
            assert snapshot(Path(folder)) == before  # a refusal writes and removes nothing
            return
        after = snapshot(Path(folder))
        removed = {name for name in before if name not in after}
        for name in removed:
            kind = before[name][0]
            assert name.startswith("run/") and name.removeprefix("run/") in REMOVABLE.get(kind, ()), (name, kind)
        assert after["outside/kept.txt"] == ("file", b"kept")
        assert not case.link_checkpoints or after["outside/theirs/step_999.zip"] == ("file", b"theirs")
        if removed:  # only from a directory recognised as a run
            assert is_valid_marker(case.marker) or case.config in MODELS
        assert json.loads((output / MARKER).read_text())["pipeline"] == case.pipeline


def test_a_marker_of_another_format_or_version_is_no_run_even_with_overwrite(tmp_path: Path) -> None:
    output = tmp_path / "run"
    output.mkdir()
    config = config_of("selfplay", output)
    (output / "config.json").write_text(json.dumps(config.to_dict()))
    (output / "summary.json").write_text("{}")
    for marker in ({"format": "draw-dominoes-run", "version": 2, "pipeline": "selfplay"}, {"format": "app"}):
        (output / MARKER).write_text(json.dumps(marker))
        with pytest.raises(ConfigError, match=r"no run of draw-train: .*\.draw-run\.json.*--overwrite does not remove it"):
            open_run_dir(config, "selfplay", overwrite=True)
    assert sorted(path.name for path in output.iterdir()) == [MARKER, "config.json", "summary.json"]


def _link_to_folder(output: Path, outside: Path) -> None:
    (output / "checkpoints").symlink_to(outside, target_is_directory=True)


def _link_to_file(output: Path, outside: Path) -> None:
    (output / "summary.json").symlink_to(outside / "kept.txt")


def _nested_link(output: Path, outside: Path) -> None:
    (output / "checkpoints").mkdir()
    (output / "checkpoints" / "step_256.zip").symlink_to(outside / "kept.txt")


def _fifo(output: Path, outside: Path) -> None:
    os.mkfifo(output / "eval.csv")


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("entry", [_link_to_folder, _link_to_file, _nested_link, _fifo])
def test_a_run_holding_a_link_or_a_special_file_is_refused_whether_it_continues_or_starts_over(
    tmp_path: Path, entry: Any, overwrite: bool
) -> None:
    output, outside = tmp_path / "run", tmp_path / "theirs"
    outside.mkdir()
    (outside / "kept.txt").write_text("theirs")
    config = config_of("selfplay", output)
    open_run_dir(config, "selfplay").start()
    entry(output, outside)
    before = snapshot(tmp_path)
    with pytest.raises(ConfigError, match=r"in the run directory .* is (a symbolic link|a FIFO \(named pipe\)): "
                                          r"a run directory holds only the regular files and folders"):
        open_run_dir(config, "selfplay", overwrite=overwrite)
    assert snapshot(tmp_path) == before and (outside / "kept.txt").read_text() == "theirs"


def test_a_run_directory_is_worked_in_by_one_process_at_a_time(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    output = tmp_path / "run"
    config = config_of("exit", output)
    first = open_run_dir(config, "exit")
    first.start()
    # Another process holds the folder while this one's run lives.
    probe = "import fcntl, os, sys; d = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(d, fcntl.LOCK_EX | fcntl.LOCK_NB)"
    assert subprocess.run([sys.executable, "-c", probe, str(output)], capture_output=True).returncode != 0
    del first  # the run ends: its lock goes with it
    assert subprocess.run([sys.executable, "-c", probe, str(output)], capture_output=True).returncode == 0
    # A second run in the folder is refused in one line while the first runs.
    holder = subprocess.Popen(
        [sys.executable, "-c", probe + "; print('held', flush=True); import time; time.sleep(60)", str(output)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(ConfigError, match=r"is in use by another run .*: wait for that run to end") as refused:
            open_run_dir(config, "exit")
        assert "\n" not in str(refused.value)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    open_run_dir(config, "exit")  # a killed process leaves no lock behind


def test_two_runs_that_checked_a_new_folder_cannot_both_start_in_it(tmp_path: Path) -> None:
    config = config_of("exit", tmp_path / "run")
    first, second = open_run_dir(config, "exit"), open_run_dir(config, "exit")
    first.start()
    with pytest.raises(ConfigError, match="in use by another run|written by another run since it was checked"):
        second.start()
    assert sorted(path.name for path in (tmp_path / "run").iterdir()) == [MARKER, "config.json"]


def test_temporary_files_of_a_killed_run_are_the_runs(tmp_path: Path) -> None:
    output = tmp_path / "run"
    config = config_of("exit", output)
    open_run_dir(config, "exit").start()
    (output / "iter_001").mkdir()
    (output / "iter_001" / ".data.4242-0123abcd.partial.npz").write_bytes(b"half")
    (output / ".state.4242-0123abcd.partial.json").write_text("{")
    assert len(run_files(output, RUNS["exit"]).files) == 4
    open_run_dir(config, "exit", overwrite=True).start()
    assert sorted(path.name for path in output.iterdir()) == [MARKER, "config.json"]


def test_a_run_that_does_not_continue_is_refused_unfinished_and_printed_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train.exploit.run import ExploitSummary

    output = tmp_path / "run"
    config = config_of("exploit", output)
    assert open_run_dir(config, "exploit").finished(ExploitSummary, "exploit.json", "why") is None  # a new run
    open_run_dir(config, "exploit").start()
    with pytest.raises(ConfigError, match=r"holds an unfinished run of pipeline: exploit \(why\): pass --overwrite"):
        open_run_dir(config, "exploit").finished(ExploitSummary, "exploit.json", "why")
    row = {"timesteps": 64, "train_seconds": 90.0, "opponent": "heaviest", "matches": 10, "win_rate": 0.5,
           "win_low": 0.2, "win_high": 0.8, "points_per_hand": 20.0, "zero_sum_per_hand": 1.0}
    summary = {"target": "heaviest", "start": "fresh", "cpu_seconds": 90.0, "wall_seconds": 100.0,
               "timesteps": 64, "final_eval": row, "figure": "exploit_curve.png", "kept": [1]}
    (output / "exploit.json").write_text(json.dumps(summary))
    assert open_run_dir(config, "exploit").finished(ExploitSummary, "exploit.json", "why") == summary  # keys kept
    assert capsys.readouterr().out == f"{output} is complete (1.50 CPU-minutes); its summary: {output / 'exploit.json'}\n"


class ToyConfig(Section):
    """A pipeline's config that draw-train does not know."""

    num_players: int = 2
    seed: int = 0
    output_dir: str = "runs/toy"


def test_a_run_dir_knows_the_kinds_its_caller_gives_and_no_other(tmp_path: Path) -> None:
    from train.config import build
    from train.run_dir import RunDir, RunKind

    toy = RunKind("toy", ToyConfig, files=(r"result\.txt",), free=("seed",))
    output = tmp_path / "run"
    config = build(ToyConfig, {"output_dir": str(output)})
    run = RunDir(config, toy)
    assert not run.resuming
    run.start()
    (output / "result.txt").write_text("done")
    assert json.loads((output / MARKER).read_text())["pipeline"] == "toy"
    assert RunDir(build(ToyConfig, {"output_dir": str(output), "seed": 5}), toy).resuming  # a free key
    RunDir(config, toy, overwrite=True).start()
    assert sorted(path.name for path in output.iterdir()) == [MARKER, "config.json"]  # its own files removed
    # A run of a pipeline the caller does not give is no run; given as known, it is named.
    other = tmp_path / "other"
    open_run_dir(load(TrainConfig, None, [f"output_dir={other}"]), "selfplay").start()
    elsewhere = build(ToyConfig, {"output_dir": str(other)})
    with pytest.raises(ConfigError, match=r"no run of draw-train: .*field 'pipeline': input should be 'toy', got 'selfplay'"):
        RunDir(elsewhere, toy, overwrite=True)
    with pytest.raises(ConfigError, match="holds a run of pipeline: selfplay, not toy"):
        RunDir(elsewhere, toy, known=RUNS)
    RunDir(elsewhere, toy, known=RUNS, overwrite=True).start()  # replaced: every file was the self-play run's
    assert json.loads((other / MARKER).read_text())["pipeline"] == "toy"
