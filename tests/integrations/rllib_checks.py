"""RLlib checks, run in ``.venv-rllib`` by ``test_integration_rllib.py`` (RLlib pins gymnasium 1.2.x).

The file name has no ``test_`` prefix so that the main suite (no ray there) does not collect it;
``.venv-rllib/bin/python -m pytest tests/integrations/rllib_checks.py`` runs it directly.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import runpy
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import ray
import torch
import yaml
from ray.rllib.core.columns import Columns
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

import agents
from draw_env.observation import information_layout, layout
from draw_env.rules import DrawGame
from integrations.rllib import (
    ACTION_SPACE,
    LEARNER,
    OBSERVATION_SPACE,
    BaselineRLModule,
    DrawMultiAgentEnv,
    RLlibAgent,
    SeatMapping,
    opponent_policies,
    spaces,
)

ROOT = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).parent / "ray"


def _load_script() -> ModuleType:
    """``train/rllib_selfplay.py`` by path: ``train/__init__`` belongs to the SB3 trainer."""
    spec = importlib.util.spec_from_file_location("rllib_selfplay", ROOT / "train" / "rllib_selfplay.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _play_hand(env: DrawMultiAgentEnv, rng: random.Random, seed: int) -> tuple[dict[str, float], int]:
    """Random legal play of one episode, checking each step; returns the reward totals and steps."""
    observation_space, _ = spaces(env.game, env.obs_type)
    observations, _ = env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    steps = 0
    while True:
        assert len(observations) == 1, "only the agent to act observes during the hand"
        ((agent, observation),) = observations.items()
        assert observation_space.contains(observation)
        legal = np.flatnonzero(observation["action_mask"])
        assert legal.size > 0
        observations, rewards, terminateds, truncateds, _ = env.step({agent: int(rng.choice(legal))})
        steps += 1
        for name, reward in rewards.items():
            totals[name] += reward
        if terminateds["__all__"]:
            assert set(observations) == set(env.possible_agents)
            assert all(terminateds[name] for name in env.possible_agents) and not truncateds["__all__"]
            assert all(not observation["action_mask"].any() for observation in observations.values())
            return totals, steps
        assert agent in rewards or set(observations) <= set(rewards), (
            "RLlib wants a reward with each observation"
        )


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_env_passes_rllibs_check_and_pays_zero_sum_rewards(num_players: int) -> None:
    env = DrawMultiAgentEnv({"num_players": num_players, "reward_scale": 0.5})
    check_multiagent_environments(env)
    rng = random.Random(num_players)
    for seed in range(5):
        totals, steps = _play_hand(env, rng, seed)
        assert steps > 0
        assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(
    ("variant", "actions"),
    [({"max_pip": 2, "hand_size": 1, "protected": 2}, 14), ({"max_pip": 3, "hand_size": 3, "protected": 3}, 22)],
    ids=["micro", "mini"],
)
def test_env_deals_a_variant_with_its_spaces(variant: dict[str, int], actions: int) -> None:
    env = DrawMultiAgentEnv({"num_players": 2, **variant})
    game = DrawGame(2, **variant)
    assert env.game == game and game.num_actions == actions
    observation_space, action_space = spaces(game)
    assert observation_space["observations"].shape == (layout(game).size,) != OBSERVATION_SPACE["observations"].shape
    assert env.observation_spaces == dict.fromkeys(env.possible_agents, observation_space)
    assert env.action_spaces == dict.fromkeys(env.possible_agents, action_space)
    assert action_space.n == actions
    check_multiagent_environments(env)
    rng = random.Random(3)
    for seed in range(20):
        totals, steps = _play_hand(env, rng, seed)
        assert steps > 0 and sum(totals.values()) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("num_players", [2, 4])
def test_env_gives_information_states_with_their_spaces(num_players: int) -> None:
    env = DrawMultiAgentEnv({"num_players": num_players, "obs_type": "information_state"})
    observation_space, _ = spaces(env.game, "information_state")
    assert observation_space["observations"].shape == (information_layout(env.game).size,)
    assert env.observation_spaces == dict.fromkeys(env.possible_agents, observation_space)
    check_multiagent_environments(env)
    rng = random.Random(num_players)
    for seed in range(5):
        totals, steps = _play_hand(env, rng, seed)
        assert steps > 0 and sum(totals.values()) == pytest.approx(0.0, abs=1e-9)


def test_env_scales_rewards_and_rejects_unknown_config() -> None:
    full, half = (
        DrawMultiAgentEnv({"reward": "points", "reward_scale": 1.0}),
        DrawMultiAgentEnv({"reward": "points", "reward_scale": 0.5}),
    )
    totals_full, _ = _play_hand(full, random.Random(7), 11)
    totals_half, _ = _play_hand(half, random.Random(7), 11)
    assert max(totals_full.values()) > 0
    assert {a: r / 2 for a, r in totals_full.items()} == pytest.approx(totals_half)
    with pytest.raises(ValueError, match="rewards"):
        DrawMultiAgentEnv({"rewards": "points"})
    with pytest.raises(ValueError, match="reward_scale"):
        DrawMultiAgentEnv({"reward_scale": 0})


def _collect_observations(count: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    env = DrawMultiAgentEnv({"num_players": 3})
    rng = random.Random(seed)
    found = []
    observations, _ = env.reset(seed=seed)
    while len(found) < count:
        ((agent, observation),) = observations.items()
        found.append(observation)
        observations, _, terminateds, _, _ = env.step(
            {agent: int(rng.choice(np.flatnonzero(observation["action_mask"])))}
        )
        if terminateds["__all__"]:
            observations, _ = env.reset()
    return found


def test_baseline_module_plays_exactly_like_the_agent() -> None:
    observations = _collect_observations(64)
    module = BaselineRLModule(
        observation_space=OBSERVATION_SPACE, action_space=ACTION_SPACE, model_config={"agent": "heaviest"}
    )
    batch = {
        Columns.OBS: {
            "observations": torch.as_tensor(np.stack([o["observations"] for o in observations])),
            "action_mask": torch.as_tensor(np.stack([o["action_mask"] for o in observations])),
        }
    }
    actions = module.forward_inference(batch)[Columns.ACTIONS]
    heaviest = agents.make("heaviest")
    expected = [
        heaviest.act({"observation": o["observations"], "action_mask": o["action_mask"].astype(np.int8)})
        for o in observations
    ]
    assert actions.tolist() == expected
    assert all(o["action_mask"][a] == 1 for o, a in zip(observations, actions))
    with pytest.raises(ValueError, match="ismcts"):
        BaselineRLModule(
            observation_space=OBSERVATION_SPACE, action_space=ACTION_SPACE, model_config={"agent": "ismcts"}
        )


class _Episode:
    def __init__(self, id_: str) -> None:
        self.id_ = id_


def test_seat_mapping_is_consistent_within_an_episode_and_follows_the_weights() -> None:
    ids, weights = opponent_policies({"self": 0.0, "heaviest": 3.0, "random": 1.0})
    mapping = SeatMapping(4, 2, ids, weights)
    counts = {LEARNER: 0, "heaviest": 0, "random": 0}
    for index in range(400):
        episode = _Episode(f"episode-{index}")
        seats = [mapping(f"player_{seat}", episode) for seat in range(4)]
        assert seats == [mapping(f"player_{seat}", episode) for seat in range(4)]
        assert seats.count(LEARNER) == 2  # self-play weight 0: only the learner seats
        for policy in seats:
            counts[policy] += 1
    assert counts["heaviest"] > 2 * counts["random"] > 0
    with pytest.raises(ValueError, match="ismcts"):
        opponent_policies({"ismcts": 1.0})
    with pytest.raises(ValueError, match="sum"):
        opponent_policies({"heaviest": 0.0})
    with pytest.raises(ValueError, match="learner_seats"):
        SeatMapping(2, 3, ids, weights)


def _tiny_config(directory: Path) -> Path:
    """The shipped config cut down to seconds: 3 players, batches of 200, a 32-unit network."""
    config = yaml.safe_load((ROOT / "configs" / "rllib_selfplay.yaml").read_text())
    config["env"]["num_players"] = 3
    config["env_runners"].update(num_env_runners=1, num_envs_per_env_runner=1)
    config["ppo"].update(batch_size=200, minibatch_size=64, update_epochs=1)
    config["model"]["fcnet_hiddens"] = [32]
    config["evaluation"].update(opponents=["heaviest"], num_games=3, episode="hand")
    path = directory / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_one_training_iteration_on_ray_then_the_projects_evaluation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real script: Ray env-runner actor, one PPO iteration, checkpoint, ``arena.evaluation``;
    its iterations are the learner's loop (train.rllib.learner.learn), called once."""
    from train.rllib import run as command
    from train.rllib.learner import learn

    script = _load_script()
    config_path = _tiny_config(tmp_path)
    loops: list[int] = []

    def spy(*args: object, **kwargs: object) -> int:
        loops.append(learn(*args, **kwargs))  # type: ignore[arg-type]
        return loops[-1]

    monkeypatch.setattr(command, "learn", spy)
    summary = script.main(
        ["--config", str(config_path), "--iterations", "1", "--output-dir", str(tmp_path / "run")]
    )

    assert not ray.is_initialized()
    assert summary["iterations"] == 1 and summary["env_steps"] >= 200
    assert loops == [summary["env_steps"]]
    assert summary["iterations_per_minute"] > 0
    assert (tmp_path / "run" / "learning_curve.png").stat().st_size > 0
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    (evaluation,) = saved["evaluation"]
    learner, *others = evaluation["participants"]
    assert learner["agent"] == "rllib" and len(others) == 2
    assert learner["games"] == evaluation["num_games"] >= 3
    # The saved learner is an agent: it plays only legal moves, greedily and by sampling.
    for deterministic in (True, False):
        player = RLlibAgent(summary["checkpoint"], deterministic=deterministic, seed=1)
        for observation in _collect_observations(40, seed=5):
            obs = {
                "observation": observation["observations"],
                "action_mask": observation["action_mask"].astype(np.int8),
            }
            assert observation["action_mask"][player.act(obs)] == 1
    # The benchmark's export of the same learner plays its distribution.
    _check_benchmark_export(player.module, yaml.safe_load(config_path.read_text())["model"]["fcnet_activation"], tmp_path)


def test_the_learner_trains_to_its_budget_and_checkpoints_at_the_points_asked(tmp_path: Path) -> None:
    """train.rllib.learner.train on a budget of two iterations' steps: a policy of the game, the
    two points asked (the first after the iteration that reaches half the budget), Ray shut down."""
    from train.config import load
    from train.meter import Budget
    from train.policies import NetworkPolicy
    from train.rllib.config import RLlibConfig
    from train.rllib.learner import train

    config = load(RLlibConfig, _tiny_config(tmp_path), [f"output_dir={tmp_path / 'run'}",
                                                         "env_runners.num_env_runners=0"])
    calls: list[tuple[int, NetworkPolicy]] = []
    final = train(config, Budget(env_steps=400), lambda steps, seconds, policy: calls.append((steps, policy)),
                  points=2, provenance={"by": "a test"})
    assert not ray.is_initialized()
    assert len(calls) == 2 and calls[-1][1] is final and 200 <= calls[0][0] < calls[1][0] and calls[1][0] >= 400
    assert final.network.weights.game == DrawGame(3) and final.network.weights.provenance["by"] == "a test"


@pytest.fixture
def ray_cluster() -> Iterator[tuple[str, dict[str, str]]]:
    """A one-node Ray cluster started the documented way (``ray start --head``), as on a head machine.

    Yields its address and the environment a driver needs to join it (token authentication on,
    the token file shared by this machine). Stopped by its own process id at the end.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {**os.environ, "RAY_AUTH_MODE": "token"}
    head = subprocess.Popen(
        [
            str(RAY),
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
        ],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        for line in head.stdout:
            if "Ray runtime started" in line:
                break
        else:
            pytest.fail(f"ray start --head exited with {head.wait()}")
        yield f"127.0.0.1:{port}", environment
    finally:
        head.send_signal(signal.SIGTERM)  # --block: SIGTERM drains and stops the node's processes
        head.wait(timeout=60)


def test_the_same_command_joins_an_existing_cluster_given_address(
    tmp_path: Path, ray_cluster: tuple[str, dict[str, str]]
) -> None:
    address, environment = ray_cluster
    output = tmp_path / "run"
    completed = subprocess.run(
        [
            sys.executable,
            str(ROOT / "train" / "rllib_selfplay.py"),
            "--config",
            str(_tiny_config(tmp_path)),
            "--address",
            address,
            "--iterations",
            "1",
            "--eval-games",
            "0",
            "--output-dir",
            str(output),
        ],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    assert "Connecting to existing Ray cluster at address" in completed.stderr
    summary = json.loads((output / "summary.json").read_text())
    assert summary["address"] == address and summary["iterations"] == 1 and summary["env_steps"] >= 200


def test_quickstart_plays_a_hand(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(ROOT / "examples" / "quickstart" / "rllib_env.py"), run_name="__main__")
    assert "hand over; scaled zero-sum rewards:" in capsys.readouterr().out


def test_rllib_agent_rejects_a_missing_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="checkpoint"):
        RLlibAgent(str(tmp_path / "nowhere"))



def _check_benchmark_export(module: object, activation: str, directory: Path) -> None:
    """The RLlib learner's conversion (train/rllib/learner.py, draw-bench's rllib_ppo): the learner
    module's networks, saved as a policy file, give the module's own masked softmax on the env's
    observations."""
    from agents.policy_file import load_policy_file, save_policy_file
    from agents.policy_network import NumpyPolicy
    from train.rllib.learner import policy_weights

    path = save_policy_file(policy_weights(module, activation, DrawGame(3), {}), directory / "learner.npz")
    found = _collect_observations(40, seed=2)
    observations = np.array([o["observations"] for o in found], np.float32)
    masks = np.array([o["action_mask"] for o in found], np.float32)
    ours = NumpyPolicy(load_policy_file(path), deterministic=False).probabilities_batch(observations, masks, deterministic=False)
    with torch.no_grad():
        batch = {Columns.OBS: {"observations": torch.as_tensor(observations), "action_mask": torch.as_tensor(masks)}}
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy().astype(np.float64)  # type: ignore[attr-defined]
    logits = np.where(masks > 0, logits, -np.inf)
    theirs = np.exp(logits - logits.max(axis=1, keepdims=True))
    theirs /= theirs.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
