"""The commands on information states: draw-eval, draw-play, draw-web and draw-exploit give each
agent what it reads, by default from the agents' files, and take --obs-type."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agents.tabular import save_table
from arena import cli, exploit_cli
from arena.evaluation import evaluate
from arena.play import main as play_main
from arena.web.decisions import decide
from arena.web.games import GameStore, Setup
from draw_env.exact import game_tree
from draw_env.rules import DrawGame
from train.cfr.solver import (
    SolverState,
    average_strategy,
    information_table,
    iterate,
    mirrored_entries,
    symmetric_strategies,
)

MICRO = DrawGame(2, max_pip=2, hand_size=1, protected=2)
VARIANT = ["--max-pip", "2", "--hand-size", "1", "--protected", "2"]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The solver's table of micro keyed by information states (64 iterations)."""
    tree = game_tree.build_tree(MICRO)
    state = SolverState.fresh(tree)
    iterate(tree, state, 64)
    averages = average_strategy(tree, 0, state.strategy_sums[0]), average_strategy(tree, 1, state.strategy_sums[1])
    rows, probabilities = information_table(tree, symmetric_strategies(tree, averages, mirrored_entries(tree)))
    return save_table(tmp_path_factory.mktemp("table") / "info.npz", MICRO, rows, probabilities, {}, "information_state")


def test_a_table_of_information_states_and_agents_of_observations_share_a_table(table: Path) -> None:
    result = evaluate([f"tabular:path={table}", "heaviest"], num_games=20, episode="hand", progress=False,
                      **MICRO.variant)
    assert result.num_games == 20 and sum(p.wins for p in result.participants) > 0
    with pytest.raises(ValueError, match=r"agent 'tabular' reads information states \(its file .*info\.npz\)"):
        evaluate([f"tabular:path={table}", "heaviest"], num_games=2, episode="hand", progress=False,
                 obs_type="observation", **MICRO.variant)


def test_draw_eval_refuses_a_table_of_information_states_under_obs_type_observation_in_one_line(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_status:
        cli.main([f"tabular:path={table}", "heaviest", *VARIANT, "--episode", "hand", "--games", "2", "--quiet",
                  "--obs-type", "observation"])
    assert exit_status.value.code == 2
    error = capsys.readouterr().err.strip()
    assert "reads information states" in error and "\n" not in error
    assert cli.main([f"tabular:path={table}", "heaviest", *VARIANT, "--episode", "hand", "--games", "2", "--quiet",
                     "--obs-type", "information_state"]) == 0


def test_draw_play_seats_a_table_of_information_states(table: Path) -> None:
    out = io.StringIO()
    argv = ["--opponents", f"tabular:path={table}", "--hint-agent", "heaviest", *VARIANT, "--episode", "hand",
            "--seed", "1"]
    assert play_main(argv, stdin=io.StringIO("hint\n" + "1\n" * 50), stdout=out) == 0
    assert "=== Hand 1 over, " in out.getvalue() and "heaviest would play" in out.getvalue()


def test_draw_web_deals_a_table_of_information_states(table: Path) -> None:
    named = {"solver": f"tabular:path={table}"}
    game = GameStore(named=named, decide=decide).create(Setup(seats=("person", "solver"), episode="hand", seed=2,
                                               hint="heaviest", **MICRO.variant))
    assert game.env.unwrapped.obs_type == "information_state" and game.failure is None
    with pytest.raises(ValueError, match="reads information states"):
        GameStore(named=named, decide=decide, obs_type="observation").create(
            Setup(seats=("person", "solver"), episode="hand", seed=2, hint="heaviest", **MICRO.variant))


def test_draw_exploit_asks_every_agent_with_obs_type_information_state(capsys: pytest.CaptureFixture[str]) -> None:
    lines = []
    for obs_type in ("observation", "information_state"):
        assert exploit_cli.main(["heaviest", "random", *VARIANT, "--quiet", "--obs-type", obs_type]) == 0
        lines.append([json.loads(line) for line in capsys.readouterr().out.splitlines()])
    for plain, asked in zip(*lines, strict=True):
        assert asked["obs_type"] == "information_state" and plain["obs_type"] == "observation"
        assert asked["exploitability"] == pytest.approx(plain["exploitability"], abs=1e-12)


def test_a_network_of_information_states_plays_batched_as_step_by_step(tmp_path: Path) -> None:
    from agents.policy_file import save_policy_file
    from tests.test_information_agents import random_policy

    path = save_policy_file(random_policy(DrawGame(2), "information_state"), tmp_path / "info.npz")
    players = [f"network:path={path}", "heaviest"]
    batched = evaluate(players, num_games=8, episode="hand", progress=False)
    step_by_step = evaluate(players, num_games=8, episode="hand", progress=False, batched=False)
    assert [game.scores for game in batched.games] == [game.scores for game in step_by_step.games]
