"""What a policy reads, for either ``obs_type``: the vector's layout and a network's inputs.

The environment gives an agent either its observation (``obs_type="observation"``,
:func:`draw_env.observation.layout`) or its information state (``obs_type="information_state"``,
:func:`draw_env.observation.information_layout`: that observation as a prefix, then the
player's deal and the hand's actions in order). A network reads one of them through an encoding
of :mod:`draw_env.features`:

* an observation: the encoding itself (``"scaled"``, ``"extended"``);
* an information state: the same encoding of its observation prefix, then ``drawn_at`` divided
  by its bound (every entry in [0, 1]), then each event code as a one-hot row
  (:func:`draw_env.observation.expand_events`: a code names who acted and how, not a quantity).

This module imports numpy and draw_env only.
"""

from __future__ import annotations

import numpy as np

from draw_env.checks import check_choice
from draw_env.features import encode_batch, feature_size
from draw_env.observation import (
    EVENT_CODES,
    OBS_TYPES,
    InformationLayout,
    Layout,
    expand_events,
    information_layout,
    layout,
)
from draw_env.rules import DrawGame

__all__ = [
    "DEFAULT_OBS_TYPE", "OBS_TYPES", "check_obs_type", "encode_inputs", "input_size", "observed_layout",
]

#: The ``obs_type`` of a file or agent that does not say (every file written before the field).
DEFAULT_OBS_TYPE = OBS_TYPES[0]


def check_obs_type(name: str, value: object) -> str:
    """``value`` if it is one of :data:`OBS_TYPES`, else a ``ValueError`` naming ``name``."""
    return str(check_choice(name, value, OBS_TYPES))


def observed_layout(game: DrawGame, obs_type: str) -> Layout | InformationLayout:
    """The layout of the vector the environment of ``game`` gives with ``obs_type``."""
    return information_layout(game) if check_obs_type("obs_type", obs_type) == "information_state" else layout(game)


def _features_game(game: DrawGame) -> DrawGame | None:
    """The ``game`` argument of :mod:`draw_env.features` (``None``: the seeds' game)."""
    return None if game.is_default else game


def input_size(features: str, game: DrawGame, obs_type: str = DEFAULT_OBS_TYPE) -> int:
    """The length of a network's input: :func:`draw_env.features.feature_size`, plus, for an
    information state, ``drawn_at`` (T) and a one-hot row of :data:`EVENT_CODES` per event."""
    size = feature_size(features, _features_game(game))
    if check_obs_type("obs_type", obs_type) == "information_state":
        info = information_layout(game)
        size += info.num_tiles + info.max_events * EVENT_CODES
    return size


def encode_inputs(
    observations: np.ndarray, masks: np.ndarray, features: str, game: DrawGame, obs_type: str = DEFAULT_OBS_TYPE
) -> np.ndarray:
    """A network's inputs ``float32 (N, input_size(...))`` for vectors ``(N, L)`` of ``obs_type``
    and masks ``(N, 2T + 2)`` of ``game``."""
    if check_obs_type("obs_type", obs_type) == "observation":
        return encode_batch(observations, masks, features, _features_game(game))
    observations = np.asarray(observations, np.float32)
    info = information_layout(game)
    prefix, drawn_at = info.observation.size, info.offsets["drawn_at"]
    encoded = encode_batch(observations[:, :prefix], masks, features, _features_game(game))
    drawn = observations[:, drawn_at : drawn_at + info.num_tiles] / np.float32(info.max_events)
    events = expand_events(observations, game).reshape(len(observations), -1)
    return np.concatenate([encoded, drawn, events], axis=1)
