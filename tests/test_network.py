"""The policy+value network: the torch module that trains, its NumPy twin that plays, SB3's view."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.policy_file import load_policy_file
from agents.policy_network import NumpyPolicy
from agents.sb3_checkpoint import sb3_state_dict, weights_from_state_dict
from draw_env.features import encode_batch
from draw_env.single_agent import DrawSingleAgentEnv
from train.network import PolicyValueNetwork
from train.sb3_adapter import model_holding, new_model, weights_of

POLICIES = Path(__file__).resolve().parents[1] / "agents" / "policies"


def _positions(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of real decisions in random 2-player games."""
    from draw_env.vector import DrawVectorEnv

    env = DrawVectorEnv(16, 2, "match", "zero_sum", autoreset=True)
    out = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    observations, masks = [], []
    while len(observations) < count:
        for row in np.flatnonzero(out.action_mask.sum(axis=1) > 1):
            observations.append(out.observation[row].copy())
            masks.append(out.action_mask[row].copy())
        actions = [rng.choice(np.flatnonzero(mask)) for mask in out.action_mask]
        out = env.step(np.array(actions))
    return np.array(observations[:count]), np.array(masks[:count])


@pytest.mark.parametrize(
    ("features", "actor", "critic", "activation", "seed"),
    [("extended", [64, 64], [32], "relu", 0), ("scaled", [16], [16, 8], "tanh", 7), ("extended", [], [8], "relu", 3)],
)
def test_a_fresh_network_starts_bit_for_bit_as_maskable_ppo_does(
    features: str, actor: list[int], critic: list[int], activation: str, seed: int
) -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the orthogonal initialisation's QR rounds by thread count
    try:
        env = DrawSingleAgentEnv(num_players=2, episode="match", features=features)
        model = new_model(env, (actor, critic), activation, seed)
        before = torch.random.get_rng_state()
        network = PolicyValueNetwork(features, actor, critic, activation, seed)
        assert torch.equal(before, torch.random.get_rng_state())  # the global generator is untouched
    finally:
        torch.set_num_threads(threads)
    ours = sb3_state_dict(network.to_weights(None))
    theirs = {name: tensor.numpy() for name, tensor in model.policy.state_dict().items()}
    assert ours.keys() == theirs.keys()
    for name, array in theirs.items():
        assert ours[name].dtype == array.dtype and ours[name].tobytes() == array.tobytes(), name


def test_weights_go_in_and_out_unchanged_and_play_as_the_numpy_twin(tmp_path: Path) -> None:
    shipped = load_policy_file(POLICIES / "ppo_2p_selfplay.npz")
    assert shipped.value is not None
    network = PolicyValueNetwork.from_weights(shipped)
    again = network.to_weights(2)
    for name, layers in shipped.networks().items():
        for (weight, bias), (weight_again, bias_again) in zip(layers, again.networks()[name], strict=True):
            np.testing.assert_array_equal(weight, weight_again)
            np.testing.assert_array_equal(bias, bias_again)
    written = load_policy_file(network.save(tmp_path / "copy.npz", 2, provenance={"from": "test"}))
    assert written.provenance == {"from": "test"}
    assert np.array_equal(written.policy[0][0], shipped.policy[0][0])

    observations, masks = _positions(200)
    inputs = encode_batch(observations, masks, shipped.features)
    twin = NumpyPolicy(shipped)
    with torch.no_grad():
        logits = network.logits(torch.from_numpy(inputs)).numpy()
        values = network.values(torch.from_numpy(inputs)).numpy()
        log_p = network.log_probabilities(torch.from_numpy(inputs), torch.from_numpy(masks != 0)).numpy()
    np.testing.assert_allclose(logits, twin.logits_batch(inputs), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(values, twin.values_batch(inputs), rtol=1e-4, atol=1e-4)
    legal = masks != 0
    np.testing.assert_allclose(np.exp(log_p).sum(axis=1), 1.0, rtol=1e-5)
    assert (np.exp(log_p[~legal]) == 0).all()
    np.testing.assert_array_equal(np.argmax(log_p, axis=1), twin.act_batch(observations, masks))


def test_a_policy_file_without_a_value_network_gets_a_fresh_one_of_the_policys_widths() -> None:
    distilled = load_policy_file(POLICIES / "ppo_2p_distilled.npz")
    assert distilled.value is None
    network = PolicyValueNetwork.from_weights(distilled, seed=5)
    widths = [layer.out_features for layer in network.value]
    assert widths == [int(weight.shape[0]) for weight, _ in distilled.policy[:-1]] + [1]
    fresh = PolicyValueNetwork(distilled.features, widths[:-1], widths[:-1], distilled.activation, seed=5)
    for layer, fresh_layer in zip(network.value, fresh.value, strict=True):
        assert torch.equal(layer.weight, fresh_layer.weight) and torch.equal(layer.bias, fresh_layer.bias)


def test_sb3_models_hold_and_give_back_the_networks_weights() -> None:
    network = PolicyValueNetwork("extended", [16], [8], "tanh", seed=2)
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.add_(1.0)  # no longer what a fresh model of this seed holds
    env = DrawSingleAgentEnv(num_players=3, episode="match", features="extended")
    model = model_holding(network, env, seed=2)
    held = weights_of(model, 3)
    assert held.activation == "tanh" and held.num_players == 3
    expected = network.to_weights(3)
    for name, layers in expected.networks().items():
        for (weight, bias), (held_weight, held_bias) in zip(layers, held.networks()[name], strict=True):
            np.testing.assert_array_equal(weight, held_weight)
            np.testing.assert_array_equal(bias, held_bias)
    state = {name: tensor.numpy() for name, tensor in model.policy.state_dict().items()}
    round_trip = weights_from_state_dict(state, "tanh", 3)
    assert round_trip.features == "extended" and len(round_trip.policy) == 2


def test_the_numpy_twin_plays_as_it_was_told_one_game_or_many() -> None:
    policy = NumpyPolicy(load_policy_file(POLICIES / "ppo_2p_selfplay.npz"))
    observations, masks = _positions(300, seed=1)
    sampling = policy.playing(False, np.random.default_rng(4))
    assert sampling.weights is policy.weights and policy.deterministic
    drawn = sampling.act_batch(observations, masks)
    np.testing.assert_array_equal(drawn, policy.act_batch(observations, masks, False, np.random.default_rng(4)))
    assert not np.array_equal(drawn, policy.act_batch(observations, masks))  # 300 sampled moves differ somewhere
    views = [{"observation": o, "action_mask": m} for o, m in zip(observations, masks)]
    assert [policy.act(view) for view in views] == [policy.choose(view, True, None) for view in views]
    rng, again = np.random.default_rng(9), np.random.default_rng(9)
    one_by_one = policy.playing(False, rng)
    assert [one_by_one.act(view) for view in views] == [policy.choose(view, False, again) for view in views]
    with pytest.raises(ValueError, match="rng"):
        policy.playing(False).act(views[int(np.argmax(masks.sum(axis=1)))])


def test_ppo_is_another_name_of_the_network_agent_everywhere() -> None:
    import agents
    from agents.policy_network import NetworkAgent
    from arena.batched_play import batchable
    from train.learner_games import make_opponent

    assert agents.agent_class("ppo") is agents.agent_class("network") is NetworkAgent
    assert batchable([("network", {}), ("ppo", {"path": str(POLICIES / "ppo_2p.npz")}), ("heaviest", {})])
    assert not batchable([("network", {"deterministic": False}), ("heaviest", {})])
    for spec in ("network", f"ppo:path={POLICIES / 'ppo_2p.npz'}"):
        opponent = make_opponent(spec, 2, seed=0)
        assert isinstance(opponent, NumpyPolicy) and opponent.deterministic and opponent.num_players == 2
