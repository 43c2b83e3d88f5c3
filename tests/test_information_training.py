"""Every training pipeline on information states: ``obs_type`` in its config, its games of that type,
and the type recorded in the policy files (and checkpoints) it writes. Budgets of seconds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agents
import draw_env
from agents.policy_file import load_policy_file, record_path
from draw_env.rules import DrawGame
from train.config import ConfigError, build, load

ROOT = Path(__file__).resolve().parent.parent
MINI = DrawGame(2, max_pip=3, hand_size=3, protected=3)
INFO = "information_state"


def plays_a_hand(path: Path, game: DrawGame) -> None:
    """The policy file at ``path`` plays a hand of ``game`` given information states."""
    agent = agents.make("network", path=str(path))
    assert agent.obs_type == INFO
    env = draw_env.env(obs_type=INFO, episode="hand", **game.variant)
    env.reset(seed=2)
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else agent.act(observation))
    assert not env.agents


# ------------------------------------------------------------------------------ self-play


SELFPLAY = [
    "total_timesteps=128", "n_envs=2", "snapshot_every=64", "checkpoint_every=128", "tensorboard=false",
    "progress_bar=false", "ppo.num_steps=32", "ppo.minibatch_size=64", "ppo.update_epochs=1", "ppo.net_arch=[8]",
    "eval.every=0", "final_eval.matches=1", "final_eval.opponents=[heaviest]", f"obs_type={INFO}",
]


@pytest.fixture(scope="module")
def selfplay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from train.selfplay.config import TrainConfig
    from train.selfplay.run import train

    output = tmp_path_factory.mktemp("selfplay") / "run"
    config = load(TrainConfig, ROOT / "configs" / "selfplay_mini.yaml", [*SELFPLAY, f"output_dir={output}"])
    assert train(config)["timesteps"] == 128
    return output


def test_self_play_on_information_states_records_them_everywhere(selfplay: Path) -> None:
    assert json.loads(record_path(selfplay / "final.npz").read_text())["obs_type"] == INFO
    assert json.loads((selfplay / "final.policy.json").read_text())["obs_type"] == INFO
    state = json.loads((selfplay / "final.state.json").read_text())
    assert state["config"]["obs_type"] == INFO and state["snapshots"]
    assert all(snapshot["obs_type"] == INFO for snapshot in state["snapshots"])
    plays_a_hand(selfplay / "final.npz", MINI)


def test_self_play_resumes_on_information_states_and_refuses_another_type(selfplay: Path, tmp_path: Path) -> None:
    from train.selfplay.config import TrainConfig
    from train.selfplay.run import train

    overrides = [*SELFPLAY, f"output_dir={tmp_path / 'resumed'}", "total_timesteps=192"]
    config = load(TrainConfig, ROOT / "configs" / "selfplay_mini.yaml", overrides)
    assert train(config, resume=selfplay / "final.zip")["timesteps"] == 192
    other = load(TrainConfig, ROOT / "configs" / "selfplay_mini.yaml", [*overrides[:-2], "obs_type=observation",
                                                                         f"output_dir={tmp_path / 'other'}"])
    with pytest.raises(ConfigError, match="obs_type is 'information_state' in the checkpoint and 'observation'"):
        train(other, resume=selfplay / "final.zip")


def test_an_information_state_learner_plays_against_a_network_of_observations() -> None:
    from train.learner_games import LearnerGames

    shipped = str(ROOT / "agents" / "policies" / "ppo_2p.npz")
    games = LearnerGames(4, 2, obs_type=INFO, opponents={f"ppo:path={shipped}": 1.0})
    observation = games.reset(seed=0)
    assert observation.shape[1] == games.feature_size > 340
    for _ in range(10):  # the opponent is given the observations it reads
        games.step(games.action_mask.argmax(axis=1))


# ------------------------------------------------------------------------------ the exploiter


def test_the_exploiter_on_information_states_records_them(tmp_path: Path) -> None:
    from tests.test_train_variants import exploit_args
    from train import cli

    assert cli.main(exploit_args(tmp_path, obs_type=INFO)) == 0
    weights = load_policy_file(tmp_path / "exploit" / "final.npz")
    assert weights.obs_type == INFO and weights.game == MINI


def test_an_exploiter_refuses_an_init_of_the_other_type_in_one_line(
    tmp_path: Path, selfplay: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_train_variants import exploit_args
    from train import cli

    with pytest.raises(SystemExit) as exit_status:
        cli.main(exploit_args(tmp_path, init=str(selfplay / "final.npz")))
    assert exit_status.value.code == 2
    error = capsys.readouterr().err.strip()
    assert "config key 'obs_type' must be 'information_state'" in error and "\n" not in error


# ------------------------------------------------------------------------------ expert iteration


def test_expert_iteration_on_information_states_guides_at_the_root(tmp_path: Path) -> None:
    from tests.test_exit_variants import tiny
    from train.exit.collect import ExitData
    from train.exit.run import run_exit

    output = tmp_path / "exit"
    run_exit(tiny(output, f"obs_type={INFO}", "guide=root", "guided_from=1", "iterations=1",
                  "partners={teacher: 1, heaviest: 1}"))
    game = DrawGame(2, max_pip=2, hand_size=2, protected=1)
    assert load_policy_file(output / "final.npz").obs_type == INFO
    from draw_env.observation import information_layout

    data = ExitData.load(output / "iter_001" / "data.npz")
    assert data.observations.shape[1:] == (information_layout(game).size,)
    plays_a_hand(output / "final.npz", game)


def test_expert_iteration_refuses_the_tree_guide_on_information_states() -> None:
    from tests.test_exit_variants import TINY
    from train.exit.config import ExitConfig

    with pytest.raises(ConfigError, match="config key 'guide' must be 'root' with obs_type: information_state"):
        load(ExitConfig, None, [*TINY, f"obs_type={INFO}", "guide=tree"])
    load(ExitConfig, None, [*TINY, f"obs_type={INFO}", "guide=tree", "guided_from=5", "iterations=4"])


# ------------------------------------------------------------------------------ PPO in JAX, RLlib


def test_ppo_in_jax_on_information_states_records_them(tmp_path: Path) -> None:
    pytest.importorskip("jax")
    pytest.importorskip("flax")
    pytest.importorskip("optax")
    from train import cli

    output = tmp_path / "jax"
    assert cli.main(["--config", str(ROOT / "configs" / "jax_ppo_quick.yaml"), "max_pip=3", "hand_size=3",
                     "protected=3", f"obs_type={INFO}", "num_envs=8", "num_steps=8", "updates=2", "hidden=[8]",
                     "eval.every=0", "final_eval.matches=2", "final_eval.opponents=[heaviest]",
                     f"output_dir={output}", "progress_bar=false"]) == 0
    assert load_policy_file(output / "final.npz").obs_type == INFO
    plays_a_hand(output / "final.npz", MINI)


def test_the_jax_features_of_an_information_state_are_numpys() -> None:
    pytest.importorskip("jax")
    import numpy as np

    from agents.inputs import encode_inputs
    from draw_env.vector import DrawVectorEnv
    from train.jax_ppo.policy import encode

    step = DrawVectorEnv(6, 2, "hand", obs_type=INFO, **MINI.variant).reset(seed=1)
    np.testing.assert_allclose(
        np.asarray(encode(step.observation, step.action_mask, MINI, INFO)),
        encode_inputs(step.observation, step.action_mask, "extended", MINI, INFO), atol=1e-6,
    )


def test_the_rllib_config_takes_obs_type() -> None:
    from train.rllib.config import RLlibConfig

    config = build(RLlibConfig, {"env": {"obs_type": INFO}})
    assert config.env.obs_type == INFO and build(RLlibConfig, {}).env.obs_type == "observation"
    with pytest.raises(ConfigError, match="obs_type"):
        build(RLlibConfig, {"env": {"obs_type": "history"}})


# ------------------------------------------------------------------------------ draw-bench


def bench(tmp_path: Path, **changes: Any) -> Any:
    from train.bench.config import BenchConfig

    data = {"algorithms": {"cfr": ["micro"]}, "seeds": [0], "budgets": {"micro": {"env_steps": 80_000}},
            "curve_points": 1, "settings_dir": str(ROOT / "configs/bench/algorithms"),
            "output_dir": str(tmp_path / "bench"), "progress_bar": False, "obs_type": INFO, **changes}
    return build(BenchConfig, data)


def test_a_bench_cell_on_information_states_records_them_and_measures_its_table(tmp_path: Path) -> None:
    from arena.exploitability import agent_probabilities, exploitability
    from arena.specs import build_agent, parse_agent_spec
    from train.bench import protocol
    from train.bench.metrics import game_tree
    from train.bench.suite import run_suite

    config = bench(tmp_path)
    run_suite(config, plots=False, reps=100)
    record = json.loads((Path(config.output_dir) / "cells" / "cfr-micro-s0.json").read_text())
    assert record["obs_type"] == INFO
    name, kwargs = parse_agent_spec(record["final"]["spec"])
    agent = build_agent(name, kwargs)
    assert agent.obs_type == INFO
    measured = exploitability(game_tree(protocol.GAMES["micro"]), agent_probabilities(agent), obs_type=INFO)
    assert record["final"]["value"] == pytest.approx(measured.exploitability, abs=1e-12)
    assert record["curve"][-1]["score"] == pytest.approx(-measured.exploitability, abs=1e-12)


def test_a_bench_refuses_an_algorithm_of_observations_on_information_states(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config key 'obs_type': algorithm 'nfsp' trains on observations only"):
        bench(tmp_path, algorithms={"nfsp": ["micro"]})
    assert bench(tmp_path, obs_type="observation", algorithms={"nfsp": ["micro"]}).obs_type == "observation"


def test_a_target_of_information_states_needs_games_of_information_states(tmp_path: Path) -> None:
    from agents.policy_file import save_policy_file
    from tests.test_information_agents import random_policy
    from train.exploit.config import ExploitConfig

    path = save_policy_file(random_policy(MINI, INFO), tmp_path / "info.npz")
    keys = {"max_pip": 3, "hand_size": 3, "protected": 3, "target": f"network:path={path}"}
    with pytest.raises(ConfigError, match=r"config key 'target': agent 'network' reads information states"):
        build(ExploitConfig, keys)
    assert build(ExploitConfig, {**keys, "obs_type": INFO}).obs_type == INFO
