"""The OpenSpiel game's ``information_state_tensor`` against the AEC environment's information
state, and its ``information_state_string``: the same vector at every decision of random games
over the variant grid, the histories of ``tests/information.py`` (what a seat cannot see changes
neither, what it can tell apart changes both), and the string telling apart exactly the
histories the tensor tells apart."""

from __future__ import annotations

import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from draw_env import openspiel as draw_openspiel  # noqa: E402
from draw_env.observation import information_layout, observe_state  # noqa: E402
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


def load(name: str, episode: str = "hand") -> pyspiel.Game:
    kwargs = variant_kwargs(name)
    params = {"players": VARIANTS[name][0], "episode": episode, **kwargs, "hand_size": kwargs["hand_size"] or 0}
    return pyspiel.load_game(draw_openspiel.SHORT_NAME, params)


def dealt_state(game: pyspiel.Game, deal: Deal) -> tuple[pyspiel.State, list[int]]:
    """The OpenSpiel state dealt ``deal``, and the tiles its draws will take, in order."""
    state = game.new_initial_state()
    for outcome in draw_openspiel.deal_actions(deal.hands, deal.opener):
        state.apply_action(outcome)
    return state, list(deal.boneyard)


def play(state: pyspiel.State, boneyard: list[int], action: int) -> None:
    """A decision, and a draw's tile (the next of ``boneyard``) at the chance node after it."""
    state.apply_action(action)
    if state.is_chance_node() and not state.is_terminal():
        state.apply_action(boneyard.pop(0))


@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("episode", ["hand", "match"])
def test_the_tensor_is_the_environments_information_state(name: str, episode: str) -> None:
    game = load(name, episode)
    assert game.information_state_tensor_shape() == [information_layout(game.rules).size]
    assert game.get_type().provides_information_state_tensor and game.get_type().provides_information_state_string
    rng = random.Random(1)
    for seed in range(3 if episode == "hand" else 1):
        env = make_env(name, episode)
        env.reset(seed=seed)
        state, boneyard = dealt_state(game, Deal([sorted(h) for h in map(list, _hands(env))], list(env.state_ref.boneyard),
                                                 env.state_ref.opener))
        while not state.is_terminal():
            core = env.state_ref
            for seat, agent in enumerate(env.possible_agents):
                expected = env.observe(agent)["observation"]
                np.testing.assert_array_equal(np.asarray(state.information_state_tensor(seat), np.float32), expected)
                np.testing.assert_array_equal(np.asarray(state.observation_tensor(seat), np.float32),
                                              observe_state(core, seat, episode == "match"))
            action = rng.choice(state.legal_actions())
            hand = core.hand_number
            env.step(action)
            if env.state_ref.hand_number != hand and not state.is_terminal():
                # The match dealt its next hand: OpenSpiel's chance nodes deal the same.
                state.apply_action(action)
                nxt = env.state_ref
                for outcome in draw_openspiel.deal_actions([nxt.hand_tiles(s) for s in range(nxt.num_players)]):
                    state.apply_action(outcome)
                boneyard = list(nxt.boneyard)
                continue
            play(state, boneyard, action)


def _hands(env) -> list[list[int]]:  # type: ignore[no-untyped-def]
    core = env.state_ref
    return [core.hand_tiles(seat) for seat in range(core.num_players)]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_what_a_seat_cannot_see_changes_neither_tensor_nor_string(name: str) -> None:
    game = load(name)
    swaps = 0
    for deal, other, actions, observer in hidden_swaps(game_of(name), seed=6, tries=30):
        (first, first_bones), (second, second_bones) = dealt_state(game, deal), dealt_state(game, other)
        for action in [*actions, None]:
            assert first.information_state_tensor(observer) == second.information_state_tensor(observer)
            assert first.information_state_string(observer) == second.information_state_string(observer)
            if action is not None:
                play(first, first_bones, action)
                play(second, second_bones, action)
        swaps += 1
    assert swaps >= 5


def test_histories_a_seat_tells_apart_differ_in_tensor_and_string() -> None:
    game = load("seeds-2")
    for pair in recall_pairs():
        tensors, strings = [], []
        for deal, actions in (pair.first, pair.second):
            state, boneyard = dealt_state(game, deal)
            for action in actions:
                play(state, boneyard, action)
            tensors.append(state.information_state_tensor(pair.observer))
            strings.append(state.information_state_string(pair.observer))
        assert tensors[0] != tensors[1] and strings[0] != strings[1], pair.what


@pytest.mark.parametrize("name", ["micro", "mini", "midi"])
def test_the_string_tells_apart_exactly_what_the_tensor_does(name: str) -> None:
    """Over many random hands (which meet the same histories often), at every decision, for
    each seat: one string per tensor and one tensor per string. (At chance nodes the two differ
    in what they show early: while the deal runs the string names the opener already drawn, and
    while a draw waits for its tile the string shows the draw and the tensor's counts do not.)"""
    game = load(name)
    by_string: dict[tuple[int, str], bytes] = {}
    by_tensor: dict[tuple[int, bytes], str] = {}
    repeats = 0
    for seed in range(150):
        deal, actions = played_hand(game_of(name), seed)
        state = game.new_initial_state()
        chance = draw_openspiel.deal_actions(deal.hands, deal.opener)
        boneyard = list(deal.boneyard)
        moves = list(actions)
        while not state.is_terminal():
            for seat in range(0 if state.is_chance_node() else game.num_players()):
                text = state.information_state_string(seat)
                tensor = np.asarray(state.information_state_tensor(seat), np.float32).tobytes()
                repeats += (seat, text) in by_string
                assert by_string.setdefault((seat, text), tensor) == tensor
                assert by_tensor.setdefault((seat, tensor), text) == text
            if chance:
                state.apply_action(chance.pop(0))
            elif state.is_chance_node():
                state.apply_action(boneyard.pop(0))
            else:
                state.apply_action(moves.pop(0))
    assert repeats > 50


def test_a_position_starts_the_history_from_the_hand_held_there() -> None:
    """A state from a position (search's): its deal block is the hand held at the position, its
    events the actions since."""
    game = load("seeds-2")
    deal, actions = played_hand(game_of("seeds-2"), seed=3)
    env = make_env("seeds-2")
    env.reset(options=deal.options())
    for action in actions[:6]:
        env.step(action)
    position = env.state_ref.clone()
    state = game.new_state_from_position(position)
    info = information_layout(game.rules)
    for seat in range(2):
        blocks = info.split(np.asarray(state.information_state_tensor(seat), np.float32))
        assert np.flatnonzero(blocks["dealt"]).tolist() == position.hand_tiles(seat)
        assert not blocks["events"].any()
        np.testing.assert_array_equal(np.asarray(state.information_state_tensor(seat))[: info.observation.size],
                                      observe_state(position, seat))
