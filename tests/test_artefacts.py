"""The one writer and reader of npz + JSON artefacts (agents/artefacts.py) under its three formats.

Policy files, hidden-tile models and tables are written by :func:`agents.artefacts.save_artefact`
with one header (``format``, ``version``, ``sha256`` of the npz, ``provenance``) and read by
:func:`agents.artefacts.open_artefact`: each round-trips, a pair whose sha256 does not match is
refused naming the record, and whatever a hostile record or archive holds is one ValueError
naming the file. Tables written before (version 1: no sha256, ``about``) still read.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.artefacts import HEADER_KEYS, open_artefact, record_path, save_artefact
from agents.hidden_tiles import HiddenTileModel, load_hidden_tile_model, save_hidden_tile_model
from agents.policy_file import load_policy_file, save_policy_file
from agents.policy_network import shipped_policy
from agents.tabular import load_table, save_table
from draw_env.observation import layout
from draw_env.rules import DrawGame

SMALL = DrawGame(2, max_pip=2, hand_size=2, protected=1)
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _policy(tmp_path: Path) -> Path:
    weights = load_policy_file(shipped_policy(2))
    return save_policy_file(weights, tmp_path / "policy.npz")


def _model(tmp_path: Path) -> Path:
    game = DrawGame(2)
    rng = np.random.default_rng(0)
    widths = [layout(game).size, 8, (game.num_players + 1) * game.num_tiles]
    layers = tuple((rng.normal(0, 0.5, (out, inp)).astype(np.float32), rng.normal(0, 0.5, out).astype(np.float32))
                   for inp, out in zip(widths, widths[1:]))
    return save_hidden_tile_model(tmp_path / "model.npz", HiddenTileModel(layers, game, provenance={"run": "test"}))


def _table(tmp_path: Path) -> Path:
    rows, width = 4, layout(SMALL).size
    observations = np.zeros((rows, width), np.uint8)
    observations[:, :8] = np.unpackbits(np.arange(rows, dtype=np.uint8)[:, None], axis=1)
    probabilities = np.zeros((rows, SMALL.num_actions))
    probabilities[:, -1] = 1.0
    return save_table(tmp_path / "table.npz", SMALL, observations, probabilities, {"solver": "test"})


#: Each format: how the test writes one, and how the project reads it.
FORMATS: dict[str, tuple[Callable[[Path], Path], Callable[[Path], Any]]] = {
    "policy": (_policy, load_policy_file),
    "hidden tiles": (_model, load_hidden_tile_model),
    "table": (_table, load_table),
}


@pytest.mark.parametrize("kind", FORMATS)
def test_each_format_round_trips_through_the_one_writer_with_one_header(tmp_path: Path, kind: str) -> None:
    write, read = FORMATS[kind]
    path = write(tmp_path)
    record = json.loads(record_path(path).read_text())
    assert set(HEADER_KEYS) <= set(record) and list(record)[:2] == ["format", "version"]
    assert list(record)[-2:] == ["sha256", "provenance"] and isinstance(record["provenance"], dict)
    assert record["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    read(path)  # reads back
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, record_path(path).name])


def test_what_is_written_is_what_is_read(tmp_path: Path) -> None:
    weights = load_policy_file(shipped_policy(2))
    again = load_policy_file(save_policy_file(weights, tmp_path / "p.npz"))
    for (weight, bias), (weight2, bias2) in zip(weights.policy, again.policy, strict=True):
        assert np.array_equal(weight, weight2) and np.array_equal(bias, bias2)
    assert again.provenance == weights.provenance and again.value_unit == weights.value_unit
    model = load_hidden_tile_model(_model(tmp_path))
    assert model.provenance == {"run": "test"} and model.game == DrawGame(2)
    game, obs_type, observations, probabilities = load_table(_table(tmp_path))
    assert game == SMALL and obs_type == "observation" and len(observations) == 4
    assert probabilities[:, -1].tolist() == [1.0] * 4
    assert open_artefact(tmp_path / "table.npz", "table", "draw-dominoes-tabular-policy", 2).provenance == {"solver": "test"}


def test_the_shipped_policy_files_are_the_writers_output() -> None:
    """The shipped records carry the one header; their arrays are the ones their sha256 names."""
    for players in (2, 3, 4):
        path = shipped_policy(players)
        record = json.loads(record_path(path).read_text())
        assert list(record)[-2:] == ["sha256", "provenance"]
        assert record["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("kind", FORMATS)
def test_a_sha256_mismatch_is_refused_naming_the_record(tmp_path: Path, kind: str) -> None:
    write, read = FORMATS[kind]
    path = write(tmp_path)
    data = bytearray(path.read_bytes())
    data[-30] ^= 0xFF  # inside the zip's directory: another archive than the record describes
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError) as caught:
        read(path)
    assert str(caught.value).startswith(f"{record_path(path)}: 'sha256' does not match {path.name}")


@pytest.mark.parametrize("kind", FORMATS)
@pytest.mark.parametrize("sha", [None, "0", 7, "g" * 64])
def test_a_malformed_sha256_is_refused(tmp_path: Path, kind: str, sha: Any) -> None:
    write, read = FORMATS[kind]
    path = write(tmp_path)
    record = json.loads(record_path(path).read_text())
    record["sha256"] = sha
    record_path(path).write_text(json.dumps(record))
    with pytest.raises(ValueError, match=f"^{record_path(path)}: 'sha256' "):
        read(path)


def test_a_table_written_before_the_one_writer_still_reads(tmp_path: Path) -> None:
    path = _table(tmp_path)
    record = json.loads(record_path(path).read_text())
    older = {key: value for key, value in record.items() if key not in ("sha256", "provenance")}
    older.update(version=1, about={"solver": "CFR+"})
    record_path(path).write_text(json.dumps(older))
    assert load_table(path)[0] == SMALL
    assert open_artefact(path, "table", "draw-dominoes-tabular-policy", 2, older={1: {"about": "provenance"}}).provenance == {
        "solver": "CFR+"}
    # An older record that does name a sha256 is checked against it.
    older["sha256"] = "0" * 64
    record_path(path).write_text(json.dumps(older))
    with pytest.raises(ValueError, match="'sha256' does not match"):
        load_table(path)


def test_the_writer_refuses_a_path_not_npz_and_fields_that_are_header_fields(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"must end in \.npz"):
        save_artefact(tmp_path / "x.zip", "f", 1, {"a": np.zeros(1)}, {}, {})
    with pytest.raises(ValueError, match=r"header fields, got \['sha256'\]"):
        save_artefact(tmp_path / "x.npz", "f", 1, {"a": np.zeros(1)}, {"sha256": "mine"}, {})
    assert not list(tmp_path.iterdir())


def _refused_naming(path: Path, read: Callable[[Path], Any]) -> bool:
    """Read ``path``: True when refused with a ValueError naming the file (anything else fails)."""
    try:
        read(path)
    except ValueError as error:
        assert str(path.with_suffix("")) in str(error), error
        return True
    return False


_VALUES = (st.none() | st.booleans() | st.integers(-3, 300) | st.text(max_size=8) | st.lists(st.integers(-1, 300), max_size=3)
           | st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))


@FUZZ
@given(kind=st.sampled_from(list(FORMATS)),
       edits=st.lists(st.tuples(st.sampled_from([*HEADER_KEYS, "about", "rows", "obs_type", "num_players", "extra"]),
                                _VALUES), min_size=1, max_size=4),
       drop=st.booleans())
def test_fuzz_the_header_of_every_format(tmp_path: Path, kind: str, edits: list[tuple[str, Any]], drop: bool) -> None:
    write, read = FORMATS[kind]
    path = write(_fresh(tmp_path, kind))
    record = json.loads(record_path(path).read_text())
    for key, value in edits:
        if drop:
            record.pop(key, None)
        else:
            record[key] = value
    record_path(path).write_text(json.dumps(record))
    _refused_naming(path, read)


@FUZZ
@given(kind=st.sampled_from(list(FORMATS)), seed=st.integers(0, 2**32 - 1), count=st.integers(1, 8))
def test_fuzz_the_archive_of_every_format_past_its_checksum(tmp_path: Path, kind: str, seed: int, count: int) -> None:
    write, read = FORMATS[kind]
    path = write(_fresh(tmp_path, kind))
    rng = random.Random(seed)
    data = bytearray(path.read_bytes())
    for _ in range(count):
        data[rng.randrange(len(data))] = rng.randrange(256)
    path.write_bytes(bytes(data))
    record = json.loads(record_path(path).read_text())
    record["sha256"] = hashlib.sha256(bytes(data)).hexdigest()  # past the checksum: the arrays are read
    record_path(path).write_text(json.dumps(record))
    _refused_naming(path, read)


_EXAMPLES = itertools.count()


def _fresh(tmp_path: Path, kind: str) -> Path:
    """A new empty folder for one example (hypothesis runs many in one ``tmp_path``)."""
    folder = tmp_path / f"{kind.replace(' ', '_')}_{next(_EXAMPLES)}"
    folder.mkdir()
    return folder
