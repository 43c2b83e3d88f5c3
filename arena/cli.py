"""``draw-eval``: evaluations, leagues and budget sweeps from the command line."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import agents
from arena.charts import plot_evaluation, plot_league, plot_sweep
from arena.evaluation import evaluate
from arena.inputs import agent_files
from arena.options import (
    MAX_GAMES,
    MAX_LEAGUE_AGENTS,
    MAX_SWEEP_VALUES,
    MAX_WORKERS,
    SEATINGS,
    RunOptions,
    add_obs_type_argument,
    add_variant_arguments,
    check_plays_variant,
    variant_numbers_of,
    variant_of,
)
from arena.results import GAME_NOUNS
from arena.specs import agent_command
from draw_env.checks import MAX_SEED, check_int
from draw_env.commands import check_extras
from draw_env.io.files import check_distinct, check_writable
from draw_env.rules import EPISODES, PLAYER_COUNTS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-eval",
        description=(
            "Evaluate Draw dominoes agents in duplicate format: each deal is replayed with the seats "
            "permuted, and every participant gets a win rate with a Wilson 95% interval."
        ),
        epilog=(
            "Agents: " + ", ".join(agents.available()) + ".\n"
            "Keyword arguments follow a colon, e.g. ismcts:simulations=200,seed=1 or\n"
            "network:path=agents/policies/ppo_2p.npz (plain network, or its other name ppo, plays the\n"
            "shipped policy for the table's player count).\n"
            "Examples:\n"
            "  draw-eval heaviest variety --games 1000 --workers 2 --json results/hv.json --png results/hv.png\n"
            "  draw-eval --league random random_forced heaviest variety ismcts --players 3 --games 60\n"
            "  draw-eval ismcts variety --sweep simulations=25,50,100,200 --games 200\n"
            "  draw-eval heaviest variety --games 10 --records records/"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("agents", nargs="+", metavar="AGENT", help="agent specs: name or name:key=value,...")
    parser.add_argument(
        "--players",
        type=int,
        choices=PLAYER_COUNTS,
        help="players per table (default: the number of agents; required with --league)",
    )
    parser.add_argument(
        "--games",
        type=int,
        default=1000,
        help=(
            f"games in total, or per table with --league and --sweep (default 1000; a run plays at most {MAX_GAMES:,} "
            "in all); rounded up to whole "
            "deals, since each deal is played under every seating (2 with 2 players, n rotations or n! "
            "permutations with n = 3-4)"
        ),
    )
    parser.add_argument("--episode", choices=EPISODES, default="match", help="a game is a match or a hand")
    parser.add_argument(
        "--no-duplicate", dest="duplicate", action="store_false", help="independent deals instead of replays"
    )
    parser.add_argument(
        "--seatings", choices=SEATINGS, default="rotations", help="replays per deal with 3-4 players"
    )
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the seeded agents")
    parser.add_argument("--workers", type=int, default=1, help=f"worker processes (default 1, at most {MAX_WORKERS})")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the results as JSON here (checked before playing)")
    parser.add_argument("--png", type=Path, metavar="PATH", help="write a chart here (checked before playing)")
    parser.add_argument(
        "--records",
        type=Path,
        metavar="DIR",
        help=(
            "write one game record (JSON, replayable with draw-replay) per game: DIR/<table>/deal-D_seating-S.json, "
            "where <table> names the player count and the agents (e.g. 2p_heaviest_vs_variety) and S "
            "lists the agent index (in the table's order) sitting in each seat"
        ),
    )
    add_variant_arguments(parser)
    add_obs_type_argument(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--step-by-step",
        action="store_true",
        help="play every game through the PettingZoo environment, also where all agents could play "
        "many games at once on the batched environment (heaviest, variety, deterministic network)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--league",
        action="store_true",
        help=f"round robin of every table of --players agents (at most {MAX_LEAGUE_AGENTS}), openskill ratings",
    )
    mode.add_argument(
        "--sweep",
        metavar="KEY=V1,V2,...",
        help="evaluate the first agent against the others once per value of one keyword (a budget curve; "
        f"at most {MAX_SWEEP_VALUES} values)",
    )
    return parser


def _rounding_note(options: RunOptions) -> str | None:
    """Why a run plays more games per table than ``--games`` asked, if it does."""
    if options.games_per_table == options.num_games:
        return None
    return (
        f"--games {options.num_games} is rounded up to {options.games_per_table} "
        f"{GAME_NOUNS[options.episode]} per table: {options.num_deals} deals, each played under all "
        f"{options.replays_per_deal} seatings ({options.seatings}), so that every agent plays every "
        "seat's cards equally often."
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The ``draw-eval`` command."""
    check_extras("draw-eval")
    from arena.league import league, parse_sweep, sweep  # openskill: the eval extra

    with agent_command(build_parser(), argv) as (args, specs):
        swept = parse_sweep(args.sweep) if args.sweep else None
        if args.league:
            if args.players is None:
                raise ValueError("--league needs --players (2, 3 or 4)")
            num_players = args.players
        else:
            if args.players is not None and args.players != len(specs):
                raise ValueError(
                    f"--players is {args.players} but {len(specs)} agents were given; "
                    "give one agent per seat (the same name twice is allowed) or use --league"
                )
            num_players = len(specs)
        # The command's numbers, named as the user typed them (the API names its parameters).
        check_int("--games", args.games, minimum=1, maximum=MAX_GAMES)
        check_int("--workers", args.workers, minimum=1, maximum=MAX_WORKERS)
        if args.league and len(specs) > MAX_LEAGUE_AGENTS:
            raise ValueError(f"--league takes at most {MAX_LEAGUE_AGENTS} agents, got {len(specs)}")
        check_int("--seed", args.seed, minimum=0, maximum=MAX_SEED)
        game = variant_of(args, num_players) if num_players in PLAYER_COUNTS else None
        if game is not None:
            check_plays_variant([name for name, _ in specs], game)
        common: dict[str, Any] = {
            "episode": args.episode,
            "duplicate": args.duplicate,
            "seed": args.seed,
            "workers": args.workers,
            "progress": not args.quiet,
            "seatings": args.seatings,
            "records": args.records,
            "batched": not args.step_by_step,
            **variant_numbers_of(args),
            "obs_type": args.obs_type,
        }
        if 2 <= num_players <= 4:  # else evaluate() names the problem
            note = _rounding_note(RunOptions(num_players, args.games, **common))
            if note:
                print(f"Note: {note}")
        outputs = [("--json", args.json), ("--png", args.png), ("--records", args.records)]
        check_distinct(outputs, agent_files(specs, swept))
        for name in ("json", "png"):
            if getattr(args, name) is not None:
                check_writable(f"--{name}", getattr(args, name))
        if args.records is not None:
            check_writable("--records", args.records, directory=True)
        plot: Callable[[Any, Path], None]
        if args.league:
            outcome: Any = league(specs, num_players, args.games, **common)
            plot = plot_league
        elif swept is not None:
            key, values = swept
            outcome = sweep(specs[0], specs[1:], key, values, args.games, **common)
            plot = plot_sweep
        else:
            outcome = evaluate(specs, args.games, **common)
            plot = plot_evaluation
        print(outcome.summary())
        if args.json:
            outcome.to_json(args.json)
            print(f"JSON written to {args.json}")
        if args.png:
            plot(outcome, args.png)
            print(f"Chart written to {args.png}")
    if args.records:
        print(f"Game records written under {args.records}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
