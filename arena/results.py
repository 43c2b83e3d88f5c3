"""What an evaluation, a league or a sweep measured: the result classes, their tables and JSON.

:func:`summarise` turns the games a table played (:class:`GameOutcome`) into per-participant
statistics (:class:`ParticipantStats`). Every result has ``summary()`` (a readable table) and
``to_json(path)`` (written atomically: a temporary file, then a rename).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypeVar

import numpy as np

from arena.options import RunOptions
from arena.specs import Spec
from arena.stats import wilson_interval
from draw_env.io.files import write_text_atomic

GAME_NOUNS = {"hand": "hands", "match": "matches"}


def write_json(data: Mapping[str, Any], path: str | os.PathLike[str] | None = None) -> str:
    """``data`` as indented JSON text, also written to ``path`` (parents created, atomically) if given."""
    text = json.dumps(data, indent=2)
    if path is not None:
        write_text_atomic(path, text + "\n")
    return text


#: The run settings (:class:`~arena.options.RunOptions` fields) that results report, by the same names.
RUN_SETTINGS = ("num_players", "episode", "duplicate", "seatings", "seed", "variant")
_Result = TypeVar("_Result", bound="RunResult")


class RunResult:
    """What one run measured, built by :meth:`from_run` with the settings it was played under."""

    @classmethod
    def from_run(cls: type[_Result], options: RunOptions, **measured: Any) -> _Result:
        """The result of a run played under ``options``: each :data:`RUN_SETTINGS` field the
        result has comes from ``options``, the rest from ``measured``."""
        settings = {f.name: getattr(options, f.name) for f in fields(cls) if f.name in RUN_SETTINGS}  # type: ignore[arg-type]
        return cls(**settings, **measured)


def _without_default_variant(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without its ``variant`` when that is the seeds' game (None): results of the seeds'
    game keep the fields they always had."""
    if data.get("variant", ...) is None:
        del data["variant"]
    return data


def _variant_lines(variant: Mapping[str, int] | None) -> list[str]:
    """A summary line naming the variant played, none for the seeds' game."""
    if variant is None:
        return []
    return [f"Variant: double-{variant['max_pip']} set, {variant['hand_size']} tiles each, {variant['protected']} protected"]


class JsonResult(RunResult):
    """JSON export for the result dataclasses."""

    def to_dict(self) -> dict[str, Any]:
        return _without_default_variant(asdict(self))  # type: ignore[call-overload]

    def to_json(self, path: str | os.PathLike[str] | None = None) -> str:
        """The results as JSON text, also written to ``path`` if given."""
        return write_json(self.to_dict(), path)


@dataclass(frozen=True)
class GameOutcome:
    """How one game (a match or a hand) of an evaluation went.

    Attributes:
        deal: index of the deal; replays of one deal share it.
        seating: ``seating[seat]`` is the participant index sitting in that seat.
        scores: per participant, the final match score (match) or the hand's points (hand).
        win_credit: per participant, 1 for a sole winner, 1/k for each of k tied leaders, else 0.
        hands: hands played.
        blocked_hands: hands that ended blocked.
        actions: actions taken by all players over the game.
        points: per participant, points scored over all hands.
        zero_sum: per participant, sum over hands of its points minus the mean of the others'.
        decisions: per participant, real decisions: ``act`` calls with two or more legal actions.
        think_seconds: per participant, CPU time spent in those calls.
        deals_seen: per hand, the deal as ``(opener, boneyard, hand mask of seat 0, of seat 1, ...)``:
            replays of one deal must show the same sequence (the duplicate audit).
    """

    deal: int
    seating: tuple[int, ...]
    scores: tuple[int, ...]
    win_credit: tuple[float, ...]
    hands: int
    blocked_hands: int
    actions: int
    points: tuple[int, ...]
    zero_sum: tuple[float, ...]
    decisions: tuple[int, ...]
    think_seconds: tuple[float, ...]
    deals_seen: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class ParticipantStats:
    """One participant's results over all games.

    Attributes:
        label: unique readable name, e.g. ``ismcts(simulations=200)``.
        agent: registry name; ``kwargs``: its keyword arguments.
        games: games played. ``wins``: sole first places. ``draws``: shared first places.
        win_rate: (wins + draw credit) / games; ``win_low``/``win_high``: Wilson 95% interval.
        hands: hands played. ``points_per_hand``: mean points scored per hand.
        zero_sum_per_hand: mean of (own points - mean of the others' points) per hand.
        block_rate: share of its hands that ended blocked.
        actions_per_hand: mean actions of all players per hand (the hand length).
        decisions_per_second: its real decisions (two or more legal actions) per CPU second spent
            in them; forced moves are left out, as they cost nothing to a searching agent.
    """

    label: str
    agent: str
    kwargs: dict[str, Any]
    games: int
    wins: int
    draws: int
    win_rate: float
    win_low: float
    win_high: float
    hands: int
    points_per_hand: float
    zero_sum_per_hand: float
    block_rate: float
    actions_per_hand: float
    decisions_per_second: float


def summarise(labels: Sequence[str], specs: Sequence[Spec], games: Sequence[GameOutcome]) -> list[ParticipantStats]:
    """Per-participant statistics over the ``games`` of one table."""
    stats = []
    count = len(games)
    hands = sum(g.hands for g in games)
    blocked = sum(g.blocked_hands for g in games)
    actions = sum(g.actions for g in games)
    for p, (label, (name, kwargs)) in enumerate(zip(labels, specs)):
        credit = sum(g.win_credit[p] for g in games)
        low, high = wilson_interval(credit, count)
        think = sum(g.think_seconds[p] for g in games)
        decisions = sum(g.decisions[p] for g in games)
        stats.append(
            ParticipantStats(
                label=label,
                agent=name,
                kwargs=dict(kwargs),
                games=count,
                wins=sum(1 for g in games if g.win_credit[p] == 1.0),
                draws=sum(1 for g in games if 0.0 < g.win_credit[p] < 1.0),
                win_rate=credit / count,
                win_low=low,
                win_high=high,
                hands=hands,
                points_per_hand=sum(g.points[p] for g in games) / hands,
                zero_sum_per_hand=sum(g.zero_sum[p] for g in games) / hands,
                block_rate=blocked / hands,
                actions_per_hand=actions / hands,
                decisions_per_second=decisions / think if think > 0 else 0.0,
            )
        )
    return stats


def _table(title: str, labels: Sequence[str], columns: str, cells: Iterable[str]) -> list[str]:
    """A text table: its header, a rule, then a row per label: the label column, as wide as the
    longest of ``title`` and ``labels``, then ``columns`` (header) or the row's cell text."""
    width = max(len(title), *(len(label) for label in labels))
    header = f"{title:<{width}}  {columns}"
    return [header, "-" * len(header), *(f"{label:<{width}}  {cell}" for label, cell in zip(labels, cells))]


def _format_name(duplicate: bool, num_players: int, seatings: str) -> str:
    if not duplicate:
        return "independent deals"
    return "duplicate" if num_players == 2 else f"duplicate, {seatings}"


@dataclass
class EvaluationResult(RunResult):
    """What :func:`arena.evaluation.evaluate` measured; ``participants`` follow the order of ``players``."""

    num_players: int
    episode: str
    duplicate: bool
    seatings: str
    seed: int
    num_games: int
    num_deals: int
    participants: list[ParticipantStats]
    seconds: float
    games: list[GameOutcome] = field(repr=False)
    #: The variant's ``max_pip``, ``hand_size``, ``protected``; None (and left out of the JSON)
    #: for the seeds' game.
    variant: dict[str, int] | None = None

    def to_dict(self, include_games: bool = False) -> dict[str, Any]:
        """A JSON-ready dict; per-game outcomes only if ``include_games``."""
        data = asdict(self)
        if include_games:
            for game in data["games"]:
                del game["deals_seen"]
        else:
            del data["games"]
        return _without_default_variant(data)

    def to_json(self, path: str | os.PathLike[str] | None = None, include_games: bool = False) -> str:
        """The results as JSON text, also written to ``path`` if given."""
        return write_json(self.to_dict(include_games), path)

    def summary(self) -> str:
        """A readable table, one row per participant."""
        lines = [
            (
                f"{self.num_games} {GAME_NOUNS[self.episode]}, {self.num_players} players, "
                f"{_format_name(self.duplicate, self.num_players, self.seatings)} "
                f"({self.num_deals} deals), seed {self.seed}, {self.seconds:.1f} s"
            ),
            *_variant_lines(self.variant),
        ]
        lines += _table(
            "participant",
            [p.label for p in self.participants],
            f"{'win rate':>8}  {'95% interval':>15}  {'W-D-L':>13}  "
            f"{'pts/hand':>8}  {'zs/hand':>7}  {'blocked':>7}  {'actions/hand':>12}  {'dec/s':>8}",
            (
                f"{p.win_rate:>8.3f}  [{p.win_low:.3f}, {p.win_high:.3f}]  "
                f"{f'{p.wins}-{p.draws}-{p.games - p.wins - p.draws}':>13}  {p.points_per_hand:>8.2f}  "
                f"{p.zero_sum_per_hand:>7.2f}  {p.block_rate:>7.3f}  {p.actions_per_hand:>12.1f}  "
                f"{p.decisions_per_second:>8.0f}"
                for p in self.participants
            ),
        )
        lines.append(
            f"Fair share of wins: {1 / self.num_players:.3f}. Draws count 1/k of a win for k tied leaders."
        )
        return "\n".join(lines)


@dataclass(frozen=True)
class Rating:
    """An openskill Plackett-Luce rating: ``mu`` and ``sigma``; ``ordinal`` = mu - 3 sigma.

    ``games``, ``win_rate``, ``win_low`` and ``win_high`` pool every table the agent sat at
    (Wilson 95% interval; the fair share is 1 / num_players).
    """

    label: str
    mu: float
    sigma: float
    ordinal: float
    games: int
    win_rate: float
    win_low: float
    win_high: float


@dataclass(frozen=True)
class Table:
    """One table of the league: its agents (by label) and their results there."""

    labels: tuple[str, ...]
    participants: list[ParticipantStats]


@dataclass
class LeagueResult(JsonResult):
    """What :func:`arena.league.league` measured; ``ratings`` are sorted best first."""

    num_players: int
    episode: str
    duplicate: bool
    seatings: str
    seed: int
    games_per_table: int
    labels: list[str]
    ratings: list[Rating]
    tables: list[Table]
    seconds: float
    variant: dict[str, int] | None = None

    def win_matrix(self) -> np.ndarray:
        """With 2 players: ``matrix[i, j]`` = win rate of ``labels[i]`` against ``labels[j]`` (NaN on the diagonal)."""
        if self.num_players != 2:
            raise ValueError("win_matrix needs a 2-player league (num_players=2)")
        index = {label: i for i, label in enumerate(self.labels)}
        matrix = np.full((len(self.labels), len(self.labels)), np.nan)
        for table in self.tables:
            first, second = table.participants
            matrix[index[first.label], index[second.label]] = first.win_rate
            matrix[index[second.label], index[first.label]] = second.win_rate
        return matrix

    def summary(self) -> str:
        """The ratings table, then one line per table."""
        games = GAME_NOUNS[self.episode]
        lines = [
            (
                f"League: {self.num_players} players, {len(self.tables)} table{'s' * (len(self.tables) != 1)} "
                f"x {self.games_per_table} {games} "
                f"({'duplicate' if self.duplicate else 'independent deals'}), seed {self.seed}, {self.seconds:.1f} s"
            ),
            *_variant_lines(self.variant),
            "Openskill Plackett-Luce ratings (ordinal = mu - 3 sigma); win rate pooled over the agent's tables:",
        ]
        lines += _table(
            "agent",
            [r.label for r in self.ratings],
            f"{'mu':>6}  {'sigma':>5}  {'ordinal':>7}  {'games':>6}  {'win rate':>8}  {'95% interval':>15}",
            (
                f"{r.mu:>6.2f}  {r.sigma:>5.2f}  {r.ordinal:>7.2f}  {r.games:>6}  "
                f"{r.win_rate:>8.3f}  [{r.win_low:.3f}, {r.win_high:.3f}]"
                for r in self.ratings
            ),
        )
        lines.append(f"Fair share of wins: {1 / self.num_players:.3f}.")
        lines.append("Tables (win rate [95% interval] per seat):")
        for table in self.tables:
            cells = "  ".join(
                f"{p.label} {p.win_rate:.3f} [{p.win_low:.3f}, {p.win_high:.3f}]" for p in table.participants
            )
            lines.append(f"  {cells}")
        return "\n".join(lines)


@dataclass
class SweepResult(JsonResult):
    """One row per value of ``key``: the swept agent's results against ``opponents``."""

    agent: str
    key: str
    opponents: list[str]
    num_players: int
    episode: str
    duplicate: bool
    seed: int
    values: list[Any]
    points: list[ParticipantStats]
    seconds: float
    variant: dict[str, int] | None = None

    def summary(self) -> str:
        games = GAME_NOUNS[self.episode]
        lines = [
            (
                f"{self.agent} against {', '.join(self.opponents)}: {self.points[0].games} {games} per value "
                f"({'duplicate' if self.duplicate else 'independent deals'}), seed {self.seed}, {self.seconds:.1f} s"
            ),
            *_variant_lines(self.variant),
        ]
        header = (
            f"{self.key:>12}  {'win rate':>8}  {'95% interval':>15}  {'pts/hand':>8}  {'zs/hand':>7}  "
            f"{'decisions/s':>11}"
        )
        lines += [header, "-" * len(header)]
        for value, p in zip(self.values, self.points):
            lines.append(
                f"{value!s:>12}  {p.win_rate:>8.3f}  [{p.win_low:.3f}, {p.win_high:.3f}]  {p.points_per_hand:>8.2f}  "
                f"{p.zero_sum_per_hand:>7.2f}  {p.decisions_per_second:>11.1f}"
            )
        lines.append(f"Fair share of wins: {1 / self.num_players:.3f}.")
        return "\n".join(lines)
