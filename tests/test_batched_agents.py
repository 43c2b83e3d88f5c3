"""The batched baselines choose like their one-game versions, for every game of a batch."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.base import observe
from agents.batched import make_batched
from tests.positions import random_positions


def _batch(num_players: int, seed: int) -> tuple[list[dict[str, np.ndarray]], np.ndarray, np.ndarray]:
    observations = [observe(state, state.current) for state in random_positions(num_players, 30, seed)]
    vectors = np.stack([observation["observation"] for observation in observations])
    masks = np.stack([observation["action_mask"] for observation in observations])
    return observations, vectors, masks


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("name", ["heaviest", "variety"])
def test_deterministic_baselines_choose_exactly_as_one_game_agents(name: str, num_players: int) -> None:
    observations, vectors, masks = _batch(num_players, seed=num_players)
    single = agents.make(name)
    expected = [single.act(observation) for observation in observations]
    assert make_batched(name).act_batch(vectors, masks).tolist() == expected


@pytest.mark.parametrize("name", ["random", "random_forced"])
def test_random_baselines_pick_legal_actions_from_the_right_set(name: str) -> None:
    _, vectors, masks = _batch(3, seed=7)
    chosen = make_batched(name, seed=0).act_batch(vectors, masks)
    assert masks[np.arange(len(masks)), chosen].all()
    can_place = masks[:, :56].any(axis=1)
    voluntary_draws = (chosen == 56) & can_place
    if name == "random_forced":
        assert not voluntary_draws.any()
    else:
        assert voluntary_draws.any()  # the one-game random agent draws by choice too


def test_random_baseline_is_uniform_over_legal_actions() -> None:
    masks = np.zeros((20000, 58), np.int8)
    masks[:, [3, 10, 56]] = 1
    chosen = make_batched("random", seed=1).act_batch(np.zeros((20000, 258), np.float32), masks)
    counts = np.bincount(chosen, minlength=58)[[3, 10, 56]]
    assert counts.sum() == 20000 and np.all(np.abs(counts / 20000 - 1 / 3) < 0.02)


def test_same_seed_same_choices() -> None:
    _, vectors, masks = _batch(2, seed=3)
    first = make_batched("random", seed=5).act_batch(vectors, masks)
    assert np.array_equal(first, make_batched("random", seed=5).act_batch(vectors, masks))


def test_bad_input_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="name must be one of"):
        make_batched("ismcts")
    with pytest.raises(ValueError, match="masks allow no action in rows \\[1\\]"):
        masks = np.ones((2, 58), np.int8)
        masks[1] = 0
        make_batched("heaviest").act_batch(np.zeros((2, 258), np.float32), masks)
    with pytest.raises(ValueError, match="masks must have shape"):
        make_batched("variety").act_batch(np.zeros((2, 258), np.float32), np.ones((2, 57), np.int8))
    assert [name for name in agents.available() if agents.entry(name).batched is not None] == [
        "random", "random_forced", "heaviest", "variety", "network", "ppo"
    ]
