"""The hidden-tile model's fit: an MLP learns each hidden tile's place, in torch, then is exported.

The network's logits go through the same masked softmax and Sinkhorn balancing as
:func:`agents.hidden_tiles.balanced_probabilities` (written here in torch), and the loss is the
cross-entropy of each hidden tile's true row, averaged over the hidden tiles of a minibatch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from agents.hidden_tiles import HiddenTileModel, ObservedPlaces, UniformHiddenTiles, observed_places
from draw_env.observation import layout
from train.inference.collect import Decisions
from train.inference.config import InferenceConfig

if TYPE_CHECKING:  # torch is imported by the fit
    import torch

#: The smallest probability the loss takes the log of.
FLOOR = 1e-12
#: Decisions evaluated at once (bounded memory).
CHUNK = 4096


@dataclass
class FitReport:
    """The fit, epoch by epoch: the mean training loss (nats per hidden tile) and the held-out
    log-likelihood after the epoch (nats per hidden tile, as :func:`mean_log_likelihood`), and the
    epoch whose weights the model has (counted from 1: the one with the best held-out figure)."""

    epoch_losses: list[float]
    validation_log_likelihoods: list[float]
    best_epoch: int


def balanced_torch(logits: torch.Tensor, allowed: torch.Tensor, hidden: torch.Tensor, counts: torch.Tensor,
                   balancing: int) -> torch.Tensor:
    """:func:`agents.hidden_tiles.balanced_probabilities` in torch: ``(b, R, T)`` logits, bool
    ``allowed`` ``(b, R, T)``, bool ``hidden`` ``(b, T)``, float ``counts`` ``(b, R)``."""
    import torch

    p = torch.softmax(logits.masked_fill(~allowed, float("-inf")), dim=1)
    hidden = hidden[:, None, :]
    for _ in range(balancing):
        rows = torch.where(hidden, p, 0.0).sum(dim=2)
        scale = torch.where(rows > 0, counts / rows.clamp_min(1e-30), 1.0)
        p = torch.where(hidden, p * scale[:, :, None], p)
        p = p / p.sum(dim=1, keepdim=True)
    return p


def _tensors(config: InferenceConfig, data: Decisions) -> tuple[torch.Tensor, ...]:
    """Inputs (scaled), allowed, hidden, counts and targets (the true row, 0 where not hidden)."""
    import torch

    game = config.game()
    observations = data.observations.astype(np.float32)
    places: ObservedPlaces = observed_places(game, observations)
    scale = (1.0 / layout(game).high).astype(np.float32)
    targets = np.where(places.hidden, data.places, 0).astype(np.int64)
    return (
        torch.from_numpy(observations * scale),
        torch.from_numpy(places.allowed),
        torch.from_numpy(places.hidden),
        torch.from_numpy(places.counts.astype(np.float32)),
        torch.from_numpy(targets),
    )


def fit(config: InferenceConfig, data: Decisions, validation: Decisions) -> tuple[HiddenTileModel, FitReport]:
    """Train a fresh MLP of ``config.net_arch`` on ``data`` (measured on ``validation`` after
    each epoch); the exported model and its report. The model has the weights of the epoch with
    the best held-out log-likelihood: past it, more epochs fit the training hands' deals, which a
    hand's decisions share, and the held-out figure falls."""
    import torch
    from tqdm import tqdm

    torch.set_num_threads(1)  # the same sums in the same order on every machine: exact repeats
    torch.manual_seed(config.seed)
    game = config.game()
    rows, tiles = game.num_players + 1, game.num_tiles
    widths = [layout(game).size, *config.net_arch, rows * tiles]
    modules: list[torch.nn.Module] = []
    for index, (inputs, outputs) in enumerate(zip(widths, widths[1:], strict=False)):
        modules.append(torch.nn.Linear(inputs, outputs))
        if index < len(widths) - 2:
            modules.append(torch.nn.ReLU())
    network = torch.nn.Sequential(*modules)
    # The last layer starts at zero: the fit starts from the uniform model (every logit 0) and
    # learns how the observation moves each tile away from it.
    last = modules[-1]
    assert isinstance(last, torch.nn.Linear)
    torch.nn.init.zeros_(last.weight)
    torch.nn.init.zeros_(last.bias)
    optimizer = torch.optim.AdamW(network.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    inputs, allowed, hidden, counts, targets = _tensors(config, data)
    generator = np.random.default_rng(config.seed)
    batches = -(-len(data) // config.batch_size)
    losses: list[float] = []
    held_out = _tensors(config, validation)
    measured: list[float] = []
    linears = [module for module in network if isinstance(module, torch.nn.Linear)]
    best: list[tuple[torch.Tensor, torch.Tensor]] = []
    best_epoch = 0  # counted from 1; the first of equal figures is kept

    def validate() -> float:
        total, count = 0.0, 0
        with torch.no_grad():
            for start in range(0, len(validation), CHUNK):
                part = slice(start, start + CHUNK)
                v_inputs, v_allowed, v_hidden, v_counts, v_targets = (tensor[part] for tensor in held_out)
                logits = network(v_inputs).reshape(len(v_inputs), rows, tiles)
                p = balanced_torch(logits, v_allowed, v_hidden, v_counts, config.balancing)
                chosen = p.gather(1, v_targets[:, None, :])[:, 0, :]
                total += float((torch.log(chosen.clamp_min(FLOOR)) * v_hidden).sum())
                count += int(v_hidden.sum())
        return total / max(count, 1)
    with tqdm(total=config.epochs * batches, desc="fit", unit="batch", disable=not config.progress_bar,
              dynamic_ncols=True) as bar:
        for _ in range(config.epochs):
            order = torch.from_numpy(generator.permutation(len(data)))
            total, tiles_seen = 0.0, 0
            for start in range(0, len(data), config.batch_size):
                batch = order[start : start + config.batch_size]
                logits = network(inputs[batch]).reshape(len(batch), rows, tiles)
                p = balanced_torch(logits, allowed[batch], hidden[batch], counts[batch], config.balancing)
                chosen = p.gather(1, targets[batch][:, None, :])[:, 0, :]
                mask = hidden[batch]
                count = int(mask.sum())
                loss = -(torch.log(chosen.clamp_min(FLOOR)) * mask).sum() / max(count, 1)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += float(loss.detach()) * count
                tiles_seen += count
                bar.update(1)
            losses.append(total / max(tiles_seen, 1))
            measured.append(validate())
            if best_epoch == 0 or measured[-1] > measured[best_epoch - 1]:
                best_epoch = len(measured)
                best = [(linear.weight.detach().clone(), linear.bias.detach().clone()) for linear in linears]
            bar.set_postfix(loss=f"{losses[-1]:.4f}", validation=f"{measured[-1]:.4f}")
    layers = tuple((weight.numpy().astype(np.float32), bias.numpy().astype(np.float32)) for weight, bias in best)
    report = FitReport(losses, measured, best_epoch)
    return HiddenTileModel(layers, game, config.balancing), report


def mean_log_likelihood(model: HiddenTileModel | UniformHiddenTiles, data: Decisions) -> tuple[float, int]:
    """The mean log-probability ``model`` gives each hidden tile's true place over ``data``
    (nats per hidden tile; 0 is perfect), and the number of hidden tiles it is the mean of."""
    total, count = 0.0, 0
    for start in range(0, len(data), CHUNK):
        part = data.select(np.arange(start, min(start + CHUNK, len(data))))
        observations = part.observations.astype(np.float32)
        hidden = observed_places(model.game, observations).hidden
        probabilities = model.location_probabilities_batch(observations)
        rows = np.where(hidden, part.places, 0).astype(np.intp)
        chosen = np.take_along_axis(probabilities, rows[:, None, :], axis=1)[:, 0, :]
        total += float(np.log(np.maximum(chosen[hidden], FLOOR)).sum())
        count += int(hidden.sum())
    return total / max(count, 1), count
