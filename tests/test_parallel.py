"""arena.parallel.process_map: one pool for the evaluation and the training pipelines."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from arena.parallel import process_map
from draw_env.io.files import atomic_path


def _square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_in_the_order_of_the_items(workers: int) -> None:
    results = list(process_map(_square_and_pid, range(20), workers, chunksize=3))
    assert [value for value, _ in results] == [x * x for x in range(20)]
    processes = {pid for _, pid in results}
    assert (processes == {os.getpid()}) == (workers == 1)  # one worker plays in this process


def test_bad_worker_counts_are_value_errors() -> None:
    with pytest.raises(ValueError, match="workers must be an integer >= 1, got 0"):
        list(process_map(_square_and_pid, [1], 0))


def _write_and_be_stopped(target: str) -> None:
    """Writes ``target`` atomically and gets SIGTERM (as `timeout` sends it) halfway through."""
    with atomic_path(target) as temporary:
        temporary.write_text("half")
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)


def test_a_worker_stopped_in_the_middle_of_a_write_leaves_no_file(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stopped:  # the stop reaches the caller, with its status
        list(process_map(_write_and_be_stopped, [str(tmp_path / "a.json"), str(tmp_path / "b.json")], 2))
    assert stopped.value.code == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def _slow_after_the_first(x: int) -> int:
    if x:
        time.sleep(20)
    return x


def test_the_workers_stop_when_the_caller_stops_reading() -> None:
    started = time.monotonic()
    results = process_map(_slow_after_the_first, range(6), 2)
    assert next(results) == 0
    results.close()  # what an exception, Ctrl-C or SIGTERM in the caller does to the generator
    assert time.monotonic() - started < 5  # not the 20 s of each queued item
