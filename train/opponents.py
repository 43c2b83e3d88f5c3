"""The opponent pool that lives inside each training worker.

Each opponent seat draws, per episode, one of: the learner's current policy (``self``, refreshed
after every rollout), one of the frozen snapshots of past learners (``snapshots``, the weight is
shared among them), or a baseline agent from :mod:`agents`. Policies run on NumPy inside the
worker (:class:`agents.policy_network.NumpyPolicy`), so opponents never wait for the main process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

import agents
from agents.policy_network import NumpyPolicy
from draw_env.single_agent import DrawSingleAgentEnv, Policy
from train.learner_config import SELF, SNAPSHOTS


class OpponentPoolEnv(gymnasium.Wrapper):
    """Wraps a :class:`DrawSingleAgentEnv` and keeps its opponents drawn from the pool.

    Args:
        env: the single-agent environment whose opponents this wrapper sets.
        weights: opponent name -> sampling weight (``"self"``, ``"snapshots"`` or an
            ``agents.make`` name). Until snapshots exist their weight goes to ``"self"``; until
            the learner's policy is sent (:meth:`update_pool`), opponents play at random.
        seed: seeds the baseline agents and the sampling of policy opponents.
    """

    def __init__(self, env: DrawSingleAgentEnv, weights: Mapping[str, float], seed: int) -> None:
        super().__init__(env)
        self.weights = {name: float(weight) for name, weight in weights.items() if weight > 0}
        self.rng = np.random.default_rng(seed)
        self.baselines = {
            name: agents.make(name, seed=seed) for name in self.weights if name not in (SELF, SNAPSHOTS)
        }
        self.current: NumpyPolicy | None = None
        self.snapshots: list[NumpyPolicy] = []

    def update_pool(
        self, current: NumpyPolicy | None = None, snapshots: Sequence[NumpyPolicy] | None = None
    ) -> None:
        """Replace the learner's current policy and/or the snapshot list (from the main process)."""
        if current is not None:
            self.current = current
        if snapshots is not None:
            self.snapshots = list(snapshots)
        self._install()

    def _install(self) -> None:
        policies: list[Policy] = []
        weights: list[float] = []
        self_weight = self.weights.get(SELF, 0.0)
        snapshot_weight = self.weights.get(SNAPSHOTS, 0.0)
        if not self.snapshots:
            self_weight += snapshot_weight
        else:  # policy opponents sample their moves, as the learner does while training
            for snapshot in self.snapshots:
                policies.append(snapshot.playing(False, self.rng))
                weights.append(snapshot_weight / len(self.snapshots))
        if self.current is not None and self_weight > 0:
            policies.append(self.current.playing(False, self.rng))
            weights.append(self_weight)
        for name, agent in self.baselines.items():
            policies.append(agent)
            weights.append(self.weights[name])
        if sum(weights) <= 0:  # only policy opponents were asked for and none has been sent yet
            self.env.unwrapped.set_opponents(None)
        else:
            self.env.unwrapped.set_opponents(policies, weights)


def make_worker_env(settings: dict[str, Any], index: int) -> OpponentPoolEnv:
    """Build worker ``index``'s environment from plain settings (picklable for SubprocVecEnv).

    Args:
        settings: ``num_players``, ``episode``, ``reward``, ``reward_scale``, ``features``,
            ``skip_forced``, ``opponents`` (name -> weight) and ``seed``.
        index: the worker's index; seeds differ per worker.
    """
    env = DrawSingleAgentEnv(
        num_players=settings["num_players"],
        episode=settings["episode"],
        reward=settings["reward"],
        reward_scale=settings["reward_scale"],
        features=settings["features"],
        skip_forced=settings["skip_forced"],
    )
    pool = OpponentPoolEnv(env, settings["opponents"], seed=settings["seed"] * 1000 + index)
    pool.update_pool()
    return pool
