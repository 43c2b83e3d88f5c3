"""How fast draw-web answers a move: the time from a person's move to the page's new view.

Starts ``draw-web`` (``python -m arena.web.server --port 0 --no-browser``) in its own process,
as a user would, then plays whole games against a network opponent over HTTP on loopback, one
keep-alive connection, timing each ``POST /api/games/{id}/move`` from sending the request to
having read the answer. That answer includes the opponent's replies (the shipped network by
default, one forward pass a decision, on NumPy) and the new view, so it is what the page waits
for. The person's moves are a seeded random choice among the legal ones.

Usage::

    python benchmarks/web_latency.py [--moves 400] [--opponent network] [--players 2] [--seed 0]

Prints the median, 90th percentile, mean and largest answer time in milliseconds; the goal is
a median under 100 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def request(connection: http.client.HTTPConnection, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=400, help="person moves to time (default 400)")
    parser.add_argument("--opponent", default="network", help="the agent spec in the other seats (default network)")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as records:
        server = subprocess.Popen(
            [sys.executable, "-m", "arena.web.server", "--port", "0", "--no-browser", "--records", records],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            line = server.stdout.readline()  # "draw-web: serving on http://127.0.0.1:PORT/ ..."
            port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            rng = random.Random(args.seed)
            times: list[float] = []
            games = 0
            opponent_moves = 0
            while len(times) < args.moves:
                seats = ["person"] + [args.opponent] * (args.players - 1)
                status, view = request(connection, "POST", "/api/games", {"seats": seats, "episode": "match", "seed": rng.randrange(2**31)})
                if status != 201:
                    raise SystemExit(f"the server refused the game: {view}")
                games += 1
                while not view["finished"] and len(times) < args.moves:
                    action = rng.choice(view["legal"])
                    start = time.perf_counter()
                    status, answer = request(connection, "POST", f"/api/games/{view['id']}/move", {"action": action, "step": view["step"]})
                    times.append(time.perf_counter() - start)
                    if status != 200:
                        raise SystemExit(f"the server refused a legal move: {answer}")
                    opponent_moves += answer["step"] - view["step"] - 1
                    view = answer
            connection.close()
        finally:
            server.terminate()
            server.wait(timeout=10)
    milliseconds = sorted(1000 * t for t in times)
    print(f"draw-web move answer time, {args.players} players, opponent {args.opponent}: {len(times)} moves in {games} matches")
    print(f"  opponent decisions per answer: {opponent_moves / len(times):.2f}")
    print(
        f"  median {statistics.median(milliseconds):.1f} ms, 90th percentile {milliseconds[int(0.9 * (len(milliseconds) - 1))]:.1f} ms, "
        f"mean {statistics.fmean(milliseconds):.1f} ms, largest {milliseconds[-1]:.1f} ms (goal: median under 100 ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
