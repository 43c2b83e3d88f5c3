"""How fast the ISMCTS agent decides, per simulation budget and number of players.

Positions are the decision points with at least two legal actions (single-action decisions
return at once and would flatter the figures) from hands of random play, the same for every
budget. One process: wall-clock and CPU time per decision (the CPU figure is the one to trust
on a busy machine).

    .venv/bin/python benchmarks/ismcts_speed.py                      # budgets 50 200 800
    .venv/bin/python benchmarks/ismcts_speed.py --budgets 100 400 --positions 50
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from tqdm import tqdm

import agents
from agents.base import observe
from draw_env.rules import DrawGame, DrawState


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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--budgets", type=int, nargs="+", default=[50, 200, 800], help="simulations per decision"
    )
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4], choices=[2, 3, 4])
    parser.add_argument("--positions", type=int, default=100, help="decisions timed per cell")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.positions < 1 or min(args.budgets) < 1:
        parser.error("--positions and --budgets must be >= 1")

    rows = []
    cells = [(n, budget) for n in args.players for budget in args.budgets]
    for num_players, budget in tqdm(cells, desc="budgets x players"):
        observations = [
            observe(state, state.current) for state in decision_points(num_players, args.positions, args.seed)
        ]
        agent = agents.make("ismcts", simulations=budget, seed=args.seed)
        times = []
        cpu_started = time.process_time()
        for observation in observations:
            started = time.perf_counter()
            agent.act(observation)
            times.append(time.perf_counter() - started)
        cpu = (time.process_time() - cpu_started) / len(observations)
        rows.append((num_players, budget, statistics.fmean(times), statistics.median(times), max(times), cpu))

    # Wall-clock figures suffer when other processes share the cores; CPU time much less so.
    print(f"\nISMCTS decision time over {args.positions} positions with >= 2 legal actions (one process)")
    print(
        f"{'players':>7} {'simulations':>11} {'mean ms':>8} {'median ms':>9} {'max ms':>7} "
        f"{'decisions/s':>11} {'CPU ms':>7} {'CPU decisions/s':>15}"
    )
    for num_players, budget, mean, median, longest, cpu in rows:
        print(
            f"{num_players:>7} {budget:>11} {mean * 1e3:>8.1f} {median * 1e3:>9.1f} "
            f"{longest * 1e3:>7.1f} {1 / mean:>11.1f} {cpu * 1e3:>7.1f} {1 / cpu:>15.1f}"
        )


if __name__ == "__main__":
    main()
