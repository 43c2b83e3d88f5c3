"""A Gymnasium ``VectorEnv`` over the batched learner games: one learner seat per game.

:class:`DrawLearnerVectorEnv` is the Gymnasium 1.x view of :class:`train.learner_games.LearnerGames`
(the same games as the Stable-Baselines3 view :class:`train.vector_learner.DrawLearnerVecEnv`:
``num_envs`` games in lockstep, one learner seat each, every opponent acting inside ``step``,
batched). For libraries built on ``gymnasium.vector`` (CleanRL-style loops, gymnasium's vector
wrappers)::

    env = DrawLearnerVectorEnv(256, num_players=2, opponents={"heaviest": 1, "variety": 1})
    obs, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(100):
        masks = infos["action_mask"]                     # int8 (256, 58)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, terminations, truncations, infos = env.step(actions)

Conventions (Gymnasium's, where it has one):

* ``single_observation_space`` is ``Box(0, 1, (F,), float32)`` with ``F = 340`` (``features="extended"``)
  or 258 (``"scaled"``); ``observation_space`` its batch ``(num_envs, F)``; ``single_action_space``
  ``Discrete(58)``, ``action_space`` ``MultiDiscrete([58] * num_envs)``.
* **Action masks** come in the infos of ``reset`` and of every ``step``, as gymnasium's own
  masked environments give them (``Taxi``: ``info["action_mask"]``, int8) batched by its vector
  convention: ``infos["action_mask"]`` int8 ``(num_envs, 58)``, 1 for each legal action of the
  learner's decision in the returned observation, and ``infos["_action_mask"]`` all True.
* **Autoreset in the same step** (``metadata["autoreset_mode"] == AutoresetMode.SAME_STEP``): in a
  game whose episode ended at this step, ``terminations`` is True, the reward is the ended
  episode's last, and the returned observation and mask are already the next episode's first
  decision. The ended episode's last observation is ``infos["final_obs"][i]`` (an object array,
  ``None`` in the other games; ``infos["_final_obs"]`` tells which) and its mask
  ``infos["final_info"]["action_mask"][i]`` (``infos["_final_info"]``, as ``SyncVectorEnv``
  builds them). That last observation is the learner's last decision of the episode, since the
  end of a hand is nobody's decision; episodes end by termination only, so a learner never needs
  to bootstrap from it. ``truncations`` is always False.
* **Seeding**: ``reset(seed=s)`` (one non-negative integer) seeds everything: deals, the learner's
  seats, the opponents drawn from the pool and their sampling. The same seed and the same actions
  give the same games. ``reset()`` continues the streams (its first call uses the constructor's
  ``seed``; ``None`` there: fresh entropy).
* **Errors**: actions of the wrong shape or type, outside ``0..57`` or illegal in some game raise a
  ``ValueError`` (:class:`draw_env.IllegalActionError` names the games and lists their legal
  actions) and no game changes.
* Rewards are float32, the learner's AEC reward times ``reward_scale`` (default 1: points, as the
  AEC environment gives them).

``update_pool(current, snapshots)`` sends the learner's policy (``"self"``) and frozen copies
(``"snapshots"``) for self-play, as :mod:`train.selfplay` does for the SB3 view.
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
            (num_envs,) bool, truncations (num_envs,) bool, infos)``; see the module docstring.

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
