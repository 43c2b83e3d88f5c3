"""Running a sweep (:mod:`train.sweep.config`) as Ray Tune trials, and its outputs.

Stage ``tuning`` runs every grid point on every tuning seed; the winner is the point of lowest
mean final exploitability. Stage ``held_out`` runs the winner and the base config (the reference)
on the held-out seeds: the figures the sweep reports. Each trial is a Ray Tune trial of one CPU
(``tune.with_resources``) that runs ``draw-train`` through its library entry
(``python -m train.cli``, :func:`train.cli.main`) in its own run folder, then measures the run's final policy exactly
(:func:`arena.exploitability.exploitability`) and writes ``trial.json`` beside the run folder.

Resuming: a trial whose ``trial.json`` holds a record of the same overrides is finished and is
not submitted again; an unfinished trial is run again, and ``draw-train`` continues its run
folder (:class:`train.run_dir.RunDir`'s protocol). The records on disk, not Ray Tune's
experiment state, are what a rerun trusts: they survive a changed worker count, a cluster
instead of the local machine, and a sweep folder that was moved.
"""

from __future__ import annotations

import math
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field
from ray import tune

from draw_env.io.files import atomic_path, check_writable, write_json_atomic, write_text_atomic
from train.config import ConfigError, shown
from train.run_dir import RunFile, read_run_file
from train.sweep.config import (
    FINAL_POLICY,
    PLAYS,
    TUNABLE,
    SweepConfig,
    Trial,
    check_sweep,
    make_trial,
    run_overrides,
)

#: The files a sweep writes in its ``output_dir`` (beside ``trials/`` and Ray Tune's ``ray/``).
RECORDS, SUMMARY, FIGURE, BEST = "trials.json", "summary.json", "exploitability.png", "best.yaml"
#: A trial's record, beside its run folder.
TRIAL_RECORD = "trial.json"


class TrialRecord(RunFile):
    """``trial.json``: one finished trial."""

    name: str
    stage: str
    point: dict[str, Any]
    seed: int = Field(ge=0)
    overrides: list[str]
    exploitability: float
    nash_conv: float
    env_steps: int = Field(ge=0)
    #: The CPU of the ``draw-train`` process that trained the run whole; null where the run was
    #: resumed or had finished before this attempt (a sweep cut short): its earlier CPU is unknown.
    train_cpu_seconds: float | None = Field(ge=0)
    measure_cpu_seconds: float = Field(ge=0)
    policy: str
    #: How the policy was played when measured (:data:`train.sweep.config.PLAYS`); null in a
    #: record that does not say, which a rerun measures again.
    played: Literal[PLAYS] | None = None  # type: ignore[valid-type]


def read_record(trial: Trial, sweep_dir: Path) -> TrialRecord | None:
    """The trial's record, or ``None`` if it has none yet.

    Raises:
        ConfigError: a record that is not one, or one of other overrides (naming the file).
    """
    path = trial.folder(sweep_dir) / TRIAL_RECORD
    if not path.exists():
        return None
    record: TrialRecord = read_run_file(path, TrialRecord)
    if record.overrides != list(trial.overrides):
        raise ConfigError(f"{path}: field 'overrides' is not this trial's ({shown(record.overrides)})")
    # the same run may have served the other stage of an earlier sweep (its seeds since moved)
    return record.model_copy(update={"stage": trial.stage})


def measure(policy: Path, game: Any, max_bytes: int, play: str = "sampling") -> dict[str, float]:
    """The exact exploitability of the policy file ``policy`` on ``game`` (as ``draw-exploit``
    measures it: each agent asked with what it reads), played as ``play`` says
    (:data:`train.sweep.config.PLAYS`: ``sampling`` is ``network:path=...,deterministic=false``)."""
    from arena.exploitability import agent_probabilities, exploitability, tree_for
    from arena.options import table_obs_type
    from arena.specs import build_agent

    spec = ("network", {"path": str(policy), **({"deterministic": False} if play == "sampling" else {})})
    result = exploitability(
        tree_for(game, max_bytes), agent_probabilities(build_agent(*spec)), obs_type=table_obs_type([spec])
    )
    return {"exploitability": result.exploitability, "nash_conv": result.nash_conv}


def run_trial(spec: dict[str, Any]) -> dict[str, Any]:
    """One trial (``spec``: :func:`_spec`), in a Ray worker: train unless done, measure, record.

    Returns:
        the record's fields (what Ray Tune reports).
    """
    from train.pipelines import load_run

    os.chdir(spec["cwd"])  # Ray Tune starts a trial in its own folder; the base config's paths are the sweep's
    sweep_dir, trial = Path(spec["sweep_dir"]), Trial(spec["stage"], spec["point"], spec["seed"], tuple(spec["overrides"]))
    folder = trial.folder(sweep_dir)
    run = folder / "run"
    record = read_record(trial, sweep_dir)
    if record is not None and record.played == spec["play"]:
        return record.model_dump()
    arguments = ["--config", spec["base"], *run_overrides(trial, sweep_dir)]
    pipeline, config = load_run(spec["base"], arguments[2:])
    if record is not None:  # trained, measured another way: measured again, its training kept
        record = record.model_copy(update=_measurement(run / FINAL_POLICY, config.game(), spec))  # type: ignore[attr-defined]
    else:
        folder.mkdir(parents=True, exist_ok=True)
        tunable = TUNABLE[pipeline.name]
        # A run cut short of a pipeline whose runs do not continue is started over (draw-train
        # replaces only its own files); a finished one prints its results and is measured.
        restart = not tunable.continues and run.is_dir() and not (run / "summary.json").exists()
        whole = restart or not run.is_dir()  # this attempt's process trains the whole run
        log = folder / "train.log"
        check_writable("train.log", log)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        # draw-train in a process of its own: its signal handlers need a main thread (a Tune
        # trial runs in a thread), and the trial's memory goes back when it ends.
        # The log appears whole when draw-train ends (a trial cut short is run again, log and all).
        with atomic_path(log) as temporary, open(temporary, "w", encoding="utf-8") as out:
            status = subprocess.run(
                [sys.executable, "-m", "train.cli", *arguments, *(["--overwrite"] if restart else [])],
                stdout=out, stderr=subprocess.STDOUT, check=False,
            ).returncode
        if status != 0:
            raise RuntimeError(f"trial {trial.name}: draw-train exited with {status} (its output: {log})")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        train_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        summary: dict[str, Any] = read_run_file(run / "summary.json", dict[str, Any])
        steps = summary.get(tunable.steps)
        if not isinstance(steps, int) or steps < 0:
            raise ConfigError(f"{run / 'summary.json'}: field {tunable.steps!r} must be a count of steps")
        record = TrialRecord(
            name=trial.name, stage=trial.stage, point=trial.point, seed=trial.seed, overrides=list(trial.overrides),
            env_steps=steps, train_cpu_seconds=round(train_cpu, 3) if whole else None,
            **_measurement(run / FINAL_POLICY, config.game(), spec),  # type: ignore[attr-defined]
        )
    write_json_atomic(folder / TRIAL_RECORD, record.model_dump(), indent=1)
    return record.model_dump()


def _measurement(policy: Path, game: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """A record's measured fields: :func:`measure`'s figures of ``policy`` played as ``spec["play"]``
    says, how it was played, the measure's CPU seconds and the policy's path."""
    cpu = time.process_time()
    measured = measure(policy, game, spec["max_bytes"], spec["play"])
    return {**measured, "played": spec["play"], "measure_cpu_seconds": round(time.process_time() - cpu, 3),
            "policy": str(policy)}


def _spec(config: SweepConfig, trial: Trial, sweep_dir: Path) -> dict[str, Any]:
    return {
        "stage": trial.stage, "point": trial.point, "seed": trial.seed, "overrides": list(trial.overrides),
        "name": trial.name, "cwd": os.getcwd(), "sweep_dir": str(sweep_dir), "base": str(Path(config.base).resolve()),
        "max_bytes": int(config.max_memory_gib * 1024**3), "play": config.play,
    }


def _tune_function(config: dict[str, Any]) -> None:
    """Ray Tune's function trainable: one trial, its record reported as the trial's result."""
    record = run_trial(config["trial"])
    tune.report({key: record[key] for key in ("exploitability", "env_steps", "train_cpu_seconds") if record[key] is not None})


class _Progress(tune.Callback):
    """Calls ``advance(name)`` in the driver as each trial completes."""

    def __init__(self, advance: Callable[[str], None]) -> None:
        self.advance = advance

    def __getstate__(self) -> dict[str, Any]:
        return {"advance": lambda name: None}  # Tune saves its callbacks; the display stays in this process

    def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self.advance(trial.config["trial"]["name"])


def run_stage(
    config: SweepConfig, trials: Sequence[Trial], sweep_dir: Path, stage: str,
    advance: Callable[[str], None] = lambda name: None,
) -> list[TrialRecord]:
    """Run the unfinished ``trials`` as Ray Tune trials (Ray already initialised); every trial's record.

    ``advance(name)`` is called for each trial as it finishes (a finished one at once).

    Raises:
        RuntimeError: naming the trials that failed and their logs.
    """
    records = {trial.name: read_record(trial, sweep_dir) for trial in trials}
    # a record of a policy played otherwise is measured again (in a trial that does not train)
    finished = {name for name, record in records.items() if record is not None and record.played == config.play}
    for name in finished:
        advance(name)
    pending = [trial for trial in trials if trial.name not in finished]
    if pending:
        tuner = tune.Tuner(
            tune.with_resources(_tune_function, {"cpu": 1}),
            param_space={"trial": tune.grid_search([_spec(config, trial, sweep_dir) for trial in pending])},
            tune_config=tune.TuneConfig(max_concurrent_trials=config.workers),
            run_config=tune.RunConfig(
                name=stage, storage_path=str(sweep_dir / "ray"), verbose=0, callbacks=[_Progress(advance)],
            ),
        )
        results = tuner.fit()
        failed = [results[index] for index in range(len(results)) if results[index].error is not None]
        if failed:
            raise RuntimeError(
                f"{len(failed)} trial(s) of stage {stage} failed, the first: {str(failed[0].error).splitlines()[-1]}"
            )
    done = {trial.name: read_record(trial, sweep_dir) for trial in trials}
    missing = [name for name, record in done.items() if record is None]
    if missing:
        raise RuntimeError(f"stage {stage}: trial {missing[0]} left no {TRIAL_RECORD}")
    return [record for record in done.values() if record is not None]


def tuning_trials(config: SweepConfig) -> list[Trial]:
    return [make_trial(config, "tuning", point, seed) for point in config.points() for seed in config.tuning_seeds]


def held_out_trials(config: SweepConfig, winner: dict[str, Any]) -> list[Trial]:
    """The winner's trials and the base config's (unless the winner is the base config's own values)."""
    points = [winner] if winner == {} else [winner, {}]
    return [make_trial(config, "held_out", point, seed) for point in points for seed in config.held_out_seeds]


def winner_of(config: SweepConfig, records: Sequence[TrialRecord]) -> tuple[dict[str, Any], dict[int, float]]:
    """The grid point of lowest mean exploitability over the tuning seeds (the first in the grid's
    order on a tie), and each point's mean (by the point's index)."""
    means = {}
    for index, point in enumerate(config.points()):
        values = [record.exploitability for record in records if record.point == point]
        means[index] = float(np.mean(values))
    best = min(means, key=lambda index: (means[index], index))
    return config.points()[best], means


def summarise(config: SweepConfig, winner: dict[str, Any], tuning: Sequence[TrialRecord],
              held_out: Sequence[TrialRecord]) -> dict[str, Any]:
    """The summary: the winner, its held-out mean with a bootstrap interval (rliable's, as the
    benchmark's report gives them), the base config's on the same seeds."""
    from train.bench.report import interval_estimates

    def figures(point: dict[str, Any]) -> dict[str, Any]:
        values = np.array([[r.exploitability] for r in held_out if r.point == point])
        low, mean, high = interval_estimates({"x": values})["x"]["mean"]
        return {"point": point, "seeds": [r.seed for r in held_out if r.point == point],
                "exploitability": [float(v) for v in values[:, 0]], "mean": mean, "interval_95": [low, high]}

    _, means = winner_of(config, tuning)
    return {
        "base": config.base,
        "grid": config.grid,
        "budget": config.budget,
        "tuning_seeds": config.tuning_seeds,
        "held_out_seeds": config.held_out_seeds,
        "tuning_means": [{"point": point, "mean": means[index]} for index, point in enumerate(config.points())],
        "winner": figures(winner),
        "reference": figures({}),
    }


def best_config(config: SweepConfig, winner: dict[str, Any]) -> str:
    """The base config with the winning settings (and the sweep's fixed overrides) as YAML."""
    import yaml

    from train.config import apply_override, parse_override, read_yaml

    data = read_yaml(config.base)
    for text in make_trial(config, "best", winner, 0).overrides[:-1]:  # every override but the seed
        apply_override(data, *parse_override(text))
    header = (f"# The winner of the sweep of {config.base} (draw-tune, docs/tuning.md): "
              f"{', '.join(f'{k}={v}' for k, v in winner.items()) or 'the base settings'}.\n")
    return header + yaml.safe_dump(data, sort_keys=False)


def plot(config: SweepConfig, records: Sequence[TrialRecord], path: Path) -> None:
    """Each grid point's final exploitability on the tuning seeds (dots) and their mean (bar)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = config.points()
    # the last part of a dotted key keeps the labels short (ppo.learning_rate -> learning_rate)
    labels = [", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in point.items()) for point in points]
    # one row per grid point, its label on the left: readable for a grid of dozens of points
    fig, ax = plt.subplots(figsize=(9.0, max(3.0, 0.8 + 0.22 * len(points))))
    for index, point in enumerate(points):
        values = [r.exploitability for r in records if r.point == point]
        ax.barh(index, np.mean(values), color="tab:blue", alpha=0.4)
        ax.scatter(values, [index] * len(values), color="tab:blue", s=12)
    ax.set_yticks(range(len(points)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(left=0)
    ax.set_xlabel("final exact exploitability (points per hand): seeds (dots), mean (bar)")
    ax.set_title(f"Sweep of {Path(config.base).name}: tuning seeds {config.tuning_seeds}")
    fig.tight_layout()
    with atomic_path(path) as partial:
        fig.savefig(partial, format="png", dpi=110, bbox_inches="tight")  # long labels kept whole
    plt.close(fig)


def run_sweep(config: SweepConfig, address: str | None = None) -> dict[str, Any]:
    """Run (or resume) the sweep; write its outputs in ``output_dir``; return the summary.

    ``address``: a Ray cluster's (``HOST:PORT``, ``auto``); ``None`` starts Ray on this machine
    with ``workers`` CPUs.

    Raises:
        ConfigError: before anything runs, for anything :func:`check_sweep` refuses or a bad address.
    """
    import ray
    from rich.progress import Progress

    from train.cluster import check_address

    check_sweep(config)
    if address is not None:
        check_address(address)
    sweep_dir = Path(config.output_dir).resolve()
    sweep_dir.mkdir(parents=True, exist_ok=True)
    if address is None:
        ray.init(address="local", num_cpus=config.workers, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        with Progress(disable=not config.progress_bar) as progress:
            def stage(name: str, trials: list[Trial]) -> list[TrialRecord]:
                task = progress.add_task(f"{name} trials", total=len(trials))
                return run_stage(config, trials, sweep_dir, name, lambda _: progress.advance(task))

            tuning = stage("tuning", tuning_trials(config))
            winner, _ = winner_of(config, tuning)
            held_out = stage("held_out", held_out_trials(config, winner))
    finally:
        ray.shutdown()
    summary = summarise(config, winner, tuning, held_out)
    write_json_atomic(sweep_dir / RECORDS, [record.model_dump() for record in (*tuning, *held_out)], indent=1)
    write_json_atomic(sweep_dir / SUMMARY, summary, indent=1)
    plot(config, tuning, sweep_dir / FIGURE)
    write_text_atomic(sweep_dir / BEST, best_config(config, winner))
    return summary


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as lines for the terminal."""
    def shown_point(point: dict[str, Any]) -> str:
        return ", ".join(f"{k}={v}" for k, v in point.items()) or "(base settings)"

    lines = ["tuning (mean final exploitability over the tuning seeds):"]
    best = min(entry["mean"] for entry in summary["tuning_means"])
    for entry in summary["tuning_means"]:
        mark = "  <- winner" if math.isclose(entry["mean"], best) and entry["point"] == summary["winner"]["point"] else ""
        lines.append(f"  {shown_point(entry['point'])}: {entry['mean']:.4f}{mark}")
    for key in ("winner", "reference"):
        part = summary[key]
        low, high = part["interval_95"]
        lines.append(f"{key} ({shown_point(part['point'])}) on held-out seeds {part['seeds']}: "
                     f"{part['mean']:.4f} [{low:.4f}, {high:.4f}]")
    return lines
