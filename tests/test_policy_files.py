"""Policy files (weights-only npz + JSON), SB3 checkpoints read without unpickling, the table size."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import json
import pickle
import re
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import draw_env
from agents.policy_file import PolicyWeights, load_policy_file, record_path, save_policy_file
from agents.policy_network import NumpyPolicy, shipped_policy
from agents.sb3_checkpoint import checkpoint_record_path, read_checkpoint, write_checkpoint_record
from draw_env.features import encode_batch, encode_observation, feature_size
from draw_env.rules import DrawGame
from tests.torch_archives import archive_of, sb3_arrays, write_checkpoint
from train.export import export_policy

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ROOT / "agents" / "policies"
#: Observations of 2-, 3- and 4-player matches with the logits (and values) the SB3 actors (and
#: critics) gave them, recorded when the shipped zips were converted into policy files, and for
#: the policies shipped since from the SB3 networks their weights were exported from.
REFERENCE = Path(__file__).resolve().parent / "data" / "policy_reference.npz"
SHIPPED = [f"ppo_{n}p{kind}" for n in (2, 3, 4) for kind in ("", "_selfplay")] + ["ppo_2p_distilled"]
#: Names the shipped policies had when they were converted from SB3 zips, where they changed.
FORMER_NAMES = {"ppo_2p_distilled": "ppo_2p"}
#: Shipped policies without a value network (distilled: no critic was trained).
WITHOUT_VALUE = ("ppo_2p_distilled",)


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    with np.load(REFERENCE, allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


def _players(name: str) -> int:
    return int(name.split("_")[1][0])


def _observations(reference: dict[str, np.ndarray], players: int) -> tuple[np.ndarray, np.ndarray]:
    return reference[f"observations/{players}p"], reference[f"masks/{players}p"]


def _observation_dicts(reference: dict[str, np.ndarray], players: int) -> list[dict[str, np.ndarray]]:
    vectors, masks = _observations(reference, players)
    return [
        {"observation": vector.astype(np.float32), "action_mask": mask}
        for vector, mask in zip(vectors, masks, strict=True)
    ]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_policy_files_give_the_sb3_networks_outputs(
    reference: dict[str, np.ndarray], name: str
) -> None:
    policy = NumpyPolicy.load(POLICIES / f"{name}.npz")
    players = _players(name)
    assert policy.num_players == players and policy.features == "extended"
    vectors, masks = _observations(reference, players)
    inputs = encode_batch(vectors, masks, policy.features)
    expected = reference[f"logits/{name}"]
    np.testing.assert_allclose(policy.logits_batch(inputs), expected, atol=1e-4, rtol=0)
    np.testing.assert_allclose(np.array([policy.logits(row) for row in inputs]), expected, atol=1e-4, rtol=0)
    best = np.argmax(np.where(masks > 0, expected, -np.inf), axis=1)
    chosen = [
        policy.choose(observation, True, np.random.default_rng())
        for observation in _observation_dicts(reference, players)
    ]
    assert chosen == best.tolist()
    np.testing.assert_array_equal(policy.act_batch(vectors, masks), best)
    if name in WITHOUT_VALUE:
        assert not policy.has_value
        with pytest.raises(ValueError, match="no value network"):
            policy.values_batch(inputs)
    else:  # self-play and expert iteration train a critic: it ships
        np.testing.assert_allclose(
            policy.values_batch(inputs), reference[f"values/{name}"], atol=1e-4, rtol=0
        )


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_records_describe_their_policy_and_where_it_came_from(name: str) -> None:
    record = json.loads(record_path(POLICIES / f"{name}.npz").read_text())
    assert record["num_players"] == _players(name)
    assert record["features"] == "extended" and record["activation"] == "relu"
    assert (
        record["networks"]["policy"]["widths"][0] == 340 and record["networks"]["policy"]["widths"][-1] == 58
    )
    assert ("value" in record["networks"]) == (name not in WITHOUT_VALUE)
    provenance = record["provenance"]
    assert "command" in provenance or "commands" in provenance  # carried over from the training record
    if "converted" in provenance:  # shipped as an SB3 zip first (under its former name)
        assert provenance["converted"]["from"] == f"agents/policies/{FORMER_NAMES.get(name, name)}.zip"
    else:  # exported by draw-train, with the evaluations that made it shipped
        assert provenance["trained_by_run"]["trained_by"] == "draw-train (pipeline: exit)"
        assert provenance["results"] and all("command" in result for result in provenance["results"])


def test_no_shipped_file_needs_unpickling() -> None:
    shipped = sorted(path.name for path in POLICIES.iterdir())
    # The converted networks, and micro_2p, mini_2p, ppo_2p_long and ppo_2p_anchored, trained by draw-train itself
    # (tests/test_shipped_variant_networks.py, tests/test_shipped_long_network.py).
    trained = ["micro_2p", "mini_2p", "ppo_2p_long", "ppo_2p_anchored"]
    assert shipped == sorted(f"{name}.{suffix}" for name in [*SHIPPED, *trained] for suffix in ("npz", "json"))


def test_a_policy_file_round_trips(tmp_path: Path, reference: dict[str, np.ndarray]) -> None:
    policy = NumpyPolicy.load(POLICIES / "ppo_3p_selfplay.npz")
    written = policy.save(tmp_path / "copy.npz", provenance={"note": "a copy", "steps": [1, 2]})
    assert written == tmp_path / "copy.npz" and record_path(written).is_file()
    again = NumpyPolicy.load(written)
    assert again.weights.provenance == {"note": "a copy", "steps": [1, 2]}
    assert (again.num_players, again.features, again.weights.activation) == (3, "extended", "relu")
    for name, layers in policy.weights.networks().items():
        for (weight, bias), (weight2, bias2) in zip(layers, again.weights.networks()[name], strict=True):
            np.testing.assert_array_equal(weight, weight2)
            np.testing.assert_array_equal(bias, bias2)
    with pytest.raises(ValueError, match=r"\.npz"):
        policy.save(tmp_path / "copy.zip")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.json", "copy.npz"]  # no temporary files


def _payload_class(marker: Path) -> Any:
    class Payload:
        """Unpickling this creates ``marker``: the proof that a load ran code from the file."""

        def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
            return (Path.touch, (marker,))

    return Payload()


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A small MaskablePPO checkpoint saved by SB3 (with ReLU, not SB3's default) and its model."""
    import torch
    from sb3_contrib import MaskablePPO

    from draw_env.single_agent import DrawSingleAgentEnv

    env = DrawSingleAgentEnv(num_players=2, features="extended")
    model = MaskablePPO(
        "MlpPolicy",
        env,
        policy_kwargs={"net_arch": [16, 8], "activation_fn": torch.nn.ReLU},
        seed=0,
        device="cpu",
    )
    path = tmp_path_factory.mktemp("checkpoint") / "final.zip"
    model.save(path)
    return path, model


def _torch_logits(model: Any, inputs: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        latent = model.policy.mlp_extractor.forward_actor(torch.as_tensor(inputs))
        return model.policy.action_net(latent).numpy()


def _copy_checkpoint(source: Path, target: Path, replace: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w") as copy:
        for entry in original.namelist():
            copy.writestr(entry, replace.get(entry, original.read(entry)))
    return target


def test_a_checkpoint_plays_from_its_weights_and_side_file(
    tmp_path: Path, checkpoint: tuple[Path, Any], reference: dict[str, np.ndarray]
) -> None:
    source, model = checkpoint
    path = _copy_checkpoint(source, tmp_path / "final.zip", {})
    write_checkpoint_record(path, num_players=2, features="extended", activation="relu")
    assert checkpoint_record_path(path) == tmp_path / "final.policy.json"
    policy = NumpyPolicy.load(path)
    assert (policy.num_players, policy.weights.activation, policy.has_value) == (2, "relu", True)
    vectors, masks = _observations(reference, 2)
    inputs = encode_batch(vectors, masks, "extended")
    np.testing.assert_allclose(policy.logits_batch(inputs), _torch_logits(model, inputs), atol=1e-5, rtol=0)
    agent = agents.make("ppo", path=path)
    for observation in _observation_dicts(reference, 2)[:10]:
        assert observation["action_mask"][agent.act(observation)] == 1


def test_policy_files_and_sb3_checkpoints_are_read_by_separate_modules() -> None:
    """The policy-file format needs no torch-archive reader; SB3 checkpoints have their own module."""
    from agents import policy_file, sb3_checkpoint
    from tests.test_imports import PACKAGES, ROOT, imports_of, project_modules

    modules = project_modules(ROOT, PACKAGES)
    assert "agents.torch_archive" not in imports_of("agents.policy_file", Path(policy_file.__file__), modules)
    assert "agents.torch_archive" in imports_of("agents.sb3_checkpoint", Path(sb3_checkpoint.__file__), modules)
    for name in ("read_checkpoint", "write_checkpoint_record", "checkpoint_record_path", "sb3_layers"):
        assert not hasattr(policy_file, name) and callable(getattr(sb3_checkpoint, name))


def test_a_checkpoint_without_side_file_says_what_it_assumes(
    tmp_path: Path, checkpoint: tuple[Path, Any]
) -> None:
    path = _copy_checkpoint(checkpoint[0], tmp_path / "old.zip", {})
    with pytest.warns(UserWarning, match="no side file old.policy.json.*'tanh'"):
        policy = read_checkpoint(path)
    assert policy.activation == "tanh" and policy.num_players is None


def test_loading_never_unpickles(
    tmp_path: Path, checkpoint: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy_checkpoint(checkpoint[0], tmp_path / "final.zip", {})
    write_checkpoint_record(path, num_players=2, features="extended", activation="relu")
    import cloudpickle

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a policy load unpickled something")

    for module, name in [(pickle, "load"), (pickle, "loads"), (pickle, "Unpickler"), (cloudpickle, "loads")]:
        monkeypatch.setattr(module, name, refuse)
    assert NumpyPolicy.load(POLICIES / "ppo_2p.npz").num_players == 2
    assert NumpyPolicy.load(path).num_players == 2


def test_a_crafted_checkpoint_runs_no_code(
    tmp_path: Path, checkpoint: tuple[Path, Any], reference: dict[str, np.ndarray]
) -> None:
    marker = tmp_path / "payload_ran"
    source = checkpoint[0]
    with zipfile.ZipFile(source) as archive:
        data = json.loads(archive.read("data"))
    # SB3 unpickles every ":serialized:" entry of `data` when it loads a model.
    data["observation_space"][":serialized:"] = base64.b64encode(
        pickle.dumps(_payload_class(marker))
    ).decode()
    crafted = _copy_checkpoint(source, tmp_path / "crafted.zip", {"data": json.dumps(data).encode()})
    with pytest.warns(UserWarning, match="no side file"):  # loaded from its weights alone, and says so
        agent = agents.make("ppo", path=crafted)
    observation = _observation_dicts(reference, 2)[0]
    assert observation["action_mask"][agent.act(observation)] == 1
    assert not marker.exists()

    # A payload as policy.pth, bare or as the pickle of a torch archive, is read as data: refused.
    payload = pickle.dumps(_payload_class(marker), protocol=2)
    for policy_pth, named in [
        (payload, "policy.pth: not a torch archive"),
        (_zip_bytes({"archive/data.pkl": payload}), "data.pkl holds a call, not a mapping of names to tensors"),
    ]:
        poisoned = _copy_checkpoint(source, tmp_path / "poisoned.zip", {"policy.pth": policy_pth})
        with pytest.raises(ValueError, match=named), pytest.warns(UserWarning, match="no side file"):
            agents.make("ppo", path=poisoned)
    assert not marker.exists()


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_policy_file_holding_a_pickled_array_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "payload_ran"
    shipped = POLICIES / "ppo_2p.npz"
    target = tmp_path / "evil.npz"
    with np.load(shipped, allow_pickle=False) as archive:
        arrays: dict[str, Any] = {key: archive[key] for key in archive.files}
    arrays["policy/0/bias"] = np.array([_payload_class(marker)], dtype=object)
    np.savez(target, **arrays)
    record = json.loads(record_path(shipped).read_text())
    record["sha256"] = hashlib.sha256(target.read_bytes()).hexdigest()
    record_path(target).write_text(json.dumps(record))
    with pytest.raises(ValueError, match="not a NumPy .npz of plain arrays"):
        load_policy_file(target)
    assert not marker.exists()


def _edited_copy(tmp_path: Path, edit: Any) -> Path:
    target = tmp_path / "edited.npz"  # a policy without a value network: some edits add one
    target.write_bytes((POLICIES / "ppo_2p_distilled.npz").read_bytes())
    record = json.loads(record_path(POLICIES / "ppo_2p_distilled.npz").read_text())
    edit(record)
    record_path(target).write_text(json.dumps(record))
    return target


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda r: r.update(format="something else"), "'format'"),
        (lambda r: r.update(version=2), "'version'"),
        (lambda r: r.update(sha256="0" * 64), "'sha256'"),
        (lambda r: r.update(num_players=5), "num_players"),
        (lambda r: r.update(activation="gelu"), "activation"),
        (lambda r: r.update(features="raw"), "features"),
        (lambda r: r["networks"]["policy"].update(widths=[340, 512, 58]), "'networks.policy.arrays'"),
        (lambda r: r["networks"]["policy"].update(widths=[340, 500, 512, 58]), "'networks.policy.widths'"),
        (lambda r: r["networks"].update(critic={}), "'networks'"),
        (
            lambda r: r["networks"].update(
                value={"widths": [340, 1], "arrays": ["value/0/weight", "value/0/bias"]}
            ),
            "lacks the arrays",
        ),
        (lambda r: r.update(provenance=[1]), "'provenance'"),
        (lambda r: r.update(value_unit=40.0), "'value_unit' must be a number in .* beside a value network"),
        (lambda r: r.update(max_pip=3), "'hand_size' must be an integer"),
        (lambda r: r.update(max_pip="3", hand_size=3, protected=1), "'max_pip' must be an integer"),
        (lambda r: r.update(max_pip=20, hand_size=3, protected=1), "are no game: max_pip"),
        (lambda r: r.update(max_pip=3, hand_size=3, protected=1), r"policy/0: expected weight \(out, 151\)"),
    ],
)
def test_a_malformed_policy_file_is_a_value_error(tmp_path: Path, edit: Any, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        load_policy_file(_edited_copy(tmp_path, edit))


def test_the_hand_built_archives_of_the_tests_are_what_torch_saves() -> None:
    import torch

    arrays = sb3_arrays() | {"x": np.arange(3, dtype=np.float64), "y": np.ones((2, 2), np.float16)}
    state = torch.load(io.BytesIO(archive_of(arrays)), map_location="cpu", weights_only=True)
    assert list(state) == list(arrays)
    for name, array in arrays.items():
        assert state[name].numpy().dtype == array.dtype
        np.testing.assert_array_equal(state[name].numpy(), array)


def _torch_tensors(kind: str) -> dict[Any, Any]:
    """SB3's parameters as torch tensors, one of them replaced by a tensor of ``kind``."""
    import torch

    state: dict[Any, Any] = {name: torch.from_numpy(array) for name, array in sb3_arrays().items()}
    weight = state["action_net.weight"]
    replaced = {
        "stride-0": lambda: torch.zeros(1).expand(60000, 60000),
        "transposed": lambda: weight.T.contiguous().T,
        "bfloat16": lambda: weight.to(torch.bfloat16),
        "float8": lambda: weight.to(torch.float8_e4m3fn),
        "int64": lambda: weight.to(torch.int64),
        "sparse": lambda: weight.to_sparse(),
        "quantized": lambda: torch.quantize_per_tensor(weight, 0.1, 0, torch.qint8),
        "1-d": lambda: weight.reshape(-1),
        "0-d": lambda: weight[0, 0],
    }
    if kind == "integer key":
        state[1] = state.pop("action_net.weight")
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch deprecates quantized tensors
            state["action_net.weight"] = replaced[kind]()
    return state


@pytest.mark.parametrize(
    ("kind", "named"),
    [
        ("stride-0", r"tensor 'action_net.weight' is a view of shape \(60000, 60000\) with strides \(0, 0\)"),
        ("transposed", r"tensor 'action_net.weight' is a view of shape \(58, 8\) with strides \(1, 58\)"),
        ("bfloat16", "tensor 'action_net.weight' holds BFloat16 values"),
        ("float8", "tensor 'action_net.weight' is a tensor of float8_e4m3fn values"),
        ("int64", "tensor 'action_net.weight' holds Long values"),
        ("sparse", "tensor 'action_net.weight' is built by torch._utils._rebuild_sparse_tensor"),
        ("quantized", "tensor 'action_net.weight' is built by torch._utils._rebuild_qtensor"),
        ("1-d", r"action_net.weight has the shape \(464,\), not \(out, 8\)"),
        ("0-d", r"action_net.weight has the shape \(\), not \(out, 8\)"),
        ("integer key", "the key 1 is not a tensor name"),
    ],
)
def test_torch_saved_tensors_a_policy_cannot_hold_are_one_value_error(tmp_path: Path, kind: str, named: str) -> None:
    import torch

    buffer = io.BytesIO()
    torch.save(_torch_tensors(kind), buffer)
    path = write_checkpoint(tmp_path / "bad.zip", buffer.getvalue())
    with pytest.raises(ValueError, match=named) as raised:
        read_checkpoint(path)
    assert str(raised.value).startswith(f"{path}: policy.pth: ") and "\n" not in str(raised.value)


def test_files_that_are_no_policy_are_value_errors(tmp_path: Path, checkpoint: tuple[Path, Any]) -> None:
    (tmp_path / "notes.zip").write_bytes(b"not a zip")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("readme.txt", "hello")
    (tmp_path / "weights.pt").write_bytes(b"")
    (tmp_path / "lonely.npz").write_bytes((POLICIES / "ppo_2p.npz").read_bytes())
    for path, named in [
        (tmp_path / "notes.zip", "not an SB3 model"),
        (tmp_path / "other.zip", r"not an SB3 model \(no policy.pth"),
        (tmp_path / "weights.pt", r"\.npz\) or a training checkpoint"),
        (tmp_path / "lonely.npz", "lonely.json"),
        (tmp_path / "missing.npz", "path must be an existing"),
    ]:
        with pytest.raises(ValueError, match=named):
            agents.make("ppo", path=path)


def test_export_writes_a_policy_file_from_a_model_or_a_checkpoint(
    tmp_path: Path, checkpoint: tuple[Path, Any], reference: dict[str, np.ndarray]
) -> None:
    source, model = checkpoint
    vectors, masks = _observations(reference, 2)
    inputs = encode_batch(vectors, masks, "extended")
    written = export_policy(model, tmp_path / "a.npz", num_players=2, provenance={"run": "test"}, value_unit=50.0)
    policy = NumpyPolicy.load(written)
    assert policy.weights.value_unit == 50.0 and json.loads(record_path(written).read_text())["value_unit"] == 50.0
    np.testing.assert_allclose(policy.logits_batch(inputs), _torch_logits(model, inputs), atol=1e-5, rtol=0)
    assert policy.has_value and policy.weights.provenance == {"run": "test"}
    import torch

    with torch.no_grad():
        values = model.policy.predict_values(torch.as_tensor(inputs)).numpy()[:, 0]
    np.testing.assert_allclose(policy.values_batch(inputs), values, atol=1e-5, rtol=0)
    assert not NumpyPolicy.load(
        export_policy(model.policy, tmp_path / "b.npz", num_players=2, value=False)
    ).has_value

    path = _copy_checkpoint(source, tmp_path / "final.zip", {})
    write_checkpoint_record(path, num_players=2, features="extended", activation="relu")
    from_checkpoint = NumpyPolicy.load(export_policy(path, tmp_path / "c.npz"))
    np.testing.assert_array_equal(from_checkpoint.logits_batch(inputs), policy.logits_batch(inputs))
    assert from_checkpoint.weights.provenance == {"exported_from": str(path)}
    with pytest.raises(ValueError, match="num_players=3 contradicts"):
        export_policy(path, tmp_path / "d.npz", num_players=3)
    with pytest.raises(ValueError, match="num_players"):
        export_policy(model, tmp_path / "e.npz")


def test_a_policy_for_another_table_size_is_a_value_error(reference: dict[str, np.ndarray]) -> None:
    three = POLICIES / "ppo_3p.npz"
    two_player_table = _observation_dicts(reference, 2)[0]
    with pytest.raises(ValueError, match="trained for 3 players, but the table has 2 players"):
        agents.make("ppo", path=three).act(two_player_table)
    with pytest.raises(ValueError, match="trained for 3 players, but the table has 2 players"):
        agents.make("ppo", path=three, num_players=2)
    with pytest.raises(ValueError, match="num_players=4, but the table has 2"):
        agents.make("ppo", num_players=4).act(two_player_table)
    with pytest.raises(ValueError, match="num_players must be one of 2, 3, 4"):
        agents.make("ppo", num_players=5)
    for observation in _observation_dicts(reference, 3)[:5]:
        assert observation["action_mask"][agents.make("ppo", path=three, num_players=3).act(observation)] == 1


def test_the_default_agent_plays_the_shipped_policy_for_the_tables_size(
    reference: dict[str, np.ndarray],
) -> None:
    agent = agents.make("ppo")
    for players in (3, 2, 4):
        shipped = NumpyPolicy.load(shipped_policy(players))
        for observation in _observation_dicts(reference, players):
            assert agent.act(observation) == shipped.choose(observation, True, np.random.default_rng())
        assert agent.policy_for(players).num_players == players
        assert agent.policy_for(players) is agent.policy_for(players)  # loaded once


def test_sampled_batch_actions_follow_the_policys_probabilities(reference: dict[str, np.ndarray]) -> None:
    policy = NumpyPolicy.load(POLICIES / "ppo_2p_selfplay.npz")
    vectors, masks = _observations(reference, 2)
    row = int(np.argmax(masks.sum(axis=1)))  # the observation with the most legal actions
    draws = 20_000
    actions = policy.act_batch(
        np.repeat(vectors[row : row + 1], draws, 0),
        np.repeat(masks[row : row + 1], draws, 0),
        False,
        np.random.default_rng(0),
    )
    legal = np.flatnonzero(masks[row])
    assert set(actions.tolist()) <= set(legal.tolist())
    logits = policy.logits_batch(encode_batch(vectors[row : row + 1], masks[row : row + 1]))[0][legal]
    probabilities = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    frequencies = np.array([(actions == action).mean() for action in legal])
    np.testing.assert_allclose(frequencies, probabilities, atol=4 * np.sqrt(0.25 / draws))


def test_playing_a_shipped_policy_needs_no_torch() -> None:
    script = """
import sys
import agents, draw_env
env = draw_env.env(num_players=3)
env.reset(seed=0)
players = [agents.make("ppo"), agents.make("ppo", path="agents/policies/ppo_3p_selfplay.npz"), agents.make("ppo")]
for name in env.agent_iter():
    observation, _, terminated, truncated, _ = env.last()
    env.step(None if terminated or truncated else players[int(name[-1])].act(observation))
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "stable_baselines3", "sb3_contrib", "cloudpickle"))
print(heavy)
"""
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == "[]", result.stdout


def test_the_export_command_converts_a_checkpoint(
    tmp_path: Path, checkpoint: tuple[Path, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from train.export import main

    path = _copy_checkpoint(checkpoint[0], tmp_path / "final.zip", {})
    write_checkpoint_record(path, num_players=2, features="extended", activation="relu")
    assert main([str(path), str(tmp_path / "shared.npz"), "--no-value"]) == 0
    assert "shared.npz" in capsys.readouterr().out
    shared = NumpyPolicy.load(tmp_path / "shared.npz")
    assert shared.num_players == 2 and not shared.has_value
    assert main([str(path), str(tmp_path / "valued.npz"), "--value-unit", "50"]) == 0
    assert NumpyPolicy.load(tmp_path / "valued.npz").weights.value_unit == 50.0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main([str(path), str(tmp_path / "bad.npz"), "--value-unit", "-1"])
    assert exit_info.value.code == 2 and "value_unit must be a number" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path / "missing.zip"), str(tmp_path / "x.npz")])
    assert exit_info.value.code == 2
    assert "missing.zip: no such checkpoint file" in capsys.readouterr().err


VARIANT = DrawGame(2, max_pip=3, hand_size=3, protected=1)


def _variant_policy(tmp_path: Path, game: DrawGame = VARIANT) -> Path:
    """A small random policy file for ``game``: its layout's inputs, its actions' outputs."""
    rng = np.random.default_rng(0)
    widths = [feature_size("extended", game), 16, game.num_actions]
    layers = tuple(
        (rng.normal(size=(out, inputs)).astype(np.float32), rng.normal(size=out).astype(np.float32))
        for inputs, out in zip(widths, widths[1:], strict=False)
    )
    weights = PolicyWeights(layers, "relu", "extended", game.num_players, variant=game.variant)
    return save_policy_file(weights, tmp_path / "variant.npz")


def _variant_observations(game: DrawGame, count: int) -> list[dict[str, np.ndarray]]:
    env = draw_env.env(num_players=game.num_players, **game.variant)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    found = []
    while len(found) < count:
        for _name in env.agent_iter():
            observation, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            found.append(observation)
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        env.reset(seed=len(found))
    return found[:count]


def test_a_variant_policy_records_its_game_and_plays_it(tmp_path: Path) -> None:
    path = _variant_policy(tmp_path)
    record = json.loads(record_path(path).read_text())
    assert (record["max_pip"], record["hand_size"], record["protected"]) == (3, 3, 1)
    assert load_policy_file(path).variant == VARIANT.variant
    agent = agents.make("network", path=path, deterministic=False, seed=0)
    layers = load_policy_file(path).policy
    for observation in _variant_observations(VARIANT, 12):
        hidden = encode_observation(observation, "extended", VARIANT).astype(np.float64)
        hidden = np.maximum(layers[0][0] @ hidden + layers[0][1], 0.0)
        logits = layers[1][0] @ hidden + layers[1][1]
        legal = observation["action_mask"] != 0
        expected = np.zeros(VARIANT.num_actions)
        expected[legal] = np.exp(logits[legal] - logits[legal].max()) / np.exp(logits[legal] - logits[legal].max()).sum()
        assert np.allclose(agent.action_probabilities(observation), expected, atol=1e-5)
        assert legal[agent.act(observation)]
    observations = _variant_observations(VARIANT, 6)
    batch = agent.action_probabilities_batch(np.stack([o["observation"] for o in observations]),
                                             np.stack([o["action_mask"] for o in observations]))
    assert np.allclose(batch, [agent.action_probabilities(o) for o in observations], atol=1e-6)


@pytest.mark.parametrize("features", ["scaled", "extended"])
def test_the_seeds_game_encodes_the_same_named_or_not(reference: dict[str, np.ndarray], features: str) -> None:
    observations, masks = _observations(reference, 3)
    np.testing.assert_array_equal(
        encode_batch(observations, masks, features, DrawGame(3)), encode_batch(observations, masks, features)
    )


def test_a_seeds_game_variant_is_written_as_the_shipped_files_are(tmp_path: Path) -> None:
    policy = NumpyPolicy.load(POLICIES / "ppo_2p.npz")
    copy = policy.save(tmp_path / "copy.npz", provenance=policy.weights.provenance)
    assert copy.read_bytes() == (POLICIES / "ppo_2p.npz").read_bytes()
    assert record_path(copy).read_text() == record_path(POLICIES / "ppo_2p.npz").read_text()
    seeds = dataclasses.replace(policy.weights, variant=DrawGame(2).variant)
    assert seeds.variant is None


def test_the_network_refuses_another_variant_naming_the_file_and_both(tmp_path: Path) -> None:
    path = _variant_policy(tmp_path)
    variant_agent = agents.make("network", path=path)
    [seeds_observation] = _variant_observations(DrawGame(2), 1)
    [variant_observation] = _variant_observations(VARIANT, 1)
    with pytest.raises(ValueError, match=r"variant\.npz' was trained for max_pip=3, hand_size=3, protected=1 .*max_pip=6"):
        variant_agent.act(seeds_observation)
    with pytest.raises(ValueError, match=r"ppo_2p\.npz' was trained for max_pip=6, hand_size=7, protected=2 .*max_pip=3"):
        agents.make("network").action_probabilities(variant_observation)
    with pytest.raises(ValueError, match=r"variant\.npz' was trained for max_pip=3, hand_size=3, protected=1, "
                                         r"not for max_pip=3, hand_size=3, protected=2"):
        variant_agent.check_game(DrawGame(2, max_pip=3, hand_size=3, protected=2))
    with pytest.raises(ValueError, match=r"ppo_2p\.npz' was trained for max_pip=6, hand_size=7, protected=2, not for max_pip=3"):
        agents.make("network").check_game(VARIANT)
    variant_agent.check_game(VARIANT)
    agents.make("network").check_game(DrawGame(2))
    with pytest.raises(ValueError, match=r"variant\.npz' was trained for max_pip=3, hand_size=3, protected=1, not for max_pip=6"):
        agents.make("ppo_search", path=path, simulations=10).act(seeds_observation)


# ---------------------------------------------------------------------------- the value's unit


def test_the_value_unit_is_written_and_read(tmp_path: Path) -> None:
    """A policy file records the points one unit of its value network's output is worth; the
    shipped ones say theirs (expert iteration: the searches' 40; self-play: 1 / 0.02)."""
    assert NumpyPolicy.load(POLICIES / "ppo_2p.npz").weights.value_unit == 40.0
    policy = NumpyPolicy.load(POLICIES / "ppo_3p_selfplay.npz")
    assert policy.weights.value_unit == 50.0
    copy = NumpyPolicy.load(policy.save(tmp_path / "copy.npz"))
    assert copy.weights.value_unit == 50.0
    jax_unit = dataclasses.replace(policy.weights, value_unit=20.0)
    assert load_policy_file(save_policy_file(jax_unit, tmp_path / "jax.npz")).value_unit == 20.0
    # Without a value network, no unit is written (nothing to show in points).
    bare = dataclasses.replace(policy.weights, value=None)
    written = save_policy_file(bare, tmp_path / "bare.npz")
    assert "value_unit" not in json.loads(record_path(written).read_text())
    assert load_policy_file(written).value_unit is None


@pytest.mark.parametrize("unit", [0, -1.0, "40", True, 1e7, None])
def test_a_bad_value_unit_is_a_value_error_naming_the_file_and_field(tmp_path: Path, unit: Any) -> None:
    target = tmp_path / "unit.npz"
    target.write_bytes((POLICIES / "ppo_2p_selfplay.npz").read_bytes())
    record = json.loads(record_path(POLICIES / "ppo_2p_selfplay.npz").read_text())
    if unit is None:  # an older file: no unit, no value shown
        del record["value_unit"]
        record_path(target).write_text(json.dumps(record))
        assert load_policy_file(target).value_unit is None
        return
    record["value_unit"] = unit
    record_path(target).write_text(json.dumps(record))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(record_path(target)))}: 'value_unit' must be"):
        load_policy_file(target)


def test_each_trainer_records_its_value_unit() -> None:
    from train.jax_ppo.config import JaxPPOConfig
    from train.rllib.config import RLlibConfig
    from train.selfplay.config import TrainConfig

    assert TrainConfig().value_unit == 1 / 0.02 and JaxPPOConfig().value_unit == 1 / 0.05
    assert TrainConfig(reward_scale=0.1).value_unit == 10.0
    assert TrainConfig(reward="win_loss", episode="match").value_unit is None  # no points to show
    assert RLlibConfig().env.value_unit == 1 / 0.02
