"""The exact solver's table of information states, the ``tabular`` agent keyed by either obs_type,
and ``draw-exploit`` asking an agent with the vectors it reads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.tabular import TabularAgent, load_table, record_path, save_table
from arena import exploit_cli
from arena.exploitability import agent_probabilities, exploitability, exploitability_of_tables
from draw_env.exact import game_tree
from draw_env.rules import DrawGame
from train.cfr.solver import (
    SolverState,
    average_strategy,
    information_table,
    iterate,
    mirrored_entries,
    observation_table,
    symmetric_strategies,
)

MICRO = DrawGame(2, max_pip=2, hand_size=1, protected=2)
SMALL = DrawGame(2, max_pip=2, hand_size=2, protected=1)
#: Two tiles to draw: an observation forgets when the other seat drew, and merges states that differ.
DRAWING = DrawGame(2, max_pip=2, hand_size=2, protected=0)
INFO = "information_state"


@pytest.fixture(scope="module")
def small() -> game_tree.GameTree:
    return game_tree.build_tree(SMALL)


def solve(tree: game_tree.GameTree, iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """CFR+'s average strategies after ``iterations``, mixed into one policy of both seats."""
    state = SolverState.fresh(tree)
    iterate(tree, state, iterations)
    averages = average_strategy(tree, 0, state.strategy_sums[0]), average_strategy(tree, 1, state.strategy_sums[1])
    return symmetric_strategies(tree, averages, mirrored_entries(tree))


def write(tmp_path: Path, tree: game_tree.GameTree, strategies: tuple, obs_type: str) -> Path:
    make = information_table if obs_type == INFO else observation_table
    rows, probabilities = make(tree, strategies)
    return save_table(tmp_path / f"{obs_type}.npz", tree.game, rows, probabilities, {"solver": "CFR+"}, obs_type)


def test_the_seats_information_states_mirror_one_another(small: game_tree.GameTree) -> None:
    pair0, pair1 = mirrored_entries(small)
    # In a hand whose opener is chance, each seat's information state has the other seat's mirror.
    assert (pair0 >= 0).all() and (pair1 >= 0).all()
    np.testing.assert_array_equal(pair1[pair0], np.arange(len(pair0)))
    np.testing.assert_array_equal(small.actions[1][pair0], small.actions[0])


def test_the_symmetric_policy_is_one_policy_exploited_at_most_as_the_seats_pair(small: game_tree.GameTree) -> None:
    mirror = mirrored_entries(small)
    state = SolverState.fresh(small)
    for iterations in (1, 4, 16):
        iterate(small, state, iterations - state.iteration)
        averages = average_strategy(small, 0, state.strategy_sums[0]), average_strategy(small, 1, state.strategy_sums[1])
        symmetric = symmetric_strategies(small, averages, mirror)
        np.testing.assert_array_equal(symmetric[1][mirror[0]], symmetric[0])  # mirrored states play alike
        for seat in (0, 1):  # each information state's distribution
            sums = np.add.reduceat(symmetric[seat], small.action_start[seat][:-1])
            np.testing.assert_allclose(sums, 1.0)
        pair = exploitability_of_tables(small, averages).exploitability
        assert exploitability_of_tables(small, symmetric).exploitability <= pair + 1e-12
    # Early on the seats' strategies differ, and their mixture is strictly less exploited.
    state = SolverState.fresh(small)
    iterate(small, state, 2)
    averages = average_strategy(small, 0, state.strategy_sums[0]), average_strategy(small, 1, state.strategy_sums[1])
    assert (exploitability_of_tables(small, symmetric_strategies(small, averages, mirror)).exploitability
            < exploitability_of_tables(small, averages).exploitability - 1e-6)


def test_the_table_of_information_states_plays_the_solution_exactly(tmp_path: Path) -> None:
    tree = game_tree.build_tree(DRAWING)
    strategies = solve(tree, 64)
    solution = exploitability_of_tables(tree, strategies).exploitability
    path = write(tmp_path, tree, strategies, INFO)
    agent = TabularAgent(path)
    assert agent.obs_type == INFO
    played = exploitability(tree, agent_probabilities(agent), obs_type=INFO)
    assert played.exploitability == pytest.approx(solution, abs=1e-9)
    # Through observations the same solution merges information states that call for different play.
    observed = TabularAgent(write(tmp_path, tree, strategies, "observation"))
    assert exploitability(tree, agent_probabilities(observed)).exploitability > solution + 1e-6


def test_draw_train_writes_the_table_of_information_states_of_micro(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train import cli

    root = Path(__file__).resolve().parent.parent
    output = tmp_path / "cfr"
    assert cli.main(["--config", str(root / "configs" / "cfr_micro.yaml"), f"output_dir={output}",
                     "progress_bar=false"]) == 0
    summary = json.loads((output / "summary.json").read_text())
    assert summary["obs_type"] == INFO and summary["exploitability"] <= 1e-6
    assert summary["table_exploitability"] == pytest.approx(summary["exploitability"], abs=1e-9)
    assert json.loads(record_path(output / "policy.npz").read_text())["obs_type"] == INFO
    capsys.readouterr()
    assert exploit_cli.main([f"tabular:path={output / 'policy.npz'}", "--max-pip", "2", "--hand-size", "1",
                             "--protected", "2", "--quiet"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["obs_type"] == INFO
    assert line["exploitability"] == pytest.approx(summary["exploitability"], abs=1e-9)


def test_an_agent_of_observations_asked_with_information_states_answers_as_with_observations(
    small: game_tree.GameTree,
) -> None:
    for name in ("heaviest", "random"):
        agent = agents.make(name)
        plain = exploitability(small, agent_probabilities(agent))
        asked = exploitability(small, agent_probabilities(agent), obs_type=INFO)
        assert asked.exploitability == pytest.approx(plain.exploitability, abs=1e-12)
        assert asked.queries >= plain.queries  # more vectors, the same answers


# ------------------------------------------------------------------------------ tabular tables


@pytest.fixture(scope="module")
def tables(small: game_tree.GameTree, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    strategies = solve(small, 16)
    folder = tmp_path_factory.mktemp("tables")
    return {obs_type: write(folder, small, strategies, obs_type) for obs_type in ("observation", INFO)}


def test_a_table_records_its_key_and_one_without_it_reads_observations(tables: dict[str, Path]) -> None:
    for obs_type, path in tables.items():
        assert json.loads(record_path(path).read_text())["obs_type"] == obs_type
        assert load_table(path)[1] == obs_type and TabularAgent.obs_type_of_file(path) == obs_type
    record = json.loads(record_path(tables["observation"]).read_text())
    del record["obs_type"]
    record_path(tables["observation"]).write_text(json.dumps(record))
    assert load_table(tables["observation"])[1] == "observation"


@pytest.mark.parametrize("obs_type", ["observation", INFO])
def test_a_lookup_with_the_other_obs_type_is_refused_naming_the_file(
    tables: dict[str, Path], small: game_tree.GameTree, obs_type: str
) -> None:
    from arena.exploitability import tree_vectors

    other = "observation" if obs_type == INFO else INFO
    agent = TabularAgent(tables[obs_type])
    masks = small.action_mask(0)
    vectors = tree_vectors(small, 0, other).astype(np.float32)
    message = rf"{tables[obs_type].name} is keyed by obs_type='{obs_type}', and this vector is an {other}"
    with pytest.raises(ValueError, match=message):
        agent.action_probabilities({"observation": vectors[0], "action_mask": masks[0]})
    with pytest.raises(ValueError, match=message):
        agent.action_probabilities_batch(vectors[:3], masks[:3])


def test_a_table_of_vectors_that_are_not_bytes_is_refused(tmp_path: Path, small: game_tree.GameTree) -> None:
    rows = small.information_states(0)[:2].astype(np.float32)
    rows[0, 0] = 256
    with pytest.raises(ValueError, match="whole numbers in 0..255"):
        save_table(tmp_path / "bad.npz", SMALL, rows, np.full((2, SMALL.num_actions), 1 / SMALL.num_actions), {}, INFO)
