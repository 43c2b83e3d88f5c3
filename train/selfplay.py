"""Self-play training of a MaskablePPO policy for Draw dominoes.

:func:`train` builds the vectorised single-agent environments (one
:class:`train.opponents.OpponentPoolEnv` per worker), the MaskablePPO model and a
:class:`SelfPlayCallback` that

* sends the learner's current actor to the workers after every rollout (the ``self`` opponent)
  and freezes a snapshot every ``snapshot_every`` steps (the ``snapshots`` opponents);
* saves a checkpoint every ``checkpoint_every`` steps (model zip + snapshot pool + run state),
  from which ``--resume`` continues;
* evaluates the learner against baselines every ``eval.every`` steps with ``agents.evaluation``
  (match win rate with its Wilson 95% interval), logging to TensorBoard and ``eval.csv``.

At the end it saves ``final.zip``, evaluates it (``final_eval``), writes ``summary.json`` and the
learning-curve PNG.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import pickle
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

from agents.evaluation import evaluate
from agents.ppo import NumpyPolicy
from agents.results import EvaluationResult
from train.config import EvalSettings, TrainConfig
from train.opponents import make_worker_env
from train.plots import plot_learning_curve


@dataclass
class EvalRow:
    """One evaluation of the learner against one baseline."""

    timesteps: int
    train_seconds: float
    opponent: str
    matches: int
    win_rate: float
    win_low: float
    win_high: float
    points_per_hand: float


def evaluate_checkpoint(
    checkpoint: str | Path, settings: EvalSettings, num_players: int, seed: int, progress: bool = False
) -> list[tuple[str, EvaluationResult]]:
    """Evaluate a checkpoint against each baseline of ``settings`` with ``agents.evaluation``.

    With 2 players the table is the learner against one baseline; with 3 or 4, the learner
    against ``num_players - 1`` copies of the baseline.

    Returns:
        ``(baseline name, evaluation result)`` pairs, in ``settings.opponents`` order.
    """
    results = []
    for baseline in settings.opponents:
        players: list[Any] = [("ppo", {"path": str(checkpoint)})] + [baseline] * (num_players - 1)
        result = evaluate(
            players,
            num_games=settings.matches,
            episode="match",
            duplicate=settings.duplicate,
            seed=seed,
            workers=settings.workers,
            progress=progress,
        )
        results.append((baseline, result))
    return results


def learner_row(result: EvaluationResult, baseline: str, timesteps: int, train_seconds: float) -> EvalRow:
    """The learner's (participant 0's) line of an ``agents.evaluation`` result."""
    learner = result.participants[0]
    return EvalRow(
        timesteps=timesteps,
        train_seconds=round(train_seconds, 1),
        opponent=baseline,
        matches=result.num_games,
        win_rate=learner.win_rate,
        win_low=learner.win_low,
        win_high=learner.win_high,
        points_per_hand=learner.points_per_hand,
    )


def build_vec_env(config: TrainConfig) -> VecEnv:
    """``n_envs`` single-agent environments, each in its own process with ``vec_env: subproc``."""
    settings = {
        "num_players": config.num_players,
        "episode": config.episode,
        "reward": config.reward,
        "reward_scale": config.reward_scale,
        "features": config.features,
        "skip_forced": config.skip_forced,
        "opponents": dict(config.opponents),
        "seed": config.seed,
    }
    factories = [partial(make_worker_env, settings, index) for index in range(config.n_envs)]
    if config.vec_env == "subproc":
        venv: VecEnv = SubprocVecEnv(factories, start_method="fork")
    else:
        venv = DummyVecEnv(factories)
    return VecMonitor(venv)


def build_model(config: TrainConfig, venv: VecEnv, tensorboard_dir: str | None) -> MaskablePPO:
    ppo = config.ppo
    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[ppo.activation]
    return MaskablePPO(
        "MlpPolicy",
        venv,
        learning_rate=(
            ppo.learning_rate
            if ppo.lr_schedule == "constant"
            else LinearSchedule(ppo.learning_rate, 0.0, 1.0)
        ),
        n_steps=ppo.n_steps,
        batch_size=ppo.batch_size,
        n_epochs=ppo.n_epochs,
        gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda,
        clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef,
        vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm,
        policy_kwargs={
            "net_arch": {"pi": list(ppo.net_arch), "vf": list(ppo.net_arch)},
            "activation_fn": activation,
        },
        tensorboard_log=tensorboard_dir,
        seed=config.seed,
        device="cpu",
        verbose=0,
    )


class SelfPlayCallback(BaseCallback):
    """Keeps the workers' opponent pools current, checkpoints, and evaluates periodically.

    Args:
        config: the run's config.
        output_dir: where checkpoints, ``eval.csv`` and the run state go.
        snapshots: the snapshot pool to start from (restored on resume).
        train_seconds: training time already spent (restored on resume).
        eval_rows: evaluation history (restored on resume).
    """

    def __init__(
        self,
        config: TrainConfig,
        output_dir: Path,
        snapshots: list[NumpyPolicy],
        train_seconds: float,
        eval_rows: list[EvalRow],
    ) -> None:
        super().__init__()
        self.config = config
        self.output_dir = output_dir
        self.snapshots = snapshots
        self.train_seconds = train_seconds
        self.eval_rows = eval_rows
        self._clock = time.perf_counter()
        self._due: dict[str, int] = {}  # the next timestep at which each periodic task is due

    # The training clock stops while evaluating or saving, so that wall-time figures are training.
    def _pause_clock(self) -> None:
        self.train_seconds += time.perf_counter() - self._clock

    def _resume_clock(self) -> None:
        self._clock = time.perf_counter()

    def _on_training_start(self) -> None:
        periods = {
            "snapshot": self.config.snapshot_every,
            "checkpoint": self.config.checkpoint_every,
            "eval": self.config.eval.every,
        }
        self._due = {task: self._next_multiple(every) for task, every in periods.items() if every > 0}
        self._resume_clock()
        self.training_env.env_method("update_pool", self._actor(), list(self.snapshots))

    def _actor(self) -> NumpyPolicy:
        return NumpyPolicy.from_sb3(self.model.policy)

    def _next_multiple(self, every: int) -> int:
        return (self.num_timesteps // every + 1) * every

    def _is_due(self, task: str, every: int) -> bool:
        """Whether ``task`` is due now; if so, schedule its next time."""
        if task not in self._due or self.num_timesteps < self._due[task]:
            return False
        self._due[task] = self._next_multiple(every)
        return True

    def _on_rollout_end(self) -> None:
        actor = self._actor()
        snapshots = None
        if self._is_due("snapshot", self.config.snapshot_every):
            self.snapshots.append(actor)
            del self.snapshots[: -self.config.snapshot_pool]
            snapshots = list(self.snapshots)
        self.training_env.env_method("update_pool", actor, snapshots)

    def _on_step(self) -> bool:
        checkpoint_due = self._is_due("checkpoint", self.config.checkpoint_every)
        eval_due = self._is_due("eval", self.config.eval.every)
        if checkpoint_due or eval_due:
            self._pause_clock()
            if checkpoint_due:
                self.save_checkpoint(self.output_dir / "checkpoints" / f"step_{self.num_timesteps}.zip")
            if eval_due:
                self.run_eval()
            self._resume_clock()
        return True

    def _on_training_end(self) -> None:
        self._pause_clock()

    def save_checkpoint(self, path: Path) -> None:
        """The model zip, plus ``.pool.pkl`` (snapshots) and ``.state.json`` (clock, eval history)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.model.save(path)
        with open(path.with_suffix(".pool.pkl"), "wb") as handle:
            pickle.dump(self.snapshots, handle)
        state = {
            "train_seconds": self.train_seconds,
            "eval_rows": [dataclasses.asdict(row) for row in self.eval_rows],
        }
        path.with_suffix(".state.json").write_text(json.dumps(state, indent=1))

    def run_eval(self) -> None:
        """Evaluate the current policy against ``eval.opponents``; log and append to ``eval.csv``."""
        path = self.output_dir / "checkpoints" / "eval_latest.zip"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.model.save(path)
        for baseline, result in evaluate_checkpoint(
            path, self.config.eval, self.config.num_players, seed=self.config.seed + 1
        ):
            row = learner_row(result, baseline, self.num_timesteps, self.train_seconds)
            self.eval_rows.append(row)
            self.logger.record(f"eval/win_rate_vs_{baseline}", row.win_rate)
            self.logger.record(f"eval/win_low_vs_{baseline}", row.win_low)
            self.logger.record(f"eval/points_per_hand_vs_{baseline}", row.points_per_hand)
            self.logger.record("time/train_seconds", row.train_seconds)
            print(
                f"[eval] step {row.timesteps:>9,}  {row.train_seconds / 60:6.1f} min  vs {baseline:<13} "
                f"win {row.win_rate:6.1%} [{row.win_low:.1%}, {row.win_high:.1%}]  "
                f"points/hand {row.points_per_hand:+.2f}",
                flush=True,
            )
        write_eval_csv(self.output_dir / "eval.csv", self.eval_rows)
        self.logger.dump(self.num_timesteps)


def write_eval_csv(path: Path, rows: list[EvalRow]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[f.name for f in dataclasses.fields(EvalRow)])
        writer.writeheader()
        for row in rows:
            writer.writerow(dataclasses.asdict(row))


def first_reaching(rows: list[EvalRow], baseline: str, win_rate: float) -> EvalRow | None:
    """The first evaluation at which the learner's win rate against ``baseline`` reached ``win_rate``."""
    return next((row for row in rows if row.opponent == baseline and row.win_rate >= win_rate), None)


def train(config: TrainConfig, resume: str | Path | None = None) -> dict[str, Any]:
    """Run a whole training job as configured; return the summary written to ``summary.json``.

    Args:
        config: a validated config.
        resume: a checkpoint zip saved by an earlier run of the same config; training continues
            from its timestep count up to ``total_timesteps``.
    """
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    output_dir = Path(config.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=1))
    venv = build_vec_env(config)
    tensorboard_dir = str(output_dir / "tensorboard") if config.tensorboard else None
    snapshots: list[NumpyPolicy] = []
    train_seconds = 0.0
    eval_rows: list[EvalRow] = []
    if resume is not None:
        resume = Path(resume)
        model = MaskablePPO.load(str(resume), env=venv, device="cpu", tensorboard_log=tensorboard_dir)
        with open(resume.with_suffix(".pool.pkl"), "rb") as handle:
            snapshots = pickle.load(handle)
        state = json.loads(resume.with_suffix(".state.json").read_text())
        train_seconds = state["train_seconds"]
        eval_rows = [EvalRow(**row) for row in state["eval_rows"]]
    else:
        model = build_model(config, venv, tensorboard_dir)
    callback = SelfPlayCallback(config, output_dir, snapshots, train_seconds, eval_rows)
    remaining = config.total_timesteps - model.num_timesteps
    if remaining > 0:
        model.learn(
            total_timesteps=remaining,
            callback=callback,
            reset_num_timesteps=resume is None,
            progress_bar=config.progress_bar,
            tb_log_name="ppo",
        )
    venv.close()
    final_path = output_dir / "final.zip"
    callback.save_checkpoint(final_path)
    print(
        f"Training done: {model.num_timesteps:,} steps in {callback.train_seconds / 60:.1f} min -> {final_path}"
    )
    final_rows = []
    for baseline, result in evaluate_checkpoint(
        final_path, config.final_eval, config.num_players, seed=config.seed + 2, progress=config.progress_bar
    ):
        final_rows.append(learner_row(result, baseline, model.num_timesteps, callback.train_seconds))
    figure = output_dir / "learning_curve.png"
    if eval_rows:
        plot_learning_curve(
            eval_rows,
            figure,
            title=f"{config.num_players}-player self-play ({output_dir.name})",
            num_players=config.num_players,
        )
    reached = first_reaching(eval_rows, "heaviest", 0.75)
    summary = {
        "config": config.to_dict(),
        "timesteps": model.num_timesteps,
        "train_seconds": round(callback.train_seconds, 1),
        "final_eval": [dataclasses.asdict(row) for row in final_rows],
        "learning_curve": str(figure) if eval_rows else None,
        "seconds_to_75pct_vs_heaviest": None if reached is None else reached.train_seconds,
        "steps_to_75pct_vs_heaviest": None if reached is None else reached.timesteps,
    }
    (output_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary
