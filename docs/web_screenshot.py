"""The getting-started page's screenshot of draw-web: ``docs/figures/web_play.png``.

Starts ``draw-web`` on a free port (records in a temporary folder), starts a match against the
shipped network with seed 5, places the first listed tile three times, then has headless
Chromium (Debian's ``chromium``) photograph the page with the hint panel open::

    .venv/bin/python docs/web_screenshot.py [--out docs/figures/web_play.png]
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "figures" / "web_play.png"))
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--moves", type=int, default=3)
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        parser.error("needs Debian's chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as scratch:
        server = subprocess.Popen(
            [sys.executable, "-m", "arena.web.server", "--port", "0", "--no-browser", "--records", f"{scratch}/records"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline().split("http://127.0.0.1:")[1].split("/")[0])
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

            def call(method: str, path: str, body: Any = None) -> Any:
                headers = {"Content-Type": "application/json"} if body is not None else {}
                connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
                return json.loads(connection.getresponse().read())

            view = call("POST", "/api/games", {"seats": ["person", "network"], "episode": "match", "seed": args.seed})
            for _ in range(args.moves):
                placements = sorted(action for entry in view["hand"] for action in entry["actions"])
                view = call("POST", f"/api/games/{view['id']}/move", {"action": (placements or view["legal"])[0], "step": view["step"]})
            subprocess.run(
                [
                    chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1000,800",
                    "--virtual-time-budget=4000", f"--user-data-dir={scratch}/profile", f"--screenshot={args.out}",
                    f"http://127.0.0.1:{port}/#{view['id']}/hint",
                ],
                check=True,
                capture_output=True,
            )
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
