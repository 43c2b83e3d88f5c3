"""The bridge between the project's network and sb3-contrib's ``MaskablePPO``.

Self-play (:mod:`train.selfplay`) and the exploiter (:mod:`train.exploit`) train with PPO, so
their network lives inside a ``MaskablePPO("MlpPolicy")`` model: an actor and a critic MLP with
separate layers (:func:`new_model`, :func:`model_holding`). This module is where the project
meets SB3's policy: building models, and copying a network into one (:func:`model_holding`) or
out of one (:func:`weights_of`) under SB3's parameter names (the name map is
:func:`agents.sb3_checkpoint.sb3_state_dict`, which reads checkpoints with it too).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.policies import BaseModel
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import VecEnv

from agents.policy_file import ACTIVATIONS, PolicyWeights
from agents.sb3_checkpoint import WeightsRecord, sb3_state_dict, weights_from_state_dict
from train.learner_config import MagnetSettings, PPOSettings, magnet_weight
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
    model = (MagneticPPO if ppo is not None and ppo.magnet_coef > 0 else MaskablePPO)(
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
    if isinstance(model, MagneticPPO) and ppo is not None:
        model.configure_magnet(ppo)
    if tensorboard_dir is None:
        log_nowhere(model)
    return model


def log_nowhere(model: MaskablePPO) -> None:
    """Give ``model`` a logger that writes nothing: without a logger of its own, sb3's ``learn``
    configures one that creates a folder ``SB3-<date>`` in the system's temporary directory on
    every call, even when it has nothing to write there."""
    model.set_logger(Logger(folder=None, output_formats=[]))


class MagneticPPO(MaskablePPO):
    """MaskablePPO with magnetic mirror descent (Sokota et al., ICLR 2023): each minibatch's loss
    gains ``weight * KL(policy || magnet)`` over the legal actions (:class:`MagnetSettings`).

    The loss is MaskablePPO's own: while :meth:`train` runs, the policy's ``evaluate_actions``
    answers, in place of the entropy, ``ent_coef * entropy - weight * KL`` and ``ent_coef`` is 1,
    so that sb3's ``ent_coef * -mean(entropy)`` term is ``-ent_coef * H + weight * KL`` (sb3's
    ``train/entropy_loss`` then logs that sum; ``train/magnet_kl`` logs the KL). The moving magnet
    is a copy of the actor whose parameters trail the policy's after each update; it starts as the
    policy and is not saved (a resumed run starts it again from the policy).
    """

    magnet_settings: MagnetSettings | None = None
    _magnet: torch.nn.ModuleDict | None = None

    def configure_magnet(self, settings: MagnetSettings) -> None:
        """Use ``settings`` (its ``magnet_coef`` > 0) from the next update on."""
        self.magnet_settings = settings
        self._magnet = None
        if settings.magnet == "moving_average":
            self._magnet = copy.deepcopy(torch.nn.ModuleDict(
                {"latent": self.policy.mlp_extractor.policy_net, "logits": self.policy.action_net}
            )).requires_grad_(False)

    def _excluded_save_params(self) -> list[str]:
        # The magnet is run state, not the model's: a checkpoint keeps sb3's own entries only.
        return [*super()._excluded_save_params(), "magnet_settings", "_magnet"]

    def train(self) -> None:
        settings = self.magnet_settings
        if settings is None or settings.magnet_coef == 0:
            super().train()
            return
        rollout = self.n_steps * self.n_envs
        weight = magnet_weight(settings.magnet_coef, settings.magnet_schedule,
                               max(self.num_timesteps // rollout - 1, 0), max(self._total_timesteps // rollout, 1))
        kls: list[float] = []
        with self._regularised(weight, kls):
            super().train()
        self.logger.record("train/magnet_kl", sum(kls) / max(len(kls), 1))
        self.logger.record("train/magnet_coef", weight)
        if self._magnet is not None:
            rate = settings.magnet_rate
            actor = [self.policy.mlp_extractor.policy_net, self.policy.action_net]
            with torch.no_grad():
                for trailing, current in zip(self._magnet.parameters(),
                                             (p for module in actor for p in module.parameters()), strict=True):
                    trailing.mul_(1 - rate).add_(current, alpha=rate)

    def magnet_kl(self, observations: torch.Tensor, action_masks: torch.Tensor) -> torch.Tensor:
        """Per row, ``KL(policy || magnet)`` over the legal actions (differentiable in the policy)."""
        policy = self.policy
        log_p = torch.log_softmax(policy.get_distribution(observations, action_masks).distribution.logits, -1)
        legal = torch.as_tensor(action_masks, dtype=torch.bool).reshape(log_p.shape)
        if self._magnet is None:
            log_q = -torch.log(legal.sum(-1, keepdim=True).to(log_p.dtype)).expand_as(log_p)
        else:
            features = BaseModel.extract_features(policy, observations, policy.pi_features_extractor)
            logits = self._magnet["logits"](self._magnet["latent"](features))
            log_q = torch.log_softmax(logits.masked_fill(~legal, -1e8), -1)
        terms = torch.where(legal, log_p.exp() * (log_p - log_q), torch.zeros_like(log_p))
        return terms.sum(-1)

    @contextlib.contextmanager
    def _regularised(self, weight: float, kls: list[float]) -> Iterator[None]:
        """While active, the entropy sb3's loss reads carries the KL term (see the class)."""
        policy, ent_coef = self.policy, self.ent_coef

        def evaluate_actions(obs: Any, actions: Any, action_masks: Any = None) -> Any:
            values, log_prob, entropy = type(policy).evaluate_actions(policy, obs, actions, action_masks=action_masks)
            kl = self.magnet_kl(obs, action_masks)
            kls.append(float(kl.detach().mean()))
            return values, log_prob, ent_coef * entropy - weight * kl

        policy.evaluate_actions = evaluate_actions  # type: ignore[method-assign]
        self.ent_coef = 1.0
        try:
            yield
        finally:
            del policy.evaluate_actions
            self.ent_coef = ent_coef


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

