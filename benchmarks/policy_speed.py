"""How fast a policy file plays on NumPy: one observation at a time, and in batches.

Positions are decision points with at least two legal actions from hands of random play. Each
round times the agent's single-observation path (``agents.make("ppo").act``, encoding included)
and ``NumpyPolicy.act_batch`` at each batch size on the same positions, interleaved in one
process; the figures are medians over rounds, which other processes' noise moves least.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/policy_speed.py
    .venv/bin/python benchmarks/policy_speed.py --policy agents/policies/ppo_2p_selfplay.npz --batches 64 1024

Set ``OPENBLAS_NUM_THREADS=1`` where other processes use the cores: several BLAS threads
contending for them slow small batches down far more than one thread.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import agents
from agents.base import observe
from agents.policy_network import NumpyPolicy
from benchmarks.ismcts_speed import decision_points


def _rate(run: Callable[[], int], seconds: float) -> float:
    """Decisions per second of ``run`` (which returns how many it made), over about ``seconds``."""
    decisions, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        decisions += run()
    return decisions / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--policy", default="agents/policies/ppo_2p.npz", help="a policy file (.npz)")
    parser.add_argument("--batches", type=int, nargs="+", default=[16, 256, 4096], help="batch sizes")
    parser.add_argument("--positions", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.5, help="per subject and round")
    args = parser.parse_args()
    policy = NumpyPolicy.load(args.policy)
    players = policy.num_players or 2
    observations = [observe(state, state.current) for state in decision_points(players, args.positions, 0)]
    vectors = np.stack([observation["observation"] for observation in observations])
    masks = np.stack([observation["action_mask"] for observation in observations])
    agent = agents.make("ppo", path=args.policy)

    def single() -> int:
        for observation in observations[:256]:
            agent.act(observation)
        return 256

    def batched(size: int) -> Callable[[], int]:
        def run() -> int:
            for start in range(0, max(size, 256), size):
                rows = slice(start % len(vectors), start % len(vectors) + size)
                policy.act_batch(vectors[rows], masks[rows])
            return max(size, 256)

        return run

    subjects = {"act (one observation)": single} | {
        f"act_batch, N={size}": batched(size) for size in args.batches
    }
    rates: dict[str, list[float]] = {name: [] for name in subjects}
    for _ in range(args.rounds):
        for name, run in subjects.items():
            rates[name].append(_rate(run, args.seconds))
    reference = rates["act (one observation)"]
    print(f"{args.policy}: {players} players, {len(observations)} positions, medians of {args.rounds} rounds")
    print(f"{'subject':<24} {'decisions/s':>12} {'vs act':>8}")
    for name, values in rates.items():
        ratio = statistics.median(value / base for value, base in zip(values, reference, strict=True))
        print(f"{name:<24} {statistics.median(values):>12,.0f} {ratio:>7.1f}x")


if __name__ == "__main__":
    main()
