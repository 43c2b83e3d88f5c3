"""The batched evaluation backend: many games of a table at once on :class:`draw_env.vector.DrawVectorEnv`.

Tables whose participants all choose for a batch of games with the same play as alone
(:func:`batchable`: deterministic agents with a batched version in the registry, such as
``heaviest``, ``variety`` and deterministic ``network`` policies) are played here instead of step by step: every
game of the run is one row of the batched environment, and at each step each participant
chooses for all the games where it is to act in one call (one forward pass of a network for all
of them). The results have the same format and the same duplicate deals as the step-by-step
backend (:func:`arena.evaluation.play_step_by_step`); how they may differ in matches is on the
docs page "Evaluation" (batched play). Think time is the CPU time of each batched call, shared
equally among the real decisions (two or more legal actions) it made. Game records are written
by the step-by-step backend only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import agents
from agents.base import observations_for
from agents.batched import BatchActor, batch_actor
from arena.deals import DealTask, deal_options
from arena.options import RunOptions
from arena.results import GameOutcome
from arena.specs import Spec, build_agent, seed_sequence_int
from arena.stats import shared_first
from draw_env.rules import zero_sum_points
from draw_env.vector import DrawVectorEnv, VectorStep

#: Games played in one batched environment at a time (memory stays small, batches stay large).
CHUNK = 2048


def batchable(specs: Sequence[Spec]) -> bool:
    """True if every participant can choose for a batch of games with the same play as alone: it
    has a batched version and plays deterministically (the registry's entries)."""
    return all(
        agents.entry(name).batched is not None and agents.plays_deterministically(name, kwargs)
        for name, kwargs in specs
    )


def _batch_agent(name: str, kwargs: dict[str, Any], num_players: int) -> BatchActor:
    """A batched agent for a :func:`batchable` spec, built as the step-by-step backend builds it."""
    return batch_actor(name, kwargs, num_players, build=build_agent)


def _deal_key(out: VectorStep, game: int) -> tuple[Any, ...]:
    """Game ``game``'s hand in play as dealt, as :attr:`GameOutcome.deals_seen` holds it."""
    boneyard = tuple(int(t) for t in out.deal_boneyard[game] if t >= 0)
    hands = (int(mask) for mask in out.deal_hands[game])
    return (int(out.deal_opener[game]), boneyard, *hands)


def play_batched(tasks: Sequence[DealTask], options: RunOptions, advance: Callable[[int], None]) -> list[GameOutcome]:
    """Play every replay of every task, task after task, each task's seatings in order."""
    games = [(task, replay, seating) for task in tasks for replay, seating in enumerate(task.seatings)]
    outcomes: list[GameOutcome] = []
    for start in range(0, len(games), CHUNK):
        chunk = games[start : start + CHUNK]
        by_specs: dict[tuple, list[int]] = {}
        for index, (task, _, _) in enumerate(chunk):
            by_specs.setdefault(task.specs, []).append(index)
        played: list[GameOutcome | None] = [None] * len(chunk)
        for specs, indices in by_specs.items():
            for index, outcome in zip(indices, _play_games([chunk[i] for i in indices], specs, options)):
                played[index] = outcome
        outcomes.extend(outcome for outcome in played if outcome is not None)
        advance(len(chunk))
    return outcomes


def _play_games(
    games: Sequence[tuple[DealTask, int, tuple[int, ...]]], specs: tuple, options: RunOptions
) -> list[GameOutcome]:
    n, players, episode = len(games), options.num_players, options.episode
    participants = [_batch_agent(name, dict(kwargs), players) for name, kwargs in specs]
    venv = DrawVectorEnv(n, players, episode, "zero_sum", autoreset=False, obs_type=games[0][0].obs_type)
    first_hands = [deal_options(players, seed_sequence_int(task.seed, task.deal, 0)) for task, _, _ in games]
    seeds = [seed_sequence_int(task.seed, task.deal, 1) for task, _, _ in games]
    out = venv.reset(options={"deals": first_hands, "seeds": seeds})
    seating = np.array([seating for _, _, seating in games], np.int64)  # participant per seat
    rows = np.arange(n)
    finished = np.zeros(n, bool)
    actions_taken = np.zeros(n, np.int64)
    hands = np.zeros(n, np.int64)
    blocked = np.zeros(n, np.int64)
    points = np.zeros((n, players), np.int64)  # by participant
    zero_sum = np.zeros((n, players))
    decisions = np.zeros((n, players), np.int64)
    think = np.zeros((n, players))
    last_hand_points = np.zeros((n, players), np.int64)
    deals_seen = [[_deal_key(out, game)] for game in range(n)]
    while not finished.all():
        acting = seating[rows, out.current_player]
        actions = np.zeros(n, np.int64)
        real = out.action_mask.sum(axis=1) > 1
        for participant, agent in enumerate(participants):
            mine = np.flatnonzero(~finished & (acting == participant))
            if not mine.size:
                continue
            started = time.process_time()
            masks = out.action_mask[mine]
            actions[mine] = agent.act_batch(observations_for(agent, out.observation[mine], masks), masks)
            spent = time.process_time() - started
            deciding = mine[real[mine]]
            decisions[deciding, participant] += 1
            if deciding.size:
                think[deciding, participant] += spent / deciding.size
        live = ~finished
        hand_number = out.hand_number
        out = venv.step(actions)
        actions_taken[live] += 1
        new_hand = out.hand_number != hand_number
        ended = live & (out.terminated | new_hand)
        if ended.any():
            # The step's infos are by seat; the outcome counts by participant.
            by_participant = np.empty_like(points[ended])
            which = np.arange(int(ended.sum()))
            for seat in range(players):
                by_participant[which, seating[ended, seat]] = out.hand_points[ended, seat]
            points[ended] += by_participant
            # In float64 from the points, as the step-by-step backend sums them (the batched
            # environment's rewards are float32).
            zero_sum[ended] += [zero_sum_points(row) for row in by_participant.tolist()]
            last_hand_points[ended] = by_participant
            hands[ended] += 1
            blocked[ended] += out.blocked[ended]
        for started_hand in np.flatnonzero(live & new_hand & ~out.terminated):
            deals_seen[started_hand].append(_deal_key(out, int(started_hand)))
        finished |= out.terminated
    outcomes = []
    # Ended games keep the infos of the hand that ended them: the last step's are every game's end.
    for game, (task, _, seats) in enumerate(games):
        seat_of = {participant: seat for seat, participant in enumerate(seats)}
        if episode == "match":
            scores = tuple(int(out.score[game, seat_of[p]]) for p in range(players))
            credit = shared_first(scores)
        else:
            scores = tuple(int(v) for v in last_hand_points[game])
            winner = int(out.winner[game])
            if winner >= 0:
                credit = tuple(float(seat_of[p] == winner) for p in range(players))
            else:  # a block with a shared lowest total: the tied lowest holders share the win
                credit = shared_first([-int(out.hand_pips[game, seat_of[p]]) for p in range(players)])
        outcomes.append(
            GameOutcome(
                deal=task.deal,
                seating=tuple(seats),
                scores=scores,
                win_credit=credit,
                hands=int(hands[game]),
                blocked_hands=int(blocked[game]),
                actions=int(actions_taken[game]),
                points=tuple(int(v) for v in points[game]),
                zero_sum=tuple(float(v) for v in zero_sum[game]),
                decisions=tuple(int(v) for v in decisions[game]),
                think_seconds=tuple(float(v) for v in think[game]),
                deals_seen=tuple(deals_seen[game]),
            )
        )
    return outcomes
