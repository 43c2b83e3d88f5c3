"""CFR+ as a learner: :func:`train` solves the config's variant until a budget and returns the
average strategy's table.

An environment step is a history visited by the solver: two passes over the tree an iteration
(``2 x`` its histories). The tree is the process's one (:func:`arena.exploitability.tree_for`),
so the measures of a benchmark cell walk the tree the solver trained on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from arena.exploitability import tree_for
from train.cfr.config import CfrConfig
from train.cfr.solver import SolverState, iterate, mirrored_entries, solution, solution_table, warm_up
from train.meter import Budget, Checkpoint, Meter
from train.policies import TablePolicy


def train(
    config: CfrConfig,
    budget: Budget,
    on_checkpoint: Checkpoint | None = None,
    *,
    points: int = 1,
    provenance: Mapping[str, Any] | None = None,
) -> TablePolicy:
    """The exact solver (``config.algorithm``: CFR+, Predictive CFR+ or DCFR) on ``config``'s variant (its ``max_memory_gib`` bounds the tree, its ``obs_type``
    keys the table) until ``budget``; ``on_checkpoint`` at ``points`` evenly over it.

    Under a budget of steps the solver runs whole iterations up to each point; under one of CPU
    seconds, one iteration at a time. ``provenance``: added to the table's record.
    """
    tree = tree_for(config.game(), max_bytes=int(config.max_memory_gib * 1024**3))
    steps_per_iteration = 2 * tree.num_nodes
    # A table of information states: the seats' strategies mixed into one policy (train.cfr.solver).
    mirror = mirrored_entries(tree) if config.obs_type == "information_state" else None
    rule = config.rule()
    state = SolverState.fresh(tree, rule)
    warm_up(tree, rule)  # the compile is no training: it would be most of the first point's CPU seconds
    meter = Meter(budget, points, on_checkpoint)

    def policy() -> TablePolicy:
        rows, probabilities = solution_table(tree, solution(tree, state, mirror), mirror)
        about = {"solver": rule.name, "iterations": state.iteration, **(provenance or {})}
        return TablePolicy(rows, probabilities, about, config.obs_type)

    while not meter.spent(state.iteration * steps_per_iteration):
        target = meter.next_steps(state.iteration * steps_per_iteration)
        todo = 1 if target is None or budget.cpu_seconds is not None else max(
            1, math.ceil(target / steps_per_iteration) - state.iteration)
        meter.start()
        iterate(tree, state, todo)
        meter.stop()
        meter.reached(state.iteration * steps_per_iteration, policy)
    return meter.finish(state.iteration * steps_per_iteration, policy())
