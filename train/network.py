"""The policy+value network as a plain torch module: what expert iteration and distillation train.

:class:`PolicyValueNetwork` holds two MLPs over the :mod:`draw_env.features` encoding of an
observation: the policy network (hidden layers, then one logit per action) and the value network
(hidden layers, then one number), the activation after every layer but the last. It is the torch
twin of :class:`agents.policy_network.NumpyPolicy`, which plays the same weights on NumPy, and it
reads and writes the same policy files (:class:`agents.policy_file.PolicyWeights`).

A fresh network starts exactly as sb3-contrib's ``MaskablePPO("MlpPolicy", seed=seed)`` starts
its actor and critic (the same layers built in the same order, then SB3's orthogonal
initialisation with its gains: sqrt(2) for hidden layers, 0.01 for the logits, 1 for the value;
biases zero), so a network trained here and one trained by PPO from the same seed start from the
same weights. The orthogonal initialisation is a QR factorisation, which rounds differently on
one torch thread and on several: seeded runs that must repeat set one thread first.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from agents.inputs import DEFAULT_OBS_TYPE, check_obs_type, input_size
from agents.policy_file import Layer, PolicyWeights, save_policy_file
from draw_env.checks import check_choice
from draw_env.features import FEATURES
from draw_env.rules import DrawGame

ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}
#: SB3's orthogonal-initialisation gains (``ActorCriticPolicy._build``).
HIDDEN_GAIN = math.sqrt(2)
LOGITS_GAIN = 0.01
VALUE_GAIN = 1.0


def _linear_layers(inputs: int, widths: Sequence[int], outputs: int | None = None) -> list[torch.nn.Linear]:
    """``nn.Linear`` layers of ``widths`` (and an output layer of ``outputs``), torch's default init."""
    layers = []
    for width in [*widths, *([] if outputs is None else [outputs])]:
        layers.append(torch.nn.Linear(inputs, int(width)))
        inputs = int(width)
    return layers


def _orthogonal(layers: Sequence[torch.nn.Linear], gain: float) -> None:
    for layer in layers:
        torch.nn.init.orthogonal_(layer.weight, gain=gain)
        layer.bias.data.fill_(0.0)


class PolicyValueNetwork(torch.nn.Module):
    """A policy network and a value network over one observation encoding.

    Args:
        features: the input encoding, one of :data:`draw_env.features.FEATURES`.
        actor: hidden widths of the policy network (its last layer has one output per action:
            58 in the seeds' game).
        critic: hidden widths of the value network (its last layer has one output).
        activation: ``"relu"`` or ``"tanh"``.
        seed: the fresh weights' seed (the global torch generator is left as it was).
        game: the variant it plays (its inputs and actions have the variant's sizes, and its
            policy files record the variant); ``None``: the seeds' game.
        obs_type: what it reads (:mod:`agents.inputs`: an information state's inputs depend on the
            player count too, so give ``game`` with the table's players for one).

    Attributes:
        policy: the policy network's ``nn.Linear`` layers, input first.
        value: the value network's, input first.
    """

    def __init__(
        self,
        features: str,
        actor: Sequence[int],
        critic: Sequence[int],
        activation: str = "relu",
        seed: int = 0,
        game: DrawGame | None = None,
        obs_type: str = DEFAULT_OBS_TYPE,
    ) -> None:
        super().__init__()
        #: The variant played; ``None``: the seeds' game (the files of which record no variant).
        self.game = None if game is None or game.is_default else game
        self.obs_type = check_obs_type("obs_type", obs_type)
        self.features = check_choice("features", features, FEATURES)
        self.activation = check_choice("activation", activation, tuple(ACTIVATIONS))
        self._activate = ACTIVATIONS[activation]()
        self._actor, self._critic = [int(width) for width in actor], [int(width) for width in critic]
        inputs = input_size(features, game or DrawGame(2), obs_type)
        num_actions = (self.game or DrawGame(2)).num_actions
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            # SB3's order: the MLP extractor's policy then value layers, then the two output
            # layers, each drawing torch's default initialisation; then the orthogonal one.
            policy_hidden = _linear_layers(inputs, actor)
            value_hidden = _linear_layers(inputs, critic)
            logits = _linear_layers(int(actor[-1]) if actor else inputs, [num_actions])
            value = _linear_layers(int(critic[-1]) if critic else inputs, [1])
            _orthogonal(policy_hidden + value_hidden, HIDDEN_GAIN)
            _orthogonal(logits, LOGITS_GAIN)
            _orthogonal(value, VALUE_GAIN)
        self.policy = torch.nn.ModuleList(policy_hidden + logits)
        self.value = torch.nn.ModuleList(value_hidden + value)

    def hidden_widths(self) -> tuple[list[int], list[int]]:
        """The hidden widths of the policy network and of the value network."""
        return list(self._actor), list(self._critic)

    def _forward(self, layers: torch.nn.ModuleList, inputs: torch.Tensor) -> torch.Tensor:
        hidden = inputs
        *body, last = layers
        for layer in body:
            hidden = self._activate(layer(hidden))
        return last(hidden)

    def logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """Unmasked action logits ``(N, A)`` for encoded inputs ``(N, feature_size)`` (``A``: the
        game's actions, 58 in the seeds' game)."""
        return self._forward(self.policy, inputs)

    def log_probabilities(self, inputs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """``log_softmax`` of the logits over the legal actions ``(N, A)`` (bool ``masks (N, A)``);
        an illegal action's logit counts as -1e9, so its log-probability is finite but hopeless."""
        return torch.log_softmax(self.logits(inputs).masked_fill(~masks, -1e9), dim=1)

    def values(self, inputs: torch.Tensor) -> torch.Tensor:
        """The value network's outputs ``(N,)`` for encoded inputs ``(N, feature_size)``."""
        return self._forward(self.value, inputs)[:, 0]

    def fit(
        self,
        rows: torch.Tensor,
        loss_of: Callable[[torch.Tensor], torch.Tensor],
        *,
        epochs: int,
        batch_size: int,
        learning_rate: float,
        generator: torch.Generator,
        parameters: Iterable[torch.nn.Parameter] | None = None,
    ) -> Iterator[float]:
        """Train the network to lower ``loss_of(batch of rows)``; yields each epoch's mean
        training loss (the epochs run as they are asked for).

        Each epoch shuffles ``rows`` (int64 ``(N,)``, indices into the caller's data) with
        ``generator`` and takes mini-batches of ``batch_size``, one Adam step each, the learning
        rate decaying linearly from ``learning_rate`` to 0 over the whole fit. ``parameters``:
        the ones to train (default: all, policy and value networks).
        """
        optimizer = torch.optim.Adam(self.parameters() if parameters is None else parameters, lr=learning_rate)
        steps = epochs * -(-len(rows) // batch_size)
        schedule = torch.optim.lr_scheduler.LinearLR(optimizer, 1.0, 0.0, total_iters=steps)
        for _ in range(epochs):
            shuffled = rows[torch.randperm(len(rows), generator=generator)]
            total, batches = 0.0, 0
            for start in range(0, len(shuffled), batch_size):
                loss = loss_of(shuffled[start : start + batch_size])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                schedule.step()
                total += float(loss.detach())
                batches += 1
            yield total / max(batches, 1)

    @classmethod
    def from_weights(cls, weights: PolicyWeights, seed: int = 0) -> PolicyValueNetwork:
        """A network holding ``weights``; without a value network there, a fresh one of the policy
        network's hidden widths (from ``seed``); of the variant the weights record."""
        actor = _hidden_widths(weights.policy)
        critic = actor if weights.value is None else _hidden_widths(weights.value)
        network = cls(weights.features, actor, critic, weights.activation, seed, weights.game, weights.obs_type)
        with torch.no_grad():
            for name, arrays in weights.networks().items():
                for layer, (weight, bias) in zip(getattr(network, name), arrays, strict=True):
                    layer.weight.copy_(torch.from_numpy(weight))
                    layer.bias.copy_(torch.from_numpy(bias))
        return network

    def to_weights(
        self, num_players: int | None, *, value: bool = True, provenance: Mapping[str, Any] | None = None,
        value_unit: float | None = None,
    ) -> PolicyWeights:
        """The networks as NumPy arrays, with the variant played (``value=False`` leaves the value
        network out: say so when it was not trained, so that nobody mistakes it for a trained critic;
        ``value_unit``: zero-sum hand points per unit of its output, ``None`` unknown)."""
        return PolicyWeights(
            policy=_arrays(self.policy),
            activation=self.activation,
            features=self.features,
            num_players=num_players,
            value=_arrays(self.value) if value else None,
            provenance=dict(provenance or {}),
            variant=None if self.game is None else self.game.variant,
            obs_type=self.obs_type,
            value_unit=value_unit if value else None,
        )

    def save(
        self,
        path: str | os.PathLike[str],
        num_players: int,
        *,
        value: bool = True,
        provenance: Mapping[str, Any] | None = None,
        value_unit: float | None = None,
    ) -> Path:
        """Write the policy file ``path`` (``.npz``) and its ``.json`` record; return the ``.npz``."""
        return save_policy_file(
            self.to_weights(num_players, value=value, provenance=provenance, value_unit=value_unit), path
        )


def _hidden_widths(layers: tuple[Layer, ...]) -> list[int]:
    return [int(weight.shape[0]) for weight, _ in layers[:-1]]


def _arrays(layers: torch.nn.ModuleList) -> tuple[Layer, ...]:
    linear = [cast(torch.nn.Linear, layer) for layer in layers]
    return tuple(
        (
            np.array(layer.weight.detach().cpu().numpy(), dtype=np.float32),  # a copy: training goes on
            np.array(layer.bias.detach().cpu().numpy(), dtype=np.float32),
        )
        for layer in linear
    )
