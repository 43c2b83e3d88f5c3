"""Honest evaluation of Draw agents: duplicate deals, rotated seats, Wilson intervals.

``evaluate(players, num_games, ...)`` plays games (whole matches or single hands) between 2 to 4
participants and reports, per participant, the win rate with its Wilson 95% interval, points per
hand, block rate and hand length. Round-robin leagues and budget sweeps (:mod:`arena.league`)
play their tables through the same core, :func:`play_tables`; ``draw-eval`` (:mod:`arena.cli`)
is the command line around both. The method (deals, seatings, what is counted, why results do
not depend on the number of workers) is on the docs page "Evaluation" (``docs/evaluation.md``).

Backends: a *backend* plays a list of :class:`DealTask` and returns their outcomes in order.
:func:`backend_for` picks one per table: step by step through the PettingZoo environment
(:func:`play_step_by_step`, on a process pool), or, for tables whose agents all choose for many
games at once, batched on :class:`draw_env.vector.DrawVectorEnv` (:mod:`arena.batched_play`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.base import observation_for
from arena.batched_play import batchable, play_batched
from arena.deals import DealTask, FrozenSpec, deal_options, record_name
from arena.options import (
    RunOptions,
    RunSettings,
    check_run_size,
    check_specs_play_variant,
    seatings_for,
    table_obs_type,
)
from arena.parallel import process_map
from arena.results import EvaluationResult, GameOutcome, summarise
from arena.specs import (
    AgentSpec,
    Spec,
    build_agent,
    check_buildable,
    normalise_specs,
    participant_labels,
    seed_sequence_int,
)
from arena.stats import shared_first
from draw_env.draw_dominoes import raw_env
from draw_env.io.files import check_writable
from draw_env.io.records import RecordingWrapper, write_record
from draw_env.rules import DrawGame

if TYPE_CHECKING:
    from typing_extensions import Unpack


@dataclass(frozen=True)
class TablePlan:
    """One table of a run: its participants' specs and their (unique) labels."""

    specs: tuple[Spec, ...]
    labels: tuple[str, ...]


#: Plays ``tasks`` and returns every game, task after task, each task's seatings in order;
#: calls the progress callback with the number of games just finished.
Backend = Callable[[Sequence[DealTask], RunOptions, Callable[[int], None]], list[GameOutcome]]


# ---------------------------------------------------------------------------- one game


def play_game(
    specs: Sequence[FrozenSpec],
    episode: str,
    seating: Sequence[int],
    deal_seed: int,
    later_hands_seed: int,
    agent_seed: tuple[int, int, int],
    players: Sequence[str] | None = None,
    game: DrawGame | None = None,
    obs_type: str = "observation",
) -> tuple[GameOutcome, dict[str, Any] | None]:
    """Play one game of the deal ``deal_seed`` with ``seating[seat]`` = participant index.

    Args:
        specs: frozen ``(name, kwargs)`` per participant.
        episode: ``"hand"`` or ``"match"``.
        seating: participant index per seat.
        deal_seed: seeds the first hand (see :func:`deal_options`).
        later_hands_seed: seeds the environment RNG that deals a match's later hands.
        agent_seed: ``(seed, deal, replay)``, from which seeded agents get their seeds.
        players: per participant, its label; given, the game is recorded (:mod:`draw_env.io.records`).
        game: the variant played (default: the seeds' game of ``len(specs)`` players).
        obs_type: what the environment gives; each agent is given what it reads
            (:func:`agents.base.observation_for`).

    Returns:
        The outcome, and the game record if ``players`` was given (else ``None``).
    """
    num_players = len(specs)
    seed, deal, replay = agent_seed
    agents_by_participant = [
        build_agent(name, dict(kwargs), seed, deal, replay, participant)
        for participant, (name, kwargs) in enumerate(specs)
    ]
    game = game or DrawGame(num_players)
    base = raw_env(
        num_players=num_players,
        episode=episode,
        reward="zero_sum",
        max_pip=game.max_pip,
        hand_size=game.hand_size,
        protected=game.protected,
        obs_type=obs_type,
    )
    recorder = None if players is None else RecordingWrapper(base, [players[p] for p in seating])
    env = base if recorder is None else recorder
    env.reset(seed=later_hands_seed, options=deal_options(num_players, deal_seed, game))
    for player in agents_by_participant:
        player.reset()
    state = base.state_ref
    participant_of = {f"player_{seat}": participant for seat, participant in enumerate(seating)}
    agent_of = {participant: f"player_{seat}" for seat, participant in enumerate(seating)}

    def dealt() -> tuple[Any, ...]:
        fresh = base.state_ref
        return (fresh.opener, tuple(fresh.boneyard), *fresh.hands)

    points = [0] * num_players
    zero_sum = [0.0] * num_players
    decisions = [0] * num_players
    think = [0.0] * num_players
    deals_seen = [dealt()]
    hands = blocked = actions = 0
    last_hand_points = [0] * num_players
    while True:
        agent_name = base.agent_selection
        participant = participant_of[agent_name]
        observation = base.observe(agent_name)
        # CPU time, not wall time: on a shared machine the agent's own cost is what is comparable.
        started = time.process_time()
        player = agents_by_participant[participant]
        action = player.act(observation_for(player, observation))
        if observation["action_mask"].sum() > 1:
            think[participant] += time.process_time() - started
            decisions[participant] += 1
        hand_number = state.hand_number
        env.step(action)
        actions += 1
        state = base.state_ref
        over = all(base.terminations.values())
        if over or state.hand_number != hand_number:
            # The infos and rewards of this step describe the hand that just ended, also when a
            # match dealt the next one within the same step.
            hands += 1
            infos = base.infos
            blocked += infos["player_0"]["blocked"]
            last_hand_points = [infos[agent_of[p]]["hand_points"] for p in range(num_players)]
            for p in range(num_players):
                points[p] += last_hand_points[p]
                zero_sum[p] += base.rewards[agent_of[p]]
            if over:
                break
            deals_seen.append(dealt())
            # The agents' reset() is documented as the start of a hand or a match.
            for player in agents_by_participant:
                player.reset()
    seat_of = {participant: seat for seat, participant in enumerate(seating)}
    result = state.result
    if episode == "match":
        scores = tuple(int(state.scores[seat_of[p]]) for p in range(num_players))
        credit = shared_first(scores)
    else:
        assert result is not None  # a hand episode ends with its hand, whose result stays
        scores = tuple(last_hand_points)
        if result.winner is not None:
            credit = tuple(float(seat_of[p] == result.winner) for p in range(num_players))
        else:  # a block with a shared lowest total: the tied lowest holders share the win
            credit = shared_first([-result.pips[seat_of[p]] for p in range(num_players)])
    outcome = GameOutcome(
        deal=deal,
        seating=tuple(seating),
        scores=scores,
        win_credit=credit,
        hands=hands,
        blocked_hands=blocked,
        actions=actions,
        points=tuple(points),
        zero_sum=tuple(zero_sum),
        decisions=tuple(decisions),
        think_seconds=tuple(think),
        deals_seen=tuple(deals_seen),
    )
    return outcome, None if recorder is None else recorder.record


# ---------------------------------------------------------------------------- backends


def play_deal(task: DealTask) -> list[GameOutcome]:
    """Every replay of one deal, in seating order, step by step; records written if asked."""
    deal_seed, later_hands_seed = (seed_sequence_int(task.seed, task.deal, part) for part in (0, 1))
    outcomes = []
    for replay, seating in enumerate(task.seatings):
        outcome, record = play_game(
            task.specs,
            task.episode,
            seating,
            deal_seed,
            later_hands_seed,
            (task.seed, task.deal, replay),
            players=None if task.records is None else task.labels,
            game=task.game,
            obs_type=task.obs_type,
        )
        if record is not None and task.records is not None:
            write_record(record, Path(task.records) / record_name(task.deal, seating))
        outcomes.append(outcome)
    return outcomes


def play_step_by_step(
    tasks: Sequence[DealTask], options: RunOptions, advance: Callable[[int], None]
) -> list[GameOutcome]:
    """The reference backend: every game through the PettingZoo environment, on ``options.workers`` processes."""
    outcomes: list[GameOutcome] = []
    # The workers run the agents in NumPy and plain Python only, so a parent that ran torch
    # threads is safe to fork.
    chunk = max(1, len(tasks) // (options.workers * 16))
    for batch in process_map(play_deal, tasks, options.workers, chunk):
        outcomes.extend(batch)
        advance(len(batch))
    return outcomes


def backend_for(specs: Sequence[Spec], options: RunOptions) -> Backend:
    """The backend that plays a table of these agents: batched where every agent chooses for a
    batch of games alike (:func:`arena.batched_play.batchable`), no records are asked for and the
    game is the seeds' (the batched agents read the seeds' observation layout), else step by step."""
    if options.batched and options.records is None and options.game.is_default and batchable(specs):
        return play_batched
    return play_step_by_step


# ---------------------------------------------------------------------------- tables


def plan_deals(table: TablePlan, options: RunOptions, records: Path | None) -> list[DealTask]:
    """The deals one table plays: whole replay groups with ``duplicate``, else one seating per deal."""
    frozen = tuple((name, tuple(sorted(kwargs.items()))) for name, kwargs in table.specs)
    rotations = seatings_for(options.num_players, "rotations")
    order = seatings_for(options.num_players, options.seatings)
    directory = None if records is None else str(records)
    return [
        DealTask(
            frozen,
            table.labels,
            options.episode,
            options.seed,
            deal,
            tuple(order) if options.duplicate else (rotations[deal % len(rotations)],),
            directory,
            options.game,
            table_obs_type(table.specs, options.obs_type),
        )
        for deal in range(options.num_deals)
    ]


def table_directory(labels: Sequence[str]) -> str:
    """A file-system-safe directory name for a table: ``3p_heaviest_vs_variety_vs_ismcts_simulations=50``."""
    safe = [re.sub(r"[^A-Za-z0-9._=,+-]+", "_", label).strip("_") for label in labels]
    return f"{len(labels)}p_" + "_vs_".join(safe)


def play_tables(tables: Sequence[TablePlan], options: RunOptions, description: str) -> list[list[GameOutcome]]:
    """Play every table; per table, its games in deal order.

    Every table plays the same deals (same ``options.seed``): differences between tables then
    come from the agents, not from the cards. Tables that share a backend are played in one
    call, so that one worker pool serves them all.
    """
    from tqdm.auto import tqdm

    check_run_size(len(tables), options)  # before any deal is planned
    check_specs_play_variant([spec for table in tables for spec in table.specs], options.game)
    directories: list[Path | None] = [None] * len(tables)
    if options.records is not None:
        names = [table_directory(table.labels) for table in tables]
        for index, name in enumerate(names):
            unique = name if names.count(name) == 1 else f"{name}_{index}"
            directories[index] = check_writable("records", Path(options.records) / unique, directory=True)
    plans = [plan_deals(table, options, directory) for table, directory in zip(tables, directories)]
    groups: dict[Backend, list[int]] = {}
    for index, table in enumerate(tables):
        groups.setdefault(backend_for(table.specs, options), []).append(index)
    per_table: list[list[GameOutcome]] = [[] for _ in tables]
    total = len(tables) * options.games_per_table
    with tqdm(total=total, desc=description, unit="game", disable=not options.progress, dynamic_ncols=True) as bar:
        for backend, indices in groups.items():
            outcomes = backend([task for index in indices for task in plans[index]], options, bar.update)
            position = 0
            for index in indices:
                size = sum(len(task.seatings) for task in plans[index])
                per_table[index] = outcomes[position : position + size]
                position += size
    return per_table


def evaluate(players: Sequence[AgentSpec], num_games: int = 2000, **settings: Unpack[RunSettings]) -> EvaluationResult:
    """Play ``num_games`` games between ``players`` and measure each participant.

    Args:
        players: one agent spec per participant (2 to 4): a registry name (``"variety"``, also
            ``"ismcts:simulations=200"``) or ``(name, kwargs)`` such as
            ``("network", {"path": "agents/policies/ppo_2p.npz"})``. The same name twice makes
            two participants.
        num_games: games in total, every duplicate replay counted; rounded up to whole deals.
        settings: how the games are played, the :class:`~arena.options.RunOptions` fields
            ``episode`` (``"match"``), ``duplicate`` (True), ``seatings``, ``seed``, ``workers``,
            ``progress``, ``records`` (a directory; each game's record is written into a
            sub-directory named after the table, :func:`table_directory`, one file per game,
            :func:`record_name`), ``batched`` and ``obs_type`` (what the environment gives:
            by default what the agents read, :func:`arena.options.table_obs_type`).

    Returns:
        An :class:`~arena.results.EvaluationResult`; ``summary()`` is a readable table,
        ``to_json()`` the data.
    """
    specs = normalise_specs("players", players, minimum=2, maximum=4)
    options = RunOptions(len(specs), num_games, **settings)
    check_buildable(specs)
    labels = participant_labels(specs)
    started = time.perf_counter()
    [games] = play_tables([TablePlan(tuple(specs), tuple(labels))], options, " vs ".join(labels))
    return EvaluationResult.from_run(
        options,
        num_games=len(games),
        num_deals=options.num_deals,
        participants=summarise(labels, specs, games),
        seconds=time.perf_counter() - started,
        games=games,
    )

