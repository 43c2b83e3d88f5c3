"""Expert iteration: ``draw-train --config configs/exit_2p.yaml`` (a config with ``pipeline: exit``).

Distillation (:mod:`train.distill`) fits a network to a fixed teacher once. Expert iteration
(Anthony et al., 2017; AlphaZero's loop) repeats, driven by one :class:`train.config.ExitConfig`:

1. **collect** (:func:`collect`): the compiled search guided by the current network
   (:func:`agents.network_search.network_evaluator`: its policy as the prior, its value mixed
   with the rollouts at the leaves once it has one; before iteration ``guided_from``, the plain
   compiled search at ``plain_simulations``, which needs no network and is far cheaper per
   simulation) plays ``matches`` self-play matches, many in
   lockstep (``lockstep`` games per shard, their searches batched into one network call per
   simulation round). Every decision with more than one legal action records the observation,
   the mask, the search's value of each root action and, once the hand ends, the acting seat's
   zero-sum hand points / 40 (the outcome, the unit of the search's values). Shards run on
   ``workers`` local processes, or with ``address`` on the actors of an existing Ray cluster.
2. **fit** (:func:`fit`): starting from the current network (a
   :class:`train.network.PolicyValueNetwork`), the policy network learns
   ``softmax(values / temperature)`` over the legal actions (cross-entropy) and the value network
   the outcome (mean squared error), on the last ``window`` iterations' data.
3. **evaluate**: the new policy alone, duplicate matches against ``eval.opponents`` and the
   previous iteration (Wilson intervals), logged to ``eval.csv``, TensorBoard and
   ``strength.png``.

Each iteration ``k`` lives in ``output_dir/iter_{k:03d}/`` (``data.npz``, ``policy.npz`` +
``policy.json``, ``eval.json``), every file written under a temporary name and renamed;
``state.json`` records the iterations completed and is written last. Rerunning the same command
continues after the last completed iteration (a larger ``iterations`` extends the run); other
settings that change the results are refused unless ``--overwrite``. Everything random derives
from ``seed`` and the iteration and shard numbers, and the fit runs on one thread, so a seeded
run repeats exactly, interrupted or not.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from agents.ismcts_compiled import REWARD_SCALE, CompiledISMCTSAgent
from agents.network_search import network_evaluator, root_guided_values
from agents.policy_file import PolicyWeights, load_policy_file, save_policy_file
from agents.policy_network import NumpyPolicy
from arena.parallel import process_map
from arena.specs import seed_sequence_int
from draw_env.features import encode_batch
from draw_env.files import atomic_path, write_json_atomic
from draw_env.observation import OBSERVATION_SIZE
from draw_env.rules import NUM_ACTIONS
from train.config import ConfigError, ExitConfig
from train.evaluation import EvalRow
from train.run_dir import RunDir, RunFile, read_rows, read_run_file, row_schema, seconds

if TYPE_CHECKING:  # torch is imported by the fit
    from train.network import PolicyValueNetwork

#: Settings that do not change what a run computes: they may differ when a run is continued.
FREE_KEYS = ("iterations", "workers", "progress_bar", "tensorboard", "eval", "output_dir")
#: Settings of the guided search only: they may differ while no guided iteration has run.
GUIDED_KEYS = ("guide", "simulations", "prior_visits", "value_weight", "prior_weight")


@dataclass
class ExitData:
    """Self-play decisions, one row each.

    Attributes:
        observations: ``(N, 258)`` int16, the acting seat's observation.
        masks: ``(N, 58)`` bool, its legal actions (always more than one).
        values: ``(N, 58)`` float32, the search's value of each legal action (NaN elsewhere),
            zero-sum hand points / 40.
        outcomes: ``(N,)`` float32, the acting seat's zero-sum points of the hand / 40.
        seconds: wall-clock seconds the workers spent playing them.
    """

    observations: np.ndarray
    masks: np.ndarray
    values: np.ndarray
    outcomes: np.ndarray
    seconds: float = 0.0

    _KEYS = ("observations", "masks", "values", "outcomes")

    def __len__(self) -> int:
        return len(self.observations)

    def save(self, path: Path) -> None:
        arrays = {key: getattr(self, key) for key in self._KEYS}
        with atomic_path(path) as temporary:
            np.savez_compressed(temporary, seconds=np.float64(self.seconds), **arrays)

    @classmethod
    def load(cls, path: Path) -> ExitData:
        data = read_rows(path, {"observations": 2, "masks": 2, "values": 2, "outcomes": 1}, ("seconds",))
        return cls(*(data[key] for key in cls._KEYS), seconds=float(data["seconds"]))

    @classmethod
    def concatenate(cls, parts: Sequence[ExitData]) -> ExitData:
        return cls(
            *(np.concatenate([getattr(part, key) for part in parts]) for key in cls._KEYS),
            seconds=sum(part.seconds for part in parts),
        )


@dataclass
class ExitRow(EvalRow):
    """An :class:`EvalRow` of one iteration (``timesteps``: decisions collected so far)."""

    iteration: int = 0


# ------------------------------------------------------------------------------------ collect


@dataclass(frozen=True)
class ShardTask:
    """One shard of an iteration's collection: ``games`` matches played in lockstep."""

    config: ExitConfig
    weights: PolicyWeights
    iteration: int
    shard: int
    games: int


def search_targets(values: np.ndarray, masks: np.ndarray, temperature: float) -> np.ndarray:
    """``softmax(values / temperature)`` over each row's legal actions, float32 ``(N, 58)``."""
    scaled = np.where(masks, np.nan_to_num(values, nan=0.0) / temperature, -np.inf)
    weights = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def play_shard(task: ShardTask) -> ExitData:
    """Play one shard's self-play matches with the search in every seat; record its decisions.

    Before iteration ``guided_from`` the search is the plain compiled ``ismcts`` at
    ``plain_simulations``, one decision at a time. From then on it is guided by the network at
    ``simulations``: with ``guide: root``, the plain search plus the network's values of the root
    actions as ``prior_visits`` visits (:func:`agents.network_search.root_values`, one forward
    pass for all games per step); with ``guide: tree``, every game's decision searched at once
    with the network at every node (one :meth:`action_values_many` call). Forced moves are
    played without a search. The seat to act plays the best root action, or with
    probability ``explore`` one drawn from the search's target distribution. Pending decisions
    get their outcome when their hand ends (rewards arrive, the match ends, or the next
    observation shows an empty line: a new hand).
    """
    from draw_env.vector import DrawVectorEnv

    started = time.perf_counter()
    config = task.config
    seed = seed_sequence_int(config.seed, task.iteration, task.shard)
    rng = np.random.default_rng(seed)
    guided = task.iteration >= config.guided_from
    policy = NumpyPolicy(task.weights)
    evaluate = network_evaluator(policy)
    value_weight = config.value_weight if policy.has_value else 0.0
    simulations = config.simulations if guided else config.plain_simulations
    search = CompiledISMCTSAgent(simulations=simulations, seed=int(rng.integers(2**62)))
    env = DrawVectorEnv(task.games, config.num_players, episode="match", reward="zero_sum", autoreset=False)
    out = env.reset(seed=int(rng.integers(2**62)))
    observation, mask, current = out.observation, out.action_mask, out.current_player
    active = np.ones(task.games, bool)
    records: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    seats: list[int] = []
    outcomes: list[float] = []
    pending: list[list[int]] = [[] for _ in range(task.games)]
    while active.any():
        games = np.flatnonzero(active)
        actions = np.argmax(mask[games], axis=1)
        searched = [i for i, g in enumerate(games) if mask[g].sum() > 1]
        if searched:
            views = [{"observation": observation[games[i]], "action_mask": mask[games[i]]} for i in searched]
            if guided and config.guide == "tree":
                results = search.action_values_many(
                    views, evaluate, value_weight=value_weight, prior_weight=config.prior_weight
                )
            elif guided:  # the plain search, then the network's root values as prior_visits visits
                results = root_guided_values(search, policy, views, config.temperature, config.prior_visits)
            else:  # one search at a time: without network calls inside, lockstep only costs
                results = [search.action_values(view) for view in views]
            for i, values_of in zip(searched, results, strict=True):
                game = games[i]
                values = np.full(NUM_ACTIONS, np.nan, np.float32)
                values[list(values_of)] = list(values_of.values())
                legal = mask[game] != 0
                if rng.random() < config.explore:
                    target = search_targets(values[None], legal[None], config.temperature)[0]
                    action = int(rng.choice(NUM_ACTIONS, p=target / target.sum()))
                else:
                    legal_ids = np.flatnonzero(legal)
                    action = int(legal_ids[np.argmax(values[legal_ids])])  # ties to the lowest id
                actions[i] = action
                pending[game].append(len(records))
                records.append((observation[game].astype(np.int16), legal, values))
                seats.append(int(current[game]))
                outcomes.append(np.nan)
        out = env.step(actions, games=games)
        for i, game in enumerate(games):
            if out.hand_ended[i] and pending[game]:
                for row in pending[game]:
                    outcomes[row] = float(out.rewards[i, seats[row]]) / REWARD_SCALE
                pending[game] = []
        observation[games], mask[games], current[games] = out.observation, out.action_mask, out.current_player
        active[games] = ~out.terminated
    return ExitData(
        np.array([r[0] for r in records], np.int16).reshape(-1, OBSERVATION_SIZE),
        np.array([r[1] for r in records], bool).reshape(-1, NUM_ACTIONS),
        np.array([r[2] for r in records], np.float32).reshape(-1, NUM_ACTIONS),
        np.array(outcomes, np.float32),
        seconds=time.perf_counter() - started,
    )


def shard_tasks(config: ExitConfig, weights: PolicyWeights, iteration: int) -> list[ShardTask]:
    """An iteration's shards: ``matches`` split into groups of at most ``lockstep`` games."""
    sizes = [min(config.lockstep, config.matches - first) for first in range(0, config.matches, config.lockstep)]
    return [ShardTask(config, weights, iteration, shard, games) for shard, games in enumerate(sizes)]


class _RayCollector:
    """A Ray actor that plays shards (the class is wrapped by ``ray.remote`` on first use)."""

    def play(self, task: ShardTask) -> ExitData:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api="blas")
        return play_shard(task)


@contextlib.contextmanager
def _shard_runner(workers: int, address: str | None) -> Iterator[Any]:
    """``run(tasks) -> iterator of ExitData`` in task order: on the project's process pool
    (:func:`arena.parallel.process_map`), or on Ray actors."""
    if address is not None:
        import ray

        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        try:
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
            actor = ray.remote(num_cpus=1)(_RayCollector)
            pool = ray.util.ActorPool([actor.remote() for _ in range(cpus)])
            yield lambda tasks: pool.map(lambda a, task: a.play.remote(task), tasks)
        finally:
            ray.shutdown()
    else:
        yield lambda tasks: process_map(play_shard, tasks, workers)


def collect(config: ExitConfig, weights: PolicyWeights, iteration: int, runner: Any) -> ExitData:
    """Play an iteration's matches with the search guided by ``weights``; the decisions in shard order."""
    from tqdm import tqdm

    tasks = shard_tasks(config, weights, iteration)
    parts = []
    with tqdm(total=config.matches, desc=f"iteration {iteration} collect", unit="match",
              disable=not config.progress_bar) as progress:
        for task, part in zip(tasks, runner(tasks), strict=True):
            parts.append(part)
            progress.update(task.games)
    return ExitData.concatenate(parts)


# ---------------------------------------------------------------------------------------- fit


@dataclass
class FitReport:
    """The fit of one iteration, measured on the data after the last epoch.

    Attributes:
        policy_loss: cross-entropy against the search's targets.
        value_loss: mean squared error of the value against the outcome (in units of 40 points).
        agreement: share of decisions where the policy's top action is the search's.
    """

    policy_loss: float
    value_loss: float
    agreement: float


def fit(
    config: ExitConfig, data: ExitData, weights: PolicyWeights, iteration: int
) -> tuple[PolicyValueNetwork, FitReport]:
    """Train a copy of ``weights`` (policy and value networks) on ``data``; the network and its report.

    Without a value network in ``weights`` it starts fresh (the policy network's widths).
    """
    import torch
    from tqdm import tqdm

    from train.network import PolicyValueNetwork

    torch.set_num_threads(1)  # the same sums in the same order on every machine: exact repeats
    network = PolicyValueNetwork.from_weights(weights, config.seed)
    inputs = torch.from_numpy(encode_batch(data.observations, data.masks, weights.features))
    masks = torch.from_numpy(data.masks)
    targets = torch.from_numpy(search_targets(data.values, data.masks, config.temperature))
    outcomes = torch.from_numpy(data.outcomes)
    everything = torch.arange(len(data))

    def losses(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        log_p = network.log_probabilities(inputs[rows], masks[rows])
        value = network.values(inputs[rows])
        return -(targets[rows] * log_p).sum(dim=1).mean(), ((value - outcomes[rows]) ** 2).mean(), log_p

    def loss_of(rows: torch.Tensor) -> torch.Tensor:
        policy_loss, value_loss, _ = losses(rows)
        return policy_loss + config.value_loss_weight * value_loss

    epochs = network.fit(
        everything,
        loss_of,
        epochs=config.epochs,
        batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        generator=torch.Generator().manual_seed(seed_sequence_int(config.seed, iteration, 1 << 21)),
    )
    for _ in tqdm(epochs, total=config.epochs, desc=f"iteration {iteration} fit", unit="epoch",
                  disable=not config.progress_bar):
        pass  # each epoch runs as the progress bar asks for it
    with torch.no_grad():
        policy_loss, value_loss, log_p = losses(everything)
        agreement = (log_p.argmax(dim=1) == targets.argmax(dim=1)).float().mean()
    return network, FitReport(float(policy_loss), float(value_loss), float(agreement))


# ---------------------------------------------------------------------------------- the loop


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
        ConfigError: see :class:`~train.run_dir.RunDir`: settings outside :data:`FREE_KEYS` that
            differ from the saved run's are refused (unless ``overwrite``); the :data:`GUIDED_KEYS`
            may differ while the next iteration to run is still unguided. Every file a continued
            run reads is checked here, before it writes.
    """
    run = RunDir(config, "exit", overwrite=overwrite, free=FREE_KEYS + GUIDED_KEYS)
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


def initial_weights(config: ExitConfig) -> PolicyWeights:
    """Iteration 0: the policy ``init`` (read as weights only) or a fresh network of ``net_arch``."""
    from train.distill_fit import init_weights
    from train.network import PolicyValueNetwork

    if config.init is not None:
        weights = init_weights(config.init)
        if weights.num_players not in (None, config.num_players):
            raise ConfigError(
                f"config key 'init' must be a {config.num_players}-player policy, "
                f"got one trained for {weights.num_players} players"
            )
        return dataclasses.replace(weights, num_players=config.num_players)
    network = PolicyValueNetwork(config.features, config.net_arch, config.net_arch, "relu", config.seed)
    return network.to_weights(config.num_players)


def _evaluate(config: ExitConfig, policy: Path, previous: Path, iteration: int,
              decisions: int, seconds: float) -> list[ExitRow]:
    from arena.evaluation import evaluate
    from train.evaluation import learner_row

    settings = config.eval
    learner = ("network", {"path": str(policy)})
    opponents: list[tuple[str, Any]] = [(spec, spec) for spec in settings.opponents]
    if settings.previous:  # iteration 1's previous is iteration 0: the init
        opponents.append(("previous", ("network", {"path": str(previous)})))
    rows = []
    for label, spec in opponents:
        result = evaluate(
            [learner] + [spec] * (config.num_players - 1),
            num_games=settings.matches,
            seed=config.seed + 1,  # the same deals every iteration: paired comparisons
            workers=settings.workers,
            progress=config.progress_bar,
        )
        row = learner_row(result, label, decisions, seconds)
        rows.append(ExitRow(**dataclasses.asdict(row), iteration=iteration))
    return rows


def write_rows_csv(path: Path, rows: Sequence[ExitRow]) -> None:
    with atomic_path(path) as temporary, open(temporary, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[f.name for f in dataclasses.fields(ExitRow)])
        writer.writeheader()
        writer.writerows(dataclasses.asdict(row) for row in rows)


def iteration_dir(config: ExitConfig, iteration: int) -> Path:
    return Path(config.output_dir) / f"iter_{iteration:03d}"


def _log(config: ExitConfig, rows: list[ExitRow], report: FitReport | None, iteration: int) -> None:
    """``eval.csv``, ``strength.png`` and TensorBoard scalars after ``iteration``."""
    from train.plots import plot_learning_curve

    output_dir = Path(config.output_dir)
    write_rows_csv(output_dir / "eval.csv", rows)
    with atomic_path(output_dir / "strength.png") as temporary:  # keeps .png, which savefig reads
        plot_learning_curve(
            rows,
            temporary,
            title=f"{config.num_players}-player expert iteration: the network alone",
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
            :func:`open_run`) or an ``init`` that is not a policy of this player count.
    """
    from threadpoolctl import threadpool_limits

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
        print(run.complete(f"{completed} iterations"))
    elif run.resuming:
        print(f"Resuming {run} after iteration {completed}: {config.iterations - completed} to go", flush=True)
    state = read_state(output_dir).model_dump()
    rows = read_rows_of(config, completed)
    with _shard_runner(config.workers, address) as runner:
        for iteration in range(completed + 1, config.iterations + 1):
            started = time.perf_counter()
            folder = iteration_dir(config, iteration)
            folder.mkdir(parents=True, exist_ok=True)
            previous = iteration_dir(config, iteration - 1) / "policy.npz"
            weights = load_policy_file(previous)
            data_path = folder / "data.npz"
            if data_path.exists():  # collected before an interruption: the same shards again
                data = ExitData.load(data_path)
            else:
                data = collect(config, weights, iteration, runner)
                data.save(data_path)
            window = [ExitData.load(iteration_dir(config, k) / "data.npz")
                      for k in range(max(1, iteration - config.window + 1), iteration + 1)]
            network, report = fit(config, ExitData.concatenate(window), weights, iteration)
            seconds = state["seconds"] + time.perf_counter() - started
            decisions = state["decisions"] + len(data)
            policy_path = network.save(
                folder / "policy.npz",
                config.num_players,
                provenance={
                    "trained_by": "draw-train (pipeline: exit)",
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
            for row in new_rows:
                print(f"[iteration {iteration}] vs {row.opponent:<12} win {row.win_rate:6.1%} "
                      f"[{row.win_low:.1%}, {row.win_high:.1%}] ({row.matches} matches)", flush=True)
            write_json_atomic(folder / "eval.json", [dataclasses.asdict(row) for row in new_rows], indent=1)
            rows.extend(new_rows)
            _log(config, rows, report, iteration)
            state = {"completed": iteration, "seconds": round(seconds, 3), "decisions": decisions}
            run.write_json("state.json", state)
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


def exit_main(args: Any) -> int:
    """``draw-train`` for a config with ``pipeline: exit`` (``args`` from :func:`train.cli.build_parser`).

    Prints the last iteration's results table and ends with ``policy written to PATH``.

    Raises:
        ConfigError: a bad config, ``--resume`` (rerun the same command to continue instead),
            or an ``output_dir`` holding another run.
    """
    from train.config import load_exit_config
    from train.evaluation import evaluation_table

    if args.resume is not None:
        raise ConfigError(
            "--resume does not apply to pipeline: exit: rerun the same command to continue the run in output_dir"
        )
    config = load_exit_config(args.config, args.overrides)
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
                f"{config.num_players}-player expert iteration, iteration {config.iterations} "
                f"({summary['train_seconds'] / 60:.1f} training min): match win rate, duplicate format"
            ),
        )
    )
    print(f"Summary: {config.output_dir}/summary.json; curve: {config.output_dir}/strength.png")
    print(f"policy written to {summary['policy']}")
    return 0
