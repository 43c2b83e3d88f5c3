"""Aggregating a benchmark's cells with rliable: IQM and mean with stratified bootstrap intervals
over seeds, performance profiles, probability of improvement; a table (Markdown and JSON) and PNGs.

**Normalisation.** Scores of different games are put on one scale before they are aggregated:

- exact games: ``1 - exploitability / exploitability(random)``: 1 is a Nash equilibrium, 0 is
  as exploitable as the uniform random policy (below 0: more);
- full games: ``(s - s_random) / (0 - s_random)`` where ``s`` is the mean zero-sum points per
  hand against the panel: 1 is parity with the panel (0 points per hand), 0 is the uniform
  random policy's score against the same panel.

The references (``reference-GAME.json``) are measured once per benchmark folder, with the
panel's deals and matches. Raw values (exploitability, points per hand) are reported beside.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field, field_validator

from draw_env.io.files import write_text_atomic
from train.bench.records import MAX_VALUE
from train.run_dir import RunFile, read_run_file

#: Bootstrap resamples of the intervals (rliable's default is 50,000; 2,000 keep a report fast).
REPS = 2000
#: The bootstrap's seed: a report of the same cells gives the same intervals.
BOOTSTRAP_SEED = 0
#: Confidence of every interval.
CONFIDENCE = 0.95
#: The smallest magnitude of a reference the normalisation divides by: the uniform random
#: policy's exploitability or panel score is a sizeable fraction of a point per hand on every game.
MIN_REFERENCE = 1e-6


class Reference(RunFile):
    """``reference-GAME.json``: the uniform random policy's raw value on the game (the
    normalisation's divisor: its magnitude in [:data:`MIN_REFERENCE`, ``MAX_VALUE``])."""

    game: str
    random: float = Field(ge=-MAX_VALUE, le=MAX_VALUE)
    measure: dict[str, Any]

    @field_validator("random")
    @classmethod
    def _divisor(cls, value: float) -> float:
        if abs(value) < MIN_REFERENCE:
            raise ValueError(f"must be at least {MIN_REFERENCE:g} in magnitude (the normalisation divides by it)")
        return value


def normalise(value: float, random_value: float, exact: bool) -> float:
    """The normalised score of a raw ``value`` (module docstring); ``random_value`` must not be 0."""
    if exact:
        return 1.0 - value / random_value
    return (value - random_value) / (0.0 - random_value)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """rliable passes its seeded RandomState to ``arch``, which warns that it will want a Generator."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        yield


def interval_estimates(scores: Mapping[str, np.ndarray], reps: int = REPS) -> dict[str, dict[str, list[float]]]:
    """IQM and mean of each algorithm's ``(runs, tasks)`` scores, with their stratified bootstrap
    intervals (rliable): ``{algorithm: {"iqm": [low, point, high], "mean": [...]}}``."""
    from rliable import library, metrics

    def both(array: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_iqm(array), metrics.aggregate_mean(array)])

    with _quiet():
        points, intervals = library.get_interval_estimates(
            dict(scores), both, reps=reps, confidence_interval_size=CONFIDENCE,
            random_state=np.random.RandomState(BOOTSTRAP_SEED),
        )
    return {
        name: {metric: [float(intervals[name][0, i]), float(points[name][i]), float(intervals[name][1, i])]
               for i, metric in enumerate(("iqm", "mean"))}
        for name in scores
    }


def probability_of_improvement(x: np.ndarray, y: np.ndarray) -> float:
    """P(X > Y) of ``(runs, tasks)`` scores as rliable's ``metrics.probability_of_improvement``
    defines it (per task the Mann-Whitney U of ``x`` over ``y`` divided by the number of pairs,
    ties counting one half; then the mean over tasks), counted on NumPy arrays: rliable's calls
    SciPy once per task and bootstrap sample, which made a report of the full table take minutes."""
    pairs = x[:, None, :] - y[None, :, :]  # (runs of x, runs of y, tasks)
    return float(np.mean(np.mean((pairs > 0) + 0.5 * (pairs == 0), axis=(0, 1))))


def improvement(scores: Mapping[str, np.ndarray], reps: int = REPS) -> dict[str, list[float]]:
    """P(X > Y) for each ordered pair of algorithms, with its interval: ``{"X > Y": [low, point, high]}``.

    Each unordered pair is bootstrapped once (rliable's stratified bootstrap): in every resample
    P(Y > X) = 1 - P(X > Y), so the reversed pair's interval is the mirror of the first's.
    """
    from rliable import library

    pairs = {f"{x} > {y}": (scores[x], scores[y]) for x, y in itertools.combinations(scores, 2)}
    if not pairs:
        return {}
    with _quiet():
        points, intervals = library.get_interval_estimates(
            pairs, probability_of_improvement, reps=reps, confidence_interval_size=CONFIDENCE,
            random_state=np.random.RandomState(BOOTSTRAP_SEED),
        )
    result = {}
    for x, y in itertools.combinations(scores, 2):
        name = f"{x} > {y}"
        low, high = (float(value) for value in np.ravel(intervals[name])[:2])
        point = float(np.ravel(points[name])[0])
        result[name] = [low, point, high]
        result[f"{y} > {x}"] = [1.0 - high, 1.0 - point, 1.0 - low]
    return result


def _score_matrix(rows: Sequence[Mapping[str, Any]], algorithm: str, games: Sequence[str]) -> np.ndarray:
    """``(seeds, games)`` normalised scores of ``algorithm``: the seeds it has on every game."""
    by = {(row["game"], row["seed"]): row["normalised"] for row in rows if row["algorithm"] == algorithm}
    seeds = sorted({seed for _, seed in by})
    seeds = [seed for seed in seeds if all((game, seed) in by for game in games)]
    return np.array([[by[(game, seed)] for game in games] for seed in seeds], np.float64).reshape(len(seeds), len(games))


def aggregate(rows: Sequence[Mapping[str, Any]], reps: int = REPS) -> dict[str, Any]:
    """The aggregate of normalised cell rows (``algorithm``, ``game``, ``seed``, ``normalised``, ``value``).

    Per game: each algorithm's IQM and mean with intervals over its seeds, and the probability of
    improvement of each pair; overall: the same over the games every algorithm of the report ran;
    ``overall_complete`` (where that is not every game): the algorithms that ran every game, over all.
    """
    algorithms = list(dict.fromkeys(row["algorithm"] for row in rows))
    games = list(dict.fromkeys(row["game"] for row in rows))
    per_game: dict[str, Any] = {}
    for game in games:
        scores = {name: _score_matrix(rows, name, [game]) for name in algorithms}
        scores = {name: array for name, array in scores.items() if len(array)}
        raw = {name: [row["value"] for row in rows if row["algorithm"] == name and row["game"] == game] for name in scores}
        per_game[game] = {
            "seeds": {name: len(array) for name, array in scores.items()},
            "raw_mean": {name: float(np.mean(values)) for name, values in raw.items()},
            "estimates": interval_estimates(scores, reps),
            "improvement": improvement(scores, reps),
        }
    shared = [game for game in games if all(game in _games_of(rows, name) for name in algorithms)]
    result = {"algorithms": algorithms, "games": games, "per_game": per_game,
              "overall": _overall(rows, algorithms, shared, reps)}
    # Where some algorithm plays only part of the games (CFR+: the exact ones), the algorithms that
    # play them all are also aggregated over all of them.
    complete = [name for name in algorithms if set(games) <= _games_of(rows, name)]
    if shared != games and complete:
        result["overall_complete"] = _overall(rows, complete, games, reps)
    return result


def _overall(rows: Sequence[Mapping[str, Any]], algorithms: Sequence[str], games: Sequence[str], reps: int) -> dict[str, Any]:
    """IQM, mean and probability of improvement of ``algorithms`` over ``games`` (their seeds that
    ran every one of those games)."""
    overall: dict[str, Any] = {"games": list(games)}
    if games:
        scores = {name: _score_matrix(rows, name, games) for name in algorithms}
        scores = {name: array for name, array in scores.items() if len(array)}
        overall |= {"estimates": interval_estimates(scores, reps), "improvement": improvement(scores, reps)}
    return overall


def _games_of(rows: Sequence[Mapping[str, Any]], algorithm: str) -> set[str]:
    return {row["game"] for row in rows if row["algorithm"] == algorithm}


def markdown(result: Mapping[str, Any]) -> str:
    """The aggregate as a Markdown table: per game and overall, IQM and mean with 95% intervals."""
    lines = ["| game | algorithm | seeds | raw mean | IQM [95% CI] | mean [95% CI] |", "|---|---|--:|--:|--:|--:|"]

    def shown(estimate: Sequence[float]) -> str:
        low, point, high = estimate
        return f"{point:.3f} [{low:.3f}, {high:.3f}]"

    for game, part in result["per_game"].items():
        for name, estimate in part["estimates"].items():
            lines.append(f"| {game} | {name} | {part['seeds'][name]} | {part['raw_mean'][name]:.4g} | "
                         f"{shown(estimate['iqm'])} | {shown(estimate['mean'])} |")
    for overall in (result["overall"], result.get("overall_complete", {})):
        for name, estimate in overall.get("estimates", {}).items():
            lines.append(f"| all ({', '.join(overall['games'])}) | {name} | | | {shown(estimate['iqm'])} | "
                         f"{shown(estimate['mean'])} |")
    return "\n".join(lines)


def _plots(result: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], folder: Path) -> list[str]:
    """Interval estimates per game, performance profiles over the shared games, learning curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rliable import library

    from arena.charts import save_figure

    written = []
    games = result["per_game"]
    figure, axes = plt.subplots(1, len(games), figsize=(4.2 * len(games), 0.6 + 0.5 * len(result["algorithms"])),
                                squeeze=False)
    for axis, (game, part) in zip(axes[0], games.items()):
        names = list(part["estimates"])
        for y, name in enumerate(names):
            low, point, high = part["estimates"][name]["iqm"]
            axis.plot([low, high], [y, y], linewidth=6, alpha=0.5)
            axis.plot([point], [y], "k|", markersize=14)
        axis.set_yticks(range(len(names)), names)
        axis.set_title(f"{game}: IQM (95% CI)")
        axis.set_xlabel("normalised score")
        axis.grid(alpha=0.3)
    figure.tight_layout()
    save_figure(figure, folder / "iqm.png")
    written.append(str(folder / "iqm.png"))
    plt.close(figure)

    shared = result["overall"]["games"]
    if shared:
        scores = {name: _score_matrix(rows, name, shared) for name in result["algorithms"]}
        scores = {name: array for name, array in scores.items() if len(array)}
        taus = np.linspace(min(0.0, *(float(a.min()) for a in scores.values())), 1.0, 41)
        np.random.seed(BOOTSTRAP_SEED)  # the profile's bootstrap draws from NumPy's global generator
        profiles, cis = library.create_performance_profile(scores, taus, reps=REPS)
        figure, axis = plt.subplots(figsize=(6, 3.8))
        for name in scores:
            axis.plot(taus, profiles[name], label=name)
            axis.fill_between(taus, cis[name][0], cis[name][1], alpha=0.15)
        axis.set_xlabel(r"normalised score $\tau$")
        axis.set_ylabel(r"fraction of runs with score $> \tau$")
        axis.set_title(f"Performance profiles ({', '.join(shared)})")
        axis.legend()
        axis.grid(alpha=0.3)
        figure.tight_layout()
        save_figure(figure, folder / "profiles.png")
        written.append(str(folder / "profiles.png"))
        plt.close(figure)
    return written


def _curves(records: Sequence[Any], folder: Path) -> str | None:
    """Each game's learning curves: the score against CPU seconds, one line per cell."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from arena.charts import save_figure

    games = list(dict.fromkeys(record.game["name"] for record in records))
    if not games:
        return None
    figure, axes = plt.subplots(1, len(games), figsize=(4.6 * len(games), 3.6), squeeze=False)
    colours: dict[str, Any] = {}
    for axis, game in zip(axes[0], games):
        for record in records:
            if record.game["name"] != game:
                continue
            colour = colours.setdefault(record.algorithm, f"C{len(colours)}")
            axis.plot([p.cpu_seconds for p in record.curve], [p.score for p in record.curve], color=colour,
                      marker="o", markersize=3, alpha=0.7,
                      label=record.algorithm if record.seed == min(r.seed for r in records if r.algorithm == record.algorithm) else None)
        axis.set_title(game)
        axis.set_xlabel("training CPU seconds")
        # The records say how the game was measured (the suite's BenchGame.exact), not its name.
        exact = any(r.final.metric == "exploitability" for r in records if r.game["name"] == game)
        axis.set_ylabel("-exploitability" if exact else "zero-sum points/hand vs panel")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    save_figure(figure, folder / "curves.png")
    plt.close(figure)
    return str(folder / "curves.png")


def report(run: Path, paths: Sequence[Path] | None = None, plots: bool = True, reps: int = REPS) -> dict[str, Any]:
    """Aggregate the cell records ``paths`` (default: every ``cells/*.json`` of ``run``) into
    ``summary.json``, ``summary.md`` and ``report/*.png``; return the summary with its ``table``.

    Raises:
        ConfigError: a record or reference file that is malformed (naming it and the field), or
            a game without its reference.
    """
    from train.bench.records import read_record
    from train.config import ConfigError

    paths = sorted((run / "cells").glob("*.json")) if paths is None else [path for path in paths if path.exists()]
    records = [read_record(path) for path in paths]
    rows = []
    for path, record in zip(paths, records):
        game = record.game["name"]
        reference_path = run / f"reference-{game}.json"
        if not reference_path.exists():
            raise ConfigError(f"{reference_path} is missing: the normalisation of game {game!r} needs it")
        reference: Reference = read_run_file(reference_path, Reference)
        exact = record.final.metric == "exploitability"
        rows.append({"algorithm": record.algorithm, "game": game, "seed": record.seed, "value": record.final.value,
                     "normalised": normalise(record.final.value, reference.random, exact), "cell": path.name,
                     "spec": record.final.spec, "cpu_seconds": record.used.cpu_seconds,
                     "env_steps": record.used.env_steps})
    result: dict[str, Any] = {"cells": rows}
    if rows:
        result |= aggregate(rows, reps)
    table = markdown(result) if rows else "(no cells yet)"
    folder = run / "report"
    if rows and plots:
        folder.mkdir(exist_ok=True)
        result["plots"] = _plots(result, rows, folder)
        curves = _curves(records, folder)
        if curves is not None:
            result["plots"].append(curves)
    try:
        # Bounded records give finite figures; a summary never holds a NaN its own readers refuse.
        summary_json = json.dumps(result, indent=1, allow_nan=False)
    except ValueError as error:
        raise ConfigError(f"{run / 'summary.json'}: the aggregate is not finite ({error}); nothing written") from None
    write_text_atomic(run / "summary.json", summary_json)
    cpu = sum(row["cpu_seconds"] for row in rows)
    text = (f"# Benchmark summary: {run}\n\n{len(rows)} cells, {cpu:,.0f} training CPU seconds in all.\n\n"
            f"Normalised scores (1: Nash equilibrium or parity with the panel; 0: the uniform random policy).\n\n"
            f"{table}\n")
    write_text_atomic(run / "summary.md", text)
    return {**result, "table": table, "markdown": str(run / "summary.md")}

