"""Every benchmark script still runs: its imports resolve and its command line parses (``--help``).

The benchmarks are scripts, outside the packages that ``tests/test_imports.py`` walks, so a
renamed module would otherwise break them silently. One subprocess runs every script's
``--help`` in turn (the imports they share are paid once).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))

RUN_ALL = """
import runpy, sys
for path in sys.argv[1:]:
    sys.argv = [path, "--help"]
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exit:
        if exit.code not in (0, None):
            raise
    print("OK", path, flush=True)
"""


def test_every_benchmark_imports_and_parses_its_arguments() -> None:
    assert len(SCRIPTS) >= 5
    done = subprocess.run(
        [sys.executable, "-c", RUN_ALL, *map(str, SCRIPTS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line.split()[1] for line in done.stdout.splitlines() if line.startswith("OK ")] == list(
        map(str, SCRIPTS)
    )
