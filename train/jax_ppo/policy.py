"""The policy side of PPO in JAX (:mod:`train.jax_ppo.trainer`): its features, network, opponents and export.

* :func:`encode`: the ``extended`` features of :mod:`draw_env.features` (340 numbers) in JAX, so
  the exported policy file plays through ``agents.make("ppo", path=...)`` exactly as trained;
* :class:`ActorCritic`: the policy and value networks, in the policy file's layout. Flax NNX
  holds them: the API the Flax documentation recommends for new code (Linen is maintained);
* :func:`heaviest_action`, :func:`random_action`: the rule-based agents ``heaviest`` and
  ``random`` of ``agents/baselines.py`` as JAX functions of the legal-action mask;
* :func:`policy_weights`: trained parameters as the project's policy file content.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from agents.policy_file import PolicyWeights
from draw_env import tiles
from draw_env.features import feature_size
from draw_env.observation import HIGH, OFFSETS
from draw_env.rules import DRAW, NUM_ACTIONS, PASS

FEATURES = "extended"
ACTIVATIONS = {"relu": jax.nn.relu, "tanh": jnp.tanh}
#: Logit of an illegal action: its probability underflows to exactly 0, and 0 * logit stays finite.
MASKED_LOGIT = -1e9

# ---------------------------------------------------------------------------- features

_VALUE_OF_TILE = np.zeros((tiles.NUM_TILES, tiles.NUM_VALUES), np.float32)
for _tile, (_low, _high) in enumerate(tiles.TILES):
    _VALUE_OF_TILE[_tile, _low] = _VALUE_OF_TILE[_tile, _high] = 1
_PIPS = np.array(tiles.PIPS, np.float32)
_MAX_HAND_PIPS = float(np.sort(_PIPS)[2:].sum())  # every tile but the 2 protected ones
_INV_HIGH = (1.0 / HIGH).astype(np.float32)


def _block(scaled: jax.Array, name: str, width: int) -> jax.Array:
    return scaled[..., OFFSETS[name] : OFFSETS[name] + width]


def encode(observation: jax.Array, mask: jax.Array) -> jax.Array:
    """The ``extended`` features of :func:`draw_env.features.encode_batch`, in JAX.

    Args:
        observation: float32 ``(..., 258)`` observations (the AEC layout).
        mask: ``(..., 58)`` legal actions (bool or int).

    Returns:
        float32 ``(..., 340)``, equal to NumPy's encoding up to float rounding.
    """
    scaled = observation.astype(jnp.float32) * _INV_HIGH
    hand = _block(scaled, "hand", tiles.NUM_TILES)
    line = _block(scaled, "line", tiles.NUM_TILES)
    held_per_value = hand @ _VALUE_OF_TILE
    line_per_value = line @ _VALUE_OF_TILE
    unseen_per_value = tiles.NUM_VALUES - held_per_value - line_per_value
    left = _block(scaled, "left_end", tiles.NUM_VALUES)
    right = _block(scaled, "right_end", tiles.NUM_VALUES)
    held = jnp.maximum(hand.sum(-1), 1.0)
    summary = jnp.stack(
        [
            (held_per_value * left).sum(-1) / held,
            (held_per_value * right).sum(-1) / held,
            hand @ _PIPS / _MAX_HAND_PIPS,
        ],
        axis=-1,
    )
    values = tiles.NUM_VALUES
    return jnp.concatenate(
        [
            scaled,
            mask.astype(jnp.float32),
            held_per_value / values,
            line_per_value / values,
            unseen_per_value / values,
            summary,
        ],
        axis=-1,
    )


# ---------------------------------------------------------------------------- opponents


def heaviest_action(mask: jax.Array) -> jax.Array:
    """The agent ``heaviest``: the legal placement of the highest-pip tile, ties to the lowest
    action id; with no placement, the draw if legal, else the pass. ``mask`` bool ``(..., 58)``."""
    placements = mask[..., : 2 * tiles.NUM_TILES]
    action_ids = np.arange(2 * tiles.NUM_TILES)
    # Pips dominate (x 64 > any action id); among equal pips the lower id scores higher. Every
    # score is >= 0, above the -1 of illegal placements.
    score = np.repeat(_PIPS, 2) * 64 + (action_ids[-1] - action_ids)
    best = jnp.argmax(jnp.where(placements, score, -1), axis=-1)
    forced = jnp.where(mask[..., DRAW], DRAW, PASS)
    return jnp.where(placements.any(-1), best, forced).astype(jnp.int32)


def random_action(key: jax.Array, mask: jax.Array) -> jax.Array:
    """The agent ``random``: uniform over the legal actions (voluntary draws included)."""
    return jax.random.categorical(key, jnp.where(mask, 0.0, MASKED_LOGIT)).astype(jnp.int32)


# ---------------------------------------------------------------------------- network


class MLP(nnx.Module):
    """Dense layers, the activation after every layer but the last (the policy file's layout)."""

    def __init__(self, widths: Sequence[int], activation: str, last_scale: float, rngs: nnx.Rngs) -> None:
        pairs = list(zip(widths[:-1], widths[1:]))
        self.layers = nnx.List(
            [
                nnx.Linear(
                    inputs,
                    outputs,
                    kernel_init=nnx.initializers.orthogonal(
                        last_scale if index == len(pairs) - 1 else math.sqrt(2)
                    ),
                    rngs=rngs,
                )
                for index, (inputs, outputs) in enumerate(pairs)
            ]
        )
        self.activation = activation

    def __call__(self, x: jax.Array) -> jax.Array:
        *body, last = self.layers
        for layer in body:
            x = ACTIVATIONS[self.activation](layer(x))
        return last(x)


class ActorCritic(nnx.Module):
    """Separate policy (58 logits) and value (1 number) networks over the 340 features."""

    def __init__(self, hidden: Sequence[int], activation: str, rngs: nnx.Rngs) -> None:
        inputs = feature_size(FEATURES)
        self.policy = MLP([inputs, *hidden, NUM_ACTIONS], activation, 0.01, rngs)
        self.value = MLP([inputs, *hidden, 1], activation, 1.0, rngs)

    def __call__(self, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        return self.policy(x), self.value(x)[..., 0]


# ---------------------------------------------------------------------------- export


def policy_weights(
    graphdef: Any, params: nnx.State, activation: str, num_players: int, provenance: dict[str, Any]
) -> PolicyWeights:
    """The networks ``nnx.merge(graphdef, params)`` as the project's policy file content
    (weights ``(out, in)``)."""
    model = nnx.merge(graphdef, params)

    def layers(mlp: MLP) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        return tuple(
            (np.asarray(layer.kernel[...], np.float32).T.copy(), np.asarray(layer.bias[...], np.float32))
            for layer in mlp.layers
        )

    return PolicyWeights(
        policy=layers(model.policy),
        value=layers(model.value),
        activation=activation,
        features=FEATURES,
        num_players=num_players,
        provenance=provenance,
    )
