"""Round-robin leagues with openskill ratings, and budget sweeps, on top of :mod:`agents.evaluate`.

* :func:`league` seats every combination of ``num_players`` distinct agents at a table (every
  pairing with 2 players), plays ``games_per_table`` duplicate games per table on the same deals,
  and rates the agents with openskill's Plackett-Luce model from each game's final ranking.
* :func:`sweep` plays one agent against fixed opponents once per value of one keyword (for
  example ``ismcts`` at several ``simulations`` budgets): win rate and decisions per second
  against budget.

Both play every game of every table or value in one pool of workers, and both return a result
with ``summary()``, ``to_json()`` and a PNG chart (:func:`plot_league`, :func:`plot_sweep`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from openskill.models import PlackettLuce

import agents
from agents.evaluate import (
    EPISODES,
    GAME_NOUNS,
    SEATINGS,
    AgentSpec,
    GameRecord,
    JsonResult,
    ParticipantStats,
    check_int,
    normalise_spec,
    parse_value,
    plan_tasks,
    run_tasks,
    spec_label,
    summarise,
    wilson_interval,
)


def _check_common(episode: str, duplicate: bool, seatings: str) -> None:
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {', '.join(map(repr, EPISODES))}, got {episode!r}")
    if not isinstance(duplicate, bool):
        raise ValueError(f"duplicate must be True or False, got {duplicate!r}")
    if seatings not in SEATINGS:
        raise ValueError(f"seatings must be one of {', '.join(map(repr, SEATINGS))}, got {seatings!r}")


def _play_tables(
    tables: Sequence[Sequence[tuple[str, Mapping[str, Any]]]],
    games_per_table: int,
    episode: str,
    duplicate: bool,
    seed: int,
    workers: int,
    progress: bool,
    seatings: str,
    description: str,
) -> list[list[GameRecord]]:
    """Play every table in one worker pool; per table, its records in deal order.

    Every table plays the same deals (same ``seed``): differences between tables then come
    from the agents, not from the cards.
    """
    plans = [plan_tasks(specs, games_per_table, episode, duplicate, seed, seatings) for specs in tables]
    records = run_tasks([task for plan in plans for task in plan], workers, progress, description)
    per_table = []
    position = 0
    for plan in plans:
        size = sum(len(task.seatings) for task in plan)
        per_table.append(records[position : position + size])
        position += size
    return per_table


# ---------------------------------------------------------------------------- league


def openskill_ratings(
    labels: Sequence[str], combos: Sequence[Sequence[int]], records: Sequence[Sequence[GameRecord]]
) -> dict[str, tuple[float, float]]:
    """Rate agents from every game of every table with openskill's Plackett-Luce model.

    Args:
        labels: agent labels.
        combos: per table, the indices into ``labels`` of its participants, in participant order.
        records: per table, its games.

    Returns:
        ``label -> (mu, sigma)``. Each game is one update from the participants' final scores
        (ties share a rank). Games are interleaved across tables (game 0 of every table, then
        game 1...) so that no table is rated last, and the model's dynamics term ``tau`` is 0:
        the agents do not change, so their uncertainty may shrink without floor.
    """
    model = PlackettLuce(tau=0.0)
    ratings = {label: model.rating(name=label) for label in labels}
    for game_index in range(max(len(table) for table in records)):
        for combo, table in zip(combos, records):
            if game_index < len(table):
                teams = [[ratings[labels[i]]] for i in combo]
                rated = model.rate(teams, scores=[float(score) for score in table[game_index].scores])
                for i, team in zip(combo, rated):
                    ratings[labels[i]] = team[0]
    return {label: (rating.mu, rating.sigma) for label, rating in ratings.items()}


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
    """What :func:`league` measured; ``ratings`` are sorted best first."""

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
                f"League: {self.num_players} players, {len(self.tables)} tables x {self.games_per_table} {games} "
                f"({'duplicate' if self.duplicate else 'independent deals'}), seed {self.seed}, {self.seconds:.1f} s"
            ),
            "Openskill Plackett-Luce ratings (ordinal = mu - 3 sigma); win rate pooled over the agent's tables:",
        ]
        width = max(len("agent"), *(len(r.label) for r in self.ratings))
        header = f"{'agent':<{width}}  {'mu':>6}  {'sigma':>5}  {'ordinal':>7}  {'games':>6}  {'win rate':>8}  {'95% interval':>15}"
        lines += [header, "-" * len(header)]
        for r in self.ratings:
            lines.append(
                f"{r.label:<{width}}  {r.mu:>6.2f}  {r.sigma:>5.2f}  {r.ordinal:>7.2f}  {r.games:>6}  "
                f"{r.win_rate:>8.3f}  [{r.win_low:.3f}, {r.win_high:.3f}]"
            )
        lines.append(f"Fair share of wins: {1 / self.num_players:.3f}.")
        lines.append("Tables (win rate [95% interval] per seat):")
        for table in self.tables:
            cells = "  ".join(
                f"{p.label} {p.win_rate:.3f} [{p.win_low:.3f}, {p.win_high:.3f}]" for p in table.participants
            )
            lines.append(f"  {cells}")
        return "\n".join(lines)


def league(
    agent_specs: Sequence[AgentSpec],
    num_players: int,
    games_per_pairing: int,
    episode: str = "match",
    duplicate: bool = True,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    seatings: str = "rotations",
) -> LeagueResult:
    """A round robin: every combination of ``num_players`` distinct agents plays a table.

    Args:
        agent_specs: at least ``num_players`` distinct agent specs (see :func:`agents.evaluate.evaluate`).
        num_players: 2, 3 or 4 seats per table.
        games_per_pairing: games per table, duplicate replays counted.
        episode, duplicate, seed, workers, progress, seatings: as in :func:`agents.evaluate.evaluate`;
            every table plays the same deals.

    Returns:
        A :class:`LeagueResult`; the ratings are those of :func:`openskill_ratings`.
    """
    if isinstance(num_players, bool) or num_players not in (2, 3, 4):
        raise ValueError(f"num_players must be one of 2, 3, 4, got {num_players!r}")
    if isinstance(agent_specs, (str, bytes)) or not isinstance(agent_specs, Sequence):
        raise ValueError(f"agent_specs must be a sequence of agent specs, got {agent_specs!r}")
    specs = [normalise_spec(spec) for spec in agent_specs]
    labels = [spec_label(name, kwargs) for name, kwargs in specs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"agent_specs must be distinct, got {labels}")
    if len(specs) < num_players:
        raise ValueError(f"agent_specs needs at least num_players={num_players} agents, got {len(specs)}")
    games_per_pairing = check_int("games_per_pairing", games_per_pairing, 1)
    seed = check_int("seed", seed, 0)
    workers = check_int("workers", workers, 1)
    _check_common(episode, duplicate, seatings)
    for name, kwargs in specs:
        agents.make(name, **kwargs)  # a bad keyword or value fails before any game

    combos = list(itertools.combinations(range(len(specs)), num_players))
    started = time.perf_counter()
    records = _play_tables(
        [[specs[i] for i in combo] for combo in combos],
        games_per_pairing,
        episode,
        duplicate,
        seed,
        workers,
        progress,
        seatings,
        f"league {num_players}p",
    )
    tables = [
        Table(
            tuple(labels[i] for i in combo),
            summarise([labels[i] for i in combo], [specs[i] for i in combo], table),
        )
        for combo, table in zip(combos, records)
    ]

    ratings = openskill_ratings(labels, combos, records)
    pooled = []
    for index, label in enumerate(labels):
        credit = games = 0.0
        for combo, table in zip(combos, records):
            if index in combo:
                seat = combo.index(index)
                credit += sum(game.win_credit[seat] for game in table)
                games += len(table)
        low, high = wilson_interval(credit, int(games))
        mu, sigma = ratings[label]
        pooled.append(Rating(label, mu, sigma, mu - 3 * sigma, int(games), credit / games, low, high))
    pooled.sort(key=lambda r: r.ordinal, reverse=True)
    return LeagueResult(
        num_players=num_players,
        episode=episode,
        duplicate=duplicate,
        seatings=seatings,
        seed=seed,
        games_per_table=len(records[0]),
        labels=labels,
        ratings=pooled,
        tables=tables,
        seconds=time.perf_counter() - started,
    )


# ---------------------------------------------------------------------------- sweep


def parse_sweep(text: str) -> tuple[str, list[Any]]:
    """Parse ``"key=v1,v2,..."`` (e.g. ``"simulations=25,50,100"``)."""
    key, equals, values = text.partition("=")
    parsed = [parse_value(value.strip()) for value in values.split(",") if value.strip()]
    if not equals or not key.strip() or not parsed:
        raise ValueError(f"--sweep must look like key=v1,v2,... (e.g. simulations=25,50,100), got {text!r}")
    return key.strip(), parsed


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

    def summary(self) -> str:
        games = GAME_NOUNS[self.episode]
        lines = [
            (
                f"{self.agent} against {', '.join(self.opponents)}: {self.points[0].games} {games} per value "
                f"({'duplicate' if self.duplicate else 'independent deals'}), seed {self.seed}, {self.seconds:.1f} s"
            ),
        ]
        header = f"{self.key:>12}  {'win rate':>8}  {'95% interval':>15}  {'pts/hand':>8}  {'zs/hand':>7}  {'decisions/s':>11}"
        lines += [header, "-" * len(header)]
        for value, p in zip(self.values, self.points):
            lines.append(
                f"{value!s:>12}  {p.win_rate:>8.3f}  [{p.win_low:.3f}, {p.win_high:.3f}]  {p.points_per_hand:>8.2f}  "
                f"{p.zero_sum_per_hand:>7.2f}  {p.decisions_per_second:>11.1f}"
            )
        lines.append(f"Fair share of wins: {1 / self.num_players:.3f}.")
        return "\n".join(lines)


def sweep(
    agent: AgentSpec,
    opponents: Sequence[AgentSpec],
    key: str,
    values: Sequence[Any],
    num_games: int,
    episode: str = "match",
    duplicate: bool = True,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    seatings: str = "rotations",
) -> SweepResult:
    """Evaluate ``agent`` with ``key=value`` for each of ``values`` against ``opponents``.

    Every value plays the same deals (same ``seed``), so the curve compares budgets, not luck.
    """
    name, kwargs = normalise_spec(agent)
    opponent_specs = [normalise_spec(spec) for spec in opponents]
    if not 1 <= len(opponent_specs) <= 3:
        raise ValueError(f"opponents must hold 1 to 3 agent specs, got {len(opponent_specs)}")
    if not isinstance(key, str) or not key or isinstance(values, (str, bytes)) or not values:
        raise ValueError(
            f"sweep needs a keyword name and at least one value, got key={key!r}, values={values!r}"
        )
    num_games = check_int("num_games", num_games, 1)
    seed = check_int("seed", seed, 0)
    workers = check_int("workers", workers, 1)
    _check_common(episode, duplicate, seatings)

    tables = []
    for value in values:
        table = [(name, {**kwargs, key: value}), *opponent_specs]
        agents.make(table[0][0], **table[0][1])  # a bad keyword or value fails before any game
        tables.append(table)
    started = time.perf_counter()
    records = _play_tables(
        tables, num_games, episode, duplicate, seed, workers, progress, seatings, f"{name} {key} sweep"
    )
    points = [
        summarise([spec_label(*table[0])], table[:1], table_records)[0]
        for table, table_records in zip(tables, records)
    ]
    return SweepResult(
        agent=spec_label(name, kwargs),
        key=key,
        opponents=[spec_label(*spec) for spec in opponent_specs],
        num_players=1 + len(opponent_specs),
        episode=episode,
        duplicate=duplicate,
        seed=seed,
        values=list(values),
        points=points,
        seconds=time.perf_counter() - started,
    )


# ---------------------------------------------------------------------------- charts


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_league(result: LeagueResult, path: str | Path) -> None:
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
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def plot_sweep(result: SweepResult, path: str | Path) -> None:
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
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
