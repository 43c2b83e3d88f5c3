"""Distillation of the search agent into the policy: config, collection, fit, command line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.ismcts import ISMCTSAgent
from agents.policy_network import NumpyPolicy
from arena.specs import seed_sequence_int
from draw_env import env as make_aec_env
from draw_env.observation import view_from_observation
from train.config import DistillConfig, load_distill_config
from train.distill import main
from train.distill_data import collect, play_match, shard_paths
from train.distill_fit import fit

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
INIT = Path(__file__).resolve().parent.parent / "agents" / "policies" / "ppo_2p_selfplay.npz"

# A few cheap matches: a 4-simulation teacher is enough to exercise every path.
SMALL = [
    "teacher_simulations=4",
    "net_arch=[32]",
    "matches=3",
    "shard_matches=2",
    "workers=1",
    "epochs=3",
    "batch_size=64",
    "progress_bar=false",
    "final_eval.matches=2",
    "final_eval.opponents=[heaviest]",
    "final_eval.workers=1",
    "curve=[2]",
    "eval.matches=2",
    "eval.opponents=[variety]",
    "eval.workers=1",
]


def small_config(tmp_path: Path, *overrides: str) -> DistillConfig:
    return load_distill_config(None, [*SMALL, f"output_dir={tmp_path}", *overrides])


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_shipped_distill_configs_load(num_players: int) -> None:
    config = load_distill_config(CONFIGS / f"distill_{num_players}p.yaml")
    assert config.num_players == num_players
    assert config.teacher_simulations == ISMCTSAgent().simulations  # the default budget, as evaluated


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("teacher=ismcts", "'teacher'"),
        ("init=missing.zip", "'init'"),
        ("net_arch=[]", "'net_arch'"),
        ("partners={alphazero: 1}", "'partners'"),
        ("partners={'ppo:path=missing.zip': 1}", "'partners'"),
        ("partners={'ismcts:simulations': 1}", "'partners'"),
        ("partners={teacher: 0}", "'partners'"),
        ("workers=4", "'workers'"),
        ("temperature=0", "'temperature'"),
        ("validation_share=0.9", "'validation_share'"),
        ("curve=[3]", "'curve'"),
        ("curve=[2, 1]", "'curve'"),
        ("curve=[1]", "'curve'"),  # not a whole number of 2-match shards
        ("final_eval.opponents=[teacher]", "'final_eval.opponents'"),
    ],
)
def test_bad_distill_config_is_a_clear_error_naming_the_key(
    tmp_path: Path, override: str, named: str
) -> None:
    with pytest.raises(ValueError, match=named):
        small_config(tmp_path, override)


@pytest.mark.parametrize("partner", ["teacher", f"'ppo:path={INIT}'", "variety"])
def test_a_collected_match_labels_every_real_choice_with_the_teachers_values(
    tmp_path: Path, partner: str
) -> None:
    config = small_config(tmp_path, f"partners={{{partner}: 1}}")
    decisions = play_match(config, 0)
    assert len(decisions) > 20
    assert decisions.masks.sum(axis=1).min() >= 2  # forced moves are not recorded
    assert np.array_equal(np.isfinite(decisions.values), decisions.masks)
    # Values are scaled zero-sum hand points: at most 168 points either way.
    assert np.abs(decisions.values[decisions.masks]).max() <= 168 / 40 * 2
    again = play_match(config, 0)
    for key in ("observations", "masks", "values"):
        np.testing.assert_array_equal(getattr(decisions, key), getattr(again, key), err_msg=key)
    assert not np.array_equal(play_match(config, 1).observations[:5], decisions.observations[:5])


def test_the_recorded_values_are_the_teachers_search_of_that_observation(tmp_path: Path) -> None:
    decisions = play_match(small_config(tmp_path, "teacher_simulations=40"), 0)
    # The match's first draw from its seeded generator seeds the teacher (see play_match).
    teacher_seed = random.Random(seed_sequence_int(0, 0)).getrandbits(63)
    vector = decisions.observations[0].astype(np.float32)
    root = ISMCTSAgent(simulations=40, seed=teacher_seed).search(view_from_observation(vector, 2))
    legal = np.flatnonzero(decisions.masks[0])
    expected = [root.children[action].total / root.children[action].visits for action in legal]
    np.testing.assert_allclose(decisions.values[0][legal], expected, rtol=1e-6)


def test_collection_writes_shards_and_keeps_them_on_a_rerun(tmp_path: Path) -> None:
    config = small_config(tmp_path)
    decisions = collect(config)
    paths = shard_paths(config)
    assert [path.name for path in paths] == ["shard_00000.npz", "shard_00001.npz"]
    stamps = [path.stat().st_mtime_ns for path in paths]
    again = collect(config)
    assert [path.stat().st_mtime_ns for path in paths] == stamps
    np.testing.assert_array_equal(again.values, decisions.values)
    played = [play_match(config, match) for match in range(3)]
    assert len(decisions) == sum(len(part) for part in played)
    assert decisions.seconds is not None and decisions.seconds > 0


def test_two_worker_processes_collect_the_same_decisions_as_one(tmp_path: Path) -> None:
    alone = collect(small_config(tmp_path / "one", "matches=4"))
    pooled = collect(small_config(tmp_path / "two", "matches=4", "workers=2"))
    for key in ("observations", "masks", "values"):
        np.testing.assert_array_equal(getattr(alone, key), getattr(pooled, key), err_msg=key)


def test_fit_trains_a_fresh_actor_towards_the_teacher(tmp_path: Path) -> None:
    config = small_config(tmp_path, "epochs=6", "validation_share=0.2")
    network, reports = fit(config, collect(config))
    assert len(reports) == 6
    assert reports[-1].train_loss < reports[0].train_loss
    assert 0.0 <= reports[-1].agreement <= 1.0 and reports[-1].regret_points >= 0.0
    actor = NumpyPolicy(network.to_weights(None))
    assert [weight.shape[0] for weight, _ in actor.weights.policy[:-1]] == [
        32
    ] and actor.features == "extended"


def test_fit_from_a_policy_file_moves_only_its_actor(tmp_path: Path) -> None:
    config = small_config(tmp_path, f"init={INIT}", "epochs=2")
    network, _ = fit(config, collect(config))
    before = NumpyPolicy.load(INIT).weights
    after = network.to_weights(None)
    assert not np.array_equal(before.policy[-1][0], after.policy[-1][0])
    assert before.value is not None and after.value is not None
    for (weight, bias), (weight_after, bias_after) in zip(before.value, after.value, strict=True):
        np.testing.assert_array_equal(weight, weight_after)
        np.testing.assert_array_equal(bias, bias_after)


def test_draw_distill_writes_a_policy_that_plays_legal_moves(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["--config", str(CONFIGS / "distill_2p.yaml"), *SMALL, f"output_dir={tmp_path}"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["decisions"] > 0 and len(summary["fit"]) == 3
    assert [row["opponent"] for row in summary["final_eval"]] == ["heaviest"]
    # The learning curve: a fit on the first 2 matches, then final.zip (all 3), against variety.
    curve = summary["learning_curve"]
    assert [row["opponent"] for row in curve] == ["variety", "variety"]
    assert curve[0]["timesteps"] < curve[1]["timesteps"] == summary["decisions"]
    assert (tmp_path / "curve" / "matches_2.npz").is_file()
    assert (tmp_path / "learning_curve.png").stat().st_size > 0
    assert "distilled policy" in capsys.readouterr().out
    assert (tmp_path / "final.zip").is_file() and (tmp_path / "final.policy.json").is_file()
    agent = agents.make("ppo", path=tmp_path / "final.npz")
    aec = make_aec_env(num_players=2)
    aec.reset(seed=3)
    for _seat_agent in aec.agent_iter():
        observation, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            break
        action = agent.act(observation)
        assert observation["action_mask"][action] == 1
        aec.step(action)
    assert all(aec.terminations.values())


def test_draw_distill_rejects_a_bad_override_naming_it(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["teacher_simulations=0"])
    assert "teacher_simulations" in capsys.readouterr().err


class _Payload:
    """Unpickling this creates a file: the proof that a loader ran code from a file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (str(self.marker), "w"))


def test_an_init_checkpoint_is_read_as_weights_only(tmp_path: Path) -> None:
    """A crafted checkpoint whose pickled ``data`` entry runs code: ``init`` never unpickles it."""
    import base64
    import pickle
    import zipfile

    from train.network import PolicyValueNetwork
    from train.sb3_adapter import save_network_checkpoint

    honest = tmp_path / "honest.zip"
    save_network_checkpoint(PolicyValueNetwork("extended", [8], [8], "tanh", seed=1), honest, num_players=2, seed=1)
    marker = tmp_path / "ran"
    crafted = tmp_path / "crafted.zip"
    with zipfile.ZipFile(honest) as source, zipfile.ZipFile(crafted, "w") as target:
        for entry in source.namelist():
            data = source.read(entry)
            if entry == "data":
                fields = json.loads(data)
                fields["policy_kwargs"][":serialized:"] = base64.b64encode(
                    pickle.dumps(_Payload(marker))
                ).decode()
                data = json.dumps(fields).encode()
            target.writestr(entry, data)
    honest.with_suffix(".policy.json").rename(crafted.with_suffix(".policy.json"))
    config = small_config(tmp_path / "run", f"init={crafted}", "epochs=1")
    network, _ = fit(config, collect(config))
    assert not marker.exists()
    assert [weight.shape[0] for weight, _ in network.to_weights(None).policy] == [8, 58]


def test_a_rerun_with_other_collection_settings_is_refused(tmp_path: Path) -> None:
    from train.config import ConfigError
    from train.distill import distill

    distill(small_config(tmp_path), stages=())
    distill(small_config(tmp_path, "epochs=5"), stages=())  # fit settings may change: same collection
    with pytest.raises(ConfigError, match="teacher_simulations is 4 there, 8 here.*--overwrite"):
        distill(small_config(tmp_path, "teacher_simulations=8"), stages=())
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "shard_00000.npz").write_bytes(b"another collection's")
    distill(small_config(tmp_path, "teacher_simulations=8"), stages=(), overwrite=True)
    assert not (tmp_path / "data").exists()
    assert json.loads((tmp_path / "config.json").read_text())["teacher_simulations"] == 8
