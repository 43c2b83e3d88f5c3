"""Expert iteration as a learner: :func:`train` runs iterations (collect with the guided search,
fit the network on the window of the last iterations' data) until a budget, in memory, and
returns the network.

An environment step is a decision collected by the search. The budget is checked after each
iteration, and a point falls at the first iteration that reaches it. The loop is :func:`learn`,
which ``draw-train``'s pipeline (:func:`train.exit.run.run_exit`) runs on its own run, fresh or
resumed, keeping each iteration's data and policy in its run folder, to continue and evaluate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from train.exit.collect import ExitData, collect, shard_runner
from train.exit.config import ExitConfig
from train.meter import Budget, Checkpoint, Meter
from train.policies import NetworkPolicy

if TYPE_CHECKING:
    from agents.policy_file import PolicyWeights
    from train.exit.fit import FitReport
    from train.network import PolicyValueNetwork

#: A bound on the iterations of one run.
MAX_ITERATIONS = 10_000

#: ``(iteration, its data, the network fitted, the fit's report, decisions so far)``, after each iteration.
OnIteration = Callable[[int, ExitData, "PolicyValueNetwork", "FitReport", int], None]


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

    from train.exit.fit import initial_weights

    # One torch thread from the start, as the pipeline's (a fresh network's initialisation repeats).
    torch.set_num_threads(1)
    with threadpool_limits(1, user_api="blas"), shard_runner(config.workers, None) as runner:
        return learn(config, runner, initial_weights(config), Meter(budget, points, on_checkpoint),
                     provenance=provenance)


def learn(
    config: ExitConfig,
    runner: Any,
    weights: PolicyWeights,
    meter: Meter | None = None,
    *,
    iterations: range = range(1, MAX_ITERATIONS + 1),
    window: Sequence[ExitData] = (),
    decisions: int = 0,
    gather: Callable[[int, PolicyWeights], ExitData] | None = None,
    on_iteration: OnIteration | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> NetworkPolicy:
    """The loop of :func:`train`: from ``weights`` (the policy of the iteration before
    ``iterations``' first, with the data of the ones before it in ``window`` and ``decisions`` so
    far: a continued run's), each of ``iterations`` collects (on ``runner``) and fits, until
    ``meter``'s budget is spent (``None``: ``iterations`` alone bound the run; the meter counts
    the decisions); returns the last network.

    ``gather(iteration, weights)``: the iteration's data instead of :func:`collect`'s
    (``draw-train``'s: what an interrupted iteration collected, else collected and saved);
    ``on_iteration``: called after each iteration's fit (outside the meter's clock).
    """
    from train.exit.fit import fit

    parts = list(window)

    def policy() -> NetworkPolicy:
        return NetworkPolicy(dataclasses.replace(weights, provenance={**(provenance or {}), "decisions": decisions}))

    for iteration in iterations:
        if meter is not None:
            if meter.spent(decisions):
                break
            meter.start()
        data = collect(config, weights, iteration, runner) if gather is None else gather(iteration, weights)
        parts = [*parts, data][-config.window:]
        network, report = fit(config, ExitData.concatenate(parts), weights, iteration)
        weights = network.to_weights(config.num_players)
        decisions += len(data)
        if meter is not None:
            meter.stop()
            meter.reached(decisions, policy)
        if on_iteration is not None:
            on_iteration(iteration, data, network, report, decisions)
    return policy() if meter is None else meter.finish(decisions, policy())
