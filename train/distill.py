"""Distil the search agent into a policy network: one step of expert iteration.

A reactive network trained by self-play stops improving long before it plays like a search that
plays every candidate move out on hundreds of dealt worlds (the self-play policy wins 28% of
matches against ``ismcts``). This module trains a network to play like the search instead, in
two stages driven by one :class:`train.config.DistillConfig` (``draw-distill``):

1. **Collect** (:func:`collect`). Play whole matches with a *teacher* (:class:`agents.ismcts.ISMCTSAgent`
   at ``teacher_simulations``) in one seat and *partners* in the others (the teacher again or
   any agent spec, drawn per match by weight). At every decision with more than one legal
   action, the teacher searches from the acting seat's observation, and the observation, the
   action mask and the teacher's value of each legal root action are recorded. The teacher's
   seat plays its best action; a partner seat plays its own choice, so the data also covers
   positions the teacher would not steer into. Matches are written in shards under
   ``output_dir/data``; a rerun keeps the shards already written (same seeds, same shards), so
   an interrupted collection resumes.
2. **Fit** (:func:`fit`). Train the actor of a MaskablePPO policy (a fresh one of ``net_arch``, or
   the checkpoint ``init``) to match ``softmax(values / temperature)`` over the legal actions, by
   cross-entropy. Soft targets carry how much worse each alternative is, not only which move is
   best, and fitting them over many similar positions averages out the noise of a
   200-simulation search. The critic is not trained. The result is an ordinary MaskablePPO
   checkpoint: ``agents.make("ppo", path=...)`` plays it and SB3 loads it.

The teacher's values are zero-sum hand points divided by :data:`agents.ismcts.REWARD_SCALE`
(40 points), as the search backs them up, so ``temperature: 0.1`` means 4 points.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.ismcts import ISMCTSAgent
from agents.specs import parse_agent_spec, seed_sequence_int, takes_seed
from draw_env.draw_dominoes import raw_env
from draw_env.observation import OBSERVATION_SIZE, view_from_observation
from draw_env.rules import NUM_ACTIONS
from draw_env.features import encode_batch
from train.cli import evaluation_table
from train.config import TEACHER, DistillConfig, load_distill_config
from train.plots import plot_learning_curve


@dataclass
class Decisions:
    """Decisions recorded during collection, one row each.

    Attributes:
        observations: ``(N, 258)`` int16, the acting seat's raw observation vector.
        masks: ``(N, 58)`` bool, its legal actions (always more than one).
        values: ``(N, 58)`` float32, the teacher's value of each legal action (NaN elsewhere).
        seconds: wall-clock seconds one worker spent playing them, or ``None`` if unknown (shards
            written before this was recorded).
    """

    observations: np.ndarray
    masks: np.ndarray
    values: np.ndarray
    seconds: float | None = None

    def __len__(self) -> int:
        return len(self.observations)

    def save(self, path: Path) -> None:
        # Written under a temporary name first: an interrupted run never leaves a half shard.
        partial = path.with_suffix(".partial.npz")
        extra = {} if self.seconds is None else {"seconds": np.float64(self.seconds)}
        np.savez_compressed(
            partial, observations=self.observations, masks=self.masks, values=self.values, **extra
        )
        os.replace(partial, path)

    @classmethod
    def concatenate(cls, parts: Sequence[Decisions]) -> Decisions:
        """The rows of ``parts`` in order; the seconds add up (unknown if any part's are)."""
        seconds = [part.seconds for part in parts]
        return cls(
            *(
                np.concatenate([getattr(part, key) for part in parts])
                for key in ("observations", "masks", "values")
            ),
            seconds=None if None in seconds else sum(seconds),
        )

    @classmethod
    def load(cls, paths: Sequence[Path]) -> Decisions:
        shards = [np.load(path) for path in paths]
        return cls.concatenate(
            [
                cls(
                    shard["observations"],
                    shard["masks"],
                    shard["values"],
                    float(shard["seconds"]) if "seconds" in shard else None,
                )
                for shard in shards
            ]
        )


def _partner_spec(config: DistillConfig, rng: random.Random) -> str:
    specs = list(config.partners)
    return rng.choices(specs, weights=[config.partners[spec] for spec in specs])[0]


def _make_partner(spec: str, config: DistillConfig, seed: int) -> agents.Agent:
    if spec == TEACHER:
        return ISMCTSAgent(simulations=config.teacher_simulations, seed=seed)
    name, kwargs = parse_agent_spec(spec)
    return agents.make(name, seed=seed, **kwargs) if takes_seed(name) else agents.make(name, **kwargs)


def play_match(config: DistillConfig, match: int) -> Decisions:
    """Play match number ``match`` of the collection and record every labelled decision.

    Everything random comes from seeds derived from ``(config.seed, match)``.
    """
    started = time.perf_counter()
    rng = random.Random(seed_sequence_int(config.seed, match))
    num_players = config.num_players
    teacher = ISMCTSAgent(simulations=config.teacher_simulations, seed=rng.getrandbits(63))
    teacher_seat = rng.randrange(num_players)
    partner_spec = _partner_spec(config, rng)
    env = raw_env(num_players=num_players, episode="match", reward="points")
    teacher_name = env.possible_agents[teacher_seat]
    partners = {
        name: _make_partner(partner_spec, config, rng.getrandbits(63))
        for name in env.possible_agents
        if name != teacher_name
    }
    env.reset(seed=rng.getrandbits(63))
    observations, masks, values = [], [], []
    while not all(env.terminations.values()):
        agent_name = env.agent_selection
        observation = env.observe(agent_name)
        mask = observation["action_mask"].astype(bool)
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            env.step(int(legal[0]))
            continue
        vector = observation["observation"]
        action_values = np.full(NUM_ACTIONS, np.nan, np.float32)
        for action, value in teacher.action_values(view_from_observation(vector, num_players)).items():
            action_values[action] = value
        observations.append(vector.astype(np.int16))
        masks.append(mask)
        values.append(action_values)
        if agent_name == teacher_name:
            # The teacher's own choice, as ISMCTSAgent.act makes it: best mean, ties to the lowest id.
            action = int(legal[np.argmax(action_values[legal])])
        else:
            action = partners[agent_name].act(observation)
        env.step(action)
    return Decisions(
        np.array(observations, np.int16).reshape(-1, OBSERVATION_SIZE),
        np.array(masks, bool).reshape(-1, NUM_ACTIONS),
        np.array(values, np.float32).reshape(-1, NUM_ACTIONS),
        seconds=time.perf_counter() - started,
    )


def _collect_shard(task: tuple[DistillConfig, int, str]) -> int:
    """Play one shard's matches and write them; the number of decisions recorded."""
    config, shard, path = task
    first = shard * config.shard_matches
    last = min(first + config.shard_matches, config.matches)
    played = [play_match(config, match) for match in range(first, last)]
    decisions = Decisions.concatenate(played)
    decisions.save(Path(path))
    return len(decisions)


def shard_paths(config: DistillConfig, matches: int | None = None) -> list[Path]:
    """Where the collection's shards go, in match order (those holding the first ``matches``)."""
    count = -(-(config.matches if matches is None else matches) // config.shard_matches)
    data = Path(config.output_dir) / "data"
    return [data / f"shard_{shard:05d}.npz" for shard in range(count)]


def collect(config: DistillConfig) -> Decisions:
    """Play ``config.matches`` matches (shards already on disk are kept) and return every decision."""
    from tqdm import tqdm

    paths = shard_paths(config)
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    todo = [(config, shard, str(path)) for shard, path in enumerate(paths) if not path.exists()]
    started = time.perf_counter()
    if todo:
        progress = tqdm(
            total=len(todo) * config.shard_matches,
            desc="collect",
            unit="match",
            disable=not config.progress_bar,
        )
        recorded = 0
        # With one worker the matches are played in this process (no pool to start, easier to debug).
        with (
            get_context("fork").Pool(config.workers)
            if config.workers > 1
            else contextlib.nullcontext() as pool
        ):
            counts = map(_collect_shard, todo) if pool is None else pool.imap_unordered(_collect_shard, todo)
            for count in counts:
                recorded += count
                progress.update(config.shard_matches)
                progress.set_postfix(decisions=recorded)
        progress.close()
        print(f"Collected {recorded:,} decisions in {(time.perf_counter() - started) / 60:.1f} min")
    return Decisions.load(paths)


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


def build_student(config: DistillConfig) -> Any:
    """The ``sb3_contrib.MaskablePPO`` model to train: ``config.init`` loaded, or a fresh one.

    A fresh model has ``config.net_arch`` hidden layers (ReLU) for both the actor and the critic,
    over ``config.features`` inputs. Distillation trains the actor only, so a fresh critic stays
    untrained.
    """
    import torch
    from sb3_contrib import MaskablePPO

    from draw_env.single_agent import DrawSingleAgentEnv

    if config.init is not None:
        return MaskablePPO.load(config.init, device="cpu")
    spaces_only = DrawSingleAgentEnv(
        num_players=config.num_players, episode="match", features=config.features
    )
    return MaskablePPO(
        "MlpPolicy",
        spaces_only,
        policy_kwargs={
            "net_arch": {"pi": list(config.net_arch), "vf": list(config.net_arch)},
            "activation_fn": torch.nn.ReLU,
        },
        seed=config.seed,
        device="cpu",
    )


def fit(config: DistillConfig, decisions: Decisions) -> tuple[Any, list[FitReport]]:
    """Train the student's actor on the teacher's values; return the model and the reports.

    The model is the ``sb3_contrib.MaskablePPO`` of :func:`build_student`, its policy updated in place.
    """
    import torch

    from agents.ismcts import REWARD_SCALE
    from agents.ppo import NumpyPolicy

    torch.set_num_threads(max(1, config.workers))
    torch.manual_seed(config.seed)
    model = build_student(config)
    policy = model.policy
    features = NumpyPolicy.from_sb3(policy).features
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
    parameters = list(policy.mlp_extractor.policy_net.parameters()) + list(policy.action_net.parameters())
    optimizer = torch.optim.Adam(parameters, lr=config.learning_rate)
    steps = config.epochs * -(-len(training) // config.batch_size)
    schedule = torch.optim.lr_scheduler.LinearLR(optimizer, 1.0, 0.0, total_iters=steps)

    def log_probabilities(rows: torch.Tensor) -> torch.Tensor:
        latent = policy.mlp_extractor.forward_actor(inputs[rows])
        logits = policy.action_net(latent).masked_fill(~masks[rows], -1e9)
        return torch.log_softmax(logits, dim=1)

    def loss_of(rows: torch.Tensor) -> torch.Tensor:
        return -(targets[rows] * log_probabilities(rows)).sum(dim=1).mean()

    reports = []
    generator = torch.Generator().manual_seed(config.seed)
    for epoch in range(1, config.epochs + 1):
        policy.train()
        shuffled = training[torch.randperm(len(training), generator=generator)]
        total, batches = 0.0, 0
        for start in range(0, len(shuffled), config.batch_size):
            loss = loss_of(shuffled[start : start + config.batch_size])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            total += float(loss.detach())
            batches += 1
        policy.eval()
        with torch.no_grad():
            chosen = log_probabilities(validation).argmax(dim=1)
            legal_values = values[validation].masked_fill(~masks[validation], -torch.inf)
            best, teacher_best = legal_values.max(dim=1)
            regret = (best - values[validation].gather(1, chosen[:, None])[:, 0]) * REWARD_SCALE
            report = FitReport(
                epoch=epoch,
                train_loss=total / max(batches, 1),
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
    return model, reports


STAGES = ("collect", "fit", "evaluate", "curve")


def distill(config: DistillConfig, stages: Sequence[str] = STAGES) -> dict[str, Any]:
    """Run the given stages; write ``final.zip``, ``summary.json`` and ``learning_curve.png``.

    Stages: ``collect`` (play the matches not on disk yet), ``fit`` (train on every collected
    decision, save ``final.zip``), ``evaluate`` (``final_eval`` against the baselines),
    ``curve`` (fit again on the first ``curve`` match counts and evaluate each fit and
    ``final.zip`` with ``eval``: the learning curve against the data collected).
    """
    from train.selfplay import evaluate_checkpoint, learner_row

    output_dir = Path(config.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=1))
    final_path = output_dir / "final.zip"
    summary_path = output_dir / "summary.json"
    summary: dict[str, Any] = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    summary["config"] = config.to_dict()
    if "collect" in stages or "fit" in stages:
        decisions = collect(config)
        summary["decisions"] = len(decisions)
        summary["collect_worker_seconds"] = decisions.seconds
    if "fit" in stages:
        started = time.perf_counter()
        model, reports = fit(config, decisions)
        model.save(final_path)
        summary["fit_seconds"] = round(time.perf_counter() - started, 1)
        summary["fit"] = [dataclasses.asdict(report) for report in reports]
        print(f"Fitted policy -> {final_path}")
    if "evaluate" in stages:
        rows = [
            learner_row(result, baseline, summary.get("decisions", 0), 0.0)
            for baseline, result in evaluate_checkpoint(
                final_path,
                config.final_eval,
                config.num_players,
                seed=config.seed + 2,
                progress=config.progress_bar,
            )
        ]
        summary["final_eval"] = [dataclasses.asdict(row) for row in rows]
    if "curve" in stages and config.curve:
        rows = learning_curve(config, final_path)
        summary["learning_curve"] = [dataclasses.asdict(row) for row in rows]
        figure = output_dir / "learning_curve.png"
        plot_learning_curve(
            rows,
            figure,
            title=f"{config.num_players}-player distillation of ismcts ({config.teacher_simulations} simulations)",
            num_players=config.num_players,
            x_axes=(("timesteps", "decisions searched by the teacher"),),
        )
        summary["learning_curve_png"] = str(figure)
    summary_path.write_text(json.dumps(summary, indent=1))
    return summary


def learning_curve(config: DistillConfig, final_path: Path) -> list[Any]:
    """Win rates (``train.selfplay.EvalRow``) after fitting on the first ``config.curve`` matches.

    Each fit starts afresh with the config's settings; the last point is ``final_path``, fitted
    on every match. ``timesteps`` holds the decisions fitted on.
    """
    from train.selfplay import evaluate_checkpoint, learner_row

    curve_dir = Path(config.output_dir) / "curve"
    curve_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for matches in [*config.curve, config.matches]:
        decisions = Decisions.load(shard_paths(config, matches))
        checkpoint = final_path
        if matches < config.matches:
            checkpoint = curve_dir / f"matches_{matches}.zip"
            model, _ = fit(config, decisions)
            model.save(checkpoint)
        for baseline, result in evaluate_checkpoint(
            checkpoint, config.eval, config.num_players, seed=config.seed + 1, progress=config.progress_bar
        ):
            row = learner_row(result, baseline, len(decisions), decisions.seconds or 0.0)
            rows.append(row)
            print(
                f"[curve] {matches:>5} matches ({len(decisions):,} decisions) vs {baseline:<9} "
                f"win {row.win_rate:6.1%} [{row.win_low:.1%}, {row.win_high:.1%}]",
                flush=True,
            )
    return rows


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-distill",
        description="Distil the ismcts search agent into a MaskablePPO policy (collect, fit, evaluate, curve).",
        epilog="Every config key is described in docs/training.md.",
    )
    parser.add_argument(
        "--config", help="a YAML config, e.g. configs/distill_2p.yaml (default: built-in defaults)"
    )
    parser.add_argument(
        "--stage",
        action="append",
        choices=STAGES,
        help="run only this stage (repeatable; default: all four). 'fit' and 'curve' read the collected shards.",
    )
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="config overrides; dotted keys reach sections (matches=100, final_eval.matches=200)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = load_distill_config(args.config, args.overrides)
    except (ValueError, FileNotFoundError) as error:
        parser.error(str(error))
    stages = tuple(stage for stage in STAGES if args.stage is None or stage in args.stage)
    summary = distill(config, stages)
    if "final_eval" in summary and "evaluate" in stages:
        print(
            evaluation_table(
                summary["final_eval"],
                config.num_players,
                title=f"{config.num_players}-player distilled policy: match win rate, duplicate format",
            )
        )
    print(f"Summary: {config.output_dir}/summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
