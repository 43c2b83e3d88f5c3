"""The solver's three update rules (CFR+, Predictive CFR+, DCFR): their formulas against a plain
reference, their convergence, their checkpoints, and the config's choice of one."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import numpy as np
import pytest

from arena.exploitability import exploitability_of_tables
from draw_env.exact import game_tree
from draw_env.rules import DrawGame
from train.cfr.config import CfrConfig
from train.cfr.solver import ALGORITHMS, Rule, SolverState, average_strategy, iterate

MICRO = DrawGame(2, max_pip=2, hand_size=1, protected=2)
#: DCFR at other discounts than the defaults as well, so that alpha, beta and gamma are each tested.
RULES = [Rule("cfr_plus"), Rule("pcfr_plus"), Rule("dcfr"), Rule("dcfr", alpha=0.5, beta=-1.0, gamma=3.0)]


@pytest.fixture(scope="module")
def micro() -> game_tree.GameTree:
    return game_tree.build_tree(MICRO)


def _counterfactual_regrets(
    tree: game_tree.GameTree, seat: int, strategies: list[np.ndarray]
) -> tuple[np.ndarray, dict[int, float]]:
    """A recursive walk of every history: ``seat``'s instantaneous counterfactual regrets per
    entry, and its own reach of each of its information states (by its first entry)."""
    instant = np.zeros(len(tree.actions[seat]))
    own_reach: dict[int, float] = {}

    def walk(node: int, own: float, other: float) -> float:
        acting = int(tree.player[node])
        if acting < 0:
            return float(tree.utility[node])  # seat 0's points
        start = int(tree.action_start[acting][tree.infoset[node]])
        count = int(tree.num_children[node])
        first = int(tree.first_child[node])
        played = strategies[acting][start:start + count]
        if acting == seat:
            own_reach[start] = own  # perfect recall: one reach per information state
            values = [walk(first + k, own * played[k], other) for k in range(count)]
        else:
            values = [walk(first + k, own, other * played[k]) for k in range(count)]
        value = float(np.dot(played, values))
        if acting == seat:
            sign = 1.0 if seat == 0 else -1.0
            for k in range(count):
                instant[start + k] += other * sign * (values[k] - value)
        return value

    for deal in range(tree.num_deals):
        walk(deal, 1.0, 1.0 / tree.num_deals)
    return instant, own_reach


def _reference(tree: game_tree.GameTree, rule: Rule, iterations: int) -> dict[str, list[np.ndarray]]:
    """The rule's iterations in plain Python from the papers' formulas: per seat (alternating
    updates) the walk of :func:`_counterfactual_regrets`, then the update of each entry."""
    sizes = [len(tree.actions[seat]) for seat in (0, 1)]
    regrets = [np.zeros(n) for n in sizes]
    sums = [np.zeros(n) for n in sizes]
    predictions = [np.zeros(n) for n in sizes]

    def matched(seat: int) -> np.ndarray:
        start = tree.action_start[seat]
        strategy = np.zeros(sizes[seat])
        for index in range(len(start) - 1):
            part = slice(start[index], start[index + 1])
            positive = np.maximum(regrets[seat][part] + predictions[seat][part], 0.0)
            count = start[index + 1] - start[index]
            strategy[part] = positive / positive.sum() if positive.sum() > 0 else 1.0 / count
        return strategy

    strategies = [matched(0), matched(1)]
    for t in range(1, iterations + 1):
        weight = {"cfr_plus": t, "pcfr_plus": t**2, "dcfr": t**rule.gamma}[rule.algorithm]
        for seat in (0, 1):
            instant, own_reach = _counterfactual_regrets(tree, seat, strategies)
            for start, own in own_reach.items():
                count = int(np.searchsorted(tree.action_start[seat], start, side="right"))
                stop = int(tree.action_start[seat][count])
                sums[seat][start:stop] += weight * own * strategies[seat][start:stop]
            if rule.algorithm == "dcfr":
                total = regrets[seat] + instant
                regrets[seat] = np.where(total >= 0, total * t**rule.alpha / (t**rule.alpha + 1),
                                         total * t**rule.beta / (t**rule.beta + 1))
            else:
                regrets[seat] = np.maximum(regrets[seat] + instant, 0.0)
            if rule.algorithm == "pcfr_plus":
                predictions[seat] = instant
            strategies[seat] = matched(seat)
    return {"regrets": regrets, "strategy_sums": sums, "predictions": predictions}


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: f"{rule.algorithm}-{rule.alpha}-{rule.beta}-{rule.gamma}")
def test_each_rule_follows_its_formulas(micro: game_tree.GameTree, rule: Rule) -> None:
    state = SolverState.fresh(micro, rule)
    iterate(micro, state, 3)
    expected = _reference(micro, rule, 3)
    for seat in (0, 1):
        np.testing.assert_allclose(state.regrets[seat], expected["regrets"][seat], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(state.strategy_sums[seat], expected["strategy_sums"][seat], rtol=1e-12, atol=1e-15)
        if rule.predictive:
            np.testing.assert_allclose(state.predictions[seat], expected["predictions"][seat], rtol=1e-12, atol=1e-15)
        else:
            assert state.predictions[seat].shape == (0,)
    # Only DCFR keeps negative regrets.
    assert any(np.any(expected["regrets"][seat] < 0) for seat in (0, 1)) == (rule.algorithm == "dcfr")


def test_the_rules_give_different_iterates(micro: game_tree.GameTree) -> None:
    """CFR+, PCFR+ and DCFR differ by their third iteration (their regrets after it; before, PCFR+
    plays as CFR+: from regrets of zero, ``max(R + r, 0)`` is ``max(2r, 0)``, in proportion to
    ``max(r, 0)``)."""
    tables = []
    for rule in RULES:
        state = SolverState.fresh(micro, rule)
        iterate(micro, state, 3)
        tables.append(np.concatenate(state.regrets))
    for i in range(len(tables)):
        for j in range(i):
            assert not np.allclose(tables[i], tables[j])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_each_algorithm_converges_on_micro(micro: game_tree.GameTree, algorithm: str) -> None:
    state = SolverState.fresh(micro, Rule(algorithm))
    iterate(micro, state, 128)
    averages = average_strategy(micro, 0, state.strategy_sums[0]), average_strategy(micro, 1, state.strategy_sums[1])
    assert exploitability_of_tables(micro, averages).exploitability < 1e-4


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_continued_run_equals_an_uninterrupted_one(tmp_path: Path, algorithm: str) -> None:
    """Through draw-train's checkpoint (state.npz and progress.json): 8 iterations, then 8 more,
    end with the very tables and curve of 16 at once; and the table written plays at the
    solution's exploitability."""
    from train.cli import main

    finished = {}
    for name, steps in (("split", (8, 16)), ("whole", (16,))):
        for iterations in steps:
            config = _config(tmp_path / name, algorithm=algorithm, iterations=iterations, obs_type="information_state")
            assert main(["--config", str(config)]) == 0
        with np.load(tmp_path / name / "run" / "state.npz") as data:
            finished[name] = {key: data[key] for key in data.files}
        summary = json.loads((tmp_path / name / "run" / "summary.json").read_text())
        assert summary["iterations"] == 16 and summary["solver"] == Rule(algorithm).name
        # The table written plays the solution: the environment's best response finds it as exploitable.
        assert summary["table_exploitability"] == pytest.approx(summary["exploitability"], rel=1e-9)
    assert finished["split"].keys() == finished["whole"].keys()
    assert ("predictions_0" in finished["whole"]) == (algorithm == "pcfr_plus")
    for key, array in finished["whole"].items():
        assert np.array_equal(finished["split"][key], array), key
    curves = [json.loads((tmp_path / name / "run" / "curve.json").read_text()) for name in ("split", "whole")]
    assert [p["exploitability"] for p in curves[0]] == [p["exploitability"] for p in curves[1]]


def _config(folder: Path, **keys: object) -> Path:
    settings = {"pipeline": "cfr", "max_pip": 2, "hand_size": 1, "protected": 2, "output_dir": str(folder / "run"),
                "progress_bar": False, **keys}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cfr.yaml"
    path.write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in settings.items()))
    return path


def test_a_checkpoint_continues_only_under_its_algorithm(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from train.cli import main

    assert main(["--config", str(_config(tmp_path, algorithm="dcfr", iterations=4))]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(_config(tmp_path, algorithm="pcfr_plus", iterations=8))])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert stopped.value.code == 2 and "algorithm is 'dcfr' there, 'pcfr_plus' here" in line
    # A checkpoint whose progress says another algorithm than its config (edited, or copied in).
    progress = tmp_path / "run" / "progress.json"
    progress.write_text(progress.read_text().replace('"algorithm": "dcfr"', '"algorithm": "cfr_plus"'))
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(_config(tmp_path, algorithm="dcfr", iterations=8))])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert stopped.value.code == 2 and "written by CFR+, which algorithm: dcfr cannot continue" in line


def test_a_checkpoint_of_cfr_plus_lacks_what_pcfr_plus_needs(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The tables are checked by name against the algorithm: PCFR+'s predictions must be there."""
    from train.cli import main

    assert main(["--config", str(_config(tmp_path, algorithm="pcfr_plus", iterations=4))]) == 0
    state = tmp_path / "run" / "state.npz"
    with np.load(state) as data:
        arrays = {key: data[key] for key in data.files if not key.startswith("predictions")}
    np.savez(state, **arrays)
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(_config(tmp_path, algorithm="pcfr_plus", iterations=8))])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert stopped.value.code == 2 and "predictions_0" in line


def test_the_config_names_the_algorithms_of_the_solver() -> None:
    assert typing.get_args(CfrConfig.model_fields["algorithm"].annotation) == ALGORITHMS
    config = CfrConfig(algorithm="dcfr", dcfr_alpha=2.0, dcfr_beta=-0.5, dcfr_gamma=3.0)
    assert config.rule() == Rule("dcfr", 2.0, -0.5, 3.0)


def test_an_unknown_algorithm_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from train.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(_config(tmp_path, algorithm="pcfr"))])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert stopped.value.code == 2 and "'algorithm' must be one of 'cfr_plus', 'pcfr_plus', 'dcfr', got 'pcfr'" in line
    assert not (tmp_path / "run").exists()
    with pytest.raises(ValueError, match="algorithm must be one of"):
        Rule("pcfr")


def test_the_comparison_keeps_its_curves_and_refuses_other_settings(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``benchmarks/cfr_algorithms.py`` on micro: a curve per algorithm, kept by a rerun; a file
    of another budget, or an edited one, is one error line."""
    from tests.scripts import load_script

    script = load_script("benchmarks/cfr_algorithms.py", "cfr_algorithms")
    path, figure = tmp_path / "curves.json", tmp_path / "curves.png"
    micro = ["--max-pip", "2", "--hand-size", "1", "--protected", "2", "--json", str(path)]
    assert script.main([*micro, "--cpu-seconds", "0.01", "--algorithms", "dcfr"]) == 0
    first = json.loads(path.read_text())
    assert list(first["curves"]) == ["dcfr"] and first["curves"]["dcfr"][-1]["cpu_seconds"] >= 0.01
    assert script.main([*micro, "--cpu-seconds", "0.01", "--png", str(figure)]) == 0
    second = json.loads(path.read_text())
    assert second["curves"]["dcfr"] == first["curves"]["dcfr"] and set(second["curves"]) == set(ALGORITHMS)
    assert figure.stat().st_size > 0
    capsys.readouterr()
    assert script.main([*micro, "--cpu-seconds", "0.02"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("cfr_algorithms.py: error: ") and "choose another --json" in line
    path.write_text(path.read_text().replace('"exploitability"', '"exploitable"', 1))
    assert script.main([*micro, "--cpu-seconds", "0.01"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"cfr_algorithms.py: error: {path}")


def test_draw_train_solves_through_the_learners_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline's iterations are the learner's loop (train.cfr.learner.learn): it is called
    once, and its table is the learner's own for the same iterations."""
    from arena.exploitability import tree_for
    from train.cfr import learner, run
    from train.cli import main
    from train.meter import Budget

    tables = []

    def spy(*args: typing.Any, **keys: typing.Any) -> typing.Any:
        tables.append(learner.learn(*args, **keys))
        return tables[-1]

    monkeypatch.setattr(run, "learn", spy)
    assert main(["--config", str(_config(tmp_path, iterations=16, obs_type="information_state"))]) == 0
    assert len(tables) == 1 and tables[0].about["iterations"] == 16
    config = CfrConfig(max_pip=2, hand_size=1, protected=2, obs_type="information_state")
    nodes = tree_for(config.game(), max_bytes=int(config.max_memory_gib * 1024**3)).num_nodes
    direct = learner.train(config, Budget(env_steps=16 * 2 * nodes))
    assert np.array_equal(direct.observations, tables[0].observations)
    assert np.array_equal(direct.probabilities, tables[0].probabilities)
