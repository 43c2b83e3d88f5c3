"""How fast the ISMCTS agents decide: compiled (``ismcts``) against pure Python (``ismcts_python``).

Positions are the decision points with at least two legal actions (single-action decisions
return at once and would flatter the figures) from hands of random play, the same for every
agent and budget. One process, agents timed in turn on the same positions: CPU time per decision
(the figure to trust on a busy machine; wall-clock is printed too) and the ratio of decisions per
second against the pure-Python agent at ``--python-budget`` simulations, measured in the same run.

The compiled agent's JIT compile time is reported apart: a fresh process with an empty numba
cache times its first decision (compiling), and a second process on that cache times its start
(import and first decision, loading the cached machine code).

    .venv/bin/python benchmarks/ismcts_speed.py                           # 200 and the default budget
    .venv/bin/python benchmarks/ismcts_speed.py --budgets 200 1000 4000 --players 2 --positions 50
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tqdm import tqdm

import agents
from agents.base import Observation, observe
from agents.ismcts_compiled import DEFAULT_SIMULATIONS
from draw_env.rules import DrawGame, DrawState

ROOT = Path(__file__).resolve().parent.parent
_START = """
import time
started = time.perf_counter()
import agents
from agents.base import observe
from draw_env.rules import DrawGame
import random
state = DrawGame(2).new_state(random.Random(0))
agents.make("ismcts", simulations=200, seed=0).act(observe(state, state.current))
print(time.perf_counter() - started, time.process_time())
"""


def decision_points(num_players: int, count: int, seed: int) -> list[DrawState]:
    """``count`` positions with two or more legal actions, from hands of random play."""
    rng = random.Random(seed)
    game = DrawGame(num_players)
    points: list[DrawState] = []
    while len(points) < count:
        state = game.new_state(rng)
        while state.result is None and len(points) < count:
            legal = state.legal_actions()
            if len(legal) > 1:
                points.append(state.clone())
            state.apply_action(rng.choice(legal))
    return points


def time_agent(name: str, budget: int, observations: list[Observation], seed: int) -> tuple[float, float]:
    """``(median wall seconds, mean CPU seconds)`` per decision of ``name`` at ``budget`` simulations."""
    agent = agents.make(name, simulations=budget, seed=seed)
    agent.act(observations[0])  # compiles (or loads) the compiled kernels outside the timing
    times = []
    cpu_started = time.process_time()
    for observation in observations:
        started = time.perf_counter()
        agent.act(observation)
        times.append(time.perf_counter() - started)
    return statistics.median(times), (time.process_time() - cpu_started) / len(observations)


def start_times() -> list[tuple[float, float]]:
    """``(wall, CPU)`` seconds to a first compiled decision in a fresh process: empty numba cache, then that cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
        runs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", _START], env=env, check=True, capture_output=True,
                                 text=True, cwd=ROOT).stdout.split()
            runs.append((float(out[0]), float(out[1])))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--budgets", type=int, nargs="+", default=[200, DEFAULT_SIMULATIONS],
        help=f"simulations per decision of the compiled agent (default 200 and its default, {DEFAULT_SIMULATIONS})",
    )
    parser.add_argument("--python-budget", type=int, default=200, help="simulations of the pure-Python reference")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4], choices=[2, 3, 4])
    parser.add_argument("--positions", type=int, default=100, help="decisions timed per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-startup", action="store_true", help="skip the compile and cached-start measurement")
    args = parser.parse_args()
    if args.positions < 1 or min(args.budgets) < 1 or args.python_budget < 1:
        parser.error("--positions, --budgets and --python-budget must be >= 1")

    if not args.no_startup:
        (compile_wall, compile_cpu), (cached_wall, cached_cpu) = start_times()
    rows = []
    cells = [(n, name, budget) for n in args.players
             for name, budget in [("ismcts_python", args.python_budget)] + [("ismcts", b) for b in args.budgets]]
    observations: dict[int, list[Observation]] = {}
    for num_players, name, budget in tqdm(cells, desc="players x agents"):
        if num_players not in observations:
            observations[num_players] = [
                observe(state, state.current) for state in decision_points(num_players, args.positions, args.seed)
            ]
        median, cpu = time_agent(name, budget, observations[num_players], args.seed)
        rows.append((num_players, name, budget, median, cpu))

    print(f"\nISMCTS decision time over {args.positions} positions with >= 2 legal actions (one process)")
    print(f"{'players':>7} {'agent':>14} {'simulations':>11} {'median ms':>9} {'CPU ms':>7} "
          f"{'CPU decisions/s':>15} {'x python':>8}")
    reference: dict[int, float] = {}
    for num_players, name, budget, median, cpu in rows:
        if name == "ismcts_python":
            reference[num_players] = cpu
        print(f"{num_players:>7} {name:>14} {budget:>11} {median * 1e3:>9.2f} {cpu * 1e3:>7.2f} "
              f"{1 / cpu:>15.0f} {reference[num_players] / cpu:>8.1f}")
    if not args.no_startup:
        print(f"\nCompiled agent, fresh process to its first decision (wall / CPU seconds): "
              f"{compile_wall:.1f} / {compile_cpu:.1f} s with an empty numba cache (JIT compile), "
              f"{cached_wall:.1f} / {cached_cpu:.1f} s with the cache written by the first.")


if __name__ == "__main__":
    main()
