"""What the trainers share about evaluation: one call, one row type, one CSV log, one table.

:func:`evaluate_checkpoint` plays a learner (any agent spec: the ``ppo`` agent on a checkpoint, the
``rllib`` agent of ``train/rllib_selfplay.py``) against each baseline with ``arena.evaluation``;
:func:`learner_row` keeps the learner's line of each result as an :class:`EvalRow`, which
:func:`write_eval_csv` logs and :func:`evaluation_table` prints.
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.evaluation import evaluate
from arena.results import EvaluationResult
from draw_env.files import atomic_path


@dataclass
class EvalRow:
    """One evaluation of the learner against one baseline.

    ``points_per_hand`` is the learner's raw hand points per hand (what it scored);
    ``zero_sum_per_hand`` is its points minus the mean of the other seats' per hand, as in the
    README's strength tables (``draw-eval`` prints both: ``pts/hand`` and ``zs/hand``).
    """

    timesteps: int
    train_seconds: float
    opponent: str
    matches: int
    win_rate: float
    win_low: float
    win_high: float
    points_per_hand: float
    zero_sum_per_hand: float


def evaluate_checkpoint(
    learner: tuple[str, dict[str, Any]],
    opponents: Sequence[str],
    num_players: int,
    matches: int,
    seed: int,
    *,
    episode: str = "match",
    duplicate: bool = True,
    workers: int = 1,
    progress: bool = False,
) -> list[tuple[str, EvaluationResult]]:
    """Evaluate ``learner`` (an agent spec ``(name, kwargs)``) against each of ``opponents``.

    The learner takes one seat and ``num_players - 1`` copies of the baseline the others, over
    ``matches`` games (matches or hands, ``episode``) of ``arena.evaluation.evaluate``.

    Returns:
        ``(baseline name, evaluation result)`` pairs, in ``opponents`` order.
    """
    results = []
    for baseline in opponents:
        players: list[Any] = [learner] + [baseline] * (num_players - 1)
        result = evaluate(
            players,
            num_games=matches,
            episode=episode,
            duplicate=duplicate,
            seed=seed,
            workers=workers,
            progress=progress,
        )
        results.append((baseline, result))
    return results


def learner_row(result: EvaluationResult, baseline: str, timesteps: int, train_seconds: float) -> EvalRow:
    """The learner's (participant 0's) line of an ``arena.evaluation`` result."""
    learner = result.participants[0]
    return EvalRow(
        timesteps=timesteps,
        train_seconds=round(train_seconds, 1),
        opponent=baseline,
        matches=result.num_games,
        win_rate=learner.win_rate,
        win_low=learner.win_low,
        win_high=learner.win_high,
        points_per_hand=learner.points_per_hand,
        zero_sum_per_hand=learner.zero_sum_per_hand,
    )


def write_eval_csv(path: Path, rows: Sequence[EvalRow]) -> None:
    """The evaluation history as CSV, one :class:`EvalRow` a line (written whole, then renamed)."""
    with atomic_path(path) as temporary, open(temporary, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[f.name for f in dataclasses.fields(EvalRow)])
        writer.writeheader()
        for row in rows:
            writer.writerow(dataclasses.asdict(row))


def first_reaching(rows: Sequence[EvalRow], baseline: str, win_rate: float) -> EvalRow | None:
    """The first evaluation at which the learner's win rate against ``baseline`` reached ``win_rate``."""
    return next((row for row in rows if row.opponent == baseline and row.win_rate >= win_rate), None)


def evaluation_table(rows: Sequence[dict[str, Any]], num_players: int, title: str) -> str:
    """Evaluation rows (:class:`EvalRow` as dicts) as a text table."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    columns = (
        "opponent",
        "matches",
        "win rate",
        "95% Wilson interval",
        "raw points/hand",
        "zero-sum points/hand",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "opponent" else "right")
    for row in rows:
        table.add_row(
            f"{row['opponent']}" + (f" x{num_players - 1}" if num_players > 2 else ""),
            str(row["matches"]),
            f"{row['win_rate']:.1%}",
            f"[{row['win_low']:.1%}, {row['win_high']:.1%}]",
            f"{row['points_per_hand']:.2f}",
            f"{row['zero_sum_per_hand']:+.2f}",
        )
    console = Console(width=120, record=True)
    with console.capture() as capture:
        console.print(table)
    return capture.get()
