"""The exact solver as a ``draw-train`` pipeline: CFR+, PCFR+ or DCFR on a small 2-player variant, resumable.

``draw-train --config configs/cfr_mini.yaml`` (``pipeline: cfr``) enumerates the variant's game
tree, runs the ``algorithm`` (:mod:`train.cfr.solver`) until ``iterations``, the CPU budget ``cpu_minutes``
(this process, measurements excluded) or the ``target`` exploitability is reached, and measures
the exact exploitability of the average strategy at iterations 1, 2, 4, 8, ... and at the end.
Rerunning the same command continues the run. In ``output_dir``:

- ``state.npz`` and ``progress.json``: the solver's tables (PCFR+'s predictions included) and its
  curve so far (the checkpoint, written every ``checkpoint_minutes`` of CPU and at the end; a
  checkpoint continues only under the algorithm that wrote it);
- ``curve.json`` and ``curve.png``: exploitability against CPU seconds and iterations;
- ``policy.npz`` and ``policy.json``: the average strategy as a table from observations (or, with
  ``obs_type: information_state``, information states) to action probabilities, which the
  ``tabular`` agent plays (``tabular:path=.../policy.npz``);
- ``summary.json``: the final figures, those of the table as played included.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from agents.tabular import save_table
from arena.exploitability import exploitability, exploitability_of_tables, tree_for
from draw_env.exact import streaming
from draw_env.exact.game_tree import GameTree
from draw_env.io.files import atomic_path
from train.cfr import streaming_solver
from train.cfr.config import CfrConfig
from train.cfr.learner import Solving, StreamingSolving, TreeSolving, learn, table_of
from train.cfr.solver import DISPLAY_NAMES, Mirror, Rule, SolverState, mirrored_entries, solution, warm_up
from train.config import ConfigError, shown
from train.meter import Budget, Meter
from train.policies import TablePolicy
from train.run_dir import RunDir, RunFile, read_run_file
from train.runs import open_run_dir

P = TypeVar("P")


class CurvePoint(RunFile):
    """One measurement: after ``iteration`` iterations and ``cpu_seconds`` of solving."""

    iteration: int
    cpu_seconds: float
    exploitability: float
    nash_conv: float


class Progress(RunFile):
    """``progress.json``: how far the solver is (the tables are in ``state.npz``)."""

    algorithm: str = "cfr_plus"  # what a checkpoint written before there was a choice ran
    iteration: int
    cpu_seconds: float
    curve: list[CurvePoint]


def cfr_main(config: CfrConfig, args: argparse.Namespace) -> int:
    """``draw-train`` for a config with ``pipeline: cfr``."""
    run = open_run_dir(config, "cfr", overwrite=args.overwrite)
    summary = solve(config, run)
    solved = (f"{summary['solver']} on {summary['variant']}: {summary['iterations']} iterations, "
              f"{summary['cpu_seconds']:.1f} CPU-s; exploitability {summary['exploitability']:.3g} points per hand")
    if config.method == "streaming":
        print(f"{solved} (streaming: no table written); curve: {config.output_dir}/curve.png")
        return 0
    print(f"{solved} (the table as played: {summary['table_exploitability']:.3g})")
    print(f"Policy: {config.output_dir}/policy.npz (plays as tabular:path={config.output_dir}/policy.npz); "
          f"curve: {config.output_dir}/curve.png")
    return 0


def solve(config: CfrConfig, run: RunDir) -> dict[str, Any]:
    """Run (or continue) the solver of ``config`` in ``run``; returns the summary."""
    if config.method == "streaming":
        return _solve_streaming(config, run)
    game = config.game()
    tree = tree_for(game, max_bytes=int(config.max_memory_gib * 1024**3))
    # A table of information states plays one policy in both seats: the solution is the seats'
    # strategies mixed into one (train.cfr.solver), and that is what is measured and written.
    mirror = mirrored_entries(tree) if config.obs_type == "information_state" else None
    rule = config.rule()
    state, progress = _resume(run, tree, rule) if run.resuming else (SolverState.fresh(tree, rule), _no_progress(rule))
    if not run.resuming:
        run.start()
    warm_up(tree, rule)  # numba's compile (or cache load) is no iteration's CPU time
    policy = _solve_loop(config, TreeSolving(tree, state), progress, lambda: _measure(tree, state, progress, mirror),
                         lambda: _checkpoint(run, state, progress), table_of(tree, state, mirror, config.obs_type))
    if config.progress_bar:
        print(f"{rule.name}: building the policy table of the average strategy and measuring it as played "
              f"({tree.num_nodes:,} nodes)...", file=sys.stderr, flush=True)
    return _finish(config, run, tree, state, progress, policy)


def _solve_loop(
    config: CfrConfig, solving: Solving, progress: Progress, measure: Callable[[], CurvePoint],
    save: Callable[[], None], policy: Callable[[], P],
) -> P:
    """Either method's iterations, through the learner's loop (:func:`train.cfr.learner.learn`),
    until the config's budget or target: ``measure()`` at powers of two and at the end (the
    curve, in ``progress``), ``save()`` every ``checkpoint_minutes`` of CPU and at the end, a
    progress bar; returns the final ``policy()``.

    The budget is the solver's CPU seconds, a continued run's included (measuring and saving are
    not solving), and the config's iterations.
    """
    budget = config.cpu_minutes * 60
    meter = Meter(Budget(env_steps=config.iterations * solving.steps_per_iteration, cpu_seconds=budget),
                  seconds=progress.cpu_seconds)
    last_checkpoint = progress.cpu_seconds
    from tqdm.auto import tqdm

    with tqdm(total=_expected_iterations(config, progress, budget), initial=solving.iteration, unit="it",
              desc=config.rule().name, disable=not config.progress_bar, dynamic_ncols=True) as bar:

        def after(todo: int) -> None:
            """Between the learner's chunks: the curve at powers of two and at the end, the bar, the checkpoints."""
            nonlocal last_checkpoint
            progress.cpu_seconds = meter.seconds
            progress.iteration = solving.iteration
            if _is_measured(solving.iteration) or _finished(config, progress, budget):
                point = measure()
                progress.curve.append(point)
                bar.set_postfix(exploitability=f"{point.exploitability:.3g}", target=f"{config.target:g}", refresh=False)
            bar.total = _expected_iterations(config, progress, budget)
            bar.update(todo)
            if progress.cpu_seconds - last_checkpoint >= config.checkpoint_minutes * 60:
                save()
                last_checkpoint = progress.cpu_seconds

        # The learner's loop, its chunks ending at the measurements; the target ends it.
        result = learn(solving, meter, policy, chunk=lambda iteration: _next_chunk(config, iteration, progress, budget),
                       on_chunk=after, stop=lambda: _finished(config, progress, budget))
        bar.total = solving.iteration  # where it stopped: the bar ends full
        bar.refresh()
    if not progress.curve or progress.curve[-1].iteration != solving.iteration:
        progress.curve.append(measure())
    save()
    return result


def _solve_streaming(config: CfrConfig, run: RunDir) -> dict[str, Any]:
    """:func:`solve` without the tree (``method: streaming``): the same loop, measures, curve and
    checkpoints on the information states of :func:`draw_env.exact.streaming.enumerate_states`.
    It writes no table: the one of a game too large for its tree would take gigabytes."""
    game = config.game()
    if config.progress_bar:
        print(f"listing the information states of {config.variant or 'the variant'} (one walk of every history)...",
              file=sys.stderr, flush=True)
    halves = streaming.enumerate_states(game, (), int(config.max_memory_gib * 1024**3), streaming_solver.STATE_BYTES)
    rule = config.rule()
    if run.resuming and (run.path / "progress.json").exists():
        progress = _read_progress(run, rule)
        arrays = _read_streaming_state(run, halves, rule)
        state = streaming_solver.StreamingSolverState.from_arrays(halves, rule, progress.iteration, arrays)
    else:
        state, progress = streaming_solver.StreamingSolverState.fresh(halves, rule), _no_progress(rule)
    if not run.resuming:
        run.start()
    _solve_loop(config, StreamingSolving(halves, state), progress, lambda: _measure_streaming(halves, state, progress),
                lambda: _checkpoint_arrays(run, state.arrays(), progress), lambda: None)
    final = progress.curve[-1]
    summary = {
        "solver": rule.name,
        "method": "streaming",
        "variant": ", ".join(f"{key}={value}" for key, value in game.variant.items()),
        "iterations": state.iteration,
        "cpu_seconds": round(progress.cpu_seconds, 3),
        "exploitability": final.exploitability,
        "nash_conv": final.nash_conv,
        "info_states": sum(half.num_states(seat) for half in halves for seat in (0, 1)),
        "nodes": sum(half.nodes for half in halves),
    }
    run.write_json("curve.json", [point.model_dump() for point in progress.curve])
    _plot(progress.curve, run.path / "curve.png", summary["variant"], rule.name)
    run.write_json("summary.json", summary)
    return summary


def _measure_streaming(
    halves: streaming_solver.Halves, state: streaming_solver.StreamingSolverState, progress: Progress
) -> CurvePoint:
    values = streaming_solver.best_response_values(halves, streaming_solver.average_strategies(halves, state))
    return _point(state.iteration, progress, values[0] + values[1])


def _read_streaming_state(
    run: RunDir, halves: streaming_solver.Halves, rule: Rule
) -> dict[str, np.ndarray]:
    """The streaming solver's checkpoint, checked against the tables' shapes before it is loaded."""
    return _read_arrays(run, streaming_solver.checkpoint_shapes(halves, rule), rule)


def _no_progress(rule: Rule) -> Progress:
    return Progress(algorithm=rule.algorithm, iteration=0, cpu_seconds=0.0, curve=[])


def _finished(config: CfrConfig, progress: Progress, budget: float) -> bool:
    reached = bool(progress.curve) and progress.curve[-1].iteration == progress.iteration and (
        progress.curve[-1].exploitability <= config.target
    )
    return progress.iteration >= config.iterations or progress.cpu_seconds >= budget or reached


def _expected_iterations(config: CfrConfig, progress: Progress, budget: float) -> int:
    """Where the run is expected to stop, for the progress bar's total and its time estimate: the
    least of ``iterations``, the iteration where the CPU budget runs out at the pace so far, and,
    with a ``target``, the measurement (a power of two) where the exploitability reaches it if it
    keeps falling as it did between the last two (CFR+'s falls about as a power of the iterations)."""
    expected = float(config.iterations)
    done = progress.iteration
    if done > 0 and progress.cpu_seconds > 0:
        expected = min(expected, budget * done / progress.cpu_seconds)
    measured = [point for point in progress.curve if point.exploitability > 0]
    if config.target > 0 and len(measured) >= 2:
        earlier, last = measured[-2], measured[-1]
        if last.iteration > earlier.iteration and last.exploitability < earlier.exploitability:
            # exploitability ~ C * iteration ** -power: the iteration of the target, in logarithms
            power = math.log2(earlier.exploitability / last.exploitability) / math.log2(last.iteration / earlier.iteration)
            at_target = math.log2(last.iteration) + max(0.0, math.log2(last.exploitability / config.target)) / power
            expected = min(expected, 2.0 ** math.ceil(min(at_target, math.log2(expected))))
    return max(done, math.ceil(expected))


def _is_measured(iteration: int) -> bool:
    return iteration & (iteration - 1) == 0  # a power of two


def _next_chunk(config: CfrConfig, iteration: int, progress: Progress, budget: float) -> int:
    """Iterations until the next measurement, the end, or about a tenth of what is left of the
    budget (so that the budget and the checkpoints are kept to within a short chunk)."""
    next_power = 1 << iteration.bit_length()
    chunk = min(next_power - iteration, config.iterations - iteration)
    if iteration > 0:
        per_iteration = progress.cpu_seconds / iteration
        left = budget - progress.cpu_seconds
        chunk = min(chunk, max(1, int(min(left, config.checkpoint_minutes * 60) / 10 / max(per_iteration, 1e-9))))
    return max(1, chunk)


def _measure(tree: GameTree, state: SolverState, progress: Progress, mirror: Mirror) -> CurvePoint:
    return _point(state.iteration, progress, exploitability_of_tables(tree, solution(tree, state, mirror)).nash_conv)


def _point(iteration: int, progress: Progress, nash_conv: float) -> CurvePoint:
    """The curve's point at ``iteration`` (the CPU seconds so far in ``progress``) of ``nash_conv``."""
    return CurvePoint(iteration=iteration, cpu_seconds=round(progress.cpu_seconds, 3),
                      exploitability=nash_conv / 2, nash_conv=nash_conv)


def _checkpoint(run: RunDir, state: SolverState, progress: Progress) -> None:
    arrays: dict[str, Any] = {"regrets_0": state.regrets[0], "regrets_1": state.regrets[1],
                              "sums_0": state.strategy_sums[0], "sums_1": state.strategy_sums[1]}
    if state.rule.predictive:
        arrays.update({f"predictions_{seat}": state.predictions[seat] for seat in (0, 1)})
    _checkpoint_arrays(run, arrays, progress)


def _checkpoint_arrays(run: RunDir, arrays: dict[str, np.ndarray], progress: Progress) -> None:
    with atomic_path(run.path / "state.npz") as temporary:
        np.savez(temporary, **arrays)
    run.write_json("progress.json", progress.model_dump())


def _resume(run: RunDir, tree: GameTree, rule: Rule) -> tuple[SolverState, Progress]:
    """The checkpoint of the run to continue (a run cut short before its first one starts afresh).

    Raises:
        ConfigError: the checkpoint was written by another algorithm (its tables mean other things).
    """
    if not (run.path / "progress.json").exists():
        return SolverState.fresh(tree, rule), _no_progress(rule)
    progress = _read_progress(run, rule)
    arrays = _read_state(run, tree, rule)
    predictions = [arrays.get(f"predictions_{seat}", np.zeros(0)) for seat in (0, 1)]
    state = SolverState(progress.iteration, [arrays["regrets_0"], arrays["regrets_1"]], [arrays["sums_0"], arrays["sums_1"]],
                        predictions, rule)
    return state, progress


def _read_progress(run: RunDir, rule: Rule) -> Progress:
    """``progress.json`` of the run to continue.

    Raises:
        ConfigError: the checkpoint was written by another algorithm (its tables mean other things).
    """
    progress: Progress = read_run_file(run.path / "progress.json", Progress)
    if progress.algorithm != rule.algorithm:
        written = DISPLAY_NAMES.get(progress.algorithm, shown(progress.algorithm))
        raise ConfigError(f"{run.path / 'progress.json'}: the checkpoint was written by {written}, which "
                          f"algorithm: {rule.algorithm} cannot continue")
    return progress


def _read_state(run: RunDir, tree: GameTree, rule: Rule) -> dict[str, np.ndarray]:
    kinds = ("regrets", "sums", "predictions") if rule.predictive else ("regrets", "sums")
    return _read_arrays(run, {f"{kind}_{seat}": (len(tree.actions[seat]),) for kind in kinds for seat in (0, 1)}, rule)


def _read_arrays(run: RunDir, shapes: dict[str, tuple[int, ...]], rule: Rule) -> dict[str, np.ndarray]:
    """``state.npz``: the arrays named in ``shapes``, float64 of those shapes, finite, the strategy
    sums (and but for DCFR the regrets) non-negative; else a ``ConfigError`` naming the file."""
    from draw_env.io.untrusted import ArrayHeader, read_npz

    def check(headers: dict[str, ArrayHeader]) -> None:
        if set(headers) != set(shapes):
            raise ValueError(f"arrays must be {sorted(shapes)}, got {sorted(headers)}")
        for name, shape in shapes.items():
            if headers[name].shape != shape or headers[name].dtype != np.float64:
                raise ValueError(f"{name} must be float64 of shape {shape} for this game, got "
                                 f"{headers[name].dtype} {headers[name].shape}")

    try:
        arrays = read_npz(run.path / "state.npz", check,
                          max_bytes=8 * sum(math.prod(shape) for shape in shapes.values()) + 1024 * 1024)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if not all(np.all(np.isfinite(array)) for array in arrays.values()):
        raise ConfigError(f"{run.path / 'state.npz'}: the tables must be finite")
    # DCFR's regrets and PCFR+'s predictions may be negative; the others never are.
    signed = [name for name in arrays if name.startswith("predictions") or (
        rule.algorithm == "dcfr" and name.startswith("regrets"))]
    if not all(np.all(array >= 0) for name, array in arrays.items() if name not in signed):
        raise ConfigError(f"{run.path / 'state.npz'}: the strategy sums{'' if rule.algorithm == 'dcfr' else ' and regrets'} "
                          "must be non-negative")
    return arrays


def _finish(
    config: CfrConfig, run: RunDir, tree: GameTree, state: SolverState, progress: Progress, policy: TablePolicy
) -> dict[str, Any]:
    observations, probabilities = policy.observations, policy.probabilities
    played = exploitability(tree, policy.action_probabilities_batch, obs_type=config.obs_type)
    final = progress.curve[-1]
    summary = {
        "solver": state.rule.name,
        "variant": ", ".join(f"{key}={value}" for key, value in config.game().variant.items()),
        "iterations": state.iteration,
        "cpu_seconds": round(progress.cpu_seconds, 3),
        "exploitability": final.exploitability,
        "nash_conv": final.nash_conv,
        "table_exploitability": played.exploitability,
        "obs_type": config.obs_type,
        "info_states": played.info_states,
        "table_rows": int(len(observations)),
        "nodes": tree.num_nodes,
    }
    save_table(run.path / "policy.npz", tree.game, observations, probabilities,
               {"solver": state.rule.name, "iterations": state.iteration, "exploitability": final.exploitability,
                "table_exploitability": played.exploitability}, config.obs_type)
    run.write_json("curve.json", [point.model_dump() for point in progress.curve])
    _plot(progress.curve, run.path / "curve.png", summary["variant"], state.rule.name)
    run.write_json("summary.json", summary)
    return summary


def _plot(curve: list[CurvePoint], path: Any, variant: str, solver: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from arena.charts import save_figure

    points = [point for point in curve if point.exploitability > 0]
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for axis, (name, label) in zip(axes, (("cpu_seconds", "CPU seconds of solving"), ("iteration", "iterations"))):
        axis.loglog([getattr(p, name) for p in points], [p.exploitability for p in points], marker="o", markersize=3)
        axis.set_xlabel(label)
        axis.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("exploitability (zero-sum points per hand)")
    figure.suptitle(f"{solver} on {variant}: exact exploitability of the average strategy")
    figure.tight_layout()
    save_figure(figure, path)
