"""Fuzz the readers of files people exchange: mutated policy files, configs and run state.

Each test starts from a real file (a shipped policy, ``configs/quick.yaml``, the state files a
run writes), mutates it with hypothesis, and accepts only a result or a clean ``ValueError``
(``ConfigError`` is one): any other exception type, a run past the deadline or memory far beyond
the file's size fails. Each is bounded to a few seconds by ``max_examples`` and ``deadline``.
Random text to ``loads_json``/``loads_yaml`` and mutated bare ``.npz`` archives are fuzzed in
``tests/test_untrusted.py``.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tracemalloc
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.policy_file import PolicyWeights, load_policy_file, record_path
from agents.sb3_checkpoint import read_checkpoint
from tests.torch_archives import (
    archive_of,
    pickle_of,
    sb3_arrays,
    tensor,
    torch_archive,
    write_checkpoint,
    zip_of,
)
from train.config import ConfigError, load
from train.exit.config import ExitConfig
from train.selfplay.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "agents" / "policies" / "ppo_2p_distilled.npz"
SHIPPED_BYTES = SHIPPED.read_bytes()
SHIPPED_RECORD = json.loads(record_path(SHIPPED).read_text())
#: Offsets of the structure of the shipped archive: zip headers, directory entries, .npy headers.
STRUCTURE = sorted(
    match.start()
    for signature in (b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06", b"\x93NUMPY")
    for match in re.finditer(re.escape(signature), SHIPPED_BYTES)
)
#: The most memory one load may take: a few copies of the 1.8 MB file, never a claimed size.
MEMORY_BOUND = 64 * 1024 * 1024

FUZZ = settings(
    max_examples=60,
    deadline=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)


def load_bounded(path: Path) -> PolicyWeights | None:
    """``load_policy_file(path)``: weights, or ``None`` after a ``ValueError``; memory bounded."""
    tracemalloc.start()
    try:
        try:
            return load_policy_file(path)
        except ValueError as error:
            assert str(path.with_suffix("")) in str(error), error  # it names the file
            return None
        finally:
            _, peak = tracemalloc.get_traced_memory()
            assert peak < MEMORY_BOUND, peak
    finally:
        tracemalloc.stop()


def write_pair(folder: Path, data: bytes, record: dict[str, Any] | None = None, *, match_sha: bool = True) -> Path:
    target = folder / "fuzzed.npz"
    target.write_bytes(data)
    record = dict(SHIPPED_RECORD if record is None else record)
    if match_sha:
        record["sha256"] = hashlib.sha256(data).hexdigest()
    record_path(target).write_text(json.dumps(record))
    return target


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(STRUCTURE), st.integers(0, 120), st.integers(0, 255)), min_size=1, max_size=6))
def test_fuzz_policy_files_with_mutated_zip_and_npy_headers(tmp_path: Path, edits: list[tuple[int, int, int]]) -> None:
    data = bytearray(SHIPPED_BYTES)
    for start, offset, byte in edits:
        data[min(start + offset, len(data) - 1)] = byte
    load_bounded(write_pair(tmp_path, bytes(data)))


def _shipped_arrays() -> dict[str, np.ndarray]:
    with np.load(SHIPPED, allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


ARRAYS = _shipped_arrays()
EDITS = st.sampled_from(["rename", "reshape", "dtype", "drop", "extra", "zero_d", "transpose", "duplicate"])


@FUZZ
@given(st.lists(st.tuples(EDITS, st.sampled_from(sorted(ARRAYS)), st.text(min_size=1, max_size=12)), min_size=1, max_size=3))
def test_fuzz_policy_files_with_mutated_arrays(tmp_path: Path, edits: list[tuple[str, str, str]]) -> None:
    arrays = dict(ARRAYS)
    extra_members: list[tuple[str, bytes]] = []
    for edit, name, text in edits:
        if name not in arrays:
            continue
        if edit == "rename":
            arrays[text.replace("\x00", "")] = arrays.pop(name)
        elif edit == "reshape":
            arrays[name] = arrays[name].reshape(-1)
        elif edit == "dtype":
            arrays[name] = arrays[name].astype(np.float64)
        elif edit == "drop":
            del arrays[name]
        elif edit == "extra":
            arrays[f"extra/{len(text)}"] = np.zeros(len(text), np.float32)
        elif edit == "zero_d":
            arrays[name] = np.float32(len(text))
        elif edit == "transpose":
            arrays[name] = np.ascontiguousarray(arrays[name].T)
        else:
            extra_members.append((f"{name}.npy", text.encode()))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    if extra_members:
        with zipfile.ZipFile(buffer, "a") as archive, warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the duplicate names are the point
            for member, payload in extra_members:
                archive.writestr(member, payload)
    weights = load_bounded(write_pair(tmp_path, buffer.getvalue()))
    if weights is not None:  # only an edit that changed nothing the record describes
        assert {f"{net}/{i}/{part}" for net, layers in weights.networks().items() for i in range(len(layers)) for part in ("weight", "bias")} == set(ARRAYS)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(sorted(SHIPPED_RECORD)), JSON_VALUES), min_size=1, max_size=3), st.booleans())
def test_fuzz_policy_records(tmp_path: Path, edits: list[tuple[str, Any]], drop: bool) -> None:
    record = json.loads(json.dumps(SHIPPED_RECORD))
    for key, value in edits:
        if drop:
            record.pop(key, None)
        else:
            record[key] = value
    load_bounded(write_pair(tmp_path, SHIPPED_BYTES, record, match_sha="sha256" not in dict(edits)))


# ---------------------------------------------------------------------------- SB3 checkpoints

CHECKPOINT_ARRAYS = sb3_arrays()
CHECKPOINT_KEYS = {name: str(index) for index, name in enumerate(CHECKPOINT_ARRAYS)}
POLICY_PTH = archive_of(CHECKPOINT_ARRAYS)
#: Offsets of the structure of the torch archive: zip headers, directory entries, and every byte
#: of data.pkl (stored uncompressed, as torch writes it).
PTH_STRUCTURE = sorted(
    {match.start() for signature in (b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06") for match in re.finditer(re.escape(signature), POLICY_PTH)}
    | set(range(POLICY_PTH.index(b"\x80\x02"), POLICY_PTH.index(b"\x80\x02") + len(pickle_of({}))))
)
DATA_PKL = zipfile.ZipFile(io.BytesIO(POLICY_PTH)).read("archive/data.pkl")
#: Anything a header field might be: counts small and huge, negative, shapes, names, other types.
FIELD_VALUES = st.one_of(
    st.integers(-3, 70_000),
    st.integers(-(2**70), 2**70),
    st.lists(st.integers(-2, 2**41), max_size=4).map(tuple),
    st.sampled_from(["FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage", "UntypedStorage"]),
    st.sampled_from(["_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_parameter", "_rebuild_sparse_tensor"]),
    st.text(max_size=8),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False),
)
HEADER_FIELDS = st.sampled_from(["shape", "strides", "offset", "size", "storage", "storage_type", "function", "key", "data", "drop"])


def read_checkpoint_bounded(path: Path) -> PolicyWeights | None:
    """``read_checkpoint(path)``: weights, or ``None`` after a ``ValueError`` naming the file;
    memory bounded (a few copies of the 30 kB archive, never a claimed size)."""
    tracemalloc.start()
    try:
        try:
            return read_checkpoint(path)
        except ValueError as error:
            assert str(error).startswith(f"{path}: ") and "\n" not in str(error), error
            return None
        finally:
            _, peak = tracemalloc.get_traced_memory()
            assert peak < 8 * 1024 * 1024, peak
    finally:
        tracemalloc.stop()


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(PTH_STRUCTURE), st.integers(0, 60), st.integers(0, 255)), min_size=1, max_size=6))
def test_fuzz_checkpoints_with_mutated_torch_archives(tmp_path: Path, edits: list[tuple[int, int, int]]) -> None:
    data = bytearray(POLICY_PTH)
    for start, offset, byte in edits:
        data[min(start + offset, len(data) - 1)] = byte
    read_checkpoint_bounded(write_checkpoint(tmp_path / "fuzzed.zip", bytes(data)))


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(DATA_PKL)), st.integers(0, 4), st.binary(max_size=6)), min_size=1, max_size=6))
def test_fuzz_checkpoints_with_mutated_pickles(tmp_path: Path, edits: list[tuple[int, int, bytes]]) -> None:
    pickle = DATA_PKL
    for where, cut, insert in edits:
        pickle = pickle[:where] + insert + pickle[where + cut :]
    members = {name: zipfile.ZipFile(io.BytesIO(POLICY_PTH)).read(name) for name in zipfile.ZipFile(io.BytesIO(POLICY_PTH)).namelist()}
    members["archive/data.pkl"] = pickle
    read_checkpoint_bounded(write_checkpoint(tmp_path / "fuzzed.zip", zip_of(members)))


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(sorted(CHECKPOINT_ARRAYS)), HEADER_FIELDS, FIELD_VALUES), min_size=1, max_size=4))
def test_fuzz_checkpoints_with_mutated_tensor_headers(tmp_path: Path, edits: list[tuple[str, str, Any]]) -> None:
    fields: dict[Any, dict[str, Any]] = {
        name: {"storage": CHECKPOINT_KEYS[name], "size": array.size, "shape": array.shape} for name, array in CHECKPOINT_ARRAYS.items()
    }
    storages = {CHECKPOINT_KEYS[name]: array.tobytes() for name, array in CHECKPOINT_ARRAYS.items()}
    for name, field, value in edits:
        if name not in fields:
            continue
        if field == "drop":
            del fields[name]
        elif field == "key":
            fields[value if isinstance(value, (str, int, tuple)) else repr(value)] = fields.pop(name)
        elif field == "data":
            storages[CHECKPOINT_KEYS[name]] = storages[CHECKPOINT_KEYS[name]][: value if isinstance(value, int) else 0]
        else:
            fields[name][field] = value
    state = {key: tensor(**header) for key, header in fields.items()}
    weights = read_checkpoint_bounded(write_checkpoint(tmp_path / "fuzzed.zip", torch_archive(state, storages)))
    if weights is not None:  # only edits that left a valid policy
        assert weights.policy[0][0].shape == (8, 340)


QUICK = (ROOT / "configs" / "quick.yaml").read_text()
YAMLISH = st.text(alphabet="[]{}:,-&*!|>'\"#%@` \n\t0123456789.eEabxyz_\\", max_size=60)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(QUICK)), st.integers(0, 20), YAMLISH), min_size=1, max_size=4))
def test_fuzz_yaml_configs(tmp_path: Path, edits: list[tuple[int, int, str]]) -> None:
    text = QUICK
    for where, cut, insert in edits:
        text = text[:where] + insert + text[where + cut :]
    path = tmp_path / "fuzzed.yaml"
    path.write_text(text)
    try:
        load(TrainConfig, path, [])
    except ConfigError as error:
        assert "\n" not in str(error)


@FUZZ
@given(st.lists(YAMLISH, min_size=1, max_size=3))
def test_fuzz_config_overrides(values: list[str]) -> None:
    try:
        load(TrainConfig, None, [f"ppo.net_arch={value}" for value in values])
    except ConfigError as error:
        assert "\n" not in str(error)


@pytest.fixture(scope="module")
def exit_config(tmp_path_factory: pytest.TempPathFactory) -> ExitConfig:
    output = tmp_path_factory.mktemp("exit") / "run"
    config = load(ExitConfig, None, [f"output_dir={output}"])
    output.mkdir()
    (output / "config.json").write_text(json.dumps(config.to_dict()))
    return config


STATE = {"completed": 0, "seconds": 1.5, "decisions": 10}


@FUZZ
@given(
    st.one_of(
        JSON_VALUES.map(json.dumps),
        st.dictionaries(st.sampled_from(sorted(STATE)), JSON_VALUES, max_size=3).map(lambda edit: json.dumps({**STATE, **edit})),
        st.text(alphabet='[]{}":,0123456789.-e completdsn', max_size=200),
    )
)
def test_fuzz_exit_run_state(exit_config: ExitConfig, text: str) -> None:
    from train.exit.run import open_run

    (Path(exit_config.output_dir) / "state.json").write_text(text)
    try:
        _, completed = open_run(exit_config, overwrite=False)
    except ConfigError as error:
        assert "state.json" in str(error) or "eval.json" in str(error), error
    else:
        assert completed == json.loads(text)["completed"] == 0  # iteration 1 has no eval.json


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    import torch
    from sb3_contrib import MaskablePPO

    from draw_env.single_agent import DrawSingleAgentEnv
    from train.checkpoints import save_checkpoint

    model = MaskablePPO(
        "MlpPolicy",
        DrawSingleAgentEnv(num_players=2, features="extended"),
        policy_kwargs={"net_arch": [8], "activation_fn": torch.nn.ReLU},
        seed=0,
        device="cpu",
    )
    config = load(TrainConfig, None, ["ppo.net_arch=[8]"]).to_dict()
    path = tmp_path_factory.mktemp("checkpoint") / "step_0.zip"
    row = {"timesteps": 0, "train_seconds": 0.0, "opponent": "heaviest", "matches": 2, "win_rate": 0.5,
           "win_low": 0.1, "win_high": 0.9, "points_per_hand": 1.0, "zero_sum_per_hand": 0.0}
    save_checkpoint(model, path, [], {"train_seconds": 1.0, "eval_rows": [row], "config": config}, num_players=2, features="extended")
    return path, config


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["format", "version", "timesteps", "train_seconds", "eval_rows", "config", "snapshots", "row"]), JSON_VALUES), min_size=1, max_size=3))
def test_fuzz_resume_state(checkpoint: tuple[Path, dict[str, Any]], edits: list[tuple[str, Any]]) -> None:
    from train.checkpoints import read_resume_state, state_path

    path, config = checkpoint
    state_file = state_path(path)
    original = state_file.read_text()
    state = json.loads(original)
    for key, value in edits:
        if key == "row" and isinstance(value, dict):
            state["eval_rows"][0].update(value)
        else:
            state[key] = value
    state_file.write_text(json.dumps(state))
    try:
        read_resume_state(path, config)
    except ConfigError as error:
        assert "\n" not in str(error)
    finally:
        state_file.write_text(original)
