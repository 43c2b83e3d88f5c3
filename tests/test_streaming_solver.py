"""The solver without the tree (:mod:`train.cfr.streaming_solver`) against the stored tree's.

Both run the same alternating-update algorithm, the tree's on its stored sequence form, the
streaming one over the information states only, walking the histories; on small variants their
regrets, strategy sums and exploitability must agree to 1e-9 after each iteration from the same
state, for each update rule, and whole runs on ``micro`` give the same exploitability.
``draw-train`` runs it with ``method: streaming``: resumable, its checkpoint checked before it
is loaded, its memory bounded before the listing.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arena.exploitability import exploitability_of_tables
from draw_env.exact import game_tree, streaming
from draw_env.rules import DrawGame
from train.cfr import solver, streaming_solver

MICRO = DrawGame(2, max_pip=2, hand_size=1, protected=2)
#: Drawing, passing and blocked hands.
SMALL = DrawGame(2, max_pip=2, hand_size=2, protected=1)
RULES = [solver.Rule("cfr_plus"), solver.Rule("pcfr_plus"), solver.Rule("dcfr"),
         solver.Rule("dcfr", alpha=0.5, beta=-1.0, gamma=3.0)]


def _tree_entries(tree: game_tree.GameTree, halves: streaming_solver.Halves) -> list[list[np.ndarray]]:
    """Per opener and seat, the tree's entry of each streaming sequence (matched by the
    information-state vector, which identifies a seat's information state)."""
    entries = []
    for half in halves:
        vectors = half.add_vectors("information_state")
        per_seat = []
        for seat in (0, 1):
            infoset_of = {row.tobytes(): i for i, row in enumerate(tree.information_states(seat))}
            start, tree_start = half.action_start[seat], tree.action_start[seat]
            mapped = np.zeros(len(half.actions[seat]), np.int64)
            for state in range(half.num_states(seat)):
                infoset = infoset_of[vectors.rows[vectors.index[seat][state]].tobytes()]
                count = start[state + 1] - start[state]
                assert tree_start[infoset + 1] - tree_start[infoset] == count
                assert np.array_equal(tree.actions[seat][tree_start[infoset]:tree_start[infoset] + count],
                                      half.actions[seat][start[state]:start[state + 1]])
                mapped[start[state]:start[state + 1]] = np.arange(tree_start[infoset], tree_start[infoset] + count)
            per_seat.append(mapped)
        entries.append(per_seat)
    return entries


@pytest.mark.parametrize("game", [MICRO, SMALL], ids=["micro", "small"])
@pytest.mark.parametrize("rule", RULES, ids=lambda rule: f"{rule.algorithm}-{rule.alpha}")
def test_the_streaming_solver_computes_the_trees_iterates(game: DrawGame, rule: solver.Rule) -> None:
    tree = game_tree.build_tree(game)
    halves = streaming.enumerate_states(game, ())
    entries = _tree_entries(tree, halves)
    stored = solver.SolverState.fresh(tree, rule)
    streamed = streaming_solver.StreamingSolverState.fresh(halves, rule)
    for _ in range(5):
        solver.iterate(tree, stored, 1)
        streaming_solver.iterate(halves, streamed, 1)
        for half, mapped in zip(streamed.halves, entries, strict=True):
            for seat in (0, 1):
                np.testing.assert_allclose(half.regrets[seat], stored.regrets[seat][mapped[seat]], atol=1e-9, rtol=0)
                np.testing.assert_allclose(half.strategy_sums[seat], stored.strategy_sums[seat][mapped[seat]],
                                           atol=1e-9, rtol=0)
        expected = exploitability_of_tables(tree, solver.solution(tree, stored, None))
        values = streaming_solver.best_response_values(halves, streaming_solver.average_strategies(halves, streamed))
        assert values[0] == pytest.approx(expected.best_response[0], abs=1e-9)
        assert values[1] == pytest.approx(expected.best_response[1], abs=1e-9)
        # The next iteration starts from the tree's state: the two sum in different orders, and
        # where two actions tie, rounding noise (a regret of 1e-17 against 0) breaks the tie.
        for half, half_tables, mapped in zip(streamed.halves, halves, entries, strict=True):
            for seat in (0, 1):
                half.regrets[seat][:] = stored.regrets[seat][mapped[seat]]
                half.strategy_sums[seat][:] = stored.strategy_sums[seat][mapped[seat]]
                if rule.predictive:
                    half.predictions[seat][:] = stored.predictions[seat][mapped[seat]]
                solver.regret_matching(half.regrets[seat], half.predictions[seat], half_tables.action_start[seat],
                                       half.current[seat])
    assert streamed.iteration == 5 and expected.exploitability > 0


def test_a_seats_counterfactual_sums_skip_what_the_other_seat_never_plays() -> None:
    """Against a strategy that never draws, seat 0's sums under every draw of seat 1 are zero,
    and what the walk returns is what seat 0 wins where it never acts."""
    halves = streaming.enumerate_states(SMALL, ())
    half = halves[0]
    strategies = []
    for seat in (0, 1):
        strategy = np.zeros(len(half.actions[seat]))
        solver.regret_matching(np.where(half.actions[seat] == 2 * SMALL.num_tiles, -1.0, 1.0), np.zeros(0),
                               half.action_start[seat], strategy)
        strategies.append(strategy)
    sums = np.zeros(len(half.actions[0]))
    streaming.counterfactual_sums(half, (strategies[0], strategies[1]), 0, sums)
    assert np.any(sums != 0)
    with pytest.raises(ValueError, match="sums must be float64"):
        streaming.counterfactual_sums(half, (strategies[0], strategies[1]), 0, np.zeros(3))
    with pytest.raises(ValueError, match=r"strategies\[1\] must hold one probability per sequence"):
        streaming.strategy_best_response_values(half, (strategies[0], strategies[1][:-1]))


def _config(folder: Path, **keys: object) -> Path:
    settings = {"pipeline": "cfr", "method": "streaming", "variant": "micro", "output_dir": str(folder / "run"),
                "progress_bar": False, **keys}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cfr.yaml"
    path.write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in settings.items()))
    return path


def test_draw_train_streams_resumes_and_measures_as_the_tree(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from train.cli import main

    assert main(["--config", str(_config(tmp_path / "a", iterations=6))]) == 0
    assert "streaming: no table written" in capsys.readouterr().out
    assert main(["--config", str(_config(tmp_path / "a", iterations=12))]) == 0  # continues
    assert main(["--config", str(_config(tmp_path / "b", iterations=12))]) == 0
    assert main(["--config", str(_config(tmp_path / "c", iterations=12, method="tree"))]) == 0
    resumed, straight, tree = (json.loads((tmp_path / name / "run" / "summary.json").read_text()) for name in "abc")
    assert resumed["iterations"] == straight["iterations"] == tree["iterations"] == 12
    assert resumed["exploitability"] == straight["exploitability"]
    assert straight["exploitability"] == pytest.approx(tree["exploitability"], abs=1e-12)
    assert (straight["info_states"], straight["nodes"]) == (tree["info_states"], tree["nodes"])
    curve = json.loads((tmp_path / "a" / "run" / "curve.json").read_text())
    assert [point["iteration"] for point in curve] == [1, 2, 4, 6, 8, 12]
    assert not (tmp_path / "a" / "run" / "policy.npz").exists()


def test_a_streaming_checkpoint_of_other_shapes_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from train.cli import main

    assert main(["--config", str(_config(tmp_path, iterations=2))]) == 0
    state = tmp_path / "run" / "state.npz"
    with np.load(state) as loaded:
        arrays = {name: loaded[name] for name in loaded.files}
    arrays["regrets_1_0"] = arrays["regrets_1_0"][:-1]
    np.savez(state, **arrays)
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(_config(tmp_path, iterations=4))])
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "state.npz" in line and "regrets_1_0 must be float64 of shape" in line


def test_a_game_beyond_the_memory_bound_is_refused_before_the_listing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from train.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(_config(tmp_path, variant="midi", max_memory_gib=1))])
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "information states of max_pip=3, hand_size=3, protected=2 number about" in line and "GiB allowed" in line
    assert not (tmp_path / "run" / "state.npz").exists()
