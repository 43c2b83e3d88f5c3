"""The OpenSpiel example (DQN through rl_environment) and the OpenSpiel snippet of docs/integrations.md run."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import pytest

from tests.scripts import load_script

pytest.importorskip("pyspiel")
pytest.importorskip("tree")  # OpenSpiel's PyTorch DQN needs dm-tree (the openspiel extra)

ROOT = Path(__file__).resolve().parents[1]


def _example():
    return load_script("examples/openspiel_dqn.py", "openspiel_dqn")


def test_dqn_example_trains_and_reports(capsys: pytest.CaptureFixture[str]) -> None:
    example = _example()
    results = example.main(["--episodes", "0", "--eval-hands", "3", "--quiet"])
    assert list(results) == ["untrained DQN", "trained DQN", "heaviest (reference)"]
    for cells in results.values():
        assert list(cells) == ["random", "heaviest"]
        for points, won in cells.values():
            assert -168 <= points <= 168 and 0 <= won <= 1
    out = capsys.readouterr().out
    assert "0 training hands" in out and "trained DQN" in out


def test_dqn_learns_from_its_hands() -> None:
    import pyspiel
    from open_spiel.python import rl_environment

    example = _example()
    game = pyspiel.load_game("python_draw_dominoes")
    env = rl_environment.Environment(game, chance_event_sampler=rl_environment.ChanceEventSampler(0))
    learner = example.make_learner(env, episodes=40, seed=0)
    example.train(env, learner, 40, progress=False)
    assert learner.loss is not None and math.isfinite(float(learner.loss))  # gradient steps happened


def test_quickstart_snippet_runs(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(ROOT / "examples" / "quickstart" / "openspiel_game.py"), run_name="__main__")
    assert "zero-sum points of ISMCTSBot, heaviest, variety:" in capsys.readouterr().out
