"""RLlib pieces for Draw dominoes: a multi-agent env, masked PPO and baseline modules, a checkpoint agent.

:class:`DrawMultiAgentEnv` is the AEC environment as an RLlib ``MultiAgentEnv``, with the
observation key RLlib's action-masking module reads (``"observations"``); :class:`MaskedPPOModule`
is that module with the observation divided by its upper bounds (:func:`spaces`);
:class:`BaselineRLModule` plays a frozen baseline from :mod:`agents`; :class:`SeatMapping` maps
seats to policies per episode; :class:`RLlibAgent` plays a learner from its checkpoint. How they
fit together: the docs page "RLlib: multi-agent PPO self-play" (``docs/training_rllib.md``).

This module needs ``ray[rllib]``, which pins gymnasium 1.2.x: it runs in ``.venv-rllib``
(``make integrations-env``), never in the main venv.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import gymnasium
import numpy as np
import torch
from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

import agents
import draw_env
from agents.base import is_information_state
from agents.inputs import DEFAULT_OBS_TYPE, observed_layout
from draw_env.checks import check_number
from draw_env.rules import DrawGame

#: The policy (RLModule) id of the shared, trained self-play policy.
LEARNER = "learner"
#: In ``opponents``, the weight of this name puts the learner itself in the seat (self-play).
SELF = "self"
#: Baselines that keep no state between decisions, so one instance may serve every seat and episode.
#: Each plays every variant.
BASELINES = ("random", "random_forced", "heaviest", "variety")
#: The env config keys :class:`DrawMultiAgentEnv` takes.
ENV_KEYS = ("num_players", "variant", "max_pip", "hand_size", "protected", "episode", "reward", "reward_scale", "obs_type")


def spaces(game: DrawGame, obs_type: str = DEFAULT_OBS_TYPE) -> tuple[gymnasium.spaces.Dict, gymnasium.spaces.Discrete]:
    """The observation and action spaces of an agent of ``game``: the layout of its observation
    (:func:`draw_env.observation.layout`) or information state (``obs_type``), bounded by its
    ``high``, and its ``2T + 2`` actions."""
    observed = observed_layout(game, obs_type)
    observation_space = gymnasium.spaces.Dict(
        {
            "observations": gymnasium.spaces.Box(0.0, observed.high, (observed.size,), np.float32),
            "action_mask": gymnasium.spaces.Box(0.0, 1.0, (game.num_actions,), np.float32),
        }
    )
    return observation_space, gymnasium.spaces.Discrete(game.num_actions)


#: The spaces of the seeds' game.
OBSERVATION_SPACE, ACTION_SPACE = spaces(DrawGame(2))


class DrawMultiAgentEnv(MultiAgentEnv):
    """The AEC env (``draw_env.env``) as an RLlib ``MultiAgentEnv``: one acting agent per step.

    ``config`` keys (all optional): ``num_players`` (2), the variant: its name ``variant`` or
    ``max_pip``, ``hand_size``, ``protected`` (the seeds' game), ``episode`` (``"hand"``), ``reward`` (``"zero_sum"``),
    ``obs_type`` (``"observation"``) as in :func:`draw_env.env`, and ``reward_scale`` (0.02: every reward is multiplied by it, so a
    50-point hand is worth 1).

    Each step returns the observation of the agent to act next only; when a hand ends, every
    agent gets its reward (RLlib credits an agent's reward to its last action), and at the
    end of the episode every agent gets its final observation and ``terminated``.
    Observations are ``{"observations": float32 (N,), "action_mask": float32 (A,)}``, the spaces of
    :func:`spaces` (the seeds' game: ``N = 258``, ``A = 58``).
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = sorted(set(config) - set(ENV_KEYS))
        if unknown:
            raise ValueError(f"env config keys {unknown} are not known; known: {', '.join(ENV_KEYS)}")
        reward_scale = config.pop("reward_scale", 0.02)
        self.reward_scale = check_number("reward_scale", reward_scale, minimum=0, exclusive_minimum=True)
        # The guarded env: RLlib's env check steps random (illegal) actions; they end the hand
        # with the documented penalty instead of raising.
        self.aec = draw_env.env(**config)
        self.game: DrawGame = self.aec.unwrapped.game
        self.obs_type: str = self.aec.unwrapped.obs_type
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = []
        observation_space, action_space = spaces(self.game, self.obs_type)
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, action_space)

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        observation = self.aec.observe(agent)
        return {
            "observations": observation["observation"],
            "action_mask": observation["action_mask"].astype(np.float32),
        }

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict]]:
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.aec.agents)
        acting = self.aec.agent_selection
        return {acting: self._observe(acting)}, {acting: dict(self.aec.infos[acting])}

    def step(self, action_dict: Mapping[str, int]) -> tuple[dict, dict, dict, dict, dict]:
        aec = self.aec
        acting = aec.agent_selection
        aec.step(int(action_dict[acting]))
        rewards = {
            agent: reward * self.reward_scale for agent, reward in aec.rewards.items() if reward != 0.0
        }
        everyone = self.possible_agents
        if all(aec.terminations.values()):  # the env ends episodes only by terminating them
            return (
                {agent: self._observe(agent) for agent in everyone},
                {agent: rewards.get(agent, 0.0) for agent in everyone},
                {**dict.fromkeys(everyone, True), "__all__": True},
                {**dict.fromkeys(everyone, False), "__all__": False},
                {agent: dict(aec.infos[agent]) for agent in everyone},
            )
        following = aec.agent_selection
        # RLlib wants a reward, 0 included, with every observation.
        rewards.setdefault(following, 0.0)
        return (
            {following: self._observe(following)},
            rewards,
            {"__all__": False},
            {"__all__": False},
            {following: dict(aec.infos[following])},
        )


class MaskedPPOModule(ActionMaskingTorchRLModule):
    """RLlib's action-masking PPO module, fed the observation scaled to [0, 1] by its space's
    ``high`` (the game's :attr:`draw_env.observation.Layout.high`, as :func:`spaces` bounds it)."""

    def setup(self) -> None:
        super().setup()
        observations = cast(gymnasium.spaces.Box, self.observation_space_with_mask["observations"])
        self._high = torch.as_tensor(observations.high)

    def _preprocess_batch(self, batch: dict[str, Any], **kwargs: Any) -> tuple[torch.Tensor, dict[str, Any]]:
        action_mask, batch = super()._preprocess_batch(batch, **kwargs)
        observations = batch[Columns.OBS]
        batch[Columns.OBS] = observations / self._high.to(observations.device)
        return action_mask, batch


def _as_numpy(value: Any) -> np.ndarray:
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


class BaselineRLModule(RLModule):
    """A frozen policy that plays a baseline from :mod:`agents` on every row of the batch.

    ``model_config``: ``{"agent": name, "kwargs": {...}}`` with ``name`` one of :data:`BASELINES`.
    """

    def setup(self) -> None:
        name = self.model_config.get("agent")
        if name not in BASELINES:
            raise ValueError(f"model_config['agent'] must be one of {', '.join(BASELINES)}, got {name!r}")
        self.agent = agents.make(name, **self.model_config.get("kwargs", {}))

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        observations = _as_numpy(batch[Columns.OBS]["observations"]).astype(np.float32)
        masks = _as_numpy(batch[Columns.OBS]["action_mask"]).astype(np.int8)
        actions = [
            self.agent.act({"observation": observation, "action_mask": mask})
            for observation, mask in zip(observations, masks)
        ]
        return {Columns.ACTIONS: np.asarray(actions, np.int64)}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward_inference(batch, **kwargs)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError("baseline modules are frozen: keep them out of policies_to_train")


@dataclass(frozen=True)
class SeatMapping:
    """RLlib's ``policy_mapping_fn``: which policy plays which seat, drawn once per episode.

    ``learner_seats`` distinct seats, uniformly drawn, play :data:`LEARNER`; each other seat plays
    one of ``opponents`` (policy ids; :data:`LEARNER` is self-play) drawn with ``weights``. The
    draws are seeded by the episode id, so every seat of one episode agrees on them.
    """

    num_players: int
    learner_seats: int
    opponents: tuple[str, ...]
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        if not 1 <= self.learner_seats <= self.num_players:
            raise ValueError(f"learner_seats must be in 1..{self.num_players}, got {self.learner_seats!r}")
        if len(self.opponents) != len(self.weights) or not self.opponents:
            raise ValueError("opponents and weights must be non-empty and of the same length")

    def seats(self, episode_id: str) -> list[str]:
        """The policy id of every seat (index = seat) in the episode ``episode_id``."""
        rng = random.Random(episode_id)
        learner = set(rng.sample(range(self.num_players), self.learner_seats))
        drawn = rng.choices(self.opponents, self.weights, k=self.num_players)
        return [LEARNER if seat in learner else drawn[seat] for seat in range(self.num_players)]

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        return self.seats(str(episode.id_))[int(agent_id.rsplit("_", 1)[1])]


def opponent_policies(weights: Mapping[str, float]) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """``{"self": 0.5, "heaviest": 0.5}`` -> policy ids ``("learner", "heaviest")`` and weights.

    Raises:
        ValueError: on a name that is neither ``"self"`` nor one of :data:`BASELINES`, or a
            weight that is negative, or weights that sum to 0.
    """
    ids, values = [], []
    for name, weight in weights.items():
        if name != SELF and name not in BASELINES:
            raise ValueError(f"opponents: {name!r} is not one of {', '.join((SELF, *BASELINES))}")
        ids.append(LEARNER if name == SELF else name)
        values.append(check_number(f"opponents[{name!r}]", weight, minimum=0))
    if not sum(values) > 0:
        raise ValueError(f"opponents: the weights must sum to more than 0, got {dict(weights)!r}")
    return tuple(ids), tuple(values)


def learner_module_path(checkpoint: str | Path) -> Path:
    """Where an algorithm checkpoint keeps the learner's RLModule."""
    return Path(checkpoint) / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE / LEARNER


class RLlibAgent:
    """A trained learner from an RLlib checkpoint, as an agent of :mod:`agents` (``act``/``reset``).

    Args:
        path: an algorithm checkpoint directory (from ``Algorithm.save_to_path``) or the
            learner module's own directory inside it.
        deterministic: play the most probable legal action (else sample from the policy).
        seed: seeds the sampling when ``deterministic`` is False.
    """

    name = "rllib"

    def __init__(self, path: str, deterministic: bool = True, seed: int | None = None) -> None:
        module_dir = Path(path)
        if (learner_module_path(module_dir)).is_dir():
            module_dir = learner_module_path(module_dir)
        if not module_dir.is_dir():
            raise ValueError(f"path must be an RLlib checkpoint directory, got {path!r} (not found)")
        self.module = RLModule.from_checkpoint(module_dir)
        self.module.eval()
        # What it reads, from its module's spaces: the information state's shape or the observation's.
        inputs = self.module.observation_space["observations"].shape[0]
        actions = self.module.action_space.n
        self.obs_type = "information_state" if is_information_state(inputs, actions) else DEFAULT_OBS_TYPE
        self.deterministic = deterministic
        self._generator = torch.Generator().manual_seed(0 if seed is None else seed)

    def reset(self) -> None:
        """Nothing carried between decisions."""

    def act(self, observation: Mapping[str, np.ndarray]) -> int:
        mask = np.asarray(observation["action_mask"])
        batch = {
            Columns.OBS: {
                "observations": torch.as_tensor(observation["observation"], dtype=torch.float32)[None],
                "action_mask": torch.as_tensor(mask, dtype=torch.float32)[None],
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
        # The module already masks; masking again keeps the choice legal whatever the logits.
        logits = logits.masked_fill(torch.as_tensor(mask == 0), -torch.inf)
        if self.deterministic:
            return int(torch.argmax(logits))
        return int(torch.multinomial(torch.softmax(logits, -1), 1, generator=self._generator))


def register_agent() -> None:
    """Make ``"rllib"`` an agent name of :mod:`agents` in this process (for ``arena.evaluation``)."""
    if "rllib" not in agents.available():
        # It plays the variant its checkpoint was trained on (its module's spaces are that game's).
        agents.register("rllib", f"{__name__}:RLlibAgent", variants=True)
