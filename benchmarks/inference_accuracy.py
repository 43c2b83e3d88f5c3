"""Hidden-tile models measured on the play they are used against: how likely each makes the truth.

A model trained on one agent's hands is used by the search against another (the frontier's
opponent is the default ``ismcts``). This plays ``--games`` hands of ``--policy`` at every seat,
recording every decision as ``draw-train``'s inference pipeline does
(:func:`train.inference.collect.collect`), and gives for each model file, and for uniform deals,
the mean log-probability of each hidden tile's true place in nats (0 would be certainty) and the
gain over uniform: ``exp(gain)`` is how many times more likely the model makes each true place.

    .venv/bin/python benchmarks/inference_accuracy.py runs/inference_2p/hidden_tiles.npz \\
        runs/inference_2p_ismcts/hidden_tiles.npz --policy ismcts --games 1000

Every figure depends on ``--seed`` only: the same command gives the same table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.hidden_tiles import UniformHiddenTiles, load_hidden_tile_model
from draw_env.io.files import check_distinct, check_writable, write_text_atomic
from train.config import ConfigError, build
from train.inference.collect import collect
from train.inference.config import InferenceConfig
from train.inference.fit import mean_log_likelihood


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="hidden-tile model files (hidden_tiles.npz)")
    parser.add_argument("--policy", default="ismcts", help="the agent spec at every seat (default: ismcts)")
    parser.add_argument("--players", type=int, default=2, choices=[2, 3, 4])
    parser.add_argument("--games", type=int, default=1000, help="hands played (at least 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the table here as JSON")
    args = parser.parse_args(argv)
    try:
        config = build(InferenceConfig, {
            "num_players": args.players, "policy": args.policy, "games": args.games, "seed": args.seed,
            "validation": 0.5, "n_envs": min(args.games, 1000), "progress_bar": sys.stderr.isatty(),
        })
        game = config.game()
        models = {path: load_hidden_tile_model(path, game) for path in args.models}
        if args.json:
            check_distinct([("--json", args.json)], [("a model file", path) for path in args.models])
            check_writable("--json", args.json)
    except (ConfigError, ValueError, OSError) as error:
        parser.exit(2, f"inference_accuracy.py: error: {error}\n")

    started = time.process_time()
    data = collect(config)
    play_seconds = time.process_time() - started
    uniform, hidden_tiles = mean_log_likelihood(UniformHiddenTiles(game), data)
    rows = [{"model": "uniform", "log_likelihood": uniform, "gain": 0.0}]
    for path, model in models.items():
        log_likelihood, _ = mean_log_likelihood(model, data)
        rows.append({"model": path, "log_likelihood": log_likelihood, "gain": log_likelihood - uniform})

    print(f"\n{args.policy} at every seat, {args.players} players: {args.games:,} hands, {len(data):,} decisions, "
          f"{hidden_tiles:,} hidden tiles (seed {args.seed}; {play_seconds / 60:.1f} CPU-min playing)")
    width = max(len(row["model"]) for row in rows)
    print(f"{'model':<{width}} {'nats / hidden tile':>18} {'gain':>8} {'x':>6}")
    for row in rows:
        print(f"{row['model']:<{width}} {row['log_likelihood']:>18.4f} {row['gain']:>+8.4f} "
              f"{math.exp(row['gain']):>6.3f}")
    if args.json:
        settings = {"policy": args.policy, "players": args.players, "games": args.games, "seed": args.seed,
                    "decisions": len(data), "hidden_tiles": hidden_tiles, "play_cpu_seconds": round(play_seconds, 1)}
        write_text_atomic(args.json, json.dumps({**settings, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
