"""Expert iteration as a learner: :func:`train` runs iterations (collect with the guided search,
fit the network on the window of the last iterations' data) until a budget, in memory, and
returns the network.

An environment step is a decision collected by the search. The budget is checked after each
iteration, and a point falls at the first iteration that reaches it. ``draw-train``'s pipeline
(:func:`train.exit.run.run_exit`) runs the same iteration (:func:`train.exit.collect.collect`, then
:func:`train.exit.fit.fit`) and keeps each one's data and policy in its run folder, to continue
and evaluate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from train.exit.collect import ExitData, collect, shard_runner
from train.exit.config import ExitConfig
from train.meter import Budget, Checkpoint, Meter
from train.policies import NetworkPolicy

#: A bound on the iterations of one run.
MAX_ITERATIONS = 10_000


def train(
    config: ExitConfig,
    budget: Budget,
    on_checkpoint: Checkpoint | None = None,
    *,
    points: int = 1,
    provenance: Mapping[str, Any] | None = None,
) -> NetworkPolicy:
    """Expert iteration with ``config`` (its ``iterations`` and ``eval`` are the pipeline's: the
    budget bounds the run, and nothing is evaluated) from its ``init`` until ``budget``;
    ``on_checkpoint`` at ``points`` evenly over it. ``provenance``: added to each policy's weights."""
    import torch
    from threadpoolctl import threadpool_limits

    from train.exit.fit import fit, initial_weights

    # One torch thread from the start, as the pipeline's (a fresh network's initialisation repeats).
    torch.set_num_threads(1)
    meter = Meter(budget, points, on_checkpoint)
    window: list[ExitData] = []
    decisions = 0
    with threadpool_limits(1, user_api="blas"), shard_runner(config.workers, None) as runner:
        weights = initial_weights(config)

        def policy() -> NetworkPolicy:
            return NetworkPolicy(dataclasses.replace(weights, provenance={**(provenance or {}), "decisions": decisions}))

        for iteration in range(1, MAX_ITERATIONS + 1):
            if meter.spent(decisions):
                break
            meter.start()
            data = collect(config, weights, iteration, runner)
            window = [*window, data][-config.window:]
            network, _ = fit(config, ExitData.concatenate(window), weights, iteration)
            weights = network.to_weights(config.num_players)
            meter.stop()
            decisions += len(data)
            meter.reached(decisions, policy)
    return meter.finish(decisions, policy())
