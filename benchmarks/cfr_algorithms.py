"""The exact solver's algorithms side by side: exploitability against CPU seconds of solving.

Builds the game tree of one small 2-player variant once (by default ``mini``: double-three, three
tiles each, three protected), then runs each algorithm of :mod:`train.cfr.solver` (CFR+,
Predictive CFR+, DCFR at its default discounts) from scratch for ``--cpu-seconds`` of solving, one
after the other in this process, and measures the exact exploitability of its solution at
iterations 4, 8, 16, 24, 32, 48, 64, 96, ... and where it stops. The solution and its measure are
``draw-train``'s with ``obs_type: information_state`` (the shipped configs): the seats' average
strategies mixed into one policy of both seats, its best response by
:func:`arena.exploitability.exploitability_of_tables`. The CPU seconds count iterations only (the
compile comes first, the measurements are left out), as ``draw-train`` counts them.

    .venv/bin/python benchmarks/cfr_algorithms.py --json cfr_algorithms.json --png cfr_algorithms.png
    .venv/bin/python benchmarks/cfr_algorithms.py --max-pip 2 --hand-size 1 --protected 2 --cpu-seconds 2

With ``--json`` the file is rewritten after each algorithm, and rerunning the same command keeps
the curves already in it for the same variant and budget (an interrupted comparison continues
with the algorithms it lacks). A file of other settings, or malformed, is one error line naming
the file and the field (exit status 2).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import BaseModel, ConfigDict

from arena.charts import save_figure
from draw_env.io.files import check_distinct, check_writable, write_text_atomic
from draw_env.rules import DrawGame
from train.config import ConfigError


class Point(BaseModel):
    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="forbid")
    iteration: int
    cpu_seconds: float
    exploitability: float


class Comparison(BaseModel):
    """The JSON file: the variant, the budget, and per algorithm its curve."""

    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="forbid")
    variant: dict[str, int]
    cpu_seconds: float
    nodes: int
    curves: dict[str, list[Point]]


def measured_at(iteration: int) -> bool:
    """Iterations 4, 8, 16, 24, 32, 48, 64, 96, ...: powers of two from 4, and one and a half
    times those from 16 (finer where the algorithms part, few measurements where they are cheap)."""
    power = iteration & (iteration - 1) == 0
    half_way = iteration % 3 == 0 and (iteration // 3) & (iteration // 3 - 1) == 0 and iteration >= 24
    return iteration >= 4 and (power or half_way)


def run(algorithm: str, tree: object, mirror: object, cpu_seconds: float) -> list[Point]:
    """One algorithm from scratch until ``cpu_seconds`` of solving; its measured curve."""
    from arena.exploitability import exploitability_of_tables
    from train.cfr.solver import Rule, SolverState, iterate, solution, warm_up

    rule = Rule(algorithm)
    warm_up(tree, rule)  # type: ignore[arg-type]
    state = SolverState.fresh(tree, rule)  # type: ignore[arg-type]
    spent, curve = 0.0, []
    while spent < cpu_seconds:
        started = time.process_time()
        iterate(tree, state, 1)  # type: ignore[arg-type]
        spent += time.process_time() - started
        if measured_at(state.iteration) or spent >= cpu_seconds:
            value = exploitability_of_tables(tree, solution(tree, state, mirror)).exploitability  # type: ignore[arg-type]
            curve.append(Point(iteration=state.iteration, cpu_seconds=round(spent, 3), exploitability=value))
            print(f"{rule.name}: iteration {state.iteration}, {spent:.1f} CPU-s, exploitability {value:.3g}", flush=True)
    return curve


def plot(comparison: Comparison, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from train.cfr.solver import DISPLAY_NAMES

    figure, axis = plt.subplots(figsize=(7, 4.5))
    for algorithm, curve in comparison.curves.items():
        points = [point for point in curve if point.exploitability > 0]
        axis.loglog([p.cpu_seconds for p in points], [p.exploitability for p in points], marker="o", markersize=3,
                    label=DISPLAY_NAMES[algorithm])
    axis.set_xlabel("CPU seconds of solving")
    axis.set_ylabel("exploitability (zero-sum points per hand)")
    axis.grid(alpha=0.3, which="both")
    axis.legend()
    variant = ", ".join(f"{key}={value}" for key, value in comparison.variant.items())
    axis.set_title(f"The solver's algorithms on {variant}", fontsize=10)
    figure.tight_layout()
    save_figure(figure, path)


def main(argv: list[str] | None = None) -> int:
    from train.cfr.solver import ALGORITHMS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-pip", type=int, default=3)
    parser.add_argument("--hand-size", type=int, default=3)
    parser.add_argument("--protected", type=int, default=3)
    parser.add_argument("--algorithms", nargs="+", choices=ALGORITHMS, default=list(ALGORITHMS))
    parser.add_argument("--cpu-seconds", type=float, default=250.0, help="CPU seconds of solving per algorithm")
    parser.add_argument("--max-memory-gib", type=float, default=4.0, help="refuse a larger tree")
    parser.add_argument("--json", type=Path, help="the curves (rewritten after each algorithm)")
    parser.add_argument("--png", type=Path, help="the figure")
    args = parser.parse_args(argv)
    if not 0 < args.cpu_seconds <= 100_000:
        parser.error("--cpu-seconds must be in (0, 100000]")
    try:
        game = DrawGame(2, max_pip=args.max_pip, hand_size=args.hand_size, protected=args.protected)
        check_distinct([("--json", args.json), ("--png", args.png)])
        for name, path in (("--json", args.json), ("--png", args.png)):
            if path is not None:
                check_writable(name, path)
        comparison: Comparison | None = None
        if args.json is not None and args.json.exists():
            from train.run_dir import read_run_file

            comparison = read_run_file(args.json, Comparison)
            if comparison.variant != game.variant or comparison.cpu_seconds != args.cpu_seconds:
                raise ValueError(f"{args.json}: holds {comparison.variant} at {comparison.cpu_seconds:g} CPU-s, "
                                 f"not {game.variant} at {args.cpu_seconds:g}: choose another --json")
            if not set(comparison.curves) <= set(ALGORITHMS):
                raise ValueError(f"{args.json}: curves must be of {', '.join(ALGORITHMS)}")
    except (ValueError, ConfigError) as error:
        print(f"cfr_algorithms.py: error: {error}", file=sys.stderr)
        return 2
    from draw_env.exact.game_tree import build_tree
    from train.cfr.solver import mirrored_entries

    tree = build_tree(game, max_bytes=int(args.max_memory_gib * 1024**3))
    mirror = mirrored_entries(tree)
    if comparison is None:
        comparison = Comparison(variant=game.variant, cpu_seconds=args.cpu_seconds, nodes=tree.num_nodes, curves={})
    for algorithm in args.algorithms:
        if algorithm in comparison.curves:
            continue
        comparison.curves[algorithm] = run(algorithm, tree, mirror, args.cpu_seconds)
        if args.json is not None:
            write_text_atomic(args.json, json.dumps(comparison.model_dump(), indent=1) + "\n")
    for algorithm, curve in comparison.curves.items():
        print(f"{algorithm}: {curve[-1].iteration} iterations, {curve[-1].cpu_seconds:.1f} CPU-s, "
              f"exploitability {curve[-1].exploitability:.3g}")
    if args.png is not None:
        plot(comparison, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
