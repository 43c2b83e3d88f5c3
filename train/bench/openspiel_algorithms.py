"""OpenSpiel's learning algorithms as learners and benchmark cells, over the project's
``python_draw_dominoes``.

:func:`train` (``config``: a :class:`SpielConfig` naming the algorithm, the game, the seed and the
settings) runs one through OpenSpiel's own implementation; this module only feeds it the variant,
keeps the budget, calls ``on_checkpoint`` and turns what it learned into a
:mod:`train.bench.openspiel_policies` policy on the project's observation vector. Each cell
adapter (:func:`nfsp`, :func:`mmd`, :func:`psro`, :func:`mccfr`) calls it with the cell's settings:

- :func:`nfsp`: Neural Fictitious Self-Play (``open_spiel.python.pytorch.nfsp``), one agent per
  seat sharing one average network, one Q-network and their buffers (the seats are symmetric and
  do not observe which seat they are, so one policy plays both; sharing also gives it both seats'
  data). The networks read the scaled observation (``observation_tensor`` over its bounds), the
  policy file's ``"scaled"`` features. Runs on every game.
- :func:`mmd`: Magnetic Mirror Descent with dilated entropy (``algorithms.mmd_dilated``), over the
  sequence form of OpenSpiel's whole tree: exact games small enough to enumerate in Python (micro;
  mini's tree has millions of nodes and is refused).
- :func:`psro`: PSRO (``algorithms.psro_v2``) with the exact best-response oracle and projected
  replicator dynamics, its meta-strategy's mixture as the policy; micro only, like MMD (OpenSpiel
  imports cvxpy for it).
- :func:`mccfr`: outcome-sampling Monte Carlo CFR (``algorithms.outcome_sampling_mccfr``), tabular
  over OpenSpiel's perfect-recall information states; its average policy becomes an observation
  table, so it too runs on micro only.

Budgets: ``env_steps`` counts decisions, the players' actions applied to OpenSpiel states (the
AEC environment's steps; the chance events of the deal and the draws are not counted). A full-tree
iteration (MMD) counts every decision node of the tree once. ``cpu_seconds`` is this process's
CPU time since training started, less the time spent in the checkpoint (measuring is not
training), on the learners' one meter (:class:`train.meter.Meter`). Training stops at whichever
comes first, checked after each episode (NFSP) or iteration; the checkpoint is called at each of
the ``points``, evenly over the budget (several with the same policy when one iteration crosses
several), the last at the end.

Determinism: with an ``env_steps`` budget a cell is a function of its seed (OpenSpiel's NFSP and
MCCFR draw from NumPy's and PyTorch's global generators, which are seeded at the start; MMD is
deterministic). A ``cpu_seconds`` budget stops at a time, so how far training got varies.
OpenSpiel's NFSP initialises the Q-network with its fixed seed 42 whatever the seed given; the
average network, the exploration and the deals follow the cell's seed.
"""

from __future__ import annotations

import contextlib
import io
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import mccfr as mccfr_lib
from open_spiel.python.algorithms import mmd_dilated, outcome_sampling_mccfr, sequence_form_utils
from open_spiel.python.pytorch import nfsp as nfsp_lib

from agents.policy_file import PolicyWeights
from train.bench.openspiel_policies import Layer, NfspPolicy, flat_tree, load_spiel_game, scaled_features
from train.bench.protocol import BenchGame, Cell, Checkpoint, Policy
from train.config import build
from train.meter import Budget, Meter
from train.nfsp.config import NfspSettings
from train.policies import TablePolicy

#: NFSP's settings and defaults, the keys of ``draw-train``'s NFSP (:class:`train.nfsp.config.NfspSettings`,
#: which checks them; ``configs/bench/algorithms/nfsp.yaml`` documents them).
NFSP_DEFAULTS: dict[str, Any] = NfspSettings().nfsp_settings()
#: MMD's settings: ``alpha`` the entropy weight (0: Nash on average), ``stepsize`` (``None``:
#: OpenSpiel's ``alpha / max|payoff|^2``), ``average`` (play the average sequences, else the last).
MMD_DEFAULTS: dict[str, Any] = {"alpha": 0.0, "stepsize": 30.0, "average": False}
#: PSRO's settings: episodes per meta-game entry, and the projected replicator dynamics'
#: iterations and exploration floor.
PSRO_DEFAULTS: dict[str, Any] = {"sims_per_entry": 100, "prd_iterations": 20_000, "prd_gamma": 1e-10}
#: Outcome-sampling MCCFR's settings: ``epsilon`` the exploration of the sampling policy.
MCCFR_DEFAULTS: dict[str, Any] = {"epsilon": 0.6}


@dataclass(frozen=True)
class SpielConfig:
    """What an OpenSpiel learner trains: ``algorithm`` (``nfsp``, ``mmd``, ``psro``, ``mccfr``) on
    ``game`` with ``seed``, its ``settings`` over the algorithm's defaults (``NFSP_DEFAULTS``...)."""

    algorithm: str
    game: BenchGame
    seed: int = 0
    settings: Mapping[str, Any] = field(default_factory=dict)


def train(
    config: SpielConfig,
    budget: Budget,
    on_checkpoint: Checkpoint | None = None,
    *,
    points: int = 1,
    provenance: Mapping[str, Any] | None = None,
) -> Policy:
    """Train OpenSpiel's ``config.algorithm`` until ``budget``; ``on_checkpoint`` at ``points``
    evenly over it. ``provenance``: added to each policy's record.

    Raises:
        ValueError: an unknown algorithm or setting, or a game the algorithm does not run.
    """
    if config.algorithm not in _LEARNERS:
        raise ValueError(f"unknown OpenSpiel algorithm {config.algorithm!r}; the algorithms are {', '.join(_LEARNERS)}")
    meter = Meter(budget, points, on_checkpoint)
    meter.start()
    return _LEARNERS[config.algorithm](config, meter, provenance or {})


def _cell(cell: Cell, checkpoint: Checkpoint) -> Policy:
    """A benchmark cell of an OpenSpiel algorithm: :func:`train` with the cell's settings."""
    config = SpielConfig(cell.algorithm, cell.game, cell.seed, cell.settings)
    return train(config, cell.budget, checkpoint, points=cell.curve_points)


def nfsp(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """NFSP (every game); the average network is the policy."""
    return _cell(cell, checkpoint)


def mmd(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """MMD (dilated entropy) on the whole tree (micro); an observation table."""
    return _cell(cell, checkpoint)


def psro(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """PSRO with the exact best-response oracle (micro); an observation table of its mixture."""
    return _cell(cell, checkpoint)


def mccfr(cell: Cell, work: Path, checkpoint: Checkpoint) -> Policy:
    """Outcome-sampling MCCFR (micro); an observation table of its average policy."""
    return _cell(cell, checkpoint)


def settings_of(cell: Cell | SpielConfig, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The settings over ``defaults``.

    Raises:
        ValueError: naming a setting the algorithm does not take.
    """
    unknown = sorted(set(cell.settings) - set(defaults))
    if unknown:
        raise ValueError(f"{cell.algorithm}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(defaults)}")
    return {**defaults, **cell.settings}


def _about(config: SpielConfig, settings: Mapping[str, Any], meter: Meter, library: str,
           provenance: Mapping[str, Any]) -> dict[str, Any]:
    return {**provenance,
        "algorithm": config.algorithm, "library": library, "game": config.game.to_dict(), "seed": config.seed,
        "settings": dict(settings), "env_steps": meter.steps, "cpu_seconds": round(meter.seconds, 3),
        "curve_point": meter.done,
    }


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _shared_buffer(base: Any) -> type:
    """A buffer class whose ``init`` gives every agent of one run the same buffer (OpenSpiel's
    agents build their buffers on their first transition through the class they hold)."""

    class Shared(base):
        instance: Any = None

        @classmethod
        def init(cls, capacity: int, experience: Any) -> Any:
            if cls.instance is None:
                cls.instance = base.init(capacity, experience)
            return cls.instance

    return Shared


def _share_networks(agents: list[nfsp_lib.NFSP]) -> None:
    """Every agent plays and learns with the first one's networks, optimisers and buffers."""
    first = agents[0]
    reservoir = _shared_buffer(nfsp_lib.ReservoirBuffer)
    replay = _shared_buffer(first._rl_agent._replay_buffer_class)
    for agent in agents:
        agent._replay_buffer_class = reservoir
        agent._rl_agent._replay_buffer_class = replay
        if agent is first:
            continue
        agent._avg_network = first._avg_network
        agent._optimizer = first._optimizer
        agent._rl_agent._q_network = first._rl_agent._q_network
        agent._rl_agent._target_q_network = first._rl_agent._target_q_network
        agent._rl_agent._optimizer = first._rl_agent._optimizer


def _layers(network: torch.nn.Module) -> list[Layer]:
    """The linear layers of OpenSpiel's MLP, input first, as float32 arrays (copies)."""
    return [
        (module.weight.detach().cpu().numpy().copy(), module.bias.detach().cpu().numpy().copy())
        for module in network.modules()
        if isinstance(module, torch.nn.Linear)
    ]


def _scale(time_step: rl_environment.TimeStep, rules: Any) -> rl_environment.TimeStep:
    """The time step with each seat's observation scaled (the networks' input)."""
    observations = time_step.observations
    observations["info_state"] = list(scaled_features(np.asarray(observations["info_state"], np.float32), rules))
    return time_step


def _nfsp(config: SpielConfig, meter: Meter, provenance: Mapping[str, Any]) -> Policy:
    """Train NFSP on ``config`` (every game); the average network is the policy."""
    settings = build(NfspSettings, settings_of(config, NFSP_DEFAULTS)).nfsp_settings()
    game = config.game
    rules = game.rules
    _seed_everything(config.seed)
    spiel_game = load_spiel_game(game)
    env = rl_environment.Environment(
        spiel_game, chance_event_sampler=rl_environment.ChanceEventSampler(config.seed),
        observation_type=rl_environment.ObservationType.OBSERVATION,
    )
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    agents = [
        nfsp_lib.NFSP(
            seat, size, actions, list(settings["hidden_layers"]),
            reservoir_buffer_capacity=int(settings["reservoir_buffer_capacity"]),
            anticipatory_param=float(settings["anticipatory_param"]),
            batch_size=int(settings["batch_size"]),
            rl_learning_rate=float(settings["rl_learning_rate"]),
            sl_learning_rate=float(settings["sl_learning_rate"]),
            min_buffer_size_to_learn=int(settings["min_buffer_size_to_learn"]),
            learn_every=int(settings["learn_every"]),
            optimizer_str=str(settings["optimizer"]),
            seed=config.seed,
            replay_buffer_capacity=int(settings["replay_buffer_capacity"]),
            update_target_network_every=int(settings["update_target_network_every"]),
            epsilon_start=float(settings["epsilon_start"]),
            epsilon_end=float(settings["epsilon_end"]),
            epsilon_decay_duration=int(settings["epsilon_decay_duration"]),
            discount_factor=1.0,
        )
        for seat in range(game.num_players)
    ]
    _share_networks(agents)

    def policy() -> NfspPolicy:
        weights = PolicyWeights(
            policy=tuple(_layers(agents[0]._avg_network)), activation="relu", features="scaled",
            num_players=game.num_players, provenance=_about(config, settings, meter, "open_spiel.pytorch.nfsp", provenance),
            variant=game.variant,
        )
        return NfspPolicy(weights)

    while not meter.spent():
        time_step = _scale(env.reset(), rules)
        decisions = 0
        while not time_step.last():
            seat = time_step.observations["current_player"]
            output = agents[seat].step(time_step)
            time_step = _scale(env.step([output.action]), rules)
            decisions += 1
        for agent in agents:
            agent.step(time_step)  # every seat sees the end (its last transition, a new episode mode)
        meter.reached(meter.steps + decisions, policy)
    return meter.finish(meter.steps, policy())


def _mmd(config: SpielConfig, meter: Meter, provenance: Mapping[str, Any]) -> Policy:
    """Run MMD (dilated entropy) on ``config``'s whole tree (micro); the policy is the
    observation table of its average (or last) sequences."""
    settings = settings_of(config, MMD_DEFAULTS)
    tree = flat_tree(config.game)
    spiel_game = load_spiel_game(config.game)
    stepsize = settings["stepsize"]
    solver = mmd_dilated.MMDDilatedEnt(spiel_game, float(settings["alpha"]), None if stepsize is None else float(stepsize))
    decisions = sum(1 for seat in tree.player if seat >= 0)

    def policy() -> TablePolicy:
        sequences = solver.get_avg_sequences() if settings["average"] else solver.current_sequences()

        def probabilities(seat: int, infostate: str, legal: list[int]) -> np.ndarray:
            keys = solver.infoset_action_maps[seat][infostate]
            index = solver.infoset_actions_to_seq[seat]
            weights = {int(key.rsplit(sequence_form_utils._DELIMITER, 1)[1]): sequences[seat][index[key]] for key in keys}
            row = np.array([weights[action] for action in legal], np.float64)
            total = row.sum()
            return row / total if total > 0 else np.full(len(legal), 1.0 / len(legal))

        rows, table = tree.observation_table(probabilities)
        return TablePolicy(rows, table, _about(config, settings, meter, "open_spiel.algorithms.mmd_dilated", provenance))

    while not meter.spent():
        solver.update_sequences()
        meter.reached(meter.steps + decisions, policy)
    return meter.finish(meter.steps, policy())


class _CountingSolver(outcome_sampling_mccfr.OutcomeSamplingSolver):
    """OpenSpiel's solver, counting the decisions its sampled episodes visit."""

    decisions = 0

    def _episode(self, state: Any, *args: Any, **kwargs: Any) -> Any:
        if not state.is_terminal() and not state.is_chance_node():
            self.decisions += 1
        return super()._episode(state, *args, **kwargs)


def _mccfr(config: SpielConfig, meter: Meter, provenance: Mapping[str, Any]) -> Policy:
    """Run outcome-sampling MCCFR on ``config`` (micro); the policy is the observation table of
    its average policy (uniform at information states it never visited)."""
    settings = settings_of(config, MCCFR_DEFAULTS)
    tree = flat_tree(config.game)
    _seed_everything(config.seed)
    solver = _CountingSolver(load_spiel_game(config.game))
    solver._expl = float(settings["epsilon"])

    def policy() -> TablePolicy:
        def probabilities(seat: int, infostate: str, legal: list[int]) -> np.ndarray:
            found = solver._infostates.get(infostate)
            if found is None or found[mccfr_lib.AVG_POLICY_INDEX].sum() <= 0:
                return np.full(len(legal), 1.0 / len(legal))
            average = np.asarray(found[mccfr_lib.AVG_POLICY_INDEX], np.float64)
            return average / average.sum()

        rows, table = tree.observation_table(probabilities)
        return TablePolicy(rows, table, _about(config, settings, meter, "open_spiel.algorithms.outcome_sampling_mccfr", provenance))

    while not meter.spent():
        before = solver.decisions
        solver.iteration()
        meter.reached(meter.steps + solver.decisions - before, policy)
    return meter.finish(meter.steps, policy())


def _counting(policies: list[Any], counter: list[int]) -> list[Any]:
    """PSRO's per-player policy callables, each call (one decision) counted in ``counter[0]``."""

    def counted(function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            counter[0] += 1
            return function(*args, **kwargs)

        return call

    return [counted(function) for function in policies]


def _psro(config: SpielConfig, meter: Meter, provenance: Mapping[str, Any]) -> Policy:
    """Run PSRO (``algorithms.psro_v2``) on ``config`` (micro) with OpenSpiel's exact best-response
    oracle and projected replicator dynamics as the meta-solver (the ``nash`` meta-solver needs
    the ECOS solver); the policy is the observation table of the meta-strategy's mixture of the
    population (``algorithms.policy_aggregator``).

    An iteration counts, as decisions, every decision node of the tree once per best response
    (each walks the whole tree) plus the decisions of the episodes that fill the meta-game.
    """
    # psro_v2 imports cvxpy (OpenSpiel's LP solver) when loaded: imported here, on use.
    from open_spiel.python import policy as policy_lib
    from open_spiel.python.algorithms import policy_aggregator
    from open_spiel.python.algorithms.psro_v2 import best_response_oracle, psro_v2, strategy_selectors

    settings = settings_of(config, PSRO_DEFAULTS)
    tree = flat_tree(config.game)
    _seed_everything(config.seed)
    spiel_game = load_spiel_game(config.game)
    uniform = policy_lib.TabularPolicy(spiel_game)
    oracle = best_response_oracle.BestResponseOracle(best_response_backend="py", game=spiel_game, policy=uniform)
    sampled = [0]

    class Solver(psro_v2.PSROSolver):
        def sample_episodes(self, policies: list[Any], num_episodes: int) -> Any:
            return super().sample_episodes(_counting(policies, sampled), num_episodes)

    with contextlib.redirect_stdout(io.StringIO()):  # its constructor prints its options
        solver = Solver(
            spiel_game, oracle, sims_per_entry=int(settings["sims_per_entry"]),
            initial_policies=[uniform.__copy__() for _ in range(config.game.num_players)],
            training_strategy_selector=strategy_selectors.probabilistic, meta_strategy_method="prd",
            prd_iterations=int(settings["prd_iterations"]), prd_gamma=float(settings["prd_gamma"]),
            sample_from_marginals=True, symmetric_game=False,
        )
    decisions = sum(1 for seat in tree.player if seat >= 0)

    def policy() -> TablePolicy:
        mixture = policy_aggregator.PolicyAggregator(spiel_game).aggregate(
            range(config.game.num_players), solver.get_policies(), solver.get_meta_strategies()
        )

        def probabilities(seat: int, infostate: str, legal: list[int]) -> np.ndarray:
            found = mixture.policy[seat].get(infostate, {})
            row = np.array([found.get(action, 0.0) for action in legal], np.float64)
            total = row.sum()
            return row / total if total > 0 else np.full(len(legal), 1.0 / len(legal))

        rows, table = tree.observation_table(probabilities)
        return TablePolicy(rows, table, _about(config, settings, meter, "open_spiel.algorithms.psro_v2", provenance))

    while not meter.spent():
        before = sampled[0]
        solver.iteration()
        meter.reached(meter.steps + config.game.num_players * decisions + sampled[0] - before, policy)
    return meter.finish(meter.steps, policy())


#: The learners by algorithm: ``(config, its meter, provenance) -> final policy``.
_LEARNERS: dict[str, Callable[[SpielConfig, Meter, Mapping[str, Any]], Policy]] = {
    "nfsp": _nfsp, "mmd": _mmd, "psro": _psro, "mccfr": _mccfr,
}
