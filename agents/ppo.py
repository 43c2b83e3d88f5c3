"""The trained MaskablePPO policy as an agent, and a NumPy copy of its actor for fast play.

``agents.make("ppo")`` loads the shipped 2-player policy (``agents/policies/ppo_2p.zip``: the
``ismcts`` search distilled into a network by ``draw-distill``);
``agents.make("ppo", path="runs/x/final.zip")`` loads any checkpoint saved by ``draw-train`` or
``draw-distill`` (also shipped: the distilled 3- and 4-player policies ``ppo_3p.zip`` and
``ppo_4p.zip``, and the self-play policies they replaced, ``ppo_{2,3,4}p_selfplay.zip``).
The input features (``"scaled"`` or ``"extended"``, see :mod:`draw_env.single_agent`) are read
off the checkpoint's observation space, so any checkpoint plays without extra settings.

Loading needs torch and sb3-contrib (the ``train`` extra); they are imported inside
:meth:`NumpyPolicy.from_checkpoint` only, so that importing :mod:`agents` stays light. Play
itself runs on NumPy: one small matrix product per layer, much faster than a torch call for a
single observation, and the same code serves the opponents inside training workers.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import BaseAgent, Observation, check_seed, legal_actions
from draw_env.features import FEATURES, encode_observation, feature_size

POLICY_DIR = Path(__file__).resolve().parent / "policies"
#: The shipped default 2-player policy (distilled from ``ismcts``; see ``ppo_2p.json``).
DEFAULT_POLICY = POLICY_DIR / "ppo_2p.zip"

_ACTIVATIONS = {
    "Tanh": np.tanh,
    "ReLU": lambda x: np.maximum(x, 0.0),
}


@dataclass
class NumpyPolicy:
    """The actor of a MaskablePPO MLP policy, in NumPy.

    Attributes:
        layers: ``(weight (out, in), bias (out,))`` of each hidden layer, input first.
        activation: ``"Tanh"`` or ``"ReLU"`` (the torch class name), applied after each hidden layer.
        action_weight: ``(58, last hidden)``; ``action_bias``: ``(58,)``.
        features: the input features the policy was trained on (``"scaled"`` or ``"extended"``).
    """

    layers: list[tuple[np.ndarray, np.ndarray]]
    activation: str
    action_weight: np.ndarray
    action_bias: np.ndarray
    features: str

    def logits(self, inputs: np.ndarray) -> np.ndarray:
        """Unmasked action logits, shape ``(58,)``, for one input vector ``(feature_size,)``."""
        activate = _ACTIVATIONS[self.activation]
        hidden = inputs
        for weight, bias in self.layers:
            hidden = activate(weight @ hidden + bias)
        return self.action_weight @ hidden + self.action_bias

    def choose(
        self, observation: Observation, deterministic: bool, rng: random.Random | np.random.Generator
    ) -> int:
        """An action for an AEC observation dict: the best legal one, or one sampled by probability."""
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 1:
            return int(legal[0])
        logits = self.logits(encode_observation(observation, self.features))[legal]
        if deterministic:
            return int(legal[np.argmax(logits)])
        cumulative = np.cumsum(np.exp(logits - logits.max()))
        index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
        return int(legal[min(index, len(legal) - 1)])

    @classmethod
    def from_sb3(cls, policy: Any) -> NumpyPolicy:
        """Copy the actor of a ``MaskableActorCriticPolicy`` with an MLP extractor.

        Raises:
            ValueError: if the policy's architecture is not an MLP this class can run.
        """
        import torch

        layers = []
        activation = None
        for module in policy.mlp_extractor.policy_net:
            if isinstance(module, torch.nn.Linear):
                layers.append(_linear_arrays(module))
            elif type(module).__name__ in _ACTIVATIONS:
                if activation not in (None, type(module).__name__):
                    raise ValueError("policy mixes activations; NumpyPolicy supports one")
                activation = type(module).__name__
            else:
                raise ValueError(
                    f"policy_net holds a {type(module).__name__}; NumpyPolicy runs Linear, Tanh and ReLU"
                )
        size = policy.observation_space.shape[0]
        matching = [name for name in FEATURES if feature_size(name) == size]
        if not matching:
            raise ValueError(
                f"observation size {size} matches no feature set of draw_env.features ({FEATURES})"
            )
        action_weight, action_bias = _linear_arrays(policy.action_net)
        return cls(layers, activation or "Tanh", action_weight, action_bias, matching[0])

    @classmethod
    def from_checkpoint(cls, path: str | Path) -> NumpyPolicy:
        """Load a MaskablePPO ``.zip`` saved by SB3 (CPU), keeping only the actor."""
        import torch
        from sb3_contrib import MaskablePPO

        torch.set_num_threads(1)
        return cls.from_sb3(MaskablePPO.load(str(path), device="cpu").policy)


def _linear_arrays(module: Any) -> tuple[np.ndarray, np.ndarray]:
    return (
        module.weight.detach().cpu().numpy().astype(np.float32),
        module.bias.detach().cpu().numpy().astype(np.float32),
    )


@functools.lru_cache(maxsize=8)
def _load_cached(path: str, mtime_ns: int, size: int) -> NumpyPolicy:
    """Load a checkpoint once per process and file version (the evaluator builds an agent per game)."""
    return NumpyPolicy.from_checkpoint(path)


class PPOAgent(BaseAgent):
    """A MaskablePPO policy trained by ``draw-train``, playing from its observation alone.

    Args:
        path: a checkpoint ``.zip``; ``None`` loads the shipped default 2-player policy.
        deterministic: play the most probable legal action (default) or sample from the policy.
        seed: seeds the sampling when ``deterministic`` is False.

    Raises:
        ValueError: if ``path`` does not exist or is not a MaskablePPO MLP checkpoint.
    """

    name = "ppo"

    def __init__(
        self, path: str | Path | None = None, deterministic: bool = True, seed: int | None = None
    ) -> None:
        check_seed(seed)
        if not isinstance(deterministic, bool):
            raise ValueError(f"deterministic must be True or False, got {deterministic!r}")
        checkpoint = DEFAULT_POLICY if path is None else Path(path)
        if not checkpoint.is_file():
            raise ValueError(
                f"path must be an existing MaskablePPO checkpoint (.zip), got {str(checkpoint)!r}"
            )
        self.path = checkpoint
        self.deterministic = deterministic
        stat = checkpoint.stat()
        self.policy = _load_cached(str(checkpoint.resolve()), stat.st_mtime_ns, stat.st_size)
        self.rng = random.Random(seed)

    def act(self, observation: Observation) -> int:
        legal_actions(observation)  # rejects a mask that allows nothing
        return self.policy.choose(observation, self.deterministic, self.rng)
