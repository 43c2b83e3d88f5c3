"""``benchmarks/inference_accuracy.py``: hidden-tile models measured on another agent's play."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.hidden_tiles import HiddenTileModel, save_hidden_tile_model
from draw_env.observation import layout
from draw_env.rules import DrawGame
from tests.scripts import load_script


@pytest.fixture(scope="module")
def accuracy() -> Any:
    return load_script("benchmarks/inference_accuracy.py", "inference_accuracy")


def _model_file(path: Path, scale: float) -> Path:
    """A one-layer model of the 2-player game: logits 0 (the uniform model) at ``scale`` 0."""
    game = DrawGame(2)
    outputs = (game.num_players + 1) * game.num_tiles
    rng = np.random.default_rng(0)
    weights = (scale * rng.standard_normal((outputs, layout(game).size))).astype(np.float32)
    return save_hidden_tile_model(path, HiddenTileModel(((weights, np.zeros(outputs, np.float32)),), game))


def test_the_uniform_model_gains_nothing_and_another_model_is_measured(accuracy: Any, tmp_path: Path) -> None:
    flat, noisy = _model_file(tmp_path / "flat.npz", 0.0), _model_file(tmp_path / "noisy.npz", 0.5)
    out = tmp_path / "table.json"
    assert accuracy.main([str(flat), str(noisy), "--policy", "heaviest", "--games", "6", "--json", str(out)]) == 0
    table = json.loads(out.read_text())
    assert table["games"] == 6 and table["decisions"] > 6 * 4 and table["hidden_tiles"] > table["decisions"]
    rows = {row["model"]: row for row in table["rows"]}
    assert list(rows) == ["uniform", str(flat), str(noisy)]
    assert rows[str(flat)]["log_likelihood"] == pytest.approx(rows["uniform"]["log_likelihood"], abs=1e-9)
    assert rows[str(noisy)]["gain"] == pytest.approx(rows[str(noisy)]["log_likelihood"] - rows["uniform"]["log_likelihood"])
    assert rows[str(noisy)]["gain"] < -1e-3  # random weights make the truth less likely than uniform deals do
    again = tmp_path / "again.json"
    accuracy.main([str(flat), str(noisy), "--policy", "heaviest", "--games", "6", "--json", str(again)])
    repeated = json.loads(again.read_text())
    assert repeated.pop("play_cpu_seconds") >= 0 and table.pop("play_cpu_seconds") >= 0
    assert repeated == table  # the seed alone decides every figure


def test_bad_input_is_one_line_and_exit_2_and_the_model_survives(
    accuracy: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _model_file(tmp_path / "model.npz", 0.0)
    before = model.read_bytes()
    for argv in ([str(model), "--json", str(model)], [str(tmp_path / "missing.npz")],
                 [str(model), "--players", "3"], [str(model), "--policy", "no_such_agent"]):
        with pytest.raises(SystemExit) as exit_info:
            accuracy.main(argv)
        assert exit_info.value.code == 2
        message = capsys.readouterr().err.strip()
        assert message.startswith("inference_accuracy.py: error: ") and "\n" not in message
    assert model.read_bytes() == before
