"""Distillation data: the teacher's labelled decisions, collected in shards by a process pool.

:func:`collect` plays ``config.matches`` matches with a *teacher* (:class:`agents.ismcts.ISMCTSAgent`
at ``teacher_simulations``) in one seat and *partners* in the others (the teacher again or any
agent spec, drawn per match by weight). At every decision with more than one legal action, the
teacher searches from the acting seat's observation, and the observation, the action mask and
the teacher's value of each legal root action are recorded (:func:`play_match`). The teacher's
seat plays its best action; a partner seat plays its own choice, so the data also covers
positions the teacher would not steer into. Matches are written in shards under
``output_dir/data`` (``.npz`` of plain arrays, read with ``allow_pickle=False``); a rerun keeps
the shards already written (same seeds, same shards), so an interrupted collection resumes.

The teacher's values are zero-sum hand points divided by :data:`agents.ismcts.REWARD_SCALE`
(40 points), as the search backs them up, so ``temperature: 0.1`` means 4 points.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import agents
from agents.ismcts import ISMCTSAgent
from arena.parallel import process_map
from arena.specs import parse_agent_spec, seed_sequence_int, takes_seed
from draw_env.draw_dominoes import raw_env
from draw_env.files import atomic_path
from draw_env.observation import OBSERVATION_SIZE, view_from_observation
from draw_env.rules import NUM_ACTIONS
from train.config import TEACHER, DistillConfig
from train.run_dir import read_rows


@dataclass
class Decisions:
    """Decisions recorded during collection, one row each.

    Attributes:
        observations: ``(N, 258)`` int16, the acting seat's raw observation vector.
        masks: ``(N, 58)`` bool, its legal actions (always more than one).
        values: ``(N, 58)`` float32, the teacher's value of each legal action (NaN elsewhere).
        seconds: wall-clock seconds one worker spent playing them, or ``None`` if unknown (shards
            written before this was recorded).
    """

    observations: np.ndarray
    masks: np.ndarray
    values: np.ndarray
    seconds: float | None = None

    def __len__(self) -> int:
        return len(self.observations)

    def save(self, path: Path) -> None:
        # Written under a temporary name first: an interrupted run never leaves a half shard.
        extra = {} if self.seconds is None else {"seconds": np.float64(self.seconds)}
        with atomic_path(path) as temporary:
            np.savez_compressed(
                temporary, observations=self.observations, masks=self.masks, values=self.values, **extra
            )

    @classmethod
    def concatenate(cls, parts: Sequence[Decisions]) -> Decisions:
        """The rows of ``parts`` in order; the seconds add up (unknown if any part's are)."""
        seconds = [part.seconds for part in parts]
        return cls(
            *(
                np.concatenate([getattr(part, key) for part in parts])
                for key in ("observations", "masks", "values")
            ),
            seconds=None if None in seconds else sum(seconds),
        )

    @classmethod
    def load(cls, paths: Sequence[Path]) -> Decisions:
        shards = [read_rows(path, {"observations": 2, "masks": 2, "values": 2}, optional=("seconds",)) for path in paths]
        return cls.concatenate(
            [
                cls(
                    shard["observations"],
                    shard["masks"],
                    shard["values"],
                    float(shard["seconds"]) if "seconds" in shard else None,
                )
                for shard in shards
            ]
        )


def _partner_spec(config: DistillConfig, rng: random.Random) -> str:
    specs = list(config.partners)
    return rng.choices(specs, weights=[config.partners[spec] for spec in specs])[0]


def _make_partner(spec: str, config: DistillConfig, seed: int) -> agents.Agent:
    if spec == TEACHER:
        return ISMCTSAgent(simulations=config.teacher_simulations, seed=seed)
    name, kwargs = parse_agent_spec(spec)
    return agents.make(name, seed=seed, **kwargs) if takes_seed(name) else agents.make(name, **kwargs)


def play_match(config: DistillConfig, match: int) -> Decisions:
    """Play match number ``match`` of the collection and record every labelled decision.

    Everything random comes from seeds derived from ``(config.seed, match)``.
    """
    started = time.perf_counter()
    rng = random.Random(seed_sequence_int(config.seed, match))
    num_players = config.num_players
    teacher = ISMCTSAgent(simulations=config.teacher_simulations, seed=rng.getrandbits(63))
    teacher_seat = rng.randrange(num_players)
    partner_spec = _partner_spec(config, rng)
    env = raw_env(num_players=num_players, episode="match", reward="points")
    teacher_name = env.possible_agents[teacher_seat]
    partners = {
        name: _make_partner(partner_spec, config, rng.getrandbits(63))
        for name in env.possible_agents
        if name != teacher_name
    }
    env.reset(seed=rng.getrandbits(63))
    observations, masks, values = [], [], []
    while not all(env.terminations.values()):
        agent_name = env.agent_selection
        observation = env.observe(agent_name)
        mask = observation["action_mask"].astype(bool)
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            env.step(int(legal[0]))
            continue
        vector = observation["observation"]
        action_values = np.full(NUM_ACTIONS, np.nan, np.float32)
        for action, value in teacher.action_values(view_from_observation(vector, num_players)).items():
            action_values[action] = value
        observations.append(vector.astype(np.int16))
        masks.append(mask)
        values.append(action_values)
        if agent_name == teacher_name:
            # The teacher's own choice, as ISMCTSAgent.act makes it: best mean, ties to the lowest id.
            action = int(legal[np.argmax(action_values[legal])])
        else:
            action = partners[agent_name].act(observation)
        env.step(action)
    return Decisions(
        np.array(observations, np.int16).reshape(-1, OBSERVATION_SIZE),
        np.array(masks, bool).reshape(-1, NUM_ACTIONS),
        np.array(values, np.float32).reshape(-1, NUM_ACTIONS),
        seconds=time.perf_counter() - started,
    )


def _collect_shard(task: tuple[DistillConfig, int, str]) -> int:
    """Play one shard's matches and write them; the number of decisions recorded."""
    config, shard, path = task
    first = shard * config.shard_matches
    last = min(first + config.shard_matches, config.matches)
    played = [play_match(config, match) for match in range(first, last)]
    decisions = Decisions.concatenate(played)
    decisions.save(Path(path))
    return len(decisions)


def shard_paths(config: DistillConfig, matches: int | None = None) -> list[Path]:
    """Where the collection's shards go, in match order (those holding the first ``matches``)."""
    count = -(-(config.matches if matches is None else matches) // config.shard_matches)
    data = Path(config.output_dir) / "data"
    return [data / f"shard_{shard:05d}.npz" for shard in range(count)]


def collect(config: DistillConfig) -> Decisions:
    """Play ``config.matches`` matches (shards already on disk are kept) and return every decision."""
    from tqdm import tqdm

    paths = shard_paths(config)
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    todo = [(config, shard, str(path)) for shard, path in enumerate(paths) if not path.exists()]
    started = time.perf_counter()
    if todo:
        progress = tqdm(
            total=len(todo) * config.shard_matches,
            desc="collect",
            unit="match",
            disable=not config.progress_bar,
        )
        recorded = 0
        for count in process_map(_collect_shard, todo, config.workers):
            recorded += count
            progress.update(config.shard_matches)
            progress.set_postfix(decisions=recorded)
        progress.close()
        print(f"Collected {recorded:,} decisions in {(time.perf_counter() - started) / 60:.1f} min")
    return Decisions.load(paths)
