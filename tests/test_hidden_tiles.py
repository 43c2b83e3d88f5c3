"""The hidden-tile model (agents/hidden_tiles.py) and its training pipeline (pipeline: inference).

Location probabilities are checked on positions of real games: known tiles exact, columns summing
to 1, ruled-out places exactly 0, the true place of every hidden tile allowed. The model file is
read as a hostile file (fuzzed as the policy files are), and refused for another game. A quick
training run beats the uniform model on its held-out hands and repeats exactly from its seed.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.hidden_tiles import (
    HiddenTileModel,
    UniformHiddenTiles,
    load_hidden_tile_model,
    observed_places,
    save_hidden_tile_model,
)
from agents.policy_file import record_path
from draw_env.observation import layout
from draw_env.rules import DrawGame
from draw_env.vector import DrawVectorEnv
from train.config import load
from train.inference.collect import ON_THE_LINE, true_places
from train.inference.config import InferenceConfig
from train.inference.run import run_inference

ROOT = Path(__file__).resolve().parents[1]
FUZZ = settings(max_examples=60, deadline=2000,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def positions(game: DrawGame, games: int = 60, steps: int = 40, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Observations of the seat to act in random play, and the true places (collect's rows)."""
    env = DrawVectorEnv(games, game.num_players, autoreset=True, max_pip=game.max_pip, hand_size=game.hand_size,
                        protected=game.protected)
    out = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    observations, places = [], []
    for _ in range(steps):
        observations.append(out.observation)
        places.append(true_places(game, np.array(env.states), out.current_player.astype(np.int64)))
        out = env.step(np.array([rng.choice(np.flatnonzero(mask)) for mask in out.action_mask]))
    return np.concatenate(observations), np.concatenate(places)


def small_model(game: DrawGame, seed: int = 0, provenance: dict[str, Any] | None = None) -> HiddenTileModel:
    rng = np.random.default_rng(seed)
    widths = [layout(game).size, 16, (game.num_players + 1) * game.num_tiles]
    layers = tuple(
        (rng.normal(0, 0.5, (out, inp)).astype(np.float32), rng.normal(0, 0.5, out).astype(np.float32))
        for inp, out in zip(widths, widths[1:])
    )
    return HiddenTileModel(layers, game, provenance=provenance or {})


GAMES = [DrawGame(2), DrawGame(3), DrawGame(4), DrawGame(2, 3, 3, 3)]


@pytest.mark.parametrize("game", GAMES, ids=lambda game: f"{game.num_players}p-{game.max_pip}")
def test_known_tiles_are_exact_columns_sum_to_one_and_ruled_out_places_are_zero(game: DrawGame) -> None:
    observations, truth = positions(game)
    places = observed_places(game, observations)
    for model in (UniformHiddenTiles(game), small_model(game)):
        probabilities = model.location_probabilities_batch(observations)
        assert probabilities.shape == (len(observations), game.num_players + 1, game.num_tiles)
        assert probabilities.dtype == np.float64
        np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-12)
        assert (probabilities[~places.allowed] == 0).all()
        own = observations[:, : game.num_tiles] > 0.5  # the layout's first block: the observer's hand
        assert (probabilities[:, 0][own] == 1).all()
        hidden = places.hidden
        assert (probabilities[:, 0][hidden] == 0).all()
        # A tile on the line: 1 in the row of the seat that placed it.
        line = truth == ON_THE_LINE
        assert line.any() and (probabilities.max(axis=1)[line] == 1).all()
        # Every hidden tile's true place is allowed and gets a positive probability.
        rows = np.where(hidden, truth, 0)
        chosen = np.take_along_axis(probabilities, rows[:, None, :].astype(np.intp), axis=1)[:, 0]
        assert (chosen[hidden] > 0).all()
    # Balanced: each row's hidden tiles add up to its count, on average within a hundredth.
    balanced = UniformHiddenTiles(game).location_probabilities_batch(observations)
    sums = (balanced * places.hidden[:, None, :]).sum(axis=2)
    assert np.abs(sums - places.counts).mean() < 0.01
    one = UniformHiddenTiles(game).location_probabilities(observations[5])
    np.testing.assert_array_equal(one, balanced[5])


def test_a_seat_that_passed_holds_no_tile_of_the_values_it_lacks() -> None:
    game = DrawGame(2)
    observations, _ = positions(game, games=200, steps=60)
    observed = layout(game)
    lacks = observations[:, observed.offsets["lacks"] : observed.offsets["lacks"] + 4 * 7].reshape(-1, 4, 7)
    opponent_lacks = lacks[:, 1] > 0.5
    assert opponent_lacks.any()
    probabilities = UniformHiddenTiles(game).location_probabilities_batch(observations)
    hidden = observed_places(game, observations).hidden
    checked = 0
    for row, value in zip(*np.nonzero(opponent_lacks)):
        for tile, (low, high) in enumerate(game.tiles.tiles):
            if value in (low, high) and hidden[row, tile]:
                assert probabilities[row, 1, tile] == 0
                assert probabilities[row, 2, tile] == 1  # the boneyard, the one place left in 2 players
                checked += 1
    assert checked > 100


def test_the_model_file_round_trips_and_is_refused_for_another_game(tmp_path: Path) -> None:
    game = DrawGame(3)
    model = small_model(game, provenance={"note": "test"})
    path = save_hidden_tile_model(tmp_path / "m.npz", model)
    loaded = load_hidden_tile_model(path, game)
    assert loaded.provenance == {"note": "test"} and loaded.game == game
    observations, _ = positions(game, games=10, steps=5)
    np.testing.assert_array_equal(loaded.location_probabilities_batch(observations),
                                  model.location_probabilities_batch(observations))
    with pytest.raises(ValueError, match=r"m\.json: 'num_players' is 3, but the game played has num_players=2"):
        load_hidden_tile_model(path, DrawGame(2))
    with pytest.raises(ValueError, match="'max_pip' is 6"):
        load_hidden_tile_model(path, DrawGame(3, max_pip=7))
    with pytest.raises(ValueError, match=r"must end in \.npz"):
        save_hidden_tile_model(tmp_path / "m.bin", model)


BASE = small_model(DrawGame(2))


def _saved(tmp_path: Path) -> Path:
    return save_hidden_tile_model(tmp_path / "model.npz", BASE)


def _load_or_refuse(path: Path) -> HiddenTileModel | None:
    try:
        return load_hidden_tile_model(path)
    except ValueError as error:
        assert str(path.with_suffix("")) in str(error), error  # it names the file
        return None


@FUZZ
@given(edits=st.lists(st.tuples(st.sampled_from(["format", "version", "num_players", "max_pip", "hand_size",
                                                  "protected", "activation", "balancing", "widths", "arrays",
                                                  "sha256", "provenance", "extra"]),
                                 st.none() | st.booleans() | st.integers(-3, 300) | st.text(max_size=8)
                                 | st.lists(st.integers(-1, 300), max_size=4)),
                      min_size=1, max_size=4),
       drop=st.booleans())
def test_fuzz_hidden_tile_records(tmp_path: Path, edits: list[tuple[str, Any]], drop: bool) -> None:
    path = _saved(tmp_path)
    record = json.loads(record_path(path).read_text())
    for key, value in edits:
        if drop:
            record.pop(key, None)
        else:
            record[key] = value
    record_path(path).write_text(json.dumps(record))
    model = _load_or_refuse(path)
    if model is not None:  # only edits that left a valid model
        assert model.widths == BASE.widths


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6))
def test_fuzz_hidden_tile_archives(tmp_path: Path, edits: list[tuple[int, int]]) -> None:
    path = _saved(tmp_path)
    data = bytearray(path.read_bytes())
    # Mostly the structure: zip headers and .npy headers near the start of each member.
    for offset, value in edits:
        data[offset % len(data)] = value
    path.write_bytes(bytes(data))
    record = json.loads(record_path(path).read_text())
    import hashlib

    record["sha256"] = hashlib.sha256(bytes(data)).hexdigest()  # past the checksum: the arrays are read
    record_path(path).write_text(json.dumps(record))
    model = _load_or_refuse(path)
    if model is not None:
        assert model.widths == BASE.widths


def test_arrays_of_another_shape_or_dtype_are_refused_naming_the_field(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    arrays = dict(np.load(path))
    arrays["layer/0/bias"] = arrays["layer/0/bias"].astype(np.float64)
    np.savez(path, **arrays)
    record = json.loads(record_path(path).read_text())
    import hashlib

    record["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    record_path(path).write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"model\.npz.*layer/0/bias: arrays must be float32"):
        load_hidden_tile_model(path)
    assert zipfile.is_zipfile(path)


def quick(output: Path, *overrides: str) -> InferenceConfig:
    return load(InferenceConfig, ROOT / "configs" / "inference_quick.yaml",
                [f"output_dir={output}", "progress_bar=false", *overrides])


def test_a_quick_run_beats_the_uniform_model_and_repeats_from_its_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = run_inference(quick(tmp_path / "a"))
    assert first["log_likelihood"] > first["uniform_log_likelihood"]
    assert first["gain"] > 0 and first["validation_hidden_tiles"] > 10_000
    saved = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert saved["log_likelihood"] == first["log_likelihood"]
    model = load_hidden_tile_model(tmp_path / "a" / "hidden_tiles.npz", DrawGame(2))
    assert model.widths == [layout(DrawGame(2)).size, 32, 84]
    # A rerun of a finished run prints its results and changes nothing.
    again = run_inference(quick(tmp_path / "a"))
    assert again["log_likelihood"] == first["log_likelihood"]
    assert "is complete" in capsys.readouterr().out


def test_the_model_keeps_the_epoch_with_the_best_held_out_figure(tmp_path: Path) -> None:
    # Few hands, a wide layer and a fast rate: the held-out figure peaks and falls (seeded, so it
    # always does here), and the file must hold the peak's weights, not the last epoch's.
    summary = run_inference(quick(tmp_path, "games=300", "n_envs=150", "epochs=5", "net_arch=[128]",
                                  "learning_rate=0.01"))
    measured = summary["epoch_validation_log_likelihoods"]
    assert summary["best_epoch"] == 1 + measured.index(max(measured)) < len(measured)
    assert measured[-1] < max(measured) - 1e-3
    assert summary["log_likelihood"] == pytest.approx(max(measured), abs=1e-4)
    record = json.loads((tmp_path / "hidden_tiles.json").read_text())
    assert record["provenance"]["best_epoch"] == summary["best_epoch"]


def test_the_same_seed_writes_the_same_file(tmp_path: Path) -> None:
    small = ("games=300", "n_envs=150", "epochs=1")
    for name in ("a", "b"):
        run_inference(quick(tmp_path / name, *small))
    assert (tmp_path / "a" / "hidden_tiles.npz").read_bytes() == (tmp_path / "b" / "hidden_tiles.npz").read_bytes()
    records = [json.loads((tmp_path / name / "hidden_tiles.json").read_text()) for name in ("a", "b")]
    for record in records:
        del record["provenance"]["config"]["output_dir"]
    assert records[0] == records[1]
    run_inference(quick(tmp_path / "c", *small, "seed=1"))
    assert (tmp_path / "a" / "hidden_tiles.npz").read_bytes() != (tmp_path / "c" / "hidden_tiles.npz").read_bytes()


def test_a_config_must_hold_out_and_train_on_games() -> None:
    from train.config import ConfigError

    with pytest.raises(ConfigError, match="must hold out at least one game"):
        load(InferenceConfig, None, ["games=4", "validation=0.1"])
    with pytest.raises(ConfigError, match="config key 'policy'"):
        load(InferenceConfig, None, ["policy=nobody"])
