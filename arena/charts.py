"""PNG charts of the evaluation's results (matplotlib, drawn off-screen)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from arena.results import GAME_NOUNS, EvaluationResult, LeagueResult, SweepResult
from draw_env.io.files import atomic_path


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure: Any, path: str | os.PathLike[str]) -> None:
    """Write ``figure`` as a PNG to ``path`` atomically (a temporary file, then a rename)."""
    try:
        with atomic_path(path) as temporary:
            figure.savefig(temporary, format="png", dpi=120)
    finally:
        _pyplot().close(figure)


def plot_evaluation(result: EvaluationResult, path: str | os.PathLike[str]) -> None:
    """A PNG: each participant's win rate with its Wilson 95% interval, and the fair share."""
    plt = _pyplot()
    labels = [p.label for p in result.participants]
    rates = np.array([p.win_rate for p in result.participants])
    errors = np.array(
        [
            [p.win_rate - p.win_low for p in result.participants],
            [p.win_high - p.win_rate for p in result.participants],
        ]
    )
    figure, axis = plt.subplots(figsize=(1.8 + 1.6 * len(labels), 4))
    axis.bar(range(len(labels)), rates, yerr=errors, capsize=6, color="tab:blue", alpha=0.8)
    axis.axhline(1 / result.num_players, color="grey", linestyle="--", label="fair share")
    axis.set_xticks(range(len(labels)), labels, rotation=15, ha="right")
    axis.set_ylabel("win rate (Wilson 95% interval)")
    axis.set_ylim(0, 1)
    axis.set_title(f"{result.num_games} {GAME_NOUNS[result.episode]}, {result.num_players} players")
    axis.legend()
    figure.tight_layout()
    save_figure(figure, path)


def plot_league(result: LeagueResult, path: str | os.PathLike[str]) -> None:
    """A PNG: ratings (mu with a ±2 sigma bar), and the 2-player win-rate matrix or, with 3-4
    players, each agent's pooled win rate with its Wilson 95% interval."""
    plt = _pyplot()
    figure, (ratings_axis, axis) = plt.subplots(1, 2, figsize=(13, 0.5 * len(result.labels) + 2.5))
    ordered = result.ratings[::-1]  # best at the top
    ratings_axis.errorbar(
        [r.mu for r in ordered], range(len(ordered)), xerr=[2 * r.sigma for r in ordered], fmt="o", capsize=5
    )
    ratings_axis.set_yticks(range(len(ordered)), [r.label for r in ordered])
    ratings_axis.set_xlabel("openskill Plackett-Luce mu (bar: ±2 sigma)")
    ratings_axis.set_title(
        f"{result.num_players}-player league, {result.games_per_table} {GAME_NOUNS[result.episode]} per table"
    )
    ratings_axis.grid(axis="x", alpha=0.3)
    if result.num_players == 2:
        matrix = result.win_matrix()
        image = axis.imshow(matrix, cmap="RdBu", vmin=0, vmax=1)
        axis.set_xticks(range(len(result.labels)), result.labels, rotation=30, ha="right")
        axis.set_yticks(range(len(result.labels)), result.labels)
        for (row, column), value in np.ndenumerate(matrix):
            if not np.isnan(value):
                axis.text(column, row, f"{value:.2f}", ha="center", va="center", fontsize=9)
        axis.set_title("win rate of row against column")
        figure.colorbar(image, ax=axis, fraction=0.046)
    else:
        rates = np.array([r.win_rate for r in ordered])
        errors = np.array([rates - [r.win_low for r in ordered], [r.win_high for r in ordered] - rates])
        axis.barh(range(len(ordered)), rates, xerr=errors, capsize=5, color="tab:blue", alpha=0.8)
        axis.axvline(1 / result.num_players, color="grey", linestyle="--", label="fair share")
        axis.set_yticks(range(len(ordered)), [r.label for r in ordered])
        axis.set_xlim(0, 1)
        axis.set_xlabel("win rate over all its tables (Wilson 95% interval)")
        axis.set_title("first places")
        axis.legend(loc="lower right")
    figure.tight_layout()
    save_figure(figure, path)


def plot_sweep(result: SweepResult, path: str | os.PathLike[str]) -> None:
    """A PNG: win rate (Wilson 95% bars) and decisions per second against the swept value."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 4.6))
    x = np.arange(len(result.values))
    rates = np.array([p.win_rate for p in result.points])
    errors = np.array(
        [rates - [p.win_low for p in result.points], [p.win_high for p in result.points] - rates]
    )
    axis.errorbar(x, rates, yerr=errors, fmt="o-", capsize=5, color="tab:blue", label="win rate")
    axis.axhline(1 / result.num_players, color="grey", linestyle="--", label="fair share")
    axis.set_xticks(x, [str(v) for v in result.values])
    axis.set_xlabel(result.key)
    axis.set_ylabel("win rate (Wilson 95% interval)", color="tab:blue")
    axis.set_ylim(0, 1)
    speed = axis.twinx()
    speed.plot(
        x, [p.decisions_per_second for p in result.points], "s--", color="tab:red", label="decisions/s"
    )
    speed.set_yscale("log")
    speed.set_ylabel("decisions per CPU second", color="tab:red")
    axis.set_title(
        f"{result.agent} against {', '.join(result.opponents)}: "
        f"{result.points[0].games} {GAME_NOUNS[result.episode]} per value"
    )
    lines = axis.get_legend_handles_labels()
    more = speed.get_legend_handles_labels()
    axis.legend(
        lines[0] + more[0], lines[1] + more[1], loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3
    )
    figure.tight_layout()
    save_figure(figure, path)
