"""The figures of training: win rate against each baseline, and exact exploitability, over training."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from arena.charts import save_figure


class ExploitabilityPoint(Protocol):
    steps: int
    cpu_seconds: float
    exploitability: float


class CurvePoint(Protocol):
    timesteps: int
    train_seconds: float
    opponent: str
    win_rate: float
    win_low: float
    win_high: float


#: The default panels: against environment steps, and against training minutes.
TRAINING_AXES = (
    ("timesteps", "environment steps (learner decisions)"),
    ("train_seconds", "training minutes (evaluation excluded)"),
)


def plot_learning_curve(
    rows: Sequence[CurvePoint],
    path: str | Path,
    title: str,
    num_players: int,
    x_axes: Sequence[tuple[str, str]] = TRAINING_AXES,
) -> None:
    """Write a PNG with the match win rate (and its Wilson 95% band) per baseline.

    One panel per ``(attribute, label)`` of ``x_axes``: by default against environment steps,
    and against training minutes on the clock (``train_seconds``, shown in minutes; evaluation
    time excluded). A dotted line marks the fair share, 1 / num_players. A panel whose points all
    lie at one x (a run of one iteration) draws each baseline as a marker with its interval as an
    error bar, side by side, on an axis from 0 to twice that x: a band of one point is invisible,
    and matplotlib would centre a lone point on an axis a few hundredths wide.
    """
    opponents = list(dict.fromkeys(row.opponent for row in rows))
    figure, axes = plt.subplots(1, len(x_axes), figsize=(5.5 * len(x_axes), 4.2), sharey=True, squeeze=False)
    axes = axes[0]
    for axis, (x_name, label) in zip(axes, x_axes):
        scale = 60.0 if x_name == "train_seconds" else 1.0
        at = {getattr(row, x_name) / scale for row in rows}
        single = len(at) == 1
        for index, opponent in enumerate(opponents):
            points = [row for row in rows if row.opponent == opponent]
            xs = [getattr(row, x_name) / scale for row in points]
            wins = [row.win_rate for row in points]
            if single:
                (x,) = at
                dodge = (index - (len(opponents) - 1) / 2) * 0.05 * (abs(x) or 1.0)
                axis.errorbar(
                    [value + dodge for value in xs], wins,
                    yerr=[[win - row.win_low for win, row in zip(wins, points)],
                          [row.win_high - win for win, row in zip(wins, points)]],
                    fmt="o", capsize=5, label=f"vs {opponent}",
                )
                continue
            line = axis.plot(xs, wins, marker="o", markersize=3, label=f"vs {opponent}")
            axis.fill_between(
                xs,
                [row.win_low for row in points],
                [row.win_high for row in points],
                color=line[0].get_color(),
                alpha=0.2,
            )
        if single:
            (x,) = at
            axis.set_xlim(*((0.0, 2 * x) if x > 0 else (x - 1.0, x + 1.0)))
        if x_name != "train_seconds":  # iterations and steps are whole numbers
            axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.axhline(1 / num_players, color="grey", linewidth=0.8, linestyle=":", label="fair share")
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("match win rate (Wilson 95% band)")
    axes[0].set_ylim(0, 1)
    axes[0].legend(loc="lower right")
    figure.suptitle(title)
    figure.tight_layout()
    save_figure(figure, path)


def plot_exploitability_curve(points: Sequence[ExploitabilityPoint], path: str | Path, title: str) -> None:
    """Write a PNG with the exact exploitability against environment steps and against CPU
    minutes of training (:mod:`train.exploitability_curve`)."""
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    panels = (("steps", "environment steps", 1.0), ("cpu_seconds", "CPU minutes of training", 60.0))
    for axis, (name, label, scale) in zip(axes, panels):
        axis.plot([getattr(point, name) / scale for point in points], [point.exploitability for point in points],
                  marker="o", markersize=3)
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("exact exploitability (points per hand)")
    axes[0].set_ylim(bottom=0)
    figure.suptitle(title)
    figure.tight_layout()
    save_figure(figure, path)
