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
  (``make_py_observer().set_from``) computed at every decision;
* ``DrawVectorEnv N=...``: the batched environment (``draw_env.vector``) at each batch size, an
  observation and a mask for every game at every step, auto-reset on, random legal actions chosen
  for all games in one call (``engine.random_actions``); on one thread, and on all threads at the
  largest batch (``parallel=True``);
* ``batched core N=...``: the compiled rules alone (``engine.play_random``: legal actions, a random
  choice and the step inside one compiled loop over the games, on all threads), no observations;
* with ``--obs-type information_state`` the batched environment serves information states
  (``obs_type="information_state"``) instead; with ``--obs-type both`` it runs both ways, and
  the ratio of their step times (information state over observation, per wall-clock and per
  CPU second) is printed for each batch size;
* ``pgx connect_four N=...`` and ``pgx leduc_holdem N=...``: pgx's games under ``jax.jit`` +
  ``jax.vmap`` with pgx's ``auto_reset``, random legal actions (``jax.random.categorical`` over the
  mask) drawn inside the jitted step, the same batch sizes, observations computed every step.

A step is one decision by a player (dead steps and chance nodes are not counted; dealing is timed
but not counted); a batched step of N games is N decisions. The subjects run interleaved in rounds
so that machine noise hits all of them alike; the figures are medians over rounds and the ratios
are medians of per-round ratios. Compilation (numba, jax) happens in the warm-up, outside the
timing; numba's compile time is measured apart, in two fresh processes sharing an empty cache
directory: the first compiles, the second loads the cache.

Usage::

    python benchmarks/throughput.py [--players 2] [--rounds 7] [--seconds 1.0] [--json out.json]
        [--batch-sizes 1,64,1024,4096] [--no-pgx] [--no-compile-time]
        [--obs-type observation|information_state|both]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable

import numpy as np

import draw_env
from draw_env.commands import check_outputs
from draw_env.io.files import write_json_atomic
from draw_env.rules import DrawGame

Runner = Callable[[float, random.Random], int]
#: The subject names' suffix of the batched environment serving information states.
INFORMATION = "information_state"


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


def run_vector(num_players: int, num_envs: int, parallel: bool = False, obs_type: str = "observation") -> Runner:
    """The batched environment, observations (or information states) and masks every step,
    random legal actions."""
    from draw_env import engine
    from draw_env.vector import DrawVectorEnv

    env = DrawVectorEnv(num_envs, num_players, parallel=parallel, obs_type=obs_type)
    words = np.random.SeedSequence(0).generate_state(num_envs, np.uint64).view(np.int64)
    actions = np.zeros(num_envs, np.int64)

    def run(seconds: float, rng: random.Random) -> int:
        out = env.reset(seed=rng.randrange(2**31))
        steps = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for _ in range(max(1, 256 // num_envs)):
                engine.random_actions(words, out.action_mask, actions)
                out = env.step(actions)
                steps += 1
        return steps * num_envs

    return run


def run_batched_core(num_players: int, num_envs: int) -> Runner:
    """The compiled rules alone: random legal play of every game in one compiled loop."""
    from draw_env import engine

    states = np.zeros((num_envs, engine.STATE_SIZE), np.int64)
    for i in range(num_envs):
        engine.init_state(states[i], num_players, i)
        engine.new_match(states[i], -1)
    steps = max(1, 2_000_000 // num_envs)

    def run(seconds: float, rng: random.Random) -> int:
        decisions = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            decisions += engine.play_random(states, steps, False)
        return decisions

    return run


def run_pgx(name: str, num_envs: int) -> Runner:
    """A pgx game under jit + vmap with auto-reset and random legal actions inside the jitted step."""
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(name)
    step = jax.vmap(auto_reset(env.step, env.init))

    @jax.jit
    def one_step(state, key):  # type: ignore[no-untyped-def]
        key, choose, reset = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(choose, logits, axis=-1)
        return step(state, action, jax.random.split(reset, num_envs)), key

    init = jax.jit(jax.vmap(env.init))

    def run(seconds: float, rng: random.Random) -> int:
        key = jax.random.PRNGKey(rng.randrange(2**31))
        state = init(jax.random.split(key, num_envs))
        steps = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for _ in range(max(1, 256 // num_envs)):
                state, key = one_step(state, key)
                steps += 1
            state.observation.block_until_ready()
        return steps * num_envs

    return run


_START_SCRIPT = """
import json, sys, time
start = time.perf_counter()
import numpy as np
from draw_env import engine
from draw_env.vector import DrawVectorEnv
imported = time.perf_counter()
players, everything = int(sys.argv[1]), sys.argv[2] == "all"
for parallel in (False, True) if everything else (False,):
    env = DrawVectorEnv(8, players, "match", parallel=parallel)
    out = env.reset(seed=0)
    actions = np.zeros(8, np.int64)
    engine.random_actions(np.arange(8, dtype=np.int64), out.action_mask, actions)
    env.step(actions)
    env.observe(0)
if everything:
    engine.play_random(np.array(env.states), 1, False)
ready = time.perf_counter()
print(json.dumps({"import": imported - start, "ready": ready - start}))
"""


def compile_times(num_players: int) -> dict[str, float]:
    """Seconds from a fresh process's start to its first batched steps, wall clock and CPU (on a
    busy machine the wall clock also counts waiting for a core).

    ``first``: an empty numba cache, so everything the environment uses compiles (the
    single-threaded ``DrawVectorEnv``: reset, step, observe, the random choice); ``cached``: a
    second process loading that cache; ``everything``: an empty cache again, compiling also the
    threaded step and the batched core.
    """
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as cache_all:
        for name, directory, what in (("first", cache, "env"), ("cached", cache, "env"), ("everything", cache_all, "all")):
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run(
                [sys.executable, "-c", _START_SCRIPT, str(num_players), what],
                env=dict(os.environ, NUMBA_CACHE_DIR=directory), capture_output=True, text=True, check=True,
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            figures[f"{name} start CPU (s)"] = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
            times = json.loads(done.stdout.strip().splitlines()[-1])
            figures[f"{name} start (s)"] = times["ready"]
            figures[f"{name} import (s)"] = times["import"]
    return figures


def raw_env_with_pettingzoo_wrappers(num_players: int) -> object:
    from pettingzoo.utils import wrappers

    env = wrappers.TerminateIllegalWrapper(draw_env.raw_env(num_players=num_players), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(env))


def connect_four() -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pettingzoo.classic import connect_four_v3
    return connect_four_v3.env()



def check_rounds_and_batches(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[int]:
    """Check ``--rounds`` and ``--seconds``; the sorted distinct ``--batch-sizes`` (exits on bad ones)."""
    if args.rounds < 1 or args.seconds <= 0:
        parser.error("--rounds must be >= 1 and --seconds > 0")
    try:
        batch_sizes = sorted({int(size) for size in args.batch_sizes.split(",")})
    except ValueError:
        parser.error("--batch-sizes must be comma-separated integers")
    if not batch_sizes or batch_sizes[0] < 1:
        parser.error("--batch-sizes must be integers >= 1")
    return batch_sizes

def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4), help="players in draw_env (default 2)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per subject per round (default 1.0)")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument(
        "--batch-sizes", default="1,64,1024,4096", help="batch sizes of the batched subjects (default 1,64,1024,4096)"
    )
    parser.add_argument("--no-pgx", action="store_true", help="skip the pgx subjects")
    parser.add_argument("--no-compile-time", action="store_true", help="skip the numba compile-time measurement")
    parser.add_argument(
        "--obs-type", choices=("observation", "information_state", "both"), default="observation",
        help="what DrawVectorEnv serves (default observation; both: each, and the ratio of their step times)",
    )
    args = parser.parse_args(argv)
    batch_sizes = check_rounds_and_batches(parser, args)
    check_outputs(parser, [("--json", args.json)])
    largest = batch_sizes[-1]

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
    for size in batch_sizes:
        if args.obs_type != "information_state":
            subjects[f"DrawVectorEnv N={size}"] = run_vector(players, size)
        if args.obs_type != "observation":
            subjects[f"DrawVectorEnv N={size} {INFORMATION}"] = run_vector(players, size, obs_type="information_state")
    if args.obs_type != "information_state":
        subjects[f"DrawVectorEnv N={largest} parallel"] = run_vector(players, largest, parallel=True)
    subjects[f"batched core N={largest} (no observation)"] = run_batched_core(players, largest)
    if not args.no_pgx:
        for game in ("connect_four", "leduc_holdem"):
            for size in batch_sizes:
                subjects[f"pgx {game} N={size}"] = run_pgx(game, size)
    rng = random.Random(0)
    rates: dict[str, list[float]] = {name: [] for name in subjects}
    # Decisions per second of CPU used by this process (all its threads): on a machine shared with
    # other jobs, wall-clock rates measure the share of the cores a subject got as much as its speed.
    cpu_rates: dict[str, list[float]] = {name: [] for name in subjects}
    for run in subjects.values():  # warm-up: imports, caches, compilation
        run(0.05, rng)
    for _round in range(args.rounds):
        for name, run in subjects.items():
            start, cpu_start = time.perf_counter(), time.process_time()
            decisions = run(args.seconds, rng)
            rates[name].append(decisions / (time.perf_counter() - start))
            cpu_rates[name].append(decisions / max(time.process_time() - cpu_start, 1e-9))

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
    vector = f"DrawVectorEnv N={largest}" + (f" {INFORMATION}" if args.obs_type == "information_state" else "")
    batched = {f"{vector} / env()": (ratio(vector, "draw_env env()"), 30.0)}
    if args.obs_type != "information_state":
        batched[f"{vector} parallel / env()"] = (ratio(f"{vector} parallel", "draw_env env()"), None)
    if args.obs_type == "both":
        # Rates are decisions per second: the step time's ratio is their inverse ratio.
        for size in batch_sizes:
            name = f"DrawVectorEnv N={size}"
            batched[f"{name} step time, {INFORMATION} / observation"] = (ratio(name, f"{name} {INFORMATION}"), None)
            cpu = statistics.median(a / b for a, b in zip(cpu_rates[name], cpu_rates[f"{name} {INFORMATION}"]))
            batched[f"{name} step CPU time, {INFORMATION} / observation"] = (cpu, None)
    if not args.no_pgx and args.obs_type != "information_state":
        for game in ("connect_four", "leduc_holdem"):
            goal = 1.0 if game == "connect_four" else None
            batched[f"{vector} / pgx {game} N={largest}"] = (ratio(vector, f"pgx {game} N={largest}"), goal)
            batched[f"{vector} parallel / pgx {game} N={largest}"] = (
                ratio(f"{vector} parallel", f"pgx {game} N={largest}"),
                None,
            )
    ratios.update(batched)
    core_rate = statistics.median(rates[f"batched core N={largest} (no observation)"])
    core_cpu_rate = statistics.median(cpu_rates[f"batched core N={largest} (no observation)"])
    compiled = {} if args.no_compile_time else compile_times(players)
    print(f"Random legal play, {players}-player draw_env; medians of {args.rounds} interleaved rounds of {args.seconds:g} s")
    print(f"{'subject':<42} {'decisions/s':>12} {'per CPU-s':>12}")
    for name, values in rates.items():
        print(f"{name:<42} {statistics.median(values):>12,.0f} {statistics.median(cpu_rates[name]):>12,.0f}")
    print()
    width = max(50, *map(len, ratios))
    print(f"{'ratio':<{width}} {'median':>7}  goal")
    for name, (value, goal) in ratios.items():
        verdict = "" if goal is None else f">= {goal:g}x: {'met' if value >= goal else 'NOT met'}"
        print(f"{name:<{width}} {value:>6.2f}x  {verdict}")
    print()
    print(
        f"batched core N={largest}: {core_rate:,.0f} decisions/s; goal >= 10,000,000: "
        f"{'met' if core_rate >= 1e7 else 'NOT met'} ({core_cpu_rate:,.0f} per CPU-second)"
    )
    if compiled:
        print(
            f"numba start, {players} players: first (compiles) {compiled['first start (s)']:.1f} s, goal <= 30: "
            f"{'met' if compiled['first start (s)'] <= 30 else 'NOT met'}; cached {compiled['cached start (s)']:.1f} s, "
            f"goal <= 3: {'met' if compiled['cached start (s)'] <= 3 else 'NOT met'} "
            f"(CPU {compiled['first start CPU (s)']:.1f} s / {compiled['cached start CPU (s)']:.1f} s; "
            f"imports {compiled['first import (s)']:.1f} s / {compiled['cached import (s)']:.1f} s)"
        )
        print(
            f"numba start compiling everything (threaded step, batched core too): "
            f"{compiled['everything start (s)']:.1f} s (CPU {compiled['everything start CPU (s)']:.1f} s)"
        )
    figures = {
        "players": players,
        "rounds": args.rounds,
        "seconds": args.seconds,
        "decisions_per_second": {name: statistics.median(values) for name, values in rates.items()},
        "decisions_per_cpu_second": {name: statistics.median(values) for name, values in cpu_rates.items()},
        "ratios": {name: value for name, (value, _goal) in ratios.items()},
        "batch_sizes": batch_sizes,
        "compile_seconds": compiled,
        "obs_type": args.obs_type,
    }
    if args.json:
        write_json_atomic(args.json, figures, indent=2)
    return figures


if __name__ == "__main__":
    main()
