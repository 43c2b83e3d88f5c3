"""PettingZoo's own checks: ``api_test`` and ``seed_test`` for every table size, episode kind and
valid reward, over many seeds.

``api_test`` resets with ``seed=0`` and then without a seed, and plays one episode; to play a
different deal per test seed, :class:`ShiftedSeeds` adds the test seed to every seed the check
passes to ``reset`` (otherwise it is a pass-through), and the action spaces that sample the
moves are seeded with it too.
"""

from __future__ import annotations

from typing import Any

import pytest
from pettingzoo import AECEnv
from pettingzoo.test import api_test, seed_test
from pettingzoo.utils.wrappers import BaseWrapper

import draw_env

#: Every valid (episode, reward) pair.
CONFIGS = [
    ("hand", "zero_sum"),
    ("hand", "points"),
    ("match", "zero_sum"),
    ("match", "points"),
    ("match", "win_loss"),
]
HAND_SEEDS = range(20)
MATCH_SEEDS = range(6)


class ShiftedSeeds(BaseWrapper):
    """Adds ``shift`` to every seed given to ``reset``; everything else passes through."""

    def __init__(self, env: AECEnv, shift: int) -> None:
        super().__init__(env)
        self.shift = shift

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=None if seed is None else seed + self.shift, options=options)


def cases() -> list[Any]:
    found = []
    for players in (2, 3, 4):
        for episode, reward in CONFIGS:
            for seed in HAND_SEEDS if episode == "hand" else MATCH_SEEDS:
                name = f"{players}p-{episode}-{reward}-{seed}"
                found.append(pytest.param(players, episode, reward, seed, id=name))
    return found


@pytest.mark.filterwarnings("error:reset option")  # api_test's options={"options": 1} warns of nothing
@pytest.mark.parametrize(("players", "episode", "reward", "seed"), cases())
def test_pettingzoo_api_test(players: int, episode: str, reward: str, seed: int) -> None:
    env = ShiftedSeeds(draw_env.env(num_players=players, episode=episode, reward=reward), shift=seed)
    for index, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(1000 * seed + index)
    api_test(env, num_cycles=1000)


@pytest.mark.filterwarnings("error:reset option")  # api_test's options={"options": 1} warns of nothing
@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoo_api_test_on_the_raw_env(players: int) -> None:
    api_test(draw_env.raw_env(num_players=players, episode="match"), num_cycles=1000)


@pytest.mark.parametrize(("episode", "reward"), CONFIGS)
@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(3))
def test_pettingzoo_seed_test(players: int, episode: str, reward: str, seed: int) -> None:
    seed_test(
        lambda: ShiftedSeeds(draw_env.env(num_players=players, episode=episode, reward=reward), shift=seed),
        num_cycles=1000,
    )
