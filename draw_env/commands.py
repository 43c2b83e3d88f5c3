"""What every command of the project does with bad input: one line, exit code 2, no traceback.

A file, a config or an argument that cannot be used raises ``ValueError`` (the readers of
:mod:`draw_env.io.untrusted`, the config loaders, the argument checks) or, for a path that cannot
be read or written, ``OSError``. Each command (``draw-eval``, ``draw-play``, ``draw-train``,
``draw-distill``, ``draw-replay``, ``python -m train.export``, ``train/rllib_selfplay.py``) runs its work inside
:func:`reported_errors`, which turns them into one line, ``PROG: error: MESSAGE``, on standard
error and exit code 2, as ``argparse`` does for a bad option (without the usage text, which does
not help with a bad file).

A signal that asks a command to stop (``SIGTERM``, as ``timeout`` and ``kill`` send it, or
``SIGHUP`` when the terminal closes) ends it as Ctrl-C does: inside :func:`reported_errors` it
raises ``SystemExit(128 + signal)``, so that every ``finally`` and every unfinished atomic write
(:mod:`draw_env.io.files`) cleans up on the way out, and the exit status is the usual one (143 for
``SIGTERM``), without a traceback. Ctrl-C itself exits with status 130, also without one.

:func:`check_outputs` is the check of a script's output files before its work starts.

:func:`check_extras` is the first thing each of the eight commands of ``pyproject.toml``'s
``[project.scripts]`` does: ``pip install -e .`` installs them all, but most need one of the
project's extras (:data:`COMMAND_EXTRAS`). Without it the command ends with one line naming the
extra to install and exit code 2, before it imports anything the extra brings (each command's
module imports those only once its ``main`` has run this check).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

from draw_env.io.files import check_distinct, check_writable

__all__ = [
    "COMMAND_EXTRAS",
    "EXTRA_MODULES",
    "STOP_SIGNALS",
    "check_extras",
    "check_outputs",
    "error_line",
    "exit_on_signals",
    "reported_errors",
]

#: The signals that stop a command the way Ctrl-C does (SIGHUP does not exist on Windows).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def error_line(error: BaseException) -> str:
    """``error`` as one line: an ``OSError`` names its path, any other keeps its message."""
    if isinstance(error, OSError) and error.filename is not None:
        text = f"{error.filename}: {error.strerror or error}"
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split())


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def exit_on_signals() -> Iterator[None]:
    """While active, each of :data:`STOP_SIGNALS` raises ``SystemExit(128 + signal)`` (see the
    module docstring); the handlers before are restored after.

    A signal that is ignored stays ignored (``nohup`` ignores SIGHUP on purpose); only the default
    action, which kills the process before any cleanup, is replaced. Outside the main thread,
    where Python cannot set handlers, it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    replaced = {
        number: signal.signal(number, _exit_on_signal)
        for number in STOP_SIGNALS
        if signal.getsignal(number) == signal.SIG_DFL
    }
    try:
        yield
    finally:
        for number, handler in replaced.items():
            signal.signal(number, handler)


@contextmanager
def reported_errors(parser: argparse.ArgumentParser) -> Iterator[None]:
    """Run the body; a ``ValueError`` or ``OSError`` from it ends the program with
    ``PROG: error: MESSAGE`` on standard error and exit code 2; Ctrl-C ends it with exit
    code 130, SIGTERM or SIGHUP with 128 + the signal (:func:`exit_on_signals`)."""
    try:
        with exit_on_signals():
            yield
    except (ValueError, OSError) as error:
        print(f"{parser.prog}: error: {error_line(error)}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        print(file=sys.stderr)  # the shell's prompt then starts on a line of its own, after ^C
        raise SystemExit(130) from None


def check_outputs(
    parser: argparse.ArgumentParser,
    outputs: Sequence[tuple[str, str | os.PathLike[str] | None]],
    inputs: Sequence[tuple[str, str | os.PathLike[str] | None]] = (),
) -> None:
    """Check a command's output files before its work: each a distinct regular file path, none of
    them an input (:func:`~draw_env.io.files.check_distinct`), each writable
    (:func:`~draw_env.io.files.check_writable`). A problem ends the program as :func:`reported_errors`
    does: one line, exit code 2.

    ``outputs`` and ``inputs`` are ``(option, path)`` pairs; a ``None`` path is skipped.
    """
    try:
        check_distinct(outputs, inputs)
        for name, path in outputs:
            if path is not None:
                check_writable(name, path)
    except ValueError as error:
        print(f"{parser.prog}: error: {error_line(error)}", file=sys.stderr)
        raise SystemExit(2) from None


#: Each extra of ``pyproject.toml`` that a command needs -> the top-level modules the commands
#: import from what it installs (an extra's own extras included: ``train`` installs ``eval``).
#: tests/test_extras.py checks each module against ``pyproject.toml`` and each command against them.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "eval": ("openskill", "tqdm", "matplotlib", "threadpoolctl"),
    "train": (
        "openskill", "tqdm", "matplotlib", "threadpoolctl",
        "torch", "stable_baselines3", "sb3_contrib", "yaml", "pydantic", "tensorboard", "rich", "ray",
    ),
    "benchmark": (
        "openskill", "tqdm", "matplotlib", "threadpoolctl",
        "torch", "stable_baselines3", "sb3_contrib", "yaml", "pydantic", "tensorboard", "rich", "ray",
        "rliable", "pyspiel", "cvxpy", "jax", "flax", "optax",
    ),
    "web": ("starlette", "uvicorn"),
}

#: Each command of ``[project.scripts]`` -> the extra it needs (``None``: ``pip install -e .`` is enough).
COMMAND_EXTRAS: dict[str, str | None] = {
    "draw-eval": "eval",
    "draw-train": "train",
    "draw-distill": None,  # it only names the command that replaced it
    "draw-play": None,
    "draw-replay": None,
    "draw-exploit": "eval",
    "draw-bench": "benchmark",
    "draw-tune": "benchmark",  # rliable's intervals; the trials' pipelines (jax_ppo: JAX)
    "draw-web": "web",
}


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (torch takes seconds)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or blocked package; a module without a spec
        return False


def check_extras(command: str) -> None:
    """End ``command`` (a key of :data:`COMMAND_EXTRAS`) with one line on standard error and exit
    code 2 if a module of the extra it needs is not installed, such as
    ``draw-web needs the 'web' extra (not installed: uvicorn): pip install 'draw-dominoes[web]'``.

    pip installs an extra of an installed distribution from its metadata, so the line's command
    works for an editable install from a clone too.
    """
    extra = COMMAND_EXTRAS[command]
    if extra is None:
        return
    missing = [module for module in EXTRA_MODULES[extra] if not _installed(module)]
    if missing:
        print(
            f"{command} needs the {extra!r} extra (not installed: {', '.join(missing)}): "
            f"pip install 'draw-dominoes[{extra}]'",
            file=sys.stderr,
        )
        raise SystemExit(2)
