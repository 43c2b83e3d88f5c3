"""CFR+ as a learner: :func:`train` solves the config's variant until a budget and returns the
average strategy's table.

The loop, :func:`learn`, runs either solver through :class:`Solving`: the stored tree's
(:class:`TreeSolving`) or the streaming one's (:class:`StreamingSolving`, ``method: streaming``,
for a game whose tree would not fit).

An environment step is a history visited by the solver: two passes over the tree an iteration
(``2 x`` its histories). The tree is the process's one (:func:`arena.exploitability.tree_for`),
so the measures of a benchmark cell walk the tree the solver trained on. The loop is
:func:`learn`, which ``draw-train``'s pipeline (:func:`train.cfr.run.solve`) runs on its own run,
fresh or resumed, with its measurements and checkpoints between chunks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from arena.exploitability import tree_for
from draw_env.exact.game_tree import GameTree
from train.cfr import streaming_solver
from train.cfr.config import CfrConfig
from train.cfr.solver import Mirror, SolverState, iterate, mirrored_entries, solution, solution_table, warm_up
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
    # A table of information states: the seats' strategies mixed into one policy (train.cfr.solver).
    mirror = mirrored_entries(tree) if config.obs_type == "information_state" else None
    rule = config.rule()
    state = SolverState.fresh(tree, rule)
    warm_up(tree, rule)  # the compile is no training: it would be most of the first point's CPU seconds
    meter = Meter(budget, points, on_checkpoint)
    return learn(TreeSolving(tree, state), meter, table_of(tree, state, mirror, config.obs_type, provenance))


def table_of(
    tree: GameTree, state: SolverState, mirror: Mirror, obs_type: str, provenance: Mapping[str, Any] | None = None
) -> Callable[[], TablePolicy]:
    """The policy of ``state`` when called: its solution's table, keyed by ``obs_type``."""

    def policy() -> TablePolicy:
        rows, probabilities = solution_table(tree, solution(tree, state, mirror), mirror)
        about = {"solver": state.rule.name, "iterations": state.iteration, **(provenance or {})}
        return TablePolicy(rows, probabilities, about, obs_type)

    return policy


class Solving(Protocol):
    """What :func:`learn` runs: a solver's state on its game, iterated in place."""

    @property
    def iteration(self) -> int:
        """The iterations done."""
        ...

    @property
    def steps_per_iteration(self) -> int:
        """The histories an iteration visits at most (its environment steps)."""
        ...

    def iterate(self, iterations: int) -> None:
        ...


@dataclass
class TreeSolving:
    """The solver of :mod:`train.cfr.solver` on a stored tree: two passes of the tree an iteration."""

    tree: GameTree
    state: SolverState

    @property
    def iteration(self) -> int:
        return self.state.iteration

    @property
    def steps_per_iteration(self) -> int:
        return 2 * self.tree.num_nodes

    def iterate(self, iterations: int) -> None:
        iterate(self.tree, self.state, iterations)


@dataclass
class StreamingSolving:
    """The solver of :mod:`train.cfr.streaming_solver` on the information states of both openers:
    a walk of the histories per seat an iteration."""

    halves: streaming_solver.Halves
    state: streaming_solver.StreamingSolverState

    @property
    def iteration(self) -> int:
        return self.state.iteration

    @property
    def steps_per_iteration(self) -> int:
        return 2 * sum(half.nodes for half in self.halves)

    def iterate(self, iterations: int) -> None:
        streaming_solver.iterate(self.halves, self.state, iterations)


P = TypeVar("P")


def learn(
    solving: Solving,
    meter: Meter,
    policy: Callable[[], P],
    *,
    chunk: Callable[[int], int] | None = None,
    on_chunk: Callable[[int], None] | None = None,
    stop: Callable[[], bool] = lambda: False,
) -> P:
    """The loop of :func:`train`: iterations of ``solving`` (fresh or resumed) until
    ``meter``'s budget is spent or ``stop()``, counted on ``meter`` (its checkpoints with
    ``policy()``); returns the final ``policy()``.

    Each chunk runs ``chunk(iterations so far)`` iterations (default: up to the meter's next
    point under a budget of steps, one under one of CPU seconds), then ``on_chunk(iterations
    run)`` (the clock stopped): ``draw-train``'s measurements, checkpoints and progress bar.
    """
    steps_per_iteration = solving.steps_per_iteration

    def default_chunk(done: int) -> int:
        target = meter.next_steps(done * steps_per_iteration)
        if target is None or meter.budget.cpu_seconds is not None:
            return 1
        return max(1, math.ceil(target / steps_per_iteration) - done)

    while not meter.spent(solving.iteration * steps_per_iteration) and not stop():
        todo = (chunk or default_chunk)(solving.iteration)
        meter.start()
        solving.iterate(todo)
        meter.stop()
        meter.reached(solving.iteration * steps_per_iteration, policy)
        if on_chunk is not None:
            on_chunk(todo)
    return meter.finish(solving.iteration * steps_per_iteration, policy())
