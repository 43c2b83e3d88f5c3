"""Bad input: every wrong argument, reset option and action is refused clearly.

* A bad constructor argument or reset option raises ``ValueError`` naming it and what is allowed.
* An unknown reset option warns and is ignored; the key PettingZoo's ``api_test`` passes
  (``options``) is ignored silently.
* An illegal action through ``env()`` ends the episode with the documented penalty and a warning,
  leaving the game as it was; through ``raw_env`` it raises ``IllegalActionError`` (a
  ``ValueError``) and the episode goes on unchanged.
* An action outside ``Discrete(58)`` raises ``ValueError`` in both; NumPy integers are accepted.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv

import draw_env
from draw_env import DrawGame, IllegalActionError
from draw_env.draw_dominoes import ILLEGAL_PENALTY
from tests.positions import complete_deal

# ---------------------------------------------------------------------- constructor arguments

ALLOWED = {
    "num_players": ["2", "3", "4"],
    "episode": ["'hand'", "'match'"],
    "reward": ["'zero_sum'", "'points'", "'win_loss'"],
    "render_mode": ["None", "'human'", "'ansi'", "'rgb_array'"],
    "lang": ["'en'", "'ja'", "'it'"],
}
BAD_ARGUMENTS = [
    ("num_players", 1),
    ("num_players", 5),
    ("num_players", "2"),
    ("num_players", 2.0),
    ("num_players", True),
    ("num_players", None),
    ("episode", "hands"),
    ("episode", "Hand"),
    ("episode", None),
    ("reward", "zero-sum"),
    ("reward", "win"),
    ("reward", None),
    ("render_mode", "rgb"),
    ("render_mode", ""),
    ("lang", "fr"),
    ("lang", "EN"),
    ("lang", None),
]


@pytest.mark.parametrize("make", [draw_env.env, draw_env.raw_env], ids=["env", "raw_env"])
@pytest.mark.parametrize(("name", "value"), BAD_ARGUMENTS, ids=[f"{n}={v!r}" for n, v in BAD_ARGUMENTS])
def test_a_bad_constructor_argument_names_itself_and_the_allowed_values(
    make: Callable[..., AECEnv], name: str, value: object
) -> None:
    with pytest.raises(ValueError, match=name) as raised:
        make(**{name: value})
    for allowed in ALLOWED[name]:
        assert allowed in str(raised.value)


@pytest.mark.parametrize("num_players", [1, 5, 2.0, "3"])
def test_the_rules_core_refuses_a_bad_number_of_players(num_players: object) -> None:
    with pytest.raises(ValueError, match="num_players must be one of 2, 3, 4"):
        DrawGame(num_players)  # type: ignore[arg-type]


def test_win_loss_needs_a_match() -> None:
    with pytest.raises(ValueError, match="reward='win_loss' needs episode='match'") as raised:
        draw_env.env(episode="hand", reward="win_loss")
    assert "'zero_sum' or 'points'" in str(raised.value)


@pytest.mark.parametrize("players", [np.int64(3), 3])
def test_numpy_integers_are_valid_player_counts(players: int) -> None:
    env = draw_env.env(num_players=players)
    env.reset(seed=0)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]


# ---------------------------------------------------------------------- reset options


def two_player_deal(**changes: Any) -> dict[str, Any]:
    """A valid fixed deal for two players with some keys replaced."""
    hands, boneyard = complete_deal([list(range(7)), list(range(7, 14))], boneyard=None)
    options: dict[str, Any] = {"hands": hands, "boneyard": boneyard, "opener": 0}
    options.update(changes)
    return options


_HANDS, _BONEYARD = two_player_deal()["hands"], two_player_deal()["boneyard"]
BAD_OPTIONS = [
    # (options, the key the message names, what the message says is allowed)
    (two_player_deal(hands="abc"), "hands", "list of 2 lists"),
    (two_player_deal(hands=5), "hands", "list of 2 lists"),
    (two_player_deal(hands=[_HANDS[0] + _HANDS[1]]), "hands", "list of 2 lists"),
    (two_player_deal(hands=[[], _HANDS[0] + _HANDS[1]]), "hands", "non-empty list"),
    (two_player_deal(hands=[[*_HANDS[0][:-1], 28], _HANDS[1]]), "hands", "0..27"),
    (two_player_deal(hands=[[*_HANDS[0][:-1], -1], _HANDS[1]]), "hands", "0..27"),
    (two_player_deal(hands=[[*_HANDS[0][:-1], 1.5], _HANDS[1]]), "hands", "0..27"),
    (two_player_deal(hands=[[*_HANDS[0][:-1], True], _HANDS[1]]), "hands", "0..27"),
    (two_player_deal(hands=[[*_HANDS[0][:-1], "[7|1]"], _HANDS[1]]), "hands", "a, b in 0..6"),
    (two_player_deal(hands=[[*_HANDS[0][:-1], (1, 2, 3)], _HANDS[1]]), "hands", "(a, b) with a, b in 0..6"),
    # Pairs hold two integers: a list, a string, a bool or a float half is refused, not a TypeError.
    (two_player_deal(hands=[[*_HANDS[0][:-1], ([1], 4)], _HANDS[1]]), "hands", "(a, b) with a, b in 0..6"),
    (two_player_deal(hands=[[*_HANDS[0][:-1], ("1", 4)], _HANDS[1]]), "hands", "(a, b) with a, b in 0..6"),
    (two_player_deal(hands=[[*_HANDS[0][:-1], (True, 4)], _HANDS[1]]), "hands", "(a, b) with a, b in 0..6"),
    (two_player_deal(hands=[[*_HANDS[0][:-1], (1.0, 4)], _HANDS[1]]), "hands", "(a, b) with a, b in 0..6"),
    # Tile strings are strict: exactly "[a|b]", ASCII digits 0..6, no spaces.
    *(
        (two_player_deal(hands=[[*_HANDS[0][:-1], text], _HANDS[1]]), "hands", "exactly '[a|b]'")
        for text in ["1|4", "[1|4", "1|4]", "[1|4]x", " [1|4]", "[1 | 4]", "[1|4]\n", "[\u0661|\u0664]",
                     "[\uff11|\uff14]", "[1|44]", "[|4]", ""]
    ),
    (two_player_deal(hands=[[*_HANDS[0], 7], _HANDS[1]]), "hands", "more than once"),
    (two_player_deal(boneyard=_BONEYARD[1:]), "boneyard", "all 28 tiles; missing [2|3]"),
    (two_player_deal(boneyard="[0|0]"), "boneyard", "list of tiles"),
    (
        two_player_deal(hands=[_HANDS[0], _HANDS[1] + _BONEYARD[:-1]], boneyard=_BONEYARD[-1:]),
        "boneyard",
        "at least 2 tiles",
    ),
    ({"hands": _HANDS}, "boneyard", "give both or neither"),
    ({"boneyard": _BONEYARD}, "hands", "give both or neither"),
    (two_player_deal(opener=2), "opener", "0..1"),
    (two_player_deal(opener=-1), "opener", "0..1"),
    (two_player_deal(opener="0"), "opener", "0..1"),
    (two_player_deal(opener=True), "opener", "0..1"),
    (two_player_deal(opener=0.0), "opener", "0..1"),
    ({"opener": 7}, "opener", "0..1"),
]


@pytest.mark.parametrize(
    ("options", "key", "allowed"), BAD_OPTIONS, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(BAD_OPTIONS)]
)
def test_a_malformed_reset_option_names_itself_and_what_is_allowed(
    options: dict, key: str, allowed: str
) -> None:
    env = draw_env.env()
    with pytest.raises(ValueError, match=f"options\\['{key}'\\]") as raised:
        env.reset(seed=0, options=options)
    assert allowed in str(raised.value)


@pytest.mark.parametrize(
    ("scores", "allowed"),
    [
        ([10], "2 integers in 0..99"),
        ([10, 20, 30], "2 integers in 0..99"),
        ([-1, 0], "2 integers in 0..99"),
        ([100, 0], "below the target"),
        ([1.0, 0], "2 integers in 0..99"),
        ("10, 20", "2 integers in 0..99"),
    ],
)
def test_malformed_starting_scores_are_refused(scores: object, allowed: str) -> None:
    env = draw_env.env(episode="match")
    with pytest.raises(ValueError, match=r"options\['scores'\]") as raised:
        env.reset(seed=0, options={"scores": scores})
    assert allowed in str(raised.value)


def test_starting_scores_need_a_match() -> None:
    with pytest.raises(ValueError, match=r"options\['scores'\] needs episode='match'"):
        draw_env.env().reset(seed=0, options={"scores": [0, 0]})


@pytest.mark.parametrize("options", ["hands", 5, [("opener", 0)]])
def test_options_must_be_a_mapping(options: object) -> None:
    with pytest.raises(ValueError, match="options must be a dict"):
        draw_env.env().reset(seed=0, options=options)  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [draw_env.env, draw_env.raw_env], ids=["env", "raw_env"])
@pytest.mark.parametrize("seed", [np.int64(3), np.uint8(3), np.int32(3)], ids=repr)
def test_numpy_integer_seeds_deal_like_python_ones(make: Callable[..., AECEnv], seed: np.integer) -> None:
    numpy_seeded, python_seeded = make(num_players=3), make(num_players=3)
    numpy_seeded.reset(seed=seed)
    python_seeded.reset(seed=3)
    assert repr(numpy_seeded.unwrapped.state_ref) == repr(python_seeded.unwrapped.state_ref)


@pytest.mark.parametrize("seed", [-1, 2**64, 10**25, 1.5, "3", True, np.float64(3.0), [3]], ids=repr)
def test_a_bad_seed_names_itself(seed: object) -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative integer or None"):
        draw_env.env().reset(seed=seed)  # type: ignore[arg-type]


def test_every_seed_has_one_bound_below_2_64() -> None:
    """The AEC environment, the batched one and its per-game seeds take the same seeds: up to 2**64 - 1."""
    from draw_env.vector import DrawVectorEnv

    draw_env.env().reset(seed=2**64 - 1)
    vector = DrawVectorEnv(2)
    vector.reset(seed=2**64 - 1)
    vector.reset(options={"seeds": [0, 2**64 - 1]})
    with pytest.raises(ValueError, match="seed must be a non-negative integer or None, got 18446744073709551616"):
        vector.reset(seed=2**64)
    with pytest.raises(ValueError, match=r"options\['seeds'\]\[1\] must be an integer in \[0, 18446744073709551615\]"):
        vector.reset(options={"seeds": [0, 2**64]})


FAILING_RESETS: list[dict[str, Any]] = [
    {"seed": 7, "options": {"opener": 5}},
    {"seed": 7, "options": "not a dict"},
    {"seed": -7},
    # A fixed deal without an opener draws the opener from the RNG before the deal is checked.
    {"options": two_player_deal(opener=None, boneyard=_BONEYARD[1:])},
    {"options": two_player_deal(opener=None, hands=[[*_HANDS[0][:-1], "1|4"], _HANDS[1]])},
]


@pytest.mark.parametrize("make", [draw_env.env, draw_env.raw_env], ids=["env", "raw_env"])
@pytest.mark.parametrize("failing", FAILING_RESETS, ids=lambda kwargs: repr(kwargs)[:40])
def test_a_reset_that_raises_leaves_the_game_and_the_rng_as_they_were(
    make: Callable[..., AECEnv], failing: dict[str, Any]
) -> None:
    tried, untouched = make(), make()
    for env in (tried, untouched):
        env.reset(seed=1)
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    with pytest.raises(ValueError):
        tried.reset(**failing)
    # The episode in play goes on as if nothing happened ...
    assert repr(tried.unwrapped.state_ref) == repr(untouched.unwrapped.state_ref)
    for env in (tried, untouched):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))
    assert repr(tried.unwrapped.state_ref) == repr(untouched.unwrapped.state_ref)
    # ... and the next unseeded deals come from the same, neither reseeded nor advanced, RNG.
    for _ in range(3):
        tried.reset()
        untouched.reset()
        assert repr(tried.unwrapped.state_ref) == repr(untouched.unwrapped.state_ref)


def test_an_unknown_option_warns_and_is_ignored() -> None:
    plain = draw_env.env()
    plain.reset(seed=5)
    env = draw_env.env()
    known = "known options: hands, boneyard"
    with pytest.warns(UserWarning, match=f"^reset option 'colour' is not known and was ignored; {known}"):
        env.reset(seed=5, options={"colour": "blue"})
    assert repr(env.unwrapped.state_ref) == repr(plain.unwrapped.state_ref)
    # The key PettingZoo's api_test passes to see that reset takes options is ignored silently.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=5, options={"options": 1})
    assert repr(env.unwrapped.state_ref) == repr(plain.unwrapped.state_ref)
    # Several unknown keys are listed.
    with pytest.warns(UserWarning, match="^reset options 'a', 'b' are not known and were ignored;"):
        env.reset(seed=5, options={"b": 1, "a": 2})


# ---------------------------------------------------------------------- actions


def game_snapshot(env: AECEnv) -> tuple:
    """The game as the rules see it (hidden tiles included), to check that nothing changed."""
    state = env.unwrapped.state_ref
    return tuple(state.hands), tuple(state.line), tuple(state.boneyard), state.current, tuple(state.scores)


def first_illegal_action(env: AECEnv) -> int:
    mask = env.observe(env.agent_selection)["action_mask"]
    return int(np.flatnonzero(mask == 0)[0])


@pytest.mark.parametrize(
    ("episode", "reward"),
    [("hand", "zero_sum"), ("hand", "points"), ("match", "zero_sum"), ("match", "win_loss")],
)
def test_an_illegal_action_through_env_ends_the_episode_with_the_penalty(
    episode: str, reward: str, caplog: pytest.LogCaptureFixture
) -> None:
    env = draw_env.env(num_players=3, episode=episode, reward=reward)
    env.reset(seed=11)
    env.step(env.observe(env.agent_selection)["action_mask"].argmax())  # one legal move first
    offender = env.agent_selection
    before = game_snapshot(env)
    with caplog.at_level(logging.WARNING):
        env.step(first_illegal_action(env))
    assert "Illegal move" in caplog.text
    assert game_snapshot(env) == before
    assert all(env.terminations.values())
    expected = {agent: (ILLEGAL_PENALTY[reward] if agent == offender else 0.0) for agent in env.agents}
    assert env.rewards == expected
    assert ILLEGAL_PENALTY == {"zero_sum": -168.0, "points": -168.0, "win_loss": -1.0}
    for agent in env.agent_iter():
        _obs, reward_seen, terminated, _truncated, _info = env.last()
        assert terminated and reward_seen == expected[agent]
        env.step(None)
    assert env.agents == []


def test_an_illegal_action_through_raw_env_raises_and_the_episode_goes_on() -> None:
    env = draw_env.raw_env(num_players=2)
    env.reset(seed=4)
    before = game_snapshot(env)
    acting = env.agent_selection
    illegal = first_illegal_action(env)
    with pytest.raises(IllegalActionError, match=f"action {illegal} .* is not legal for seat") as raised:
        env.step(illegal)
    assert isinstance(raised.value, ValueError)
    assert "legal actions:" in str(raised.value)
    assert game_snapshot(env) == before
    assert env.agent_selection == acting and not any(env.terminations.values())
    legal = int(env.observe(acting)["action_mask"].argmax())
    env.step(legal)
    assert game_snapshot(env) != before


OUT_OF_RANGE = [58, -1, 1000, np.int64(58), np.int32(-3), 3.0, "3", None, np.array([1, 2])]


@pytest.mark.parametrize("make", [draw_env.env, draw_env.raw_env], ids=["env", "raw_env"])
@pytest.mark.parametrize("action", OUT_OF_RANGE, ids=[repr(a) for a in OUT_OF_RANGE])
def test_an_action_outside_the_action_space_raises_and_changes_nothing(
    make: Callable[..., AECEnv], action: object
) -> None:
    env = make(num_players=2)
    env.reset(seed=2)
    before = game_snapshot(env)
    with pytest.raises(ValueError, match=r"action must be an integer in 0\.\.57"):
        env.step(action)
    assert game_snapshot(env) == before
    assert not any(env.terminations.values())


@pytest.mark.parametrize(
    "convert", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.array], ids=lambda f: f.__name__
)
def test_numpy_integer_actions_are_accepted(convert: Callable[[int], object]) -> None:
    plain, converted = draw_env.env(), draw_env.env()
    plain.reset(seed=9)
    converted.reset(seed=9)
    for _ in range(6):
        action = int(plain.observe(plain.agent_selection)["action_mask"].argmax())
        plain.step(action)
        converted.step(convert(action))
    assert game_snapshot(converted) == game_snapshot(plain)


@pytest.mark.parametrize("make", [draw_env.env, draw_env.raw_env], ids=["env", "raw_env"])
def test_stepping_or_observing_before_reset_raises(make: Callable[..., AECEnv]) -> None:
    env = make(render_mode="ansi")
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.step(0)
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.observe("player_0")
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.render()
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.state()


def test_the_wrapped_env_guards_every_entry_before_reset() -> None:
    env = draw_env.env()
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.last()
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        next(iter(env.agent_iter()))
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        _ = env.agent_selection


def finish_episode(env: AECEnv) -> None:
    for agent in env.agent_iter():
        _obs, _reward, terminated, _truncated, _info = env.last()
        env.step(None if terminated else int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))


def test_stepping_after_the_episode_warns_through_env(caplog: pytest.LogCaptureFixture) -> None:
    env = draw_env.env()
    env.reset(seed=0)
    finish_episode(env)
    with caplog.at_level(logging.WARNING):
        env.step(0)
    assert "step() called after all agents are terminated" in caplog.text


def test_stepping_after_the_episode_raises_through_raw_env() -> None:
    env = draw_env.raw_env()
    env.reset(seed=0)
    finish_episode(env)
    with pytest.raises(RuntimeError, match=r"every agent is done: call reset\(\)"):
        env.step(0)
