"""draw-bench (train/bench/): a tiny grid end to end, resumption, hostile records and configs, and
the aggregation's intervals on data with a known answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena.exploitability import agent_probabilities, exploitability
from arena.specs import build_agent, parse_agent_spec
from tests.fifos import unblocked
from train.bench import protocol, report
from train.bench.cli import main
from train.bench.config import BenchConfig
from train.bench.metrics import game_tree
from train.bench.suite import cells_of, run_suite
from train.config import ConfigError, build
from train.run_dir import run_files
from train.runs import RUNS

ROOT = Path(__file__).resolve().parent.parent


def tiny(tmp_path: Path, **changes: Any) -> BenchConfig:
    """CFR+ on micro, two seeds, two iterations' budget (a couple of seconds)."""
    data = {"algorithms": {"cfr": ["micro"]}, "seeds": [0, 1], "budgets": {"micro": {"env_steps": 80_000}},
            "curve_points": 2, "settings_dir": str(ROOT / "configs/bench/algorithms"),
            "output_dir": str(tmp_path / "bench"), "progress_bar": False, **changes}
    return build(BenchConfig, data)


def test_the_shipped_tiny_suite_is_this_grid() -> None:
    from train.config import load

    config = load(BenchConfig, ROOT / "configs/bench/tiny.yaml")
    assert [cell.key for cell in cells_of(config)] == ["cfr-micro-s0", "cfr-micro-s1"]


def test_a_tiny_grid_runs_and_each_record_agrees_with_its_saved_policy(tmp_path: Path) -> None:
    config = tiny(tmp_path)
    summary = run_suite(config, plots=False, reps=100)
    run = Path(config.output_dir)
    records = [json.loads((run / "cells" / f"cfr-micro-s{seed}.json").read_text()) for seed in (0, 1)]
    for record in records:
        assert record["algorithm"] == "cfr" and record["game"]["name"] == "micro" and record["budget"]["env_steps"] == 80_000
        assert len(record["curve"]) == 2 and record["used"]["env_steps"] >= 80_000
        assert record["versions"]["python"] and record["versions"]["numba"]
        # The final figure is draw-exploit's on the saved file.
        name, kwargs = parse_agent_spec(record["final"]["spec"])
        measured = exploitability(game_tree(protocol.GAMES["micro"]), agent_probabilities(build_agent(name, kwargs)))
        assert record["final"]["value"] == pytest.approx(measured.exploitability, abs=1e-12)
        assert record["final"]["score"] == -record["final"]["value"]
        # More iterations, less exploitable (CFR+ on micro, one and two iterations).
        assert record["curve"][0]["score"] < record["curve"][1]["score"] <= 0
    # CFR+ draws nothing at random: both seeds solve alike, and the interval is that one point.
    assert [point["score"] for point in records[0]["curve"]] == [point["score"] for point in records[1]["curve"]]
    # The folder is a run of pipeline bench, every file one it writes (--overwrite may remove them).
    written = {str(path.relative_to(run)) for path in run_files(run, RUNS["bench"]).files}
    assert {"cells/cfr-micro-s0.json", "policies/cfr-micro-s1.npz", "reference-micro.json", "summary.md"} <= written
    low, point, high = summary["per_game"]["micro"]["estimates"]["cfr"]["iqm"]
    reference = json.loads((run / "reference-micro.json").read_text())["random"]
    assert low == point == high == pytest.approx(1 - records[0]["final"]["value"] / reference)


def test_a_rerun_skips_the_done_cells_and_a_larger_grid_runs_only_the_new_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tiny(tmp_path, seeds=[0])
    run_suite(config, plots=False, reps=100)
    done = Path(config.output_dir) / "cells" / "cfr-micro-s0.json"
    before = done.read_bytes(), done.stat().st_mtime_ns
    ran: list[str] = []
    solver = protocol.algorithm("cfr")

    def counted(cell: protocol.Cell, work: Path, checkpoint: protocol.Checkpoint) -> protocol.Policy:
        ran.append(cell.key)
        return solver(cell, work, checkpoint)

    monkeypatch.setitem(protocol.ALGORITHMS, "cfr", counted)
    run_suite(tiny(tmp_path, seeds=[0, 1]), plots=False, reps=100)
    assert ran == ["cfr-micro-s1"]
    assert (done.read_bytes(), done.stat().st_mtime_ns) == before


def test_a_failing_cell_costs_only_itself_and_a_rerun_retries_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    solver = protocol.algorithm("cfr")

    def fails_on_seed_0(cell: protocol.Cell, work: Path, checkpoint: protocol.Checkpoint) -> protocol.Policy:
        if cell.seed == 0:
            raise RuntimeError("out of luck\nsecond line")
        return solver(cell, work, checkpoint)

    monkeypatch.setitem(protocol.ALGORITHMS, "cfr", fails_on_seed_0)
    config = tiny(tmp_path)
    summary = run_suite(config, plots=False, reps=100)
    cells = Path(config.output_dir) / "cells"
    assert summary["failed"] == {"cfr-micro-s0": "RuntimeError: out of luck"}
    assert sorted(path.name for path in cells.iterdir()) == ["cfr-micro-s1.json"]
    assert [row["cell"] for row in summary["cells"]] == ["cfr-micro-s1.json"]
    # The command names the cell and ends with status 1; the same command retries it alone.
    from train.bench.suite import bench_main

    assert bench_main(config, None) == 1
    assert "cell cfr-micro-s0 failed: RuntimeError: out of luck; rerun the same command" in capsys.readouterr().err
    monkeypatch.setitem(protocol.ALGORITHMS, "cfr", solver)
    assert run_suite(config, plots=False, reps=100)["failed"] == {}
    assert sorted(path.name for path in cells.iterdir()) == ["cfr-micro-s0.json", "cfr-micro-s1.json"]


def test_a_hostile_cell_record_is_one_line_naming_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny(tmp_path, seeds=[0])
    run_suite(config, plots=False, reps=100)
    record_file = Path(config.output_dir) / "cells" / "cfr-micro-s0.json"
    record = json.loads(record_file.read_text())
    record["curve"][0]["env_steps"] = "many"
    record_file.write_text(json.dumps(record))
    with pytest.raises(SystemExit) as stopped:
        main(["--report", config.output_dir])
    error = capsys.readouterr().err.strip()
    assert stopped.value.code == 2 and "\n" not in error
    assert error.startswith("draw-bench: error: ") and "cfr-micro-s0.json" in error and "env_steps" in error
    # A record made with other settings is refused, not reused.
    record["curve"][0]["env_steps"] = 1
    record["budget"]["env_steps"] = 5
    record_file.write_text(json.dumps(record))
    with pytest.raises(ConfigError, match=r"cfr-micro-s0\.json: field 'budget' is .* move the record away"):
        run_suite(config, plots=False, reps=100)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("algorithms={nothing: [micro]}", "unknown algorithm 'nothing'"),
        ("algorithms={cfr: [micro, chess]}", "must be distinct games of micro"),
        ("budgets={micro: {}}", "a budget needs env_steps or cpu_seconds"),
        ("seeds=[1, 1]", "must be distinct seeds"),
        ("settings_dir=/nonexistent", "does not exist"),
        ("budget_overrides={sb3_ppo: {chess: {env_steps: 5}}}", "'budget_overrides' must map algorithms to games"),
    ],
)
def test_a_hostile_config_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: str, message: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(ROOT / "configs/bench/tiny.yaml"), "--output", str(tmp_path / "b"), override])
    error = capsys.readouterr().err.strip()
    assert stopped.value.code == 2 and "\n" not in error and message in error, error
    assert not (tmp_path / "b").exists()


def test_the_aggregate_of_known_data() -> None:
    rows = []
    for seed in range(8):
        rows.append({"algorithm": "a", "game": "micro", "seed": seed, "value": 0.0, "normalised": 0.5})
        rows.append({"algorithm": "b", "game": "micro", "seed": seed, "value": 0.0, "normalised": seed / 7})
    result = report.aggregate(rows, reps=200)
    a, b = (result["per_game"]["micro"]["estimates"][name] for name in ("a", "b"))
    assert a["iqm"] == a["mean"] == pytest.approx([0.5, 0.5, 0.5])  # no spread, no interval
    low, mean, high = b["mean"]
    assert mean == pytest.approx(0.5) and low < 0.5 < high
    # IQM of 0, 1/7, ..., 1: the middle half, 2/7 to 5/7, averages 0.5.
    assert b["iqm"][1] == pytest.approx(0.5)
    # A bootstrap's interval of the mean of 8 evenly spread points: about +-2 standard errors.
    standard_error = np.std(np.arange(8) / 7) / np.sqrt(8)
    assert high - low == pytest.approx(2 * 1.96 * standard_error, rel=0.25)
    # b beats a's constant 0.5 in half its seeds, loses in the other half: P(b > a) = 0.5.
    assert result["per_game"]["micro"]["improvement"]["b > a"][1] == pytest.approx(0.5)


def test_algorithms_that_play_every_game_are_also_aggregated_over_all_of_them() -> None:
    rows = [{"algorithm": name, "game": game, "seed": seed, "value": 0.0, "normalised": level + seed / 100}
            for name, level, games in (("solver", 1.0, ["micro"]), ("a", 0.2, ["micro", "draw2"]), ("b", 0.6, ["micro", "draw2"]))
            for game in games for seed in range(3)]
    result = report.aggregate(rows, reps=100)
    assert result["overall"]["games"] == ["micro"] and set(result["overall"]["estimates"]) == {"solver", "a", "b"}
    complete = result["overall_complete"]
    assert complete["games"] == ["micro", "draw2"] and set(complete["estimates"]) == {"a", "b"}
    assert complete["estimates"]["b"]["mean"][1] == pytest.approx(0.61)
    assert complete["improvement"]["b > a"] == pytest.approx([1.0, 1.0, 1.0])
    assert "| all (micro, draw2) | b |" in report.markdown(result)
    # Every algorithm on every game: one overall.
    assert "overall_complete" not in report.aggregate([row for row in rows if row["algorithm"] != "solver"], reps=100)


def test_probability_of_improvement_counts_as_rliable_does() -> None:
    from rliable import metrics

    generator = np.random.default_rng(3)
    for runs_x, runs_y, tasks in ((5, 5, 1), (3, 7, 4), (6, 2, 5)):
        x = generator.integers(0, 4, (runs_x, tasks)).astype(float)  # small integers: ties on purpose
        y = generator.integers(0, 4, (runs_y, tasks)).astype(float)
        assert report.probability_of_improvement(x, y) == pytest.approx(metrics.probability_of_improvement(x, y))


def test_a_reversed_pair_mirrors_the_bootstrapped_one() -> None:
    generator = np.random.default_rng(4)
    scores = {name: generator.normal(shift, 1.0, (5, 2)) for name, shift in (("a", 0.0), ("b", 0.5), ("c", 1.0))}
    improvement = report.improvement(scores, reps=300)
    assert len(improvement) == 6
    for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
        low, point, high = improvement[f"{x} > {y}"]
        assert low <= point <= high
        assert improvement[f"{y} > {x}"] == pytest.approx([1 - high, 1 - point, 1 - low])


def test_probability_of_improvement_of_a_dominating_algorithm_is_one() -> None:
    scores = {"high": np.array([[0.9], [0.8], [0.95]]), "low": np.array([[0.1], [0.2], [0.3]])}
    improvement = report.improvement(scores, reps=200)
    assert improvement["high > low"] == pytest.approx([1.0, 1.0, 1.0])
    assert improvement["low > high"] == pytest.approx([0.0, 0.0, 0.0])


def test_normalisation() -> None:
    assert report.normalise(0.0, 0.4, exact=True) == 1.0 and report.normalise(0.4, 0.4, exact=True) == 0.0
    assert report.normalise(0.0, -20.0, exact=False) == 1.0 and report.normalise(-20.0, -20.0, exact=False) == 0.0


def test_algorithms_load_by_name_and_refuse_what_they_cannot_play(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown algorithm 'nothing'"):
        protocol.algorithm("nothing")
    cell = protocol.Cell("cfr", protocol.GAMES["draw2"], 0, protocol.Budget(env_steps=1), {}, 1)
    with pytest.raises(ValueError, match="cannot run game 'draw2'"):
        protocol.algorithm("cfr")(cell, tmp_path, lambda *_: None)
    with pytest.raises(ValueError, match="budget needs env_steps or cpu_seconds"):
        protocol.Budget()


def test_a_self_play_ppo_cell_on_micro_saves_the_network_it_measured(tmp_path: Path) -> None:
    """sb3_ppo through the self-play pipeline's games and model: one rollout, one curve point; the
    final figure is draw-exploit's on the saved policy file (sampling, as the spec says)."""
    settings = tmp_path / "settings"
    settings.mkdir()
    (settings / "sb3_ppo.yaml").write_text(
        "n_envs: 16\nopponents: {self: 1.0}\nppo: {num_steps: 8, minibatch_size: 64, update_epochs: 1, net_arch: [16]}\n"
    )
    config = tiny(tmp_path, algorithms={"sb3_ppo": ["micro"]}, seeds=[3], budgets={"micro": {"env_steps": 128}},
                  curve_points=1, settings_dir=str(settings))
    run_suite(config, plots=False, reps=100)
    record = json.loads((Path(config.output_dir) / "cells" / "sb3_ppo-micro-s3.json").read_text())
    assert record["used"]["env_steps"] == 128 and len(record["curve"]) == 1
    assert record["final"]["spec"].startswith("network:path=") and record["final"]["spec"].endswith(",deterministic=false")
    name, kwargs = parse_agent_spec(record["final"]["spec"])
    measured = exploitability(game_tree(protocol.GAMES["micro"]), agent_probabilities(build_agent(name, kwargs)))
    assert record["final"]["value"] == pytest.approx(measured.exploitability, abs=1e-12)
    assert record["curve"][0]["score"] == pytest.approx(-measured.exploitability, abs=1e-6)


def test_a_jax_ppo_cell_on_micro_saves_the_network_it_measured(tmp_path: Path) -> None:
    """jax_ppo on a small variant: the policy file records micro's layout, and the final figure is
    draw-exploit's on it; a budget without env_steps is refused."""
    pytest.importorskip("jax")
    pytest.importorskip("flax")
    pytest.importorskip("optax")
    from agents.policy_file import load_policy_file

    settings = tmp_path / "settings"
    settings.mkdir()
    (settings / "jax_ppo.yaml").write_text(
        "num_envs: 8\nnum_steps: 8\nchunk: 2\nupdate_epochs: 1\nnum_minibatches: 2\nhidden: [8]\nopponents: [self]\n"
        "fast_compile: true\n"
    )
    config = tiny(tmp_path, algorithms={"jax_ppo": ["micro"]}, seeds=[3], budgets={"micro": {"env_steps": 128}},
                  curve_points=1, settings_dir=str(settings))
    run_suite(config, plots=False, reps=100)
    record = json.loads((Path(config.output_dir) / "cells" / "jax_ppo-micro-s3.json").read_text())
    assert record["used"]["env_steps"] == 128 and len(record["curve"]) == 1  # 2 updates of 8 games x 8 actions
    name, kwargs = parse_agent_spec(record["final"]["spec"])
    weights = load_policy_file(kwargs["path"])
    assert weights.game == protocol.GAMES["micro"].rules and weights.provenance["trained_by"] == "draw-bench (jax_ppo)"
    measured = exploitability(game_tree(protocol.GAMES["micro"]), agent_probabilities(build_agent(name, kwargs)))
    assert record["final"]["value"] == pytest.approx(measured.exploitability, abs=1e-12)
    cell = protocol.Cell("jax_ppo", protocol.GAMES["micro"], 0, protocol.Budget(cpu_seconds=1.0), {}, 1)
    with pytest.raises(ValueError, match="give the budget env_steps"):
        protocol.algorithm("jax_ppo")(cell, tmp_path, lambda *_: None)


def test_jax_mmd_is_ppo_in_jax_with_its_magnet_and_refuses_settings_without_one(tmp_path: Path) -> None:
    """jax_mmd runs the jax_ppo adapter from its own settings file, whose shipped magnet is on; with
    magnet_coef 0 its cell is refused before anything trains."""
    from train.bench.config import read_settings
    from train.jax_ppo.config import JaxPPOConfig

    config = tiny(tmp_path, algorithms={"jax_mmd": ["micro"]}, seeds=[0], budgets={"micro": {"env_steps": 128}})
    shipped = build(JaxPPOConfig, {**read_settings(config, "jax_mmd", "micro"), "variant": "micro"})
    assert shipped.magnet_coef > 0 and protocol.algorithm("jax_mmd") is protocol.algorithm("jax_ppo")
    cell = protocol.Cell("jax_mmd", protocol.GAMES["micro"], 0, protocol.Budget(env_steps=128),
                         {"num_envs": 8, "num_steps": 8, "magnet_coef": 0.0}, 1)
    with pytest.raises(ValueError, match="magnet_coef > 0"):
        protocol.algorithm("jax_mmd")(cell, tmp_path, lambda *_: None)


# ---------------------------------------------------------------------------- the benchmark folder


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished benchmark folder of the tiny grid at seed 0 (copied by each test that changes it)."""
    config = tiny(tmp_path_factory.mktemp("finished"), seeds=[0])
    run_suite(config, plots=False, reps=100)
    return Path(config.output_dir)


def copy_of(run: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(run, tmp_path / "bench", symlinks=True))


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line on stderr of a draw-bench that exits with status 2."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    error = capsys.readouterr().err.strip()
    assert stopped.value.code == 2 and "\n" not in error and error.startswith("draw-bench: error: "), error
    return error


@pytest.mark.parametrize("linked", ["summary.md", "report"])
def test_a_report_never_writes_through_a_link_in_the_folder(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], linked: str
) -> None:
    run = copy_of(finished_run, tmp_path)
    outside = tmp_path / "theirs"
    (outside / "folder").mkdir(parents=True)
    (outside / "notes.md").write_text("theirs")
    (outside / "folder" / "iqm.png").write_text("theirs")
    if linked == "summary.md":
        (run / "summary.md").unlink()
        (run / "summary.md").symlink_to(outside / "notes.md")
    else:
        (run / "report").symlink_to(outside / "folder", target_is_directory=True)
    error = refused(["--report", str(run)], capsys)
    assert f"{linked}' in the run directory" in error and "is a symbolic link" in error
    assert (outside / "notes.md").read_text() == "theirs" and (outside / "folder" / "iqm.png").read_text() == "theirs"
    assert sorted(path.name for path in (outside / "folder").iterdir()) == ["iqm.png"]


def test_a_truncated_record_costs_only_its_cell(
    finished_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy_of(finished_run, tmp_path)
    record = run / "cells" / "cfr-micro-s0.json"
    truncated = record.read_bytes()[:100]
    record.write_bytes(truncated)
    ran: list[str] = []
    solver = protocol.algorithm("cfr")

    def counted(cell: protocol.Cell, work: Path, checkpoint: protocol.Checkpoint) -> protocol.Policy:
        ran.append(cell.key)
        return solver(cell, work, checkpoint)

    monkeypatch.setitem(protocol.ALGORITHMS, "cfr", counted)
    from train.bench.suite import bench_main

    assert bench_main(tiny(tmp_path, seeds=[0, 1]), None) == 1
    assert ran == ["cfr-micro-s1"]  # the other cell ran, the damaged one is left as it is
    assert record.read_bytes() == truncated
    assert (run / "cells" / "cfr-micro-s1.json").is_file()
    captured = capsys.readouterr()
    assert "| micro | cfr | 1 |" in captured.out  # the summary of the readable cell
    assert "draw-bench: cell cfr-micro-s0 was not run: its record is unreadable (" in captured.err
    assert "cfr-micro-s0.json" in captured.err and "move the record away" in captured.err


@pytest.mark.parametrize(
    ("file", "edit", "field"),
    [
        ("cells/cfr-micro-s0.json", lambda data: data["final"].update(value=1e300), "final.value"),
        ("cells/cfr-micro-s0.json", lambda data: data["curve"][0].update(score=-1e300), "curve.0.score"),
        ("cells/cfr-micro-s0.json", lambda data: data["used"].update(cpu_seconds=1e300), "used.cpu_seconds"),
        ("reference-micro.json", lambda data: data.update(random=1e-300), "random"),
        ("reference-micro.json", lambda data: data.update(random=-1e300), "random"),
    ],
)
def test_extreme_figures_in_a_record_are_refused_and_no_summary_holds_a_nan(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, edit: Any, field: str
) -> None:
    run = copy_of(finished_run, tmp_path)
    data = json.loads((run / file).read_text())
    edit(data)
    (run / file).write_text(json.dumps(data))
    summary = (run / "summary.json").read_bytes()
    error = refused(["--report", str(run)], capsys)
    assert file.split("/")[-1] in error and f"field {field!r}" in error
    assert (run / "summary.json").read_bytes() == summary


def test_a_record_its_reader_would_refuse_is_never_written(
    finished_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from train.bench import suite

    record = json.loads((finished_run / "cells" / "cfr-micro-s0.json").read_text())
    record["final"]["measure"]["exploitability"] = float("nan")
    monkeypatch.setattr(suite, "run_cell", lambda *_: record)
    summary = run_suite(tiny(tmp_path, seeds=[0]), plots=False, reps=100)
    assert list(summary["failed"]) == ["cfr-micro-s0"] and "cfr-micro-s0.json" in summary["failed"]["cfr-micro-s0"]
    assert list((tmp_path / "bench" / "cells").iterdir()) == []
    record["final"]["measure"]["exploitability"] = 0.1
    record["final"]["value"] = 1e300
    summary = run_suite(tiny(tmp_path, seeds=[0]), plots=False, reps=100)
    assert "field 'final.value'" in summary["failed"]["cfr-micro-s0"]
    assert list((tmp_path / "bench" / "cells").iterdir()) == []


def test_a_summary_that_would_hold_a_nan_is_not_written(finished_run: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    run = copy_of(finished_run, tmp_path)
    summary = (run / "summary.json").read_bytes()
    monkeypatch.setattr(report, "normalise", lambda *_: float("nan"))
    with pytest.raises(ConfigError, match=r"summary\.json: the aggregate is not finite"):
        report.report(run, plots=False, reps=100)
    assert (run / "summary.json").read_bytes() == summary


def test_draw_bench_messages_name_what_draw_bench_takes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from train.cfr.config import CfrConfig
    from train.runs import open_run_dir

    open_run_dir(build(CfrConfig, {"output_dir": str(tmp_path / "b")}), "cfr").start()
    tiny_config = str(ROOT / "configs/bench/tiny.yaml")
    error = refused(["--config", tiny_config, "--output", str(tmp_path / "b")], capsys)
    assert "holds a run of pipeline: cfr, not bench: choose another output_dir" in error and "--overwrite" not in error


def test_a_second_draw_bench_in_one_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import signal
    import subprocess
    import sys

    folder = tmp_path / "b"
    folder.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time; d = os.open(sys.argv[1], os.O_RDONLY); "
         "fcntl.flock(d, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)", str(folder)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        error = refused(["--config", str(ROOT / "configs/bench/tiny.yaml"), "--output", str(folder)], capsys)
        assert "is in use by another run" in error
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert list(folder.iterdir()) == []


def test_an_address_where_no_ray_head_answers_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    from train.cluster import check_address

    with socket.socket() as closed:  # a port that was free a moment ago: nothing listens there
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    error = refused(["--config", str(ROOT / "configs/bench/tiny.yaml"), "--output", str(tmp_path / "b"),
                     "--address", f"127.0.0.1:{port}"], capsys)
    assert f"--address 127.0.0.1:{port}: no Ray head answers there" in error
    assert not (tmp_path / "b").exists()
    with pytest.raises(ConfigError, match="must be HOST:PORT"):
        check_address("127.0.0.1")
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        check_address(f"127.0.0.1:{listening.getsockname()[1]}")
    check_address("local")


def test_a_settings_file_that_is_a_fifo_is_refused_before_it_is_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import shutil

    settings = tmp_path / "settings"
    shutil.copytree(ROOT / "configs/bench/algorithms", settings)
    (settings / "cfr.yaml").unlink()
    os.mkfifo(settings / "cfr.yaml")
    with unblocked(settings / "cfr.yaml"):
        error = refused(["--config", str(ROOT / "configs/bench/tiny.yaml"), "--output", str(tmp_path / "b"),
                         f"settings_dir={settings}"], capsys)
    assert "cfr.yaml" in error and "is a FIFO (named pipe), not a regular file" in error


def test_draw_train_overwrite_starts_a_benchmark_folder_over(finished_run: Path, tmp_path: Path) -> None:
    from train import cli

    run = copy_of(finished_run, tmp_path)
    record = run / "cells" / "cfr-micro-s0.json"
    before = record.stat().st_ino
    (run / "work" / "cfr-micro-s0" / "2").mkdir()  # an attempt cut short, as a killed run leaves it
    assert cli.main(["--config", str(ROOT / "configs/bench/tiny.yaml"), "--overwrite", f"output_dir={run}", "seeds=[0]",
                     f"settings_dir={ROOT / 'configs/bench/algorithms'}"]) == 0
    assert record.stat().st_ino != before  # run again, not skipped
    assert sorted(path.name for path in (run / "work" / "cfr-micro-s0").iterdir()) == ["1"]
