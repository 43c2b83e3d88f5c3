"""Training: config validation, a smoke run with resume, the NumPy actor, the shipped policy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.policy_network import NumpyPolicy, shipped_policy
from draw_env import env as make_aec_env
from draw_env.features import encode_observation
from train.config import build, load
from train.selfplay.config import TrainConfig

CONFIGS = Path(__file__).resolve().parent.parent / "configs"

# A tiny run: two rollouts of 2 x 256 steps, a snapshot, a checkpoint and an evaluation on the way.
SMOKE = [
    "total_timesteps=1024",
    "n_envs=2",
    "vec_env=batched",
    "snapshot_every=512",
    "checkpoint_every=512",
    "tensorboard=false",
    "progress_bar=false",
    "ppo.num_steps=256",
    "ppo.minibatch_size=128",
    "ppo.update_epochs=1",
    "ppo.net_arch=[32]",
    "eval.every=1024",
    "eval.matches=4",
    "eval.opponents=[heaviest]",
    "final_eval.matches=4",
    "final_eval.opponents=[variety]",
]


@pytest.mark.parametrize("name", ["selfplay_2p", "selfplay_3p", "selfplay_4p", "quick"])
def test_shipped_configs_load(name: str) -> None:
    config = load(TrainConfig, CONFIGS / f"{name}.yaml")
    assert isinstance(config, TrainConfig)


def test_overrides_reach_nested_keys_and_parse_yaml_values() -> None:
    config = load(TrainConfig,
        CONFIGS / "quick.yaml", ["ppo.learning_rate=1e-4", "eval.opponents=[variety]", "seed=3"]
    )
    assert config.ppo.learning_rate == pytest.approx(1e-4)
    assert config.eval.opponents == ["variety"]
    assert config.seed == 3


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"learning_rate": 1e-4}, "'learning_rate'"),
        ({"ppo": {"lr": 1e-4}}, "'ppo.lr'"),
        ({"num_players": 5}, "'num_players'"),
        ({"ppo": {"learning_rate": -1}}, "'ppo.learning_rate'"),
        ({"ppo": {"net_arch": []}}, "'ppo.net_arch'"),
        ({"ppo": {"minibatch_size": 10_000, "num_steps": 64}, "n_envs": 2}, "'ppo.minibatch_size'"),
        ({"opponents": {"alphazero": 1.0}}, "'opponents'"),
        ({"opponents": {"self": 0.0}}, "'opponents'"),
        ({"eval": {"opponents": ["self"]}}, "'eval.opponents'"),
        ({"vec_env": "subproc"}, r"^vec_env: subproc was removed; vec_env: batched \(the default\) replaces it$"),
        ({"vec_env": "dummy"}, "vec_env: dummy was removed"),
        ({"reward": "win_loss", "episode": "hand"}, "'reward'"),
        ({"tensorboard": "yes"}, "'tensorboard'"),
    ],
)
def test_bad_config_is_a_clear_error_naming_the_key(data: dict, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        build(TrainConfig, data)


def test_malformed_override_is_rejected() -> None:
    with pytest.raises(ValueError, match="KEY=VALUE"):
        load(TrainConfig, None, ["ppo.learning_rate"])


def _final_parameters(output_dir: Path) -> dict[str, np.ndarray]:
    policy = NumpyPolicy.load(output_dir / "final.zip")
    return {"w0": policy.weights.policy[0][0], "action": policy.weights.policy[-1][0]}


def test_smoke_training_run_resumes_and_repeats_with_its_seed(tmp_path: Path) -> None:
    from train.selfplay.run import train

    first = tmp_path / "first"
    summary = train(load(TrainConfig, CONFIGS / "quick.yaml", [*SMOKE, f"output_dir={first}"]))
    assert summary["timesteps"] == 1024
    assert [row["opponent"] for row in summary["final_eval"]] == ["variety"]
    assert (first / "learning_curve.png").stat().st_size > 0
    assert json.loads((first / "summary.json").read_text())["timesteps"] == 1024
    state = json.loads((first / "final.state.json").read_text())
    assert len(state["snapshots"]) == 2  # snapshots frozen after the rollouts ending at 512 and 1024
    with np.load(first / "final.pool.npz", allow_pickle=False) as pool:
        assert len(pool.files) == 2 * 2 * 2  # 2 snapshots x 2 layers ([32] hidden, output) x weight and bias
    eval_csv = (first / "eval.csv").read_text().splitlines()
    assert eval_csv[0].startswith("timesteps,") and len(eval_csv) == 2

    second = tmp_path / "second"
    train(load(TrainConfig, CONFIGS / "quick.yaml", [*SMOKE, f"output_dir={second}"]))
    for name, array in _final_parameters(first).items():
        np.testing.assert_array_equal(array, _final_parameters(second)[name], err_msg=name)

    resumed = tmp_path / "resumed"
    checkpoint = first / "checkpoints" / "step_512.zip"
    summary = train(
        load(TrainConfig, CONFIGS / "quick.yaml", [*SMOKE, f"output_dir={resumed}", "total_timesteps=1536"]),
        checkpoint,
    )
    assert summary["timesteps"] == 1536


def test_numpy_actor_matches_the_torch_policy(tmp_path: Path) -> None:
    import torch
    from sb3_contrib import MaskablePPO

    from train.sb3_adapter import weights_of
    from train.selfplay.run import build_model, build_vec_env

    config = load(TrainConfig, CONFIGS / "quick.yaml", [*SMOKE, f"output_dir={tmp_path}", "ppo.net_arch=[16,16]"])
    venv = build_vec_env(config)
    model: MaskablePPO = build_model(config, venv, None)
    actor = NumpyPolicy(weights_of(model, None))
    aec = make_aec_env(num_players=2)
    aec.reset(seed=0)

    for _agent in aec.agent_iter(60):
        observation, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            break
        inputs = encode_observation(observation, config.features)
        with torch.no_grad():
            distribution = model.policy.get_distribution(torch.as_tensor(inputs[None]))
            expected = distribution.distribution.logits.numpy()[0]
        logits = actor.logits(inputs)
        # torch's Categorical keeps normalised logits (log-probabilities): compare those.
        np.testing.assert_allclose(logits - np.log(np.exp(logits).sum()), expected, rtol=1e-4, atol=1e-4)
        masked_best, _ = model.predict(
            inputs, deterministic=True, action_masks=observation["action_mask"].astype(bool)
        )
        assert actor.choose(observation, deterministic=True, rng=np.random.default_rng()) == int(masked_best)
        aec.step(int(masked_best))
    venv.close()


def test_shipped_policy_loads_and_plays_only_legal_moves() -> None:
    assert shipped_policy(2).is_file() and shipped_policy(2).stat().st_size < 5_000_000
    agent = agents.make("ppo")
    sampler = agents.make("ppo", deterministic=False, seed=1)
    aec = make_aec_env(num_players=2, episode="match")
    aec.reset(seed=1)
    moves = 0
    for seat_agent in aec.agent_iter():
        observation, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            break
        player = agent if seat_agent == "player_0" else sampler
        action = player.act(observation)
        assert observation["action_mask"][action] == 1
        aec.step(action)
        moves += 1
    assert moves > 20
    assert all(aec.terminations.values())
    assert all(reward > -168 for reward in aec.rewards.values())  # nobody was stopped by an illegal move


def test_ppo_agent_rejects_a_missing_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="path"):
        agents.make("ppo", path=tmp_path / "missing.zip")
