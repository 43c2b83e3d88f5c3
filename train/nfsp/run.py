"""A ``draw-train`` run of NFSP (:func:`run_nfsp`) and its entry (:func:`nfsp_main`).

The run checks its output directory first (:class:`train.run_dir.RunDir`), trains with the
benchmark's learner (:func:`train.bench.openspiel_algorithms.train`: OpenSpiel's NFSP, one
average network and one Q-network shared by every seat) for ``env_steps`` decisions, measures the
average network's exact exploitability every ``exploitability_every`` decisions and evaluates it
every ``eval.every`` (each one exported to ``checkpoints/steps_N.npz``), exports the final
average network as the policy file ``final.npz`` (+ ``final.json``), evaluates it
(``final_eval``) and writes ``summary.json``. Every evaluation plays the network as it was
trained and is measured: sampling its softmax (``deterministic=false``).

A run does not continue: OpenSpiel's NFSP keeps its buffers, optimisers, exploration schedule
and random generators in memory, so a run cut short cannot go on where it stopped. A rerun of a
finished run prints its results; an unfinished one is refused in one line and is started again
with ``--overwrite``. The keys and files: ``docs/training_nfsp.md``.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from pydantic import Field

from agents.policy_file import describe_variant
from arena.learner import EvalRow, evaluate_learner, evaluation_table, write_rows_csv
from train.config import ConfigError
from train.meter import Budget
from train.nfsp.config import NfspConfig
from train.provenance import source
from train.run_dir import RunSummary, row_schema, seconds
from train.runs import open_run_dir

#: Why a run does not continue, as the refusal of an unfinished one says it.
NO_RESUME = "OpenSpiel's NFSP keeps its buffers, optimisers and random state in memory: a run does not continue"
#: What every policy file of a run records as its maker.
TRAINED_BY = "draw-train (pipeline: nfsp)"


class NfspSummary(RunSummary):
    """``summary.json`` of a finished run."""

    env_steps: int = Field(ge=0)
    train_cpu_seconds: float = seconds()
    final_eval: list[row_schema(EvalRow)]  # type: ignore[valid-type]
    policy: str

    def progress(self) -> str:
        return f"{self.env_steps:,} environment steps"


def sampled(policy: Path) -> tuple[str, dict[str, Any]]:
    """The agent spec that plays the policy file ``policy`` as NFSP's average policy: sampling."""
    return ("network", {"path": str(policy), "deterministic": False})


def _evaluate(config: NfspConfig, policy: Path, final: bool, env_steps: int, cpu_seconds: float) -> list[EvalRow]:
    settings = config.final_eval if final else config.eval
    return evaluate_learner(
        sampled(policy),
        settings.opponents,
        config.num_players,
        settings.matches,
        timesteps=env_steps,
        train_seconds=cpu_seconds,
        seed=config.seed + (2 if final else 1),
        episode=config.episode,
        max_pip=config.max_pip, hand_size=config.hand_size, protected=config.protected,
        duplicate=settings.duplicate,
        workers=settings.workers,
        progress=final and config.progress_bar,
    )


def _learner() -> tuple[Any, Any, Any]:
    """The benchmark's OpenSpiel learner (``train``, ``SpielConfig``) and NFSP's policy class,
    imported now (torch, OpenSpiel), or a config error saying what to install."""
    try:
        from train.bench.openspiel_algorithms import SpielConfig, train
        from train.bench.openspiel_policies import NfspPolicy
    except ImportError as error:
        raise ConfigError(
            f"pipeline: nfsp needs OpenSpiel and PyTorch (pip install 'draw-dominoes[train,openspiel]'): {error}"
        ) from None
    return train, SpielConfig, NfspPolicy


def checkpoint_points(config: NfspConfig) -> int:
    """How many checkpoints the learner calls, evenly over ``env_steps``: one a grain of the
    smallest step between measures and evaluations (they fall at the first checkpoint that
    reaches each multiple), else one, at the end."""
    periods = [period for period in (config.exploitability_every, int(config.eval.every)) if period]
    if not periods:
        return 1
    return max(1, math.ceil(config.env_steps / math.gcd(*periods)))


def run_nfsp(config: NfspConfig, overwrite: bool = False) -> dict[str, Any]:
    """Train, export and evaluate as ``config`` says; return the summary written to ``summary.json``.

    Raises:
        ConfigError: before anything is written: an ``output_dir`` holding another run or an
            unfinished one (without ``overwrite``), or an exact measure on a tree too large.
    """
    run_dir = open_run_dir(config, "nfsp", overwrite=overwrite)
    summary = run_dir.finished(NfspSummary, "summary.json", NO_RESUME)
    if summary is not None:
        return summary
    output_dir = run_dir.path
    game = config.game()
    title = f"NFSP ({describe_variant(game)}): exact exploitability while training"
    curve = None
    if config.exploitability_every:
        from train.exploitability_curve import ExploitabilityCurve

        curve = ExploitabilityCurve(game, "observation", config.exploitability_every, output_dir, title)
    train, SpielConfig, NfspPolicy = _learner()
    from train.bench.protocol import BenchGame

    run_dir.start()
    rows: list[EvalRow] = []
    every = int(config.eval.every)
    next_eval = every

    def measure(steps: int, policy: Any) -> None:
        assert curve is not None
        point = curve.measure(policy.network.weights, steps)
        if config.progress_bar:
            print(f"[exploitability] env steps {steps:>11,}  {point.exploitability:.4f} points per hand "
                  f"({point.measure_cpu_seconds:.1f} CPU-s to measure)", flush=True)

    def checkpoint(steps: int, cpu_seconds: float, policy: Any) -> None:
        nonlocal next_eval
        # The end of training is measured once, though the learner may call its last points
        # there together (with the final policy).
        if curve is not None and (not curve.points or curve.points[-1].steps != steps):
            if curve.due(steps) or steps >= config.env_steps:
                measure(steps, policy)
        if every and steps >= next_eval:
            while next_eval <= steps:
                next_eval += every
            path = policy.network.save(output_dir / "checkpoints" / f"steps_{steps:09d}.npz")
            rows.extend(_evaluate(config, path, False, steps, cpu_seconds))
            write_rows_csv(output_dir / "eval.csv", rows)
            for row in rows[-len(config.eval.opponents):]:
                print(f"[eval] env steps {steps:>11,}  vs {row.opponent:<12} win {row.win_rate:6.1%} "
                      f"[{row.win_low:.1%}, {row.win_high:.1%}]", flush=True)

    bench_game = BenchGame(config.variant or "nfsp", config.num_players, **game.variant, episode=config.episode)
    learner = SpielConfig("nfsp", bench_game, config.seed, config.nfsp_settings())
    policy = train(learner, Budget(env_steps=config.env_steps), checkpoint, points=checkpoint_points(config),
                   provenance={"trained_by": TRAINED_BY, "source": source(), "config": config.to_dict()})
    assert isinstance(policy, NfspPolicy)  # NFSP's learner returns its average network
    env_steps, cpu_seconds = int(policy.about["env_steps"]), float(policy.about["cpu_seconds"])
    final = policy.network.save(output_dir / "final.npz")
    final_rows = _evaluate(config, final, True, env_steps, cpu_seconds)
    summary = {
        "config": config.to_dict(),
        "env_steps": env_steps,
        "train_cpu_seconds": cpu_seconds,
        "final_eval": [dataclasses.asdict(row) for row in final_rows],
        "eval": [dataclasses.asdict(row) for row in rows],
        "policy": str(final),
        "agent": f"network:path={final},deterministic=false",
    }
    if curve is not None:
        summary["exploitability"] = curve.summary()
    run_dir.write_json("summary.json", summary)
    return summary


def nfsp_main(config: NfspConfig, args: Any) -> int:
    """``draw-train`` for a config with ``pipeline: nfsp`` (``args`` from :func:`train.cli.build_parser`).

    Raises:
        ConfigError: an ``output_dir`` holding another run or an unfinished one.
    """
    try:
        summary = run_nfsp(config, overwrite=args.overwrite)
    except KeyboardInterrupt:
        print("\nInterrupted: the run is not finished; rerun the command with --overwrite to start it again.")
        return 130
    title = (
        f"{config.num_players}-player NFSP after {summary['env_steps']:,} environment steps "
        f"({summary['train_cpu_seconds']:.1f} CPU-s of training): {config.episode} win rate, duplicate format"
    )
    print(evaluation_table(summary["final_eval"], config.num_players, title=title))
    print(f"Summary: {config.output_dir}/summary.json")
    print(f"policy written to {summary['policy']} (play it as network:path={summary['policy']},deterministic=false)")
    return 0
