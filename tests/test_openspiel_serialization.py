"""python_draw_dominoes state strings: the history, replayed; hostile strings are refused, never run.

OpenSpiel's default for Python games writes a state as a base64 pickle of its ``__dict__`` and
unpickles whatever a string holds there. This game writes the history, one action per line (as
OpenSpiel's C++ games do), and reads it back by replaying legal actions from the initial state.
"""

from __future__ import annotations

import base64
import pickle
import random

import pytest

pyspiel = pytest.importorskip("pyspiel")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draw_env import openspiel as draw_openspiel

#: Set by the hostile pickle below, if anything ever unpickles it.
RAN: list[str] = []


def _mark() -> dict:
    RAN.append("the pickle ran")
    return {}


class Evil:
    def __reduce__(self) -> tuple:
        return (_mark, ())


EVIL_DICT = "history=\nmove_number=0\n__dict__=" + base64.b64encode(pickle.dumps(Evil())).decode()
SPECS = ["python_draw_dominoes", "python_draw_dominoes(players=4)", "python_draw_dominoes(players=3,episode=match)"]


def played(spec: str, seed: int, moves: int) -> pyspiel.State:
    """A state after ``moves`` random legal actions (chance outcomes included) from the start."""
    game = pyspiel.load_game(spec)
    state = game.new_initial_state()
    rng = random.Random(seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("moves", [0, 1, 20, 70, 10_000])
def test_states_round_trip_through_their_history(spec: str, moves: int) -> None:
    state = played(spec, seed=moves, moves=moves)
    game = state.get_game()
    text = state.serialize()
    assert text == "".join(f"{action}\n" for action in state.history())
    for other in (game.deserialize_state(text), pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))[1]):
        assert isinstance(other, draw_openspiel.DrawDominoesState)
        assert str(other) == str(state) and other.history() == state.history()
        assert other.returns() == state.returns() and other.is_terminal() == state.is_terminal()
        assert [other.information_state_string(p) for p in range(game.num_players())] == [
            state.information_state_string(p) for p in range(game.num_players())
        ]
    assert str(pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))[0]) == str(game)


def test_a_pickled_dict_is_refused_and_never_unpickled() -> None:
    game = pyspiel.load_game("python_draw_dominoes")
    with pytest.raises(ValueError, match="line 1: must be an action id"):
        game.deserialize_state(EVIL_DICT)
    whole = f"[Meta]\nVersion: 1\n\n[Game]\n{game}\n[State]\n{EVIL_DICT}\n"
    with pytest.raises(ValueError, match="line 1: must be an action id"):
        pyspiel.deserialize_game_and_state(whole)
    assert RAN == []
    # Other games' strings still go to OpenSpiel.
    kuhn = pyspiel.load_game("kuhn_poker")
    state = kuhn.new_initial_state().child(0)
    assert pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(kuhn, state))[1].history() == [0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0\n0\n99\n", "line 3: chance outcome 99 is not legal here"),
        ("0\n0\n0\n", "line 3: chance outcome 0 is not legal here"),
        ("1e3\n", "line 1: must be an action id"),
        ("-1\n", "line 1: must be an action id"),
        ("007\n", "line 1: must be an action id"),
        (" 1\n", "line 1: must be an action id"),
        ("\u0661\n", "line 1: must be an action id"),  # an Arabic-Indic digit: int() would read it
        ("1\n\n2\n", "line 2: must be an action id"),
        ("1" * 100 + "\n", "line 1: must be an action id"),
        ("0\n" * 10_000, "more than the"),
    ],
)
def test_a_bad_state_text_names_the_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game("python_draw_dominoes").deserialize_state(text)


def test_an_illegal_player_action_and_a_finished_game_are_named() -> None:
    state = played("python_draw_dominoes", seed=3, moves=15)  # the opener and the deal: play begins
    game = state.get_game()
    illegal = next(a for a in range(58) if a not in state.legal_actions())
    with pytest.raises(ValueError, match=rf"line 16: action {illegal} \(.*\) is not legal here; legal: "):
        game.deserialize_state(state.serialize() + f"{illegal}\n")
    done = played("python_draw_dominoes", seed=3, moves=10_000)
    assert done.is_terminal()
    with pytest.raises(ValueError, match="the game is over, yet the text goes on"):
        game.deserialize_state(done.serialize() + "0\n")


@pytest.mark.parametrize(
    ("game_line", "message"),
    [
        ("python_draw_dominoes(players=7)", "players must be one of 2, 3, 4"),
        ("python_draw_dominoes(players=2", r"\[Game\] section: Missing closing bracket"),
        # Other game strings that name this game: refused rather than left to OpenSpiel.
        (" python_draw_dominoes", r"\[Game\] section: only a python_draw_dominoes\(\.\.\.\) game string is read"),
        ("misere(game=python_draw_dominoes())", r"\[Game\] section: only a python_draw_dominoes"),
        ("turn_based_simultaneous_game(game=python_draw_dominoes())", r"\[Game\] section: only a python_draw_dominoes"),
    ],
)
def test_a_bad_game_section_is_a_value_error(game_line: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pyspiel.deserialize_game_and_state(f"[Meta]\nVersion: 1\n[Game]\n{game_line}\n[State]\n{EVIL_DICT}\n")
    assert RAN == []


def test_an_overlong_string_of_this_game_is_refused_before_it_is_split() -> None:
    longest = pyspiel.load_game("python_draw_dominoes(players=4,max_pip=9,hand_size=1,protected=0,episode=match)")
    bound = 4 * longest.max_history_length() + 4096  # 3 digits and a newline per action, and the sections
    head = f"[Meta]\nVersion: 1\n[Game]\n{longest}\n[State]\n"
    with pytest.raises(ValueError, match=f"has {bound + 1} characters, more than the {bound} of the longest"):
        pyspiel.deserialize_game_and_state(head + "1" * (bound + 1 - len(head)))


def test_a_state_started_from_a_position_says_it_cannot_be_serialized() -> None:
    state = played("python_draw_dominoes", seed=1, moves=16)
    started = state.get_game().new_state_from_position(state.core)
    with pytest.raises(ValueError, match="new_state_from_position cannot be serialized"):
        started.serialize()


@pytest.mark.parametrize("player", [7, 2, -1, True, 1.0, "0", None])
def test_resample_from_infostate_refuses_what_is_not_a_seat(player: object) -> None:
    state = played("python_draw_dominoes", seed=2, moves=17)
    sampler = pyspiel.UniformProbabilitySampler(1, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"player_id must be an integer in \[0, 1\]"):
        state.resample_from_infostate(player, sampler)
    for seat in range(2):
        assert state.resample_from_infostate(seat, sampler).information_state_string(seat) == state.information_state_string(seat)


# ---------------------------------------------------------------------- fuzzing

GAME = None


def _game() -> pyspiel.Game:
    global GAME  # noqa: PLW0603 - one loaded game for every example
    if GAME is None:
        GAME = pyspiel.load_game("python_draw_dominoes(players=3)")
    return GAME


def _expect_value_error_or_state(text: str) -> None:
    try:
        state = _game().deserialize_state(text)
    except ValueError:
        pass
    else:
        assert state.serialize() == "".join(f"{line}\n" for line in text.split("\n") if line)
    assert RAN == []


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text(max_size=200))
def test_random_text_is_refused_or_read(text: str) -> None:
    _expect_value_error_or_state(text)


@FUZZ
@given(
    seed=st.integers(0, 2**16),
    moves=st.integers(0, 60),
    edits=st.lists(
        st.tuples(
            st.sampled_from(["replace", "insert", "delete", "truncate", "append"]),
            st.integers(0, 10_000),
            st.one_of(st.integers(-3, 120).map(str), st.text(max_size=5), st.just(EVIL_DICT)),
        ),
        max_size=4,
    ),
)
def test_mutated_state_texts_are_refused_or_read(seed: int, moves: int, edits: list) -> None:
    lines = played("python_draw_dominoes(players=3)", seed, moves).serialize().split("\n")[:-1]
    for kind, where, value in edits:
        index = where % (len(lines) + 1)
        if kind == "replace" and lines:
            lines[index % len(lines)] = value
        elif kind == "insert":
            lines.insert(index, value)
        elif kind == "delete" and lines:
            del lines[index % len(lines)]
        elif kind == "truncate":
            lines = lines[:index]
        else:
            lines.append(value)
    _expect_value_error_or_state("".join(f"{line}\n" for line in lines))
