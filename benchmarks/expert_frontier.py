"""Strength against CPU time: the frontier of the search experts at several budgets.

Each candidate (an agent spec at one budget: ``ismcts:simulations=5000``, ``pimc:worlds=16,depth=3``)
plays duplicate games against one fixed reference (``--reference``; with 3 or 4 players, against
that many copies of it) through the project's evaluation (``arena.evaluation.evaluate``: duplicate
deals, rotated seats). For each candidate the table gives its win rate with the Wilson 95%
interval and its CPU milliseconds per real decision (two or more legal actions; the evaluation
times each agent's own decisions in CPU time, so the load of the machine does not enter). A
candidate is on the frontier (``*``) when no other candidate is both cheaper (or as cheap) and
stronger.

    .venv/bin/python benchmarks/expert_frontier.py --workers 2 --json frontier.json --png frontier.png
    .venv/bin/python benchmarks/expert_frontier.py --reference heaviest --games 100 \\
        --budgets ismcts:simulations=1000 pimc:worlds=8,depth=2

Every figure depends on ``--seed`` only (the timings aside): rerun the same command for the same
games. With ``--json`` the file is rewritten after every point, and rerunning the same command
continues: points already in the file for the same settings are kept, not played again, so a
long frontier can be measured in blocks and survives an interruption. The file is checked field by
field before anything is played: a malformed point or other settings is one error line per bad
field, naming the file and the field (exit status 2), and the file holds strict JSON only (an
infinite CPU time is ``null``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import agents
from agents.base import observe
from arena.charts import save_figure
from arena.evaluation import evaluate
from arena.specs import Spec, check_buildable, normalise_spec, spec_label
from draw_env.checks import MAX_SEED, is_integer, is_number
from draw_env.io.files import check_distinct, check_writable, write_text_atomic
from draw_env.io.untrusted import read_json
from draw_env.rules import PLAYER_COUNTS, DrawGame

#: The candidates of a run without ``--budgets``: PIMC from cheap to deep, the compiled ISMCTS from a
#: fifth to four times its default budget of 5,000 simulations, and the same search with the shipped
#: network's values of the root actions (``ppo_search``, expert iteration's expert), all against the
#: default ``ismcts``, so that a candidate at its CPU time per decision reads as a gain at equal cost.
DEFAULT_BUDGETS = (
    "pimc:worlds=8,depth=2",
    "pimc:worlds=16,depth=3",
    "ismcts:simulations=1000",
    "pimc:worlds=32,depth=4",
    "ppo_search",
    "pimc:worlds=64,depth=5",
    "ismcts:simulations=20000",
)
DEFAULT_REFERENCE = "ismcts"
#: Most games a point may play: far beyond any run, and a count the JSON file holds and reads back.
MAX_GAMES = 1_000_000_000


def _within(low: float, high: float = math.inf) -> Callable[[object], bool]:
    return lambda value: is_number(value) and low <= value <= high  # type: ignore[operator]


def _cpu_milliseconds(value: object) -> bool:
    return value is None or _within(0)(value)  # null: a player that never had a real decision


#: Lines a malformed file is reported in at most (an edited file may hold thousands of bad points).
MAX_PROBLEMS_SHOWN = 20
#: What each field of a point holds, as (what it must be, its test); ``frontier`` may be absent.
POINT_FIELDS: dict[str, tuple[str, Callable[[object], bool]]] = {
    "agent": ("one of the agent names", lambda value: isinstance(value, str) and value in agents.available()),
    "kwargs": ("an object of keyword arguments", lambda value: isinstance(value, dict)),
    "label": ("a non-empty string", lambda value: isinstance(value, str) and value != ""),
    "games": ("an integer >= 1", lambda value: is_integer(value) and value >= 1),  # type: ignore[operator]
    "win_rate": ("a finite number in [0, 1]", _within(0, 1)),
    "win_low": ("a finite number in [0, 1]", _within(0, 1)),
    "win_high": ("a finite number in [0, 1]", _within(0, 1)),
    "zero_sum_per_hand": ("a finite number", is_number),
    "decisions_per_second": ("a finite number >= 0", _within(0)),
    "cpu_ms_per_decision": ("a finite number >= 0, or null", _cpu_milliseconds),
    "reference_cpu_ms_per_decision": ("a finite number >= 0, or null", _cpu_milliseconds),
    "cpu_seconds": ("a finite number >= 0", _within(0)),
    "frontier": ("true or false", lambda value: isinstance(value, bool)),
}


def measure(candidate: Spec, reference: Spec, args: argparse.Namespace) -> dict[str, Any]:
    """One point of the frontier: ``candidate`` against ``args.players - 1`` copies of ``reference``."""
    players = [candidate] + [reference] * (args.players - 1)
    warm_up([candidate, reference], args.players)
    cpu_before = cpu_seconds_used()
    result = evaluate(players, args.games, episode=args.episode, seed=args.seed, workers=args.workers,
                      progress=not args.quiet)
    mine, theirs = result.participants[0], result.participants[1]
    return {
        "agent": candidate[0],
        "kwargs": candidate[1],
        "label": mine.label,
        "games": result.num_games,
        "win_rate": mine.win_rate,
        "win_low": mine.win_low,
        "win_high": mine.win_high,
        "zero_sum_per_hand": mine.zero_sum_per_hand,
        "decisions_per_second": mine.decisions_per_second,
        "cpu_ms_per_decision": milliseconds(mine.decisions_per_second),
        "reference_cpu_ms_per_decision": milliseconds(theirs.decisions_per_second),
        "cpu_seconds": cpu_seconds_used() - cpu_before,
    }


def settings(args: argparse.Namespace, reference: str) -> dict[str, Any]:
    """What the points of one frontier share: a point measured under other settings is another experiment."""
    return {"reference": reference, "num_players": args.players, "episode": args.episode, "games": args.games,
            "seed": args.seed}


def earlier_points(args: argparse.Namespace, reference: str) -> dict[str, dict[str, Any]]:
    """The points an earlier run of the same settings left in ``--json``, by label (none without the file).

    The file may have been edited or swapped: it is read with the bounded JSON reader and every
    point is checked before one is reused.

    Raises:
        ValueError: naming the file and the field, if it holds other settings or a malformed point.
    """
    if args.json is None or not args.json.exists():
        return {}
    data = read_json(args.json)
    source = args.json
    if not isinstance(data, dict):
        raise ValueError(f"{source}: must hold a JSON object")
    for key, value in settings(args, reference).items():
        if data.get(key) != value:
            raise ValueError(f"{source}: field {key!r} is {data.get(key)!r}, this run's is {value!r}; "
                             "choose another --json or delete the file to start over")
    points = data.get("points")
    if not isinstance(points, list):
        raise ValueError(f"{source}: field 'points' must be a list")
    problems = [problem for index, point in enumerate(points) for problem in point_problems(index, point)]
    if not problems:  # every point is one: its label is a string
        seen: set[str] = set()
        for index, point in enumerate(points):
            if point["label"] in seen:
                problems.append(f"field 'points[{index}].label' repeats an earlier point's, {point['label']!r:.80}")
            seen.add(point["label"])
    if problems:
        shown = [f"{source}: {problem}" for problem in problems[:MAX_PROBLEMS_SHOWN]]
        if len(problems) > MAX_PROBLEMS_SHOWN:
            shown.append(f"{source}: and {len(problems) - MAX_PROBLEMS_SHOWN} more problems")
        raise ValueError("\n".join(shown))
    return {point["label"]: {key: math.inf if value is None else value for key, value in point.items()} for point in points}


def point_problems(index: int, point: object) -> list[str]:
    """What is wrong with ``points[index]`` of a frontier file, one line per field (none: it is a point)."""
    where = f"points[{index}]"
    if not isinstance(point, dict):
        return [f"field '{where}' must be an object, got {point!r:.80}"]
    problems = [f"field '{where}.{key}' is not a field of a point (fields: {', '.join(POINT_FIELDS)})"
                for key in point if key not in POINT_FIELDS]
    for key, (expected, test) in POINT_FIELDS.items():
        if key not in point:
            if key != "frontier":
                problems.append(f"field '{where}.{key}' is missing")
        elif not test(point[key]):
            problems.append(f"field '{where}.{key}' must be {expected}, got {point[key]!r:.80}")
    if not problems and not point["win_low"] <= point["win_rate"] <= point["win_high"]:
        interval = [point[key] for key in ("win_low", "win_rate", "win_high")]
        problems.append(f"field '{where}.win_rate' must lie in its interval [win_low, win_high], got {interval}")
    return problems


def write_points(args: argparse.Namespace, reference: str, points: list[dict[str, Any]]) -> None:
    """The points so far as JSON, atomically (JSON has no infinity: ``None`` for a player that never decided).

    ``cpu_seconds`` is the total over the points, measured in whichever run played each."""
    data = {**settings(args, reference), "cpu_seconds": total_cpu_seconds(points),
            "points": [{key: None if value == math.inf else value for key, value in p.items()} for p in points]}
    # Strict JSON: a number that is not finite is an error here, never written as a file the next run refuses.
    write_text_atomic(args.json, json.dumps(data, indent=2, allow_nan=False))


def total_cpu_seconds(points: list[dict[str, Any]]) -> float:
    """CPU seconds the points took together, each measured in the run that played it."""
    return sum(p["cpu_seconds"] for p in points)


def cpu_seconds_used() -> float:
    """CPU seconds of this process and its finished workers."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def milliseconds(decisions_per_second: float) -> float:
    """CPU milliseconds per decision; infinite for a player that never had a real decision to make."""
    return 1e3 / decisions_per_second if decisions_per_second > 0 else math.inf


def warm_up(specs: list[Spec], num_players: int) -> None:
    """One decision of each agent before the timing: a compiled agent loads (or compiles) its machine code
    on its first decision, which is no part of its cost per decision (forked workers inherit it)."""
    state = DrawGame(num_players).new_state(random.Random(0))
    for name, kwargs in specs:
        agents.make(name, **kwargs).act(observe(state, state.current))


def mark_frontier(points: list[dict[str, Any]]) -> None:
    """Set ``frontier``: no other point is as cheap or cheaper and has a higher win rate."""
    for point in points:
        point["frontier"] = not any(
            other is not point
            and other["cpu_ms_per_decision"] <= point["cpu_ms_per_decision"]
            and other["win_rate"] > point["win_rate"]
            for other in points
        )


def table(points: list[dict[str, Any]], reference: str, args: argparse.Namespace) -> str:
    """The frontier as text, cheapest first."""
    games = "matches" if args.episode == "match" else "hands"
    against = reference if args.players == 2 else f"{args.players - 1} x {reference}"
    lines = [
        f"Strength against CPU time: {args.players} players, duplicate {games} against {against}, seed {args.seed}",
        f"{'':1} {'candidate':<40} {'games':>6} {'win rate':>8} {'95% interval':>15} {'CPU ms/decision':>15} "
        f"{'zero-sum/hand':>13}",
    ]
    for p in sorted(points, key=lambda p: p["cpu_ms_per_decision"]):
        lines.append(
            f"{'*' if p['frontier'] else '':1} {p['label']:<40} {p['games']:>6} {p['win_rate']:>8.3f} "
            f"{'[' + format(p['win_low'], '.3f') + ', ' + format(p['win_high'], '.3f') + ']':>15} "
            f"{p['cpu_ms_per_decision']:>15.2f} {p['zero_sum_per_hand']:>13.2f}"
        )
    reference_ms = [p["reference_cpu_ms_per_decision"] for p in points]
    lines.append(f"* on the frontier. The reference spent {min(reference_ms):.2f}-{max(reference_ms):.2f} CPU ms "
                 "per decision.")
    return "\n".join(lines)


def plot(points: list[dict[str, Any]], reference: str, args: argparse.Namespace, path: Path) -> None:
    """Win rate (Wilson 95% bars) against CPU ms per decision (log scale), one line per agent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def line(point: dict[str, Any]) -> str:  # weighted deals are another curve of the same agent
        return point["agent"] + (", deals weighted by a model" if "inference" in point["kwargs"] else "")

    figure, axis = plt.subplots(figsize=(8, 5))
    for agent in sorted({line(p) for p in points}):
        mine = sorted((p for p in points if line(p) == agent), key=lambda p: p["cpu_ms_per_decision"])
        x = [p["cpu_ms_per_decision"] for p in mine]
        y = [p["win_rate"] for p in mine]
        errors = [[p["win_rate"] - p["win_low"] for p in mine], [p["win_high"] - p["win_rate"] for p in mine]]
        axis.errorbar(x, y, yerr=errors, fmt="o-", capsize=4, label=agent)
        for p in mine:
            settings = ",".join(f"{key}={value}" for key, value in sorted(p["kwargs"].items()) if key != "inference")
            axis.annotate(settings, (p["cpu_ms_per_decision"], p["win_rate"]), textcoords="offset points",
                          xytext=(5, -12), fontsize=7)
    axis.axhline(1 / args.players, color="grey", linestyle="--", label="fair share")
    if args.players == 2:  # the reference against itself: the point a candidate at equal cost is compared with
        reference_ms = sorted(p["reference_cpu_ms_per_decision"] for p in points)[len(points) // 2]
        axis.plot([reference_ms], [0.5], "k*", markersize=12, label=f"{reference} itself (median cost)")
    axis.set_xscale("log")
    axis.set_xlabel("CPU ms per decision (log scale)")
    axis.set_ylabel("win rate (Wilson 95% interval)")
    games = "matches" if args.episode == "match" else "hands"
    axis.set_title(f"{args.players} players: {points[0]['games']} duplicate {games} per point against {reference}",
                   fontsize=10)
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    save_figure(figure, path)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budgets", nargs="+", default=list(DEFAULT_BUDGETS), metavar="SPEC",
                        help="the candidates, each an agent spec at one budget (default: "
                             + " ".join(DEFAULT_BUDGETS) + ")")
    parser.add_argument("--reference", default=DEFAULT_REFERENCE,
                        help=f"the fixed opponent (default {DEFAULT_REFERENCE}; 'heaviest' for a quick run)")
    parser.add_argument("--games", type=int, default=2000, help="games per candidate, duplicate replays counted")
    parser.add_argument("--players", type=int, default=2, choices=PLAYER_COUNTS)
    parser.add_argument("--episode", default="hand", choices=["match", "hand"],
                        help="a game is one hand (the default: a match costs about four) or a match")
    parser.add_argument("--workers", type=int, default=1, help="processes to play on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the points as JSON here")
    parser.add_argument("--png", type=Path, help="also draw the frontier as a PNG here")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if not 1 <= args.games <= MAX_GAMES or args.workers < 1 or not 0 <= args.seed <= MAX_SEED:
        parser.error(f"--games must be in 1..{MAX_GAMES}, --workers >= 1 and --seed in 0..{MAX_SEED}")
    try:
        args.candidates = [normalise_spec(text) for text in args.budgets]
        args.reference_spec = normalise_spec(args.reference)
        check_buildable([*args.candidates, args.reference_spec])
        check_distinct([("--json", args.json), ("--png", args.png)])
        for name in ("json", "png"):
            if getattr(args, name) is not None:
                check_writable(f"--{name}", getattr(args, name))
    except ValueError as error:
        parser.error(str(error))
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    reference = spec_label(*args.reference_spec)
    try:
        earlier = earlier_points(args, reference)
    except ValueError as error:
        for line in str(error).splitlines():
            print(f"expert_frontier.py: error: {line}", file=sys.stderr)
        raise SystemExit(2) from None
    started = time.perf_counter()
    points: list[dict[str, Any]] = []
    for index, candidate in enumerate(args.candidates, 1):
        label = spec_label(*candidate)
        if label in earlier:
            points.append({key: value for key, value in earlier[label].items() if key != "frontier"})
            if not args.quiet:
                print(f"[{index}/{len(args.candidates)}] {label}: kept from {args.json}", flush=True)
            continue
        if not args.quiet:
            print(f"[{index}/{len(args.candidates)}] {label} against {reference}", flush=True)
        points.append(measure(candidate, args.reference_spec, args))
        if args.json is not None:
            write_points(args, reference, points)
    mark_frontier(points)
    print(table(points, reference, args))
    print(f"CPU time {cpu_seconds_used():.0f} s in this run (this process and its workers), "
          f"{total_cpu_seconds(points):.0f} s for all the points; wall {time.perf_counter() - started:.0f} s")
    if args.json is not None:
        write_points(args, reference, points)
        print(f"points written to {args.json}")
    if args.png is not None:
        plot(points, reference, args, args.png)
        print(f"plot written to {args.png}")

if __name__ == "__main__":
    main()
