"""Self-play MaskablePPO as a learner: :func:`train` trains a fresh model through the pipeline's
games, model and callbacks (:class:`train.selfplay.run.SelfPlayRun`: its snapshots, opponent pool,
periodic checkpoints and evaluations) until a budget, and returns the network.

An environment step is a learner decision (SB3's ``num_timesteps``). SB3's ``learn`` runs up to
each point (whole rollouts: a point falls at the first rollout that reaches it); under a budget of
CPU seconds, a rollout at a time, the budget checked at every step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from threadpoolctl import threadpool_limits

from train.meter import Budget, Checkpoint, Meter
from train.policies import NetworkPolicy
from train.sb3_adapter import weights_of
from train.selfplay.config import TrainConfig
from train.selfplay.run import SelfPlayRun, build_model, build_vec_env, unchecked_distributions

#: A bound on the calls of ``learn`` (one between points; a rollout each under a CPU budget).
MAX_CHUNKS = 10_000


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
    game = config.game()
    meter = Meter(budget, points, on_checkpoint)

    def policy(model: Any) -> NetworkPolicy:
        return NetworkPolicy(weights_of(model, config.num_players, game=game, obs_type=config.obs_type,
                                        provenance={**(provenance or {}), "timesteps": model.num_timesteps}))

    with threadpool_limits(1, user_api="blas"), unchecked_distributions():
        venv = build_vec_env(config)
        try:
            model = build_model(config, venv, None)
            run = SelfPlayRun(config, model, None)
            for _ in range(MAX_CHUNKS):
                if meter.spent(model.num_timesteps):
                    break
                target = meter.next_steps(model.num_timesteps)
                rollout = config.n_envs * config.ppo.n_steps
                chunk = rollout if target is None else max(rollout, target - model.num_timesteps)

                def over() -> bool:
                    return budget.cpu_seconds is not None and meter.seconds >= budget.cpu_seconds

                meter.start()
                model.learn(total_timesteps=chunk, callback=run.callbacks(over),
                            reset_num_timesteps=model.num_timesteps == 0, progress_bar=False)
                meter.stop()
                meter.reached(model.num_timesteps, lambda: policy(model))
            return meter.finish(model.num_timesteps, policy(model))
        finally:
            venv.close()
