"""Training runs lose and mix nothing: atomic checkpoints, SIGINT, --resume checked first, output dirs.

One tiny run (512 steps, a checkpoint every 256) serves most tests; the SIGINT test runs
``draw-train`` in a subprocess and interrupts it.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from train.config import ConfigError, load
from train.selfplay.config import TrainConfig

ROOT = Path(__file__).resolve().parent.parent
TINY = [
    "total_timesteps=512",
    "n_envs=2",
    "vec_env=batched",
    "snapshot_every=256",
    "checkpoint_every=256",
    "tensorboard=false",
    "progress_bar=false",
    "ppo.num_steps=128",
    "ppo.minibatch_size=128",
    "ppo.update_epochs=1",
    "ppo.net_arch=[16]",
    "eval.every=0",
    "final_eval.matches=2",
    "final_eval.opponents=[heaviest]",
]


def tiny(output_dir: Path, *overrides: str) -> TrainConfig:
    return load(TrainConfig, ROOT / "configs" / "quick.yaml", [*TINY, f"output_dir={output_dir}", *overrides])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from train.selfplay.run import train

    output = tmp_path_factory.mktemp("train") / "run"
    train(tiny(output))
    return output


def test_a_run_writes_policy_files_and_no_pickle_of_its_own(run: Path) -> None:
    from agents.policy_network import NumpyPolicy

    assert not list(run.rglob("*.pkl"))
    policy = NumpyPolicy.load(run / "final.npz")
    assert policy.num_players == 2 and [w.shape[0] for w, _ in policy.weights.policy] == [16, 58]
    record = json.loads((run / "final.json").read_text())
    assert record["provenance"]["timesteps"] == 512
    assert record["value_unit"] == 1 / 0.02 == policy.weights.value_unit  # zero-sum points per unit of the value
    for checkpoint in (run / "final.zip", run / "checkpoints" / "step_256.zip"):
        for suffix in (".pool.npz", ".state.json", ".policy.json", ".npz", ".json"):
            assert checkpoint.with_suffix(suffix).is_file(), suffix
        with np.load(checkpoint.with_suffix(".pool.npz"), allow_pickle=False) as pool:
            assert all(pool[name].dtype == np.float32 for name in pool.files)


def test_rerunning_a_finished_run_says_it_is_complete(run: Path, capsys) -> None:
    from train.selfplay.run import train

    before = {path: path.stat().st_mtime_ns for path in run.rglob("*")}
    summary = train(tiny(run))
    assert summary["timesteps"] == 512 and [row["opponent"] for row in summary["final_eval"]] == ["heaviest"]
    assert f"{run} is complete (512 steps); its summary: {run / 'summary.json'}" in capsys.readouterr().out
    assert {path: path.stat().st_mtime_ns for path in run.rglob("*")} == before


def test_draw_train_ends_naming_the_policy_file_to_play(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from train import cli

    assert cli.main(["--config", str(ROOT / "configs" / "quick.yaml"), *TINY, f"output_dir={run}"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"policy written to {run / 'final.npz'}"


def test_rerunning_under_a_changed_config_is_refused_naming_the_keys(run: Path) -> None:
    from train.selfplay.run import train

    before = {path: path.stat().st_mtime_ns for path in run.rglob("*")}
    with pytest.raises(ConfigError, match=r"holds a run made with other settings \(seed is 0 there, 1 here\).*--overwrite"):
        train(tiny(run, "seed=1"))
    assert {path: path.stat().st_mtime_ns for path in run.rglob("*")} == before


def test_rerunning_an_interrupted_run_resumes_from_its_last_checkpoint(run: Path, tmp_path: Path, capsys) -> None:
    from train.selfplay.run import train

    output = tmp_path / "interrupted"
    (output / "checkpoints").mkdir(parents=True)
    for path in (run / "checkpoints").glob("step_256.*"):
        shutil.copy(path, output / "checkpoints" / path.name)
    shutil.copy(run / "config.json", output / "config.json")
    config = tiny(output)
    (output / "config.json").write_text(json.dumps(config.to_dict()))
    summary = train(config)
    assert summary["timesteps"] == 512
    checkpoint = output / "checkpoints" / "step_256.zip"
    assert f"Resuming from {checkpoint} at step 256: 256 steps left to 512" in capsys.readouterr().out


def test_overwrite_replaces_the_earlier_run_and_nothing_else(run: Path, tmp_path: Path) -> None:
    from train.run_dir import MARKER
    from train.runs import open_run_dir

    output = tmp_path / "run"
    shutil.copytree(run, output)
    open_run_dir(tiny(output), "selfplay", overwrite=True).start()
    assert sorted(path.name for path in output.iterdir()) == [MARKER, "config.json"]
    assert json.loads((output / MARKER).read_text()) == {"format": "draw-dominoes-run", "version": 1, "pipeline": "selfplay"}


def test_every_file_of_a_run_is_one_its_pipeline_writes(run: Path) -> None:
    from train.run_dir import run_files
    from train.runs import RUNS

    found = run_files(run, RUNS["selfplay"])
    assert len(found.files) == len([path for path in run.rglob("*") if path.is_file()]) > 10
    assert {folder.name for folder in found.folders} == {"checkpoints"}


def test_overwrite_refuses_a_file_the_run_did_not_write_and_removes_nothing(run: Path, tmp_path: Path) -> None:
    from train.runs import open_run_dir

    output = tmp_path / "run"
    shutil.copytree(run, output)
    (output / "checkpoints" / "notes.txt").write_text("mine")
    before = {path: path.stat().st_mtime_ns for path in output.rglob("*")}
    with pytest.raises(ConfigError, match=r"holds '.*checkpoints/notes\.txt', which no run of pipeline: selfplay writes"):
        open_run_dir(tiny(output), "selfplay", overwrite=True)
    assert {path: path.stat().st_mtime_ns for path in output.rglob("*")} == before


def test_a_run_without_a_marker_is_one_only_if_all_its_files_are_a_runs(run: Path, tmp_path: Path) -> None:
    from train.run_dir import MARKER
    from train.runs import open_run_dir

    output = tmp_path / "earlier_version"
    shutil.copytree(run, output)
    (output / MARKER).unlink()
    assert open_run_dir(tiny(output), "selfplay", free=("output_dir",)).resuming
    (output / "notes.txt").write_text("mine")
    for overwrite in (False, True):
        with pytest.raises(ConfigError, match=r"no run of draw-train: no \.draw-run\.json, and '.*notes\.txt' is no file"):
            open_run_dir(tiny(output), "selfplay", overwrite=overwrite)
    assert (output / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_config_json_of_someone_else_is_no_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], overwrite: bool) -> None:
    from train import cli

    output = tmp_path / "app"
    (output / "sub").mkdir(parents=True)
    (output / "config.json").write_text('{"name": "app"}')
    (output / "sub" / "keep").write_text("x")
    with pytest.raises(SystemExit) as caught:
        cli.main(["--config", str(ROOT / "configs" / "quick.yaml"), *(["--overwrite"] * overwrite), *TINY, f"output_dir={output}"])
    assert caught.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"output_dir {str(output)!r} already holds files but no run of draw-train" in line
    assert "config.json lacks 'num_players', 'seed', 'output_dir'" in line
    assert sorted(path.name for path in output.rglob("*")) == ["config.json", "keep", "sub"]


def test_a_config_json_of_defaults_is_not_started_over(tmp_path: Path) -> None:
    from train.runs import open_run_dir

    output = tmp_path / "w"
    output.mkdir()
    (output / "config.json").write_text('{"theme": "dark"}')
    with pytest.raises(ConfigError, match="already holds files but no run"):
        open_run_dir(load(TrainConfig, None, [f"output_dir={output}"]), "selfplay")
    (output / "config.json").write_text("{}")  # every key its default: still no run's
    with pytest.raises(ConfigError, match="config.json lacks 'num_players', 'seed', 'output_dir'"):
        open_run_dir(load(TrainConfig, None, [f"output_dir={output}"]), "selfplay")


def test_an_unfinished_run_is_started_over_only_if_all_it_holds_is_its_own(run: Path, tmp_path: Path) -> None:
    from train.selfplay.run import train

    output = tmp_path / "unfinished"
    output.mkdir()
    shutil.copy(run / "config.json", output)
    shutil.copy(run / ".draw-run.json", output)
    (output / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="notes.txt"):
        train(tiny(output))
    assert sorted(path.name for path in output.iterdir()) == [".draw-run.json", "config.json", "notes.txt"]


def test_a_missing_resume_file_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    from train.selfplay.run import train

    output = tmp_path / "run"
    with pytest.raises(ConfigError, match=r"--resume '.*missing\.zip': no such checkpoint"):
        train(tiny(output), resume=tmp_path / "missing.zip")
    assert not output.exists()


def test_resuming_under_a_contradicting_config_names_the_keys(run: Path, tmp_path: Path) -> None:
    from train.selfplay.run import train

    checkpoint = run / "checkpoints" / "step_256.zip"
    output = tmp_path / "resumed"
    with pytest.raises(ConfigError) as caught:
        train(tiny(output, "num_players=3", "ppo.net_arch=[32]", "total_timesteps=768"), resume=checkpoint)
    message = str(caught.value)
    assert "num_players is 2 in the checkpoint and 3 in the config" in message
    assert "ppo.net_arch is [16] in the checkpoint and [32] in the config" in message
    assert not output.exists()


def test_a_resumed_run_says_where_it_resumes_from(run: Path, tmp_path: Path, capsys) -> None:
    from train.selfplay.run import train

    checkpoint = run / "checkpoints" / "step_256.zip"
    summary = train(tiny(tmp_path / "resumed"), resume=checkpoint)
    assert summary["timesteps"] == 512
    assert f"Resuming from {checkpoint} at step 256: 256 steps left to 512" in capsys.readouterr().out


def test_bare_draw_train_asks_for_a_config(tmp_path: Path, capsys) -> None:
    from train import cli

    with pytest.raises(SystemExit) as caught:
        cli.main([])
    assert caught.value.code == 2
    assert "the following arguments are required: --config" in capsys.readouterr().err


def test_resuming_at_total_timesteps_evaluates_instead_of_crashing(run: Path, tmp_path: Path) -> None:
    from train.selfplay.run import train

    summary = train(tiny(tmp_path / "again"), resume=run / "final.zip")
    assert summary["timesteps"] == 512 and [row["opponent"] for row in summary["final_eval"]] == ["heaviest"]


def test_resume_restores_the_snapshot_pool_from_npz(run: Path) -> None:
    from train.checkpoints import read_resume_state

    state = read_resume_state(run / "final.zip", tiny(run).to_dict())
    assert state.timesteps == 512 and len(state.snapshots) == 2
    assert state.snapshots[0].features == "extended"


class _Payload:
    """Unpickling this creates a file: the proof that a loader ran code from a file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (str(self.marker), "w"))


def test_resume_never_unpickles_an_old_pickled_pool(run: Path, tmp_path: Path) -> None:
    from train.selfplay.run import train

    planted = tmp_path / "planted"
    shutil.copytree(run / "checkpoints", planted)
    checkpoint = planted / "step_256.zip"
    checkpoint.with_suffix(".pool.npz").unlink()
    marker = tmp_path / "ran"
    checkpoint.with_suffix(".pool.pkl").write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(
        ConfigError, match=r"step_256\.pool\.npz is missing .*pickled \.pool\.pkl is never loaded"
    ):
        train(tiny(tmp_path / "out", "total_timesteps=768"), resume=checkpoint)
    assert not marker.exists()


def test_side_files_of_another_step_are_refused(run: Path, tmp_path: Path) -> None:
    from train.checkpoints import read_resume_state

    mixed = tmp_path / "mixed"
    shutil.copytree(run / "checkpoints", mixed)
    for suffix in (".state.json", ".pool.npz"):
        shutil.copy(run / f"final{suffix}", mixed / f"step_256{suffix}")
    with pytest.raises(ConfigError, match="side files belong to step 512, the model to step 256"):
        read_resume_state(mixed / "step_256.zip", tiny(run).to_dict())


def test_an_interrupted_save_leaves_the_earlier_checkpoint_whole(run: Path, tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from train.checkpoints import read_resume_state, save_checkpoint

    folder = tmp_path / "checkpoints"
    shutil.copytree(run / "checkpoints", folder)
    path = folder / "step_256.zip"
    model = MaskablePPO.load(str(run / "final.zip"), device="cpu")

    def interrupted_save(target: str | Path, *args: object, **kwargs: object) -> None:
        Path(target).write_bytes(b"PK\x03\x04 half a zip")
        raise KeyboardInterrupt

    model.save = interrupted_save  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(
            model, path, [], {"train_seconds": 0.0, "eval_rows": []}, num_players=2, features="extended"
        )
    assert zipfile.ZipFile(path).testzip() is None
    state = read_resume_state(path, tiny(run).to_dict())  # the zip and its side files still agree
    assert state.timesteps == 256


def test_sigint_saves_a_last_checkpoint_that_resumes(tmp_path: Path) -> None:
    from train.checkpoints import read_resume_state

    output = tmp_path / "run"
    overrides = [*TINY, f"output_dir={output}", "total_timesteps=100000000", "checkpoint_every=1000000"]
    process = subprocess.Popen(
        [sys.executable, "-m", "train.cli", "--config", str(ROOT / "configs" / "quick.yaml"), *overrides],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 120
        while not (output / "config.json").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(3)  # a few rollouts
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr
    (checkpoint,) = (output / "checkpoints").glob("step_*.zip")
    assert f"saved {checkpoint}" in stdout
    state = read_resume_state(checkpoint, tiny(output).to_dict())
    assert state.timesteps == int(checkpoint.stem.removeprefix("step_")) > 0
    assert not list(output.rglob("*.partial*"))  # draw_env.io.files.atomic_path's temporary names


def test_a_checkpoint_whose_weights_do_not_load_is_refused_before_writing(run: Path, tmp_path: Path) -> None:
    from train.selfplay.run import train

    broken = tmp_path / "broken"
    shutil.copytree(run / "checkpoints", broken)
    checkpoint = broken / "step_256.zip"
    with (
        zipfile.ZipFile(run / "checkpoints" / "step_256.zip") as source,
        zipfile.ZipFile(checkpoint, "w") as target,
    ):
        for entry in source.namelist():
            target.writestr(entry, b"not tensors" if entry == "policy.pth" else source.read(entry))
    output = tmp_path / "out"
    with pytest.raises(ConfigError, match="policy.pth"):
        train(tiny(output, "total_timesteps=768"), resume=checkpoint)
    assert not output.exists()
