"""Self-play training of a MaskablePPO policy for Draw dominoes.

:func:`train` checks everything first (the config, the output directory, the ``--resume``
checkpoint against the config) and writes nothing before that. It then builds the learner's
games (:class:`train.vector_learner.DrawLearnerVecEnv`) and the MaskablePPO model, and trains
it in the learner's loop (:func:`learn`, the one :func:`train.selfplay.learner.train` runs for
``draw-bench``) with SB3's callbacks: :class:`SelfPlayPool` sends the learner's current actor (the
``self`` opponent) and the snapshots to the opponent pool, ``EveryNTimesteps`` runs the periodic
snapshots, checkpoints (:mod:`train.checkpoints`) and evaluations, and :class:`StopOnInterrupt`
ends training at the next step after SIGINT (Ctrl-C). What a run writes, when, and how it
continues: the docs page "Self-play PPO" (``docs/training_selfplay.md``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import torch
from pydantic import Field
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, ConvertCallback, EveryNTimesteps
from stable_baselines3.common.vec_env import VecEnv
from threadpoolctl import threadpool_limits

from agents.policy_network import NumpyPolicy
from arena.learner import (
    EvalRow,
    evaluate_learner,
    evaluation_table,
    first_reaching,
    write_rows_csv,
)
from draw_env.io.files import write_json_atomic
from draw_env.rules import DrawGame
from train.checkpoints import EVAL_ROW, ResumeState, read_resume_state, save_checkpoint
from train.exploitability_curve import ExploitabilityCurve
from train.export import export_policy
from train.meter import Budget, Checkpoint, Clock, Meter
from train.plots import plot_learning_curve
from train.policies import NetworkPolicy
from train.provenance import source
from train.run_dir import RunDir, RunSummary, read_run_file, seconds
from train.runs import open_run_dir
from train.sb3_adapter import MagneticPPO, log_nowhere, new_model, weights_of
from train.selfplay.config import TrainConfig
from train.vector_learner import learner_vec_env


def build_vec_env(config: TrainConfig) -> VecEnv:
    """``n_envs`` learner games, batched in one :class:`train.vector_learner.DrawLearnerVecEnv`."""
    return learner_vec_env(config, dict(config.opponents))


def build_model(config: TrainConfig, venv: VecEnv, tensorboard_dir: str | None) -> MaskablePPO:
    """A fresh model as ``config.ppo`` says, on ``venv``."""
    return new_model(
        venv, list(config.ppo.net_arch), config.ppo.activation, config.seed, config.ppo, tensorboard_dir
    )


class SelfPlayPool(BaseCallback):
    """Keeps the learner games' opponent pool current.

    Args:
        snapshots: the snapshot pool to start from (restored on resume); :meth:`freeze` appends.
        size: how many snapshots the pool keeps (the oldest go first).
        game: the variant and table the learner plays (recorded with each snapshot).
        obs_type: what the learner reads (recorded with each snapshot).
    """

    def __init__(self, snapshots: list[NumpyPolicy], size: int, game: DrawGame, obs_type: str) -> None:
        super().__init__()
        self.snapshots = snapshots
        self.size = size
        self.game = game
        self.obs_type = obs_type
        self._changed = True

    def actor(self) -> NumpyPolicy:
        return NumpyPolicy(weights_of(self.model, self.game.num_players, value=False, game=self.game,
                                      obs_type=self.obs_type))

    def freeze(self) -> None:
        """Add the current actor to the pool (sent to the games at the end of the rollout)."""
        self.snapshots.append(self.actor())
        del self.snapshots[: -self.size]
        self._changed = True

    def _send(self) -> None:
        snapshots = list(self.snapshots) if self._changed else None
        self.training_env.env_method("update_pool", self.actor(), snapshots)
        self._changed = False

    def _on_training_start(self) -> None:
        self._send()

    def _on_rollout_end(self) -> None:
        self._send()

    def _on_step(self) -> bool:
        return True


class StopOnInterrupt(BaseCallback):
    """Ends training at the next step once :func:`sigint_requests_stop` saw SIGINT."""

    def __init__(self, requested: Callable[[], bool]) -> None:
        super().__init__()
        self.requested = requested

    def _on_step(self) -> bool:
        return not self.requested()


@contextlib.contextmanager
def sigint_requests_stop() -> Iterator[Callable[[], bool]]:
    """While active, the first SIGINT only sets a flag (a second one interrupts at once).

    Yields a function telling whether SIGINT came.
    """
    seen: list[int] = []
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum: int, frame: Any) -> None:
        seen.append(signum)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    signal.signal(signal.SIGINT, handler)
    try:
        yield lambda: bool(seen)
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def unchecked_distributions() -> Iterator[None]:
    """While active, ``torch.distributions`` skips its argument checks (restored afterwards).

    Every distribution in training is built from our own network's logits, and MaskablePPO builds
    two per forward pass: the checks only cost time, and the numbers are the same without them
    (``benchmarks/selfplay_speed.py`` measures the cost).
    """
    previous = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        torch.distributions.Distribution.set_default_validate_args(previous)


def every(steps: int, task: Callable[[], None], start: int) -> EveryNTimesteps:
    """SB3's ``EveryNTimesteps`` running ``task`` every ``steps`` timesteps counted from ``start``."""
    callback = EveryNTimesteps(steps, ConvertCallback(lambda _locals, _globals: task() or True))
    callback.last_time_trigger = start
    return callback


class SelfPlayRun:
    """One training run's state and its checkpoint and evaluation tasks.

    Args:
        config: the run's config.
        model: the model (fresh or resumed).
        resumed: the state restored from ``--resume``, or ``None``.
    """

    def __init__(
        self, config: TrainConfig, model: MaskablePPO, resumed: ResumeState | None,
        curve: ExploitabilityCurve | None = None,
    ) -> None:
        self.config = config
        self.curve = curve
        self.model = model
        self.output_dir = Path(config.output_dir)
        self.clock = Clock(wall=resumed.train_seconds if resumed else 0.0)  # train_seconds: wall-clock
        self.eval_rows = [EvalRow(**row) for row in resumed.eval_rows] if resumed else []
        self.pool = SelfPlayPool(
            list(resumed.snapshots) if resumed else [], config.snapshot_pool, config.game(), config.obs_type
        )

    def callbacks(self, stop_requested: Callable[[], bool]) -> CallbackList:
        start = self.model.num_timesteps
        tasks = [self.pool, every(self.config.snapshot_every, self.pool.freeze, start)]
        tasks.append(every(self.config.checkpoint_every, self.save_step_checkpoint, start))
        if self.config.eval.every > 0:
            tasks.append(every(int(self.config.eval.every), self.run_eval, start))
        if self.curve is not None:
            tasks.append(every(self.config.exploitability_every, self.measure_exploitability, start))
        tasks.append(StopOnInterrupt(stop_requested))
        return CallbackList([*tasks, _Clock(self.clock)])

    def step_checkpoint(self) -> Path:
        return self.output_dir / "checkpoints" / f"step_{self.model.num_timesteps}.zip"

    def save(self, path: Path) -> None:
        """The model zip and its side files (see :mod:`train.checkpoints`), and beside them the
        policy file ``.npz`` + ``.json`` (weights only, the file to share)."""
        with self.clock.paused():
            state = {
                "train_seconds": self.clock.wall,
                "eval_rows": [dataclasses.asdict(row) for row in self.eval_rows],
                "config": self.config.to_dict(),
            }
            save_checkpoint(
                self.model,
                path,
                self.pool.snapshots,
                state,
                num_players=self.config.num_players,
                features=self.config.features,
                game=self.config.game(),
                obs_type=self.config.obs_type,
            )
            export_policy(
                self.model,
                path.with_suffix(".npz"),
                num_players=self.config.num_players,
                game=self.config.game(),
                obs_type=self.config.obs_type,
                value_unit=self.config.value_unit,
                provenance={
                    "trained_by": "draw-train",
                    "source": source(),
                    "config": self.config.to_dict(),
                    "timesteps": self.model.num_timesteps,
                    "train_seconds": round(self.clock.wall, 1),
                },
            )

    def save_step_checkpoint(self) -> None:
        self.save(self.step_checkpoint())

    def measure_exploitability(self) -> None:
        """The current policy's exact exploitability, onto the curve and into TensorBoard."""
        assert self.curve is not None
        with self.clock.paused():
            weights = weights_of(self.model, self.config.num_players, value=False, game=self.config.game(),
                                 obs_type=self.config.obs_type)
            point = self.curve.measure(weights, self.model.num_timesteps)
            self.model.logger.record("exploitability/exploitability", point.exploitability)
            self.model.logger.record("exploitability/measure_cpu_seconds", point.measure_cpu_seconds)
            self.model.logger.dump(self.model.num_timesteps)
            print(f"[exploitability] step {point.steps:>9,}  {point.exploitability:.4f} points per hand "
                  f"({point.measure_cpu_seconds:.1f} CPU-s to measure)", flush=True)

    def run_eval(self) -> None:
        """Evaluate the current policy against ``eval.opponents``; log and append to ``eval.csv``."""
        settings = self.config.eval
        logger = self.model.logger
        with self.clock.paused():
            path = export_policy(
                self.model,
                self.output_dir / "checkpoints" / "eval_latest.npz",
                num_players=self.config.num_players,
                game=self.config.game(),
                obs_type=self.config.obs_type,
                value_unit=self.config.value_unit,
            )
            for row in evaluate_learner(
                ("ppo", {"path": str(path)}),
                settings.opponents,
                self.config.num_players,
                settings.matches,
                timesteps=self.model.num_timesteps,
                train_seconds=self.clock.wall,
                seed=self.config.seed + 1,
                max_pip=self.config.max_pip, hand_size=self.config.hand_size, protected=self.config.protected,
                duplicate=settings.duplicate,
                workers=settings.workers,
            ):
                baseline = row.opponent
                self.eval_rows.append(row)
                logger.record(f"eval/win_rate_vs_{baseline}", row.win_rate)
                logger.record(f"eval/win_low_vs_{baseline}", row.win_low)
                logger.record(f"eval/zero_sum_per_hand_vs_{baseline}", row.zero_sum_per_hand)
                logger.record("time/train_seconds", row.train_seconds)
                print(
                    f"[eval] step {row.timesteps:>9,}  {row.train_seconds / 60:6.1f} min  vs {baseline:<13} "
                    f"win {row.win_rate:6.1%} [{row.win_low:.1%}, {row.win_high:.1%}]  "
                    f"zero-sum points/hand {row.zero_sum_per_hand:+.2f}",
                    flush=True,
                )
            write_rows_csv(self.output_dir / "eval.csv", self.eval_rows)
            logger.dump(self.model.num_timesteps)


class _Clock(BaseCallback):
    """Runs the training clock from the start of ``learn`` to its end."""

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock

    def _on_training_start(self) -> None:
        self.clock.start()

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        self.clock.stop()


#: A bound on the calls of SB3's ``learn`` in :func:`learn` (one between points; a rollout each
#: under a CPU budget).
MAX_CHUNKS = 10_000


def learn(
    run: SelfPlayRun,
    budget: Budget,
    on_checkpoint: Checkpoint | None = None,
    *,
    points: int = 1,
    provenance: Mapping[str, Any] | None = None,
    stop: Callable[[], bool] = lambda: False,
    progress_bar: bool = False,
) -> NetworkPolicy:
    """The loop of :func:`train.selfplay.learner.train` on ``run``'s model (fresh or resumed: ``draw-train``'s pipeline calls it
    with its own run), with the run's callbacks; ``stop()`` true ends training at the next step
    (SIGINT). SB3's ``learn`` runs to the next point in one call (whole rollouts)."""
    config, model = run.config, run.model
    game = config.game()
    meter = Meter(budget, points, on_checkpoint)

    def policy() -> NetworkPolicy:
        return NetworkPolicy(weights_of(model, config.num_players, game=game, obs_type=config.obs_type,
                                        provenance={**(provenance or {}), "timesteps": model.num_timesteps},
                                        value_unit=config.value_unit))

    def over() -> bool:
        return stop() or (budget.cpu_seconds is not None and meter.seconds >= budget.cpu_seconds)

    rollout = config.n_envs * config.ppo.num_steps
    for _ in range(MAX_CHUNKS):
        if meter.spent(model.num_timesteps):
            break
        target = meter.next_steps(model.num_timesteps)
        meter.start()
        model.learn(total_timesteps=rollout if target is None else target - model.num_timesteps,
                    callback=run.callbacks(over), reset_num_timesteps=model.num_timesteps == 0,
                    progress_bar=progress_bar, tb_log_name="ppo")
        meter.stop()
        meter.reached(model.num_timesteps, policy)
        if stop():  # asked during learn (which then ends at its next step)
            break
    return meter.finish(model.num_timesteps, policy())


class SelfPlaySummary(RunSummary):
    """``summary.json`` of a finished run (a run that stopped short of its timesteps continues)."""

    timesteps: int = Field(ge=0)
    train_seconds: float = seconds()
    final_eval: list[EVAL_ROW]  # type: ignore[valid-type]
    learning_curve: str | None
    seconds_to_75pct_vs_heaviest: float | None

    def progress(self) -> str:
        return f"{self.timesteps:,} steps"


def latest_checkpoint(output_dir: Path) -> Path | None:
    """The checkpoint a rerun continues from: ``final.zip``, else the last ``checkpoints/step_N.zip``."""
    if (output_dir / "final.zip").is_file():
        return output_dir / "final.zip"
    steps = [
        (int(path.stem[5:]), path)
        for path in (output_dir / "checkpoints").glob("step_*.zip")
        if path.stem[5:].isdigit()
    ]
    return max(steps)[1] if steps else None


def finished(run_dir: RunDir, config: TrainConfig) -> dict[str, Any] | None:
    """The summary of the run in ``run_dir`` if it reached ``total_timesteps``, else ``None``."""
    path = run_dir.path / "summary.json"
    if not path.is_file():
        return None
    summary = read_run_file(path, SelfPlaySummary)
    if summary.timesteps < config.total_timesteps:
        return None
    print(run_dir.complete(summary.progress()))
    return summary.model_dump()


def train(config: TrainConfig, resume: str | Path | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Run a whole training job as configured; return the summary written to ``summary.json``.

    Args:
        config: a validated config.
        resume: a checkpoint zip saved by an earlier run; training continues from its timestep
            count up to ``total_timesteps`` (if it is already there, the run only evaluates it).
            The config may change the opponents, PPO settings, evaluation and so on, not the
            model (:data:`train.checkpoints.MODEL_KEYS`).
        overwrite: replace an earlier run in ``config.output_dir``.

    Raises:
        ConfigError: before anything is written, on a bad checkpoint, a contradiction between it
            and the config, or an output directory that already holds a run.
        KeyboardInterrupt: after SIGINT, once the last checkpoint is saved.
    """
    # With --resume the checkpoint's own checks apply (train.checkpoints.MODEL_KEYS), not the saved config's.
    run_dir = open_run_dir(config, "selfplay", overwrite=overwrite, free=None if resume is None else config.to_dict())
    output_dir = run_dir.path
    if resume is None and run_dir.resuming:
        summary = finished(run_dir, config)
        if summary is not None:
            return summary
        resume = latest_checkpoint(output_dir)
        if resume is None:
            run_dir.start_over()
            print(f"{output_dir} holds no checkpoint of its run yet: starting it over")
    resumed = None if resume is None else read_resume_state(resume, config.to_dict())
    curve = None
    if config.exploitability_every:
        curve = ExploitabilityCurve(config.game(), config.obs_type, config.exploitability_every, output_dir,
                                    f"{config.num_players}-player self-play ({output_dir.name}): exact exploitability")
    # Everything is checked: from here on the run writes.
    run_dir.start()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    # NumPy opponents multiply small matrices: BLAS threads only wait for each other.
    threadpool_limits(1, user_api="blas")
    tensorboard_dir = str(output_dir / "tensorboard") if config.tensorboard else None
    with sigint_requests_stop() as stop_requested, unchecked_distributions():
        venv = build_vec_env(config)
        try:
            if resumed is not None:
                # Our own run's zip: MaskablePPO.load unpickles its data entry (see train.checkpoints).
                model = (MagneticPPO if config.ppo.magnet_coef > 0 else MaskablePPO).load(
                    str(resumed.checkpoint), env=venv, device="cpu", tensorboard_log=tensorboard_dir
                )
                if isinstance(model, MagneticPPO):
                    model.configure_magnet(config.ppo)
                if tensorboard_dir is None:
                    log_nowhere(model)
            else:
                model = build_model(config, venv, tensorboard_dir)
            run = SelfPlayRun(config, model, resumed, curve)
            if curve is not None and resumed is not None:
                curve.resume(model.num_timesteps)
            remaining = config.total_timesteps - model.num_timesteps
            if remaining <= 0:
                print(
                    f"The checkpoint is at {model.num_timesteps:,} steps, total_timesteps is "
                    f"{config.total_timesteps:,}: nothing left to train, evaluating it."
                )
            else:
                if resumed is not None:
                    print(
                        f"Resuming from {resumed.checkpoint} at step {model.num_timesteps:,}: "
                        f"{remaining:,} steps left to {config.total_timesteps:,}"
                    )
                interrupted = False
                try:
                    # The learner's loop: one call of SB3's learn to total_timesteps.
                    learn(run, Budget(env_steps=config.total_timesteps), stop=stop_requested,
                          progress_bar=config.progress_bar)
                except KeyboardInterrupt:
                    interrupted = True
                if interrupted or stop_requested():
                    run.clock.stop()
                    path = run.step_checkpoint()
                    run.save(path)
                    print(
                        f"\nInterrupted at step {model.num_timesteps:,}: saved {path}; rerun the command to continue"
                    )
                    raise KeyboardInterrupt
        finally:
            venv.close()
    return finish(run)


def finish(run: SelfPlayRun) -> dict[str, Any]:
    """Save ``final.zip`` and its policy file ``final.npz``, evaluate it, write the summary and the curve."""
    config, model, output_dir = run.config, run.model, run.output_dir
    final_path = output_dir / "final.zip"
    run.save(final_path)
    if run.curve is not None:
        run.measure_exploitability()
    seconds = run.clock.wall
    print(f"Training done: {model.num_timesteps:,} steps in {seconds / 60:.1f} min; checkpoint: {final_path}")
    settings = config.final_eval
    final_rows = evaluate_learner(
        ("ppo", {"path": str(final_path.with_suffix(".npz"))}),
        settings.opponents,
        config.num_players,
        settings.matches,
        timesteps=model.num_timesteps,
        train_seconds=seconds,
        seed=config.seed + 2,
        max_pip=config.max_pip, hand_size=config.hand_size, protected=config.protected,
        duplicate=settings.duplicate,
        workers=settings.workers,
        progress=config.progress_bar,
    )
    figure = output_dir / "learning_curve.png"
    if run.eval_rows:
        plot_learning_curve(
            run.eval_rows,
            figure,
            title=f"{config.num_players}-player self-play ({output_dir.name})",
            num_players=config.num_players,
        )
    reached = first_reaching(run.eval_rows, "heaviest", 0.75)
    summary = {
        "config": config.to_dict(),
        "timesteps": model.num_timesteps,
        "train_seconds": round(seconds, 1),
        "final_eval": [dataclasses.asdict(row) for row in final_rows],
        "learning_curve": str(figure) if run.eval_rows else None,
        "seconds_to_75pct_vs_heaviest": None if reached is None else reached.train_seconds,
        "steps_to_75pct_vs_heaviest": None if reached is None else reached.timesteps,
    }
    if run.curve is not None:
        summary["exploitability"] = run.curve.summary()
    write_json_atomic(output_dir / "summary.json", summary, indent=1)
    return summary


def results_table(summary: dict[str, Any], num_players: int) -> str:
    """The final evaluation of a self-play summary as a text table (one row per baseline)."""
    return evaluation_table(
        summary["final_eval"],
        num_players,
        title=(
            f"{num_players}-player policy after {summary['timesteps']:,} steps "
            f"({summary['train_seconds'] / 60:.1f} min): match win rate, duplicate format"
        ),
    )


def selfplay_main(config: TrainConfig, args: Any) -> int:
    """``draw-train`` for a self-play config (``args`` from :func:`train.cli.build_parser`).

    Prints the final evaluation's table and ends with ``policy written to OUTPUT_DIR/final.npz``.

    Raises:
        ConfigError: a bad ``--resume`` checkpoint, or an ``output_dir`` holding another run.
        KeyboardInterrupt: after Ctrl-C, once the last checkpoint is saved.
    """
    summary = train(config, resume=args.resume, overwrite=args.overwrite)
    print(results_table(summary, config.num_players))
    if summary["learning_curve"]:
        print(f"Learning curve: {summary['learning_curve']}")
    reached = summary["seconds_to_75pct_vs_heaviest"]
    if reached is not None:
        print(f"75% match win rate vs heaviest first reached after {reached / 60:.1f} training minutes")
    print(f"Summary: {config.output_dir}/summary.json")
    # The file to play and share; final.zip beside it is the checkpoint a longer run continues from.
    print(f"policy written to {Path(config.output_dir) / 'final.npz'}")
    return 0
