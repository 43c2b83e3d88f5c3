"""The learning-curve figure: win rate against each baseline over training."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from arena.charts import save_figure


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
    time excluded). A dotted line marks the fair share, 1 / num_players.
    """
    opponents = list(dict.fromkeys(row.opponent for row in rows))
    figure, axes = plt.subplots(1, len(x_axes), figsize=(5.5 * len(x_axes), 4.2), sharey=True, squeeze=False)
    axes = axes[0]
    for axis, (x_name, label) in zip(axes, x_axes):
        for opponent in opponents:
            points = [row for row in rows if row.opponent == opponent]
            scale = 60.0 if x_name == "train_seconds" else 1.0
            xs = [getattr(row, x_name) / scale for row in points]
            line = axis.plot(
                xs, [row.win_rate for row in points], marker="o", markersize=3, label=f"vs {opponent}"
            )
            axis.fill_between(
                xs,
                [row.win_low for row in points],
                [row.win_high for row in points],
                color=line[0].get_color(),
                alpha=0.2,
            )
        axis.axhline(1 / num_players, color="grey", linewidth=0.8, linestyle=":", label="fair share")
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("match win rate (Wilson 95% band)")
    axes[0].set_ylim(0, 1)
    axes[0].legend(loc="lower right")
    figure.suptitle(title)
    figure.tight_layout()
    save_figure(figure, path)
