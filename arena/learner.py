"""One learner measured against opponents, as the training pipelines log it.

:func:`evaluate_learner` plays a learner (any agent spec: a policy file, the ``rllib`` agent of
``train/rllib_selfplay.py``) in one seat against ``num_players - 1`` copies of each opponent with
:func:`arena.evaluation.evaluate`, and keeps the learner's line of each result as an
:class:`EvalRow`, which :func:`write_rows_csv` logs and :func:`evaluation_table` prints.
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.evaluation import evaluate
from arena.options import RunSettings
from arena.results import EvaluationResult
from draw_env.io.files import atomic_path

if TYPE_CHECKING:
    from typing_extensions import Unpack


@dataclass
class EvalRow:
    """One evaluation of the learner against one opponent.

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


def evaluate_learner(
    learner: Any,
    opponents: Sequence[str] | Mapping[str, Any],
    num_players: int,
    matches: int,
    *,
    timesteps: int = 0,
    train_seconds: float = 0.0,
    **settings: Unpack[RunSettings],
) -> list[EvalRow]:
    """Evaluate ``learner`` (an agent spec) against each of ``opponents``; one row each, in order.

    Args:
        opponents: agent specs (each one's label is the spec), or labels mapped to specs.
        matches: games per opponent (matches or hands, ``episode``) of
            :func:`arena.evaluation.evaluate`, which takes ``settings``.
        timesteps, train_seconds: how far training had come, recorded in each row.
    """
    labelled = opponents if isinstance(opponents, Mapping) else {spec: spec for spec in opponents}
    return [
        learner_row(evaluate([learner] + [spec] * (num_players - 1), num_games=matches, **settings),
                    label, timesteps, train_seconds)
        for label, spec in labelled.items()
    ]


def learner_row(result: EvaluationResult, opponent: str, timesteps: int, train_seconds: float) -> EvalRow:
    """The learner's (participant 0's) line of an :func:`arena.evaluation.evaluate` result."""
    learner = result.participants[0]
    measured = ("win_rate", "win_low", "win_high", "points_per_hand", "zero_sum_per_hand")
    return EvalRow(
        timesteps, round(train_seconds, 1), opponent, result.num_games, **{key: getattr(learner, key) for key in measured}
    )


def write_rows_csv(path: Path, rows: Sequence[EvalRow], row_type: type[EvalRow] = EvalRow) -> None:
    """An evaluation history as CSV, one row (of ``row_type``, a dataclass) a line, written whole then renamed."""
    with atomic_path(path) as temporary, open(temporary, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[f.name for f in dataclasses.fields(row_type)])
        writer.writeheader()
        writer.writerows(dataclasses.asdict(row) for row in rows)


def first_reaching(rows: Sequence[EvalRow], opponent: str, win_rate: float) -> EvalRow | None:
    """The first evaluation at which the learner's win rate against ``opponent`` reached ``win_rate``."""
    return next((row for row in rows if row.opponent == opponent and row.win_rate >= win_rate), None)


def evaluation_table(rows: Sequence[Mapping[str, Any]], num_players: int, title: str) -> str:
    """Evaluation rows (:class:`EvalRow` as dicts) as a text table."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    columns = ("opponent", "matches", "win rate", "95% Wilson interval", "raw points/hand", "zero-sum points/hand")
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
