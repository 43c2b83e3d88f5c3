"""``DrawDominoes(..., obs_type="information_state")`` against the AEC environment: every step of
random games under ``jit`` + ``vmap`` (``benchmarks.jax_differential.compare``), ``init_deal``
included, and the histories of ``tests/information.py``: what a seat cannot see changes nothing,
what it can tell apart gives different vectors."""

from __future__ import annotations

import functools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from benchmarks.jax_differential import compare, make_driver  # noqa: E402
from draw_env.jax import DrawDominoes  # noqa: E402
from draw_env.observation import information_layout  # noqa: E402
from tests.information import (  # noqa: E402
    VARIANTS,
    Deal,
    game_of,
    hidden_swaps,
    make_env,
    played_hand,
    recall_pairs,
    variant_kwargs,
)

QUICK = {"xla_backend_optimization_level": 0}
#: (variant, episode): the variants one hand at a time (double-three plays as mini does, with one
#: more drawable tile), and matches of 2 and 4 players.
CASES = [(name, "hand") for name in VARIANTS if name != "double-three"] + [("midi", "match"), ("seeds-4", "match")]


@functools.cache
def environment(name: str, episode: str = "hand") -> DrawDominoes:
    return DrawDominoes(VARIANTS[name][0], episode, obs_type="information_state", **variant_kwargs(name))


@pytest.mark.parametrize(("name", "episode"), CASES, ids=lambda value: str(value))
def test_every_step_agrees_with_the_aec_environment(name: str, episode: str) -> None:
    env = environment(name, episode)
    assert env.observation_shape == (information_layout(env.game).size,)
    report = compare(env, make_driver(env, quick_compile=True), batch=8, decisions=150, seed=11)
    assert report.disagreements == 0, "\n".join(report.examples)
    assert report.decisions >= 150 and report.games >= 8


@functools.cache
def functions(name: str) -> tuple:
    """``init_deal``, ``step`` and ``observe`` of one game, jitted."""
    env = environment(name)
    return (jax.jit(env.init_deal, compiler_options=QUICK), jax.jit(env.step, compiler_options=QUICK),
            jax.jit(env.observe, compiler_options=QUICK))


def _dealt(name: str, deal: Deal):  # type: ignore[no-untyped-def]
    init_deal, _, _ = functions(name)
    players, width = len(deal.hands), max(map(len, deal.hands))
    hands = np.full((players, width), -1, np.int32)
    for seat, hand in enumerate(deal.hands):
        hands[seat, : len(hand)] = hand
    return init_deal(hands, np.array(deal.boneyard, np.int32), deal.opener)


@pytest.mark.parametrize("name", ["mini", "midi", "seeds-2"])
def test_what_a_seat_cannot_see_changes_nothing(name: str) -> None:
    _, step, observe = functions(name)
    swaps = 0
    for deal, other, actions, observer in hidden_swaps(game_of(name), seed=5, tries=30):
        first, second = _dealt(name, deal), _dealt(name, other)
        for action in [*actions, None]:
            np.testing.assert_array_equal(observe(first, observer), observe(second, observer))
            if action is not None:
                first, second = step(first, action), step(second, action)
        swaps += 1
    assert swaps >= 5


def test_histories_a_seat_tells_apart_give_different_vectors() -> None:
    _, step, observe = functions("seeds-2")
    for pair in recall_pairs():
        seen = []
        for deal, actions in (pair.first, pair.second):
            state = _dealt("seeds-2", deal)
            for action in actions:
                state = step(state, action)
            seen.append(np.asarray(observe(state, pair.observer)))
        assert not np.array_equal(seen[0], seen[1]), pair.what


def test_the_state_is_the_player_to_acts_and_observe_any_seats() -> None:
    _, step, observe = functions("seeds-4")
    deal, actions = played_hand(game_of("seeds-4"), seed=9)
    env = make_env("seeds-4")
    env.reset(options=deal.options())
    state = _dealt("seeds-4", deal)
    for action in actions:
        np.testing.assert_array_equal(state.observation, env.observe(env.agent_selection)["observation"])
        for seat, agent in enumerate(env.possible_agents):
            np.testing.assert_array_equal(observe(state, seat), env.observe(agent)["observation"])
        state = step(state, action)
        env.step(action)


def test_init_deal_refuses_a_boneyard_too_long_for_the_rows() -> None:
    env = environment("seeds-2")
    hands = np.array([[0, 1], [2, 3]], np.int32)
    with pytest.raises(ValueError, match=r"init_deal: .*boneyard may hold at most 14 tiles"):
        env.init_deal(hands, np.arange(4, 28, dtype=np.int32), 0)


def test_a_bad_obs_type_is_refused_and_the_observation_keeps_no_history() -> None:
    with pytest.raises(ValueError, match="obs_type must be one of 'observation', 'information_state'"):
        DrawDominoes(2, obs_type="history")
    plain = jax.jit(DrawDominoes(2).init)(jax.random.key(0))
    assert plain.events.shape == (0,) and plain.observation.shape == (258,)
