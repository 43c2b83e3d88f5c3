"""``DrawVectorEnv.step(actions, games=...)`` moves only the listed games, as a full step would."""

from __future__ import annotations

import numpy as np
import pytest

from draw_env.vector import DrawVectorEnv


def _first_legal(mask: np.ndarray) -> np.ndarray:
    return mask.argmax(axis=1).astype(np.int64)


@pytest.mark.parametrize("variant", [{}, {"max_pip": 4, "hand_size": 3, "protected": 0}])
def test_stepping_halves_of_the_batch_equals_one_full_step(variant: dict) -> None:
    whole, halves = DrawVectorEnv(16, 3, "match", **variant), DrawVectorEnv(16, 3, "match", **variant)
    out = whole.reset(seed=3)
    halves.reset(seed=3)
    odd, even = np.arange(1, 16, 2), np.arange(0, 16, 2)
    for _ in range(120):
        actions = _first_legal(out.action_mask)
        out = whole.step(actions)
        first = halves.step(actions[odd], games=odd)
        second = halves.step(actions[even], games=even)
        assert np.array_equal(whole.states, halves.states)
        for field in ("observation", "action_mask", "current_player", "rewards", "terminated", "score", "winner",
                      "hand_number", "deal_hands", "deal_boneyard", "deal_opener"):
            assert np.array_equal(getattr(first, field), getattr(out, field)[odd]), field
            assert np.array_equal(getattr(second, field), getattr(out, field)[even]), field


def test_games_not_listed_do_not_move() -> None:
    venv = DrawVectorEnv(4, 2)
    out = venv.reset(seed=0)
    before = venv.states.copy()
    venv.step(_first_legal(out.action_mask)[[2]], games=[2])
    changed = np.flatnonzero((venv.states != before).any(axis=1))
    assert changed.tolist() == [2]


def test_bad_subsets_are_value_errors_and_change_nothing() -> None:
    venv = DrawVectorEnv(4, 2)
    out = venv.reset(seed=1)
    before = venv.states.copy()
    with pytest.raises(ValueError, match="games must be distinct integers in 0..3"):
        venv.step(np.zeros(2, np.int64), games=[1, 1])
    with pytest.raises(ValueError, match="games must be distinct integers in 0..3"):
        venv.step(np.zeros(1, np.int64), games=[4])
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        venv.step(np.zeros(4, np.int64), games=[0, 1])
    illegal = np.where(out.action_mask[3] == 0)[0][0]
    with pytest.raises(ValueError, match=r"illegal actions in games \[3\]"):
        venv.step(np.array([_first_legal(out.action_mask)[0], illegal]), games=[0, 3])
    assert np.array_equal(venv.states, before)
