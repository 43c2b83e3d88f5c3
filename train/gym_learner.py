"""A Gymnasium ``VectorEnv`` over the batched learner games: one learner seat per game.

:class:`DrawLearnerVectorEnv` is the Gymnasium 1.x view of :class:`train.learner_games.LearnerGames`
(the same games as the Stable-Baselines3 view :class:`train.vector_learner.DrawLearnerVecEnv`), for
libraries built on ``gymnasium.vector`` (CleanRL-style loops, gymnasium's vector wrappers). Its
conventions (spaces, action masks in the infos, autoreset in the same step with
``infos["final_obs"]``, seeding, errors, rewards) and an example are on the docs page "Training"
(``docs/training.md``, batched learner games).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from draw_env.checks import check_seed, warn_unknown_options
from train.learner_games import LearnerGames, LearnerOptions, LearnerStep, LearnerView

if TYPE_CHECKING:
    from typing_extensions import Unpack


class DrawLearnerVectorEnv(LearnerView, VectorEnv):
    """``num_envs`` Draw games as a ``gymnasium.vector.VectorEnv``, one learner seat per game.

    Args:
        num_envs: games played in lockstep.
        num_players: 2, 3 or 4.
        options: as :class:`train.learner_games.LearnerGames` (opponents such as ``"heaviest"``,
            ``"variety"``, ``"ppo:path=agents/policies/ppo_2p.npz"``, and ``"self"`` /
            ``"snapshots"`` for the policies sent by :meth:`update_pool`), except two defaults:
            ``reward_scale`` 1 (points) and ``seed`` ``None`` (the first ``reset()`` given no
            seed draws fresh entropy).

    Raises:
        ValueError: for a bad argument, naming it and the allowed values.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int, num_players: int = 2, **options: Unpack[LearnerOptions]) -> None:
        options.setdefault("reward_scale", 1.0)
        options.setdefault("seed", None)
        self.games = LearnerGames(num_envs, num_players, **options)
        self.num_envs = self.games.num_envs
        self.num_players = self.games.num_players
        self.render_mode = None
        self.single_observation_space = self.games.single_observation_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = self.games.single_action_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """New episodes in every game: the learner's first observations ``(num_envs, F)`` and infos.

        Args:
            seed: one non-negative integer that seeds every stream, or ``None`` (continue).
            options: no option is known; any key is ignored with a warning.

        Raises:
            ValueError: for a seed that is not ``None`` or a non-negative integer (a list of
                per-game seeds included: the games share one seeded stream); nothing changes then.
        """
        seed = check_seed("seed", seed)
        warn_unknown_options(options or (), (), stacklevel=2)
        super().reset(seed=seed)
        observation = self.games.reset(seed)
        return observation, self._infos(self.games.action_mask)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learner's action in every game (integers ``(num_envs,)``), then the opponents' moves.

        Returns:
            ``(observations (num_envs, F) float32, rewards (num_envs,) float32, terminations
            (num_envs,) bool, truncations (num_envs,) bool, infos)``, as ``docs/training.md`` lays them
            out.

        Raises:
            ValueError: as :meth:`train.learner_games.LearnerGames.step`; no game changes then.
        """
        step = self.games.step(actions)
        infos = self._infos(step.action_mask)
        if step.done.any():
            infos.update(self._final_infos(step))
        return step.observation, step.reward, step.done, np.zeros(self.num_envs, np.bool_), infos

    def _infos(self, mask: np.ndarray) -> dict[str, Any]:
        return {"action_mask": mask, "_action_mask": np.ones(self.num_envs, np.bool_)}

    def _final_infos(self, step: LearnerStep) -> dict[str, Any]:
        """``final_obs`` and ``final_info`` of the games that ended, laid out as ``SyncVectorEnv`` does."""
        done = step.done
        final_obs = np.full(self.num_envs, None, dtype=object)
        for game in np.flatnonzero(done):
            final_obs[game] = step.final_observation[game].copy()
        final_mask = np.where(done[:, None], step.final_action_mask, 0).astype(np.int8)
        return {
            "final_obs": final_obs,
            "_final_obs": done.copy(),
            "final_info": {"action_mask": final_mask, "_action_mask": done.copy()},
            "_final_info": done.copy(),
        }

    def close_extras(self, **kwargs: Any) -> None:
        self.games.close()
