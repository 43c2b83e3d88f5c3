"""Where the hidden tiles are: location probabilities from one seat's observation.

A *card-location* model (Solinas, Rebstock, Sturtevant and Buro, *Improving Search with
Supervised Learning in Trick-Based Card Games*, 2019, for Skat): given what one seat observes,
the probability that each tile of the set lies in each place. Search samples its worlds from
these probabilities instead of uniformly among the deals consistent with the passes.

The answer for an observation is float64 ``(P + 1, T)`` (``P`` players, ``T`` tiles in the
order of :mod:`draw_env.tiles`): row 0 is the observer's own hand, row ``i`` (1..P-1) the hand
of the seat ``i`` places after it in turn order, row ``P`` the boneyard; each column sums to 1.
What the observation shows for certain comes out exact: a tile in the observer's hand is 1 in
row 0, a tile on the line is 1 in the row of the seat that placed it (the hand it came from).
For the hidden tiles (in another hand or in the boneyard) the model's logits are masked with
what the observation rules out (a seat that showed, by passing, that it lacks a value holds no
tile with it; a seat holding no tile, an empty boneyard) before a softmax over the rows, then
balanced by a few Sinkhorn iterations so that, as far as marginals can, each row's hidden tiles
add up to its known count (each opponent's hand size, the boneyard's size) while each column
keeps summing to 1 (:func:`balanced_probabilities`).

:class:`HiddenTileModel` is a small NumPy MLP (no torch at play time) that reads the AEC
observation vector of :func:`draw_env.observation.layout`, scaled by its upper bounds;
:class:`UniformHiddenTiles` has the same interface with every logit 0 (uniform over the allowed
rows, then balanced). A model file is a pair ``NAME.npz`` + ``NAME.json``, written and read by the
project's one artefact writer and reader (:mod:`agents.artefacts`), as a hostile file::

    {"format": "draw-dominoes-hidden-tiles", "version": 1,
     "num_players": 2, "max_pip": 6, "hand_size": 7, "protected": 2,   # the game, always
     "activation": "relu", "balancing": 8,                              # Sinkhorn iterations
     "widths": [258, 256, 256, 84], "arrays": ["layer/0/weight", "layer/0/bias", ...],
     "sha256": "...",                  # of NAME.npz
     "provenance": {...}}              # free-form: the run that trained it, its measurements

This module imports numpy and draw_env only.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.artefacts import fail, open_artefact, save_artefact, short
from agents.policy_file import MAX_WIDTH, Layer, check_layers, describe_variant
from draw_env.io.untrusted import ArrayHeader
from draw_env.observation import SEATS, layout
from draw_env.rules import PLAYER_COUNTS, DrawGame

FORMAT = "draw-dominoes-hidden-tiles"
VERSION = 1
#: The game's keys of the record, all of them always written.
GAME_KEYS = ("num_players", "max_pip", "hand_size", "protected")
#: Sinkhorn iterations by default: enough to bring the row sums within a few hundredths of the
#: counts on the seeds' game.
DEFAULT_BALANCING = 8
#: The most Sinkhorn iterations a file may ask for.
MAX_BALANCING = 100


# ---------------------------------------------------------------------------- what is observed


@dataclass(frozen=True)
class _Entries:
    """Where a layout's observation shows the facts the places depend on: entry indices."""

    hand: np.ndarray  # (T,) the observer's bit of each tile
    line: np.ndarray  # (T,) each tile's bit on the line
    placed: np.ndarray  # (SEATS, T) relative seat, tile: it placed the tile
    voids: np.ndarray  # (SEATS, V) relative seat, value: it passed with the value open
    sizes: np.ndarray  # (SEATS,) relative seat's hand size
    bones: int  # the boneyard's size
    holds: np.ndarray  # bool (T, V): the tile carries the value on a half


@functools.cache
def _entries(game: DrawGame) -> _Entries:
    """The entries of the facts of :data:`draw_env.observation.FACTS` this module reads, found
    through the layout's fact table (no offsets written here)."""
    fact_offsets, source, _, argument = layout(game).fact_table()
    tile_set = game.tiles
    tiles, values = tile_set.num_tiles, tile_set.num_values

    def table(fact: str, rows: int, width: int) -> np.ndarray:
        index = np.full((rows, width), -1, np.intp)
        start = fact_offsets[fact]
        for entry in np.flatnonzero((source >= start) & (source < start + rows)):
            index[source[entry] - start, argument[entry]] = entry
        if (index < 0).any():
            raise AssertionError(f"the layout does not show every entry of the fact {fact!r}")
        return index

    def values_of(fact: str) -> np.ndarray:
        start = fact_offsets[fact]
        return np.array([np.flatnonzero(source == start + seat)[0] for seat in range(SEATS)], np.intp)

    holds = np.zeros((tiles, values), bool)
    for tile, (low, high) in enumerate(tile_set.tiles):
        holds[tile, low] = holds[tile, high] = True
    return _Entries(
        hand=table("hand", 1, tiles)[0],
        line=table("line", 1, tiles)[0],
        placed=table("placed", SEATS, tiles),
        voids=table("voids", SEATS, values),
        sizes=values_of("sizes"),
        bones=int(np.flatnonzero(source == fact_offsets["bones"])[0]),
        holds=holds,
    )


@dataclass(frozen=True)
class ObservedPlaces:
    """What observations show of the tiles' places, for ``k`` observations of a ``P``-player game.

    Attributes:
        allowed: bool ``(k, P + 1, T)``: the rows (places, as in the module docstring) each tile
            may lie in. A known tile (own hand, line) has exactly one; a hidden tile the rows the
            observation does not rule out (where it rules out all of them, which no real game
            does, every row but the observer's).
        hidden: bool ``(k, T)``: the tiles the observer cannot see (in another hand or the boneyard).
        counts: int64 ``(k, P + 1)``: the hidden tiles of each row: 0 for the observer, each
            other seat's hand size, the boneyard's size.
    """

    allowed: np.ndarray
    hidden: np.ndarray
    counts: np.ndarray


def observed_places(game: DrawGame, observations: np.ndarray) -> ObservedPlaces:
    """What ``observations`` (``(k, L)`` of ``game``'s layout, any seat) show of the tiles' places.

    Raises:
        ValueError: ``observations`` is not ``(k, L)``.
    """
    observed = layout(game)
    obs = np.asarray(observations)
    if obs.ndim != 2 or obs.shape[1] != observed.size:
        raise ValueError(f"observations must have shape (k, {observed.size}) for this game, got {obs.shape}")
    entries = _entries(game)
    players = game.num_players
    on = obs > 0.5
    own = on[:, entries.hand]
    line = on[:, entries.line] & ~own
    placed = on[:, entries.placed[:players]]  # (k, P, T)
    lacks = (on[:, entries.voids[:players]].astype(np.int64) @ entries.holds.T.astype(np.int64)) > 0  # (k, P, T)
    sizes = np.rint(obs[:, entries.sizes[:players]]).astype(np.int64)
    bones = np.rint(obs[:, entries.bones]).astype(np.int64)
    hidden = ~own & ~line
    k, tiles = own.shape
    allowed = np.zeros((k, players + 1, tiles), bool)
    allowed[:, 0] = own
    # A tile on the line: the row of the seat that placed it (row 0 where no seat shows it).
    allowed[:, :players] |= placed & line[:, None, :]
    allowed[:, 0] |= line & ~allowed[:, :players].any(axis=1)
    allowed[:, 1:players] |= hidden[:, None, :] & ~lacks[:, 1:] & (sizes[:, 1:, None] > 0)
    allowed[:, players] |= hidden & (bones[:, None] > 0)
    stranded = hidden & ~allowed.any(axis=1)
    allowed[:, 1:] |= stranded[:, None, :]
    counts = np.concatenate([np.zeros((k, 1), np.int64), sizes[:, 1:], bones[:, None]], axis=1)
    return ObservedPlaces(allowed, hidden, np.maximum(counts, 0))


# ---------------------------------------------------------------------------- probabilities


def balanced_probabilities(logits: np.ndarray, places: ObservedPlaces, balancing: int) -> np.ndarray:
    """Logits ``(k, P + 1, T)`` -> location probabilities ``(k, P + 1, T)`` (float64).

    A softmax over the rows of each column, restricted to ``places.allowed`` (every other entry
    is exactly 0), then ``balancing`` Sinkhorn iterations over the hidden columns: each row is
    scaled so that its hidden tiles add up to ``places.counts``, then each column is divided by
    its sum. Every column of the result sums to 1; a known tile's column is exactly 1 in its row.
    ``train/inference/fit.py`` computes the same in torch.
    """
    allowed = places.allowed
    z = np.where(allowed, np.asarray(logits, np.float64), -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.where(allowed, np.exp(z), 0.0)
    p /= p.sum(axis=1, keepdims=True)
    hidden = places.hidden[:, None, :]
    counts = places.counts.astype(np.float64)
    for _ in range(balancing):
        rows = np.where(hidden, p, 0.0).sum(axis=2)
        scale = np.where(rows > 0, counts / np.maximum(rows, 1e-300), 1.0)
        p = np.where(hidden, p * scale[:, :, None], p)
        p /= p.sum(axis=1, keepdims=True)
    return p


class _LocationModel:
    """The interface both models share: probabilities from logits, one observation or a batch."""

    game: DrawGame
    balancing: int

    @property
    def rows(self) -> int:
        """``P + 1``: the places of a tile."""
        return self.game.num_players + 1

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Logits ``(k, P + 1, T)`` for observations ``(k, L)``."""
        raise NotImplementedError

    def location_probabilities_batch(self, observations: np.ndarray) -> np.ndarray:
        """float64 ``(k, P + 1, T)`` for float32 observations ``(k, L)`` of the model's game
        (the acting seat's or any seat's: the rows are relative to the observer).

        Raises:
            ValueError: ``observations`` is not ``(k, L)`` of the game's layout.
        """
        obs = np.asarray(observations, np.float32)
        places = observed_places(self.game, obs)
        return balanced_probabilities(self.logits_batch(obs), places, self.balancing)

    def location_probabilities(self, observation: np.ndarray) -> np.ndarray:
        """float64 ``(P + 1, T)`` for one observation ``(L,)``."""
        obs = np.asarray(observation, np.float32)
        if obs.ndim != 1:
            raise ValueError(f"observation must have shape (L,), got {obs.shape}")
        return self.location_probabilities_batch(obs[None])[0]


class UniformHiddenTiles(_LocationModel):
    """Every logit 0: each hidden tile uniform over its allowed rows, then balanced to the counts
    (close to the marginals of a uniform deal consistent with the observation; exact without
    voids). The baseline of the trained model, and a stand-in for it in tests."""

    def __init__(self, game: DrawGame, balancing: int = DEFAULT_BALANCING) -> None:
        self.game = game
        self.balancing = _check_balancing(balancing)

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        return np.zeros((len(observations), self.rows, self.game.num_tiles))


@dataclass(frozen=True, eq=False)
class HiddenTileModel(_LocationModel):
    """The trained MLP: observation scaled by the layout's upper bounds -> ReLU layers -> logits.

    Attributes:
        layers: ``(weight (out, in), bias (out,))`` float32, input first; the first takes the
            layout's ``L`` entries, the last gives ``(P + 1) * T`` logits (row-major ``(P + 1, T)``).
        game: the game it was trained for.
        balancing: Sinkhorn iterations (:func:`balanced_probabilities`).
        provenance: free-form JSON data: the run that trained it, its measurements.
    """

    layers: tuple[Layer, ...]
    game: DrawGame
    balancing: int = DEFAULT_BALANCING
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_balancing(self.balancing)
        # (P + 1) * T outputs: a logit for every place of every tile.
        check_layers("layer", self.layers, layout(self.game).size, (self.game.num_players + 1) * self.game.num_tiles)

    @functools.cached_property
    def _scale(self) -> np.ndarray:
        return (1.0 / layout(self.game).high).astype(np.float32)

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        x = np.asarray(observations, np.float32) * self._scale
        for index, (weight, bias) in enumerate(self.layers):
            x = x @ weight.T + bias
            if index < len(self.layers) - 1:
                x = np.maximum(x, 0.0)
        return x.reshape(len(x), self.rows, self.game.num_tiles)

    @property
    def widths(self) -> list[int]:
        return [int(self.layers[0][0].shape[1])] + [int(weight.shape[0]) for weight, _ in self.layers]


def _check_balancing(balancing: object) -> int:
    if type(balancing) is not int or not 0 <= balancing <= MAX_BALANCING:
        raise ValueError(f"balancing must be an integer in 0..{MAX_BALANCING}, got {short(balancing)}")
    return balancing


# ---------------------------------------------------------------------------- the file


def _array_names(layers: int) -> list[str]:
    return [f"layer/{index}/{part}" for index in range(layers) for part in ("weight", "bias")]


def save_hidden_tile_model(path: str | os.PathLike[str], model: HiddenTileModel) -> Path:
    """Write ``model`` as ``path`` (``.npz``) and its record beside it, each atomically
    (:func:`agents.artefacts.save_artefact`: the record holds the npz's sha256, so an interrupted
    save never loads as something else).

    Returns:
        The npz path written.

    Raises:
        ValueError: ``path`` does not end in ``.npz``.
    """
    names = _array_names(len(model.layers))
    arrays = dict(zip(names, (array for layer in model.layers for array in layer), strict=True))
    fields = {
        "num_players": model.game.num_players,
        **model.game.variant,
        "activation": "relu",
        "balancing": model.balancing,
        "widths": model.widths,
        "arrays": names,
    }
    return save_artefact(path, FORMAT, VERSION, arrays, fields, model.provenance)


def load_hidden_tile_model(path: str | os.PathLike[str], game: DrawGame | None = None) -> HiddenTileModel:
    """Read a hidden-tile model ``path`` (``.npz``) and its JSON record, checking one against the other.

    Nothing is trusted: the record is read bounded and checked first; it fixes the name, shape and
    dtype (float32) of every array, compared with the archive's directory and ``.npy`` headers
    before any array is read (never a pickle: :func:`draw_env.io.untrusted.loads_npz`).

    Args:
        game: the game the model is to play (``None``: whatever game it records); a model of
            another game is refused.

    Raises:
        ValueError: either file missing or malformed, the pair not matching, or a model of another
            game than ``game``; the message names the file and the field.
    """
    artefact = open_artefact(path, "hidden-tile model", FORMAT, VERSION)
    target, record_file, record = artefact.target, artefact.record_file, artefact.record
    recorded = _read_game(record, record_file)
    if game is not None:
        for key in GAME_KEYS:
            wanted = game.num_players if key == "num_players" else game.variant[key]
            if record[key] != wanted:
                fail(record_file, key, f"is {record[key]}, but the game played has {key}={wanted} "
                                       f"({game.num_players} players, {describe_variant(game)})")
    if record.get("activation") != "relu":
        fail(record_file, "activation", f"must be 'relu', got {short(record.get('activation'))}")
    balancing = record.get("balancing")
    if type(balancing) is not int or not 0 <= balancing <= MAX_BALANCING:
        fail(record_file, "balancing", f"must be an integer in 0..{MAX_BALANCING}, got {short(balancing)}")
    widths = record.get("widths")
    inputs, outputs = layout(recorded).size, (recorded.num_players + 1) * recorded.num_tiles
    if (
        not isinstance(widths, list)
        or len(widths) < 2
        or not all(type(w) is int and 0 < w <= MAX_WIDTH for w in widths)
        or widths[0] != inputs
        or widths[-1] != outputs
    ):
        fail(record_file, "widths", f"must list at least 2 integers in 1..{MAX_WIDTH}, from {inputs} "
                                    f"(the observation) to {outputs} ((P + 1) * T), got {short(widths)}")
    names = _array_names(len(widths) - 1)
    if record.get("arrays") != names:
        fail(record_file, "arrays", f"must be {names}, got {short(record.get('arrays'))}")
    expected: dict[str, tuple[int, ...]] = {}
    for index, (width_in, width_out) in enumerate(zip(widths, widths[1:], strict=False)):
        expected[f"layer/{index}/weight"] = (width_out, width_in)
        expected[f"layer/{index}/bias"] = (width_out,)
    def check(headers: Mapping[str, ArrayHeader]) -> None:
        if set(headers) != set(expected):
            raise ValueError(f"holds the arrays {sorted(name[:80] for name in headers)[:8]}, but "
                             f"{record_file.name} ('arrays') lists {names}")
        for array, shape in expected.items():
            if headers[array].shape != shape:
                raise ValueError(f"{array} has the shape {headers[array].shape}, but 'widths' in "
                                 f"{record_file.name} give {shape}")
            if headers[array].dtype != np.float32:
                raise ValueError(f"{array}: arrays must be float32, got {headers[array].dtype}")

    arrays = artefact.arrays(check)
    layers = tuple((arrays[weight], arrays[bias]) for weight, bias in zip(names[::2], names[1::2], strict=True))
    try:
        return HiddenTileModel(layers, recorded, balancing, artefact.provenance)
    except ValueError as error:
        raise ValueError(f"{target}: {error}") from None


def _read_game(record: Mapping[str, Any], record_file: Path) -> DrawGame:
    """The game the record names: all of :data:`GAME_KEYS`, integers that make a game."""
    for key in GAME_KEYS:
        if type(record.get(key)) is not int:
            fail(record_file, key, f"must be an integer (a model records {', '.join(GAME_KEYS)}), "
                                   f"got {short(record.get(key))}")
    if record["num_players"] not in PLAYER_COUNTS:
        fail(record_file, "num_players", f"must be 2, 3 or 4, got {record['num_players']}")
    try:
        return DrawGame(record["num_players"], record["max_pip"], record["hand_size"], record["protected"])
    except ValueError as error:
        fail(record_file, "max_pip', 'hand_size', 'protected", f"are no game: {error}")

