"""Draw the documentation's pictures that come from data kept in the repository (``make figures``).

Usage::

    python docs/make_figures.py [--out docs/figures] [--only hand ladder curves throughput] [--gif-scale 1.0]

It writes, into ``--out``:

* ``hand.gif``: one 2-player hand, seeded, a frame per action from the environment's
  ``render_mode="rgb_array"`` (the shipped network against ``variety``, every hand face up);
* ``ladder_2p.png``: the 2-player strength ladder, from ``docs/figures/data/ladder_2p.csv``; the
  rows of the shipped policies are first checked against the results kept in their records
  (``agents/policies/*.json``), so the chart cannot drift from them;
* ``learning_curve_2p.png``, ``learning_curve_3p.png``, ``learning_curve_4p.png`` and
  ``learning_curve_distill_2p.png``: the learning curves kept in the records of the shipped
  self-play and distilled policies, drawn by the function that training uses;
* ``throughput_batch_2p.png``: decisions per second against batch size, from
  ``docs/figures/data/throughput_2p.json`` (one panel per measured run);
* ``long_runs.png``: the long runs of PPO in JAX (``configs/jax_ppo_{2,3,4}p_long.yaml``), their
  match win rates with Wilson intervals at each periodic evaluation, from
  ``docs/figures/data/jax_long_runs.json``: the ``eval`` rows of the runs' ``summary.json``, which
  ``--from-runs runs`` gathers there first.

It lives in ``docs/`` because it measures nothing (the benchmarks do) and only draws the pages'
pictures from files that sit beside them. The charts that need a long measurement (the leagues,
the search's budget curve, the JAX throughput run, the exploiter, RLlib) are written by their own
commands (``draw-eval ... --png``, ``benchmarks/... --png``), which ``docs/results.md`` gives;
this script does not run them. It takes a few seconds.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the project's packages come first
    sys.path.insert(0, str(ROOT))

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # files only, no window
import matplotlib.pyplot as plt  # noqa: E402

import agents  # noqa: E402
import draw_env  # noqa: E402
from arena.charts import save_figure  # noqa: E402
from draw_env.io.files import atomic_path  # noqa: E402
from draw_env.io.untrusted import read_json  # noqa: E402

FIGURES = ROOT / "docs" / "figures"
DATA = FIGURES / "data"
POLICIES = ROOT / "agents" / "policies"
PARTS = ("hand", "ladder", "curves", "throughput", "long_runs")
#: The long runs' folders under ``--from-runs``, by table size.
LONG_RUNS = {players: f"jax_ppo_{players}p_long" for players in (2, 3, 4)}

#: The hand of the animation: seed of the deal, and who sits where.
HAND_SEED = 3
HAND_PLAYERS = ("network", "variety")


def hand_frames(seed: int = HAND_SEED, players: Sequence[str] = HAND_PLAYERS) -> list[np.ndarray]:
    """``uint8 (480, 800, 3)`` frames of one hand: the deal, then one frame after every action."""
    env = draw_env.env(num_players=len(players), render_mode="rgb_array", reveal_hands=True)
    env.reset(seed=seed)
    seats = {f"player_{i}": agents.make(name) for i, name in enumerate(players)}
    frames = [env.render()]
    for name in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(seats[name].act(observation))
        frames.append(env.render())
    return frames


def write_gif(frames: Sequence[np.ndarray], path: Path, scale: float = 1.0, frame_ms: int = 800) -> None:
    """An endless GIF of ``frames``, each shown ``frame_ms`` (the last one 3 s), scaled by ``scale``.

    The frames are flat colours, so a 64-colour palette per frame keeps them exact enough and
    the file small (Pillow stores only what changes between frames).
    """
    from PIL import Image

    images = [Image.fromarray(frame) for frame in frames]
    if scale != 1.0:
        width, height = images[0].size
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        images = [image.resize(size, Image.Resampling.LANCZOS) for image in images]
    palette = [image.convert("P", palette=Image.Palette.ADAPTIVE, colors=64) for image in images]
    durations = [frame_ms] * (len(palette) - 1) + [3000]
    with atomic_path(path) as temporary:
        palette[0].save(
            temporary, format="GIF", save_all=True, append_images=palette[1:], duration=durations, loop=0,
            optimize=True,
        )


def read_ladder(path: Path = DATA / "ladder_2p.csv") -> list[dict[str, Any]]:
    """The rows of the ladder file, numbers as numbers."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["matches"] = int(row["matches"])
        for key in ("win_rate", "win_low", "win_high"):
            row[key] = float(row[key])
    return rows


def recorded_win_rate(record: dict[str, Any], command: str) -> float | None:
    """The first agent's win rate that a policy record keeps for ``command``, if it keeps one.

    Records keep their evaluations as ``results`` (expert iteration: ``win_rate``) or as
    ``evaluation`` (distillation and self-play: ``participants[0].win_rate``).
    """
    provenance = record.get("provenance", {})
    for result in provenance.get("results", []):
        if result.get("command") == command:
            return float(result["win_rate"])
    for result in provenance.get("evaluation", []):
        if result.get("command", "").removeprefix(".venv/bin/") == command:
            return float(result["participants"][0]["win_rate"])
    return None


#: The command each policy's record names a ladder row by: it was run under the agent names of
#: its day (``ppo`` was the policy then shipped; ``ismcts`` the pure-Python search at 200
#: simulations, named ``ismcts_python`` since).
RECORDED_AS = {
    "ppo_2p (shipped)": ("ppo_2p.json", "draw-eval ppo {opponent} --games 2000 --workers 2 --seed 0", {}),
    "ppo_2p_distilled": (
        "ppo_2p_distilled.json", "draw-eval ppo {opponent} --games 2000 --workers 2 --seed 0",
        {"ismcts_python": "ismcts"},
    ),
    "ppo_2p_selfplay": (
        "ppo_2p_selfplay.json", "draw-eval ppo {opponent} --games 2000 --workers 2 --seed 0",
        {"ismcts_python": "ismcts"},
    ),
}


def check_ladder(rows: Sequence[dict[str, Any]], policies: Path = POLICIES) -> None:
    """Raise ``ValueError`` unless every policy row equals the win rate its record keeps (to 5e-4)."""
    for row in rows:
        if row["agent"] not in RECORDED_AS:
            continue
        file, pattern, renamed = RECORDED_AS[row["agent"]]
        command = pattern.format(opponent=renamed.get(row["opponent"], row["opponent"]))
        recorded = recorded_win_rate(read_json(policies / file), command)
        if recorded is None:
            raise ValueError(f"{file}: no result for {command!r} (ladder row {row['agent']} vs {row['opponent']})")
        if abs(recorded - row["win_rate"]) > 5e-4:
            raise ValueError(
                f"ladder row {row['agent']} vs {row['opponent']}: win rate {row['win_rate']}, "
                f"but {file} records {recorded} for {command!r}"
            )


def plot_ladder(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """One line per agent (weakest at the bottom): its match win rate against each opponent."""
    agent_names = list(dict.fromkeys(row["agent"] for row in rows))
    opponents = list(dict.fromkeys(row["opponent"] for row in rows))
    figure, axis = plt.subplots(figsize=(8.5, 0.55 * len(agent_names) + 1.8))
    offsets = np.linspace(-0.24, 0.24, len(opponents))
    for offset, opponent in zip(offsets, opponents):
        points = [row for row in rows if row["opponent"] == opponent]
        y = [agent_names.index(row["agent"]) + offset for row in points]
        x = np.array([row["win_rate"] for row in points])
        errors = np.array([x - [row["win_low"] for row in points], [row["win_high"] for row in points] - x])
        axis.errorbar(x, y, xerr=errors, fmt="o", capsize=3, label=f"vs {opponent}")
    axis.axvline(0.5, color="grey", linestyle="--", linewidth=0.8)
    axis.set_yticks(range(len(agent_names)), agent_names)
    axis.set_xlim(0, 1)
    axis.set_xlabel("match win rate, 2 players, duplicate deals (Wilson 95% interval)")
    axis.set_title("The 2-player ladder: each agent against the rungs below it")
    axis.grid(axis="x", alpha=0.3)
    axis.legend(loc="lower left", fontsize=8)
    figure.tight_layout()
    save_figure(figure, path)


def curve_rows(record: dict[str, Any], renamed: dict[str, str] | None = None) -> list[SimpleNamespace]:
    """A record's ``learning_curve`` as the rows that :func:`train.plots.plot_learning_curve` reads."""
    rows = []
    for point in record["provenance"]["learning_curve"]:
        point = dict(point, opponent=(renamed or {}).get(point["opponent"], point["opponent"]))
        rows.append(SimpleNamespace(**point))
    return rows


def draw_curves(out: Path, policies: Path = POLICIES) -> list[Path]:
    """The learning curves of the shipped self-play and distilled policies, from their records."""
    from train.plots import plot_learning_curve

    written = []
    for players in (2, 3, 4):
        record = read_json(policies / f"ppo_{players}p_selfplay.json")
        path = out / f"learning_curve_{players}p.png"
        plot_learning_curve(
            curve_rows(record), path, title=f"{players}-player self-play (ppo_{players}p_selfplay)",
            num_players=players,
        )
        written.append(path)
    # The distillation was evaluated against "ismcts", the pure-Python search of the day.
    record = read_json(policies / "ppo_2p_distilled.json")
    path = out / "learning_curve_distill_2p.png"
    plot_learning_curve(
        curve_rows(record, {"ismcts": "ismcts_python"}), path,
        title="2-player distillation of ismcts_python, 200 simulations",
        num_players=2, x_axes=(("timesteps", "decisions searched by the teacher"),),
    )
    written.append(path)
    return written


def plot_throughput(data: dict[str, Any], path: Path) -> None:
    """Decisions per second against batch size, log-log, one panel per measured run."""
    runs = data["runs"]
    figure, axes = plt.subplots(1, len(runs), figsize=(6.2 * len(runs), 4.6), sharey=True, squeeze=False)
    for axis, run in zip(axes[0], runs):
        for subject, rates in run["decisions_per_second"].items():
            sizes = sorted(int(size) for size in rates)
            values = [rates[str(size)] for size in sizes]
            axis.plot(sizes, values, marker="o" if len(sizes) > 1 else "s", label=subject)
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xlabel("batch size (games in lockstep)")
        axis.set_title(f"{run['title']}\n({run['commit']}, {run['date']})", fontsize=9)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8, loc="lower right")
    axes[0][0].set_ylabel("decisions per second (wall-clock)")
    figure.suptitle("Random legal play, 2 players, on a 2-core shared CPU")
    figure.tight_layout()
    save_figure(figure, path)


def gather_long_runs(runs: Path, path: Path) -> None:
    """The ``eval`` rows and steps of each long run's ``summary.json`` under ``runs`` into ``path``."""
    from draw_env.io.files import write_json_atomic

    data = {}
    for players, folder in LONG_RUNS.items():
        summary = runs / folder / "summary.json"
        if summary.is_file():
            record = read_json(summary)
            data[str(players)] = {"config": f"configs/{folder}.yaml", "env_steps": record["env_steps"],
                                  "eval": record["eval"]}
    write_json_atomic(path, data, indent=1)


def plot_long_runs(data: dict[str, Any], path: Path) -> None:
    """One panel per table size: each opponent's match win rate and its Wilson band against
    environment steps, the fair share dotted."""
    figure, axes = plt.subplots(1, len(data), figsize=(5.2 * len(data), 4.2), squeeze=False)
    for axis, (players, run) in zip(axes[0], sorted(data.items())):
        rows = run["eval"]
        for opponent in dict.fromkeys(row["opponent"] for row in rows):
            points = [row for row in rows if row["opponent"] == opponent]
            steps = [row["timesteps"] / 1e6 for row in points]
            axis.plot(steps, [row["win_rate"] for row in points], marker="o", label=opponent)
            axis.fill_between(steps, [row["win_low"] for row in points], [row["win_high"] for row in points], alpha=0.2)
        axis.axhline(1 / int(players), linestyle=":", color="grey")
        axis.set_ylim(0, 1)
        axis.set_xlabel("environment steps (millions)")
        axis.set_title(f"{players} players ({run['config']})", fontsize=9)
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8, loc="lower right")
    axes[0][0].set_ylabel("match win rate (95% Wilson interval)")
    figure.suptitle("PPO in JAX from the shipped networks: duplicate matches during the long runs")
    figure.tight_layout()
    save_figure(figure, path)


def main(argv: Sequence[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=FIGURES, help="folder to write into (default docs/figures)")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS), help="draw only these")
    parser.add_argument("--gif-scale", type=float, default=1.0, help="size of the GIF against 800x480 (default 1)")
    parser.add_argument("--from-runs", type=Path, default=None,
                        help="gather the long runs' evaluations from this runs folder first (long_runs)")
    args = parser.parse_args(argv)
    if not 0 < args.gif_scale <= 1:
        parser.error(f"--gif-scale must be in (0, 1], got {args.gif_scale}")
    args.out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if "hand" in args.only:
        written.append(args.out / "hand.gif")
        write_gif(hand_frames(), written[-1], scale=args.gif_scale)
    if "ladder" in args.only:
        rows = read_ladder()
        check_ladder(rows)
        written.append(args.out / "ladder_2p.png")
        plot_ladder(rows, written[-1])
    if "curves" in args.only:
        written += draw_curves(args.out)
    if "long_runs" in args.only:
        if args.from_runs is not None:
            gather_long_runs(args.from_runs, DATA / "jax_long_runs.json")
        written.append(args.out / "long_runs.png")
        plot_long_runs(read_json(DATA / "jax_long_runs.json"), written[-1])
    if "throughput" in args.only:
        written.append(args.out / "throughput_batch_2p.png")
        plot_throughput(read_json(DATA / "throughput_2p.json"), written[-1])
    for path in written:
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB)")
    return written


if __name__ == "__main__":
    main(sys.argv[1:])
