"""Hostile files and inputs: policy files, configs, run state, paths and terminal input.

Every file a user may receive or edit is read as hostile: each test below hands a command or a
reader one crafted file and expects one ``ValueError`` (``ConfigError``) line that names the
file and the field, before anything is written or played; the commands turn it into one
``PROG: error: ...`` line with exit code 2 and no traceback. Random and mutated inputs of the
same readers are in ``tests/test_fuzz_readers.py``.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import time
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.policy_file import load_policy_file, record_path
from agents.sb3_checkpoint import read_checkpoint
from arena.play import main as play_main
from tests.torch_archives import (
    Call,
    Global,
    Persistent,
    archive_of,
    sb3_arrays,
    tensor,
    torch_archive,
    write_checkpoint,
    zip_of,
)
from train.config import ConfigError, load
from train.exit.config import ExitConfig
from train.exploit.config import ExploitConfig
from train.rllib.config import RLlibConfig
from train.selfplay.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "agents" / "policies" / "ppo_2p_distilled.npz"
DEEP = "[" * 100_000 + "]" * 100_000


def run_module(*args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` from the repository root, with this checkout's code."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    done = subprocess.run(
        [sys.executable, *args], input=stdin, capture_output=True, cwd=ROOT, env=environment, timeout=300
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def assert_one_line_error(done: subprocess.CompletedProcess[str], *named: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    for name in named:
        assert name in errors[0], errors[0]


# ---------------------------------------------------------------------------------------------
# 3. Every write goes through draw_env.io.files.

_WRITERS = {"write_text", "write_bytes", "savefig", "savez", "savez_compressed"}


def _atomic_names(tree: ast.AST) -> set[str]:
    """Names bound by ``with atomic_path(...) as NAME`` or ``NAME = io.BytesIO()`` in ``tree``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
            call = node.context_expr
            if isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", "")) == "atomic_path":
                names.add(node.optional_vars.id)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if getattr(node.value.func, "attr", "") == "BytesIO":
                names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


def _is_atomic(node: ast.expr, names: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names
    return isinstance(node, ast.Call) and "atomic_path" in ast.unparse(node)


def unsafe_writes(path: Path) -> list[str]:
    """Calls in ``path`` that write a file other than through :mod:`draw_env.io.files`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _atomic_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        where = f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:80]}"
        if isinstance(func, ast.Name) and func.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            writing = isinstance(mode, ast.Constant) and any(flag in str(mode.value) for flag in "wax+")
            if writing and not _is_atomic(node.args[0], names):
                found.append(where)
        elif isinstance(func, ast.Attribute) and (
            func.attr in _WRITERS
            or (func.attr == "save" and ast.unparse(func.value) in ("np", "torch"))
            or (func.attr == "dump" and ast.unparse(func.value) in ("json", "pickle"))
        ):
            if func.attr in ("write_text", "write_bytes"):
                target = func.value
            elif func.attr == "dump":
                target = node.args[1] if len(node.args) > 1 else node.args[0]
            else:
                target = node.args[0] if node.args else func.value
            if not _is_atomic(target, names):
                found.append(where)
    return found


def test_every_write_of_the_project_goes_through_draw_env_files() -> None:
    sources = [
        path
        for package in ("draw_env", "agents", "arena", "train", "integrations", "benchmarks", "examples")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != ROOT / "draw_env" / "files.py"
    ]
    assert sources
    assert [write for path in sources for write in unsafe_writes(path)] == []


def test_the_write_scan_finds_a_write_in_place(tmp_path: Path) -> None:
    sample = ROOT / "train" / "_scan_sample.py"  # inside ROOT so that relative_to works
    try:
        sample.write_text('import json\nfrom pathlib import Path\nPath("x").write_text(json.dumps({}))\n')
        assert len(unsafe_writes(sample)) == 1
    finally:
        sample.unlink()


# ---------------------------------------------------------------------------------------------
# 4. Configs are checked whole (ranges libraries impose, output paths) before the first write.

MODELS = (TrainConfig, ExitConfig, ExploitConfig, RLlibConfig)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_a_seed_numpy_cannot_take_is_a_config_error(model: type[Any]) -> None:
    with pytest.raises(ConfigError, match=r"^config key 'seed' must be an integer in \[0, 2147483647\], got 4294967296$"):
        load(model, None, ["seed=4294967296"])
    assert load(model, None, ["seed=2147483647"]).seed == 2**31 - 1


def test_integers_and_widths_beyond_what_libraries_take_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="'total_timesteps' must be an integer >= 1 .at most 2147483647."):
        load(TrainConfig, None, ["total_timesteps=1e30"])
    with pytest.raises(ConfigError, match="'total_timesteps'"):
        load(TrainConfig, None, [f"total_timesteps={2**40}"])
    with pytest.raises(ConfigError, match=r"'ppo.net_arch' must be a non-empty list of layer widths in 1..65536"):
        load(TrainConfig, None, ["ppo.net_arch=[100000000]"])


def test_selfplay_checks_its_output_dir_before_writing(tmp_path: Path) -> None:
    from train.selfplay.run import train

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    config = load(TrainConfig, ROOT / "configs" / "quick.yaml", [f"output_dir={blocker / 'run'}"])
    with pytest.raises(ConfigError, match=r"config key 'output_dir': cannot write to .*file/run: .*file is not a directory"):
        train(config)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file"]


@pytest.mark.parametrize("model", [ExitConfig, ExploitConfig], ids=["exit", "exploit"])
def test_exit_and_exploit_check_their_output_dir_before_writing(tmp_path: Path, model: type[Any]) -> None:
    from train.runs import open_run_dir

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError, match="config key 'output_dir': cannot write"):
        open_run_dir(load(model, None, [f"output_dir={blocker / 'run'}"]), model().pipeline)


# ---------------------------------------------------------------------------------------------
# 5. YAML configs: no aliases, bounded depth, in files and in overrides.

_LAUGHS = "\n".join(
    ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
) + "\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x: &a [*a]\n", r"line 1, column 4: YAML anchors and aliases \(& and \*\) are not allowed"),
        ("seed: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 32 levels"),
        (_LAUGHS, "YAML anchors and aliases"),
    ],
    ids=["self-alias", "deep", "laughs"],
)
def test_hostile_yaml_configs_are_one_config_error_at_once(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    started = time.perf_counter()
    for model in MODELS:
        with pytest.raises(ConfigError, match=message) as raised:
            load(model, path, [])
        assert str(raised.value).startswith(f"config file {str(path)!r}") and "\n" not in str(raised.value)
    assert time.perf_counter() - started < 5


def test_overrides_are_read_as_bounded_yaml() -> None:
    with pytest.raises(ConfigError, match=r"^override 'opponents=&a \[\*a\]'.*anchors and aliases"):
        load(TrainConfig, None, ["opponents=&a [*a]"])
    with pytest.raises(ConfigError, match="nested deeper than 32 levels"):
        load(TrainConfig, None, ["ppo.net_arch=" + "[" * 5000 + "]" * 5000])


# ---------------------------------------------------------------------------------------------
# 6. Policy files: names, shapes, dtypes and sizes from the zip directory and .npy headers first.


def shipped_arrays() -> dict[str, np.ndarray]:
    with np.load(SHIPPED, allow_pickle=False) as archive:  # the project's own file
        return {key: archive[key] for key in archive.files}


def write_policy(tmp_path: Path, data: bytes, edit: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """``data`` as ``policy.npz`` with the shipped record beside it, its sha256 made to match."""
    target = tmp_path / "policy.npz"
    target.write_bytes(data)
    record = json.loads(record_path(SHIPPED).read_text())
    record["sha256"] = hashlib.sha256(data).hexdigest()
    if edit is not None:
        edit(record)
    record_path(target).write_text(json.dumps(record))
    return target


def npz_of(arrays: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def with_member(data: bytes, name: str, payload: bytes | Callable[[Any], None], compression: int = zipfile.ZIP_STORED) -> bytes:
    """``data`` (a zip) with one more member ``name``: bytes, or written by ``payload(handle)``."""
    buffer = io.BytesIO(data)
    with zipfile.ZipFile(buffer, "a", compression) as archive:
        if isinstance(payload, bytes):
            archive.writestr(name, payload)
        else:
            with archive.open(name, "w", force_zip64=True) as handle:
                payload(handle)
    return buffer.getvalue()


def npy_header(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    text = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode("latin1")
    text += b" " * ((64 - (10 + len(text) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


def _replace(name: str, value: Any) -> bytes:
    arrays = shipped_arrays()
    arrays[name] = value
    return npz_of(arrays)


def _without(name: str) -> dict[str, np.ndarray]:
    arrays = shipped_arrays()
    del arrays[name]
    return arrays


@pytest.mark.parametrize(
    ("build", "named"),
    [
        (lambda: _replace("policy/0/weight", np.zeros(340 * 512, np.float32)), r"policy/0/weight has the shape \(174080,\)"),
        (lambda: _replace("policy/1/weight", np.float32(1.0)), r"policy/1/weight has the shape \(\)"),
        (lambda: _replace("policy/0/bias", np.zeros(512, np.float64)), "policy/0/bias: arrays must be float32, got float64"),
        (lambda: with_member(npz_of(shipped_arrays()), "notes", b"hello"), "member 'notes' is not a .npy array"),
        (
            lambda: with_member(npz_of(_without("policy/0/bias")), "policy/0/bias.npy", npy_header((20_000_000_000,))),
            "more than the 268435456 bytes allowed",
        ),
        (
            lambda: with_member(npz_of(shipped_arrays()), "extra.npy", npy_header((3,)) + b"\0" * 12),
            r"holds arrays \['extra'\] that policy.json does not list",
        ),
    ],
    ids=["1-d weight", "0-d weight", "float64", "member without .npy", "80 GB header", "extra array"],
)
def test_a_hostile_policy_file_is_a_value_error_naming_the_file(tmp_path: Path, build: Callable[[], bytes], named: str) -> None:
    path = write_policy(tmp_path, build())
    with pytest.raises(ValueError, match=named) as raised:
        load_policy_file(path)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_a_deep_policy_record_is_a_value_error(tmp_path: Path) -> None:
    path = write_policy(tmp_path, SHIPPED.read_bytes())
    record_path(path).write_text(DEEP)
    with pytest.raises(ValueError, match=r"policy.json: nested deeper than 32 levels"):
        load_policy_file(path)


def test_a_compressed_extra_array_is_refused_before_it_is_read(tmp_path: Path) -> None:
    def zeros(handle: Any) -> None:
        handle.write(npy_header((16 * 1024 * 1024,)))
        chunk = bytes(4 * 1024 * 1024)
        for _ in range(16):  # 64 MB of zeros, about 64 kB compressed
            handle.write(chunk)

    path = write_policy(tmp_path, with_member(npz_of(shipped_arrays()), "extra.npy", zeros, zipfile.ZIP_DEFLATED))
    assert path.stat().st_size < 4_000_000
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"holds arrays \['extra'\]"):
            load_policy_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16_000_000, peak  # the file's bytes and its headers, never the 64 MB array


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A tiny MaskablePPO checkpoint with its side files (``train.checkpoints.save_checkpoint``)."""
    import torch
    from sb3_contrib import MaskablePPO

    from draw_env.single_agent import DrawSingleAgentEnv
    from train.checkpoints import save_checkpoint

    env = DrawSingleAgentEnv(num_players=2, features="extended")
    model = MaskablePPO(
        "MlpPolicy", env, policy_kwargs={"net_arch": [16, 8], "activation_fn": torch.nn.ReLU}, seed=0, device="cpu"
    )
    config = load(TrainConfig, None, ["ppo.net_arch=[16, 8]"]).to_dict()
    path = tmp_path_factory.mktemp("checkpoint") / "step_0.zip"
    save_checkpoint(model, path, [], {"train_seconds": 1.0, "eval_rows": [], "config": config}, num_players=2, features="extended")
    return path, config


def copy_checkpoint(source: Path, target_dir: Path, edit_state: Callable[[dict[str, Any]], Any] | None = None) -> Path:
    for suffix in (".zip", ".policy.json", ".pool.npz", ".state.json"):
        (target_dir / f"step_0{suffix}").write_bytes(source.with_name(f"step_0{suffix}").read_bytes())
    target = target_dir / "step_0.zip"
    if edit_state is not None:
        state_file = target.with_suffix(".state.json")
        state = json.loads(state_file.read_text())
        replaced = edit_state(state)
        state_file.write_text(replaced if isinstance(replaced, str) else json.dumps(state))
    return target


def test_a_checkpoint_side_file_that_nests_deep_is_a_value_error(tmp_path: Path, checkpoint: tuple[Path, Any]) -> None:
    target = copy_checkpoint(checkpoint[0], tmp_path)
    target.with_suffix(".policy.json").write_text(DEEP)
    with pytest.raises(ValueError, match=r"step_0.policy.json: nested deeper than 32 levels"):
        read_checkpoint(target)


ARRAYS = sb3_arrays()
#: Storage key of each parameter in :func:`checkpoint_with`'s archives.
KEYS = {name: str(index) for index, name in enumerate(ARRAYS)}
HOOKS = Call(Global("collections", "OrderedDict"), ())


def checkpoint_with(folder: Path, tensors: dict[Any, Any], storages: dict[str, bytes] | None = None) -> Path:
    """A checkpoint of :func:`tests.torch_archives.sb3_arrays` with ``tensors`` replacing its
    entries in ``data.pkl`` (and ``storages`` its storages), side file included."""
    state: dict[Any, Any] = {name: tensor(KEYS[name], array.size, array.shape) for name, array in ARRAYS.items()}
    state.update(tensors)
    data = {KEYS[name]: array.tobytes() for name, array in ARRAYS.items()} | (storages or {})
    return write_checkpoint(folder / "bad.zip", torch_archive(state, data))


def _untyped(storage: str, size: int) -> Persistent:
    return Persistent(("storage", Global("torch", "UntypedStorage"), storage, "cpu", size))


@pytest.mark.parametrize(
    ("tensors", "storages", "named"),
    [
        ({"mlp_extractor.policy_net.0.weight": tensor("0", 2720, (2720,))}, None,
         r"mlp_extractor.policy_net.0.weight has the shape \(2720,\), not \(out, in\)"),
        ({"mlp_extractor.policy_net.0.weight": tensor("0", 2720, ())}, None,
         r"mlp_extractor.policy_net.0.weight has the shape \(\), not \(out, in\)"),
        ({"action_net.bias": tensor("5", 58, (58, 1))}, None, r"action_net.bias has the shape \(58, 1\), not \(58,\)"),
        ({"action_net.weight": tensor("4", 464, (58, 8), strides=(0, 0))}, None,
         r"tensor 'action_net.weight' is a view of shape \(58, 8\) with strides \(0, 0\), not a contiguous"),
        ({"action_net.weight": tensor("4", 464, (58, 8), strides=(1, 1))}, None, "tensor 'action_net.weight' is a view"),
        ({"action_net.weight": tensor("4", 100, (58, 8))}, {"4": bytes(400)},
         "tensor 'action_net.weight' needs elements 0..464 of storage '4', which holds 100"),
        ({"action_net.weight": tensor("4", 464, (58, 8), offset=10)}, None, "needs elements 10..474 of storage '4'"),
        ({}, {"4": bytes(100)}, "its member data/4 holds 100 bytes, not the 1856 its tensors claim"),
        ({"action_net.weight": tensor("4", 464, (58, 8), storage_type="BFloat16Storage")}, None,
         "tensor 'action_net.weight' holds BFloat16 values; float32, float64 and float16 tensors are read"),
        ({"action_net.weight": Call(Global("torch._utils", "_rebuild_tensor_v3"),
                                    (_untyped("4", 464), 0, (58, 8), (8, 1), False, HOOKS, Global("torch", "float8_e4m3fn")))},
         None, "tensor 'action_net.weight' is a tensor of float8_e4m3fn values"),
        ({"action_net.weight": Call(Global("torch._utils", "_rebuild_sparse_tensor"), (Global("torch", "sparse_coo"), ()))},
         None, "tensor 'action_net.weight' is built by torch._utils._rebuild_sparse_tensor, not a plain dense tensor"),
        ({"action_net.weight": Call(Global("torch._utils", "_rebuild_qtensor"), (_untyped("4", 464), 0, (58, 8)))},
         None, "tensor 'action_net.weight' is built by torch._utils._rebuild_qtensor"),
        ({"action_net.weight": Call(Global("torch._utils", "_rebuild_parameter"), (tensor("4", 464, (58, 8)), True, HOOKS))},
         None, "tensor 'action_net.weight' is built by torch._utils._rebuild_parameter"),
        ({"action_net.weight": Call(Global("os", "system"), ("touch ran",))}, None, "tensor 'action_net.weight' is built by os.system"),
        ({1: tensor("4", 464, (58, 8))}, None, "the key 1 is not a tensor name"),
        ({"action_net.weight": tensor("4", 464, (58, 8), strides=(8.0, 1))}, None,
         r"tensor 'action_net.weight' has the shape \(58, 8\), strides \(8.0, 1\)"),
    ],
    ids=["1-d weight", "0-d weight", "2-d bias", "stride-0 view", "overlapping view", "short storage", "offset past the end",
         "short storage member", "bfloat16", "float8", "sparse", "quantized", "parameter", "other call", "integer key", "float stride"],
)
def test_a_checkpoint_tensor_is_checked_before_any_is_read(
    tmp_path: Path, tensors: dict[Any, Any], storages: dict[str, bytes] | None, named: str
) -> None:
    path = checkpoint_with(tmp_path, tensors, storages)
    with pytest.raises(ValueError, match=named) as raised:
        read_checkpoint(path)
    assert str(raised.value).startswith(f"{path}: policy.pth: ") and "\n" not in str(raised.value)


def test_a_checkpoint_never_allocates_what_its_tensors_claim(tmp_path: Path) -> None:
    claims = [
        {"action_net.weight": tensor("4", 1, (8192, 8192), strides=(0, 0))},  # 256 MB of float32 from one element
        {"action_net.weight": tensor("4", 2**40, (2**20, 2**20))},  # a storage of 4 TB
        {"action_net.weight": tensor("4", 2**62, (58, 8), offset=2**62 - 464)},
    ]
    tracemalloc.start()
    try:
        for tensors in claims:
            with pytest.raises(ValueError, match="'action_net.weight'|elements, more than the"):
                read_checkpoint(checkpoint_with(tmp_path, tensors))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000, peak


def test_a_checkpoint_of_another_float_dtype_or_byte_order_is_read(tmp_path: Path) -> None:
    for dtype in (np.float64, np.float16):
        arrays = {name: array.astype(dtype) for name, array in ARRAYS.items()}
        weights = read_checkpoint(write_checkpoint(tmp_path / "other.zip", archive_of(arrays)))
        np.testing.assert_array_equal(weights.policy[-1][0], arrays["action_net.weight"].astype(np.float32))
    state = {name: tensor(KEYS[name], array.size, array.shape) for name, array in ARRAYS.items()}
    big = {KEYS[name]: array.astype(">f4").tobytes() for name, array in ARRAYS.items()}
    weights = read_checkpoint(write_checkpoint(tmp_path / "big.zip", torch_archive(state, big, byteorder=b"big")))
    np.testing.assert_array_equal(weights.value[0][0], ARRAYS["mlp_extractor.value_net.0.weight"])  # type: ignore[index]


def test_a_deeply_nested_checkpoint_pickle_is_a_value_error(tmp_path: Path) -> None:
    nested = b"\x80\x02" + b"N" + b"\x85" * 100_000 + b"."  # a tuple in a tuple in ... 100,000 deep
    path = write_checkpoint(tmp_path / "deep.zip", zip_of({"archive/data.pkl": nested}))
    with pytest.raises(ValueError, match=r"deep.zip: policy.pth: data.pkl holds \(\(\(\(\.\.\.\),\),\),\), not a mapping"):
        read_checkpoint(path)


# ---------------------------------------------------------------------------------------------
# 10. Resume: the run state is checked whole before the run writes anything.


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda state: state.pop("train_seconds"), r"field 'train_seconds': field required"),
        (lambda state: state.update(eval_rows=[{"timesteps": "x"}]), r"field 'eval_rows.0.timesteps'"),
        (lambda state: state.update(snapshots=[{"layers": 2}]), r"field 'snapshots.0.activation'"),
        (lambda state: state.update(train_seconds=-1.0), r"field 'train_seconds': input should be greater than or equal to 0"),
        (lambda state: DEEP, "nested deeper than 32 levels"),
    ],
    ids=["missing key", "wrong row", "wrong snapshot", "negative seconds", "deep"],
)
def test_a_malformed_resume_state_is_a_config_error(
    tmp_path: Path, checkpoint: tuple[Path, Any], edit: Callable[[dict[str, Any]], Any], named: str
) -> None:
    from train.checkpoints import read_resume_state

    target = copy_checkpoint(checkpoint[0], tmp_path, edit)
    with pytest.raises(ConfigError, match=named) as raised:
        read_resume_state(target, checkpoint[1])
    assert "step_0.state.json" in str(raised.value) and "\n" not in str(raised.value)


def test_a_checkpoint_whose_data_entry_nests_deep_is_a_config_error(tmp_path: Path, checkpoint: tuple[Path, Any]) -> None:
    from train.checkpoints import read_resume_state

    target = copy_checkpoint(checkpoint[0], tmp_path)
    with zipfile.ZipFile(checkpoint[0]) as original, zipfile.ZipFile(target, "w") as copy:
        for entry in original.namelist():
            copy.writestr(entry, DEEP if entry == "data" else original.read(entry))
    with pytest.raises(ConfigError, match="data entry: nested deeper than 32 levels"):
        read_resume_state(target, checkpoint[1])


def _exit_run(tmp_path: Path, state: Any, rows: Any = None) -> ExitConfig:
    config = load(ExitConfig, None, [f"output_dir={tmp_path / 'run'}"])
    output = tmp_path / "run"
    output.mkdir()
    (output / "config.json").write_text(json.dumps(config.to_dict()))
    (output / "state.json").write_text(state if isinstance(state, str) else json.dumps(state))
    if rows is not None:
        from train.exit.run import iteration_dir

        iteration_dir(config, 1).mkdir()
        (iteration_dir(config, 1) / "eval.json").write_text(json.dumps(rows))
    return config


@pytest.mark.parametrize(
    ("state", "rows", "named"),
    [
        ({"seconds": 0.0, "decisions": 0}, None, r"state.json: field 'completed': field required"),
        ({"completed": "2", "seconds": 0.0, "decisions": 0}, None, r"field 'completed': input should be a valid integer"),
        (DEEP, None, r"state.json: nested deeper than 32 levels"),
        ({"completed": 1, "seconds": 0.0, "decisions": 0}, None, r"iter_001/eval.json: no such file"),
        ({"completed": 1, "seconds": 0.0, "decisions": 0}, [{"opponent": 3}], r"eval.json: field '0.timesteps'"),
    ],
    ids=["missing key", "string", "deep", "missing rows", "wrong row"],
)
def test_exit_refuses_a_malformed_run_before_writing(tmp_path: Path, state: Any, rows: Any, named: str) -> None:
    from train.exit.run import open_run

    config = _exit_run(tmp_path, state, rows)
    before = {path: path.read_bytes() for path in (tmp_path / "run").rglob("*") if path.is_file()}
    with pytest.raises(ConfigError, match=named):
        open_run(config, overwrite=False)
    assert {path: path.read_bytes() for path in (tmp_path / "run").rglob("*") if path.is_file()} == before


def test_a_run_dir_refuses_a_deep_config_json(tmp_path: Path) -> None:
    from train.runs import open_run_dir

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.json").write_text(DEEP)
    with pytest.raises(ConfigError, match="config.json: nested deeper than 32 levels"):
        open_run_dir(load(ExitConfig, None, [f"output_dir={tmp_path / 'run'}"]), "exit")


# ---------------------------------------------------------------------------------------------
# 9. draw-play: output paths before the game, undecodable input as a bad line.


def test_play_checks_record_before_the_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    for record, named in [(tmp_path, "is a directory"), (blocker / "game.json", "cannot write")]:
        stdout = io.StringIO()
        with pytest.raises(SystemExit) as exited:
            play_main(["--seed", "1", "--record", str(record)], stdin=io.StringIO("quit\n"), stdout=stdout)
        assert exited.value.code == 2
        assert stdout.getvalue() == ""  # no game was played
        assert named in capsys.readouterr().err


def test_play_answers_a_line_that_is_not_utf8() -> None:
    done = run_module(
        "-m", "arena.play", "--seed", "1", "--opponents", "heaviest",
        stdin=b"\xff\xfe move\nquit\n", env={"PYTHONIOENCODING": "utf-8:strict"},
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "that line is not UTF-8 text" in done.stdout


# ---------------------------------------------------------------------------------------------
# Every command: a bad file is one line, exit code 2, no traceback.


def test_draw_eval_reports_a_hostile_policy_file(tmp_path: Path) -> None:
    path = write_policy(tmp_path, SHIPPED.read_bytes())
    record_path(path).write_text(DEEP)
    done = run_module("-m", "arena.cli", f"ppo:path={path}", "heaviest", "--games", "2", "--quiet")
    assert_one_line_error(done, "policy.json", "nested deeper")


def test_draw_eval_and_draw_train_report_a_hostile_checkpoint(tmp_path: Path) -> None:
    path = checkpoint_with(tmp_path, {"mlp_extractor.policy_net.0.weight": tensor("0", 2720, (2720,))})
    named = (f"{path}: policy.pth: mlp_extractor.policy_net.0.weight has the shape (2720,)",)
    assert_one_line_error(run_module("-m", "arena.cli", f"network:path={path}", "heaviest", "--games", "2", "--quiet"), *named)
    output = tmp_path / "run"
    done = run_module(
        "-m", "train.cli", "--config", "configs/exploit.yaml", f"target=network:path={path}", "cpu_minutes=0.01",
        f"output_dir={output}",
    )
    assert_one_line_error(done, *named)
    assert not output.exists()


@pytest.mark.parametrize(
    "command",
    [["-m", "train.cli", "--config"], ["train/rllib_selfplay.py", "--config"]],
    ids=["draw-train", "rllib_selfplay"],
)
def test_training_commands_report_a_hostile_config(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text("x: &a [*a]\n")
    assert_one_line_error(run_module(*command, str(path)), "hostile.yaml", "anchors and aliases")


def test_draw_train_reports_a_malformed_resume_state(tmp_path: Path, checkpoint: tuple[Path, Any]) -> None:
    target = copy_checkpoint(checkpoint[0], tmp_path, lambda state: state.pop("eval_rows"))
    done = run_module(
        "-m", "train.cli", "--config", "configs/quick.yaml", "--resume", str(target),
        "ppo.net_arch=[16, 8]", f"output_dir={tmp_path / 'run'}",
    )
    assert_one_line_error(done, "step_0.state.json", "eval_rows")
    assert not (tmp_path / "run").exists()


def test_export_reports_a_hostile_provenance_file(tmp_path: Path) -> None:
    (tmp_path / "provenance.json").write_text(DEEP)
    done = run_module("-m", "train.export", "missing.zip", str(tmp_path / "out.npz"), "--provenance", str(tmp_path / "provenance.json"))
    assert_one_line_error(done, "provenance.json", "nested deeper")


def test_draw_play_reports_an_unwritable_record() -> None:
    done = run_module("-m", "arena.play", "--record", "/", stdin=b"quit\n")
    assert_one_line_error(done, "--record")
