"""A Stable-Baselines3 ``VecEnv`` over the batched environment: one learner seat per game.

:class:`DrawLearnerVecEnv` plays ``num_envs`` games of :class:`draw_env.vector.DrawVectorEnv` in
lockstep. In each game one seat is the learner (drawn per episode); every other seat is an
opponent drawn per episode from a weighted pool, and opponents move inside :meth:`step_wait`,
batched: all games whose opponent at the seat to act is the same policy get one call, so a
baseline answers with NumPy array operations (:mod:`agents.batched`) and a network opponent with
one forward pass for all its games (:meth:`agents.ppo.NumpyPolicy.act_batch`). It is the batched
counterpart of :class:`draw_env.single_agent.DrawSingleAgentEnv` wrapped in
:class:`train.opponents.OpponentPoolEnv`, with the same options and the same pool protocol
(``env_method("update_pool", current, snapshots)``), and ``action_masks()`` for MaskablePPO.

Semantics, as the one-game adapter:

* Observations are :mod:`draw_env.features` encodings of the learner's observation; rewards the
  learner's AEC reward times ``reward_scale``; an episode is a hand or a match.
* With ``skip_forced`` the learner's forced moves (one legal action) are played for it, except in
  a game whose episode already ended during this step (the learner then sees its forced move, so
  that one step never spans two episodes).
* When an episode ends, ``infos[i]["terminal_observation"]`` is the learner's last observation of
  it and the returned observation is the next episode's first decision (SB3's convention).
* A pool change (:meth:`update_pool`) applies from each game's next episode on.

An opponent other than ``self`` and ``snapshots`` is an agent spec (:func:`agents.specs.parse_agent_spec`:
``"heaviest"``, ``"ppo:path=agents/policies/ppo_2p.npz"``, ``"ismcts:simulations=200"``): the
batched baselines and ``ppo`` networks answer for all their games at once (a ``ppo`` spec plays as
``agents.make`` builds it: deterministic unless ``deterministic=false``); agents without a batched
version (``ismcts``...) are asked game by game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

import agents
from agents.base import Agent
from agents.batched import BATCHED, BatchAgent, make_batched
from agents.ppo import NumpyPolicy, PPOAgent
from agents.specs import parse_agent_spec, takes_seed
from draw_env.features import encode_batch, feature_size
from draw_env.observation import OBSERVATION_SIZE
from draw_env.rules import NUM_ACTIONS
from draw_env.vector import DrawVectorEnv
from train.config import SELF, SNAPSHOTS, ExploitConfig, TrainConfig


class _SampledNetwork:
    """A network opponent that samples its moves, as the learner does while training."""

    def __init__(self, policy: NumpyPolicy, rng: np.random.Generator) -> None:
        self.policy = policy
        self.rng = rng

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.policy.act_batch(observations, masks, deterministic=False, rng=self.rng)


class _OneByOne:
    """A one-game agent asked game by game (for agents without a batched version)."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array(
            [self.agent.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks)], np.int64
        )


class _Network:
    """A ``ppo`` agent's network at this table, deterministic or sampled as the agent plays."""

    def __init__(self, agent: PPOAgent, num_players: int, rng: np.random.Generator) -> None:
        self.policy = agent.policy_for(num_players)
        self.deterministic = agent.deterministic
        self.rng = rng

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.policy.act_batch(observations, masks, deterministic=self.deterministic, rng=self.rng)


def make_opponent(spec: str, num_players: int, seed: int) -> BatchAgent | _Network | _OneByOne:
    """The opponent an agent spec names, answering for a batch of games (see the module docstring).

    Raises:
        ValueError: on a malformed spec, an unknown agent or keyword, or a bad value.
    """
    name, kwargs = parse_agent_spec(spec)
    if name in BATCHED and not kwargs:
        return make_batched(name, seed=seed)
    if takes_seed(name):
        kwargs.setdefault("seed", seed)
    agent = agents.make(name, **kwargs)
    if isinstance(agent, PPOAgent):
        return _Network(agent, num_players, np.random.default_rng(seed))
    return _OneByOne(agent)


class DrawLearnerVecEnv(VecEnv):
    """``num_envs`` games, one learner seat each, opponents batched inside ``step_wait``.

    Args:
        num_envs: games played in lockstep.
        num_players, episode, reward: as :func:`draw_env.env`.
        reward_scale: the learner's reward is its AEC reward times this.
        features: ``"scaled"`` or ``"extended"`` (see :mod:`draw_env.features`).
        skip_forced: play the learner's forced moves for it.
        opponents: name -> weight: ``"self"`` (the learner's current policy, sent by
            :meth:`update_pool`), ``"snapshots"`` (frozen past learners, the weight shared among
            them; until there are some, their weight goes to ``"self"``) or an agent spec
            (:func:`make_opponent`). ``None``: uniformly random legal play.
        seed: seeds the deals, the seats, the pool draws and the sampled opponents.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        episode: str = "hand",
        reward: str = "zero_sum",
        reward_scale: float = 0.02,
        features: str = "extended",
        skip_forced: bool = True,
        opponents: Mapping[str, float] | None = None,
        seed: int = 0,
    ) -> None:
        self.venv = DrawVectorEnv(num_envs, num_players, episode, reward, autoreset=True)
        self.num_players = num_players
        self.render_mode = None
        self.reward_scale = float(reward_scale)
        self.features = features
        self.skip_forced = bool(skip_forced)
        self.seed_value = int(seed)
        self.rng = np.random.default_rng(seed)
        self.weights = {name: float(w) for name, w in (opponents or {"random": 1.0}).items() if w > 0}
        self.baselines: dict[str, BatchAgent | _Network | _OneByOne] = {
            name: make_opponent(name, num_players, seed) for name in self.weights if name not in (SELF, SNAPSHOTS)
        }
        self.current: NumpyPolicy | None = None
        self.snapshots: list[NumpyPolicy] = []
        n = num_envs
        self._learner = np.zeros(n, np.int64)
        # Opponents in play: each seat's code into self._players (-1: the learner), kept for the episode.
        self._seat_codes = np.full((n, num_players), -1, np.int64)
        self._players: list[Any] = []
        self._pool: list[int] = []
        self._pool_weights = np.zeros(0)
        self._install()
        self._reset_once = False
        self._obs = np.zeros((n, OBSERVATION_SIZE), np.float32)
        self._mask = np.zeros((n, NUM_ACTIONS), np.int8)
        self._current = np.zeros(n, np.int64)
        self._actions = np.zeros(n, np.int64)
        observation_space = spaces.Box(0.0, 1.0, (feature_size(features),), np.float32)
        super().__init__(n, observation_space, spaces.Discrete(NUM_ACTIONS))

    # ------------------------------------------------------------------ the pool

    def update_pool(self, current: NumpyPolicy | None = None, snapshots: Sequence[NumpyPolicy] | None = None) -> None:
        """Replace the learner's current policy and/or the snapshots (from the next episodes on)."""
        if current is not None:
            self.current = current
        if snapshots is not None:
            self.snapshots = list(snapshots)
        self._install()

    def _install(self) -> None:
        entries: list[tuple[Any, float]] = []
        self_weight = self.weights.get(SELF, 0.0)
        snapshot_weight = self.weights.get(SNAPSHOTS, 0.0)
        if not self.snapshots:
            self_weight += snapshot_weight
        else:
            entries += [(_SampledNetwork(s, self.rng), snapshot_weight / len(self.snapshots)) for s in self.snapshots]
        if self.current is not None and self_weight > 0:
            entries.append((_SampledNetwork(self.current, self.rng), self_weight))
        entries += [(agent, self.weights[name]) for name, agent in self.baselines.items()]
        if sum(weight for _, weight in entries) <= 0:  # only policy opponents asked for, none sent yet
            entries = [(make_batched("random", seed=self.seed_value), 1.0)]
        # Keep the opponents that games in play still use; drop the rest.
        codes = self._seat_codes
        used = np.unique(codes[codes >= 0])
        remap = np.full(max(len(self._players), 1), -1, np.int64)
        kept = [self._players[code] for code in used]
        remap[used] = np.arange(len(used))
        codes[codes >= 0] = remap[codes[codes >= 0]]
        self._players = kept + [player for player, _ in entries]
        self._pool = list(range(len(kept), len(self._players)))
        weights = np.array([weight for _, weight in entries])
        self._pool_weights = weights / weights.sum()

    def _seat_players(self, games: np.ndarray) -> None:
        """Draw the learner's seat and each opponent for new episodes in ``games``."""
        if not games.size:
            return
        self._learner[games] = self.rng.integers(self.num_players, size=len(games))
        codes = np.asarray(self._pool)[self.rng.choice(len(self._pool), size=(len(games), self.num_players), p=self._pool_weights)]
        codes[np.arange(len(games)), self._learner[games]] = -1
        self._seat_codes[games] = codes

    # ------------------------------------------------------------------ playing

    def reset(self) -> np.ndarray:
        """New episodes everywhere; the first reset (or one after ``seed(s)``) seeds every stream."""
        seed = self._seeds[0]
        self._reset_seeds()
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            self.seed_value = int(seed)
        fresh = seed is not None or not self._reset_once
        out = self.venv.reset(seed=self.seed_value if fresh else None)
        self._reset_once = True
        self._obs[:], self._mask[:], self._current[:] = out.observation, out.action_mask, out.current_player
        self._seat_codes[:] = -1
        self._seat_players(np.arange(self.num_envs))
        self._last = self._encode()
        self._advance(np.zeros(self.num_envs, np.float32), np.zeros(self.num_envs, bool), [{} for _ in range(self.num_envs)])
        return self._encode()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        n = self.num_envs
        rewards = np.zeros(n, np.float32)
        dones = np.zeros(n, bool)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        self._last = self._encode()  # the learner's observation, for terminal_observation
        self._absorb(np.arange(n), self.venv.step(self._actions), rewards, dones, infos)
        self._advance(rewards, dones, infos)
        return self._encode(), rewards * self.reward_scale, dones, infos

    def _absorb(self, games: np.ndarray, out: Any, rewards: np.ndarray, dones: np.ndarray, infos: list[dict[str, Any]]) -> None:
        """Take a step's rows for ``games``: the learner's reward, and new episodes where one ended."""
        rewards[games] += out.rewards[np.arange(len(games)), self._learner[games]]
        self._obs[games], self._mask[games], self._current[games] = out.observation, out.action_mask, out.current_player
        ended = games[out.terminated]
        for game in ended:
            infos[game]["terminal_observation"] = self._last[game]
        dones[ended] = True
        self._seat_codes[ended] = -1
        self._seat_players(ended)

    def _advance(self, rewards: np.ndarray, dones: np.ndarray, infos: list[dict[str, Any]]) -> None:
        """Let opponents (and the learner's forced moves) play until the learner decides everywhere."""
        while True:
            waiting = self._current != self._learner
            forced = ~waiting & (self._mask.sum(axis=1) == 1) & ~dones if self.skip_forced else np.zeros_like(waiting)
            games = np.flatnonzero(waiting | forced)
            if not games.size:
                return
            actions = self._mask[games].argmax(axis=1).astype(np.int64)  # the forced moves
            seats = self._current[games]
            codes = self._seat_codes[games, seats]
            for code in np.unique(codes[waiting[games]]):
                rows = np.flatnonzero(codes == code)
                picked = games[rows]
                actions[rows] = self._players[code].act_batch(self._obs[picked], self._mask[picked])
            self._absorb(games, self.venv.step(actions, games=games), rewards, dones, infos)

    def _encode(self) -> np.ndarray:
        return encode_batch(self._obs, self._mask, self.features)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game: bool ``(num_envs, 58)``."""
        return self._mask.astype(bool)

    # ------------------------------------------------------------------ the VecEnv protocol

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``action_masks`` gives one row per game (as SB3 expects of a list of envs); any other
        method (``update_pool``) is called once, for every game."""
        games = self._indices(indices)
        if method_name == "action_masks":
            return list(self.action_masks()[games])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(games)

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> list[int]:
        return list(self._get_indices(indices))


def learner_vec_env(config: TrainConfig | ExploitConfig, opponents: Mapping[str, float]) -> VecMonitor:
    """The batched learner games a training or exploiter config asks for, under SB3's ``VecMonitor``."""
    return VecMonitor(
        DrawLearnerVecEnv(
            config.n_envs,
            config.num_players,
            config.episode,
            config.reward,
            config.reward_scale,
            config.features,
            config.skip_forced,
            opponents,
            config.seed,
        )
    )
