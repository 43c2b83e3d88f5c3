"""The benchmark's adapters over the project's own pipelines (:data:`train.bench.protocol.ALGORITHMS`).

Each adapter builds its pipeline's config (the pydantic model ``draw-train`` checks) from the
cell's settings file, the game and the seed, trains through the pipeline's library functions in
the cell's work folder, and calls the checkpoint at the cell's curve points. What each one counts
as an environment step is its library's own count, recorded with the cell (``STEP_UNITS``):

- ``cfr``: CFR+ (:mod:`train.cfr.solver`) on the enumerated tree, exact games only; a step is a
  history visited (two passes over the tree an iteration).
- ``sb3_ppo``: self-play MaskablePPO (:mod:`train.selfplay.run`): the learner's decisions.
- ``jax_ppo``: PPO in JAX (:mod:`train.jax_ppo.trainer`), one-hand episodes of every game, a budget
  of ``env_steps``: every seat's actions.
- ``exit``: expert iteration (:mod:`train.exit.run`): decisions collected by the search.
- ``rllib_ppo``: RLlib PPO in the ``.venv-rllib`` interpreter (:mod:`train.bench.rllib_cell`): every
  seat's actions.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import Field

from train.bench.policies import CurveSchedule, NetworkPolicy, TablePolicy, TrainingClock
from train.bench.protocol import BenchGame, Cell, Checkpoint, Policy
from train.config import MAX_INT, ConfigError, Section, build, number

#: What each algorithm counts as an environment step (stored in its cell records).
STEP_UNITS = {
    "cfr": "histories visited by the solver (2 x the tree's histories an iteration)",
    "sb3_ppo": "learner decisions (SB3 num_timesteps)",
    "jax_ppo": "actions of every seat (updates x num_envs x num_steps)",
    "exit": "decisions collected by the guided search",
    "rllib_ppo": "actions of every seat (RLlib num_env_steps_sampled_lifetime)",
}
#: A bound on the number of training calls an adapter makes between curve points.
_MAX_CHUNKS = 10_000


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


class CfrSettings(Section):
    """``configs/bench/algorithms/cfr.yaml``: the solver has no hyper-parameters but its memory bound."""

    max_memory_gib: float = number(4.0, 0.0, 1024.0, low_open=True)


def cfr_plus(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """CFR+ on the game's tree until the budget; the policy is the average strategy's table."""
    from draw_env.game_tree import build_tree
    from train.cfr.solver import SolverState, iterate, mirrored_entries, solution, solution_table, warm_up

    if not cell.game.exact:
        raise _refuse(cell, "the solver needs a small 2-player one-hand game (micro, mini)")
    settings = _build(cell, CfrSettings, dict(cell.settings))
    tree = build_tree(cell.game.rules, max_bytes=int(settings.max_memory_gib * 1024**3))
    steps_per_iteration = 2 * tree.num_nodes
    # A table of information states: the seats' strategies mixed into one policy, as draw-train's.
    mirror = mirrored_entries(tree) if cell.obs_type == "information_state" else None
    state = SolverState.fresh(tree)
    warm_up(tree)  # the compile is no training: it would be most of the first curve point's CPU seconds
    clock, schedule = TrainingClock(), CurveSchedule(cell.budget, cell.curve_points)

    def policy() -> TablePolicy:
        rows, probabilities = solution_table(tree, solution(tree, state, mirror), mirror)
        return TablePolicy(rows, probabilities, {"solver": "CFR+", "iterations": state.iteration,
                                                 "benchmark_cell": cell.key}, cell.obs_type)

    while not cell.budget.spent(state.iteration * steps_per_iteration, clock.seconds):
        # Whole iterations up to the next curve point by steps; one at a time under a CPU bound.
        target = schedule.next_steps(state.iteration * steps_per_iteration)
        todo = 1 if target is None or cell.budget.cpu_seconds is not None else max(
            1, math.ceil(target / steps_per_iteration) - state.iteration)
        clock.start()
        iterate(tree, state, todo)
        clock.stop()
        steps = state.iteration * steps_per_iteration
        while schedule.due(steps, clock.seconds) and not cell.budget.spent(steps, clock.seconds):
            schedule.taken()
            checkpoint(steps, clock.seconds, policy())
    final = policy()
    checkpoint(state.iteration * steps_per_iteration, clock.seconds, final)
    return final


# ---------------------------------------------------------------------------- self-play MaskablePPO


def sb3_ppo(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """Self-play MaskablePPO through :mod:`train.selfplay.run`'s games, model and callbacks (its
    snapshots and opponent pool), trained in chunks up to each curve point."""
    import torch
    from threadpoolctl import threadpool_limits

    from train.sb3_adapter import weights_of
    from train.selfplay.config import TrainConfig
    from train.selfplay.run import SelfPlayRun, build_model, build_vec_env, unchecked_distributions

    budget = cell.budget
    data = {
        **dict(cell.settings), **_variant_keys(cell.game), "seed": cell.seed, "episode": cell.game.episode,
        "obs_type": cell.obs_type, "output_dir": str(work / "selfplay"), "tensorboard": False, "progress_bar": False,
        # Training stops at the budget; no periodic checkpoint or evaluation of the pipeline's own.
        "total_timesteps": min(budget.env_steps or MAX_INT, MAX_INT), "checkpoint_every": MAX_INT,
        "eval": {"every": 0},
    }
    config = _build(cell, TrainConfig, data)
    torch.set_num_threads(1)
    game = config.game()
    clock, schedule = TrainingClock(), CurveSchedule(budget, cell.curve_points)

    def policy(model: Any) -> NetworkPolicy:
        return NetworkPolicy(weights_of(model, config.num_players, game=game, obs_type=config.obs_type,
                                        provenance={"trained_by": "draw-bench (sb3_ppo)", "cell": cell.key,
                                                    "timesteps": model.num_timesteps}))

    with threadpool_limits(1, user_api="blas"), unchecked_distributions():
        venv = build_vec_env(config)
        try:
            model = build_model(config, venv, None)
            run = SelfPlayRun(config, model, None)
            for _ in range(_MAX_CHUNKS):
                if budget.spent(model.num_timesteps, clock.seconds):
                    break
                target = schedule.next_steps(model.num_timesteps)
                rollout = config.n_envs * config.ppo.num_steps
                chunk = rollout if target is None else max(rollout, target - model.num_timesteps)
                clock.start()

                def over(clock: TrainingClock = clock) -> bool:
                    return budget.cpu_seconds is not None and clock.now() >= budget.cpu_seconds

                model.learn(total_timesteps=chunk, callback=run.callbacks(over), reset_num_timesteps=model.num_timesteps == 0,
                            progress_bar=False)
                clock.stop()
                while schedule.due(model.num_timesteps, clock.seconds) and not budget.spent(model.num_timesteps, clock.seconds):
                    schedule.taken()
                    checkpoint(model.num_timesteps, clock.seconds, policy(model))
            final = policy(model)
            checkpoint(model.num_timesteps, clock.seconds, final)
        finally:
            venv.close()
    return final


# ---------------------------------------------------------------------------- PPO in JAX


def jax_ppo(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """PPO in JAX (:func:`train.jax_ppo.trainer.train`) on the game's table and variant: the
    updates the step budget buys, in chunks of ``chunk`` updates, a curve point after the chunks
    that reach one. It trains on one-hand episodes (also for the games played as matches)."""
    from train.jax_ppo.config import JaxPPOConfig
    from train.jax_ppo.run import FAST_COMPILE, trainer_settings

    if cell.budget.env_steps is None:
        raise _refuse(cell, "PPO in JAX runs a fixed number of updates: give the budget env_steps")
    settings = dict(cell.settings)
    base = _build(cell, JaxPPOConfig, {**settings, **_variant_keys(cell.game), "seed": cell.seed,
                                       "obs_type": cell.obs_type, "output_dir": str(work / "jax_ppo"),
                                       "progress_bar": False})
    per_update = base.num_envs * base.num_steps
    updates = max(1, math.ceil(cell.budget.env_steps / per_update / base.chunk)) * base.chunk
    config = _build(cell, JaxPPOConfig, {**base.to_dict(), "updates": updates})
    from train.jax_ppo import trainer as jax_trainer
    from train.jax_ppo.policy import policy_weights

    trainer_config = trainer_settings(config)
    built = jax_trainer.Trainer(trainer_config)
    schedule = CurveSchedule(cell.budget, cell.curve_points)
    clock = TrainingClock()

    def policy(params: Any, updates_done: int) -> NetworkPolicy:
        return NetworkPolicy(policy_weights(built.graphdef, params, config.activation, built.game,
                                            {"trained_by": "draw-bench (jax_ppo)", "cell": cell.key,
                                             "updates": updates_done}, config.obs_type, config.value_unit))

    def on_chunk(updates_done: int, seconds: float, params: Any) -> None:
        clock.stop()
        steps = updates_done * per_update
        while schedule.due(steps, clock.seconds) and updates_done < updates:
            schedule.taken()
            checkpoint(steps, clock.seconds, policy(params, updates_done))
        clock.start()

    clock.start()
    result = jax_trainer.train(trainer_config, progress=False, trainer=built, on_chunk=on_chunk,
                               compiler_options=FAST_COMPILE if config.fast_compile else None)
    clock.stop()
    final = policy(result.params, updates)
    checkpoint(result.env_steps, clock.seconds, final)
    return final


# ---------------------------------------------------------------------------- expert iteration


def expert_iteration(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """Expert iteration (:func:`train.exit.run.run_exit`), one iteration at a time (the run
    continues in its folder), a curve point after the iterations that reach one."""
    from agents.policy_file import load_policy_file
    from train.exit.config import ExitConfig
    from train.exit.run import read_state, run_exit

    budget = cell.budget
    data = {**dict(cell.settings), **_variant_keys(cell.game), "seed": cell.seed, "episode": cell.game.episode,
            "obs_type": cell.obs_type, "output_dir": str(work / "exit"), "tensorboard": False, "progress_bar": False,
            "iterations": 1}
    config = _build(cell, ExitConfig, data)
    clock, schedule = TrainingClock(), CurveSchedule(budget, cell.curve_points)
    decisions = 0
    for iteration in range(1, _MAX_CHUNKS + 1):
        if budget.spent(decisions, clock.seconds):
            break
        config = _build(cell, ExitConfig, {**config.to_dict(), "iterations": iteration})
        clock.start()
        run_exit(config)
        clock.stop()
        decisions = read_state(Path(config.output_dir)).decisions
        if schedule.due(decisions, clock.seconds) and not budget.spent(decisions, clock.seconds):
            while schedule.due(decisions, clock.seconds):
                schedule.taken()
            checkpoint(decisions, clock.seconds, NetworkPolicy(load_policy_file(Path(config.output_dir) / "final.npz")))
    final = NetworkPolicy(load_policy_file(Path(config.output_dir) / "final.npz"))
    checkpoint(decisions, clock.seconds, final)
    return final


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
