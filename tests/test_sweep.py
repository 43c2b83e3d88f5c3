"""Tuning sweeps (draw-tune, train/sweep/): the grid, its checks, the trials, resuming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from train.config import ConfigError, load
from train.sweep import cli
from train.sweep.config import SweepConfig, check_sweep, make_trial

ROOT = Path(__file__).resolve().parents[1]
#: A self-play run of seconds on micro: one rollout of 2 x 64 steps.
TINY_RUN = {
    "n_envs": 2, "ppo.num_steps": 64, "ppo.minibatch_size": 64, "ppo.update_epochs": 1, "snapshot_every": 128,
    "checkpoint_every": 128, "eval.every": 0, "final_eval.matches": 2, "final_eval.opponents": ["heaviest"],
}


def sweep_file(tmp_path: Path, **changes: object) -> Path:
    data: dict[str, object] = {
        "base": str(ROOT / "configs" / "selfplay_micro.yaml"),
        "fixed": TINY_RUN,
        "budget": {"total_timesteps": 128},
        "grid": {"ppo.learning_rate": [0.001, 0.003], "ppo.ent_coef": [0.0, 0.1]},
        "tuning_seeds": [0, 1],
        "held_out_seeds": [7],
        "workers": 1,
        "output_dir": str(tmp_path / "sweep"),
        "progress_bar": False,
    }
    data.update(changes)
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_the_grid_expands_to_every_point_and_each_trial_has_its_own_folder(tmp_path: Path) -> None:
    config = load(SweepConfig, sweep_file(tmp_path))
    points = config.points()
    assert points == [
        {"ppo.learning_rate": 0.001, "ppo.ent_coef": 0.0}, {"ppo.learning_rate": 0.001, "ppo.ent_coef": 0.1},
        {"ppo.learning_rate": 0.003, "ppo.ent_coef": 0.0}, {"ppo.learning_rate": 0.003, "ppo.ent_coef": 0.1},
    ]
    trials = [make_trial(config, "tuning", point, seed) for point in points for seed in config.tuning_seeds]
    assert len({trial.name for trial in trials}) == 8
    assert "ppo.ent_coef=0.1" in trials[2].overrides and "seed=0" in trials[2].overrides
    # the same settings give the same folder (a rerun finds it); another budget another one
    assert make_trial(config, "tuning", points[1], 0).name == trials[2].name
    other = load(SweepConfig, sweep_file(tmp_path, budget={"total_timesteps": 256}))
    assert make_trial(other, "tuning", points[1], 0).name != trials[2].name
    check_sweep(config)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"grid": {"ppo.learnig_rate": [0.001]}}, "learnig_rate"),
        ({"grid": {"ppo.ent_coef": [0.0, -1.0]}}, "ppo.ent_coef"),
        ({"budget": {"total_timestep": 128}}, "total_timestep"),
        ({"held_out_seeds": [1]}, "held_out_seeds must not hold a tuning seed"),
        ({"grid": {"seed": [1, 2]}}, "the sweep sets 'seed' itself"),
        ({"grid": {"ppo.ent_coef": []}}, "has no values"),
        ({"base": str(ROOT / "configs" / "selfplay_2p.yaml")}, "cannot be measured exactly"),
        ({"base": str(ROOT / "configs" / "cfr_micro.yaml")}, "a sweep tunes pipeline"),
        ({"base": str(ROOT / "configs" / "nowhere.yaml")}, "no config file"),
    ],
)
def test_a_bad_sweep_is_one_line_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, object], message: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--config", str(sweep_file(tmp_path, **changes))])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("draw-tune: error: ") and "\n" not in error and message in error, error
    assert not (tmp_path / "sweep").exists()


def test_the_winner_is_the_point_of_lowest_mean(tmp_path: Path) -> None:
    from train.sweep.run import TrialRecord, winner_of

    config = load(SweepConfig, sweep_file(tmp_path))
    figures = {0: [0.3, 0.1], 1: [0.05, 0.25], 2: [0.2, 0.0], 3: [0.4, 0.4]}  # means 0.2, 0.15, 0.1, 0.4

    def record(index: int, seed: int, value: float) -> TrialRecord:
        trial = make_trial(config, "tuning", config.points()[index], seed)
        return TrialRecord(
            name=trial.name, stage="tuning", point=trial.point, seed=seed, overrides=list(trial.overrides),
            exploitability=value, nash_conv=2 * value, env_steps=128, train_cpu_seconds=1.0,
            measure_cpu_seconds=1.0, policy="x.npz",
        )

    records = [record(index, seed, value) for index, values in figures.items() for seed, value in zip((0, 1), values)]
    winner, means = winner_of(config, records)
    assert winner == config.points()[2]
    assert means == pytest.approx({0: 0.2, 1: 0.15, 2: 0.1, 3: 0.4})


def test_a_trial_record_of_other_overrides_is_refused(tmp_path: Path) -> None:
    from train.sweep.run import read_record

    config = load(SweepConfig, sweep_file(tmp_path))
    trial = make_trial(config, "tuning", config.points()[0], 0)
    folder = trial.folder(tmp_path)
    folder.mkdir(parents=True)
    (folder / "trial.json").write_text(json.dumps({"name": trial.name, "overrides": ["seed=3"]}))
    with pytest.raises(ConfigError, match="trial.json"):
        read_record(trial, tmp_path)


@pytest.mark.exhaustive  # four real draw-train runs as Ray Tune trials (a minute or more)
@pytest.mark.ray
def test_a_tiny_sweep_records_exact_figures_and_resumes(tmp_path: Path) -> None:
    """One grid point first (a sweep cut short), then the grid of two: the finished trial is not
    run again; every record's figure is draw-exploit's of its policy; held-out trials use only
    the held-out seeds."""
    import ray

    from arena import exploit_cli
    from train.sweep.run import run_stage, run_sweep, tuning_trials

    grid = {"ppo.learning_rate": [0.001, 0.003]}
    config = load(SweepConfig, sweep_file(tmp_path, grid=grid, tuning_seeds=[0]))
    sweep_dir = Path(config.output_dir)
    first = tuning_trials(config)[:1]
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        (done,) = run_stage(config, first, sweep_dir, "tuning")
    finally:
        ray.shutdown()
    record_file = first[0].folder(sweep_dir) / "trial.json"
    stamp, log_size = record_file.stat().st_mtime_ns, (record_file.parent / "train.log").stat().st_size

    summary = run_sweep(config)
    assert record_file.stat().st_mtime_ns == stamp  # skipped, not run again
    assert (record_file.parent / "train.log").stat().st_size == log_size
    records = json.loads((sweep_dir / "trials.json").read_text())
    tuning = [r for r in records if r["stage"] == "tuning"]
    held_out = [r for r in records if r["stage"] == "held_out"]
    assert sorted((r["point"]["ppo.learning_rate"], r["seed"]) for r in tuning) == [(0.001, 0), (0.003, 0)]
    assert {r["seed"] for r in held_out} == {7}
    means = {r["point"]["ppo.learning_rate"]: r["exploitability"] for r in tuning}
    best = min(means, key=lambda rate: (means[rate], grid["ppo.learning_rate"].index(rate)))
    assert summary["winner"]["point"] == {"ppo.learning_rate": best} and summary["winner"]["seeds"] == [7]
    assert summary["reference"]["point"] == {}
    assert sorted(json.dumps(r["point"]) for r in held_out) == sorted([json.dumps({"ppo.learning_rate": best}), "{}"])
    for r in records:
        assert r["env_steps"] == 128 and r["train_cpu_seconds"] > 0
    # one record against draw-exploit's figure of the same policy file, played sampling (the default)
    out = tmp_path / "exploit.json"
    spec = f"network:path={held_out[0]['policy']},deterministic=false"
    assert exploit_cli.main([spec, "--variant", "micro", "--quiet", "--json", str(out)]) == 0
    assert abs(held_out[0]["exploitability"] - json.loads(out.read_text())["exploitability"]) <= 1e-9
    assert all(r["played"] == "sampling" for r in records)
    assert (sweep_dir / "exploitability.png").stat().st_size > 0
    best_config = yaml.safe_load((sweep_dir / "best.yaml").read_text())
    assert best_config["ppo"]["learning_rate"] == best and best_config["total_timesteps"] == 128

    # measured by the most probable move instead: every record measured again, none of them trained
    # again (a winner that changes with the measure has held-out trials of its own to train)
    logs = {path: path.stat().st_size for path in sweep_dir.glob("trials/*/train.log")}
    greedy = run_sweep(config.model_copy(update={"play": "most_probable"}))
    again = {r["name"]: r for r in json.loads((sweep_dir / "trials.json").read_text())}
    assert all(path.stat().st_size == size for path, size in logs.items())
    assert all(r["played"] == "most_probable" for r in again.values())
    assert all(again[r["name"]]["train_cpu_seconds"] == r["train_cpu_seconds"] for r in tuning)
    first = again[tuning[0]["name"]]
    assert exploit_cli.main([f"network:path={first['policy']}", "--variant", "micro", "--quiet", "--json", str(out)]) == 0
    assert abs(first["exploitability"] - json.loads(out.read_text())["exploitability"]) <= 1e-9
    assert greedy["winner"]["seeds"] == [7]


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "sweeps").glob("*.yaml")), ids=lambda path: path.stem)
def test_the_shipped_sweeps_pass_their_checks(path: Path) -> None:
    config = load(SweepConfig, path)
    pipeline, game = check_sweep(config)
    assert pipeline.name in ("selfplay", "jax_ppo", "nfsp") and game.num_players == 2
    assert len(config.points()) > 1 and len(config.tuning_seeds) >= 2 and not set(config.tuning_seeds) & set(config.held_out_seeds)


def test_an_address_where_no_ray_head_answers_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--config", str(sweep_file(tmp_path)), "--address", f"127.0.0.1:{port}"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("draw-tune: error: --address") and "\n" not in error, error
    assert not (tmp_path / "sweep").exists()


#: An NFSP run of a few seconds on micro (its base config's settings, cut down).
TINY_NFSP = {
    "hidden_layers": [16], "batch_size": 16, "min_buffer_size_to_learn": 32, "learn_every": 8,
    "reservoir_buffer_capacity": 2000, "replay_buffer_capacity": 2000, "update_target_network_every": 50,
    "exploitability_every": 0, "eval.every": 0, "final_eval.matches": 2, "final_eval.opponents": ["heaviest"],
}


def nfsp_sweep_file(tmp_path: Path, **changes: object) -> Path:
    settings: dict[str, object] = {
        "base": str(ROOT / "configs" / "nfsp_micro.yaml"), "fixed": TINY_NFSP, "budget": {"env_steps": 200},
        "grid": {"sl_learning_rate": [0.001, 0.01]}, "tuning_seeds": [0], "held_out_seeds": [1], **changes,
    }
    return sweep_file(tmp_path, **settings)


def test_an_nfsp_sweep_passes_its_checks_and_a_bad_grid_key_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline, game = check_sweep(load(SweepConfig, nfsp_sweep_file(tmp_path)))
    assert pipeline.name == "nfsp" and game.variant == {"max_pip": 2, "hand_size": 1, "protected": 2}
    for grid, message in (({"sl_learnig_rate": [0.001, 0.01]}, "sl_learnig_rate"),
                          ({"anticipatory_param": [0.1, 1.5]}, "anticipatory_param")):
        with pytest.raises(SystemExit) as exit_:
            cli.main(["--config", str(nfsp_sweep_file(tmp_path, grid=grid))])
        assert exit_.value.code == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith("draw-tune: error: grid point ") and "\n" not in error and message in error, error
    assert not (tmp_path / "sweep").exists()


def test_an_nfsp_trial_cut_short_starts_over_and_is_measured_as_it_samples(tmp_path: Path) -> None:
    """A trial of a pipeline whose runs do not continue, whose run folder holds a run cut short
    (no summary), is run again from the start; its record is draw-exploit's figure of the policy
    file played sampling (deterministic=false)."""
    pytest.importorskip("pyspiel")
    from arena import exploit_cli
    from train.pipelines import load_run
    from train.run_dir import RunDir
    from train.runs import RUNS
    from train.sweep.run import _spec, run_overrides, run_trial

    config = load(SweepConfig, nfsp_sweep_file(tmp_path))
    sweep_dir = Path(config.output_dir)
    trial = make_trial(config, "tuning", config.points()[0], 0)
    _, cut_short = load_run(config.base, [*trial.overrides, *run_overrides(trial, sweep_dir)])
    RunDir(cut_short, RUNS["nfsp"]).start()  # its config and marker, then nothing: killed
    record = run_trial(_spec(config, trial, sweep_dir))
    assert record["env_steps"] >= 200 and record["train_cpu_seconds"] > 0
    # the same run, finished but not recorded (a sweep cut short while measuring): measured again,
    # its training CPU unknown rather than the few seconds of the process that found it finished
    (trial.folder(sweep_dir) / "trial.json").unlink()
    again = run_trial(_spec(config, trial, sweep_dir))
    assert again["train_cpu_seconds"] is None and again["exploitability"] == record["exploitability"]
    out = tmp_path / "exploit.json"
    spec = f"network:path={record['policy']},deterministic=false"
    assert exploit_cli.main([spec, "--variant", "micro", "--method", "tree", "--quiet", "--json", str(out)]) == 0
    assert record["exploitability"] == json.loads(out.read_text())["exploitability"]


@pytest.mark.exhaustive  # four draw-train processes as Ray Tune trials (about a minute)
@pytest.mark.ray
def test_a_tiny_nfsp_sweep_runs_the_protocol(tmp_path: Path) -> None:
    """A 1 x 2 grid of NFSP on micro: both points on the tuning seed, then the winner and the base
    settings on the held-out seed, each record the exact exploitability of its policy file."""
    from train.sweep.run import run_sweep

    config = load(SweepConfig, nfsp_sweep_file(tmp_path))
    summary = run_sweep(config)
    sweep_dir = Path(config.output_dir)
    records = json.loads((sweep_dir / "trials.json").read_text())
    tuning = sorted((r["point"]["sl_learning_rate"], r["seed"]) for r in records if r["stage"] == "tuning")
    assert tuning == [(0.001, 0), (0.01, 0)]
    held_out = [r for r in records if r["stage"] == "held_out"]
    assert {r["seed"] for r in held_out} == {1} and len(held_out) == 2
    means = {entry["point"]["sl_learning_rate"]: entry["mean"] for entry in summary["tuning_means"]}
    assert summary["winner"]["point"] == {"sl_learning_rate": min(means, key=lambda rate: (means[rate], rate))}
    assert summary["reference"]["point"] == {}
    assert all(0 <= r["exploitability"] <= 4 and r["env_steps"] >= 200 for r in records)
    assert yaml.safe_load((sweep_dir / "best.yaml").read_text())["env_steps"] == 200
