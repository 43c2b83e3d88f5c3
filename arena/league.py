"""Round-robin leagues with openskill ratings, and budget sweeps, on the evaluation core.

* :func:`league` seats every combination of ``num_players`` distinct agents at a table (every
  pairing with 2 players), plays ``games_per_pairing`` duplicate games per table on the same
  deals, and rates the agents with openskill's Plackett-Luce model from each game's final ranking.
* :func:`sweep` plays one agent against fixed opponents once per value of one keyword (for
  example ``ismcts`` at several ``simulations`` budgets): win rate and decisions per second
  against budget.

Both play every game of every table or value through :func:`arena.evaluation.play_tables` (one
pool of workers), and both return a result with ``summary()`` and ``to_json()``; the charts are
:func:`arena.charts.plot_league` and :func:`arena.charts.plot_sweep`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from openskill.models import PlackettLuce

from arena.evaluation import TablePlan, play_tables
from arena.options import MAX_LEAGUE_AGENTS, MAX_SWEEP_VALUES, RunOptions, RunSettings
from arena.results import GameOutcome, LeagueResult, Rating, SweepResult, Table, summarise
from arena.specs import (
    AgentSpec,
    check_buildable,
    normalise_spec,
    normalise_specs,
    parse_value,
    participant_labels,
    spec_label,
)
from arena.stats import wilson_interval

if TYPE_CHECKING:
    from typing_extensions import Unpack

# ---------------------------------------------------------------------------- league


def openskill_ratings(
    labels: Sequence[str], combos: Sequence[Sequence[int]], games: Sequence[Sequence[GameOutcome]]
) -> dict[str, tuple[float, float]]:
    """Rate agents from every game of every table with openskill's Plackett-Luce model.

    Args:
        labels: agent labels.
        combos: per table, the indices into ``labels`` of its participants, in participant order.
        games: per table, its games.

    Returns:
        ``label -> (mu, sigma)``. Each game is one update from the participants' final scores
        (ties share a rank). Games are interleaved across tables (game 0 of every table, then
        game 1...) so that no table is rated last, and the model's dynamics term ``tau`` is 0:
        the agents do not change, so their uncertainty may shrink without floor.
    """
    model = PlackettLuce(tau=0.0)
    ratings = {label: model.rating(name=label) for label in labels}
    for game_index in range(max(len(table) for table in games)):
        for combo, table in zip(combos, games):
            if game_index < len(table):
                teams = [[ratings[labels[i]]] for i in combo]
                rated = model.rate(teams, scores=[float(score) for score in table[game_index].scores])
                for i, team in zip(combo, rated):
                    ratings[labels[i]] = team[0]
    return {label: (rating.mu, rating.sigma) for label, rating in ratings.items()}


def league(
    agent_specs: Sequence[AgentSpec], num_players: int, games_per_pairing: int, **settings: Unpack[RunSettings]
) -> LeagueResult:
    """A round robin: every combination of ``num_players`` distinct agents plays a table.

    Args:
        agent_specs: at least ``num_players`` distinct agent specs (see :func:`arena.evaluation.evaluate`).
        num_players: 2, 3 or 4 seats per table.
        games_per_pairing: games per table, duplicate replays counted; rounded up to whole deals
            (with 3 players and rotations, 50 becomes 51: 17 deals, each under 3 seatings).
        settings: as in :func:`arena.evaluation.evaluate`; every table plays the same deals.

    Returns:
        A :class:`~arena.results.LeagueResult`; the ratings are those of :func:`openskill_ratings`.
    """
    options = RunOptions(num_players, games_per_pairing, **settings)
    specs = normalise_specs("agent_specs", agent_specs, minimum=options.num_players, maximum=MAX_LEAGUE_AGENTS)
    labels = [spec_label(name, kwargs) for name, kwargs in specs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"agent_specs must be distinct, got {labels}")
    check_buildable(specs)

    combos = list(itertools.combinations(range(len(specs)), options.num_players))
    started = time.perf_counter()
    games = play_tables(
        [TablePlan(tuple(specs[i] for i in combo), tuple(labels[i] for i in combo)) for combo in combos],
        options,
        f"league {options.num_players}p",
    )
    tables = [
        Table(
            tuple(labels[i] for i in combo),
            summarise([labels[i] for i in combo], [specs[i] for i in combo], table),
        )
        for combo, table in zip(combos, games)
    ]

    ratings = openskill_ratings(labels, combos, games)
    pooled = []
    for index, label in enumerate(labels):
        credit = 0.0
        count = 0
        for combo, table in zip(combos, games):
            if index in combo:
                seat = combo.index(index)
                credit += sum(game.win_credit[seat] for game in table)
                count += len(table)
        low, high = wilson_interval(credit, count)
        mu, sigma = ratings[label]
        pooled.append(Rating(label, mu, sigma, mu - 3 * sigma, count, credit / count, low, high))
    pooled.sort(key=lambda r: r.ordinal, reverse=True)
    return LeagueResult.from_run(
        options,
        games_per_table=options.games_per_table,
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
    if len(parsed) > MAX_SWEEP_VALUES:
        raise ValueError(f"--sweep takes at most {MAX_SWEEP_VALUES} values, got {len(parsed)}")
    return key.strip(), parsed


def sweep(
    agent: AgentSpec,
    opponents: Sequence[AgentSpec],
    key: str,
    values: Sequence[Any],
    num_games: int,
    **settings: Unpack[RunSettings],
) -> SweepResult:
    """Evaluate ``agent`` with ``key=value`` for each of ``values`` against ``opponents``.

    Every value plays the same deals (same ``seed``), so the curve compares budgets, not luck.
    ``num_games`` and ``settings`` are as in :func:`arena.evaluation.evaluate`.
    """
    name, kwargs = normalise_spec(agent)
    opponent_specs = normalise_specs("opponents", opponents, minimum=1, maximum=3)
    if not isinstance(key, str) or not key or isinstance(values, (str, bytes)) or not values:
        raise ValueError(
            f"sweep needs a keyword name and at least one value, got key={key!r}, values={values!r}"
        )
    if len(values) > MAX_SWEEP_VALUES:
        raise ValueError(f"sweep takes at most {MAX_SWEEP_VALUES} values, got {len(values)}")
    options = RunOptions(1 + len(opponent_specs), num_games, **settings)
    swept = [(name, {**kwargs, key: value}) for value in values]
    check_buildable(swept)
    tables = [(spec, *opponent_specs) for spec in swept]
    started = time.perf_counter()
    games = play_tables(
        [TablePlan(table, tuple(participant_labels(table))) for table in tables],
        options,
        f"{name} {key} sweep",
    )
    points = [
        summarise([spec_label(*table[0])], table[:1], table_games)[0] for table, table_games in zip(tables, games)
    ]
    return SweepResult.from_run(
        options,
        agent=spec_label(name, kwargs),
        key=key,
        opponents=[spec_label(*spec) for spec in opponent_specs],
        values=list(values),
        points=points,
        seconds=time.perf_counter() - started,
    )
