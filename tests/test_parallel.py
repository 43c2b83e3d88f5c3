"""arena.parallel.process_map: one pool for the evaluation and the training pipelines."""

from __future__ import annotations

import os

import pytest

from arena.parallel import process_map


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
