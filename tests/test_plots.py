"""The learning-curve figure (train/plots.py): a run of one evaluation is drawn readably."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from matplotlib.container import ErrorbarContainer

from train import plots


@dataclass
class Row:
    iteration: int
    timesteps: int
    train_seconds: float
    opponent: str
    win_rate: float
    win_low: float
    win_high: float


def _figure(rows: list[Row], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    drawn: list[Any] = []
    monkeypatch.setattr(plots, "save_figure", lambda figure, path: drawn.append(figure))
    plots.plot_learning_curve(rows, tmp_path / "strength.png", "one iteration", num_players=2,
                              x_axes=(("iteration", "iteration"), ("train_seconds", "training minutes")))
    return drawn[0]


def test_one_evaluation_is_a_marker_with_its_interval_on_an_axis_from_zero(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rows = [Row(1, 5000, 180.0, "heaviest", 0.62, 0.58, 0.66), Row(1, 5000, 180.0, "variety", 0.55, 0.51, 0.59)]
    iterations, minutes = _figure(rows, monkeypatch, tmp_path).axes
    assert iterations.get_xlim() == (0.0, 2.0) and minutes.get_xlim() == (0.0, 6.0)
    assert all(tick == int(tick) for tick in iterations.get_xticks())
    for axis in (iterations, minutes):
        bars = [container for container in axis.containers if isinstance(container, ErrorbarContainer)]
        assert len(bars) == 2  # one per baseline, with its interval
        (low, high), = (segment[:, 1] for segment in bars[0].lines[2][0].get_segments())
        assert (low, high) == pytest.approx((0.58, 0.66))


def test_a_curve_keeps_its_line_and_band(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rows = [Row(i, 5000 * i, 180.0 * i, "heaviest", 0.5 + i / 20, 0.45 + i / 20, 0.55 + i / 20) for i in (1, 2, 3)]
    iterations, _ = _figure(rows, monkeypatch, tmp_path).axes
    assert not iterations.containers and len(iterations.collections) == 1  # the Wilson band
    assert iterations.get_xlim()[0] > 0.5
