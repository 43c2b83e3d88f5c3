"""What the adapters share: the two policy kinds (a network, a table), the CPU clock of training,
and the schedule of curve points over a budget.

A network policy plays its softmax over the legal actions (sampling), the distribution the
benchmark measures; its spec says so (``deterministic=false``), so that ``draw-eval`` and
``draw-exploit`` play the saved file as it was measured.
"""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.policy_file import PolicyWeights
from agents.policy_network import NumpyPolicy
from agents.tabular import save_table
from train.bench.protocol import BenchGame, Budget


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (user + system): what a cell
    spends, worker processes included once they have ended."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class NetworkPolicy:
    """A policy network (:class:`agents.policy_network.NumpyPolicy`) playing its softmax."""

    def __init__(self, weights: PolicyWeights) -> None:
        self.network = NumpyPolicy(weights, deterministic=False)
        #: What the network reads (its weights'): what it is measured with.
        self.obs_type = weights.obs_type
        #: The library versions of the interpreter that trained it, where that is not this one
        #: (the cell's record keeps them instead of this interpreter's).
        self.trained_versions: dict[str, str | None] | None = None

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float64 ``(k, A)``: the softmax of the legal actions' logits of each row."""
        return self.network.probabilities_batch(observations, masks, deterministic=False)

    def save(self, path_stem: Path, game: BenchGame) -> str:
        """``path_stem.npz`` and its ``.json`` record (a policy file); the ``network`` spec that
        samples from it."""
        self.network.check_game(game.rules)
        path = self.network.save(Path(path_stem).with_suffix(".npz"))
        return f"network:path={path},deterministic=false"


class TablePolicy:
    """A table from observations or information states (uint8 rows, ``obs_type``) to
    distributions: the exact solver's policy."""

    def __init__(
        self, observations: np.ndarray, probabilities: np.ndarray, about: dict[str, Any], obs_type: str = "observation"
    ) -> None:
        self.observations = observations.astype(np.uint8)
        self.probabilities = probabilities
        self.about = about
        self.obs_type = obs_type
        self._index = {row.tobytes(): i for i, row in enumerate(self.observations)}

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float64 ``(k, A)``: each row's distribution in the table.

        Raises:
            ValueError: for an observation that is not in the table.
        """
        rows = []
        for observation in np.asarray(observations).astype(np.uint8):
            row = self._index.get(observation.tobytes())
            if row is None:
                raise ValueError("an observation the table does not hold (another variant, or a match)")
            rows.append(row)
        return np.asarray(self.probabilities[rows], np.float64)

    def save(self, path_stem: Path, game: BenchGame) -> str:
        """``path_stem.npz`` and its ``.json`` record (:func:`agents.tabular.save_table`); the
        ``tabular`` spec that plays it."""
        path = save_table(Path(path_stem).with_suffix(".npz"), game.rules, self.observations, self.probabilities,
                          self.about, self.obs_type)
        return f"tabular:path={path}"


@dataclass
class TrainingClock:
    """CPU seconds spent training: only the spans inside :meth:`running` count (the curve's
    measurements, run between them, do not)."""

    seconds: float = 0.0
    _started: float | None = field(default=None, repr=False)
    wall: float = 0.0

    def start(self) -> None:
        self._started, self._wall = cpu_seconds(), time.perf_counter()

    def stop(self) -> None:
        if self._started is not None:
            self.seconds += cpu_seconds() - self._started
            self.wall += time.perf_counter() - self._wall
            self._started = None

    def now(self) -> float:
        """The seconds so far, the running span included."""
        return self.seconds + (0.0 if self._started is None else cpu_seconds() - self._started)


@dataclass
class CurveSchedule:
    """``points`` curve points evenly spaced over the budget: by environment steps where the
    budget has them, else by CPU seconds; the last is at the end of training."""

    budget: Budget
    points: int
    done: int = 0

    def fraction(self, env_steps: int, cpu: float) -> float:
        """How much of the budget is spent (the larger share of the two bounds)."""
        shares = []
        if self.budget.env_steps is not None:
            shares.append(env_steps / self.budget.env_steps)
        if self.budget.cpu_seconds is not None:
            shares.append(cpu / self.budget.cpu_seconds)
        return max(shares)

    def due(self, env_steps: int, cpu: float) -> bool:
        """Whether the next curve point is reached (the caller then takes it and calls :meth:`taken`)."""
        return self.done < self.points and self.fraction(env_steps, cpu) >= (self.done + 1) / self.points

    def taken(self) -> None:
        self.done += 1

    def next_steps(self, env_steps: int) -> int | None:
        """The environment steps of the next curve point (``None`` when the budget has none)."""
        if self.budget.env_steps is None:
            return None
        return max(env_steps + 1, -(-self.budget.env_steps * (self.done + 1) // self.points))
