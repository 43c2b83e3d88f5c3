"""Model construction shared by ``draw-train`` and ``draw-distill``.

Both build sb3-contrib ``MaskablePPO`` MLP policies with separate actor and critic layers
(:func:`new_model`). :func:`model_from_policy` builds one from weights read without unpickling
anything (a policy file, or a checkpoint's ``policy.pth`` read by :mod:`agents.policy_file`):
that is how a distillation's ``init`` is loaded, so a file received from someone else cannot
run code.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import VecEnv

from agents.policy_file import PolicyWeights
from draw_env.single_agent import DrawSingleAgentEnv
from train.config import PPOSettings

ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}


def new_model(
    env: gymnasium.Env | VecEnv,
    net_arch: list[int] | tuple[list[int], list[int]],
    activation: str,
    seed: int,
    ppo: PPOSettings | None = None,
    tensorboard_dir: str | None = None,
) -> MaskablePPO:
    """A fresh ``MaskablePPO("MlpPolicy")`` on CPU.

    Args:
        env: the (vectorised) environment, or one that only gives the spaces.
        net_arch: hidden widths of actor and critic, or ``(actor widths, critic widths)``.
        activation: ``"relu"`` or ``"tanh"``.
        ppo: the PPO hyper-parameters (``None``: sb3's defaults, for a model that is not trained by PPO).
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
            "n_steps": ppo.n_steps,
            "batch_size": ppo.batch_size,
            "n_epochs": ppo.n_epochs,
            "gamma": ppo.gamma,
            "gae_lambda": ppo.gae_lambda,
            "clip_range": ppo.clip_range,
            "ent_coef": ppo.ent_coef,
            "vf_coef": ppo.vf_coef,
            "max_grad_norm": ppo.max_grad_norm,
        }
    return MaskablePPO(
        "MlpPolicy",
        env,
        policy_kwargs={
            "net_arch": {"pi": list(actor), "vf": list(critic)},
            "activation_fn": ACTIVATIONS[activation],
        },
        tensorboard_log=tensorboard_dir,
        seed=seed,
        device="cpu",
        verbose=0,
        **settings,
    )


def spaces_env(num_players: int, features: str) -> DrawSingleAgentEnv:
    """An environment that only lends its spaces to a model that is not trained by PPO."""
    return DrawSingleAgentEnv(num_players=num_players, episode="match", features=features)


def model_from_policy(weights: PolicyWeights, num_players: int, seed: int) -> MaskablePPO:
    """A fresh model of the architecture of ``weights`` (a policy file or checkpoint read as weights
    only, see :mod:`agents.policy_file`) holding them; without a value network the critic is fresh."""
    actor = [int(weight.shape[0]) for weight, _ in weights.policy[:-1]]
    critic = actor if weights.value is None else [int(weight.shape[0]) for weight, _ in weights.value[:-1]]
    model = new_model(spaces_env(num_players, weights.features), (actor, critic), weights.activation, seed)
    state = {}
    networks = [("mlp_extractor.policy_net", "action_net", weights.policy)]
    if weights.value is not None:
        networks.append(("mlp_extractor.value_net", "value_net", weights.value))
    for hidden, output, layers in networks:
        # SB3's MLP is [Linear, activation, Linear, ...]: the Linear layers sit at even indices.
        names = [f"{hidden}.{2 * index}" for index in range(len(layers) - 1)] + [output]
        for name, (weight, bias) in zip(names, layers, strict=True):
            state[f"{name}.weight"] = torch.from_numpy(np.array(weight))
            state[f"{name}.bias"] = torch.from_numpy(np.array(bias))
    missing, unexpected = model.policy.load_state_dict(state, strict=False)
    critic = ("mlp_extractor.value_net.", "value_net.")
    if unexpected or any(weights.value is not None or not key.startswith(critic) for key in missing):
        raise ValueError(
            f"the policy's layers do not fit the model: missing {missing}, unexpected {unexpected}"
        )
    return model
