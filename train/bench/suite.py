"""Running a benchmark suite: its cells, each one's record, resumption, Ray, the summary.

``output_dir`` is a run folder of ``draw-train``'s kind (:class:`train.run_dir.RunDir`, pipeline
``bench``): its marker and ``config.json``, then

- ``cells/KEY.json``: one record per finished cell (``KEY`` = ``ALGORITHM-GAME-sSEED``), written
  atomically when the cell is done; a rerun skips the cells that have one;
- ``policies/KEY.npz`` + ``.json``: each cell's final policy, which its record's ``final.spec`` plays;
- ``panel-GAME.json``: the reference panel's own league on a full game (its fixed ratings);
- ``work/KEY/N/``: attempt ``N`` of a cell (the algorithm's own run files, the curve's policies);
  a cell cut short starts again in a new attempt folder, nothing removed;
- ``summary.md``, ``summary.json`` and ``report/``: the aggregate (:mod:`train.bench.report`).

Algorithms, seeds, workers and the progress bar may change between reruns (a larger grid reuses
the done cells); the budgets, curve points, panel and settings may not: a done cell whose record
differs from them is refused in one line naming both. A record that cannot be read (cut short,
edited, out of bounds) costs only its cell: the cell is named as not run, the others go on.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from draw_env.io.files import write_json_atomic
from train.bench.config import BenchConfig, read_settings
from train.bench.protocol import GAMES, BenchGame, Cell, Policy, algorithm
from train.bench.records import FORMAT, VERSION, check_cell, git_commit, read_record, versions, write_record
from train.bench.report import Reference
from train.config import ConfigError
from train.run_dir import RunFile, check_run_data, read_run_file
from train.runs import open_run_dir


def cells_of(config: BenchConfig) -> list[Cell]:
    """Every cell of the grid, in order: algorithm, game, seed.

    Raises:
        ConfigError: an algorithm's settings file is missing or malformed.
    """
    return [
        Cell(name, GAMES[game], seed, config.budget(name, game), read_settings(config, name, game),
             config.curve_points, config.obs_type)
        for name, games in config.algorithms.items()
        for game in games
        for seed in config.seeds
    ]


def record_path(run: Path, cell: Cell) -> Path:
    return run / "cells" / f"{cell.key}.json"


# ---------------------------------------------------------------------------- measuring


class Measurer:
    """Measures policies of one benchmark folder: exploitability on exact games, the panel on
    full ones (their ratings: ``panels``, game name to ``spec -> (mu, sigma)``)."""

    def __init__(self, config: BenchConfig, panels: Mapping[str, Mapping[str, tuple[float, float]]]) -> None:
        self.config = config
        self.panels = panels

    def measure(self, policy: Policy | None, spec: str | None, game: BenchGame, save: Callable[[], str]) -> tuple[float, float, dict[str, Any]]:
        """``(value, score, measure)``: exploitability (score = -value) of ``policy`` (or of the
        agent ``spec``), or the panel score (score = value) of the spec ``save()`` writes."""
        if game.exact:
            from agents.base import obs_type_of
            from arena.exploitability import agent_probabilities
            from arena.specs import build_agent, parse_agent_spec
            from train.bench.metrics import exact_measure

            if spec is not None:
                name, kwargs = parse_agent_spec(spec)
                agent = build_agent(name, kwargs)
                measure = exact_measure(_Probabilities(agent_probabilities(agent), obs_type_of(agent)), game)
            else:
                assert policy is not None
                measure = exact_measure(policy, game)
            return measure["exploitability"], -measure["exploitability"], measure
        from train.bench.metrics import panel_measure

        panel = self.config.panel
        measure = panel_measure(spec or save(), game, self.panels[game.name], panel.matches, panel.seed,
                                self.config.workers)
        return measure["score"], measure["score"], measure


class _Probabilities:
    """A probability function as a :class:`Policy` (measured only, never saved)."""

    def __init__(self, function: Callable[[Any, Any], Any], obs_type: str) -> None:
        self.action_probabilities_batch = function
        self.obs_type = obs_type

    def save(self, path_stem: Path, game: BenchGame) -> str:  # pragma: no cover - never called
        raise NotImplementedError


def new_attempt(run: Path, cell: Cell) -> Path:
    """``work/KEY/N`` for the next unused ``N``: a cell cut short is started again beside it."""
    folder = run / "work" / cell.key
    used = [int(entry.name) for entry in folder.iterdir() if entry.name.isdigit()] if folder.is_dir() else []
    attempt = folder / str(max(used, default=0) + 1)
    attempt.mkdir(parents=True)
    return attempt


def run_cell(cell: Cell, run: Path, config: BenchConfig, panels: Mapping[str, Any], command: str) -> dict[str, Any]:
    """Train ``cell`` in a new attempt folder of ``run``, measure its curve and its saved final
    policy; return its record (written by the caller)."""
    measurer = Measurer(config, panels)
    attempt = new_attempt(run, cell)
    curve: list[dict[str, Any]] = []
    measuring = [0.0]
    last: list[Policy] = []  # the policy of the last curve point
    wall = time.perf_counter()

    def checkpoint(env_steps: int, cpu_seconds: float, policy: Policy) -> None:
        started = time.process_time()
        index = len(curve)

        def save() -> str:
            return policy.save(attempt / "curve" / f"point_{index}", cell.game)

        _, score, measure = measurer.measure(policy, None, cell.game, save)
        curve.append({"env_steps": int(env_steps), "cpu_seconds": round(float(cpu_seconds), 6), "score": score,
                      "measure": measure})
        last[:] = [policy]
        measuring[0] += time.process_time() - started

    final_policy = algorithm(cell.algorithm)(cell, attempt, checkpoint)
    if not curve:
        raise ValueError(f"algorithm {cell.algorithm!r} returned without a curve point")
    wall_seconds = time.perf_counter() - wall
    spec = final_policy.save(run / "policies" / cell.key, cell.game)
    if not cell.game.exact and last == [final_policy]:
        # The last curve point played the same weights from its own file, with the same seeded
        # deals: the panel's figures of the saved file are those (measured once, not twice).
        value = score = curve[-1]["score"]
        measure = curve[-1]["measure"]
    else:
        started = time.process_time()
        value, score, measure = measurer.measure(None, spec, cell.game, lambda: spec)
        measuring[0] += time.process_time() - started
    exploiter = None
    if not cell.game.exact and config.exploiter.cpu_minutes is not None:
        from train.bench.metrics import exploiter_measure

        started = time.process_time()
        exploiter = exploiter_measure(spec, cell.game, cell.seed, attempt / "exploit", config.exploiter)
        measuring[0] += time.process_time() - started
    from train.bench.algorithms import STEP_UNITS

    return {
        "format": FORMAT, "version": VERSION, "algorithm": cell.algorithm, "settings": dict(cell.settings),
        "game": cell.game.to_dict(), "seed": cell.seed, "budget": cell.budget.to_dict(),
        "curve_points": cell.curve_points, "obs_type": cell.obs_type, "step_unit": STEP_UNITS.get(cell.algorithm, "the algorithm's own count"),
        "used": {"env_steps": curve[-1]["env_steps"], "cpu_seconds": curve[-1]["cpu_seconds"],
                 "wall_seconds": round(wall_seconds, 3), "measure_cpu_seconds": round(measuring[0], 3)},
        "versions": getattr(final_policy, "trained_versions", None) or versions(cell.algorithm),
        "commit": git_commit(), "curve": curve,
        "final": {"spec": spec, "metric": "exploitability" if cell.game.exact else "panel_score", "value": value,
                  "score": score, "measure": measure, "exploiter": exploiter},
        "command": command,
    }


# ---------------------------------------------------------------------------- the suite


class PanelFile(RunFile):
    specs: list[str]
    matches: int
    seed: int
    ratings: dict[str, tuple[float, float]]


def panels_of(config: BenchConfig, run: Path) -> dict[str, dict[str, tuple[float, float]]]:
    """The panel's ratings on each full game of the grid: ``panel-GAME.json``, played and written
    the first time."""
    from train.bench.metrics import panel_ratings

    panel, found = config.panel, {}
    for game in config.games():
        if game.exact:
            continue
        path = run / f"panel-{game.name}.json"
        if path.exists():
            saved: PanelFile = read_run_file(path, PanelFile)
            if (saved.specs, saved.matches, saved.seed) != (panel.specs, panel.league_matches, panel.seed):
                raise ConfigError(f"{path}: made for another panel than the config's")
            found[game.name] = dict(saved.ratings)
            continue
        ratings = panel_ratings(panel.specs, game, panel.league_matches, panel.seed, config.workers)
        write_json_atomic(path, {"specs": panel.specs, "matches": panel.league_matches, "seed": panel.seed,
                                 "ratings": {spec: list(value) for spec, value in ratings.items()}}, indent=1)
        found[game.name] = ratings
    return found


def references_of(config: BenchConfig, run: Path, panels: Mapping[str, Any]) -> None:
    """The uniform random policy's raw value on each game of the grid (``reference-GAME.json``,
    measured the first time): the normalisation's zero (:mod:`train.bench.report`)."""
    measurer = Measurer(config, panels)
    for game in config.games():
        path = run / f"reference-{game.name}.json"
        if path.exists():
            continue
        value, _, measure = measurer.measure(None, "random", game, lambda: "random")
        reference = {"game": game.name, "random": value, "measure": measure}
        check_run_data(reference, Reference, str(path))  # what the report reads back, bounded alike
        write_json_atomic(path, reference, indent=1)


def _remote_cell(cell: Cell, run: str, config: BenchConfig, panels: Mapping[str, Any], command: str) -> dict[str, Any]:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return run_cell(cell, Path(run), config, panels, command)


def done_cells(run: Path, cells: list[Cell]) -> tuple[set[str], dict[str, str]]:
    """The keys of the ``cells`` that have a record in ``run``, and those whose record cannot be
    read, each with why (:func:`~train.bench.records.read_record`'s line).

    Raises:
        ConfigError: a record made with other settings than its cell's (the suite's config changed).
    """
    done: set[str] = set()
    unreadable: dict[str, str] = {}
    for cell in cells:
        path = record_path(run, cell)
        if not path.exists():
            continue
        try:
            record = read_record(path)
        except ConfigError as error:
            unreadable[cell.key] = str(error)
            continue
        check_cell(record, cell, path)
        done.add(cell.key)
    return done, unreadable


def run_suite(
    config: BenchConfig,
    address: str | None = None,
    command: str = "",
    plots: bool = True,
    reps: int | None = None,
    *,
    overwrite: bool = False,
    overwrite_option: str | None = None,
) -> dict[str, Any]:
    """Run every cell of ``config`` without a record yet (as Ray tasks on the cluster at
    ``address``, else one after the other here), then aggregate them all.

    Args:
        overwrite: start the folder over (``draw-train --overwrite``); ``overwrite_option``: the
            command's option that does, for messages (``draw-bench`` has none).

    Returns:
        :func:`train.bench.report.report`'s summary, with ``failed`` (the cells that failed, each
        with its error) and ``unreadable`` (the cells not run because their record cannot be read,
        each with why).

    Raises:
        ConfigError: the folder holds another run or a suite of other settings, or another
            process works in it; a settings file is missing; a done cell's record is made with
            other settings; no Ray head answers at ``address``.
    """
    from tqdm.auto import tqdm

    from train.bench.report import report

    if address is not None:
        from train.cluster import check_address

        check_address(address)
    run_dir = open_run_dir(config, "bench", overwrite=overwrite, overwrite_option=overwrite_option)
    cells = cells_of(config)
    run = run_dir.path
    done, unreadable = done_cells(run, cells) if run_dir.resuming else (set(), {})
    run_dir.start()
    for folder in ("cells", "policies"):
        (run / folder).mkdir(exist_ok=True)
    todo = [cell for cell in cells if cell.key not in done and cell.key not in unreadable]
    panels = panels_of(config, run) if todo else {}
    if todo:
        references_of(config, run, panels)
    command = command or f"draw-bench --config {config.output_dir}/config.json"
    failed: dict[str, str] = {}
    with tqdm(total=len(cells), initial=len(done), unit="cell", desc="draw-bench", disable=not config.progress_bar,
              dynamic_ncols=True) as bar:
        def finished(cell: Cell, record: dict[str, Any]) -> None:
            try:
                write_record(record_path(run, cell), record)
            except ConfigError as error:  # figures its reader would refuse: the cell failed
                failure(cell, error)
                return
            bar.set_postfix_str(f"{cell.key}: score {record['final']['score']:.4g}")
            bar.update(1)

        def failure(cell: Cell, error: BaseException) -> None:
            # One cell's failure costs that cell only: the grid goes on, the cell is named at the end.
            failed[cell.key] = f"{type(error).__name__}: {error}".splitlines()[0]
            bar.write(f"draw-bench: cell {cell.key} failed ({failed[cell.key]}); the others go on")

        if address is None:
            for cell in todo:
                try:
                    record = run_cell(cell, run, config, panels, command)
                except Exception as error:  # noqa: BLE001 - reported with the cell, the grid goes on
                    failure(cell, error)
                else:
                    finished(cell, record)
        elif todo:
            import ray

            ray.init(address=address, include_dashboard=False, log_to_driver=False)
            try:
                remote = ray.remote(num_cpus=1)(_remote_cell)
                pending = {remote.remote(cell, str(run.resolve()), config, panels, command): cell for cell in todo}
                while pending:
                    ready, _ = ray.wait(list(pending), num_returns=1)
                    for reference in ready:
                        cell = pending.pop(reference)
                        try:
                            record = ray.get(reference)
                        except Exception as error:  # noqa: BLE001 - a task's error, reported with its cell
                            failure(cell, getattr(error, "cause", None) or error)
                        else:
                            finished(cell, record)
            finally:
                ray.shutdown()
    from train.bench.report import REPS

    left_out = failed.keys() | unreadable.keys()
    summary = report(run, [record_path(run, cell) for cell in cells if cell.key not in left_out], plots=plots,
                     reps=reps or REPS)
    summary["failed"] = failed
    summary["unreadable"] = unreadable
    return summary


def bench_main(config: BenchConfig, args: Any) -> int:
    """``draw-train`` (and ``draw-bench``) for a config with ``pipeline: bench``.

    ``draw-train``'s ``--overwrite`` starts the folder over; ``draw-bench`` has no such option.
    """
    overwrite = getattr(args, "overwrite", None)
    summary = run_suite(config, getattr(args, "address", None), getattr(args, "command", ""),
                        overwrite=bool(overwrite), overwrite_option=None if overwrite is None else "--overwrite")
    print(summary["table"])
    print(f"Summary: {summary['markdown']}")
    for key, why in summary["failed"].items():
        print(f"draw-bench: cell {key} failed: {why}; rerun the same command to retry it", file=sys.stderr)
    for key, why in summary["unreadable"].items():
        print(f"draw-bench: cell {key} was not run: its record is unreadable ({why}); move the record away "
              "to run the cell again", file=sys.stderr)
    return 1 if summary["failed"] or summary["unreadable"] else 0
