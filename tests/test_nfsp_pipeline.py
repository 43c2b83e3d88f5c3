"""NFSP as a draw-train pipeline (train/nfsp/): its config, a run end to end on micro, and its
refusal to continue a run cut short; its settings shared with the benchmark's NFSP cells."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from train import cli
from train.config import ConfigError, build
from train.nfsp.config import NfspConfig, NfspSettings

ROOT = Path(__file__).resolve().parents[1]
MICRO = str(ROOT / "configs" / "nfsp_micro.yaml")
#: NFSP small enough to learn within a few hundred decisions of micro, evaluated in a few games.
TINY = [
    "hidden_layers=[16]", "batch_size=16", "min_buffer_size_to_learn=32", "learn_every=8",
    "reservoir_buffer_capacity=2000", "replay_buffer_capacity=2000", "update_target_network_every=50",
    "final_eval.matches=2", "final_eval.opponents=[heaviest]", "progress_bar=false",
]


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("draw-train: error: ") and "\n" not in error, error
    return error


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("sl_learnig_rate=0.01", "'sl_learnig_rate' is not known"),
        ("anticipatory_param=2", "anticipatory_param"),
        ("optimizer=rmsprop", "optimizer"),
        ("hidden_layers=[]", "hidden_layers"),
        ("obs_type=information_state", "'obs_type' is not known"),
        ("reservoir_buffer_capacity=100000000", "reservoir_buffer_capacity"),
        ("eval.previous=true", "NFSP has no previous iteration"),
        ("eval.every=100.5", "eval.every"),
    ],
)
def test_a_bad_config_is_one_line_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: str, message: str
) -> None:
    out = tmp_path / "run"
    if override.startswith("reservoir"):  # the buffers' memory, refused on a machine with less
        from agents.inputs import input_size
        from train.config import machine_memory
        from train.nfsp.config import buffer_bytes

        micro = build(NfspConfig, {"variant": "micro"})
        inputs, actions = input_size("scaled", micro.game()), micro.game().num_actions
        needed = buffer_bytes(micro.model_copy(update={"reservoir_buffer_capacity": 10**8}), inputs, actions)
        memory = machine_memory()
        if memory is None or memory >= needed:
            pytest.skip("this machine holds a 100-million-transition buffer of micro")
    error = _error(capsys, ["--config", MICRO, override, f"output_dir={out}"])
    assert message in error, error
    assert not out.exists()


def test_exploitability_every_needs_an_exact_game() -> None:
    with pytest.raises(ConfigError, match="exploitability_every"):
        build(NfspConfig, {"variant": "micro", "num_players": 3, "exploitability_every": 100})
    with pytest.raises(ConfigError, match="exploitability_every"):
        build(NfspConfig, {"variant": "micro", "episode": "match", "exploitability_every": 100})


def test_the_benchmark_checks_its_nfsp_settings_with_the_pipelines_keys() -> None:
    pytest.importorskip("pyspiel")
    from train.bench import openspiel_algorithms as algorithms
    from train.bench.protocol import GAMES
    from train.meter import Budget

    assert algorithms.NFSP_DEFAULTS == NfspSettings().nfsp_settings()
    config = algorithms.SpielConfig("nfsp", GAMES["micro"], 0, {"batch_size": 0})
    with pytest.raises(ValueError, match="batch_size"):
        algorithms.train(config, Budget(env_steps=10))


def test_a_tiny_run_ends_with_a_policy_file_measured_exactly_and_does_not_continue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's last exact measure is draw-exploit's of final.npz played sampling, to the last
    bit; a rerun prints the finished run; a run cut short is refused in one line, and
    --overwrite starts it again."""
    pytest.importorskip("pyspiel")
    pytest.importorskip("torch")
    from arena import exploit_cli

    out = tmp_path / "run"
    argv = ["--config", MICRO, *TINY, "env_steps=300", "exploitability_every=150", "eval.every=200",
            "eval.matches=2", "eval.opponents=[random]", f"output_dir={out}"]
    assert cli.main(argv) == 0
    (evaluated,) = sorted((out / "checkpoints").glob("steps_*.npz"))  # the first hand past 200 decisions
    assert 200 <= int(evaluated.stem.split("_")[1]) < 300
    assert (out / "eval.csv").read_text().count("random") == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["env_steps"] >= 300 and summary["policy"] == str(out / "final.npz")
    curve = json.loads((out / "exploitability.json").read_text())
    steps = [point["steps"] for point in curve]
    assert len(steps) == 2 and 150 <= steps[0] < 200 and steps[-1] == summary["env_steps"]
    assert json.loads((out / ".draw-run.json").read_text())["pipeline"] == "nfsp"
    assert json.loads((out / "final.json").read_text())["features"] == "scaled"

    measured = tmp_path / "exploit.json"
    spec = f"network:path={out / 'final.npz'},deterministic=false"
    assert exploit_cli.main([spec, "--variant", "micro", "--method", "tree", "--quiet", "--json", str(measured)]) == 0
    assert json.loads(measured.read_text())["exploitability"] == curve[-1]["exploitability"]
    assert summary["exploitability"]["exploitability"] == curve[-1]["exploitability"]
    capsys.readouterr()

    assert cli.main(argv) == 0  # finished: its results again, nothing trained
    assert "is complete (" in capsys.readouterr().out

    (out / "summary.json").unlink()  # a run cut short before its end
    error = _error(capsys, argv)
    assert "unfinished run of pipeline: nfsp" in error and "does not continue" in error and "--overwrite" in error
    with np.load(out / "final.npz") as first:
        weights = {name: first[name] for name in first.files}
    assert cli.main([*argv, "--overwrite"]) == 0
    assert json.loads((out / "summary.json").read_text())["env_steps"] == summary["env_steps"]
    with np.load(out / "final.npz") as again:  # the seed gives the same network
        assert set(again.files) == set(weights) and all(np.array_equal(again[name], weights[name]) for name in weights)


def test_without_openspiel_a_run_is_one_line_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "train.bench.openspiel_algorithms", None)  # its import fails
    out = tmp_path / "run"
    error = _error(capsys, ["--config", MICRO, f"output_dir={out}"])
    assert "pipeline: nfsp needs OpenSpiel" in error
    assert not out.exists()
