"""Self-play on a variant: the config keys, the learner games, the policy file that records it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import draw_env
from agents.policy_network import NetworkAgent
from draw_env.features import feature_size
from draw_env.rules import DrawGame
from train.config import ConfigError, load
from train.learner_games import LearnerGames
from train.selfplay.config import TrainConfig

ROOT = Path(__file__).resolve().parent.parent
MINI = ROOT / "configs" / "selfplay_mini.yaml"
TINY = [
    "total_timesteps=128",
    "n_envs=2",
    "snapshot_every=64",
    "checkpoint_every=128",
    "tensorboard=false",
    "progress_bar=false",
    "ppo.num_steps=32",
    "ppo.minibatch_size=64",
    "ppo.update_epochs=1",
    "ppo.net_arch=[8]",
    "eval.every=0",
    "final_eval.matches=1",
    "final_eval.opponents=[heaviest]",
]


def test_the_mini_config_plays_the_mini_variant() -> None:
    assert load(TrainConfig, MINI).game() == DrawGame(2, max_pip=3, hand_size=3, protected=3)
    assert load(TrainConfig, None).game().is_default  # a config without the keys (and so an earlier run's) plays the seeds' game


@pytest.mark.parametrize(
    "override", [["max_pip=3", "hand_size=9"], ["max_pip=10"], ["protected=-1"], ["hand_size=0"], ["max_pip=2", "protected=5"]]
)
def test_a_bad_variant_is_one_line_naming_the_key(override: list[str]) -> None:
    with pytest.raises(ConfigError) as error:
        load(TrainConfig, None, override)
    message = str(error.value)
    assert "\n" not in message and any(key in message for key in ("max_pip", "hand_size", "protected")), message


@pytest.mark.parametrize(
    ("key", "override"),
    [
        ("eval.opponents", "eval.opponents=[ismcts_python]"),
        ("final_eval.opponents", "final_eval.opponents=[heaviest, ismcts_python]"),
    ],
)
def test_a_variant_refuses_agents_that_play_only_the_seeds_game(key: str, override: str) -> None:
    with pytest.raises(ConfigError, match=f"config key '{key}': agent '\\w+' plays only the seeds' game") as error:
        load(TrainConfig, MINI, [override])
    assert "\n" not in str(error.value)
    load(TrainConfig, None, [override])  # the seeds' game takes them


def test_learner_games_of_a_variant_have_its_sizes_and_baselines_play_it() -> None:
    game = DrawGame(2, max_pip=3, hand_size=3, protected=3)
    games = LearnerGames(6, 2, max_pip=3, hand_size=3, protected=3, opponents={"heaviest": 1, "variety": 1, "random_forced": 1})
    observation = games.reset()
    assert observation.shape == (6, feature_size("extended", game))
    assert games.action_mask.shape == (6, game.num_actions) and games.single_action_space.n == game.num_actions
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(40):  # the opponents answer masks of 22 actions (they would raise on the seeds' 58)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in games.action_mask])
        ended += int(games.step(actions).done.sum())
    assert ended > 0


def mini(output: Path, *overrides: str) -> TrainConfig:
    return load(TrainConfig, MINI, [*TINY, f"output_dir={output}", *overrides])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from train.selfplay.run import train

    output = tmp_path_factory.mktemp("variant") / "run"
    assert train(mini(output))["timesteps"] == 128
    return output


def test_a_variant_run_writes_a_policy_file_of_the_variant_that_plays_its_game(run: Path) -> None:
    output = run
    agent = NetworkAgent(path=str(output / "final.npz"))
    assert agent.policy_for(2).weights.variant == {"max_pip": 3, "hand_size": 3, "protected": 3}
    env = draw_env.env(num_players=2, max_pip=3, hand_size=3, protected=3)
    env.reset(seed=1)
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else agent.act(observation))
    assert not env.agents  # the hand was played to its end


def test_a_variant_run_resumes_with_its_snapshots(run: Path, tmp_path: Path) -> None:
    from train.selfplay.run import train

    output = tmp_path / "resumed"
    assert train(mini(output, "total_timesteps=192"), resume=run / "final.zip")["timesteps"] == 192
    assert NetworkAgent(path=str(output / "final.npz")).policy_for(2).weights.game.max_pip == 3


def test_resuming_a_variant_checkpoint_in_another_game_is_refused_naming_the_keys(run: Path, tmp_path: Path) -> None:
    from train.selfplay.run import train

    output = tmp_path / "other"
    with pytest.raises(ConfigError, match="max_pip is 3 in the checkpoint and 6 in the config") as error:
        train(load(TrainConfig, None, [*TINY, f"output_dir={output}"]), resume=run / "final.zip")
    assert "hand_size is 3 in the checkpoint and None" in str(error.value) and not output.exists()


def test_a_checkpoint_saved_before_the_variant_keys_resumes_as_the_seeds_game(run: Path, tmp_path: Path) -> None:
    from train.checkpoints import read_resume_state

    for file in run.glob("final.*"):
        (tmp_path / file.name).write_bytes(file.read_bytes())
    state = json.loads((tmp_path / "final.state.json").read_text())
    for key in ("max_pip", "hand_size", "protected"):
        del state["config"][key]
    (tmp_path / "final.state.json").write_text(json.dumps(state))
    with pytest.raises(ConfigError, match="max_pip is 6 in the checkpoint and 3 in the config"):
        read_resume_state(tmp_path / "final.zip", mini(tmp_path / "out").to_dict())


@pytest.mark.parametrize("variant", [{"max_pip": 3}, {"max_pip": 3, "hand_size": "3", "protected": 3}, {"max_pip": 3, "hand_size": 9, "protected": 3}])
def test_a_checkpoint_side_file_with_a_bad_variant_is_refused_naming_it(run: Path, tmp_path: Path, variant: dict) -> None:
    from agents.sb3_checkpoint import read_checkpoint

    for file in run.glob("final.*"):
        (tmp_path / file.name).write_bytes(file.read_bytes())
    side = tmp_path / "final.policy.json"
    record = {key: value for key, value in json.loads(side.read_text()).items() if key not in variant | {"hand_size": 0, "protected": 0}}
    side.write_text(json.dumps({**record, **variant}))
    with pytest.raises(ValueError, match=f"{side}: .*(max_pip|hand_size)"):
        read_checkpoint(tmp_path / "final.zip")


def exploit_args(tmp_path: Path, **changes: object) -> list[str]:
    """``draw-train`` arguments of an exploiter of a few CPU-seconds on the mini variant."""
    settings = {
        "pipeline": "exploit", "max_pip": 3, "hand_size": 3, "protected": 3, "target": "heaviest",
        "cpu_minutes": 0.005, "n_envs": 4, "ppo": {"num_steps": 16, "minibatch_size": 64, "update_epochs": 1, "net_arch": [8]},
        "eval": {"every": 0.0, "matches": 1}, "final_eval": {"matches": 1},
        "output_dir": str(tmp_path / "exploit"), "progress_bar": False, **changes,
    }
    path = tmp_path / "exploit.yaml"
    path.write_text(json.dumps(settings))  # JSON is YAML
    return ["--config", str(path)]


def test_an_exploiter_of_a_variant_records_it(tmp_path: Path) -> None:
    from train import cli

    assert cli.main(exploit_args(tmp_path)) == 0
    weights = NetworkAgent(path=str(tmp_path / "exploit" / "final.npz")).policy_for(2).weights
    assert weights.game == DrawGame(2, max_pip=3, hand_size=3, protected=3)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"target": "ismcts_python"}, "config key 'target': agent 'ismcts_python' plays only the seeds' game"),
        ({"init": str(ROOT / "agents" / "policies" / "ppo_2p.npz")}, "config key 'init' must be a policy of the config's game"),
        ({"hand_size": 6}, "config keys max_pip, hand_size, protected"),
    ],
)
def test_an_exploiter_refuses_what_does_not_play_its_variant_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict, named: str
) -> None:
    from train import cli

    with pytest.raises(SystemExit) as exit_status:
        cli.main(exploit_args(tmp_path, **changes))
    assert exit_status.value.code == 2
    error = capsys.readouterr().err.strip()
    assert named in error and "\n" not in error and not (tmp_path / "exploit").exists()


def test_a_variant_policy_sits_only_at_its_variants_tables(run: Path) -> None:
    from arena.evaluation import evaluate

    policy = f"network:path={run / 'final.npz'}"
    # Another variant of the same sizes (the double-three set): refused before a game is played.
    with pytest.raises(ValueError, match="was trained for max_pip=3, hand_size=3, protected=3, not for max_pip=3, hand_size=2"):
        evaluate([policy, "heaviest"], num_games=1, progress=False, max_pip=3, hand_size=2, protected=3)
    result = evaluate([policy, "heaviest"], num_games=1, progress=False, max_pip=3, hand_size=3, protected=3)
    assert result.variant == {"max_pip": 3, "hand_size": 3, "protected": 3} and result.num_games > 0
