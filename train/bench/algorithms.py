"""The benchmark's adapters over the project's own pipelines (:data:`train.bench.protocol.ALGORITHMS`).

Each adapter maps the cell's settings file, the game and the seed onto its pipeline's config (the
pydantic model ``draw-train`` checks) and calls the learner's ``train(config, budget,
on_checkpoint, points)`` with the cell's budget and curve points. What each one counts as an
environment step is its library's own count, recorded with the cell (``STEP_UNITS``):

- ``cfr``: the exact solver, CFR+ in the shipped settings (:func:`train.cfr.learner.train`) on the enumerated tree, exact games only; a step
  is a history visited (two passes over the tree an iteration).
- ``sb3_ppo``: self-play MaskablePPO (:func:`train.selfplay.learner.train`): the learner's decisions.
- ``jax_ppo``: PPO in JAX (:func:`train.jax_ppo.learner.train`), one-hand episodes of every game, a
  budget of ``env_steps``: every seat's actions.
- ``jax_mmd``: the same learner with magnetic mirror descent, a row of its own: its settings file
  (``jax_mmd.yaml``) sets the magnet.
- ``exit``: expert iteration (:func:`train.exit.learner.train`): decisions collected by the search.
- ``rllib_ppo``: RLlib PPO in the ``.venv-rllib`` interpreter (:mod:`train.bench.rllib_cell`): every
  seat's actions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from train.bench.protocol import BenchGame, Cell, Checkpoint, Policy
from train.config import MAX_INT, ConfigError, Section, build

#: What each algorithm counts as an environment step (stored in its cell records).
STEP_UNITS = {
    "cfr": "histories visited by the solver (2 x the tree's histories an iteration)",
    "sb3_ppo": "learner decisions (SB3 num_timesteps)",
    "jax_ppo": "actions of every seat (updates x num_envs x num_steps)",
    "jax_mmd": "actions of every seat (updates x num_envs x num_steps)",
    "exit": "decisions collected by the guided search",
    "rllib_ppo": "actions of every seat (RLlib num_env_steps_sampled_lifetime)",
}


def _refuse(cell: Cell, why: str) -> ValueError:
    return ValueError(f"algorithm {cell.algorithm!r} cannot run game {cell.game.name!r}: {why}")


def _build(cell: Cell, model: type[Any], data: dict[str, Any]) -> Any:
    """The pipeline's config of ``data``, or one line naming the algorithm, the game and the key."""
    try:
        return build(model, data)
    except ConfigError as error:
        raise ConfigError(f"settings of algorithm {cell.algorithm!r} on game {cell.game.name!r}: {error}") from None


def _variant_keys(game: BenchGame) -> dict[str, Any]:
    return {"num_players": game.num_players, **game.variant}


# ---------------------------------------------------------------------------- CFR+


def cfr_plus(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """The exact solver (:func:`train.cfr.learner.train`) with its settings' ``algorithm`` (CFR+ in
    the shipped settings); the policy is the average strategy's table."""
    from train.cfr.config import CfrConfig
    from train.cfr.learner import train

    if not cell.game.exact:
        raise _refuse(cell, "the solver needs a small 2-player one-hand game (micro, mini)")
    config = _build(cell, CfrConfig, {**dict(cell.settings), **cell.game.variant, "obs_type": cell.obs_type,
                                      "output_dir": str(work / "cfr"), "progress_bar": False})
    return train(config, cell.budget, checkpoint, points=cell.curve_points,
                 provenance={"benchmark_cell": cell.key})


# ---------------------------------------------------------------------------- self-play MaskablePPO


def sb3_ppo(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """Self-play MaskablePPO (:func:`train.selfplay.learner.train`)."""
    from train.selfplay.config import TrainConfig
    from train.selfplay.learner import train

    data = {
        **dict(cell.settings), **_variant_keys(cell.game), "seed": cell.seed, "episode": cell.game.episode,
        "obs_type": cell.obs_type, "output_dir": str(work / "selfplay"), "tensorboard": False, "progress_bar": False,
        # Training stops at the budget; no periodic checkpoint or evaluation of the pipeline's own.
        "total_timesteps": min(cell.budget.env_steps or MAX_INT, MAX_INT), "checkpoint_every": MAX_INT,
        "eval": {"every": 0},
    }
    return train(_build(cell, TrainConfig, data), cell.budget, checkpoint, points=cell.curve_points,
                 provenance={"trained_by": "draw-bench (sb3_ppo)", "cell": cell.key})


# ---------------------------------------------------------------------------- PPO in JAX


def jax_ppo(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """PPO in JAX (:func:`train.jax_ppo.learner.train`) on the game's table and variant, for
    ``jax_ppo`` and ``jax_mmd`` alike (the magnet is a setting). It trains on one-hand episodes
    (also for the games played as matches)."""
    from train.jax_ppo.config import JaxPPOConfig

    if cell.budget.env_steps is None:
        raise _refuse(cell, "PPO in JAX runs a fixed number of updates: give the budget env_steps")
    from train.jax_ppo.learner import train

    config = _build(cell, JaxPPOConfig, {**dict(cell.settings), **_variant_keys(cell.game), "seed": cell.seed,
                                         "obs_type": cell.obs_type, "output_dir": str(work / "jax_ppo"),
                                         "progress_bar": False})
    if cell.algorithm == "jax_mmd" and config.magnet_coef == 0:
        raise _refuse(cell, "its settings must give magnet_coef > 0 (with magnet_coef 0 it is jax_ppo)")
    return train(config, cell.budget, checkpoint, points=cell.curve_points,
                 provenance={"trained_by": f"draw-bench ({cell.algorithm})", "cell": cell.key})


# ---------------------------------------------------------------------------- expert iteration


def expert_iteration(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """Expert iteration (:func:`train.exit.learner.train`)."""
    from train.exit.config import ExitConfig
    from train.exit.learner import train

    data = {**dict(cell.settings), **_variant_keys(cell.game), "seed": cell.seed, "episode": cell.game.episode,
            "obs_type": cell.obs_type, "output_dir": str(work / "exit"), "tensorboard": False, "progress_bar": False}
    return train(_build(cell, ExitConfig, data), cell.budget, checkpoint, points=cell.curve_points,
                 provenance={"trained_by": "draw-bench (exit)", "cell": cell.key})


# ---------------------------------------------------------------------------- RLlib PPO


class RLlibSettings(Section):
    """``configs/bench/algorithms/rllib_ppo.yaml``: the interpreter that has RLlib, and the keys of
    the RLlib pipeline's config (:class:`train.rllib.config.RLlibConfig`) under ``rllib``."""

    python: str = Field(".venv-rllib/bin/python", min_length=1, max_length=4096)
    rllib: dict[str, Any] = Field(default_factory=dict)


def rllib_ppo(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """RLlib PPO (:mod:`train.bench.rllib_cell`), trained in the interpreter that has RLlib."""
    from train.bench.rllib_cell import run_in_rllib_interpreter

    settings = _build(cell, RLlibSettings, dict(cell.settings))
    return run_in_rllib_interpreter(cell, work, checkpoint, settings.python, settings.rllib)
