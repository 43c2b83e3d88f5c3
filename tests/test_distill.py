"""Distillation: expert iteration's first iteration, the plain compiled search as the teacher."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.ismcts import ISMCTSAgent
from agents.policy_network import NumpyPolicy
from draw_env import env as make_aec_env
from train import cli
from train.config import load
from train.exit.collect import ShardTask, play_shard
from train.exit.config import ExitConfig
from train.exit.fit import initial_weights
from train.pipelines import load_pipeline

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
INIT = Path(__file__).resolve().parent.parent / "agents" / "policies" / "ppo_2p_selfplay.npz"

# A few cheap matches: a 4-simulation teacher is enough to exercise every path.
SMALL = [
    "plain_simulations=4",
    "net_arch=[32]",
    "matches=3",
    "lockstep=2",
    "workers=1",
    "epochs=3",
    "batch_size=64",
    "progress_bar=false",
    "tensorboard=false",
    "eval.matches=2",
    "eval.opponents=[heaviest]",
    "eval.workers=1",
]


def small_config(tmp_path: Path, *overrides: str) -> ExitConfig:
    return load(ExitConfig, CONFIGS / "distill_2p.yaml", [*SMALL, f"output_dir={tmp_path}", *overrides])


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_shipped_distill_configs_load_as_one_iteration_of_the_plain_search(num_players: int) -> None:
    config = load_pipeline(CONFIGS / f"distill_{num_players}p.yaml")
    assert isinstance(config, ExitConfig) and config.num_players == num_players
    assert config.iterations == 1 < config.guided_from  # the plain search only: no network guides it
    assert config.plain_simulations == ISMCTSAgent().simulations  # the budget of ismcts_python by default


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
        ("eval.opponents=[teacher]", "'eval.opponents'"),
    ],
)
def test_bad_distill_config_is_a_clear_error_naming_the_key(tmp_path: Path, override: str, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        small_config(tmp_path, override)


@pytest.mark.parametrize(
    ("override", "replaced"),
    [
        ("teacher_simulations=200", "'teacher_simulations' was replaced by plain_simulations"),
        ("shard_matches=25", "'shard_matches' was replaced by lockstep"),
        ("final_eval.matches=2", "'final_eval' was replaced by eval"),
        ("validation_share=0.05", "'validation_share' was removed"),
        ("curve=[2]", "'curve' was removed"),
    ],
)
def test_the_former_distill_keys_say_what_replaced_them(tmp_path: Path, override: str, replaced: str) -> None:
    with pytest.raises(ValueError, match=f"^config key {replaced}"):
        small_config(tmp_path, override)


def _shard(config: ExitConfig, shard: int = 0, games: int = 2):
    return play_shard(ShardTask(config, initial_weights(config), 1, shard, games))


@pytest.mark.parametrize("partner", ["teacher", f"'ppo:path={INIT}'", "variety"])
def test_a_collected_shard_labels_every_real_choice_with_the_teachers_values(tmp_path: Path, partner: str) -> None:
    config = small_config(tmp_path, f"partners={{{partner}: 1}}")
    decisions = _shard(config)
    assert len(decisions) > 20
    assert decisions.masks.sum(axis=1).min() >= 2  # forced moves are not recorded
    assert np.array_equal(np.isfinite(decisions.values), decisions.masks)
    # Values are scaled zero-sum hand points: at most 168 points either way.
    assert np.abs(decisions.values[decisions.masks]).max() <= 168 / 40 * 2
    again = _shard(config)
    for key in ("observations", "masks", "values", "outcomes"):
        np.testing.assert_array_equal(getattr(decisions, key), getattr(again, key), err_msg=key)
    assert not np.array_equal(_shard(config, shard=1).observations[:5], decisions.observations[:5])


def test_partner_seats_play_the_partners_moves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a partner, its seats play its choices (here: always the heaviest tile), the teacher's its own."""
    from train.exit import collect

    chosen: list[int] = []
    real = collect.seat_partners

    def recorded(task: ShardTask):
        seats, drawn, players = real(task)
        for player in players.values():
            act = player.act_batch

            def counted(observations: np.ndarray, masks: np.ndarray, act=act) -> np.ndarray:
                chosen.extend(act(observations, masks))
                return act(observations, masks)

            player.act_batch = counted
        return seats, drawn, players

    monkeypatch.setattr(collect, "seat_partners", recorded)
    with_partner = _shard(small_config(tmp_path, "partners={heaviest: 1}"))
    alone = _shard(small_config(tmp_path))
    assert chosen  # the partner was asked
    assert not np.array_equal(with_partner.observations[:40], alone.observations[:40])


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

    from draw_env.single_agent import DrawSingleAgentEnv
    from train.checkpoints import save_model
    from train.network import PolicyValueNetwork
    from train.sb3_adapter import model_holding

    honest = tmp_path / "honest.zip"
    network = PolicyValueNetwork("extended", [8], [8], "tanh", seed=1)
    # SB3 builds a model from an environment's spaces; this one is never stepped.
    spaces = DrawSingleAgentEnv(num_players=2, episode="match", features=network.features)
    save_model(model_holding(network, spaces, 1), honest, num_players=2, features=network.features)
    marker = tmp_path / "ran"
    crafted = tmp_path / "crafted.zip"
    with zipfile.ZipFile(honest) as source, zipfile.ZipFile(crafted, "w") as target:
        for entry in source.namelist():
            data = source.read(entry)
            if entry == "data":
                fields = json.loads(data)
                fields["policy_kwargs"][":serialized:"] = base64.b64encode(pickle.dumps(_Payload(marker))).decode()
                data = json.dumps(fields).encode()
            target.writestr(entry, data)
    honest.with_suffix(".policy.json").rename(crafted.with_suffix(".policy.json"))
    weights = initial_weights(small_config(tmp_path / "run", f"init={crafted}"))
    assert not marker.exists()
    assert [weight.shape[0] for weight, _ in weights.policy] == [8, 58]


def test_a_distillation_writes_a_policy_that_plays_legal_moves(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    output = tmp_path / "run"
    assert cli.main(["--config", str(CONFIGS / "distill_2p.yaml"), *SMALL, f"output_dir={output}"]) == 0
    summary = json.loads((output / "summary.json").read_text())
    assert summary["decisions"] > 0 and summary["iterations"] == 1
    assert [row["opponent"] for row in summary["final_eval"]] == ["heaviest"]
    assert f"policy written to {output / 'final.npz'}" in capsys.readouterr().out
    assert NumpyPolicy.load(output / "final.npz").num_players == 2
    agent = agents.make("ppo", path=output / "final.npz")
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


def test_draw_distill_names_the_command_that_replaced_it(capsys: pytest.CaptureFixture) -> None:
    assert cli.distill_main(["--config", "configs/distill_2p.yaml"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "draw-train --config configs/distill_2p.yaml" in error[0]
