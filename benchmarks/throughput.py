"""Steps per second of random legal play: draw_env against reference games, in one process.

Subjects, each playing uniformly random legal actions:

* ``env()``: ``draw_env.env()`` through ``agent_iter`` / ``last()`` / ``step()`` (an observation and a
  mask every step, PettingZoo's protections on);
* ``raw_env``: the same without the protections;
* ``raw_env`` + PettingZoo's generic ``TerminateIllegal``, ``AssertOutOfBounds`` and
  ``OrderEnforcing`` wrappers: the protections ``env()`` gives, the usual way;
* ``core``: the rules core alone (``DrawState.legal_actions`` / ``apply_action``), no observations;
* ``connect_four_v3``: PettingZoo's classic game, the same loop as ``env()``;
* ``python_block_dominoes``: OpenSpiel's Python block dominoes, with and without an observation tensor
  (``make_py_observer().set_from``) computed at every decision.

A step is one decision by a player (dead steps and chance nodes are not counted; dealing is timed
but not counted). The subjects run interleaved in rounds so that machine noise hits all of them
alike; the figures are medians over rounds and the ratios are medians of per-round ratios.

Usage::

    python benchmarks/throughput.py [--players 2] [--rounds 7] [--seconds 1.0] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
import warnings
from collections.abc import Callable

import numpy as np

import draw_env
from draw_env.rules import DrawGame

Runner = Callable[[float, random.Random], int]


def run_aec(make_env: Callable[[], object]) -> Runner:
    """Random legal play through an AEC environment's ``agent_iter`` loop."""

    def run(seconds: float, rng: random.Random) -> int:
        env = make_env()
        decisions = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            env.reset(seed=rng.randrange(2**31))
            for _agent in env.agent_iter():
                observation, _reward, terminated, truncated, _info = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                legal = np.flatnonzero(observation["action_mask"])
                env.step(int(legal[rng.randrange(len(legal))]))
                decisions += 1
        return decisions

    return run


def run_core(num_players: int) -> Runner:
    game = DrawGame(num_players)

    def run(seconds: float, rng: random.Random) -> int:
        decisions = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            state = game.new_state(rng)
            while state.result is None:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                decisions += 1
        return decisions

    return run


def run_open_spiel(observe: bool) -> Runner:
    import pyspiel
    from open_spiel.python import games  # noqa: F401  (registers the Python games)

    game = pyspiel.load_game("python_block_dominoes")
    observer = game.make_py_observer() if observe else None

    def run(seconds: float, rng: random.Random) -> int:
        decisions = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                    continue
                if observer is not None:
                    observer.set_from(state, state.current_player())
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                decisions += 1
        return decisions

    return run


def raw_env_with_pettingzoo_wrappers(num_players: int) -> object:
    from pettingzoo.utils import wrappers

    env = wrappers.TerminateIllegalWrapper(draw_env.raw_env(num_players=num_players), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(env))


def connect_four() -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pettingzoo.classic import connect_four_v3
    return connect_four_v3.env()


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4), help="players in draw_env (default 2)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per subject per round (default 1.0)")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0:
        parser.error("--rounds must be >= 1 and --seconds > 0")

    players = args.players
    subjects: dict[str, Runner] = {
        "draw_env env()": run_aec(lambda: draw_env.env(num_players=players)),
        "draw_env raw_env": run_aec(lambda: draw_env.raw_env(num_players=players)),
        "raw_env + PettingZoo wrappers": run_aec(lambda: raw_env_with_pettingzoo_wrappers(players)),
        "draw_env core (no observation)": run_core(players),
        "connect_four_v3 env()": run_aec(connect_four),
        "python_block_dominoes (no observation)": run_open_spiel(observe=False),
        "python_block_dominoes (observation)": run_open_spiel(observe=True),
    }
    rng = random.Random(0)
    rates: dict[str, list[float]] = {name: [] for name in subjects}
    for name, run in subjects.items():  # warm-up: imports, caches
        run(0.05, rng)
    for _round in range(args.rounds):
        for name, run in subjects.items():
            start = time.perf_counter()
            decisions = run(args.seconds, rng)
            rates[name].append(decisions / (time.perf_counter() - start))

    def ratio(numerator: str, denominator: str) -> float:
        return statistics.median(a / b for a, b in zip(rates[numerator], rates[denominator]))

    ratios = {
        "env() / connect_four_v3": (ratio("draw_env env()", "connect_four_v3 env()"), 5.0),
        "core / python_block_dominoes (no observation)": (
            ratio("draw_env core (no observation)", "python_block_dominoes (no observation)"),
            10.0,
        ),
        "core / python_block_dominoes (observation)": (
            ratio("draw_env core (no observation)", "python_block_dominoes (observation)"),
            None,
        ),
        "env() / python_block_dominoes (observation)": (
            ratio("draw_env env()", "python_block_dominoes (observation)"),
            None,
        ),
        "env() / raw_env (cost of the protections)": (ratio("draw_env env()", "draw_env raw_env"), None),
        "env() / raw_env + PettingZoo wrappers": (ratio("draw_env env()", "raw_env + PettingZoo wrappers"), None),
    }
    print(f"Random legal play, {players}-player draw_env; medians of {args.rounds} interleaved rounds of {args.seconds:g} s")
    print(f"{'subject':<42} {'decisions/s':>12}")
    for name, values in rates.items():
        print(f"{name:<42} {statistics.median(values):>12,.0f}")
    print()
    print(f"{'ratio':<50} {'median':>7}  goal")
    for name, (value, goal) in ratios.items():
        verdict = "" if goal is None else f">= {goal:g}x: {'met' if value >= goal else 'NOT met'}"
        print(f"{name:<50} {value:>6.2f}x  {verdict}")
    figures = {
        "players": players,
        "rounds": args.rounds,
        "seconds": args.seconds,
        "decisions_per_second": {name: statistics.median(values) for name, values in rates.items()},
        "ratios": {name: value for name, (value, _goal) in ratios.items()},
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)
    return figures


if __name__ == "__main__":
    main()
