"""The files a command's agents read, which none of the command's outputs may overwrite.

An agent that plays a policy takes it as its ``path`` keyword (``network:path=my.npz``); it reads
that file and the record beside it (``my.json`` for a policy file, ``my.policy.json`` for an SB3
checkpoint). :func:`agent_files` lists them for :func:`draw_env.io.files.check_distinct`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agents.policy_file import record_path
from agents.sb3_checkpoint import checkpoint_record_path
from arena.specs import spec_label


def agent_files(specs: Iterable[tuple[str, Mapping[str, Any]]], swept: tuple[str, list[Any]] | None = None) -> list[tuple[str, Path]]:
    """``(description, path)`` of every file that the agents of ``specs`` read.

    ``swept`` is a ``--sweep`` of ``draw-eval`` (key and values); a swept ``path`` names files too.
    """
    paths: list[tuple[str, Any]] = [(f"agent {spec_label(name, kwargs)}", kwargs.get("path")) for name, kwargs in specs]
    if swept is not None and swept[0] == "path":
        paths += [(f"--sweep path={value}", value) for value in swept[1]]
    files = []
    for owner, path in paths:
        if isinstance(path, (str, os.PathLike)) and os.fspath(path):
            for read in (Path(path), record_path(path), checkpoint_record_path(path)):
                files.append((f"a file of {owner}", read))
    return files
