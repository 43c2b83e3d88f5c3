"""Frames per second of ``render()`` for ``rgb_array`` (and ``ansi`` as the reference), in one process.

Positions come from random legal play (seeded): for each player count, ``--positions`` positions
along several games are collected first, then each subject renders them in a loop:

* ``rgb_array``: ``env.render()`` of an environment made with ``render_mode="rgb_array"`` (the
  frame of the position the environment is in; the loop re-renders the saved positions through
  :func:`draw_env.render.render_rgb`, which is what ``render()`` calls);
* ``rgb_array (spectator)``: the same with every hand face up (more sprites);
* ``ansi``: the text of the same positions (the reference, measured in the same process).

Rounds are interleaved so that machine noise hits all subjects alike; figures are medians over
rounds. The script also checks what a video needs: one frame shape for every player count, a
``uint8`` RGB array, and frames that change from one position to the next.

Usage::

    python benchmarks/render_speed.py [--rounds 5] [--seconds 0.5] [--positions 200] [--png docs/figures/render_rgb.png]
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import time
from collections.abc import Callable

import numpy as np

import draw_env
from draw_env.commands import check_outputs
from draw_env.io.files import atomic_path
from draw_env.render import Scene, render_rgb, render_text


def collect(num_players: int, count: int, seed: int) -> list[Scene]:
    """``count`` scenes from seeded random play of matches (hand ends included)."""
    rng = random.Random(seed)
    env = draw_env.raw_env(num_players=num_players, episode="match")
    scenes: list[Scene] = []
    while len(scenes) < count:
        env.reset(seed=rng.randrange(2**31))
        while env.agents and not all(env.terminations.values()) and len(scenes) < count:
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
            # The env's own scene: the same object render() builds (copies, as states move on).
            scenes.append(
                Scene(env.state_ref.clone(), "match", env._last_action, env._finished_hand, False)
            )
    return scenes


def rate(function: Callable[[Scene], object], scenes: list[Scene], seconds: float) -> float:
    done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for scene in scenes:
            function(scene)
        done += len(scenes)
    return done / (time.perf_counter() - start)


def spectator(scene: Scene) -> np.ndarray:
    return render_rgb(Scene(scene.state, scene.episode, scene.last, scene.finished, True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.5, help="per subject and round")
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--png", help="also write a 3-player spectator frame here")
    args = parser.parse_args()
    check_outputs(parser, [("--png", args.png)])

    shapes = set()
    for players in (2, 3, 4):
        scenes = collect(players, args.positions, args.seed)
        frames = [render_rgb(scene) for scene in scenes[:50]]
        shapes |= {(frame.shape, frame.dtype.str) for frame in frames}
        changed = sum(not np.array_equal(a, b) for a, b in itertools.pairwise(frames))
        subjects = {
            "rgb_array": render_rgb,
            "rgb_array (spectator)": spectator,
            "ansi": lambda scene: render_text(scene),
        }
        results: dict[str, list[float]] = {name: [] for name in subjects}
        for _ in range(args.rounds):
            for name, function in subjects.items():
                results[name].append(rate(function, scenes, args.seconds))
        print(f"{players} players ({len(scenes)} positions; {changed}/{len(frames) - 1} consecutive frames differ)")
        reference = statistics.median(results["ansi"])
        for name, rates in results.items():
            median = statistics.median(rates)
            print(f"  {name:<22} {median:10.0f} frames/s   ({median / reference:.2f}x ansi)")
    print(f"frame shapes/dtypes: {sorted(shapes)}")
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        # A 3-player middle game just after a placement, every hand face up.
        scenes = [s for s in collect(3, 30, args.seed + 1) if s.last is not None and s.last[1] < 56]
        with atomic_path(args.png) as temporary:  # keeps .png, which imsave reads
            plt.imsave(temporary, spectator(scenes[-1]))
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
