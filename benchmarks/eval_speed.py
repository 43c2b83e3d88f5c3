"""Games per second of ``draw-eval``: the batched backend against the step-by-step one, in one process.

Each round plays the same duplicate matches (``--games``, ``--episode``) of ``ppo`` (the shipped
network) against ``heaviest`` and of ``variety`` against ``heaviest`` with
``arena.evaluation.evaluate(..., batched=True)`` and ``batched=False`` (one process, one BLAS
thread, as ``draw-eval`` runs). Figures are medians over rounds; the speed-up is the median of
per-round ratios. The batched backend plays hand episodes move for move as the step-by-step one
(``tests/test_batched_play.py``); in matches the later hands come from the engine's generator.

Usage::

    python benchmarks/eval_speed.py [--games 400] [--rounds 3] [--episode match]
"""

from __future__ import annotations

import argparse
import statistics
import time

from threadpoolctl import threadpool_limits

from arena.evaluation import evaluate

PAIRINGS = (("ppo", "heaviest"), ("variety", "heaviest"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--episode", choices=("match", "hand"), default="match")
    args = parser.parse_args()
    threadpool_limits(1, user_api="blas")
    evaluate(["ppo", "heaviest"], num_games=8, episode=args.episode, progress=False)  # warm-up: numba cache, policy load
    speeds: dict[tuple[str, bool], list[float]] = {}
    for _ in range(args.rounds):
        for pairing in PAIRINGS:
            for batched in (False, True):
                started = time.perf_counter()
                result = evaluate(list(pairing), num_games=args.games, episode=args.episode, progress=False, batched=batched)
                speeds.setdefault((" vs ".join(pairing), batched), []).append(result.num_games / (time.perf_counter() - started))
    print(f"draw-eval, {args.games} duplicate {args.episode}es per run, medians of {args.rounds} rounds")
    print(f"{'pairing':<20} {'step by step':>14} {'batched':>12} {'speed-up':>9}")
    for pairing in PAIRINGS:
        name = " vs ".join(pairing)
        slow, fast = speeds[(name, False)], speeds[(name, True)]
        ratio = statistics.median(b / a for a, b in zip(slow, fast))
        print(f"{name:<20} {statistics.median(slow):>11,.1f}/s {statistics.median(fast):>9,.1f}/s {ratio:>8.1f}x")


if __name__ == "__main__":
    main()
