"""One way to spread work over the machine's cores: ``process_map``.

The evaluation plays its deals, and the training pipelines collect their games, through this one
function, so that every pool starts the same way: in this process when ``workers`` is 1 (nothing
to start, easy to debug), else on forked worker processes where the platform has ``fork`` (they
start at once, also from a script read on stdin or a notebook, which ``spawn`` cannot re-import).
Work that outgrows one machine goes to Ray instead (``train.exit``'s ``--address``).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

from draw_env.checks import check_int

T = TypeVar("T")
R = TypeVar("R")


def process_map(
    function: Callable[[T], R], items: Iterable[T], workers: int, chunksize: int = 1
) -> Iterator[R]:
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
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        yield from pool.map(function, items, chunksize=chunksize)
