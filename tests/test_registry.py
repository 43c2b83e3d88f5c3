"""The registry entries: PettingZoo's ``make("aec", ...)``, ``gymnasium.make("DrawDominoes-v0")`` and the agents'."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections.abc import Iterator

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test

import agents
import draw_env
from agents.batched import HeaviestBatch, RandomBatch, make_batched
from arena.batched_play import batchable
from arena.options import check_plays_variant
from draw_env import registration
from draw_env.rules import DrawGame
from draw_env.single_agent import DrawSingleAgentEnv
from train.learner_games import make_opponent


def test_pettingzoo_make_builds_the_guarded_aec_env_with_its_arguments() -> None:
    env = pettingzoo.make("aec", "draw_env/draw_dominoes_v0", num_players=3, episode="match")
    assert isinstance(env, draw_env.GuardedEnv)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert env.unwrapped.episode == "match"
    # The "-v0" spelling and the unversioned id resolve to the same entry.
    assert pettingzoo.spec("aec", "draw_env/draw_dominoes-v0") is pettingzoo.spec(
        "aec", "draw_env/draw_dominoes"
    )


@pytest.mark.filterwarnings("ignore::UserWarning")  # api_test passes an unknown reset option on purpose
def test_pettingzoo_made_env_passes_the_api_test() -> None:
    api_test(pettingzoo.make("aec", registration.PETTINGZOO_ID), num_cycles=200)


def test_pettingzoo_make_rejects_a_bad_argument_with_the_env_error() -> None:
    with pytest.raises(ValueError, match="num_players"):
        pettingzoo.make("aec", registration.PETTINGZOO_ID, num_players=5)


@pytest.mark.parametrize("env_id", ["DrawDominoes-v0", "draw_env:DrawDominoes-v0"])
def test_gymnasium_make_builds_the_single_agent_adapter(env_id: str) -> None:
    env = gymnasium.make(env_id, num_players=4, seed=3)
    assert isinstance(env.unwrapped, DrawSingleAgentEnv)
    assert env.unwrapped.num_players == 4
    observation, _ = env.reset(seed=1)
    assert env.observation_space.contains(observation)
    mask = env.get_wrapper_attr("action_masks")()
    assert mask.dtype == np.bool_ and mask.any()
    _, reward, terminated, truncated, _ = env.step(int(np.flatnonzero(mask)[0]))
    assert isinstance(reward, float) and not truncated
    env.close()


def test_registering_twice_changes_nothing() -> None:
    before = (gymnasium.spec(registration.GYMNASIUM_ID), pettingzoo.spec("aec", registration.PETTINGZOO_ID))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gymnasium and PettingZoo warn when an id is overridden
        registration.register()
    after = (gymnasium.spec(registration.GYMNASIUM_ID), pettingzoo.spec("aec", registration.PETTINGZOO_ID))
    assert before == after


def test_entry_points_import_nothing_heavy() -> None:
    """In a fresh interpreter: registering and resolving both ids never imports torch, agents or train."""
    code = """
import json, sys
import gymnasium, pettingzoo
import draw_env
after_import = sorted(m for m in ("torch", "agents", "train", "stable_baselines3", "ray") if m in sys.modules)
pettingzoo.make("aec", "draw_env/draw_dominoes_v0")
gymnasium.make("DrawDominoes-v0")
after_make = sorted(m for m in ("torch", "agents", "train", "stable_baselines3", "ray") if m in sys.modules)
print(json.dumps([after_import, after_make]))
"""
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(output.strip().splitlines()[-1]) == [[], []]


# ----------------------------------------------------------------------------- the agent registry


@pytest.fixture
def registered_agent() -> Iterator[str]:
    """A second ``heaviest`` registered as a batched, deterministic baseline playing the variants."""
    name = "heaviest_again"
    agents.register(
        name,
        "agents.baselines:HeaviestAgent",
        batched="agents.batched:HeaviestBatch",
        deterministic=True,
        baseline=True,
        variants=True,
    )
    yield name
    del agents._REGISTRY[name]  # other tests see the shipped registry


def test_a_registered_entry_is_a_batched_baseline_everywhere(registered_agent: str) -> None:
    assert registered_agent in agents.baseline_names()
    assert isinstance(make_batched(registered_agent), HeaviestBatch)
    # The training opponents and the batched evaluation build it batched.
    assert isinstance(make_opponent(registered_agent, 2, seed=0), HeaviestBatch)
    assert batchable([(registered_agent, {}), ("variety", {})])
    # It may sit at a variant's table; an agent that plays only the seeds' game may not.
    variant = DrawGame(2, max_pip=5)
    check_plays_variant([registered_agent], variant)
    with pytest.raises(ValueError, match="plays only the seeds' game"):
        check_plays_variant(["ismcts_python"], variant)


def test_only_deterministic_batched_entries_are_played_in_batches() -> None:
    agents.register("random_again", "agents.baselines:RandomAgent", batched="agents.batched:RandomBatch")
    try:
        assert not batchable([("random_again", {})])  # batched, but it samples
        assert isinstance(make_opponent("random_again", 2, seed=0), RandomBatch)  # a learner takes it sampled
        assert "random_again" not in agents.baseline_names() and not agents.plays_variants("random_again")
    finally:
        del agents._REGISTRY["random_again"]
    assert not batchable([("tabular", {"path": "t.npz"})])  # no batched version


def test_register_refuses_a_bad_batched_path() -> None:
    with pytest.raises(ValueError, match="batched must look like 'module:Class'"):
        agents.register("broken", "agents.baselines:HeaviestAgent", batched="agents.batched.HeaviestBatch")
    assert "broken" not in agents.available()
