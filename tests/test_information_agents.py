"""Agents and their files on the information state: what a file records, what each agent plays."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
import draw_env
from agents.base import observation_of
from agents.inputs import encode_inputs, input_size
from agents.policy_file import PolicyWeights, load_policy_file, record_path, save_policy_file
from agents.policy_network import POLICY_DIR, NetworkAgent, NumpyPolicy
from agents.sb3_checkpoint import (
    checkpoint_record_path,
    read_checkpoint,
    sb3_state_dict,
    write_checkpoint_record,
)
from draw_env.features import encode_batch
from draw_env.observation import EVENT_CODES, expand_events, information_layout, layout
from draw_env.rules import DrawGame
from draw_env.vector import DrawVectorEnv

MINI = DrawGame(2, max_pip=3, hand_size=3, protected=3)
INFO = "information_state"


def random_policy(game: DrawGame, obs_type: str, seed: int = 0) -> PolicyWeights:
    """A small random network reading ``obs_type`` vectors of ``game``."""
    rng = np.random.default_rng(seed)

    def layers(outputs: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        widths = [input_size("extended", game, obs_type), 16, outputs]
        return tuple(
            (rng.normal(size=(out, inputs)).astype(np.float32), rng.normal(size=out).astype(np.float32))
            for inputs, out in zip(widths, widths[1:], strict=False)
        )

    return PolicyWeights(layers(game.num_actions), "relu", "extended", game.num_players, value=layers(1),
                         variant=None if game.is_default else game.variant, obs_type=obs_type)


def play_hand(agent: agents.Agent, game: DrawGame, obs_type: str = INFO, seed: int = 1) -> int:
    """Play one hand with ``agent`` in every seat; the number of its decisions."""
    env = draw_env.env(num_players=game.num_players, episode="hand", obs_type=obs_type, **game.variant)
    env.reset(seed=seed)
    decisions = 0
    for _name in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        probabilities = agent.action_probabilities(observation)
        assert probabilities.sum() == pytest.approx(1.0) and not probabilities[observation["action_mask"] == 0].any()
        action = agent.act(observation)
        assert observation["action_mask"][action]
        env.step(action)
        decisions += 1
    return decisions


# ------------------------------------------------------------------------------ policy files


@pytest.mark.parametrize("game", [DrawGame(2), DrawGame(3), MINI], ids=["2p", "3p", "mini"])
def test_a_policy_file_round_trips_its_obs_type(tmp_path: Path, game: DrawGame) -> None:
    weights = random_policy(game, INFO)
    path = save_policy_file(weights, tmp_path / "info.npz")
    assert json.loads(record_path(path).read_text())["obs_type"] == INFO
    loaded = load_policy_file(path)
    assert loaded.obs_type == INFO and loaded.game == game
    np.testing.assert_array_equal(loaded.policy[0][0], weights.policy[0][0])
    assert loaded.policy[0][0].shape[1] == input_size("extended", game, INFO) > input_size("extended", game)


def test_a_file_without_obs_type_reads_observations() -> None:
    record = json.loads(record_path(POLICY_DIR / "ppo_2p.npz").read_text())
    assert "obs_type" not in record
    assert load_policy_file(POLICY_DIR / "ppo_2p.npz").obs_type == "observation"
    assert agents.make("network").obs_type == "observation"


def test_a_bad_obs_type_in_a_record_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = save_policy_file(random_policy(MINI, INFO), tmp_path / "info.npz")
    record = json.loads(record_path(path).read_text())
    record["obs_type"] = "history"
    record_path(path).write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"info\.json: 'obs_type' must be one of 'observation', 'information_state'"):
        load_policy_file(path)


def test_weights_whose_input_is_the_other_obs_types_are_refused() -> None:
    observation_weights = random_policy(MINI, "observation")
    with pytest.raises(ValueError, match="policy/0"):
        PolicyWeights(observation_weights.policy, "relu", "extended", 2, variant=MINI.variant, obs_type=INFO)


def test_a_checkpoint_side_file_records_the_obs_type(tmp_path: Path) -> None:
    import zipfile

    import torch

    weights = random_policy(MINI, INFO)
    path = tmp_path / "final.zip"
    state = {key: torch.from_numpy(value) for key, value in sb3_state_dict(weights).items()}
    buffer = tmp_path / "policy.pth"
    torch.save(state, buffer)
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(buffer, "policy.pth")
    write_checkpoint_record(path, num_players=2, features="extended", activation="relu", game=MINI, obs_type=INFO)
    assert json.loads(checkpoint_record_path(path).read_text())["obs_type"] == INFO
    read = read_checkpoint(path)
    assert read.obs_type == INFO and read.game == MINI


# ------------------------------------------------------------------------------ the network


def test_the_inputs_of_an_information_state_are_its_observations_then_drawn_at_scaled_then_one_hot_events() -> None:
    venv = DrawVectorEnv(4, 2, "hand", max_pip=3, hand_size=3, protected=3, obs_type=INFO)
    step = venv.reset(seed=3)
    for _ in range(5):  # a few actions, so that the events block holds codes
        step = venv.step(np.array([np.flatnonzero(mask)[-1] for mask in step.action_mask]))
    info = information_layout(MINI)
    inputs = encode_inputs(step.observation, step.action_mask, "extended", MINI, INFO)
    prefix = encode_batch(step.observation[:, : info.observation.size], step.action_mask, "extended", MINI)
    np.testing.assert_array_equal(inputs[:, : prefix.shape[1]], prefix)
    drawn_at = info.offsets["drawn_at"]
    drawn = inputs[:, prefix.shape[1] : prefix.shape[1] + info.num_tiles]
    np.testing.assert_allclose(drawn, step.observation[:, drawn_at : drawn_at + info.num_tiles] / info.max_events)
    events = inputs[:, prefix.shape[1] + info.num_tiles :].reshape(4, info.max_events, EVENT_CODES)
    np.testing.assert_array_equal(events, expand_events(step.observation, MINI))
    assert events.sum() > 0 and set(np.unique(events)) <= {0.0, 1.0}
    assert inputs.shape[1] == input_size("extended", MINI, INFO) and 0 <= inputs.min() and inputs.max() <= 1


@pytest.mark.parametrize("game", [DrawGame(2), MINI], ids=["seeds", "mini"])
def test_a_network_of_information_states_plays_them_and_refuses_observations(tmp_path: Path, game: DrawGame) -> None:
    path = save_policy_file(random_policy(game, INFO), tmp_path / "info.npz")
    agent = agents.make("network", path=str(path))
    assert agent.obs_type == INFO
    assert play_hand(agent, game, INFO) > 0
    with pytest.raises(ValueError, match=r"info\.npz' reads obs_type='information_state'.*is an observation"):
        play_hand(agent, game, "observation")


def test_a_network_of_observations_refuses_information_states_naming_the_file() -> None:
    with pytest.raises(ValueError, match=r"ppo_2p\.npz' reads obs_type='observation'.*is an information_state"):
        play_hand(agents.make("network"), DrawGame(2), INFO)


def test_the_batched_network_plays_information_states_as_one_by_one(tmp_path: Path) -> None:
    path = save_policy_file(random_policy(MINI, INFO), tmp_path / "info.npz")
    policy = NumpyPolicy.load(path)
    venv = DrawVectorEnv(8, 2, "hand", max_pip=3, hand_size=3, protected=3, obs_type=INFO)
    step = venv.reset(seed=0)
    batch = policy.probabilities_batch(step.observation, step.action_mask, False)
    one_by_one = [policy.probabilities({"observation": o, "action_mask": m}, False)
                  for o, m in zip(step.observation, step.action_mask, strict=True)]
    np.testing.assert_allclose(batch, one_by_one, atol=1e-6)
    agent = NetworkAgent(path=path, deterministic=False)
    np.testing.assert_allclose(agent.action_probabilities_batch(step.observation, step.action_mask), batch)


# ------------------------------------------------------------------------------ every agent


def test_the_observation_of_an_information_state_is_its_prefix() -> None:
    env = draw_env.env(episode="hand", obs_type=INFO, max_pip=3, hand_size=3, protected=3)
    plain = draw_env.env(episode="hand", max_pip=3, hand_size=3, protected=3)
    env.reset(seed=4)
    plain.reset(seed=4)
    for name in env.agent_iter():
        observation, *_ = env.last()
        if env.terminations[name]:
            break
        reduced = observation_of(observation)
        np.testing.assert_array_equal(reduced["observation"], plain.observe(name)["observation"])
        assert reduced["observation"].shape == (layout(MINI).size,)
        assert observation_of(reduced) is reduced  # an observation stays as it is
        action = int(np.flatnonzero(observation["action_mask"])[0])
        env.step(action)
        plain.step(action)


def _spec(name: str, tmp_path: Path, game: DrawGame) -> dict[str, object] | None:
    """Small budgets for the searches; a policy of information states for the network."""
    if name in ("network", "ppo"):
        return {"path": str(save_policy_file(random_policy(game, INFO), tmp_path / f"{name}.npz"))}
    budgets: dict[str, dict[str, object]] = {
        "ismcts": {"simulations": 20, "seed": 0}, "ismcts_python": {"simulations": 20, "seed": 0},
        "pimc": {"worlds": 4, "seed": 0}, "ppo_search": {"simulations": 8},
        "openspiel-mcts": {"simulations": 8, "seed": 0}, "openspiel-ismcts": {"simulations": 8, "seed": 0},
    }
    return budgets.get(name, {})


@pytest.mark.parametrize("name", [name for name in agents.available() if name != "tabular"])
@pytest.mark.parametrize("game", [DrawGame(2), MINI], ids=["seeds", "mini"])
def test_every_agent_plays_through_information_states(tmp_path: Path, name: str, game: DrawGame) -> None:
    if not game.is_default and not agents.plays_variants(name) and name not in ("network", "ppo"):
        pytest.skip(f"{name} plays the seeds' game only")  # a network plays its file's variant
    if name.startswith("openspiel"):
        pytest.importorskip("pyspiel")
    kwargs = _spec(name, tmp_path, game)
    agent = agents.make(name, **kwargs)
    assert play_hand(agent, game, INFO) > 0


def test_only_an_information_states_shape_is_cut_to_its_observation() -> None:
    mask = np.zeros(58, np.int8)
    for size in (258, 258 + 5, 258 + 28):  # an observation, and lengths of no information state (no events)
        given = {"observation": np.zeros(size, np.float32), "action_mask": mask}
        assert observation_of(given) is given
    for players in (2, 3, 4):
        size = information_layout(DrawGame(players)).size
        cut = observation_of({"observation": np.arange(size, dtype=np.float32), "action_mask": mask})
        np.testing.assert_array_equal(cut["observation"], np.arange(258))
