"""``tabular``: a policy given as a table from observations to action probabilities.

The exact solver (``draw-train`` with ``pipeline: cfr``) writes its average strategy this way for
the small 2-player variant it solved: ``NAME.npz`` holds ``observations`` (uint8 ``(K, L)``, every
observation the seat to act can have in one hand of the variant, ``L`` the variant's observation
length) and ``probabilities`` (float32 ``(K, 2T + 2)``), and ``NAME.json`` beside it says what the
table is (``format``, ``version``, the variant, and how it was made). Both are read as hostile
files: bounded, names, shapes and dtypes checked before the arrays are read, nothing unpickled.

The agent plays one hand (``episode="hand"``) of that variant, in either seat; any other
observation (another variant, a match) is refused with one ``ValueError``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Observation, SeededAgent, legal_actions
from draw_env.checks import check_path
from draw_env.files import atomic_path, write_json_atomic
from draw_env.observation import layout
from draw_env.rules import DrawGame
from draw_env.untrusted import ArrayHeader, read_json, read_npz

FORMAT = "draw-dominoes-tabular-policy"
VERSION = 1
#: The largest table file read (its arrays may be up to this many bytes too).
MAX_TABLE_BYTES = 2 * 1024**3
#: The most memory a loaded table may take (:func:`table_memory`), checked from the archive's
#: headers before any array is read: the double-three game of three tiles a player, about 0.6
#: million rows, takes about 0.3 GB.
MAX_TABLE_MEMORY = 2 * 1024**3
#: Bytes a row's entry in the agent's index takes beyond the row's own bytes: a bytes object's
#: header and a dict slot.
_INDEX_BYTES_PER_ROW = 40


def table_memory(rows: int, width: int, actions: int) -> int:
    """Bytes a table of ``rows`` observations of ``width`` entries and ``actions`` actions takes
    at the peak of its loading into a :class:`TabularAgent`: its uint8 observations, its float32
    probabilities as read and as float64, and the index from each row to its line. Measured with
    tracemalloc on tables of random rows, the peak is at or below it: 368 bytes a row of double-two
    (width 80, 14 actions; 368 estimated), 522 of double-three (532), 1,093 of the seeds' game (1,252)."""
    return rows * (width + 4 * actions + 8 * actions + width + _INDEX_BYTES_PER_ROW)


def record_path(path: str | os.PathLike[str]) -> Path:
    """The JSON record beside a table ``NAME.npz``: ``NAME.json``."""
    return Path(path).with_suffix(".json")


def save_table(
    path: str | os.PathLike[str], game: DrawGame, observations: np.ndarray, probabilities: np.ndarray,
    about: Mapping[str, Any],
) -> Path:
    """Write a table (atomically, the record last) for the 2-player hand of ``game``.

    Args:
        observations: uint8 ``(K, L)``, distinct.
        probabilities: ``(K, 2T + 2)``, each row a distribution over the legal actions.
        about: how the table was made (JSON-ready), stored in the record.
    """
    target = Path(path)
    if target.suffix != ".npz":
        raise ValueError(f"a table's path must end in .npz, got {str(target)!r}")
    with atomic_path(target) as temporary:
        np.savez_compressed(temporary, observations=observations.astype(np.uint8),
                            probabilities=probabilities.astype(np.float32))
    record = {"format": FORMAT, "version": VERSION, "num_players": 2, "episode": "hand", **game.variant,
              "rows": int(len(observations)), "about": dict(about)}
    write_json_atomic(record_path(target), record, indent=1)
    return target


def load_table(path: str | os.PathLike[str]) -> tuple[DrawGame, np.ndarray, np.ndarray]:
    """Read a table and its record: ``(game, observations, probabilities)``.

    Raises:
        ValueError: naming the file and the field, for anything that is not such a table.
    """
    where = Path(path)
    record = read_json(record_path(where), max_bytes=1024 * 1024)
    if not isinstance(record, dict):
        raise ValueError(f"{record_path(where)}: must be a JSON object")
    if record.get("format") != FORMAT or record.get("version") != VERSION:
        raise ValueError(f"{record_path(where)}: format must be {FORMAT!r} version {VERSION}, got "
                         f"{record.get('format')!r} version {record.get('version')!r}")
    try:
        game = DrawGame(2, record.get("max_pip"), record.get("hand_size"), record.get("protected"))  # type: ignore[arg-type]
    except ValueError as error:
        raise ValueError(f"{record_path(where)}: {error}") from None
    width, actions = layout(game).size, game.num_actions

    def check(headers: Mapping[str, ArrayHeader]) -> None:
        if set(headers) != {"observations", "probabilities"}:
            raise ValueError(f"arrays must be observations and probabilities, got {sorted(headers)}")
        rows = headers["observations"].shape[0] if len(headers["observations"].shape) == 2 else -1
        expected = {"observations": ((rows, width), np.uint8), "probabilities": ((rows, actions), np.float32)}
        if rows < 1:
            raise ValueError(f"observations must have shape (rows, {width}) with at least 1 row, got "
                             f"{headers['observations'].shape}")
        for name, (shape, dtype) in expected.items():
            header = headers[name]
            if header.shape != shape or header.dtype != np.dtype(dtype):
                raise ValueError(f"{name} must be {np.dtype(dtype)} of shape {shape}, got {header.dtype} {header.shape}")
        needed = table_memory(rows, width, actions)
        if needed > MAX_TABLE_MEMORY:
            raise ValueError(
                f"observations: {rows:,} rows take about {needed / 1024**2:,.0f} MiB once loaded, more than the "
                f"{MAX_TABLE_MEMORY / 1024**2:,.0f} MiB a table may take "
                f"(at most {MAX_TABLE_MEMORY // table_memory(1, width, actions):,} rows in this variant)"
            )

    arrays = read_npz(where, check, max_bytes=MAX_TABLE_BYTES)
    # A Fortran-order array reads as well as a C-order one; rows are looked up by their bytes.
    observations = np.ascontiguousarray(arrays.pop("observations"))
    probabilities = arrays.pop("probabilities").astype(np.float64)  # the float32 array is freed here
    if not np.all(np.isfinite(probabilities)) or np.any(probabilities < 0):
        raise ValueError(f"{where}: probabilities must be finite and non-negative")
    sums = probabilities.sum(axis=1)
    if np.any(np.abs(sums - 1.0) > 1e-5):
        raise ValueError(f"{where}: each row of probabilities must sum to 1")
    probabilities /= sums[:, None]
    return game, observations, probabilities


class TabularAgent(SeededAgent):
    """Plays the distributions of a table (``draw-train`` with ``pipeline: cfr`` writes them).

    Args:
        path: the table's ``.npz`` (its ``.json`` record beside it).
        seed: the sampler's seed (``None``: fresh entropy).

    Raises:
        ValueError: if the table cannot be read (naming the file and the field).
    """

    name = "tabular"

    def __init__(self, path: str | os.PathLike[str], seed: int | None = None) -> None:
        super().__init__(seed)
        self.path = check_path("path", path)
        self.game, observations, self.probabilities = load_table(self.path)
        self._rows = {row.tobytes(): index for index, row in enumerate(observations)}
        if len(self._rows) != len(observations):
            raise ValueError(f"{self.path}: observations must be distinct rows, but {len(observations) - len(self._rows):,} "
                             "repeat an earlier one")
        self._width = observations.shape[1]

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        vector = np.asarray(observation["observation"])
        mask = np.asarray(observation["action_mask"])
        if vector.shape != (self._width,) or mask.shape != (self.game.num_actions,):
            raise ValueError(
                f"tabular policy {self.path} plays one 2-player hand of {self._variant()}; this observation "
                f"(length {vector.size}, {mask.size} actions) is of another game"
            )
        row = self._rows.get(vector.astype(np.uint8).tobytes())
        if row is None or not np.array_equal(vector.astype(np.uint8), vector):
            raise ValueError(f"tabular policy {self.path} has no entry for this observation (it plays one "
                             f"2-player hand of {self._variant()}, episode='hand')")
        probabilities = self.probabilities[row]
        legal_actions(observation)  # refuses an all-zero mask: this agent is not the one to act
        if np.any(probabilities[mask == 0] > 0):
            raise ValueError(f"tabular policy {self.path} gives weight to an illegal action of this observation")
        return probabilities.copy()

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`action_probabilities` of each row of ``observations`` (``(k, L)``, with their masks
        ``(k, 2T + 2)``): float64 ``(k, 2T + 2)``."""
        observations = np.asarray(observations)
        if observations.ndim != 2 or len(observations) != len(masks):
            raise ValueError(f"observations must be (k, {self._width}) with one mask each, got {observations.shape}")
        rows = [self._rows.get(row.astype(np.uint8).tobytes(), -1) for row in observations]
        if observations.shape[1] != self._width or np.shape(masks)[1:] != (self.game.num_actions,) or min(rows, default=0) < 0:
            return np.array([self.action_probabilities({"observation": o, "action_mask": m}) for o, m in zip(observations, masks)])
        probabilities = self.probabilities[rows]
        if np.any(probabilities[np.asarray(masks) == 0] > 0):
            raise ValueError(f"tabular policy {self.path} gives weight to an illegal action of an observation")
        return probabilities

    def act(self, observation: Observation) -> int:
        probabilities = self.action_probabilities(observation)
        actions = np.flatnonzero(probabilities)
        threshold = self.rng.random()
        total = 0.0
        for action in actions:
            total += probabilities[action]
            if threshold < total:
                return int(action)
        return int(actions[-1])

    def _variant(self) -> str:
        return ", ".join(f"{key}={value}" for key, value in self.game.variant.items())
