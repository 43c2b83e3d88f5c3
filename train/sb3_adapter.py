"""The bridge between the project's network and sb3-contrib's ``MaskablePPO``.

Self-play (:mod:`train.selfplay`) and the exploiter (:mod:`train.exploit`) train with PPO, so
their network lives inside a ``MaskablePPO("MlpPolicy")`` model: an actor and a critic MLP with
separate layers (:func:`new_model`, :func:`model_holding`). This module is where the project
meets SB3's policy: building models, and copying a network into one (:func:`model_holding`) or
out of one (:func:`weights_of`) under SB3's parameter names (the name map is
:func:`agents.sb3_checkpoint.sb3_state_dict`, which reads checkpoints with it too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import VecEnv

from agents.policy_file import ACTIVATIONS, PolicyWeights
from agents.sb3_checkpoint import WeightsRecord, sb3_state_dict, weights_from_state_dict
from train.learner_config import PPOSettings
from train.network import ACTIVATIONS as TORCH_ACTIVATIONS
from train.network import PolicyValueNetwork

if TYPE_CHECKING:
    from typing_extensions import Unpack


def new_model(
    env: gymnasium.Env | VecEnv,
    net_arch: list[int] | tuple[list[int], list[int]],
    activation: str,
    seed: int,
    ppo: PPOSettings | None = None,
    tensorboard_dir: str | None = None,
) -> MaskablePPO:
    """A fresh ``MaskablePPO("MlpPolicy")`` on CPU (its networks start as
    ``PolicyValueNetwork(features, actor, critic, activation, seed)`` does).

    Args:
        env: the (vectorised) environment.
        net_arch: hidden widths of actor and critic, or ``(actor widths, critic widths)``.
        activation: ``"relu"`` or ``"tanh"``.
        ppo: the PPO hyper-parameters (``None``: sb3's defaults, for a model only saved).
    """
    actor, critic = net_arch if isinstance(net_arch, tuple) else (net_arch, net_arch)
    settings: dict[str, Any] = {}
    if ppo is not None:
        settings = {
            "learning_rate": (
                ppo.learning_rate
                if ppo.lr_schedule == "constant"
                else LinearSchedule(ppo.learning_rate, 0.0, 1.0)
            ),
            # sb3's names for the project's (train.config.PPO_RENAMED["sb3"])
            "n_steps": ppo.num_steps,
            "batch_size": ppo.minibatch_size,
            "n_epochs": ppo.update_epochs,
            "gamma": ppo.gamma,
            "gae_lambda": ppo.gae_lambda,
            "clip_range": ppo.clip_coef,
            "ent_coef": ppo.ent_coef,
            "vf_coef": ppo.vf_coef,
            "max_grad_norm": ppo.max_grad_norm,
        }
    return MaskablePPO(
        "MlpPolicy",
        env,
        policy_kwargs={
            "net_arch": {"pi": list(actor), "vf": list(critic)},
            "activation_fn": TORCH_ACTIVATIONS[activation],
        },
        tensorboard_log=tensorboard_dir,
        seed=seed,
        device="cpu",
        verbose=0,
        **settings,
    )


def model_holding(
    network: PolicyValueNetwork,
    env: gymnasium.Env | VecEnv,
    seed: int,
    ppo: PPOSettings | None = None,
) -> MaskablePPO:
    """A ``MaskablePPO`` model on ``env`` of ``network``'s architecture, holding its weights."""
    model = new_model(env, network.hidden_widths(), network.activation, seed, ppo)
    state = sb3_state_dict(network.to_weights(None))
    model.policy.load_state_dict({name: torch.from_numpy(array) for name, array in state.items()})
    return model


def weights_of(source: Any, num_players: int | None, **record: Unpack[WeightsRecord]) -> PolicyWeights:
    """The networks of a live ``MaskablePPO`` model or its ``policy``, copied to NumPy, with what
    :func:`agents.sb3_checkpoint.weights_from_state_dict` records beside them (``value``,
    ``provenance``, ``game``: the variant it plays, ``None`` the seeds' game).

    Raises:
        ValueError: if its architecture is not an MLP with ReLU or Tanh.
    """
    policy = getattr(source, "policy", source)
    activation = getattr(policy, "activation_fn", None)
    name = getattr(activation, "__name__", repr(activation)).lower()
    if name not in ACTIVATIONS:
        raise ValueError(f"the policy's activation must be ReLU or Tanh, got {name}")
    return weights_from_state_dict(policy.state_dict(), name, num_players, **record)

