"""What every command of the project does with bad input: one line, exit code 2, no traceback.

A file, a config or an argument that cannot be used raises ``ValueError`` (the readers of
:mod:`draw_env.untrusted`, the config loaders, the argument checks) or, for a path that cannot
be read or written, ``OSError``. Each command (``draw-eval``, ``draw-play``, ``draw-train``,
``draw-distill``, ``draw-replay``, ``python -m train.export``, ``train/rllib_selfplay.py``) runs its work inside
:func:`reported_errors`, which turns them into one line, ``PROG: error: MESSAGE``, on standard
error and exit code 2, as ``argparse`` does for a bad option (without the usage text, which does
not help with a bad file).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["error_line", "reported_errors"]


def error_line(error: BaseException) -> str:
    """``error`` as one line: an ``OSError`` names its path, any other keeps its message."""
    if isinstance(error, OSError) and error.filename is not None:
        text = f"{error.filename}: {error.strerror or error}"
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split())


@contextmanager
def reported_errors(parser: argparse.ArgumentParser) -> Iterator[None]:
    """Run the body; a ``ValueError`` or ``OSError`` from it ends the program with
    ``PROG: error: MESSAGE`` on standard error and exit code 2."""
    try:
        yield
    except (ValueError, OSError) as error:
        print(f"{parser.prog}: error: {error_line(error)}", file=sys.stderr)
        raise SystemExit(2) from None
