"""A Stable-Baselines3 ``VecEnv`` over the batched environment: one learner seat per game.

:class:`DrawLearnerVecEnv` is the SB3 view of :class:`train.learner_games.LearnerGames`
(``num_envs`` games of :class:`draw_env.vector.DrawVectorEnv` in lockstep, one learner seat per
game, the opponents batched inside ``step_wait``; the semantics: ``docs/training.md``), with SB3's
conventions on top: ``reset()`` takes its seed from ``seed()`` (SB3 calls it with the model's seed),
``infos`` is a list of dicts, and when an episode ends ``infos[i]["terminal_observation"]`` is the
learner's last observation of it while the returned observation is the next episode's first
decision. ``action_masks()`` serves MaskablePPO, and ``env_method("update_pool", current,
snapshots)`` the self-play callbacks.

:func:`learner_vec_env` builds it from a training or exploiter config (``draw-train``'s self-play,
the exploiter of :mod:`train.exploit`). The Gymnasium ``VectorEnv`` view of the same games is
:class:`train.gym_learner.DrawLearnerVectorEnv`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from train.learner_config import LearnerSettings
from train.learner_games import LearnerGames, LearnerOptions, LearnerView, make_opponent

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DrawLearnerVecEnv", "learner_vec_env", "make_opponent"]


class DrawLearnerVecEnv(LearnerView, VecEnv):
    """``num_envs`` games, one learner seat each, opponents batched inside ``step_wait``.

    Args:
        num_envs: games played at once, each with one learner seat.
        num_players: 2, 3 or 4.
        options: as :class:`train.learner_games.LearnerGames` (the same defaults; ``seed`` seeds
            the first ``reset`` unless ``seed()`` gives another).

    Attributes:
        games: the :class:`train.learner_games.LearnerGames` core.
    """

    def __init__(self, num_envs: int, num_players: int = 2, **options: Unpack[LearnerOptions]) -> None:
        self.games = LearnerGames(num_envs, num_players, **options)
        self.num_players = self.games.num_players
        self.render_mode = None
        self._actions = np.zeros(num_envs, np.int64)
        super().__init__(num_envs, self.games.single_observation_space, self.games.single_action_space)

    def reset(self) -> np.ndarray:
        """New episodes everywhere; the first reset (or one after ``seed(s)``) seeds every stream."""
        seed = self._seeds[0]
        self._reset_seeds()
        return self.games.reset(seed)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        step = self.games.step(self._actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for game in np.flatnonzero(step.done):
            infos[game]["terminal_observation"] = step.final_observation[game]
        return step.observation, step.reward, step.done, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game: bool ``(num_envs, game.num_actions)``."""
        return self.games.action_mask.astype(bool)

    # ------------------------------------------------------------------ the VecEnv protocol

    def close(self) -> None:
        self.games.close()

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


def learner_vec_env(
    config: LearnerSettings, opponents: Mapping[str, float], opponents_as_measured: bool = False
) -> VecMonitor:
    """The batched learner games a training or exploiter config asks for, under SB3's ``VecMonitor``."""
    options = LearnerOptions(
        episode=config.episode, reward=config.reward, reward_scale=config.reward_scale, features=config.features,
        obs_type=config.obs_type, skip_forced=config.skip_forced, opponents=opponents, seed=config.seed,
        opponents_as_measured=opponents_as_measured,
        max_pip=config.max_pip, hand_size=config.hand_size, protected=config.protected,
    )
    return VecMonitor(DrawLearnerVecEnv(config.n_envs, config.num_players, **options))
