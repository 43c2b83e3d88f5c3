"""PPO in JAX as a learner: :func:`train` runs :func:`train.jax_ppo.trainer.train` (the loop
``draw-train``'s pipeline runs too) for the updates a budget buys and returns the network.

An environment step is an action of any seat (updates x ``num_envs`` x ``num_steps``). A run is a
fixed number of updates, a multiple of ``chunk``: the budget needs ``env_steps`` (its CPU seconds,
if any, end no run early), and the points fall after the chunks that reach them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from train.config import build
from train.jax_ppo.config import JaxPPOConfig
from train.jax_ppo.run import FAST_COMPILE
from train.meter import Budget, Checkpoint, Meter
from train.policies import NetworkPolicy


def train(
    config: JaxPPOConfig,
    budget: Budget,
    on_checkpoint: Checkpoint | None = None,
    *,
    points: int = 1,
    provenance: Mapping[str, Any] | None = None,
) -> NetworkPolicy:
    """PPO in JAX with ``config`` (its ``updates`` replaced by what ``budget`` buys, rounded up
    to whole chunks); ``on_checkpoint`` at ``points`` evenly over the budget.

    Raises:
        ValueError: the budget has no ``env_steps``.
    """
    if budget.env_steps is None:
        raise ValueError("PPO in JAX runs a fixed number of updates: give the budget env_steps")
    from train.jax_ppo import trainer
    from train.jax_ppo.policy import policy_weights

    per_update = config.num_envs * config.num_steps
    updates = max(1, math.ceil(budget.env_steps / per_update / config.chunk)) * config.chunk
    config = build(JaxPPOConfig, {**config.to_dict(), "updates": updates})
    built = trainer.Trainer(config)
    meter = Meter(budget, points, on_checkpoint)

    def policy(params: Any, updates_done: int) -> NetworkPolicy:
        return NetworkPolicy(policy_weights(built.graphdef, params, config.activation, built.game,
                                            {**(provenance or {}), "updates": updates_done}, config.obs_type))

    def on_chunk(updates_done: int, seconds: float, params: Any) -> None:
        meter.reached(updates_done * per_update, lambda: policy(params, updates_done))

    meter.start()
    result = trainer.train(config, progress=False, trainer=built, on_chunk=on_chunk,
                           compiler_options=FAST_COMPILE if config.fast_compile else None)
    return meter.finish(result.env_steps, policy(result.params, updates))
