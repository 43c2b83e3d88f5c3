"""Expert iteration's data: self-play decisions labelled by the search, collected in lockstep shards.

See :mod:`train.exit` for the loop; :func:`play_shard` for how a shard is played.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import observation_of, observations_for
from agents.inputs import observed_layout
from agents.ismcts_compiled import REWARD_SCALE, CompiledISMCTSAgent
from agents.network_search import network_evaluator, root_guided_values
from agents.policy_file import PolicyWeights
from agents.policy_network import NumpyPolicy
from arena.parallel import process_map
from arena.specs import seed_sequence_int
from draw_env.io.files import atomic_path
from train.exit.config import TEACHER, ExitConfig
from train.run_dir import read_rows


@dataclass
class ExitData:
    """Self-play decisions, one row each (``O``, ``A``: the size of the variant's observation, or
    information state with ``obs_type: information_state``, and its actions: 258 and 58 in the
    seeds' game).

    Attributes:
        observations: ``(N, O)`` int16, the acting seat's observation (or information state).
        masks: ``(N, A)`` bool, its legal actions (always more than one).
        values: ``(N, A)`` float32, the search's value of each legal action (NaN elsewhere),
            zero-sum hand points / 40.
        outcomes: ``(N,)`` float32, the acting seat's zero-sum points of the hand / 40.
        seconds: wall-clock seconds the workers spent playing them.
    """

    observations: np.ndarray
    masks: np.ndarray
    values: np.ndarray
    outcomes: np.ndarray
    seconds: float = 0.0

    _KEYS = ("observations", "masks", "values", "outcomes")

    def __len__(self) -> int:
        return len(self.observations)

    def save(self, path: Path) -> None:
        arrays = {key: getattr(self, key) for key in self._KEYS}
        with atomic_path(path) as temporary:
            np.savez_compressed(temporary, seconds=np.float64(self.seconds), **arrays)

    @classmethod
    def load(cls, path: Path) -> ExitData:
        data = read_rows(path, {"observations": 2, "masks": 2, "values": 2, "outcomes": 1}, ("seconds",))
        return cls(*(data[key] for key in cls._KEYS), seconds=float(data["seconds"]))

    @classmethod
    def concatenate(cls, parts: Sequence[ExitData]) -> ExitData:
        return cls(
            *(np.concatenate([getattr(part, key) for part in parts]) for key in cls._KEYS),
            seconds=sum(part.seconds for part in parts),
        )


@dataclass(frozen=True)
class ShardTask:
    """One shard of an iteration's collection: ``games`` matches played in lockstep."""

    config: ExitConfig
    weights: PolicyWeights
    iteration: int
    shard: int
    games: int


def search_targets(values: np.ndarray, masks: np.ndarray, temperature: float) -> np.ndarray:
    """``softmax(values / temperature)`` over each row's legal actions, float32 ``(N, A)``."""
    scaled = np.where(masks, np.nan_to_num(values, nan=0.0) / temperature, -np.inf)
    weights = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def seat_partners(task: ShardTask) -> tuple[np.ndarray, list[str], dict[str, Any]]:
    """Who sits with the teacher (the search) in each game of a shard, drawn per game.

    Returns:
        The teacher's seat of each game, the partner drawn for its other seats (``partners``'
        names by weight; ``"teacher"``: the search plays them too), and the batched player of each
        other partner (:func:`train.learner_games.make_opponent`). The draws come from a
        generator of their own, so that a run whose only partner is the teacher plays the same.
    """
    from train.learner_games import make_opponent

    config = task.config
    rng = np.random.default_rng(seed_sequence_int(config.seed, task.iteration, task.shard, 1))
    names = list(config.partners)
    weights = np.array([config.partners[name] for name in names])
    drawn = [names[k] for k in rng.choice(len(names), size=task.games, p=weights / weights.sum())]
    seats = rng.integers(config.num_players, size=task.games)
    players = {
        name: make_opponent(name, config.num_players, seed=int(rng.integers(2**62)), game=config.game())
        for name in sorted(set(drawn) - {TEACHER})
    }
    return seats, drawn, players


def play_shard(task: ShardTask) -> ExitData:
    """Play one shard's episodes (``episode``: matches, or single hands) of the config's variant
    with the search as the teacher; record every decision it labels.

    The teacher sits at every seat, or (with other ``partners``) at one seat of each game, the
    partner drawn for the game at the others (:func:`seat_partners`); every decision, a
    partner's too, is searched and recorded, so the data also covers positions the teacher would
    not steer into.

    Before iteration ``guided_from`` the search is the plain compiled ``ismcts`` at
    ``plain_simulations``, one decision at a time. From then on it is guided by the network at
    ``simulations``: with ``guide: root``, the plain search plus the network's values of the root
    actions as ``prior_visits`` visits (:func:`agents.network_search.root_values`, one forward
    pass for all games per step); with ``guide: tree``, every game's decision searched at once
    with the network at every node (one :meth:`action_values_many` call). Forced moves are
    played without a search. The teacher's seat plays the best root action, or with
    probability ``explore`` one drawn from the search's target distribution; a partner's seat
    plays the partner's choice. Pending decisions
    get their outcome when their hand ends (rewards arrive, the match ends, or the next
    observation shows an empty line: a new hand).
    """
    from draw_env.vector import DrawVectorEnv

    started = time.perf_counter()
    config = task.config
    seed = seed_sequence_int(config.seed, task.iteration, task.shard)
    rng = np.random.default_rng(seed)
    guided = task.iteration >= config.guided_from
    policy = NumpyPolicy(task.weights)
    evaluate = network_evaluator(policy)
    value_weight = config.value_weight if policy.has_value else 0.0
    simulations = config.simulations if guided else config.plain_simulations
    search = CompiledISMCTSAgent(simulations=simulations, seed=int(rng.integers(2**62)))
    variant = config.game()  # (``game`` below is a game's index)
    num_actions = variant.num_actions
    env = DrawVectorEnv(task.games, config.num_players, episode=config.episode, reward="zero_sum",
                        autoreset=False, max_pip=variant.max_pip, hand_size=variant.hand_size,
                        protected=variant.protected, obs_type=config.obs_type)
    out = env.reset(seed=int(rng.integers(2**62)))
    observation, mask, current = out.observation, out.action_mask, out.current_player
    active = np.ones(task.games, bool)
    teacher_seat, partner_of, partners = seat_partners(task)
    records: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    seats: list[int] = []
    outcomes: list[float] = []
    pending: list[list[int]] = [[] for _ in range(task.games)]
    while active.any():
        games = np.flatnonzero(active)
        actions = np.argmax(mask[games], axis=1)
        searched = [i for i, g in enumerate(games) if mask[g].sum() > 1]
        if searched:
            views = [{"observation": observation[games[i]], "action_mask": mask[games[i]]} for i in searched]
            if guided and config.guide == "tree":
                results = search.action_values_many(
                    views, evaluate, value_weight=value_weight, prior_weight=config.prior_weight
                )
            elif guided:  # the plain search, then the network's root values as prior_visits visits
                results = root_guided_values(search, policy, views, config.temperature, config.prior_visits)
            else:  # one search at a time: without network calls inside, lockstep only costs
                results = [search.action_values(observation_of(view)) for view in views]
            for i, values_of in zip(searched, results, strict=True):
                game = games[i]
                values = np.full(num_actions, np.nan, np.float32)
                values[list(values_of)] = list(values_of.values())
                legal = mask[game] != 0
                if rng.random() < config.explore:
                    target = search_targets(values[None], legal[None], config.temperature)[0]
                    action = int(rng.choice(num_actions, p=target / target.sum()))
                else:
                    legal_ids = np.flatnonzero(legal)
                    action = int(legal_ids[np.argmax(values[legal_ids])])  # ties to the lowest id
                actions[i] = action
                pending[game].append(len(records))
                records.append((observation[game].astype(np.int16), legal, values))
                seats.append(int(current[game]))
                outcomes.append(np.nan)
        for name, partner in partners.items():
            moving = [i for i, g in enumerate(games) if partner_of[g] == name and current[g] != teacher_seat[g]]
            if moving:
                rows = games[moving]
                actions[moving] = partner.act_batch(observations_for(partner, observation[rows], mask[rows]), mask[rows])
        out = env.step(actions, games=games)
        for i, game in enumerate(games):
            if out.hand_ended[i] and pending[game]:
                for row in pending[game]:
                    outcomes[row] = float(out.rewards[i, seats[row]]) / REWARD_SCALE
                pending[game] = []
        observation[games], mask[games], current[games] = out.observation, out.action_mask, out.current_player
        active[games] = ~out.terminated
    return ExitData(
        np.array([r[0] for r in records], np.int16).reshape(-1, observed_layout(variant, config.obs_type).size),
        np.array([r[1] for r in records], bool).reshape(-1, num_actions),
        np.array([r[2] for r in records], np.float32).reshape(-1, num_actions),
        np.array(outcomes, np.float32),
        seconds=time.perf_counter() - started,
    )


def shard_tasks(config: ExitConfig, weights: PolicyWeights, iteration: int) -> list[ShardTask]:
    """An iteration's shards: ``matches`` split into groups of at most ``lockstep`` games."""
    sizes = [min(config.lockstep, config.matches - first) for first in range(0, config.matches, config.lockstep)]
    return [ShardTask(config, weights, iteration, shard, games) for shard, games in enumerate(sizes)]


class _RayCollector:
    """A Ray actor that plays shards (the class is wrapped by ``ray.remote`` on first use)."""

    def play(self, task: ShardTask) -> ExitData:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api="blas")
        return play_shard(task)


@contextlib.contextmanager
def shard_runner(workers: int, address: str | None) -> Iterator[Any]:
    """``run(tasks) -> iterator of ExitData`` in task order: on the project's process pool
    (:func:`arena.parallel.process_map`), or on Ray actors."""
    if address is not None:
        import ray

        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        try:
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
            actor = ray.remote(num_cpus=1)(_RayCollector)
            pool = ray.util.ActorPool([actor.remote() for _ in range(cpus)])
            yield lambda tasks: pool.map(lambda a, task: a.play.remote(task), tasks)
        finally:
            ray.shutdown()
    else:
        yield lambda tasks: process_map(play_shard, tasks, workers)


def collect(config: ExitConfig, weights: PolicyWeights, iteration: int, runner: Any) -> ExitData:
    """Play an iteration's matches with the search guided by ``weights``; the decisions in shard order."""
    from tqdm import tqdm

    tasks = shard_tasks(config, weights, iteration)
    parts = []
    with tqdm(total=config.matches, desc=f"iteration {iteration} collect", unit=config.episode,
              disable=not config.progress_bar) as progress:
        for task, part in zip(tasks, runner(tasks), strict=True):
            parts.append(part)
            progress.update(task.games)
    return ExitData.concatenate(parts)
