"""One way to spread work over the machine's cores: ``process_map``.

The evaluation plays its deals, and the training pipelines collect their games, through this one
function, so that every pool starts the same way: in this process when ``workers`` is 1 (nothing
to start, easy to debug), else on forked worker processes where the platform has ``fork`` (they
start at once, also from a script read on stdin or a notebook, which ``spawn`` cannot re-import).
Work that outgrows one machine goes to Ray instead (``train.exit``'s ``--address``).

Stopping: SIGTERM or SIGHUP stops a worker as it stops the commands (:mod:`draw_env.commands`):
the item it is on raises ``SystemExit``, which removes that item's unfinished atomic writes and
reaches the caller as the item's result, and the worker refuses the items still queued. When the
caller stops reading (an exception, Ctrl-C, a signal), it stops its workers so (they ignore
Ctrl-C themselves) and waits for them, rather than for the queued items to finish.
"""

from __future__ import annotations

import functools
import multiprocessing
import signal
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import ProcessPoolExecutor
from types import FrameType
from typing import TypeVar

from draw_env.checks import check_int
from draw_env.commands import STOP_SIGNALS

T = TypeVar("T")
R = TypeVar("R")


def process_map(
    function: Callable[[T], R], items: Iterable[T], workers: int, chunksize: int = 1
) -> Generator[R, None, None]:
    """``map(function, items)`` on ``workers`` processes, results in the order of ``items``.

    ``function`` and the items must be picklable when ``workers`` > 1 (a module-level function and
    plain data). The results are yielded as they come in order, so a caller can show progress.
    """
    workers = check_int("workers", workers, minimum=1)
    if workers == 1:
        yield from map(function, items)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker) as pool:
        try:
            yield from pool.map(functools.partial(_run_item, function), items, chunksize=chunksize)
        except BaseException:
            _stop_workers(pool)
            raise


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the workers' items (SIGTERM, see :func:`_on_stop_signal`) and wait for the workers."""
    for process in list((pool._processes or {}).values()):  # Python 3.14 has terminate_workers()
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------------------- in a worker

#: In a worker: the exit status a stop signal asked for (0: none came), and whether an item runs.
_stop_status = 0
_in_item = False


def _start_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the caller, which stops the workers
    for number in STOP_SIGNALS:
        if signal.getsignal(number) != signal.SIG_IGN:  # nohup's SIGHUP stays ignored
            signal.signal(number, _on_stop_signal)


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    # Raised only inside an item: between items the pool's own code runs, whose queues a
    # SystemExit would leave broken; the next item raises it instead.
    global _stop_status
    _stop_status = 128 + signum
    if _in_item:
        raise SystemExit(_stop_status)


def _run_item(function: Callable[[T], R], item: T) -> R:
    global _in_item
    _in_item = True
    try:
        if _stop_status:
            raise SystemExit(_stop_status)
        return function(item)
    finally:
        _in_item = False
