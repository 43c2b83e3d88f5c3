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

This module imports only numpy and draw_env.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from draw_env import tiles
from draw_env.checks import check_choice
from draw_env.observation import HIGH, OBSERVATION_SIZE, OFFSETS
from draw_env.rules import NUM_ACTIONS
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


def feature_size(features: str = "extended") -> int:
    """Length of the vector built by :func:`encode_batch` for ``features`` (258 or 340)."""
    check_choice("features", features, FEATURES)
    return OBSERVATION_SIZE + (_EXTRA_FEATURES if features == "extended" else 0)


def encode_batch(observations: np.ndarray, masks: np.ndarray, features: str = "extended") -> np.ndarray:
    """The policy inputs for a batch of observations.

    Args:
        observations: ``(N, 258)`` observation vectors.
        masks: ``(N, 58)`` action masks.
        features: ``"scaled"`` or ``"extended"`` (see the module docstring).

    Returns:
        ``float32`` ``(N, feature_size(features))``, entries in [0, 1].
    """
    check_choice("features", features, FEATURES)
    scaled = np.asarray(observations, np.float32) * _INV_HIGH
    if features == "scaled":
        return scaled
    hand = scaled[:, OFFSETS["hand"] : OFFSETS["hand"] + NUM_TILES]
    line = scaled[:, OFFSETS["line"] : OFFSETS["line"] + NUM_TILES]
    held_per_value = hand @ _VALUE_OF_TILE
    line_per_value = line @ _VALUE_OF_TILE
    unseen_per_value = NUM_VALUES - held_per_value - line_per_value
    left = scaled[:, OFFSETS["left_end"] : OFFSETS["left_end"] + NUM_VALUES]
    right = scaled[:, OFFSETS["right_end"] : OFFSETS["right_end"] + NUM_VALUES]
    held = np.maximum(hand.sum(axis=1), 1.0)
    summary = np.stack(
        [
            (held_per_value * left).sum(axis=1) / held,
            (held_per_value * right).sum(axis=1) / held,
            hand @ _PIPS_OF_TILE / _MAX_HAND_PIPS,
        ],
        axis=1,
    )
    return np.concatenate(
        [
            scaled,
            np.asarray(masks, np.float32),
            held_per_value / NUM_VALUES,
            line_per_value / NUM_VALUES,
            unseen_per_value / NUM_VALUES,
            summary,
        ],
        axis=1,
    ).astype(np.float32, copy=False)


def encode_observation(observation: Mapping[str, np.ndarray], features: str = "extended") -> np.ndarray:
    """The policy input for one AEC observation dict: ``float32`` ``(feature_size(features),)``."""
    return encode_batch(
        np.asarray(observation["observation"])[None], np.asarray(observation["action_mask"])[None], features
    )[0]
