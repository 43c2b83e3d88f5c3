"""A ``draw-train`` run of the hidden-tile model (:func:`run_inference`) and its entry (:func:`inference_main`).

The run checks its output directory first (:class:`train.run_dir.RunDir`), plays ``games``
hands with ``policy`` at every seat (:func:`train.inference.collect.collect`), holds out the last
``validation`` share of them, fits the MLP on the rest (:func:`train.inference.fit.fit`),
exports ``hidden_tiles.npz`` (+ ``hidden_tiles.json``), reads it back as any user would
(:func:`agents.hidden_tiles.load_hidden_tile_model`) and measures on the held-out hands the
log-likelihood of the true places of the hidden tiles, against :class:`~agents.hidden_tiles.UniformHiddenTiles`.
A run is one fixed budget: a rerun of a finished run prints its results, an unfinished one is
started again with ``--overwrite``. The files and keys: ``docs/inference.md``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np
from pydantic import Field

from agents.hidden_tiles import UniformHiddenTiles, load_hidden_tile_model, save_hidden_tile_model
from agents.policy_file import describe_variant
from train.inference.collect import collect
from train.inference.config import InferenceConfig
from train.inference.fit import fit, mean_log_likelihood
from train.provenance import source
from train.run_dir import RunSummary, seconds
from train.runs import open_run_dir

#: The model file a run writes in its output directory.
MODEL = "hidden_tiles.npz"


class InferenceSummary(RunSummary):
    """``summary.json`` of a finished run (the figures :func:`summary_lines` prints)."""

    games: int = Field(ge=0)
    decisions: int = Field(ge=0)
    validation_games: int = Field(ge=0)
    validation_decisions: int = Field(ge=0)
    validation_hidden_tiles: int = Field(ge=0)
    log_likelihood: float
    uniform_log_likelihood: float
    gain: float
    play_seconds: float = seconds()
    fit_seconds: float = seconds()
    model: str

    def progress(self) -> str:
        return f"{self.games:,} hands, {self.decisions:,} decisions"


def run_inference(config: InferenceConfig, overwrite: bool = False) -> dict[str, Any]:
    """Play, fit, export and measure as ``config`` says; return the summary written to ``summary.json``.

    Raises:
        ConfigError: before anything is written: an ``output_dir`` holding another run or an
            unfinished one (without ``overwrite``).
    """
    from threadpoolctl import threadpool_limits

    run = open_run_dir(config, "inference", overwrite=overwrite)
    finished = run.finished(InferenceSummary, "summary.json", "a run does not continue")
    if finished is not None:
        return finished
    threadpool_limits(1, user_api="blas")  # the same sums in the same order: exact repeats
    run.start()
    started = time.process_time()
    data = collect(config)
    play_seconds = time.process_time() - started
    held_out = data.games >= config.games - config.validation_games
    training, validation = data.select(np.flatnonzero(~held_out)), data.select(np.flatnonzero(held_out))
    started = time.process_time()
    model, report = fit(config, training, validation)
    fit_seconds = time.process_time() - started
    game = config.game()
    model = dataclasses.replace(model, provenance={
        "trained_by": "draw-train (pipeline: inference)",
        "source": source(),
        "config": config.to_dict(),
        "games": config.games - config.validation_games,
        "decisions": len(training),
        "epoch_losses": [round(loss, 6) for loss in report.epoch_losses],
        "best_epoch": report.best_epoch,
    })
    path = save_hidden_tile_model(run.path / MODEL, model)
    exported = load_hidden_tile_model(path, game)
    log_likelihood, hidden_tiles = mean_log_likelihood(exported, validation)
    uniform, _ = mean_log_likelihood(UniformHiddenTiles(game, config.balancing), validation)
    summary = {
        "config": config.to_dict(),
        "games": config.games,
        "decisions": len(data),
        "validation_games": config.validation_games,
        "validation_decisions": len(validation),
        "validation_hidden_tiles": hidden_tiles,
        "log_likelihood": round(log_likelihood, 6),
        "uniform_log_likelihood": round(uniform, 6),
        "gain": round(log_likelihood - uniform, 6),
        "epoch_losses": [round(loss, 6) for loss in report.epoch_losses],
        "epoch_validation_log_likelihoods": [round(value, 6) for value in report.validation_log_likelihoods],
        "best_epoch": report.best_epoch,
        "play_seconds": round(play_seconds, 1),
        "fit_seconds": round(fit_seconds, 1),
        "model": str(path),
    }
    run.write_json("summary.json", summary)
    return summary


def summary_lines(config: InferenceConfig, summary: dict[str, Any]) -> list[str]:
    """The readable end of a run: what was played, the held-out log-likelihoods, the model's path."""
    game = config.game()
    variant = "" if game.is_default else f", {describe_variant(game)}"
    gain = summary["gain"]
    return [
        f"Hidden-tile model, {config.num_players} players{variant}, {config.policy} at every seat: "
        f"{summary['games']:,} hands, {summary['decisions']:,} decisions "
        f"({summary['play_seconds'] / 60:.1f} CPU-min playing, {summary['fit_seconds'] / 60:.1f} fitting)",
        f"Held out: {summary['validation_games']:,} hands, {summary['validation_decisions']:,} decisions, "
        f"{summary['validation_hidden_tiles']:,} hidden tiles. Log-likelihood of their true places, "
        "nats per hidden tile:",
        f"  model    {summary['log_likelihood']:+.4f}",
        f"  uniform  {summary['uniform_log_likelihood']:+.4f}  (uniform over the allowed places, balanced to the counts)",
        f"  gain     {gain:+.4f}  (each hidden tile's true place {math.exp(gain):.3f}x as likely)",
        f"The model has the weights of epoch {summary['best_epoch']} of {len(summary['epoch_losses'])}, "
        "the best on the held-out hands.",
        f"Summary: {config.output_dir}/summary.json",
        f"model written to {summary['model']}",
    ]


def inference_main(config: InferenceConfig, args: Any) -> int:
    """``draw-train`` for a config with ``pipeline: inference``.

    Raises:
        ConfigError: an ``output_dir`` holding another run.
    """
    for line in summary_lines(config, run_inference(config, overwrite=args.overwrite)):
        print(line)
    return 0
