"""Decisions per second of the JAX environment against pgx's games and ``DrawVectorEnv``, in one run.

Subjects, each playing uniformly random legal actions in every game of a batch:

* ``draw_env.jax``: :class:`draw_env.jax.DrawDominoes` (``--players``, one hand per episode);
* ``draw_env.jax fast``: the same game under its own fast training loop,
  :meth:`draw_env.jax.DrawDominoes.fast_step` (finished games take deals from a pool refilled by
  an eighth of the batch per step; observation and mask built once per step);
* ``pgx connect_four``, ``pgx leduc_holdem`` and ``pgx sparrow_mahjong``: pgx's games;
* ``DrawVectorEnv`` (CPU only, numba, one thread): the batched NumPy environment, its random
  legal actions from ``engine.random_actions`` (as ``benchmarks/throughput.py`` runs it).

``--obs-type information_state`` makes the draw_env subjects (``draw_env.jax``, its fast loop and
``DrawVectorEnv``) serve information states instead of observations; ``--obs-type both`` runs
each both ways (the information-state subjects named with `` information_state``) and prints the
ratio of their step times, information state over observation, per subject and batch size.

The JAX subjects run the same jitted step (pgx's benchmark loop): a uniform legal action per game
(:func:`random_legal`, a hashed random word per game and action), then ``jax.vmap(pgx.experimental.auto_reset(env.step, env.init))``
(``fast_step`` for the fast loop), observations computed at every step. A step of N games is N decisions. Compilation is timed apart: the first
call of the jitted step (trace, compile, run once), reported per subject; subjects then run
interleaved in rounds so that machine noise hits all alike, and the figures are medians over
rounds (the ratio to ``connect_four`` is the median of per-round ratios).

Usage::

    python benchmarks/jax_throughput.py [--device cpu|gpu] [--batch-sizes 1,64,1024,4096,16384]
        [--rounds 5] [--seconds 1.0] [--players 2] [--png docs/figures/jax_throughput.png] [--json out.json]
        [--obs-type observation|information_state|both] [--no-pgx]

Prints one line per subject and batch size: device, subject, batch, decisions per second, compile
seconds, and the ratios to pgx ``connect_four``, ``leduc_holdem`` and ``sparrow_mahjong`` at the
same batch size.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp

from arena.charts import save_figure
from benchmarks.throughput import INFORMATION, check_rounds_and_batches, run_vector
from draw_env.commands import check_outputs
from draw_env.io.files import write_json_atomic

Runner = Callable[[float], int]
#: The subject name of ``draw_env.jax``'s own fast loop.
FAST = "draw_env.jax fast"


def random_legal(key: jax.Array, mask: jax.Array) -> jax.Array:
    """int32 ``(N,)``: a uniform legal action per row of ``mask`` (N, A), the same sampler for every subject.

    Each (game, action) pair gets a random word: one threefry call for the step's two seed
    words, stretched over the N * A pairs by the lowbias32 integer hash of the pair's number
    (as ``draw_env.jax`` stretches a deal's key). The word's top bits, with the action id in
    its low ``ceil(log2 A)`` bits, are the action's priority, and the legal action with the
    highest priority is taken: one single-output maximum per row (a variadic argmax is several
    times slower on CPU). Ties of the top bits (a chance below ``A / 2**26`` per row for ``A <= 64``)
    go to the higher action id, a bias far below the benchmark's noise.
    """
    rows, actions = mask.shape
    seed = jax.random.bits(key, (2,), jnp.uint32)
    pair = jnp.arange(rows * actions, dtype=jnp.uint32).reshape(rows, actions)
    x = (seed[0] ^ (pair * jnp.uint32(0x9E3779B9))) + seed[1]
    x = (x ^ (x >> 16)) * jnp.uint32(0x7FEB352D)
    x = (x ^ (x >> 15)) * jnp.uint32(0x846CA68B)
    x = x ^ (x >> 16)
    low = max(1, (actions - 1).bit_length())
    action = jnp.arange(actions, dtype=jnp.uint32)
    priority = jnp.where(mask, ((x >> low) << low) | action, 0)
    return (jnp.max(priority, axis=-1) & jnp.uint32((1 << low) - 1)).astype(jnp.int32)


def jax_runner(env: object, num_envs: int, device: jax.Device) -> tuple[Runner, float]:
    """A JAX game under jit + vmap with auto-reset and random legal actions inside the jitted step.

    Returns the runner and the seconds its first step took (trace and compile included).
    """
    from pgx.experimental import auto_reset

    step = jax.vmap(auto_reset(env.step, env.init))  # type: ignore[attr-defined]

    @jax.jit
    def one_step(state, key):  # type: ignore[no-untyped-def]
        key, choose, reset = jax.random.split(key, 3)
        action = random_legal(choose, state.legal_action_mask)
        return step(state, action, jax.random.split(reset, num_envs)), key

    with jax.default_device(device):
        key = jax.random.PRNGKey(0)
        state = jax.jit(jax.vmap(env.init))(jax.random.split(key, num_envs))  # type: ignore[attr-defined]
        jax.block_until_ready(state)
        start = time.perf_counter()
        state, key = one_step(state, key)
        jax.block_until_ready(state)
        compile_seconds = time.perf_counter() - start
    holder = [state, key]
    repeats = max(1, 256 // num_envs)

    def run(seconds: float) -> int:
        steps = 0
        state, key = holder
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for _ in range(repeats):
                state, key = one_step(state, key)
                steps += 1
            jax.block_until_ready(state.observation)
        holder[:] = [state, key]
        return steps * num_envs

    return run, compile_seconds


def fast_runner(env: object, num_envs: int, device: jax.Device) -> tuple[Runner, float]:
    """``draw_env.jax``'s own fast loop (``fast_step`` and a pool of deals), as :func:`jax_runner`."""
    refill = max(1, num_envs // 8)

    @jax.jit
    def one_step(state, pool, key):  # type: ignore[no-untyped-def]
        key, choose = jax.random.split(key)
        action = random_legal(choose, state.legal_action_mask)
        state, pool = env.fast_step(state, action, pool, refill)  # type: ignore[attr-defined]
        return state, pool, key

    with jax.default_device(device):
        key = jax.random.PRNGKey(0)
        state = jax.jit(jax.vmap(env.init))(jax.random.split(key, num_envs))  # type: ignore[attr-defined]
        pool = jax.jit(env.deal_pool, static_argnums=1)(jax.random.PRNGKey(1), max(num_envs, 2 * refill))  # type: ignore[attr-defined]
        jax.block_until_ready((state, pool))
        start = time.perf_counter()
        state, pool, key = one_step(state, pool, key)
        jax.block_until_ready(state)
        compile_seconds = time.perf_counter() - start
    holder = [state, pool, key]
    repeats = max(1, 256 // num_envs)

    def run(seconds: float) -> int:
        steps = 0
        state, pool, key = holder
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for _ in range(repeats):
                state, pool, key = one_step(state, pool, key)
                steps += 1
            jax.block_until_ready(state.observation)
        holder[:] = [state, pool, key]
        return steps * num_envs

    return run, compile_seconds


def vector_runner(num_players: int, num_envs: int, obs_type: str = "observation") -> tuple[Runner, float]:
    """``DrawVectorEnv`` as ``benchmarks/throughput.py`` runs it (numba; compile time from its cache)."""
    start = time.perf_counter()
    run = run_vector(num_players, num_envs, obs_type=obs_type)
    rng = random.Random(0)
    run(0.01, rng)
    return (lambda seconds: run(seconds, rng)), time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu", help="where the JAX subjects run")
    parser.add_argument("--batch-sizes", default="1,64,1024,4096,16384", help="comma-separated batch sizes")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per subject per round (default 1.0)")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="players in draw_env (default 2)")
    parser.add_argument("--no-vector", action="store_true", help="skip DrawVectorEnv")
    parser.add_argument("--no-pgx", action="store_true", help="skip pgx's games (the ratios to them then read nan)")
    parser.add_argument(
        "--obs-type", choices=("observation", "information_state", "both"), default="observation",
        help="what the draw_env subjects serve (default observation; both: each, and the ratio of their step times)",
    )
    parser.add_argument("--png", help="plot decisions per second against batch size into this PNG file")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    batch_sizes = check_rounds_and_batches(parser, args)
    check_outputs(parser, [("--json", args.json), ("--png", args.png)])
    try:
        device = jax.devices(args.device)[0]
    except RuntimeError as error:
        parser.error(f"--device {args.device}: no such JAX device here ({error})")

    import pgx

    from draw_env.jax import DrawDominoes

    obs_types = ("observation", "information_state") if args.obs_type == "both" else (args.obs_type,)

    def named(name: str, obs_type: str) -> str:
        return name if obs_type == "observation" else f"{name} {INFORMATION}"

    draws = {obs_type: DrawDominoes(args.players, obs_type=obs_type) for obs_type in obs_types}
    games = {named("draw_env.jax", obs_type): env for obs_type, env in draws.items()}
    if not args.no_pgx:
        games.update({
            "pgx connect_four": pgx.make("connect_four"),
            "pgx leduc_holdem": pgx.make("leduc_holdem"),
            "pgx sparrow_mahjong": pgx.make("sparrow_mahjong"),
        })
    subjects: dict[tuple[str, int], Runner] = {}
    compile_seconds: dict[tuple[str, int], float] = {}
    for size in batch_sizes:
        for name, env in games.items():
            subjects[name, size], compile_seconds[name, size] = jax_runner(env, size, device)
        for obs_type, draw in draws.items():
            fast = named(FAST, obs_type)
            subjects[fast, size], compile_seconds[fast, size] = fast_runner(draw, size, device)
            if args.device == "cpu" and not args.no_vector:
                vector = named("DrawVectorEnv", obs_type)
                subjects[vector, size], compile_seconds[vector, size] = vector_runner(args.players, size, obs_type)
    rates: dict[tuple[str, int], list[float]] = {subject: [] for subject in subjects}
    # Decisions per second of this process's CPU time (all its threads), for the step-time ratios:
    # on a machine shared with other jobs the wall clock also measures the share of cores a
    # subject got.
    cpu_rates: dict[tuple[str, int], list[float]] = {subject: [] for subject in subjects}
    for _round in range(args.rounds):
        for subject, run in subjects.items():
            start, cpu_start = time.perf_counter(), time.process_time()
            decisions = run(args.seconds)
            rates[subject].append(decisions / (time.perf_counter() - start))
            cpu_rates[subject].append(decisions / max(time.process_time() - cpu_start, 1e-9))

    def ratio(subject: tuple[str, int], to: str = "pgx connect_four") -> float:
        if (to, subject[1]) not in rates:
            return float("nan")
        reference = rates[to, subject[1]]
        return statistics.median(a / b for a, b in zip(rates[subject], reference))

    device_name = f"{args.device} ({device.device_kind})"
    width = max(20, *(len(name) for name, _ in subjects))
    print(f"Random legal play, {args.players}-player draw_env; medians of {args.rounds} interleaved rounds of {args.seconds:g} s")
    print(f"{'device':<24} {'subject':<{width}} {'batch':>6} {'decisions/s':>13} {'compile s':>10} "
          f"{'/ connect_four':>15} {'/ leduc':>8} {'/ sparrow':>10}")
    for subject in sorted(subjects, key=lambda s: (s[1], s[0])):
        print(f"{device_name:<24} {subject[0]:<{width}} {subject[1]:>6} {statistics.median(rates[subject]):>13,.0f} "
              f"{compile_seconds[subject]:>10.1f} {ratio(subject):>14.2f}x {ratio(subject, 'pgx leduc_holdem'):>7.2f}x "
              f"{ratio(subject, 'pgx sparrow_mahjong'):>9.2f}x")
    # Rates are decisions per second: the step time's ratio is their inverse ratio.
    pairs = [(name, size) for name, size in subjects if (f"{name} {INFORMATION}", size) in subjects]
    step_time_ratios = {f"{name} N={size}": ratio((name, size), f"{name} {INFORMATION}") for name, size in pairs}
    step_cpu_ratios = {
        f"{name} N={size}": statistics.median(
            a / b for a, b in zip(cpu_rates[name, size], cpu_rates[f"{name} {INFORMATION}", size])
        )
        for name, size in pairs
    }
    for name, value in step_time_ratios.items():
        print(f"step time, {INFORMATION} / observation: {name}: {value:.2f}x (CPU time: {step_cpu_ratios[name]:.2f}x)")
    figures = {
        "device": device_name,
        "players": args.players,
        "rounds": args.rounds,
        "seconds": args.seconds,
        "decisions_per_second": {f"{name} N={size}": statistics.median(rates[name, size]) for name, size in subjects},
        "compile_seconds": {f"{name} N={size}": compile_seconds[name, size] for name, size in subjects},
        "ratio_to_connect_four": {f"{name} N={size}": ratio((name, size)) for name, size in subjects},
        "ratio_to_leduc_holdem": {f"{name} N={size}": ratio((name, size), "pgx leduc_holdem") for name, size in subjects},
        "ratio_to_sparrow_mahjong": {
            f"{name} N={size}": ratio((name, size), "pgx sparrow_mahjong") for name, size in subjects
        },
        "step_time_information_state_over_observation": step_time_ratios,
        "step_cpu_time_information_state_over_observation": step_cpu_ratios,
    }
    if args.json:
        write_json_atomic(args.json, figures, indent=2)
    if args.png:
        plot(rates, batch_sizes, device_name, args.png)
    return figures


def plot(rates: dict[tuple[str, int], list[float]], batch_sizes: list[int], device_name: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for name in sorted({name for name, _ in rates}):
        sizes = [size for size in batch_sizes if (name, size) in rates]
        axes.plot(sizes, [statistics.median(rates[name, size]) for size in sizes], marker="o", label=name)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xlabel("batch size (games in lockstep)")
    axes.set_ylabel("decisions per second")
    axes.set_title(f"Random legal play on {device_name}")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    save_figure(figure, path)


if __name__ == "__main__":
    main(sys.argv[1:])
