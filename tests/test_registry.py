"""The registry entries: PettingZoo's ``make("aec", ...)`` and ``gymnasium.make("DrawDominoes-v0")``."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test

import draw_env
from draw_env import registration
from draw_env.single_agent import DrawSingleAgentEnv


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
