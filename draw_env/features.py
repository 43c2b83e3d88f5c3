"""The input encodings that policies read, computed from an observation (one or a batch).

Policies (the shipped networks, the training scripts, the batched evaluation) see the AEC
observation through one of these encodings; the Gym adapter offers the same ones. Nothing is
added that the observer could not compute itself: these are summaries of the observation, which
spare a small network from learning the counting.

* ``"scaled"``: the observation vector divided by :data:`draw_env.observation.HIGH`, so every
  entry lies in [0, 1] (258 entries).
* ``"extended"`` (default): the scaled vector, then the action mask (58 entries), then per pip
  value 0..6 the share of that value's 7 tiles held, on the line and still unseen (21 entries),
  then for each open end the share of the hand that fits it (2 entries) and the hand's pips over
  the largest possible hand total (1 entry): 340 entries.

A variant (``game``, a :class:`draw_env.rules.DrawGame`) encodes the same way over its own layout
(:func:`draw_env.observation.layout`): its bounds, ``2T + 2`` mask entries, ``N + 1`` values.

This module imports only numpy and draw_env.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from draw_env import tiles
from draw_env.checks import check_choice
from draw_env.observation import HIGH, OBSERVATION_SIZE, OFFSETS, layout
from draw_env.rules import NUM_ACTIONS, DrawGame
from draw_env.tiles import NUM_TILES, NUM_VALUES

FEATURES = ("scaled", "extended")

#: 1 where the tile (row) shows the value (column).
_VALUE_OF_TILE = np.zeros((NUM_TILES, NUM_VALUES), np.float32)
for _tile, (_low, _high) in enumerate(tiles.TILES):
    _VALUE_OF_TILE[_tile, _low] = 1
    _VALUE_OF_TILE[_tile, _high] = 1
_PIPS_OF_TILE = np.array(tiles.PIPS, np.float32)
#: The largest hand total that can occur: every tile but the 2 protected ones held by one seat.
_MAX_HAND_PIPS = float(np.sort(_PIPS_OF_TILE)[2:].sum())
_EXTRA_FEATURES = NUM_ACTIONS + 3 * NUM_VALUES + 2 + 1
_INV_HIGH = (1.0 / HIGH).astype(np.float32)


@dataclass(frozen=True)
class _Encoding:
    """What the encodings of one layout read: its constants, computed once per variant."""

    observation_size: int
    extra_features: int
    inv_high: np.ndarray
    offsets: Mapping[str, int]
    num_tiles: int
    num_values: int
    value_of_tile: np.ndarray
    pips_of_tile: np.ndarray
    max_hand_pips: float


_DEFAULT_ENCODING = _Encoding(OBSERVATION_SIZE, _EXTRA_FEATURES, _INV_HIGH, OFFSETS, NUM_TILES, NUM_VALUES,
                              _VALUE_OF_TILE, _PIPS_OF_TILE, _MAX_HAND_PIPS)


def _encoding(game: DrawGame | None) -> _Encoding:
    if game is None:
        return _DEFAULT_ENCODING
    return _variant_encoding(game.max_pip, game.protected)


@functools.cache
def _variant_encoding(max_pip: int, protected: int) -> _Encoding:
    tile_set = tiles.tile_set(max_pip)
    # The layout does not depend on the player count or hand size.
    found = layout(DrawGame(2, max_pip, hand_size=1, protected=protected))
    value_of_tile = np.zeros((tile_set.num_tiles, tile_set.num_values), np.float32)
    for tile, (low, high) in enumerate(tile_set.tiles):
        value_of_tile[tile, low] = value_of_tile[tile, high] = 1
    pips = np.array(tile_set.pips, np.float32)
    return _Encoding(
        found.size, 2 * tile_set.num_tiles + 2 + 3 * tile_set.num_values + 3, (1.0 / found.high).astype(np.float32),
        found.offsets, tile_set.num_tiles, tile_set.num_values, value_of_tile, pips,
        float(np.sort(pips)[protected:].sum()) or 1.0,
    )


def feature_size(features: str = "extended", game: DrawGame | None = None) -> int:
    """Length of the vector built by :func:`encode_batch` for ``features`` (258 or 340 in the
    seeds' game, the default; ``game``: a variant's)."""
    check_choice("features", features, FEATURES)
    encoding = _encoding(game)
    return encoding.observation_size + (encoding.extra_features if features == "extended" else 0)


def encode_batch(
    observations: np.ndarray, masks: np.ndarray, features: str = "extended", game: DrawGame | None = None
) -> np.ndarray:
    """The policy inputs for a batch of observations.

    Args:
        observations: ``(N, 258)`` observation vectors (a variant's: its layout's size).
        masks: ``(N, 58)`` action masks (a variant's: ``2T + 2``).
        features: ``"scaled"`` or ``"extended"`` (see the module docstring).
        game: the variant played; ``None``: the seeds' game.

    Returns:
        ``float32`` ``(N, feature_size(features, game))``, entries in [0, 1].
    """
    check_choice("features", features, FEATURES)
    encoding = _encoding(game)
    offsets, num_tiles, num_values = encoding.offsets, encoding.num_tiles, encoding.num_values
    scaled = np.asarray(observations, np.float32) * encoding.inv_high
    if features == "scaled":
        return scaled
    hand = scaled[:, offsets["hand"] : offsets["hand"] + num_tiles]
    line = scaled[:, offsets["line"] : offsets["line"] + num_tiles]
    held_per_value = hand @ encoding.value_of_tile
    line_per_value = line @ encoding.value_of_tile
    unseen_per_value = num_values - held_per_value - line_per_value
    left = scaled[:, offsets["left_end"] : offsets["left_end"] + num_values]
    right = scaled[:, offsets["right_end"] : offsets["right_end"] + num_values]
    held = np.maximum(hand.sum(axis=1), 1.0)
    summary = np.stack(
        [
            (held_per_value * left).sum(axis=1) / held,
            (held_per_value * right).sum(axis=1) / held,
            hand @ encoding.pips_of_tile / encoding.max_hand_pips,
        ],
        axis=1,
    )
    return np.concatenate(
        [
            scaled,
            np.asarray(masks, np.float32),
            held_per_value / num_values,
            line_per_value / num_values,
            unseen_per_value / num_values,
            summary,
        ],
        axis=1,
    ).astype(np.float32, copy=False)


def encode_observation(
    observation: Mapping[str, np.ndarray], features: str = "extended", game: DrawGame | None = None
) -> np.ndarray:
    """The policy input for one AEC observation dict: ``float32`` ``(feature_size(features, game),)``."""
    return encode_batch(
        np.asarray(observation["observation"])[None], np.asarray(observation["action_mask"])[None], features, game
    )[0]
