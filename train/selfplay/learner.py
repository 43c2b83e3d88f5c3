"""Self-play MaskablePPO as a learner: :func:`train` trains a fresh model through the pipeline's
games, model and callbacks (:class:`train.selfplay.run.SelfPlayRun`: its snapshots, opponent pool,
periodic checkpoints and evaluations) until a budget, and returns the network.

An environment step is a learner decision (SB3's ``num_timesteps``). SB3's ``learn`` runs up to
each point (whole rollouts: a point falls at the first rollout that reaches it); under a budget of
CPU seconds, a rollout at a time, the budget checked at every step. The loop is
:func:`train.selfplay.run.learn`, which ``draw-train``'s pipeline runs on its own run, fresh or resumed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from threadpoolctl import threadpool_limits

from train.meter import Budget, Checkpoint
from train.policies import NetworkPolicy
from train.selfplay.config import TrainConfig
from train.selfplay.run import SelfPlayRun, build_model, build_vec_env, learn, unchecked_distributions


def train(
    config: TrainConfig,
    budget: Budget,
    on_checkpoint: Checkpoint | None = None,
    *,
    points: int = 1,
    provenance: Mapping[str, Any] | None = None,
) -> NetworkPolicy:
    """Self-play PPO with ``config`` (a fresh model; its ``total_timesteps`` does not bound the
    run, ``budget`` does) until ``budget``; ``on_checkpoint`` at ``points`` evenly over it.
    ``provenance``: added to each policy's weights (with the timesteps)."""
    torch.set_num_threads(1)
    with threadpool_limits(1, user_api="blas"), unchecked_distributions():
        venv = build_vec_env(config)
        try:
            run = SelfPlayRun(config, build_model(config, venv, None), None)
            return learn(run, budget, on_checkpoint, points=points, provenance=provenance)
        finally:
            venv.close()
