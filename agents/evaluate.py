"""Honest evaluation of Draw agents: duplicate deals, rotated seats, Wilson intervals.

``evaluate(players, num_games, ...)`` plays games (whole matches or single hands) between 2 to 4
participants and reports, per participant, the win rate with its Wilson 95% interval, points per
hand, block rate and hand length. ``draw-eval`` is the command line around it; round-robin
leagues with openskill ratings and budget sweeps live in :mod:`agents.league`.

How luck is cut (the *duplicate* format):

* A *deal* fixes the first hand (tiles of each seat, boneyard order, opener) and the seed of the
  environment RNG that deals every later hand of a match. Each deal is replayed under several
  *seatings* (which participant sits in which seat); the cards stay with the seats, the
  participants move. With 2 players the seatings are both orders; with 3 or 4 players they are
  the cyclic rotations (``seatings="rotations"``, the default: n replays, every participant plays
  every seat of every deal once) or all n! orders (``seatings="permutations"``, also balancing
  who sits after whom). ``num_games`` counts every replay and is rounded up to a whole number of
  deals.
* Without ``duplicate`` every game has its own deal and the seating still rotates with the game
  index, so no participant keeps the first seat.

Counting: a game's winner is the participant with the highest final score (match) or the hand's
scorer (hand). A shared first place (a drawn match, or a blocked hand whose lowest total is
shared) gives each of the k tied participants 1/k of a win and counts as a *draw* for them. The
win rate is (wins + draw credit) / games, and its Wilson interval treats that credit as the
success count. Hand length is the number of actions (placements, draws and passes of all
players) in a hand.

Results do not depend on the number of worker processes: every deal and every seeded agent is
seeded from ``seed``, the deal index and the seating, and results are gathered in deal order.
Only the timing fields (``decisions_per_second``, ``think_seconds``, ``seconds``) vary between
runs. Decisions per second count only real decisions (two or more legal actions), per second of
the CPU time the agent spent in them (one process, one thread: the agent's own cost, whatever the
load of the machine).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import itertools
import json
import math
import multiprocessing
import random
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import agents
from draw_env.draw_dominoes import EPISODES, raw_env
from draw_env.rules import DrawGame

#: An agent as the evaluator takes it: a registry name, or a name and its keyword arguments.
AgentSpec = str | tuple[str, Mapping[str, Any]]
SEATINGS = ("rotations", "permutations")
GAME_NOUNS = {"hand": "hands", "match": "matches"}
#: The 97.5% quantile of the standard normal distribution: a two-sided 95% interval.
Z_95 = 1.959963984540054


# ---------------------------------------------------------------------------- statistics


def wilson_interval(successes: float, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion.

    Args:
        successes: the success count (may be fractional when draws count as half a win).
        trials: the number of trials, at least 1.
        z: the normal quantile; the default gives a two-sided 95% interval.

    Returns:
        ``(low, high)``, both in ``[0, 1]``.
    """
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials!r}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in 0..trials ({trials}), got {successes!r}")
    proportion = successes / trials
    denominator = 1 + z * z / trials
    centre = (proportion + z * z / (2 * trials)) / denominator
    half_width = (
        z * math.sqrt(proportion * (1 - proportion) / trials + z * z / (4 * trials * trials)) / denominator
    )
    # The interval always holds the proportion; the clamps only undo rounding (0/n gives 1e-17).
    return max(0.0, min(proportion, centre - half_width)), min(1.0, max(proportion, centre + half_width))


# ---------------------------------------------------------------------------- agent specs


def parse_value(text: str) -> Any:
    """A command-line keyword value: int, float, ``true``/``false``/``none``, else the string."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    return text


def parse_agent_spec(text: str) -> tuple[str, dict[str, Any]]:
    """Parse ``"name"`` or ``"name:key=value,key=value"`` (e.g. ``"ismcts:simulations=200"``).

    Raises:
        ValueError: on an unknown agent name or a keyword without ``=``.
    """
    name, _, arguments = text.partition(":")
    name = name.strip()
    if name not in agents.available():
        raise ValueError(f"agent must be one of {', '.join(agents.available())}, got {name!r} (in {text!r})")
    kwargs: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in arguments.split(","))):
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"agent keyword arguments are written key=value, got {item!r} in {text!r}")
        kwargs[key.strip()] = parse_value(value.strip())
    return name, kwargs


def normalise_spec(spec: AgentSpec) -> tuple[str, dict[str, Any]]:
    """``spec`` as ``(name, kwargs)``; a string may carry ``:key=value`` arguments."""
    if isinstance(spec, str):
        return parse_agent_spec(spec)
    if (
        isinstance(spec, (tuple, list))
        and len(spec) == 2
        and isinstance(spec[0], str)
        and isinstance(spec[1], Mapping)
    ):
        name, kwargs = parse_agent_spec(spec[0])
        kwargs.update(spec[1])
        return name, kwargs
    raise ValueError(f"an agent spec must be a name or a (name, kwargs) pair, got {spec!r}")


def spec_label(name: str, kwargs: Mapping[str, Any]) -> str:
    """A readable label such as ``ismcts(simulations=200)``."""
    if not kwargs:
        return name
    return f"{name}({', '.join(f'{key}={value}' for key, value in sorted(kwargs.items()))})"


def _participant_labels(specs: Sequence[tuple[str, dict[str, Any]]]) -> list[str]:
    """Labels, made unique with ``#2``, ``#3``... when the same agent takes several seats."""
    labels = [spec_label(name, kwargs) for name, kwargs in specs]
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if labels.count(label) == 1 else f"{label}#{seen[label]}")
    return unique


@functools.cache
def takes_seed(name: str) -> bool:
    """Whether the agent registered as ``name`` accepts a ``seed`` argument."""
    return "seed" in inspect.signature(agents.agent_class(name)).parameters


def seed_sequence_int(*entropy: int) -> int:
    """A 63-bit seed drawn from NumPy's ``SeedSequence`` of ``entropy`` (all non-negative)."""
    return int(np.random.SeedSequence(list(entropy)).generate_state(2, np.uint64)[0] >> np.uint64(1))


# ---------------------------------------------------------------------------- results


def write_json(data: dict[str, Any], path: str | Path | None = None) -> str:
    """``data`` as indented JSON text, also written to ``path`` (parents created) if given."""
    text = json.dumps(data, indent=2)
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text + "\n")
    return text


class JsonResult:
    """JSON export for the result dataclasses of the evaluation."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    def to_json(self, path: str | Path | None = None) -> str:
        """The results as JSON text, also written to ``path`` if given."""
        return write_json(self.to_dict(), path)


@dataclass(frozen=True)
class GameRecord:
    """One game (a match or a hand) as played.

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


@dataclass
class EvaluationResult:
    """What :func:`evaluate` measured; ``participants`` follow the order of ``players``."""

    num_players: int
    episode: str
    duplicate: bool
    seatings: str
    seed: int
    num_games: int
    num_deals: int
    participants: list[ParticipantStats]
    seconds: float
    games: list[GameRecord] = field(repr=False)

    def to_dict(self, include_games: bool = False) -> dict[str, Any]:
        """A JSON-ready dict; per-game records only if ``include_games``."""
        data = asdict(self)
        if include_games:
            for game in data["games"]:
                del game["deals_seen"]
        else:
            del data["games"]
        return data

    def to_json(self, path: str | Path | None = None, include_games: bool = False) -> str:
        """The results as JSON text, also written to ``path`` if given."""
        return write_json(self.to_dict(include_games), path)

    def summary(self) -> str:
        """A readable table, one row per participant."""
        format_name = "duplicate" if self.duplicate else "independent deals"
        if self.duplicate and self.num_players > 2:
            format_name += f", {self.seatings}"
        lines = [
            (
                f"{self.num_games} {GAME_NOUNS[self.episode]}, {self.num_players} players, {format_name} "
                f"({self.num_deals} deals), seed {self.seed}, {self.seconds:.1f} s"
            ),
        ]
        width = max(len("participant"), *(len(p.label) for p in self.participants))
        header = (
            f"{'participant':<{width}}  {'win rate':>8}  {'95% interval':>15}  {'W-D-L':>13}  "
            f"{'pts/hand':>8}  {'zs/hand':>7}  {'blocked':>7}  {'actions/hand':>12}  {'dec/s':>8}"
        )
        lines += [header, "-" * len(header)]
        for p in self.participants:
            losses = p.games - p.wins - p.draws
            lines.append(
                f"{p.label:<{width}}  {p.win_rate:>8.3f}  [{p.win_low:.3f}, {p.win_high:.3f}]  "
                f"{f'{p.wins}-{p.draws}-{losses}':>13}  {p.points_per_hand:>8.2f}  {p.zero_sum_per_hand:>7.2f}  "
                f"{p.block_rate:>7.3f}  {p.actions_per_hand:>12.1f}  {p.decisions_per_second:>8.0f}"
            )
        lines.append(
            f"Fair share of wins: {1 / self.num_players:.3f}. Draws count 1/k of a win for k tied leaders."
        )
        return "\n".join(lines)


# ---------------------------------------------------------------------------- playing


def seatings_for(num_players: int, scheme: str) -> list[tuple[int, ...]]:
    """The seatings one deal is replayed under: ``seating[seat]`` is a participant index.

    Args:
        num_players: 2, 3 or 4.
        scheme: ``"rotations"`` (n cyclic rotations) or ``"permutations"`` (all n! orders).
    """
    base = tuple(range(num_players))
    if scheme == "rotations":
        return [base[shift:] + base[:shift] for shift in range(num_players)]
    return list(itertools.permutations(base))


@dataclass(frozen=True)
class _DealTask:
    """Everything a worker needs to play every replay of one deal (picklable)."""

    specs: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]
    episode: str
    seed: int
    deal: int
    seatings: tuple[tuple[int, ...], ...]


#: Agents that take no seed are built once per process and reused (a PPO agent loads a file).
_unseeded_agents: dict[tuple[str, tuple[tuple[str, Any], ...]], agents.Agent] = {}


def _build_agent(
    name: str, kwargs: tuple[tuple[str, Any], ...], seed: int, deal: int, replay: int, participant: int
) -> agents.Agent:
    """A fresh agent seeded from the game's coordinates, or a cached unseeded one."""
    if not takes_seed(name):
        key = (name, kwargs)
        if key not in _unseeded_agents:
            _unseeded_agents[key] = agents.make(name, **dict(kwargs))
        return _unseeded_agents[key]
    options = dict(kwargs)
    # A seed given in the spec is mixed in, so "ismcts:seed=1" and "ismcts:seed=2" still differ.
    user_seed = options.pop("seed", None)
    entropy = [seed, deal, replay, participant] + ([] if user_seed is None else [int(user_seed)])
    return agents.make(name, seed=seed_sequence_int(*entropy), **options)


def deal_options(num_players: int, deal_seed: int) -> dict[str, Any]:
    """The reset options that fix the first hand of a deal: hands by seat, boneyard, opener."""
    state = DrawGame(num_players).new_state(random.Random(deal_seed))
    return {
        "hands": [state.hand_tiles(seat) for seat in range(num_players)],
        "boneyard": list(state.boneyard),
        "opener": state.opener,
    }


def _shared_first(values: Sequence[int]) -> tuple[float, ...]:
    """1/k of a win to each of the k participants with the highest value, 0 to the others."""
    best = max(values)
    leaders = sum(1 for value in values if value == best)
    return tuple(1.0 / leaders if value == best else 0.0 for value in values)


def play_game(
    specs: Sequence[tuple[str, Mapping[str, Any]]],
    episode: str,
    seating: Sequence[int],
    deal_seed: int,
    later_hands_seed: int,
    agent_seed: tuple[int, int, int],
) -> GameRecord:
    """Play one game of the deal ``deal_seed`` with ``seating[seat]`` = participant index.

    Args:
        specs: ``(name, kwargs)`` per participant.
        episode: ``"hand"`` or ``"match"``.
        seating: participant index per seat.
        deal_seed: seeds the first hand (see :func:`deal_options`).
        later_hands_seed: seeds the environment RNG that deals a match's later hands.
        agent_seed: ``(seed, deal, replay)``, from which seeded agents get their seeds.
    """
    num_players = len(specs)
    seed, deal, replay = agent_seed
    frozen = [(name, tuple(sorted(kwargs.items()))) for name, kwargs in specs]
    players = [
        _build_agent(name, kwargs, seed, deal, replay, participant)
        for participant, (name, kwargs) in enumerate(frozen)
    ]
    env = raw_env(num_players=num_players, episode=episode, reward="points")
    env.reset(seed=later_hands_seed, options=deal_options(num_players, deal_seed))
    for player in players:
        player.reset()
    state = env.state_ref
    participant_of = {f"player_{seat}": participant for seat, participant in enumerate(seating)}
    seat_of = {participant: seat for seat, participant in enumerate(seating)}

    def dealt() -> tuple[Any, ...]:
        fresh = env.state_ref
        return (fresh.opener, tuple(fresh.boneyard), *fresh.hands)

    points = [0] * num_players
    zero_sum = [0.0] * num_players
    decisions = [0] * num_players
    think = [0.0] * num_players
    deals_seen = [dealt()]
    hands = blocked = actions = 0
    last_hand_points = [0] * num_players
    while True:
        agent_name = env.agent_selection
        participant = participant_of[agent_name]
        observation = env.observe(agent_name)
        # CPU time, not wall time: on a shared machine the agent's own cost is what is comparable.
        started = time.process_time()
        action = players[participant].act(observation)
        if observation["action_mask"].sum() > 1:
            think[participant] += time.process_time() - started
            decisions[participant] += 1
        hand_number = state.hand_number
        env.step(action)
        actions += 1
        state = env.state_ref
        over = all(env.terminations.values())
        if over or state.hand_number != hand_number:
            hands += 1
            infos = env.infos
            blocked += infos["player_0"]["blocked"]
            hand_points = [infos[f"player_{seat_of[p]}"]["hand_points"] for p in range(num_players)]
            total = sum(hand_points)
            for p in range(num_players):
                points[p] += hand_points[p]
                zero_sum[p] += hand_points[p] - (total - hand_points[p]) / (num_players - 1)
            last_hand_points = hand_points
            if over:
                break
            deals_seen.append(dealt())
            # The agents' reset() is documented as the start of a hand or a match.
            for player in players:
                player.reset()
    result = state.result
    if episode == "match":
        scores = tuple(int(state.scores[seat_of[p]]) for p in range(num_players))
        credit = _shared_first(scores)
    else:
        scores = tuple(last_hand_points)
        if result.winner is not None:
            credit = tuple(float(seat_of[p] == result.winner) for p in range(num_players))
        else:  # a block with a shared lowest total: the tied lowest holders share the win
            credit = _shared_first([-result.pips[seat_of[p]] for p in range(num_players)])
    return GameRecord(
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


def _play_deal(task: _DealTask) -> list[GameRecord]:
    """Every replay of one deal, in seating order."""
    deal_seed, later_hands_seed = (seed_sequence_int(task.seed, task.deal, part) for part in (0, 1))
    specs = [(name, dict(kwargs)) for name, kwargs in task.specs]
    return [
        play_game(specs, task.episode, seating, deal_seed, later_hands_seed, (task.seed, task.deal, replay))
        for replay, seating in enumerate(task.seatings)
    ]


def run_tasks(tasks: Sequence[_DealTask], workers: int, progress: bool, description: str) -> list[GameRecord]:
    """Play ``tasks`` on ``workers`` processes; the records come back in task order."""
    from tqdm.auto import tqdm

    total = sum(len(task.seatings) for task in tasks)
    records: list[GameRecord] = []
    with tqdm(total=total, desc=description, unit="game", disable=not progress, dynamic_ncols=True) as bar:
        if workers == 1:
            results: Iterator[list[GameRecord]] = map(_play_deal, tasks)
            for batch in results:
                records.extend(batch)
                bar.update(len(batch))
            return records
        # "fork" where the platform has it: workers start at once, and also from a script read on
        # stdin or a notebook, which "spawn" and "forkserver" cannot re-import. The workers run
        # the agents in NumPy and plain Python only, so a parent that ran torch threads is safe.
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        chunk = max(1, len(tasks) // (workers * 16))
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            for batch in pool.map(_play_deal, tasks, chunksize=chunk):
                records.extend(batch)
                bar.update(len(batch))
    return records


def check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def plan_tasks(
    specs: Sequence[tuple[str, Mapping[str, Any]]],
    num_games: int,
    episode: str,
    duplicate: bool,
    seed: int,
    seatings: str,
) -> list[_DealTask]:
    """The deals to play: whole replay groups with ``duplicate``, else one seating per deal."""
    frozen = tuple((name, tuple(sorted(kwargs.items()))) for name, kwargs in specs)
    order = seatings_for(len(specs), seatings)
    if duplicate:
        num_deals = -(-num_games // len(order))
        return [_DealTask(frozen, episode, seed, deal, tuple(order)) for deal in range(num_deals)]
    rotations = seatings_for(len(specs), "rotations")
    return [
        _DealTask(frozen, episode, seed, deal, (rotations[deal % len(rotations)],))
        for deal in range(num_games)
    ]


def summarise(
    labels: Sequence[str], specs: Sequence[tuple[str, Mapping[str, Any]]], records: Sequence[GameRecord]
) -> list[ParticipantStats]:
    """Per-participant statistics over ``records``."""
    stats = []
    games = len(records)
    hands = sum(r.hands for r in records)
    blocked = sum(r.blocked_hands for r in records)
    actions = sum(r.actions for r in records)
    for p, (label, (name, kwargs)) in enumerate(zip(labels, specs)):
        credit = sum(r.win_credit[p] for r in records)
        wins = sum(1 for r in records if r.win_credit[p] == 1.0)
        draws = sum(1 for r in records if 0.0 < r.win_credit[p] < 1.0)
        low, high = wilson_interval(credit, games)
        think = sum(r.think_seconds[p] for r in records)
        decisions = sum(r.decisions[p] for r in records)
        stats.append(
            ParticipantStats(
                label=label,
                agent=name,
                kwargs=dict(kwargs),
                games=games,
                wins=wins,
                draws=draws,
                win_rate=credit / games,
                win_low=low,
                win_high=high,
                hands=hands,
                points_per_hand=sum(r.points[p] for r in records) / hands,
                zero_sum_per_hand=sum(r.zero_sum[p] for r in records) / hands,
                block_rate=blocked / hands,
                actions_per_hand=actions / hands,
                decisions_per_second=decisions / think if think > 0 else 0.0,
            )
        )
    return stats


def evaluate(
    players: Sequence[AgentSpec],
    num_games: int = 2000,
    episode: str = "match",
    duplicate: bool = True,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    seatings: str = "rotations",
) -> EvaluationResult:
    """Play ``num_games`` games between ``players`` and measure each participant.

    Args:
        players: one agent spec per participant (2 to 4): a registry name (``"variety"``, also
            ``"ismcts:simulations=200"``) or ``(name, kwargs)`` such as ``("ppo", {"path": "x.zip"})``.
            The same name twice makes two participants.
        num_games: games in total, every duplicate replay counted; rounded up to whole deals.
        episode: ``"match"`` (to 100 points, or 61 with 3-4 players) or ``"hand"``.
        duplicate: replay each deal under every seating of ``seatings``.
        seed: seeds every deal and every seeded agent.
        workers: processes to play on (1 plays in this process).
        progress: show a tqdm progress bar.
        seatings: with 3-4 players and ``duplicate``, ``"rotations"`` or ``"permutations"``.

    Returns:
        An :class:`EvaluationResult`; ``summary()`` is a readable table, ``to_json()`` the data.
    """
    if isinstance(players, (str, bytes)) or not isinstance(players, Sequence) or not 2 <= len(players) <= 4:
        raise ValueError(f"players must be a sequence of 2 to 4 agent specs, got {players!r}")
    specs = [normalise_spec(spec) for spec in players]
    num_games = check_int("num_games", num_games, 1)
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {', '.join(map(repr, EPISODES))}, got {episode!r}")
    if not isinstance(duplicate, bool):
        raise ValueError(f"duplicate must be True or False, got {duplicate!r}")
    seed = check_int("seed", seed, 0)
    workers = check_int("workers", workers, 1)
    if seatings not in SEATINGS:
        raise ValueError(f"seatings must be one of {', '.join(map(repr, SEATINGS))}, got {seatings!r}")
    # Build each agent once here so that a bad keyword fails now, not inside a worker.
    for name, kwargs in specs:
        agents.make(name, **kwargs)
    labels = _participant_labels(specs)
    tasks = plan_tasks(specs, num_games, episode, duplicate, seed, seatings)
    started = time.perf_counter()
    records = run_tasks(tasks, workers, progress, " vs ".join(labels))
    return EvaluationResult(
        num_players=len(specs),
        episode=episode,
        duplicate=duplicate,
        seatings=seatings,
        seed=seed,
        num_games=len(records),
        num_deals=len(tasks),
        participants=summarise(labels, specs, records),
        seconds=time.perf_counter() - started,
        games=records,
    )


# ---------------------------------------------------------------------------- chart


def plot_evaluation(result: EvaluationResult, path: str | Path) -> None:
    """A PNG: each participant's win rate with its Wilson 95% interval, and the fair share."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [p.label for p in result.participants]
    rates = np.array([p.win_rate for p in result.participants])
    errors = np.array(
        [
            [p.win_rate - p.win_low for p in result.participants],
            [p.win_high - p.win_rate for p in result.participants],
        ]
    )
    figure, axis = plt.subplots(figsize=(1.8 + 1.6 * len(labels), 4))
    axis.bar(range(len(labels)), rates, yerr=errors, capsize=6, color="tab:blue", alpha=0.8)
    axis.axhline(1 / result.num_players, color="grey", linestyle="--", label="fair share")
    axis.set_xticks(range(len(labels)), labels, rotation=15, ha="right")
    axis.set_ylabel("win rate (Wilson 95% interval)")
    axis.set_ylim(0, 1)
    axis.set_title(f"{result.num_games} {GAME_NOUNS[result.episode]}, {result.num_players} players")
    axis.legend()
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


# ---------------------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-eval",
        description=(
            "Evaluate Draw dominoes agents in duplicate format: each deal is replayed with the seats "
            "permuted, and every participant gets a win rate with a Wilson 95%% interval."
        ),
        epilog=(
            "Agents: " + ", ".join(agents.available()) + ". Keyword arguments follow a colon, e.g. "
            "ismcts:simulations=200,seed=1 or ppo:path=policies/ppo_2p.zip.\n"
            "Examples:\n"
            "  draw-eval heaviest variety --games 1000 --workers 2 --json results/hv.json --png results/hv.png\n"
            "  draw-eval --league random random_forced heaviest variety ismcts --players 3 --games 60\n"
            "  draw-eval ismcts variety --sweep simulations=25,50,100,200 --games 200"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("agents", nargs="+", metavar="AGENT", help="agent specs: name or name:key=value,...")
    parser.add_argument(
        "--players",
        type=int,
        choices=(2, 3, 4),
        help="players per table (default: the number of agents; required with --league)",
    )
    parser.add_argument(
        "--games", type=int, default=1000, help="games in total, or per table with --league (default 1000)"
    )
    parser.add_argument("--episode", choices=EPISODES, default="match", help="a game is a match or a hand")
    parser.add_argument(
        "--no-duplicate", dest="duplicate", action="store_false", help="independent deals instead of replays"
    )
    parser.add_argument(
        "--seatings", choices=SEATINGS, default="rotations", help="replays per deal with 3-4 players"
    )
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the seeded agents")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--json", type=Path, help="write the results as JSON here")
    parser.add_argument("--png", type=Path, help="write a chart here")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--league",
        action="store_true",
        help="round robin of every table of --players agents, openskill ratings",
    )
    mode.add_argument(
        "--sweep",
        metavar="KEY=V1,V2,...",
        help="evaluate the first agent against the others once per value of one keyword (a budget curve)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The ``draw-eval`` command."""
    from agents import league as league_module

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        specs = [parse_agent_spec(text) for text in args.agents]
        common = {
            "episode": args.episode,
            "duplicate": args.duplicate,
            "seed": args.seed,
            "workers": args.workers,
            "progress": not args.quiet,
            "seatings": args.seatings,
        }
        if args.league:
            if args.players is None:
                raise ValueError("--league needs --players (2, 3 or 4)")
            outcome = league_module.league(specs, args.players, args.games, **common)
            plot = league_module.plot_league
        elif args.sweep:
            if args.players is not None and args.players != len(specs):
                raise ValueError(f"--players is {args.players} but {len(specs)} agents were given")
            key, values = league_module.parse_sweep(args.sweep)
            outcome = league_module.sweep(specs[0], specs[1:], key, values, args.games, **common)
            plot = league_module.plot_sweep
        else:
            if args.players is not None and args.players != len(specs):
                raise ValueError(
                    f"--players is {args.players} but {len(specs)} agents were given; "
                    "give one agent per seat (the same name twice is allowed) or use --league"
                )
            outcome = evaluate(specs, args.games, **common)
            plot = plot_evaluation
    except ValueError as error:
        parser.error(str(error))
    print(outcome.summary())
    if args.json:
        outcome.to_json(args.json)
        print(f"JSON written to {args.json}")
    if args.png:
        plot(outcome, args.png)
        print(f"Chart written to {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
