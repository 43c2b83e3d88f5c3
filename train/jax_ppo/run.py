"""A ``draw-train`` run of PPO in JAX (:func:`run_jax_ppo`) and its entry (:func:`jax_ppo_main`).

The run checks its output directory first (:class:`train.run_dir.RunDir`), trains with the
learner's loop (:func:`train.jax_ppo.learner.learn` over :func:`train.jax_ppo.trainer.train`), evaluates the policy between chunks every ``eval.every``
updates (each one exported to ``checkpoints/update_N.npz``), exports the final policy file
``final.npz`` (+ ``final.json``), evaluates it (``final_eval``) and writes ``summary.json``. A
run is one fixed budget of updates, checkpointed after every chunk (``state.npz``: the whole
training state, the evaluations so far): a rerun of an unfinished run continues from its last
checkpoint as if never stopped, a rerun of a finished one prints its results. The files and keys:
the docs page "PPO in JAX" (``docs/jax_training.md``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from arena.learner import EvalRow, evaluate_learner, evaluation_table, write_rows_csv
from train.config import ConfigError
from train.jax_ppo.config import JaxPPOConfig
from train.jax_ppo.learner import learn
from train.meter import Budget
from train.provenance import source
from train.run_dir import MAX_RUN_FILE_BYTES, RunSummary, check_run_data, row_schema, seconds
from train.runs import open_run_dir

#: The checkpoint of a run (:func:`train.jax_ppo.trainer.save_state`), in its folder.
STATE = "state.npz"
#: The checkpoint's array of the evaluation rows so far, as UTF-8 JSON.
EVAL_ROWS = "eval_rows"


class JaxPPOSummary(RunSummary):
    """``summary.json`` of a finished run."""

    env_steps: int = Field(ge=0)
    train_seconds: float = seconds()
    final_eval: list[row_schema(EvalRow)]  # type: ignore[valid-type]
    policy: str

    def progress(self) -> str:
        return f"{self.env_steps:,} environment steps"


def _trainer_module() -> Any:
    """:mod:`train.jax_ppo.trainer`, or a config error saying what to install."""
    try:
        from train.jax_ppo import trainer
    except ImportError as error:
        raise ConfigError(
            f"pipeline: jax_ppo needs JAX, Flax and optax (pip install 'draw-dominoes[jax]'): {error}"
        ) from None
    return trainer


def _export(config: JaxPPOConfig, built: Any, params: Any, path: Path, provenance: dict[str, Any]) -> Path:
    """The network ``params`` of the trainer ``built`` as the policy file ``path``."""
    from agents.policy_file import save_policy_file
    from train.jax_ppo.policy import policy_weights

    weights = policy_weights(built.graphdef, params, config.activation, config.game(), provenance, config.obs_type,
                             config.value_unit)
    return save_policy_file(weights, path)


def _evaluate(config: JaxPPOConfig, policy: Path, final: bool, env_steps: int, seconds: float) -> list[EvalRow]:
    settings = config.final_eval if final else config.eval
    return evaluate_learner(
        ("network", {"path": str(policy)}),
        settings.opponents,
        config.num_players,
        settings.matches,
        timesteps=env_steps,
        train_seconds=seconds,
        seed=config.seed + (2 if final else 1),
        max_pip=config.max_pip, hand_size=config.hand_size, protected=config.protected,
        duplicate=settings.duplicate,
        workers=settings.workers,
        progress=final and config.progress_bar,
    )


def run_jax_ppo(config: JaxPPOConfig, overwrite: bool = False) -> dict[str, Any]:
    """Train, export and evaluate as ``config`` says; return the summary written to ``summary.json``.

    Raises:
        ConfigError: before anything is written: JAX missing, or an ``output_dir`` holding another
            run or an unfinished one (without ``overwrite``).
    """
    trainer = _trainer_module()
    run_dir = open_run_dir(config, "jax_ppo", overwrite=overwrite)
    output_dir = run_dir.path
    if run_dir.resuming and (output_dir / "summary.json").exists():
        return run_dir.finished(JaxPPOSummary, "summary.json", "finished")  # type: ignore[return-value]
    curve = None
    if config.exploitability_every:
        from train.exploitability_curve import ExploitabilityCurve

        curve = ExploitabilityCurve(config.game(), config.obs_type, config.exploitability_every, output_dir,
                                    f"PPO in JAX{config.variant_text()}: exact exploitability while training")
    built = trainer.Trainer(config)
    state_path = output_dir / STATE
    steps_per_update = config.env_steps_per_update
    rows: list[EvalRow] = []
    start = None
    if run_dir.resuming and state_path.exists():
        start, rows = _resume(built, state_path, config)
        if curve is not None:
            curve.resume(start[1].updates * steps_per_update)
        if config.progress_bar:
            print(f"continuing {output_dir} from update {start[1].updates:,} of {config.updates:,}", flush=True)
    else:  # a new run, or one cut short before its first checkpoint: from the start
        if run_dir.resuming:
            run_dir.start_over()
        run_dir.start()

    def save(runner: Any, progress: Any) -> None:
        encoded = json.dumps([dataclasses.asdict(row) for row in rows]).encode()
        trainer.save_state(state_path, runner, progress, {EVAL_ROWS: np.frombuffer(encoded, np.uint8)})

    def measure(steps: int, params: Any) -> None:
        from train.jax_ppo.policy import policy_weights

        assert curve is not None
        weights = policy_weights(built.graphdef, params, config.activation, config.game(), {}, config.obs_type)
        point = curve.measure(weights, steps)
        if config.progress_bar:
            print(f"[exploitability] env steps {steps:>11,}  {point.exploitability:.4f} points per hand "
                  f"({point.measure_cpu_seconds:.1f} CPU-s to measure)", flush=True)

    def evaluate_chunk(updates: int, seconds: float, params: Any) -> None:
        if curve is not None and curve.due(updates * steps_per_update):
            measure(updates * steps_per_update, params)
        every = int(config.eval.every)
        if every == 0 or updates % every:
            return
        path = output_dir / "checkpoints" / f"update_{updates:06d}.npz"
        _export(config, built, params, path, {"trained_by": "draw-train (pipeline: jax_ppo)", "source": source(), "updates": updates})
        rows.extend(_evaluate(config, path, False, updates * steps_per_update, seconds))
        write_rows_csv(output_dir / "eval.csv", rows)
        for row in rows[-len(config.eval.opponents) :]:
            print(f"[eval] update {updates:>5}  vs {row.opponent:<12} win {row.win_rate:6.1%} "
                  f"[{row.win_low:.1%}, {row.win_high:.1%}]", flush=True)

    # The learner's loop (train.jax_ppo.learner): the trainer's jitted chunks, evaluated between them.
    _, result = learn(config, Budget(env_steps=config.updates * steps_per_update), trainer=built,
                      on_chunk=evaluate_chunk, start=start, save=save)
    import jax

    provenance = {
        "trained_by": "draw-train (pipeline: jax_ppo)",
        "source": source(),
        "config": config.to_dict(),
        "env_steps": result.env_steps,
        "wall_seconds": round(result.wall_seconds, 1),
        "cpu_seconds": round(result.cpu_seconds, 1),
        "backend": jax.default_backend(),
    }
    policy = _export(config, built, result.params, output_dir / "final.npz", provenance)
    if curve is not None and not (curve.points and curve.points[-1].steps == result.env_steps):
        measure(result.env_steps, result.params)  # the end, unless the last chunk's measure was it
    final_rows = _evaluate(config, policy, True, result.env_steps, result.train_seconds)
    summary = {
        "config": config.to_dict(),
        "env_steps": result.env_steps,
        "train_seconds": round(result.train_seconds, 1),
        "compile_seconds": round(result.compile_seconds, 1),
        "steps_per_second": round(result.steps_per_second),
        "backend": provenance["backend"],
        "final_eval": [dataclasses.asdict(row) for row in final_rows],
        "eval": [dataclasses.asdict(row) for row in rows],
        "policy": str(policy),
    }
    if curve is not None:
        summary["exploitability"] = curve.summary()
    run_dir.write_json("summary.json", summary)
    return summary


def _resume(built: Any, path: Path, config: JaxPPOConfig) -> tuple[Any, list[EvalRow]]:
    """The checkpoint ``path`` of the run to continue: ``(runner, progress)`` and the evaluation
    rows so far, each checked before use.

    Raises:
        ConfigError: naming the file and what is wrong with it.
    """
    import jax

    from draw_env.io.untrusted import loads_json
    from train.jax_ppo.trainer import check_progress, load_state

    template = built.init(jax.random.key(config.seed))
    try:
        runner, progress, extra = load_state(path, template, {EVAL_ROWS: ("uint8", MAX_RUN_FILE_BYTES)})
        data = loads_json(extra[EVAL_ROWS].tobytes().decode(), f"{path} ({EVAL_ROWS})", expect=list)
        checked = check_run_data(data, list[row_schema(EvalRow)], f"{path} ({EVAL_ROWS})")  # type: ignore[misc]
        check_progress(progress, config)
    except (ValueError, UnicodeDecodeError) as error:
        raise ConfigError(str(error) if str(path) in str(error) else f"{path}: {error}") from None
    steps = progress.updates * config.env_steps_per_update
    rows = [EvalRow(**row.model_dump()) for row in checked if row.timesteps <= steps]
    return (runner, progress), rows


def jax_ppo_main(config: JaxPPOConfig, args: Any) -> int:
    """``draw-train`` for a config with ``pipeline: jax_ppo`` (``args`` from :func:`train.cli.build_parser`).

    Raises:
        ConfigError: JAX missing, or an ``output_dir`` holding another run.
    """
    try:
        summary = run_jax_ppo(config, overwrite=args.overwrite)
    except KeyboardInterrupt:
        print("\nInterrupted: the run is not finished; rerun the command with --overwrite to start it again.")
        return 130
    title = (
        f"{config.num_players}-player PPO in JAX{config.variant_text()} after {summary['env_steps']:,} environment steps "
        f"({summary['train_seconds']:.1f} s of training): match win rate, duplicate format"
    )
    print(evaluation_table(summary["final_eval"], config.num_players, title=title))
    print(f"Summary: {config.output_dir}/summary.json")
    print(f"policy written to {summary['policy']}")
    return 0
