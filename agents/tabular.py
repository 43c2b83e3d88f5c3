"""``tabular``: a policy given as a table from observations (or information states) to action
probabilities.

The exact solver (``draw-train`` with ``pipeline: cfr``) writes its average strategy this way for
the small 2-player variant it solved: ``NAME.npz`` holds ``observations`` (uint8 ``(K, L)``, every
vector the seat to act can be given in one hand of the variant) and ``probabilities`` (float32 or
float64 ``(K, 2T + 2)``), and ``NAME.json`` beside it says what the table is: the header of
every artefact (:mod:`agents.artefacts`: ``format``, ``version``, the npz's ``sha256``, and
``provenance``: how it was made), the variant, ``obs_type`` (what its rows are keyed by) and its
``rows``. A record of version 1 (written before the one artefact writer: no ``sha256``, its
provenance under ``about``) is still read. The
rows are the environment's vectors of that ``obs_type``: observations (``L`` the variant's
observation length) or information states (:func:`draw_env.observation.information_layout`); a
record without ``obs_type`` is keyed by observations. Both files are read as hostile files:
bounded, names, shapes and dtypes checked before the arrays are read, nothing unpickled.

The agent plays one hand (``episode="hand"``) of that variant, in either seat, given vectors of
its table's ``obs_type``; any other vector (the other ``obs_type``, another variant, a match) is
refused with one ``ValueError`` naming the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agents.artefacts import Artefact, open_artefact, save_artefact
from agents.artefacts import record_path as record_path  # where the record of a table lies
from agents.base import Observation, SeededAgent, legal_actions
from agents.inputs import DEFAULT_OBS_TYPE, OBS_TYPES, check_obs_type, observed_layout
from agents.policy_file import read_obs_type
from draw_env.checks import check_path
from draw_env.io.untrusted import ArrayHeader
from draw_env.rules import DrawGame

FORMAT = "draw-dominoes-tabular-policy"
VERSION = 2
#: The versions still read, with the header fields their records name otherwise: version 1 had
#: no sha256 and its provenance under ``about``.
OLDER = {1: {"about": "provenance"}}
#: The largest table file read (its arrays may be up to this many bytes too).
MAX_TABLE_BYTES = 2 * 1024**3
#: The most memory a loaded table may take (:func:`table_memory`), checked from the archive's
#: headers before any array is read: the double-three game of three tiles a player, about 0.6
#: million rows, takes about 0.3 GB.
MAX_TABLE_MEMORY = 2 * 1024**3
#: Bytes a row's entry in the agent's index takes beyond the row's own bytes: a bytes object's
#: header and a dict slot.
_INDEX_BYTES_PER_ROW = 40
#: The largest record read.
MAX_RECORD_BYTES = 1024 * 1024


def table_memory(rows: int, width: int, actions: int, probability_bytes: int = 4) -> int:
    """Bytes a table of ``rows`` vectors of ``width`` entries and ``actions`` actions takes at the
    peak of its loading into a :class:`TabularAgent`: its uint8 vectors, its probabilities as read
    (``probability_bytes`` an entry: float32 or float64) and as float64, and the index from each
    row to its line. Measured with tracemalloc on tables of random float32 rows, the peak is at or
    below it: 368 bytes a row of double-two (width 80, 14 actions; 368 estimated), 522 of
    double-three (532), 1,093 of the seeds' game (1,252)."""
    return rows * (width + probability_bytes * actions + 8 * actions + width + _INDEX_BYTES_PER_ROW)


def save_table(
    path: str | os.PathLike[str], game: DrawGame, observations: np.ndarray, probabilities: np.ndarray,
    provenance: Mapping[str, Any], obs_type: str = DEFAULT_OBS_TYPE,
) -> Path:
    """Write a table for the 2-player hand of ``game`` (:func:`agents.artefacts.save_artefact`:
    atomically, the record last, holding the npz's sha256).

    Args:
        observations: ``(K, L)`` distinct vectors of ``obs_type``, whole numbers in 0..255.
        probabilities: ``(K, 2T + 2)``, each row a distribution over the legal actions (kept in
            float64: a table played through the environment gives the solver's figures exactly).
        provenance: how the table was made (JSON-ready), stored in the record.
        obs_type: what the rows are: ``"observation"`` or ``"information_state"``.
    """
    if Path(path).suffix != ".npz":
        raise ValueError(f"a table's path must end in .npz, got {str(path)!r}")
    check_obs_type("obs_type", obs_type)
    width = observed_layout(game, obs_type).size
    if np.shape(observations)[1:] != (width,) or np.any(observations != np.asarray(observations).astype(np.uint8)):
        raise ValueError(f"observations must be whole numbers in 0..255 of shape (K, {width}) for obs_type={obs_type!r}")
    arrays: dict[str, np.ndarray] = {"observations": observations.astype(np.uint8), "probabilities": probabilities.astype(np.float64)}
    fields = {"num_players": 2, "episode": "hand", **game.variant, "obs_type": obs_type, "rows": int(len(observations))}
    return save_artefact(path, FORMAT, VERSION, arrays, fields, provenance, compressed=True)


def open_table(path: str | os.PathLike[str]) -> Artefact:
    """The table ``path``'s record, of this format and a version read (its own fields unchecked).

    Raises:
        ValueError: naming the record and the field.
    """
    return open_artefact(path, "table", FORMAT, VERSION, max_record_bytes=MAX_RECORD_BYTES, older=OLDER)


def load_table(path: str | os.PathLike[str]) -> tuple[DrawGame, str, np.ndarray, np.ndarray]:
    """Read a table and its record: ``(game, obs_type, observations, probabilities)``.

    Raises:
        ValueError: naming the file and the field, for anything that is not such a table.
    """
    where = Path(path)
    table = open_table(where)
    record = table.record
    try:
        game = DrawGame(2, record.get("max_pip"), record.get("hand_size"), record.get("protected"))  # type: ignore[arg-type]
    except ValueError as error:
        raise ValueError(f"{table.record_file}: {error}") from None
    obs_type = read_obs_type(record, table.record_file)
    width, actions = observed_layout(game, obs_type).size, game.num_actions

    def check(headers: Mapping[str, ArrayHeader]) -> None:
        if set(headers) != {"observations", "probabilities"}:
            raise ValueError(f"arrays must be observations and probabilities, got {sorted(headers)}")
        rows = headers["observations"].shape[0] if len(headers["observations"].shape) == 2 else -1
        expected = {"observations": ((rows, width), (np.uint8,)), "probabilities": ((rows, actions), (np.float32, np.float64))}
        if rows < 1:
            raise ValueError(f"observations must have shape (rows, {width}) with at least 1 row "
                             f"(obs_type={obs_type!r}), got {headers['observations'].shape}")
        for name, (shape, dtypes) in expected.items():
            header = headers[name]
            if header.shape != shape or header.dtype not in dtypes:
                kinds = " or ".join(str(np.dtype(dtype)) for dtype in dtypes)
                raise ValueError(f"{name} must be {kinds} of shape {shape}, got {header.dtype} {header.shape}")
        probability_bytes = headers["probabilities"].dtype.itemsize
        needed = table_memory(rows, width, actions, probability_bytes)
        if needed > MAX_TABLE_MEMORY:
            raise ValueError(
                f"observations: {rows:,} rows take about {needed / 1024**2:,.0f} MiB once loaded, more than the "
                f"{MAX_TABLE_MEMORY / 1024**2:,.0f} MiB a table may take "
                f"(at most {MAX_TABLE_MEMORY // table_memory(1, width, actions, probability_bytes):,} rows in this variant)"
            )

    arrays = table.arrays(check, max_bytes=MAX_TABLE_BYTES)
    # A Fortran-order array reads as well as a C-order one; rows are looked up by their bytes.
    observations = np.ascontiguousarray(arrays.pop("observations"))
    probabilities = arrays.pop("probabilities").astype(np.float64)  # the float32 array is freed here
    if not np.all(np.isfinite(probabilities)) or np.any(probabilities < 0):
        raise ValueError(f"{where}: probabilities must be finite and non-negative")
    sums = probabilities.sum(axis=1)
    if np.any(np.abs(sums - 1.0) > 1e-5):
        raise ValueError(f"{where}: each row of probabilities must sum to 1")
    probabilities /= sums[:, None]
    return game, obs_type, observations, probabilities


class TabularAgent(SeededAgent):
    """Plays the distributions of a table (``draw-train`` with ``pipeline: cfr`` writes them),
    given the vectors its table is keyed by (:attr:`obs_type`).

    Args:
        path: the table's ``.npz`` (its ``.json`` record beside it).
        seed: the sampler's seed (``None``: fresh entropy).

    Raises:
        ValueError: if the table cannot be read (naming the file and the field).
    """

    name = "tabular"
    # Its table says which vectors it is keyed by; the other obs_type is refused.
    reads_information_state = True

    def __init__(self, path: str | os.PathLike[str], seed: int | None = None) -> None:
        super().__init__(seed)
        self.path = check_path("path", path)
        self.game, self.obs_type, observations, self.probabilities = load_table(self.path)
        self._rows = {row.tobytes(): index for index, row in enumerate(observations)}
        if len(self._rows) != len(observations):
            raise ValueError(f"{self.path}: observations must be distinct rows, but {len(observations) - len(self._rows):,} "
                             "repeat an earlier one")
        self._width = observations.shape[1]
        other = next(kind for kind in OBS_TYPES if kind != self.obs_type)
        self._other = (other, observed_layout(self.game, other).size)

    @staticmethod
    def obs_type_of_file(path: str | os.PathLike[str]) -> str:
        """What the table ``path`` is keyed by, from its record alone (:func:`agents.spec_obs_type`)."""
        table = open_table(check_path("path", path))
        return read_obs_type(table.record, table.record_file)

    def _check_shapes(self, vector_size: int, mask_size: int) -> None:
        """Refuse vectors of the other ``obs_type`` or of another game, naming the file."""
        if (vector_size, mask_size) == (self._other[1], self.game.num_actions):
            raise ValueError(
                f"tabular policy {self.path} is keyed by obs_type={self.obs_type!r}, and this vector is an "
                f"{self._other[0]} ({vector_size} entries): play it on an environment made with "
                f"obs_type={self.obs_type!r}"
            )

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        vector = np.asarray(observation["observation"])
        mask = np.asarray(observation["action_mask"])
        self._check_shapes(vector.size, mask.size)
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
        if observations.ndim == 2 and np.ndim(masks) == 2:
            self._check_shapes(observations.shape[1], np.shape(masks)[1])
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
