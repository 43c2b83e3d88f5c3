"""Distillation fit: train a policy network to play like the teacher's recorded values.

:func:`fit` trains the policy network of a :class:`train.network.PolicyValueNetwork` (a fresh
one of ``net_arch``, or the policy ``init``, read as weights only) to match
``softmax(values / temperature)`` over the legal actions, by cross-entropy. Soft targets carry
how much worse each alternative is, not only which move is best, and fitting them over many
similar positions averages out the noise of a 200-simulation search. The value network is not
trained.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.policy_file import PolicyWeights
from draw_env.features import encode_batch
from train.config import ConfigError, DistillConfig
from train.distill_data import Decisions
from train.network import PolicyValueNetwork


@dataclass
class FitReport:
    """How well the student follows the teacher on the held-out decisions.

    Attributes:
        epoch: 1-based epoch after which it was measured.
        train_loss: mean cross-entropy on the training decisions during the epoch.
        validation_loss: cross-entropy on the held-out decisions.
        agreement: share of held-out decisions where the student's top action is the teacher's.
        regret_points: mean hand points the student's top action is worth less than the
            teacher's, by the teacher's values (0 when it agrees).
    """

    epoch: int
    train_loss: float
    validation_loss: float
    agreement: float
    regret_points: float


def init_weights(path: str) -> PolicyWeights:
    """The policy ``init`` names, read as weights only: a policy file (``.npz`` + ``.json``) or a
    checkpoint ``.zip`` (its ``policy.pth`` and ``.policy.json`` side file; nothing is unpickled).

    Raises:
        ConfigError: if it is neither, naming the key ``init``.
    """
    from agents.policy_network import NumpyPolicy

    try:
        return NumpyPolicy.load(path).weights
    except ValueError as error:
        raise ConfigError(f"config key 'init' must name a policy file or checkpoint: {error}") from None


def build_student(config: DistillConfig, init: PolicyWeights | None = None) -> PolicyValueNetwork:
    """The network to train: holding ``init``, or a fresh one.

    A fresh network has ``config.net_arch`` hidden layers (ReLU) for both the policy and the
    value network, over ``config.features`` inputs. Distillation trains the policy network only,
    so a fresh value network stays untrained.
    """
    if init is not None:
        return PolicyValueNetwork.from_weights(init, config.seed)
    return PolicyValueNetwork(config.features, config.net_arch, config.net_arch, "relu", config.seed)


def fit(config: DistillConfig, decisions: Decisions) -> tuple[PolicyValueNetwork, list[FitReport]]:
    """Train the student's policy network on the teacher's values; return the network and the reports.

    The network is :func:`build_student`'s (holding ``config.init`` if set).
    """
    import torch

    from agents.ismcts import REWARD_SCALE

    torch.set_num_threads(max(1, config.workers))
    init = None if config.init is None else init_weights(config.init)
    network = build_student(config, init)
    features = config.features if init is None else init.features
    inputs = torch.from_numpy(encode_batch(decisions.observations, decisions.masks, features))
    masks = torch.from_numpy(decisions.masks)
    values = torch.from_numpy(np.nan_to_num(decisions.values, nan=0.0))
    # Targets: softmax of the teacher's values over the legal actions.
    scaled = values / config.temperature
    scaled = scaled.masked_fill(~masks, -torch.inf)
    targets = torch.softmax(scaled, dim=1)

    order = np.random.default_rng(config.seed).permutation(len(decisions))
    held_out = round(len(order) * config.validation_share)
    validation, training = torch.from_numpy(order[:held_out]), torch.from_numpy(order[held_out:])

    def loss_of(rows: torch.Tensor) -> torch.Tensor:
        return -(targets[rows] * network.log_probabilities(inputs[rows], masks[rows])).sum(dim=1).mean()

    reports = []
    epochs = network.fit(
        training,
        loss_of,
        epochs=config.epochs,
        batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        generator=torch.Generator().manual_seed(config.seed),
        parameters=network.policy.parameters(),  # the policy network only
    )
    for epoch, train_loss in enumerate(epochs, 1):
        with torch.no_grad():
            chosen = network.log_probabilities(inputs[validation], masks[validation]).argmax(dim=1)
            legal_values = values[validation].masked_fill(~masks[validation], -torch.inf)
            best, teacher_best = legal_values.max(dim=1)
            regret = (best - values[validation].gather(1, chosen[:, None])[:, 0]) * REWARD_SCALE
            report = FitReport(
                epoch=epoch,
                train_loss=train_loss,
                validation_loss=float(loss_of(validation)) if held_out else float("nan"),
                agreement=float((chosen == teacher_best).float().mean()) if held_out else float("nan"),
                regret_points=float(regret.mean()) if held_out else float("nan"),
            )
        reports.append(report)
        print(
            f"[fit] epoch {epoch}/{config.epochs}  train loss {report.train_loss:.4f}  "
            f"held-out loss {report.validation_loss:.4f}  agreement {report.agreement:.1%}  "
            f"regret {report.regret_points:.2f} points",
            flush=True,
        )
    return network, reports
