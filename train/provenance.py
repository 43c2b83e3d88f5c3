"""Where a trained file's code came from, for its record's provenance (``source``).

A policy file says which config trained it; ``source`` adds which code: the package's version
and, when it runs from a git checkout, the commit and whether tracked files differ from it
(``dirty``). A file trained from a clean checkout of commit C is reproduced by the same command
from a fresh clone of C (on the same kind of machine: see each pipeline's page for what repeats).
"""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def source() -> dict[str, Any]:
    """``{"version": ...}``, with ``"commit"`` and ``"dirty"`` where the code is a git checkout
    (git found and answering within seconds); read once per process."""
    try:
        version = metadata.version("draw-dominoes")
    except metadata.PackageNotFoundError:
        version = "unknown"
    found: dict[str, Any] = {"version": version}
    try:
        commit = _git("rev-parse", "HEAD")
        changed = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return found
    found.update(commit=commit, dirty=bool(changed))
    return found


def _git(*arguments: str) -> str:
    done = subprocess.run(["git", "-C", str(_ROOT), *arguments], capture_output=True, text=True, timeout=10, check=True)
    return done.stdout.strip()
