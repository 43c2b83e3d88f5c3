"""``DrawVectorEnv(..., obs_type="information_state")`` against the AEC environment: every game
shadowed at every step (``tests/test_vector.py``'s harness), ``observe(seat)`` for every seat,
and the histories of ``tests/information.py``: what a seat cannot see changes nothing, what it
can tell apart gives different vectors."""

from __future__ import annotations

import numpy as np
import pytest

from draw_env.observation import information_layout
from draw_env.vector import DrawVectorEnv
from tests.information import (
    VARIANTS,
    game_of,
    hidden_swaps,
    make_env,
    played_hand,
    recall_pairs,
    variant_kwargs,
)
from tests.test_vector import play_against_aec


@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("episode", ["hand", "match"])
def test_every_game_matches_the_aec_environment(name: str, episode: str) -> None:
    players = VARIANTS[name][0]
    autoreset = episode == "hand" or name != "micro"
    venv = DrawVectorEnv(4, players, episode, "zero_sum", autoreset, obs_type="information_state",
                         **variant_kwargs(name))
    info = information_layout(venv.game)
    assert venv.single_observation_space.shape == (info.size,)
    np.testing.assert_array_equal(venv.single_observation_space.high, info.high)
    ended, _ = play_against_aec(venv, 7, (300 if name.startswith("seeds") else 150) if episode == "match" else 60)
    assert ended > 0


def _batch(name: str, deals: list) -> DrawVectorEnv:
    venv = DrawVectorEnv(len(deals), VARIANTS[name][0], obs_type="information_state", autoreset=False,
                         **variant_kwargs(name))
    venv.reset(options={"deals": [deal.options() for deal in deals]})
    return venv


@pytest.mark.parametrize("name", list(VARIANTS))
def test_what_a_seat_cannot_see_changes_nothing(name: str) -> None:
    swaps = 0
    for deal, other, actions, observer in hidden_swaps(game_of(name), seed=4, tries=40):
        venv = _batch(name, [deal, other])
        for action in actions:
            seen = venv.observe(observer)
            np.testing.assert_array_equal(seen[0], seen[1])
            venv.step(np.array([action, action]))
        seen = venv.observe(observer)
        np.testing.assert_array_equal(seen[0], seen[1])
        swaps += 1
    assert swaps >= 5


def test_histories_a_seat_tells_apart_give_different_vectors() -> None:
    for pair in recall_pairs():
        seen = []
        for deal, actions in (pair.first, pair.second):
            venv = _batch("seeds-2", [deal])
            for action in actions:
                venv.step(np.array([action]))
            seen.append(venv.observe(pair.observer)[0])
        assert not np.array_equal(seen[0], seen[1]), pair.what


@pytest.mark.parametrize("name", ["midi", "seeds-4"])
def test_observe_gives_every_seats_information_state_between_its_turns(name: str) -> None:
    deal, actions = played_hand(game_of(name), seed=8)
    env = make_env(name)
    env.reset(options=deal.options())
    venv = _batch(name, [deal])
    for step in range(len(actions) + 1):
        for seat, agent in enumerate(env.possible_agents):
            expected = env.observe(agent)["observation"]
            np.testing.assert_array_equal(venv.observe(seat)[0], expected)
            np.testing.assert_array_equal(venv.observe_seats(np.array([seat]))[0], expected)
        if step < len(actions):
            env.step(actions[step])
            venv.step(np.array([actions[step]]))


def test_a_set_up_deal_too_short_for_the_rows_is_refused() -> None:
    venv = DrawVectorEnv(2, obs_type="information_state")
    deal = {"hands": [[0, 1], [2, 3]], "boneyard": list(range(4, 28)), "opener": 0}
    with pytest.raises(ValueError, match=r"options\['deals'\]\[1\]: .*boneyard may hold at most 14 tiles"):
        venv.reset(options={"deals": [None, deal]})
    DrawVectorEnv(2).reset(options={"deals": [None, deal]})


def test_a_bad_obs_type_is_refused() -> None:
    with pytest.raises(ValueError, match="obs_type must be one of 'observation', 'information_state'"):
        DrawVectorEnv(2, obs_type="infostate")


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), [(3, 9, None, 0), (4, 9, 1, 0), (2, 2, 1, 0)])
def test_the_largest_sets_and_longest_hands_match_the_aec_environment(
    players: int, max_pip: int, hand_size: int | None, protected: int
) -> None:
    """Double-nine (a draw's tile id up to 54 in a history slot) and the variant of the most
    rows (4 players, one tile each, nothing protected: 256)."""
    venv = DrawVectorEnv(3, players, max_pip=max_pip, hand_size=hand_size, protected=protected,
                         obs_type="information_state")
    ended, _ = play_against_aec(venv, max_pip, 200)
    assert ended > 0
