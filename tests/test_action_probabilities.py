"""``action_probabilities``: every registered agent gives the distribution its ``act`` plays from."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import agents
from agents.base import Agent, Observation, num_players, observe
from agents.policy_file import load_policy_file
from agents.policy_network import NetworkAgent, shipped_policy
from draw_env.features import encode_observation
from draw_env.rules import NUM_ACTIONS
from tests.positions import random_positions

_NO_OPENSPIEL = pytest.mark.skipif(importlib.util.find_spec("pyspiel") is None, reason="needs the openspiel extra")

#: Every registered agent but ``tabular``, which plays only its table's variant (tests/test_cfr.py
#: checks its probabilities), with small budgets.
AGENTS: list[tuple[str, dict[str, Any]]] = [
    ("random", {"seed": 0}),
    ("random_forced", {"seed": 0}),
    ("heaviest", {}),
    ("variety", {}),
    ("ismcts", {"simulations": 30, "seed": 0}),
    ("ismcts_python", {"simulations": 30, "seed": 0}),
    ("pimc", {"worlds": 2, "depth": 1, "seed": 0}),
    ("network", {}),
    ("ppo", {"deterministic": False, "seed": 0}),
    ("ppo_search", {"simulations": 30, "seed": 0}),
    ("openspiel-random", {"seed": 0}),
    ("openspiel-mcts", {"simulations": 12, "determinizations": 2, "seed": 0}),
    ("openspiel-ismcts", {"simulations": 12, "seed": 0}),
]
#: Agents whose act plays one action per observation.
DETERMINISTIC = {"heaviest", "variety", "network"}
#: Agents whose answer is the one-hot of a search seeded from the observation.
SEARCHES = {"ismcts", "ismcts_python", "pimc", "ppo_search", "openspiel-mcts", "openspiel-ismcts"}


def _observations(per_count: int) -> list[Observation]:
    """Decisions (two legal actions or more) of the default game at 2, 3 and 4 players."""
    found = []
    for players in (2, 3, 4):
        positions = random_positions(players, hands=2, seed=players, min_legal=2)
        found += [observe(state, state.current) for state in positions[:: max(1, len(positions) // per_count)][:per_count]]
    return found


OBSERVATIONS = _observations(3)


def _params(names: set[str] | None = None) -> list[Any]:
    """``AGENTS`` (those in ``names``) as parameters; OpenSpiel's bots need the openspiel extra."""
    return [
        pytest.param(name, kwargs, id=name, marks=[_NO_OPENSPIEL] if name.startswith("openspiel") else [])
        for name, kwargs in AGENTS
        if names is None or name in names
    ]


def test_every_registered_agent_follows_the_protocol_and_tabular_is_the_one_left_to_its_variant() -> None:
    assert {name for name, _kwargs in AGENTS} | {"tabular"} == set(agents.available())
    for name, kwargs in AGENTS:
        if name.startswith("openspiel") and importlib.util.find_spec("pyspiel") is None:
            continue
        assert isinstance(agents.make(name, **kwargs), Agent), name


@pytest.mark.parametrize(("name", "kwargs"), _params())
def test_probabilities_are_a_distribution_over_the_legal_actions(name: str, kwargs: dict) -> None:
    agent = agents.make(name, **kwargs)
    for observation in OBSERVATIONS:
        probabilities = agent.action_probabilities(observation)
        assert probabilities.dtype == np.float64 and probabilities.shape == (NUM_ACTIONS,)
        assert np.all(probabilities[observation["action_mask"] == 0] == 0)
        assert np.all(probabilities >= 0) and probabilities.sum() == pytest.approx(1.0, abs=1e-12)
        if name in DETERMINISTIC:
            assert probabilities[agent.act(observation)] == 1.0
        elif name not in SEARCHES:  # a search's own play is not seeded from the observation
            assert probabilities[agent.act(observation)] > 0


@pytest.mark.parametrize(("name", "kwargs"), _params(SEARCHES))
def test_a_search_answers_an_observation_the_same_way_and_leaves_play_as_it_was(name: str, kwargs: dict) -> None:
    agent, twin = agents.make(name, **kwargs), agents.make(name, **kwargs)
    for observation in OBSERVATIONS[:4]:
        first = agent.action_probabilities(observation)
        assert np.count_nonzero(first) == 1  # a one-hot on the action the search picks
        assert np.array_equal(agent.action_probabilities(observation), first)
        assert np.array_equal(twin.action_probabilities(observation), first)
    # Asking changes nothing about play: the agent plays as one never asked.
    for observation in OBSERVATIONS[4:7]:
        agent.action_probabilities(observation)
    never_asked = agents.make(name, **kwargs)
    assert [agent.act(o) for o in OBSERVATIONS[:6]] == [never_asked.act(o) for o in OBSERVATIONS[:6]]


def _softmax_from_the_file(observation: Observation, players: int) -> np.ndarray:
    """The shipped policy's masked softmax, computed in float64 straight from its weights."""
    weights = load_policy_file(shipped_policy(players))
    hidden = encode_observation(observation, weights.features).astype(np.float64)
    *body, (last_weight, last_bias) = weights.policy
    for weight, bias in body:
        hidden = np.maximum(weight.astype(np.float64) @ hidden + bias, 0.0)
    logits = last_weight.astype(np.float64) @ hidden + last_bias
    legal = observation["action_mask"] != 0
    exponent = np.exp(logits[legal] - logits[legal].max())
    expected = np.zeros(NUM_ACTIONS)
    expected[legal] = exponent / exponent.sum()
    return expected


def test_a_sampling_network_gives_its_softmax_and_a_deterministic_one_the_argmax() -> None:
    sampling, playing = NetworkAgent(deterministic=False, seed=0), NetworkAgent()
    for observation in OBSERVATIONS[::2]:
        expected = _softmax_from_the_file(observation, num_players(observation["observation"]))
        assert np.allclose(sampling.action_probabilities(observation), expected, atol=1e-5)
        assert playing.action_probabilities(observation)[int(np.argmax(expected))] == 1.0


@pytest.mark.parametrize("deterministic", [True, False])
def test_the_batched_network_gives_each_row_what_one_observation_gives(deterministic: bool) -> None:
    agent = NetworkAgent(deterministic=deterministic, seed=0)
    observations = np.stack([o["observation"] for o in OBSERVATIONS])
    masks = np.stack([o["action_mask"] for o in OBSERVATIONS])
    batch = agent.action_probabilities_batch(observations, masks)
    assert batch.shape == (len(OBSERVATIONS), NUM_ACTIONS) and batch.dtype == np.float64
    single = np.stack([agent.action_probabilities(o) for o in OBSERVATIONS])
    assert np.allclose(batch, single, atol=1e-6)
    with pytest.raises(ValueError, match="at least one legal action"):
        agent.action_probabilities_batch(observations[:1], np.zeros_like(masks[:1]))
