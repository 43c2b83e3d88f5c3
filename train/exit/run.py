"""Expert iteration's pipeline (:func:`run_exit`: its run folder around the learner's loop, :func:`train.exit.learner.learn`) and its ``draw-train`` entry (:func:`exit_main`); see :mod:`train.exit`."""

from __future__ import annotations

import dataclasses
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from agents.base import SEARCH_VALUE_UNIT
from agents.policy_file import load_policy_file, save_policy_file
from arena.learner import EvalRow, evaluate_learner, evaluation_table, write_rows_csv
from draw_env.io.files import atomic_path, write_json_atomic
from train.exit.collect import ExitData, collect, shard_runner
from train.exit.config import ExitConfig
from train.exit.fit import FitReport, initial_weights
from train.exit.learner import learn
from train.provenance import source
from train.run_dir import RunDir, RunFile, read_run_file, row_schema, seconds
from train.runs import RUNS, open_run_dir

if TYPE_CHECKING:
    from agents.policy_file import PolicyWeights
    from train.network import PolicyValueNetwork

#: Settings of the guided search only: they may differ while no guided iteration has run.
GUIDED_KEYS = ("guide", "simulations", "prior_visits", "value_weight", "prior_weight")


@dataclass
class ExitRow(EvalRow):
    """An :class:`EvalRow` of one iteration (``timesteps``: decisions collected so far)."""

    iteration: int = 0


class ExitState(RunFile):
    """``state.json``: the iterations completed, their training seconds and decisions collected."""

    completed: int = Field(ge=0)
    seconds: float = seconds()
    decisions: int = Field(ge=0)


def read_state(output_dir: Path) -> ExitState:
    return read_run_file(output_dir / "state.json", ExitState)


def read_rows_of(config: ExitConfig, completed: int) -> list[ExitRow]:
    """The evaluation rows of iterations ``1..completed`` (each ``eval.json``), checked."""
    schema = list[row_schema(ExitRow)]  # type: ignore[misc]
    return [
        ExitRow(**row.model_dump())
        for iteration in range(1, completed + 1)
        for row in read_run_file(iteration_dir(config, iteration) / "eval.json", schema)
    ]


def open_run(config: ExitConfig, overwrite: bool) -> tuple[RunDir, int]:
    """The run directory (:class:`train.run_dir.RunDir`) and the iterations already completed in it.

    Raises:
        ConfigError: see :class:`~train.run_dir.RunDir`: settings outside the pipeline's free keys
            (:data:`train.runs.RUNS`) that differ from the saved run's are refused (unless
            ``overwrite``); the :data:`GUIDED_KEYS`
            may differ while the next iteration to run is still unguided. Every file a continued
            run reads is checked here, before it writes.
    """
    run = open_run_dir(config, "exit", overwrite=overwrite, free=RUNS["exit"].free_keys + GUIDED_KEYS)
    if not run.resuming:
        return run, 0
    completed = read_state(run.path).completed
    read_rows_of(config, completed)
    # Guided settings made nothing yet if no completed iteration was guided and the next one's
    # data (kept from an interruption) was not collected by a guided search.
    guided_ran = completed >= config.guided_from or (
        completed + 1 >= config.guided_from and (iteration_dir(config, completed + 1) / "data.npz").exists()
    )
    if guided_ran:
        run.check_keys(GUIDED_KEYS)
    return run, completed


def _evaluate(config: ExitConfig, policy: Path, previous: Path, iteration: int,
              decisions: int, seconds: float) -> list[ExitRow]:
    settings = config.eval
    opponents: dict[str, Any] = {spec: spec for spec in settings.opponents}
    if settings.previous:  # iteration 1's previous is iteration 0: the init
        opponents["previous"] = ("network", {"path": str(previous)})
    rows = evaluate_learner(
        ("network", {"path": str(policy)}),
        opponents,
        config.num_players,
        settings.matches,
        timesteps=decisions,
        train_seconds=seconds,
        seed=config.seed + 1,  # the same deals every iteration: paired comparisons
        episode=config.episode,  # the variant and episode the network was trained on
        max_pip=config.max_pip,
        hand_size=config.hand_size,
        protected=config.protected,
        duplicate=settings.duplicate,
        workers=settings.workers,
        progress=config.progress_bar,
    )
    return [ExitRow(**dataclasses.asdict(row), iteration=iteration) for row in rows]


def _variant_title(config: ExitConfig) -> str:
    """`` (max_pip=3, hand_size=3, protected=3, hands)`` for a variant or hand episodes, else empty."""
    from agents.policy_file import describe_variant

    game = config.game()
    parts = ([] if game.is_default else [describe_variant(game)]) + (["hands"] if config.episode == "hand" else [])
    return f" ({', '.join(parts)})" if parts else ""


def iteration_dir(config: ExitConfig, iteration: int) -> Path:
    return Path(config.output_dir) / f"iter_{iteration:03d}"


def _log(config: ExitConfig, rows: list[ExitRow], report: FitReport | None, iteration: int) -> None:
    """``eval.csv``, ``strength.png`` and TensorBoard scalars after ``iteration``."""
    from train.plots import plot_learning_curve

    output_dir = Path(config.output_dir)
    write_rows_csv(output_dir / "eval.csv", rows, ExitRow)
    with atomic_path(output_dir / "strength.png") as temporary:  # keeps .png, which savefig reads
        plot_learning_curve(
            rows,
            temporary,
            title=f"{config.num_players}-player expert iteration{_variant_title(config)}: the network alone",
            num_players=config.num_players,
            x_axes=(("iteration", "iteration"), ("train_seconds", "training minutes (evaluation excluded)")),
        )
    if config.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        with SummaryWriter(str(output_dir / "tensorboard")) as writer:
            for row in rows:
                if row.iteration == iteration:
                    writer.add_scalar(f"win_rate/{row.opponent}", row.win_rate, iteration)
            if report is not None:
                for key, value in dataclasses.asdict(report).items():
                    writer.add_scalar(f"fit/{key}", value, iteration)


def run_exit(config: ExitConfig, overwrite: bool = False, address: str | None = None) -> dict[str, Any]:
    """Run (or continue) the loop to ``config.iterations``; return the summary (also ``summary.json``).

    ``address``: collect on the actors of the Ray cluster there (``ray.init(address=...)``) instead
    of ``workers`` local processes; nothing else changes (the same shards, the same results).

    Raises:
        ConfigError: before anything is written, for an ``output_dir`` holding another run (see
            :func:`open_run`), an ``init`` that is not a policy of this player count, or an
            ``address`` where no Ray head answers (:func:`train.cluster.check_address`).
    """
    from threadpoolctl import threadpool_limits

    if address is not None:
        from train.cluster import check_address

        check_address(address)
    run, completed = open_run(config, overwrite)
    output_dir = run.path
    threadpool_limits(1, user_api="blas")
    import torch

    # One torch thread from the start: a fresh network's orthogonal initialisation (a QR
    # factorisation) rounds differently on one thread and on two, and seeded runs must repeat.
    torch.set_num_threads(1)
    weights = initial_weights(config) if completed == 0 else None  # a bad init: still nothing written
    run.start()
    if weights is not None:
        save_policy_file(dataclasses.replace(weights, provenance={"iteration": 0, "init": config.init}),
                         iteration_dir(config, 0) / "policy.npz")
        run.write_json("state.json", {"completed": 0, "seconds": 0.0, "decisions": 0})
    if completed >= config.iterations:
        print(run.complete(f"{completed} iteration{'s' * (completed != 1)}"))
    elif run.resuming:
        print(f"Resuming {run} after iteration {completed}: {config.iterations - completed} to go", flush=True)
    state = read_state(output_dir).model_dump()
    rows = read_rows_of(config, completed)
    started = time.perf_counter()

    def gather(iteration: int, weights: PolicyWeights) -> ExitData:
        """The iteration's data: collected before an interruption (the same shards again), else collected and kept."""
        nonlocal started
        started = time.perf_counter()
        folder = iteration_dir(config, iteration)
        folder.mkdir(parents=True, exist_ok=True)
        data_path = folder / "data.npz"
        if data_path.exists():
            return ExitData.load(data_path)
        data = collect(config, weights, iteration, runner)
        data.save(data_path)
        return data

    def after(iteration: int, data: ExitData, network: PolicyValueNetwork, report: FitReport, decisions: int) -> None:
        """The iteration's policy, evaluation, logs and state in the run folder."""
        nonlocal state
        folder = iteration_dir(config, iteration)
        previous = iteration_dir(config, iteration - 1) / "policy.npz"
        seconds = state["seconds"] + time.perf_counter() - started
        policy_path = network.save(
            folder / "policy.npz",
            config.num_players,
            # The value network learns the hand's outcome in the searches' unit (train.exit.collect).
            value_unit=SEARCH_VALUE_UNIT,
            provenance={
                "trained_by": "draw-train (pipeline: exit)",
                "source": source(),
                "iteration": iteration,
                "config": config.to_dict(),
                "decisions": decisions,
                "train_seconds": round(seconds, 1),
                "fit": dataclasses.asdict(report),
            },
        )
        print(
            f"[iteration {iteration}] {len(data):,} decisions ({data.seconds / 60:.1f} worker-min), "
            f"policy loss {report.policy_loss:.4f}, value loss {report.value_loss:.4f}, "
            f"agreement {report.agreement:.1%}",
            flush=True,
        )
        new_rows = _evaluate(config, policy_path, previous, iteration, decisions, seconds)
        games = "matches" if config.episode == "match" else "hands"
        for row in new_rows:
            print(f"[iteration {iteration}] vs {row.opponent:<12} win {row.win_rate:6.1%} "
                  f"[{row.win_low:.1%}, {row.win_high:.1%}] ({row.matches} {games})", flush=True)
        write_json_atomic(folder / "eval.json", [dataclasses.asdict(row) for row in new_rows], indent=1)
        rows.extend(new_rows)
        _log(config, rows, report, iteration)
        state = {"completed": iteration, "seconds": round(seconds, 3), "decisions": decisions}
        run.write_json("state.json", state)

    # The learner's loop (train.exit.learner) from the last completed iteration's policy and data
    # (a finished run reads none of them).
    iterations = range(completed + 1, config.iterations + 1)
    window = [ExitData.load(iteration_dir(config, k) / "data.npz")
              for k in range(max(1, completed - config.window + 2), completed + 1)] if iterations else []
    with shard_runner(config.workers, address) as runner:
        if iterations:
            learn(config, runner, load_policy_file(iteration_dir(config, completed) / "policy.npz"),
                  iterations=iterations, window=window, decisions=state["decisions"], gather=gather, on_iteration=after)
    final = iteration_dir(config, config.iterations) / "policy.npz"
    for suffix in (".npz", ".json"):
        with atomic_path(output_dir / f"final{suffix}") as temporary:
            shutil.copyfile(final.with_suffix(suffix), temporary)
    summary = {
        "config": config.to_dict(),
        "iterations": config.iterations,
        "decisions": state["decisions"],
        "train_seconds": state["seconds"],
        "final_eval": [dataclasses.asdict(row) for row in rows if row.iteration == config.iterations],
        "eval": [dataclasses.asdict(row) for row in rows],
        "policy": str(output_dir / "final.npz"),
    }
    run.write_json("summary.json", summary)
    return summary


def exit_main(config: ExitConfig, args: Any) -> int:
    """``draw-train`` for a config with ``pipeline: exit`` (``args`` from :func:`train.cli.build_parser`).

    Prints the last iteration's results table and ends with ``policy written to PATH``.

    Raises:
        ConfigError: an ``output_dir`` holding another run.
    """
    try:
        summary = run_exit(config, overwrite=args.overwrite, address=args.address)
    except KeyboardInterrupt:
        print("\nInterrupted: the iterations completed stay in output_dir; rerun the command to continue.")
        return 130
    print(
        evaluation_table(
            summary["final_eval"],
            config.num_players,
            title=(
                f"{config.num_players}-player expert iteration{_variant_title(config)}, iteration {config.iterations} "
                f"({summary['train_seconds'] / 60:.1f} training min): {config.episode} win rate, duplicate format"
            ),
        )
    )
    print(f"Summary: {config.output_dir}/summary.json; curve: {config.output_dir}/strength.png")
    print(f"policy written to {summary['policy']}")
    return 0
