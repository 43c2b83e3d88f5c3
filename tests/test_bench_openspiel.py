"""OpenSpiel's algorithms as benchmark cells (train/bench/openspiel_algorithms.py), on micro.

Each runs a tiny budget and must return a policy that gives a distribution over the legal actions
of every observation of micro's tree; its curve points come as asked; a seed gives the same
policy twice; a saved policy plays as measured; and the exploitability ``arena.exploitability``
gives a policy equals OpenSpiel's own ``nash_conv`` of the same policy asked through OpenSpiel's
observation tensors.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("pyspiel")
pytest.importorskip("torch")

from open_spiel.python.algorithms import exploitability as spiel_exploitability  # noqa: E402

import agents  # noqa: E402
from arena.exploitability import agent_probabilities, exploitability  # noqa: E402
from arena.specs import parse_agent_spec  # noqa: E402
from train.bench import openspiel_algorithms as algorithms  # noqa: E402
from train.bench.openspiel_policies import (  # noqa: E402
    SpielPolicy,
    exact_tree,
    flat_tree,
    load_spiel_game,
    tree_observations,
)
from train.bench.protocol import GAMES, BenchGame, Budget, Cell, Policy  # noqa: E402

MICRO = GAMES["micro"]
#: Micro with 3 tiles protected (no draws): 2 thousand histories instead of 22, for the algorithms
#: that walk the whole tree at every iteration.
SMALL = dataclasses.replace(MICRO, protected=3)
#: NFSP small enough to learn within a few hundred decisions.
TINY_NFSP = {"hidden_layers": [16], "batch_size": 16, "min_buffer_size_to_learn": 32, "learn_every": 8,
             "reservoir_buffer_capacity": 2000, "replay_buffer_capacity": 2000, "update_target_network_every": 50}


def _run(
    name: str, steps: int, settings: dict, seed: int = 0, points: int = 2, game: BenchGame = MICRO
) -> tuple[Policy, list[tuple[int, float]]]:
    curve: list[tuple[int, float]] = []
    cell = Cell(name, game, seed, Budget(env_steps=steps), settings, curve_points=points)
    policy = getattr(algorithms, name)(cell, Path("."), lambda steps, seconds, _: curve.append((steps, seconds)))
    return policy, curve


def _played(spec: str) -> agents.Agent:
    """The agent ``draw-eval`` and ``draw-exploit`` build from ``spec``."""
    name, kwargs = parse_agent_spec(spec)
    return agents.make(name, **kwargs)


def _answers(policy: Policy, game: BenchGame = MICRO) -> np.ndarray:
    rows, masks = tree_observations(game.rules)
    answers = policy.action_probabilities_batch(rows.astype(np.float32), masks)
    assert answers.shape == masks.shape and np.all(answers >= 0)
    assert np.all(answers[masks == 0] == 0)
    np.testing.assert_allclose(answers.sum(axis=1), 1.0, atol=1e-6)
    return answers


def test_openspiel_observation_tensors_are_the_trees_observations() -> None:
    """Every decision of OpenSpiel's micro tree observes a vector of the project's tree, and
    every observation of the project's tree occurs there: one declaration, two writers."""
    rows, _ = tree_observations(MICRO.rules)
    assert {row.tobytes() for row in flat_tree(MICRO).observations} == {row.tobytes() for row in rows}


def test_nfsp_learns_within_its_budget_and_repeats_with_its_seed() -> None:
    policy, curve = _run("nfsp", 150, TINY_NFSP, points=3)
    assert len(curve) == 3 and curve[-1][0] >= 150 and curve[0][0] < curve[-1][0]
    answers = _answers(policy)
    again, _ = _run("nfsp", 150, TINY_NFSP)
    np.testing.assert_array_equal(_answers(again), answers)
    other, _ = _run("nfsp", 150, TINY_NFSP, seed=1)
    assert not np.array_equal(_answers(other), answers)


def test_nfsp_saves_a_table_on_micro_that_draw_exploit_measures_alike(tmp_path: Path) -> None:
    policy, _ = _run("nfsp", 100, TINY_NFSP)
    spec = policy.save(tmp_path / "nfsp", MICRO)
    assert spec == f"tabular:path={tmp_path / 'nfsp.npz'}"
    tree = exact_tree(MICRO.rules)
    measured = exploitability(tree, policy.action_probabilities_batch).exploitability
    played = exploitability(tree, agent_probabilities(_played(spec))).exploitability
    assert played == pytest.approx(measured, abs=1e-5)


def test_nfsp_saves_a_network_on_a_full_game(tmp_path: Path) -> None:
    cell = Cell("nfsp", GAMES["draw2"], 0, Budget(env_steps=60), TINY_NFSP, curve_points=1)
    policy = algorithms.nfsp(cell, tmp_path, lambda *_: None)
    spec = policy.save(tmp_path / "nfsp", GAMES["draw2"])
    assert spec.startswith("network:path=") and spec.endswith(",deterministic=false")
    state = load_spiel_game(GAMES["draw2"]).new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    observation = np.asarray(state.observation_tensor(state.current_player()), np.float32)[None]
    mask = np.zeros((1, 58), np.int8)
    mask[0, state.legal_actions()] = 1
    loaded = agent_probabilities(_played(spec))(observation, mask)
    np.testing.assert_allclose(loaded, policy.action_probabilities_batch(observation, mask), atol=1e-6)


def test_mccfr_learns_repeats_and_saves_a_table_played_alike(tmp_path: Path) -> None:
    policy, curve = _run("mccfr", 2000, {})
    assert len(curve) == 2
    again, _ = _run("mccfr", 2000, {})
    np.testing.assert_array_equal(_answers(again), _answers(policy))
    ours = exploitability(exact_tree(MICRO.rules), policy.action_probabilities_batch)
    assert ours.exploitability < 0.5  # below uniform random's 0.789 within 2000 decisions
    spec = policy.save(tmp_path / "mccfr", MICRO)
    played = exploitability(exact_tree(MICRO.rules), agent_probabilities(_played(spec)))
    assert played.exploitability == pytest.approx(ours.exploitability, abs=1e-5)


def test_a_cpu_budget_stops_training_and_spaces_the_curve() -> None:
    curve: list[tuple[int, float]] = []
    cell = Cell("mccfr", SMALL, 0, Budget(cpu_seconds=0.6), {}, curve_points=3)
    algorithms.mccfr(cell, Path("."), lambda steps, seconds, _: curve.append((steps, seconds)))
    assert len(curve) == 3 and curve[-1][1] >= 0.6 and curve[0][1] >= 0.2
    assert [steps for steps, _ in curve] == sorted(steps for steps, _ in curve)


@pytest.mark.parametrize("game", [SMALL, pytest.param(MICRO, marks=pytest.mark.slow)], ids=["small", "micro"])
def test_the_exploitability_of_a_policy_is_openspiels_nash_conv_of_it(game: BenchGame) -> None:
    """OpenSpiel's best responses (over its own tree, information state strings, chance nodes)
    against the policy asked with OpenSpiel's observation tensors give arena's figure."""
    policy, _ = _run("mccfr", 300, {}, points=1, game=game)
    ours = exploitability(exact_tree(game.rules), policy.action_probabilities_batch)
    spiel_game = load_spiel_game(game)
    theirs = spiel_exploitability.nash_conv(spiel_game, SpielPolicy(spiel_game, policy))
    assert ours.nash_conv == pytest.approx(theirs, abs=1e-9)
    assert 0.01 < ours.exploitability  # not an equilibrium yet: the best responses have work to do


def test_mmd_runs_an_iteration() -> None:
    policy, curve = _run("mmd", 1, {}, points=1, game=SMALL)
    assert len(curve) == 1 and curve[0][0] == sum(1 for seat in flat_tree(SMALL).player if seat >= 0)
    _answers(policy, SMALL)


@pytest.mark.slow  # imports cvxpy, and OpenSpiel's oracle lists every state first
def test_psro_runs_an_iteration() -> None:
    pytest.importorskip("cvxpy")
    policy, curve = _run("psro", 1, {"sims_per_entry": 5, "prd_iterations": 500}, points=1, game=SMALL)
    assert len(curve) == 1 and curve[0][0] > 2 * sum(1 for seat in flat_tree(SMALL).player if seat >= 0)
    _answers(policy, SMALL)


@pytest.mark.parametrize("name", ["nfsp", "mmd", "psro", "mccfr"])
def test_the_settings_files_hold_the_algorithms_keys(name: str) -> None:
    settings = yaml.safe_load((Path(__file__).parents[1] / "configs/bench/algorithms" / f"{name}.yaml").read_text())
    defaults = getattr(algorithms, f"{name.upper()}_DEFAULTS")
    assert settings == algorithms.settings_of(Cell(name, MICRO, 0, Budget(env_steps=1), settings), defaults)
    assert set(settings) == set(defaults)


def test_tree_algorithms_refuse_a_game_without_a_tree_and_unknown_settings() -> None:
    with pytest.raises(ValueError, match="not one of the exact games"):
        algorithms.mmd(Cell("mmd", GAMES["draw2"], 0, Budget(env_steps=1)), Path("."), lambda *_: None)
    with pytest.raises(ValueError, match="'mini': its tree has about .* histories"):
        algorithms.mccfr(Cell("mccfr", GAMES["mini"], 0, Budget(env_steps=1)), Path("."), lambda *_: None)
    with pytest.raises(ValueError, match="unknown setting.*learning_rat"):
        _run("nfsp", 10, {"learning_rat": 0.1})


def test_the_learner_is_one_train_with_the_points_asked() -> None:
    """train(config, budget, on_checkpoint, points): a policy, the points asked, the provenance kept."""
    calls: list[tuple[int, Policy]] = []
    config = algorithms.SpielConfig("mccfr", MICRO, 0, {})
    final = algorithms.train(config, Budget(env_steps=300), lambda steps, seconds, policy: calls.append((steps, policy)),
                             points=3, provenance={"by": "a test"})
    assert len(calls) == 3 and calls[-1] == (calls[-1][0], final) and calls[-1][0] >= 300
    assert [steps for steps, _ in calls] == sorted(steps for steps, _ in calls)
    assert final.about["by"] == "a test" and final.about["algorithm"] == "mccfr"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="unknown OpenSpiel algorithm 'nothing'"):
        algorithms.train(algorithms.SpielConfig("nothing", MICRO), Budget(env_steps=1))
