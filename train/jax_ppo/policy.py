"""The policy side of PPO in JAX (:mod:`train.jax_ppo.trainer`): its features, network, opponents and export.

* :func:`encode`: the ``extended`` features of :mod:`draw_env.features` (340 numbers in the seeds'
  game) in JAX, and with ``obs_type="information_state"`` those of the observation prefix then the
  history scaled (:mod:`agents.inputs`), so the exported policy file plays through
  ``agents.make("ppo", path=...)`` exactly as trained;
* :class:`ActorCritic`: the policy and value networks, in the policy file's layout. Flax NNX
  holds them: the API the Flax documentation recommends for new code (Linen is maintained). The
  policy reads the acting player's features alone; a central critic's value network reads them
  and the full state too (:meth:`draw_env.jax.DrawDominoes.full_state`);
* :func:`heaviest_action`, :func:`random_action`: the rule-based agents ``heaviest`` and
  ``random`` of ``agents/baselines.py`` as JAX functions of the legal-action mask;
* :func:`policy_weights`: trained parameters as the project's policy file content (a central
  critic, which reads what no player sees, is left out: the file holds the policy alone).

All but :func:`random_action` take the variant played (a :class:`draw_env.rules.DrawGame`; default
the seeds' game): its observation layout, its ``2T + 2`` actions and its tiles' pips.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from agents.inputs import DEFAULT_OBS_TYPE, input_size
from agents.policy_file import PolicyWeights
from draw_env.observation import EVENT_CODES, information_layout, layout
from draw_env.rules import DEFAULT_GAME, DrawGame
from train.jax_ppo.config import FEATURES

ACTIVATIONS = {"relu": jax.nn.relu, "tanh": jnp.tanh}
#: Logit of an illegal action: its probability underflows to exactly 0, and 0 * logit stays finite.
MASKED_LOGIT = -1e9

# ---------------------------------------------------------------------------- features


@dataclass(frozen=True)
class _Constants:
    """What :func:`encode` and :func:`heaviest_action` read of a variant, computed once per variant."""

    offsets: Mapping[str, int]
    num_tiles: int
    num_values: int
    inv_high: np.ndarray  # float32 (observation size,)
    value_of_tile: np.ndarray  # float32 (T, N + 1): 1 where the tile (row) shows the value (column)
    pips: np.ndarray  # float32 (T,)
    max_hand_pips: float  # every tile but the protected ones held by one seat (1 if that is 0)
    draw_action: int
    pass_action: int


def _constants(game: DrawGame) -> _Constants:
    return _variant_constants(game.max_pip, game.protected)


@functools.cache
def _variant_constants(max_pip: int, protected: int) -> _Constants:
    # The observation layout and the action ids do not depend on the player count or hand size.
    game = DrawGame(2, max_pip, hand_size=1, protected=protected)
    tile_set = game.tiles
    value_of_tile = np.zeros((tile_set.num_tiles, tile_set.num_values), np.float32)
    for tile, (low, high) in enumerate(tile_set.tiles):
        value_of_tile[tile, low] = value_of_tile[tile, high] = 1
    pips = np.array(tile_set.pips, np.float32)
    found = layout(game)
    return _Constants(
        offsets=found.offsets,
        num_tiles=tile_set.num_tiles,
        num_values=tile_set.num_values,
        inv_high=(1.0 / found.high).astype(np.float32),
        value_of_tile=value_of_tile,
        pips=pips,
        max_hand_pips=float(np.sort(pips)[protected:].sum()) or 1.0,
        draw_action=game.draw_action,
        pass_action=game.pass_action,
    )


def encode(
    observation: jax.Array, mask: jax.Array, game: DrawGame = DEFAULT_GAME, obs_type: str = DEFAULT_OBS_TYPE
) -> jax.Array:
    """The ``extended`` features of :func:`draw_env.features.encode_batch`, in JAX; of an
    information state, :func:`agents.inputs.encode_inputs`' (its observation's features, then
    ``drawn_at`` scaled and each event code one-hot).

    Args:
        observation: float32 ``(..., 258)`` observations (the AEC layout; a variant's: its
            layout's size), or information states of ``game``.
        mask: ``(..., 58)`` legal actions, bool or int (a variant's: ``2T + 2``).
        game: the variant played (the player count matters for an information state only);
            default the seeds' game.
        obs_type: what ``observation`` holds, ``"observation"`` or ``"information_state"``.

    Returns:
        float32 ``(..., 340)`` (a variant's: ``agents.inputs.input_size("extended", game,
        obs_type)``), equal to NumPy's encoding up to float rounding.
    """
    if obs_type == "information_state":
        info = information_layout(game)
        prefix, drawn_at, events = info.observation.size, info.offsets["drawn_at"], info.offsets["events"]
        features = encode(observation[..., :prefix], mask, game)
        drawn = observation[..., drawn_at : drawn_at + info.num_tiles].astype(jnp.float32) / info.max_events
        codes = jnp.rint(observation[..., events : events + info.max_events]).astype(jnp.int32)
        one_hot = (codes[..., None] == jnp.arange(1, EVENT_CODES + 1)).astype(jnp.float32)
        return jnp.concatenate([features, drawn, one_hot.reshape(*codes.shape[:-1], -1)], axis=-1)
    constants = _constants(game)
    offsets, num_tiles, num_values = constants.offsets, constants.num_tiles, constants.num_values
    scaled = observation.astype(jnp.float32) * constants.inv_high

    def block(name: str, width: int) -> jax.Array:
        return scaled[..., offsets[name] : offsets[name] + width]

    hand = block("hand", num_tiles)
    line = block("line", num_tiles)
    held_per_value = hand @ constants.value_of_tile
    line_per_value = line @ constants.value_of_tile
    unseen_per_value = num_values - held_per_value - line_per_value
    left = block("left_end", num_values)
    right = block("right_end", num_values)
    held = jnp.maximum(hand.sum(-1), 1.0)
    summary = jnp.stack(
        [
            (held_per_value * left).sum(-1) / held,
            (held_per_value * right).sum(-1) / held,
            hand @ constants.pips / constants.max_hand_pips,
        ],
        axis=-1,
    )
    return jnp.concatenate(
        [
            scaled,
            mask.astype(jnp.float32),
            held_per_value / num_values,
            line_per_value / num_values,
            unseen_per_value / num_values,
            summary,
        ],
        axis=-1,
    )


# ---------------------------------------------------------------------------- opponents


def heaviest_action(mask: jax.Array, game: DrawGame = DEFAULT_GAME) -> jax.Array:
    """The agent ``heaviest``: the legal placement of the highest-pip tile, ties to the lowest
    action id; with no placement, the draw if legal, else the pass. ``mask`` bool ``(..., 58)``
    (``game``'s ``2T + 2`` actions; default the seeds' game)."""
    constants = _constants(game)
    placements = mask[..., : 2 * constants.num_tiles]
    action_ids = np.arange(2 * constants.num_tiles)
    # Pips dominate (x 128 > any action id, at most 2 * 55 - 1); among equal pips the lower id
    # scores higher. Every score is >= 0, above the -1 of illegal placements.
    score = np.repeat(constants.pips, 2) * 128 + (action_ids[-1] - action_ids)
    best = jnp.argmax(jnp.where(placements, score, -1), axis=-1)
    forced = jnp.where(mask[..., constants.draw_action], constants.draw_action, constants.pass_action)
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
    """Separate policy (58 logits) and value (1 number) networks over the 340 features (a
    variant's: ``2T + 2`` logits over ``feature_size("extended", game)`` features).

    With ``state_size`` > 0 the value network is a central critic: it reads the features and
    then ``state_size`` numbers of the full state (:meth:`draw_env.jax.DrawDominoes.full_state`),
    while the policy still reads the features alone.
    """

    def __init__(
        self, hidden: Sequence[int], activation: str, rngs: nnx.Rngs, game: DrawGame = DEFAULT_GAME,
        obs_type: str = DEFAULT_OBS_TYPE, state_size: int = 0,
    ) -> None:
        inputs = input_size(FEATURES, game, obs_type)
        self.policy = MLP([inputs, *hidden, game.num_actions], activation, 0.01, rngs)
        self.value = MLP([inputs + state_size, *hidden, 1], activation, 1.0, rngs)
        self.state_size = state_size

    def __call__(self, x: jax.Array, state: jax.Array | None = None) -> tuple[jax.Array, jax.Array]:
        """(logits, value) of features ``x`` ``(..., F)``; a central critic's value reads
        ``state`` ``(..., state_size)`` too (None without one)."""
        critic_inputs = x if state is None else jnp.concatenate([x, state], axis=-1)
        return self.policy(x), self.value(critic_inputs)[..., 0]


# ---------------------------------------------------------------------------- export


def policy_weights(
    graphdef: Any, params: nnx.State, activation: str, game: DrawGame, provenance: dict[str, Any],
    obs_type: str = DEFAULT_OBS_TYPE, value_unit: float | None = None,
) -> PolicyWeights:
    """The networks ``nnx.merge(graphdef, params)`` as the project's policy file content
    (weights ``(out, in)``), recording ``game``: the table size and the variant it plays,
    ``obs_type``: what it reads, and ``value_unit``: zero-sum hand points per unit of the value
    network's output (:attr:`train.jax_ppo.config.JaxPPOConfig.value_unit`).

    A central critic is not written (nor ``value_unit``): it reads the full state, which a player
    never has, so the file holds the policy network alone, with the same shapes as without one.
    """
    model = nnx.merge(graphdef, params)
    central = model.state_size > 0

    def layers(mlp: MLP) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        return tuple(
            (np.asarray(layer.kernel[...], np.float32).T.copy(), np.asarray(layer.bias[...], np.float32))
            for layer in mlp.layers
        )

    return PolicyWeights(
        policy=layers(model.policy),
        value=None if central else layers(model.value),
        activation=activation,
        features=FEATURES,
        num_players=game.num_players,
        provenance=provenance,
        variant=game.variant,
        obs_type=obs_type,
        value_unit=None if central else value_unit,
    )
