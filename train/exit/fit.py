"""Expert iteration's fit: the network learns the search's soft choices and the outcomes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agents.inputs import encode_inputs
from agents.policy_file import PolicyWeights
from arena.specs import seed_sequence_int
from train.config import ConfigError
from train.exit.collect import ExitData, search_targets
from train.exit.config import ExitConfig

if TYPE_CHECKING:  # torch is imported by the fit
    from train.network import PolicyValueNetwork


@dataclass
class FitReport:
    """The fit of one iteration, measured on the data after the last epoch.

    Attributes:
        policy_loss: cross-entropy against the search's targets.
        value_loss: mean squared error of the value against the outcome (in units of 40 points).
        agreement: share of decisions where the policy's top action is the search's.
    """

    policy_loss: float
    value_loss: float
    agreement: float


def fit(
    config: ExitConfig, data: ExitData, weights: PolicyWeights, iteration: int
) -> tuple[PolicyValueNetwork, FitReport]:
    """Train a copy of ``weights`` (policy and value networks) on ``data``; the network and its report.

    Without a value network in ``weights`` it starts fresh (the policy network's widths).
    """
    import torch
    from tqdm import tqdm

    from train.network import PolicyValueNetwork

    torch.set_num_threads(1)  # the same sums in the same order on every machine: exact repeats
    network = PolicyValueNetwork.from_weights(weights, config.seed)
    inputs = torch.from_numpy(encode_inputs(data.observations, data.masks, weights.features, weights.game,
                                            weights.obs_type))
    masks = torch.from_numpy(data.masks)
    targets = torch.from_numpy(search_targets(data.values, data.masks, config.temperature))
    outcomes = torch.from_numpy(data.outcomes)
    everything = torch.arange(len(data))

    def losses(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        log_p = network.log_probabilities(inputs[rows], masks[rows])
        value = network.values(inputs[rows])
        return -(targets[rows] * log_p).sum(dim=1).mean(), ((value - outcomes[rows]) ** 2).mean(), log_p

    def loss_of(rows: torch.Tensor) -> torch.Tensor:
        policy_loss, value_loss, _ = losses(rows)
        return policy_loss + config.value_loss_weight * value_loss

    epochs = network.fit(
        everything,
        loss_of,
        epochs=config.epochs,
        batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        generator=torch.Generator().manual_seed(seed_sequence_int(config.seed, iteration, 1 << 21)),
    )
    for _ in tqdm(epochs, total=config.epochs, desc=f"iteration {iteration} fit", unit="epoch",
                  disable=not config.progress_bar):
        pass  # each epoch runs as the progress bar asks for it
    with torch.no_grad():
        policy_loss, value_loss, log_p = losses(everything)
        agreement = (log_p.argmax(dim=1) == targets.argmax(dim=1)).float().mean()
    return network, FitReport(float(policy_loss), float(value_loss), float(agreement))


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


def initial_weights(config: ExitConfig) -> PolicyWeights:
    """Iteration 0: the policy ``init`` (read as weights only) or a fresh network, of the config's
    variant.

    A fresh network's policy has ``net_arch``'s hidden widths and its value network
    ``value_arch``'s (``net_arch``'s when ``value_arch`` is null); ``init`` brings its own.
    """
    from agents.policy_file import describe_variant
    from train.network import PolicyValueNetwork

    game = config.game()
    if config.init is not None:
        weights = init_weights(config.init)
        if weights.num_players not in (None, config.num_players):
            raise ConfigError(
                f"config key 'init' must be a {config.num_players}-player policy, "
                f"got one trained for {weights.num_players} players"
            )
        if weights.game.variant != game.variant:
            raise ConfigError(
                f"config key 'init' must be a policy of the config's game ({describe_variant(game)}), "
                f"got {config.init!r} (trained for {weights.describe_variant()})"
            )
        if weights.obs_type != config.obs_type:
            raise ConfigError(
                f"config key 'init' must be a policy that reads obs_type {config.obs_type!r}, "
                f"got {config.init!r} (it reads {weights.obs_type!r})"
            )
        return dataclasses.replace(weights, num_players=config.num_players)
    network = PolicyValueNetwork(
        config.features, config.net_arch, config.value_arch or config.net_arch, "relu", config.seed, game,
        config.obs_type,
    )
    return network.to_weights(config.num_players)
