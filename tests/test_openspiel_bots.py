"""Bridges to OpenSpiel: our agents as pyspiel bots, OpenSpiel's bots as our agents (and in draw-eval)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

import agents
import draw_env
from agents.openspiel_bots import AgentBot, state_from_observation
from draw_env import openspiel as draw_openspiel
from draw_env.observation import view_from_observation

BOTS = [
    ("openspiel-random", {}),
    ("openspiel-mcts", {"simulations": 20, "determinizations": 4}),
    ("openspiel-ismcts", {"simulations": 20}),
]


def _play_hand(players: dict, num_players: int, seed: int) -> list[tuple[str, int]]:
    env = draw_env.env(num_players=num_players)
    env.reset(seed=seed)
    actions = []
    for name in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = players[name].act(observation)
        assert observation["action_mask"][action] == 1
        actions.append((name, action))
        env.step(action)
    return actions


@pytest.mark.parametrize(("name", "kwargs"), BOTS, ids=[name for name, _ in BOTS])
def test_openspiel_bots_play_legal_reproducible_hands(name: str, kwargs: dict) -> None:
    for num_players in (2, 4):
        runs = [
            _play_hand({f"player_{s}": agents.make(name, seed=s, **kwargs) for s in range(num_players)}, num_players, 9)
            for _ in range(2)
        ]
        assert runs[0] == runs[1]
        assert agents.make(name).name == name


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("openspiel-ismcts", {"simulations": 0}, "simulations"),
        ("openspiel-ismcts", {"uct_c": float("nan")}, "uct_c"),
        ("openspiel-ismcts", {"final_policy": "best"}, "final_policy"),
        ("openspiel-mcts", {"determinizations": 0}, "determinizations"),
        ("openspiel-random", {"seed": -1}, "seed"),
    ],
)
def test_bad_arguments_are_named(name: str, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        agents.make(name, **kwargs)


def test_state_from_observation_keeps_what_the_player_knows() -> None:
    env = draw_env.env(num_players=3)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(12):
        observation = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    observation = env.observe(env.agent_selection)
    state = state_from_observation(observation, random.Random(0))
    assert state.current_player() == 0
    np.testing.assert_array_equal(state.observation_tensor(0), observation["observation"])
    assert state.legal_actions() == np.flatnonzero(observation["action_mask"]).tolist()
    view = view_from_observation(observation["observation"], 3)
    assert state.core.hands[0] == view.hand


def test_our_agents_play_as_openspiel_bots() -> None:
    game = pyspiel.load_game(draw_openspiel.SHORT_NAME, {"players": 3})
    bots = [AgentBot(agents.make("heaviest")), AgentBot(agents.make("ismcts", simulations=20, seed=0)), AgentBot(agents.make("random", seed=0))]
    returns = evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(0))
    assert len(returns) == 3 and sum(returns) == pytest.approx(0)
    assert returns == evaluate_bots(
        game.new_initial_state(),
        [AgentBot(agents.make("heaviest")), AgentBot(agents.make("ismcts", simulations=20, seed=0)), AgentBot(agents.make("random", seed=0))],
        np.random.RandomState(0),
    )
    seated = AgentBot(agents.make("heaviest"), player_id=1)
    state = game.new_initial_state()
    while state.is_chance_node() or state.current_player() == 1:
        state.apply_action(state.legal_actions()[0])
    with pytest.raises(ValueError, match="plays seat 1"):
        seated.step(state)


def test_draw_eval_plays_openspiel_bots_in_duplicate() -> None:
    script = Path(sys.executable).with_name("draw-eval")
    if not script.exists():
        pytest.skip("draw-eval is not installed (pip install -e .)")
    command = [str(script), "openspiel-ismcts:simulations=10", "openspiel-random", "--games", "4", "--episode", "hand", "--quiet"]
    out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=120).stdout
    assert "openspiel-ismcts" in out and "openspiel-random" in out and "duplicate" in out
