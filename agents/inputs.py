"""What a policy reads, for either ``obs_type``: the vector's layout and a network's inputs.

The environment gives an agent either its observation (``obs_type="observation"``,
:func:`draw_env.observation.layout`) or its information state (``obs_type="information_state"``,
:func:`draw_env.observation.information_layout`: that observation as a prefix, then the
player's deal and the hand's actions in order). A network reads one of them through an encoding
of :mod:`draw_env.features`:

* an observation: the encoding itself (``"scaled"``, ``"extended"``);
* an information state: the same encoding of its observation prefix, then the history blocks
  divided by their upper bounds (every entry in [0, 1]).

This module imports numpy and draw_env only.
"""

from __future__ import annotations

import functools

import numpy as np

from draw_env.checks import check_choice
from draw_env.features import encode_batch, feature_size
from draw_env.observation import OBS_TYPES, InformationLayout, Layout, information_layout, layout
from draw_env.rules import DrawGame

__all__ = [
    "DEFAULT_OBS_TYPE", "OBS_TYPES", "check_obs_type", "encode_inputs", "history_scale", "input_size", "observed_layout",
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
    """The length of a network's input: :func:`draw_env.features.feature_size`, plus the history
    entries of an information state."""
    size = feature_size(features, _features_game(game))
    if check_obs_type("obs_type", obs_type) == "information_state":
        size += information_layout(game).history_size
    return size


def history_scale(game: DrawGame) -> tuple[int, np.ndarray]:
    """Where an information state's history starts (the observation's length), and float32 the
    inverse of each history entry's upper bound: what scales the history into [0, 1]."""
    return _history_scale(game.num_players, game.max_pip, game.hand_size, game.protected)


@functools.cache
def _history_scale(num_players: int, max_pip: int, hand_size: int, protected: int) -> tuple[int, np.ndarray]:
    info = information_layout(DrawGame(num_players, max_pip, hand_size, protected))
    return info.observation.size, (1.0 / info.high[info.observation.size :]).astype(np.float32)


def encode_inputs(
    observations: np.ndarray, masks: np.ndarray, features: str, game: DrawGame, obs_type: str = DEFAULT_OBS_TYPE
) -> np.ndarray:
    """A network's inputs ``float32 (N, input_size(...))`` for vectors ``(N, L)`` of ``obs_type``
    and masks ``(N, 2T + 2)`` of ``game``."""
    if check_obs_type("obs_type", obs_type) == "observation":
        return encode_batch(observations, masks, features, _features_game(game))
    observations = np.asarray(observations, np.float32)
    prefix, scale = history_scale(game)
    encoded = encode_batch(observations[:, :prefix], masks, features, _features_game(game))
    return np.concatenate([encoded, observations[:, prefix:] * scale], axis=1)
