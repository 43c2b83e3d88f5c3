"""What a learner may spend and what it has spent: :class:`Budget`, :class:`Clock` and :class:`Meter`.

Every learner of the project (``train(config, budget, on_checkpoint, points)`` in each learner's
package) trains until its :class:`Budget` is spent, counting on one :class:`Meter` the
environment steps (its library's own unit) and the CPU seconds of training (this process and its
finished children; measuring a checkpoint does not count), and calling ``on_checkpoint(env_steps,
cpu_seconds, policy)`` at ``points`` evenly spaced over the budget, the last one at the end of
training. ``draw-train`` and ``draw-bench`` are two callers of the same learners.
"""

from __future__ import annotations

import contextlib
import resource
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

P = TypeVar("P")

#: ``(env_steps so far, CPU seconds so far, the current policy)``, called at the requested points.
Checkpoint = Callable[[int, float, Any], None]


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (user + system): what training
    spends, worker processes included once they have ended."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass(frozen=True)
class Budget:
    """What a learner may spend: environment steps, CPU seconds of its process, or both (the first
    reached ends training). ``None`` is no bound on that measure; at least one is set."""

    env_steps: int | None = None
    cpu_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.env_steps is None and self.cpu_seconds is None:
            raise ValueError("a budget needs env_steps or cpu_seconds")
        steps, seconds = self.env_steps, self.cpu_seconds
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
            raise ValueError(f"budget env_steps must be a positive integer, got {steps!r}")
        number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
        if seconds is not None and not (number and 0 < seconds < float("inf")):
            raise ValueError(f"budget cpu_seconds must be a positive number, got {seconds!r}")

    def spent(self, env_steps: int, cpu_seconds: float) -> bool:
        """Whether ``env_steps`` and ``cpu_seconds`` reach the budget."""
        return (self.env_steps is not None and env_steps >= self.env_steps) or (
            self.cpu_seconds is not None and cpu_seconds >= self.cpu_seconds
        )

    def to_dict(self) -> dict[str, Any]:
        return {"env_steps": self.env_steps, "cpu_seconds": self.cpu_seconds}


class Clock:
    """The CPU seconds (this process and its finished children) and the wall seconds of training:
    the clock runs between :meth:`start` and :meth:`stop` only; :meth:`paused` stops it for a
    block (evaluating, saving, measuring are not training).

    Args:
        seconds, wall: CPU and wall seconds already spent (a run that continues).
    """

    def __init__(self, *, seconds: float = 0.0, wall: float = 0.0) -> None:
        self._seconds = seconds
        self._wall = wall
        self._started: tuple[float, float] | None = None

    def start(self) -> None:
        """Start the clock (training runs)."""
        if self._started is None:
            self._started = (cpu_seconds(), time.perf_counter())

    def stop(self) -> None:
        """Stop the clock (what follows is not training)."""
        if self._started is not None:
            cpu, wall = self._started
            self._seconds += cpu_seconds() - cpu
            self._wall += time.perf_counter() - wall
            self._started = None

    @property
    def seconds(self) -> float:
        """CPU seconds of training so far, the running span included."""
        return self._seconds + (0.0 if self._started is None else cpu_seconds() - self._started[0])

    @property
    def wall(self) -> float:
        """Wall seconds of training so far, the running span included."""
        return self._wall + (0.0 if self._started is None else time.perf_counter() - self._started[1])

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The clock stopped for the block (and started again after it if it ran)."""
        running = self._started is not None
        self.stop()
        try:
            yield
        finally:
            if running:
                self.start()


class Meter(Clock):
    """A learner's spending against its budget, and its checkpoints.

    The CPU clock runs between :meth:`start` and :meth:`stop` only (what runs between them is
    training); :meth:`reached` calls ``on_checkpoint`` at every point the steps (or seconds) now
    reach, with the clock paused, and :meth:`finish` calls the points left with the final policy,
    so that ``on_checkpoint`` is called exactly ``points`` times.

    Args:
        budget: what training may spend.
        points: how many checkpoints, evenly over the budget: by environment steps where the
            budget has them, else by CPU seconds (at least 1: the end of training).
        on_checkpoint: called at each point (``None``: nothing is called).
        seconds: CPU seconds already spent (a run that continues).
    """

    def __init__(
        self, budget: Budget, points: int = 1, on_checkpoint: Checkpoint | None = None, *, seconds: float = 0.0
    ) -> None:
        if isinstance(points, bool) or not isinstance(points, int) or points < 1:
            raise ValueError(f"checkpoint points must be a positive integer, got {points!r}")
        self.budget = budget
        self.points = points
        self.on_checkpoint = on_checkpoint
        #: The environment steps of the last :meth:`reached` or :meth:`finish`.
        self.steps = 0
        #: The points called so far.
        self.done = 0
        super().__init__(seconds=seconds)

    def spent(self, steps: int | None = None) -> bool:
        """Whether ``steps`` (default: the last counted) and the seconds so far reach the budget."""
        return self.budget.spent(self.steps if steps is None else steps, self.seconds)

    def fraction(self, steps: int) -> float:
        """How much of the budget ``steps`` and the seconds so far spend (the larger share)."""
        shares = []
        if self.budget.env_steps is not None:
            shares.append(steps / self.budget.env_steps)
        if self.budget.cpu_seconds is not None:
            shares.append(self.seconds / self.budget.cpu_seconds)
        return max(shares)

    def due(self, steps: int) -> bool:
        """Whether the next point is reached at ``steps``."""
        return self.done < self.points and self.fraction(steps) >= (self.done + 1) / self.points

    def next_steps(self, steps: int) -> int | None:
        """The environment steps of the next point after ``steps`` (``None``: the budget has none)."""
        if self.budget.env_steps is None:
            return None
        return max(steps + 1, -(-self.budget.env_steps * (self.done + 1) // self.points))

    def reached(self, steps: int, policy: Callable[[], Any]) -> None:
        """Count ``steps`` (the total so far) and call ``on_checkpoint`` at every point reached
        before the budget is spent, each with a policy of ``policy()`` (the clock paused: neither
        building it nor the checkpoint is training)."""
        self.steps = steps
        with self.paused():
            while self.due(steps) and not self.spent(steps):
                built = policy() if self.on_checkpoint is not None else None
                self.done += 1
                if self.on_checkpoint is not None:
                    self.on_checkpoint(steps, self.seconds, built)

    def finish(self, steps: int, policy: P) -> P:
        """End training at ``steps``: the clock stops, and the points left (the last one at
        least) are called with the final ``policy``, which is returned."""
        self.stop()
        self.steps = steps
        while True:
            self.done += 1
            if self.on_checkpoint is not None:
                self.on_checkpoint(steps, self.seconds, policy)
            if self.done >= self.points:
                return policy
