"""RLlib: the checks of ``rllib_checks.py`` run in ``.venv-rllib``; the config loader and a
draw-bench cell (which trains in ``.venv-rllib``) run here.

RLlib pins gymnasium 1.2.x, so it lives in its own venv, which ``make test`` builds first
(``make integrations-env``). Without that venv this test fails and says how to build it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
RLLIB_PYTHON = ROOT / ".venv-rllib" / "bin" / "python"


def test_rllib_checks_pass_in_the_rllib_venv() -> None:
    assert RLLIB_PYTHON.exists(), f"{RLLIB_PYTHON} is missing: run `make integrations-env` (make test does)"
    completed = subprocess.run(
        [
            str(RLLIB_PYTHON),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--noconftest",
            str(ROOT / "tests" / "integrations" / "rllib_checks.py"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    sys.stdout.write(completed.stdout[-5000:])
    assert completed.returncode == 0, completed.stdout[-5000:] + completed.stderr[-3000:]
    assert (
        " passed" in completed.stdout.splitlines()[-1] and "failed" not in completed.stdout.splitlines()[-1]
    )


@pytest.fixture(scope="module")
def selfplay(script: Callable[[str], ModuleType]) -> ModuleType:
    """The training script; its config loader needs only PyYAML, so it loads in the main venv."""
    return script("train/rllib_selfplay.py")


def test_shipped_config_loads_and_overrides_apply(selfplay: ModuleType) -> None:
    config = selfplay.load_config(ROOT / "configs" / "rllib_selfplay.yaml", ["iterations=3", "ppo.learning_rate=1e-4"])
    assert config.iterations == 3 and config.ppo.learning_rate == 1e-4
    assert config.output_dir == "runs/rllib_selfplay"
    assert set(config.to_dict()) == set(selfplay.RLlibConfig.model_fields)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("iteratons: 3", "'iteratons' is not known"),
        ("ppo: {learnig_rate: 0.1}", "'ppo.learnig_rate' is not known"),
        ("ppo: {lr: 0.1}", "'ppo.lr' is now ppo.learning_rate"),
        ("ppo: {learning_rate: fast}", "'ppo.learning_rate' must be a finite number"),
        ("ppo: {gamma: .nan}", "'ppo.gamma' must be a finite number"),
        ("env_runners: {num_env_runners: -1}", "num_env_runners"),
        ("iterations: 0", "'iterations' must be an integer >= 1"),
        ("model: {vf_share_layers: 1}", "'model.vf_share_layers' must be true or false"),
        ("- a list", "mapping at the top level"),
        ("seed: 1\nseed: 2", "duplicate key 'seed'"),
    ],
)
def test_bad_config_is_an_error_naming_the_key(
    selfplay: ModuleType, tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        selfplay.load_config(path)


@pytest.mark.slow
def test_a_bench_cell_on_micro_saves_the_policy_it_measured(tmp_path: Path) -> None:
    """draw-bench's rllib_ppo on micro (``train/bench/rllib_cell.py`` in ``.venv-rllib``): a few
    thousand steps; the saved policy plays micro, and the record's final figure is draw-exploit's."""
    from agents.policy_file import load_policy_file
    from arena.exploitability import agent_probabilities, exploitability
    from arena.specs import build_agent, parse_agent_spec
    from train.bench.config import BenchConfig
    from train.bench.metrics import game_tree
    from train.bench.protocol import GAMES
    from train.bench.suite import run_suite
    from train.config import build

    assert RLLIB_PYTHON.exists(), f"{RLLIB_PYTHON} is missing: run `make integrations-env` (make test does)"
    settings = tmp_path / "settings"
    settings.mkdir()
    (settings / "rllib_ppo.yaml").write_text(
        "rllib:\n  opponents: {self: 1.0}\n  env_runners: {num_env_runners: 0, num_envs_per_env_runner: 4}\n"
        "  ppo: {batch_size: 500, minibatch_size: 125, update_epochs: 1}\n"
        "  model: {fcnet_hiddens: [16]}\n  evaluation: {num_games: 0}\n"
    )
    config = build(BenchConfig, {"algorithms": {"rllib_ppo": ["micro"]}, "seeds": [0],
                                 "budgets": {"micro": {"env_steps": 2000}}, "curve_points": 1,
                                 "settings_dir": str(settings), "output_dir": str(tmp_path / "bench"),
                                 "progress_bar": False})
    run_suite(config, plots=False, reps=100)
    record = json.loads((tmp_path / "bench" / "cells" / "rllib_ppo-micro-s0.json").read_text())
    assert record["game"]["name"] == "micro" and record["used"]["env_steps"] >= 2000 and record["versions"]["ray"]
    name, kwargs = parse_agent_spec(record["final"]["spec"])
    assert load_policy_file(kwargs["path"]).game == GAMES["micro"].rules
    measured = exploitability(game_tree(GAMES["micro"]), agent_probabilities(build_agent(name, kwargs)))
    assert 0 < measured.exploitability == pytest.approx(record["final"]["value"], abs=1e-12)
