"""PPO in JAX as a learner: :func:`train` runs :func:`train.jax_ppo.trainer.train` (the loop
``draw-train``'s pipeline runs too) for the updates a budget buys and returns the network.

An environment step is an action of any seat (updates x ``num_envs`` x ``num_steps``). A run is a
fixed number of updates, a multiple of ``chunk``: the budget needs ``env_steps`` (its CPU seconds,
if any, end no run early), and the points fall after the chunks that reach them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from train.config import build
from train.jax_ppo.config import JaxPPOConfig
from train.meter import Budget, Checkpoint, Meter
from train.policies import NetworkPolicy

#: XLA options of ``fast_compile``: compiles several times faster, runs slower (tiny runs).
FAST_COMPILE = {"xla_backend_optimization_level": 0}


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
    per_update = config.num_envs * config.num_steps
    updates = max(1, math.ceil(budget.env_steps / per_update / config.chunk)) * config.chunk
    config = build(JaxPPOConfig, {**config.to_dict(), "updates": updates})
    return learn(config, budget, on_checkpoint, points=points, provenance=provenance)[0]


def learn(
    config: JaxPPOConfig,
    budget: Budget,
    on_checkpoint: Checkpoint | None = None,
    *,
    points: int = 1,
    provenance: Mapping[str, Any] | None = None,
    trainer: Any = None,
    on_chunk: Callable[[int, float, Any], None] | None = None,
    start: Any = None,
    save: Callable[[Any, Any], None] | None = None,
) -> tuple[NetworkPolicy, Any]:
    """:func:`train`'s loop for ``config``'s ``updates`` (which ``budget`` must hold): the final
    policy and :func:`train.jax_ppo.trainer.train`'s result. ``draw-train``'s pipeline calls it
    with its trainer (``trainer``: a :class:`~train.jax_ppo.trainer.Trainer` of ``config``), its
    progress lines (``config.progress_bar``) and its evaluations (``on_chunk``, called after each
    chunk as the trainer calls it, after the checkpoints due) and, to continue a run, ``start``
    and ``save`` (:func:`train.jax_ppo.trainer.train`'s)."""
    from train.jax_ppo import trainer as jax_trainer
    from train.jax_ppo.policy import policy_weights

    per_update = config.num_envs * config.num_steps
    built = jax_trainer.Trainer(config) if trainer is None else trainer
    meter = Meter(budget, points, on_checkpoint)

    def policy(params: Any, updates_done: int) -> NetworkPolicy:
        return NetworkPolicy(policy_weights(built.graphdef, params, config.activation, built.game,
                                            {**(provenance or {}), "updates": updates_done}, config.obs_type,
                                            config.value_unit))

    def chunk_done(updates_done: int, seconds: float, params: Any) -> None:
        meter.reached(updates_done * per_update, lambda: policy(params, updates_done))
        if on_chunk is not None:
            with meter.paused():
                on_chunk(updates_done, seconds, params)

    meter.start()
    result = jax_trainer.train(config, progress=config.progress_bar, trainer=built, on_chunk=chunk_done,
                               compiler_options=FAST_COMPILE if config.fast_compile else None, start=start,
                               save=save)
    return meter.finish(result.env_steps, policy(result.params, config.updates)), result
