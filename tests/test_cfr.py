"""The exact solver (CFR+ over the enumerated tree), its table of observations, and the ``tabular`` agent."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agents
import draw_env
from agents.tabular import TabularAgent, load_table, record_path, save_table
from arena.exploitability import agent_probabilities, exploitability, exploitability_of_tables
from draw_env.exact import game_tree
from draw_env.observation import layout
from draw_env.rules import DrawGame
from train.cfr.solver import SolverState, average_strategy, iterate, observation_table

SMALL = DrawGame(2, max_pip=2, hand_size=2, protected=1)


@pytest.fixture(scope="module")
def tree() -> game_tree.GameTree:
    return game_tree.build_tree(SMALL)


@pytest.fixture(scope="module")
def solved(tree: game_tree.GameTree) -> tuple[np.ndarray, np.ndarray]:
    state = SolverState.fresh(tree)
    iterate(tree, state, 256)
    return average_strategy(tree, 0, state.strategy_sums[0]), average_strategy(tree, 1, state.strategy_sums[1])


def test_cfr_plus_converges_towards_an_equilibrium(tree: game_tree.GameTree) -> None:
    state = SolverState.fresh(tree)
    curve = []
    for _ in range(3):
        iterate(tree, state, 16 if not curve else state.iteration * 3)
        averages = tuple(average_strategy(tree, seat, state.strategy_sums[seat]) for seat in (0, 1))
        curve.append(exploitability_of_tables(tree, averages).exploitability)
    assert all(later < earlier for earlier, later in zip(curve, curve[1:]))
    assert curve[0] > 1e-3 and curve[-1] < 1e-4  # 16 iterations, then 64 and 256


def test_the_uniform_start_is_the_random_agent(tree: game_tree.GameTree) -> None:
    state = SolverState.fresh(tree)
    uniform = tuple(average_strategy(tree, seat, state.strategy_sums[seat]) for seat in (0, 1))
    random_agent = exploitability(tree, agent_probabilities(agents.make("random")))
    assert exploitability_of_tables(tree, uniform).exploitability == pytest.approx(random_agent.exploitability, abs=1e-12)


def test_the_table_of_observations_plays_the_solution(tree: game_tree.GameTree, solved: tuple) -> None:
    observations, probabilities = observation_table(tree, solved)
    assert observations.dtype == np.uint8 and len(np.unique(observations, axis=0)) == len(observations)
    assert np.allclose(probabilities.sum(axis=1), 1.0)
    index = {row.tobytes(): i for i, row in enumerate(observations)}

    def table(rows: np.ndarray, masks: np.ndarray) -> np.ndarray:
        answers = probabilities[[index[row.astype(np.uint8).tobytes()] for row in rows]]
        assert np.all(answers[masks == 0] == 0)
        return answers

    solution = exploitability_of_tables(tree, solved).exploitability
    played = exploitability(tree, table).exploitability
    assert played == pytest.approx(solution, abs=1e-4)


def _saved(tmp_path: Path, tree: game_tree.GameTree, solved: tuple) -> Path:
    observations, probabilities = observation_table(tree, solved)
    return save_table(tmp_path / "policy.npz", SMALL, observations, probabilities, {"solver": "CFR+"})


def test_the_tabular_agent_plays_a_hand_of_its_variant(tmp_path: Path, tree: game_tree.GameTree, solved: tuple) -> None:
    path = _saved(tmp_path, tree, solved)
    agent = TabularAgent(path, seed=0)
    env = draw_env.env(**SMALL.variant)
    env.reset(seed=3)
    for _name in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        probabilities = agent.action_probabilities(observation)
        assert probabilities.sum() == pytest.approx(1.0) and np.all(probabilities[observation["action_mask"] == 0] == 0)
        action = agent.act(observation)
        assert probabilities[action] > 0
        env.step(action)
    other = draw_env.env(max_pip=3, hand_size=2)
    other.reset(seed=0)
    with pytest.raises(ValueError, match="plays one 2-player hand of max_pip=2, hand_size=2, protected=1"):
        agent.act(other.last()[0])


def test_a_table_reads_back_what_was_written(tmp_path: Path, tree: game_tree.GameTree, solved: tuple) -> None:
    path = _saved(tmp_path, tree, solved)
    game, _, observations, probabilities = load_table(path)
    expected = observation_table(tree, solved)
    assert game == SMALL
    assert np.array_equal(observations, expected[0])
    assert np.allclose(probabilities, expected[1], atol=1e-6)
    assert json.loads(record_path(path).read_text())["format"] == "draw-dominoes-tabular-policy"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r, a: r.update(format="other"), "'format' must be"),
        (lambda r, a: r.update(version=3), r"'version' must be 2 \(this code reads version 1, 2\)"),
        (lambda r, a: r.update(sha256="0" * 64), "'sha256' does not match"),
        (lambda r, a: r.update(provenance=[1]), "'provenance' must be a JSON object"),
        (lambda r, a: r.update(max_pip=12), "max_pip"),
        (lambda r, a: r.update(hand_size=9), "hand_size=9"),
        (lambda r, a: a.update(extra=np.zeros(1)), "arrays must be observations and probabilities"),
        (lambda r, a: a.update(probabilities=a["probabilities"][:, :5]), "probabilities must be float32"),
        (lambda r, a: a.update(observations=a["observations"].astype(np.int64)), "observations must be uint8"),
        (lambda r, a: a.update(probabilities=a["probabilities"] * 2), "sum to 1"),
        (lambda r, a: a["probabilities"].__setitem__((0, 0), np.nan), "finite"),
    ],
)
def test_a_hostile_table_is_one_value_error_naming_the_file(
    tmp_path: Path, tree: game_tree.GameTree, solved: tuple, change, message: str
) -> None:
    path = _saved(tmp_path, tree, solved)
    record = json.loads(record_path(path).read_text())
    with np.load(path) as data:
        arrays = {name: data[name].copy() for name in data.files}
    np.savez(path, **arrays)
    record["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()  # a pair that matches, then the change
    change(record, arrays)
    record_path(path).write_text(json.dumps(record))
    np.savez(path, **arrays)
    if "sha256" not in message:  # the arrays changed: the record describes them, as a writer would
        record["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        record_path(path).write_text(json.dumps(record))
    with pytest.raises(ValueError, match=message) as raised:
        TabularAgent(path)
    assert "policy" in str(raised.value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mangled_table_files_give_only_value_errors(tmp_path: Path, data: st.DataObject) -> None:
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    observations = np.zeros((2, layout(SMALL).size), np.uint8)
    observations[1, 0] = 1
    source = tmp_path / "source.npz"
    np.savez_compressed(source, observations=observations, probabilities=np.eye(2, 14, dtype=np.float32))
    blob = bytearray(source.read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        blob[rng.randrange(len(blob))] = rng.randrange(256)
    target = tmp_path / "policy.npz"
    target.write_bytes(bytes(blob))
    record = {"format": "draw-dominoes-tabular-policy", "version": 1, "max_pip": 2, "hand_size": 2, "protected": 1}
    record_path(target).write_text(json.dumps(record))
    try:
        load_table(target)  # a change that leaves a valid table is fine; any failure is one ValueError
    except ValueError as error:
        assert str(target) in str(error) or "policy" in str(error)


def _config(tmp_path: Path, **keys: object) -> Path:
    settings = {"pipeline": "cfr", "max_pip": 2, "hand_size": 2, "protected": 1, "output_dir": str(tmp_path / "run"),
                "progress_bar": False, **keys}
    path = tmp_path / "cfr.yaml"
    path.write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in settings.items()))
    return path


def test_draw_train_solves_continues_and_writes_a_policy_that_plays(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from train.cli import main

    config = _config(tmp_path, iterations=32)
    assert main(["--config", str(config)]) == 0
    run = tmp_path / "run"
    first = json.loads((run / "summary.json").read_text())
    assert first["iterations"] == 32
    curve = json.loads((run / "curve.json").read_text())
    assert [point["iteration"] for point in curve] == [1, 2, 4, 8, 16, 32]
    assert main(["--config", str(config), "iterations=128"]) == 0  # continues from 32
    second = json.loads((run / "summary.json").read_text())
    curve = json.loads((run / "curve.json").read_text())
    assert second["iterations"] == 128 and [point["iteration"] for point in curve][-3:] == [32, 64, 128]
    assert second["exploitability"] < first["exploitability"]
    # The table as played has the exploitability draw-exploit measures for it.
    from arena.exploit_cli import main as exploit

    capsys.readouterr()
    assert exploit([f"tabular:path={run / 'policy.npz'}", "--max-pip", "2", "--hand-size", "2", "--protected", "1",
                    "--quiet"]) == 0
    measured = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert measured["exploitability"] == pytest.approx(second["table_exploitability"], abs=1e-6)
    assert (run / "curve.png").stat().st_size > 0


def test_a_game_too_large_to_solve_is_one_line_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from train.cli import main

    config = _config(tmp_path, max_pip=6, hand_size=7, protected=2)
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(config)])
    assert stopped.value.code == 2
    assert "GiB" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_rerun_never_writes_through_a_link_in_its_folder(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from train.cli import main

    config = _config(tmp_path, iterations=4)
    assert main(["--config", str(config)]) == 0
    run = tmp_path / "run"
    (tmp_path / "theirs.png").write_bytes(b"theirs")
    (run / "curve.png").unlink()
    (run / "curve.png").symlink_to(tmp_path / "theirs.png")
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(config), "iterations=8"])  # a free key: the run continues
    (error,) = capsys.readouterr().err.strip().splitlines()
    assert stopped.value.code == 2 and "curve.png' in the run directory" in error and "is a symbolic link" in error
    assert (tmp_path / "theirs.png").read_bytes() == b"theirs"


def _slow_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the solver's first compiled call cost 0.5 CPU-s, as a compile does on a fresh cache."""
    import time

    from train.cfr import solver

    compiled = solver._half_iteration
    calls = []

    def half_iteration(*args: object) -> None:
        if not calls:
            end = time.process_time() + 0.5
            while time.process_time() < end:
                pass
        calls.append(1)
        compiled(*args)

    monkeypatch.setattr(solver, "_half_iteration", half_iteration)


def test_the_solvers_compile_is_not_counted_as_solving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from train.bench import protocol
    from train.cli import main

    _slow_first_call(monkeypatch)
    assert main(["--config", str(_config(tmp_path, iterations=2))]) == 0
    curve = json.loads((tmp_path / "run" / "curve.json").read_text())
    assert curve[0]["iteration"] == 1 and curve[0]["cpu_seconds"] < 0.25
    # The benchmark's cell alike: its first curve point counts iterations only.
    _slow_first_call(monkeypatch)
    points: list[float] = []
    cell = protocol.Cell("cfr", protocol.GAMES["micro"], 0, protocol.Budget(env_steps=200_000), {}, 2)
    protocol.algorithm("cfr")(cell, tmp_path, lambda steps, seconds, policy: points.append(seconds))
    assert len(points) == 2 and points[0] < 0.25 and points[0] <= points[1]


def test_the_progress_bar_expects_where_the_run_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture) -> None:
    """Not at ``iterations`` when the target comes first: at most a few times the iterations the
    target took, once two measurements tell the pace; and a line while the table is built."""
    import tqdm.auto

    from train.cli import main

    totals: list[float] = []

    class Recorded(tqdm.auto.tqdm):  # type: ignore[misc, name-defined]
        def __setattr__(self, name: str, value: object) -> None:
            if name == "total":
                totals.append(value)  # type: ignore[arg-type]
            super().__setattr__(name, value)

    monkeypatch.setattr(tqdm.auto, "tqdm", Recorded)
    config = _config(tmp_path, iterations=10**9, target=0.0001, progress_bar=True)
    assert main(["--config", str(config)]) == 0
    stopped = json.loads((tmp_path / "run" / "summary.json").read_text())["iterations"]
    assert stopped < 4096 and totals[-1] == stopped
    assert max(totals[3:]) <= 8 * stopped, totals  # after iterations 1, 2 and 4: the target's pace
    assert "DCFR: building the policy table" in capsys.readouterr().err  # the default algorithm's name
