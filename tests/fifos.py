"""A guard for tests that hand a command a FIFO where it expects a file: a reader that opens the
FIFO waits for a writer, so a regression would hang the test instead of failing it."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def unblocked(fifo: Path) -> Iterator[None]:
    """Run the body; a reader it leaves waiting on ``fifo`` is handed an empty file within 0.2 s."""
    done = threading.Event()

    def release() -> None:
        while not done.wait(0.2):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # succeeds only while a reader waits
            except OSError:  # ENXIO: nobody reads it
                continue

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
