"""python_draw_dominoes variants: the parameters, a differential grid against the rules, state strings.

A grid of variants (2 to 4 players, double-two to double-nine, several hand sizes, 0 to 3
protected tiles) is played through the OpenSpiel game and through :class:`draw_env.rules.DrawState`
with the same deal and actions; every legal action list, observation tensor (the AEC
environment's, :func:`draw_env.observation.observe_state`), information state and return must
agree. The seeds' games are pinned by a digest of everything the game says, taken before
variants existed.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from open_spiel.python import policy
from open_spiel.python.algorithms import exploitability, get_all_states

import agents
from agents.openspiel_bots import AgentBot
from draw_env import openspiel as draw_openspiel
from draw_env.observation import information_layout, information_state, layout, observe_state
from draw_env.rules import DrawGame, hand_rewards

#: (players, max_pip, hand_size, protected); hand_size None is the seeds' deal (parameter 0).
GRID = [
    (2, 2, 1, 0),
    (2, 2, 2, 2),
    (3, 2, 1, 1),
    (2, 3, 3, 3),
    (3, 3, 2, 0),
    (4, 3, 1, 2),
    (4, 4, 3, 1),
    (2, 5, None, 2),
    (3, 5, 4, 3),
    (2, 6, 5, 0),
    (3, 6, None, 1),
    (4, 6, None, 3),
    (2, 7, 9, 2),
    (4, 7, 2, 0),
    (2, 8, 1, 3),
    (3, 8, 10, 2),
    (2, 9, 20, 1),
    (4, 9, None, 2),
    (4, 9, 12, 3),
]
#: The micro variant whose whole tree small tests enumerate.
MICRO = {"players": 2, "max_pip": 2, "hand_size": 1, "protected": 3}


def _params(players: int, max_pip: int, hand_size: int | None, protected: int, **more: object) -> dict:
    return {
        "players": players,
        "max_pip": max_pip,
        "hand_size": hand_size or 0,
        "protected": protected,
        **more,
    }


def _load(params: dict) -> pyspiel.Game:
    return pyspiel.load_game(draw_openspiel.SHORT_NAME, params)


def _play_against_rules(params: dict, seed: int) -> list[str]:
    """One random game through the OpenSpiel game and the rules, same deal and actions: what disagreed."""
    game = _load(params)
    rules = game.rules
    match = game.match
    players = rules.num_players
    rng = random.Random(seed)
    reference = rules.new_state(rng)
    state = game.new_initial_state()
    queue = draw_openspiel.deal_actions([reference.hand_tiles(s) for s in range(players)], reference.opener)
    totals = [0.0] * players
    disagreements: list[str] = []

    def compare(step: int) -> None:
        for player in range(players):
            expected = observe_state(reference, player, match)
            observed = np.asarray(state.observation_tensor(player), np.float32)
            if not np.array_equal(observed, expected):
                disagreements.append(f"step {step}: observation of seat {player}")
            information = np.asarray(state.information_state_tensor(player), np.float32)
            if not np.array_equal(information, information_state(reference, player, match)):
                disagreements.append(f"step {step}: information state of seat {player}")

    step = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(queue.pop(0))  # the deal, or the tile the reference drew
            continue
        step += 1
        if state.current_player() != reference.current:
            disagreements.append(
                f"step {step}: to act {state.current_player()}, the rules say {reference.current}"
            )
        legal = reference.legal_actions()
        if state.legal_actions() != legal:
            disagreements.append(f"step {step}: legal {state.legal_actions()}, the rules say {legal}")
        compare(step)
        action = rng.choice(legal)
        if action == rules.draw_action:
            queue.append(reference.boneyard[0])
        state.apply_action(action)
        reference.apply_action(action)
        if reference.result is None:
            continue
        over = not match or reference.is_match_over
        totals = [total + reward for total, reward in zip(totals, hand_rewards(game.reward, reference, over))]
        if not over:
            reference.next_hand(rng)
            queue = draw_openspiel.deal_actions([reference.hand_tiles(s) for s in range(players)])
    compare(step + 1)
    if reference.result is None or not (not match or reference.is_match_over):
        disagreements.append("the OpenSpiel game ended before the rules did")
    if state.returns() != pytest.approx(totals):
        disagreements.append(f"returns {state.returns()}, the rules say {totals}")
    return disagreements


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), GRID)
def test_the_variant_grid_plays_as_the_rules_do(
    players: int, max_pip: int, hand_size: int | None, protected: int
) -> None:
    params = _params(players, max_pip, hand_size, protected)
    games = 6 if max_pip < 7 else 2  # the larger sets' games are long
    disagreements = [line for seed in range(games) for line in _play_against_rules(params, seed)]
    assert disagreements == []


@pytest.mark.parametrize(
    "params",
    [
        _params(2, 9, 5, 0, episode="match", reward="points"),
        _params(3, 5, 3, 1, episode="match", reward="win_loss"),
        _params(4, 7, 4, 3, episode="match", reward="zero_sum"),
    ],
    ids=str,
)
def test_variant_matches_play_as_the_rules_do(params: dict) -> None:
    assert _play_against_rules(params, seed=1) == []


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), GRID)
def test_the_game_info_follows_the_variant(
    players: int, max_pip: int, hand_size: int | None, protected: int
) -> None:
    game = _load(_params(players, max_pip, hand_size, protected))
    rules = DrawGame(players, max_pip, hand_size, protected)
    tiles = (max_pip + 1) * (max_pip + 2) // 2
    assert game.rules == rules
    assert game.num_distinct_actions() == 2 * tiles + 2 and game.max_chance_outcomes() == tiles
    assert game.max_utility() == rules.max_hand_points == -game.min_utility()
    assert game.observation_tensor_shape() == [layout(rules).size]
    assert game.information_state_tensor_shape() == [information_layout(rules).size]
    assert game.max_game_length() == draw_openspiel.max_hand_length(rules)
    assert str(pyspiel.load_game(str(game))) == str(game)  # the game string loads the same game


@pytest.mark.parametrize(
    "params",
    [
        _params(2, 2, 1, 0),
        _params(4, 9, None, 3),
        _params(3, 5, 4, 1, episode="match"),
        _params(2, 4, 3, 0, reward="points"),
    ],
    ids=str,
)
def test_random_sim_test_on_variants(params: dict) -> None:
    pyspiel.random_sim_test(_load(params), num_sims=3, serialize=True, verbose=False)


def test_the_game_string_names_only_what_differs_from_the_seeds_game() -> None:
    assert str(_load({"players": 4, "max_pip": 6, "hand_size": 6, "protected": 2})) == (
        "python_draw_dominoes(episode=hand,players=4,reward=zero_sum)"
    )
    assert str(_load({"hand_size": 7})) == str(_load({"hand_size": 0})) == str(_load({}))
    assert str(_load({"players": 3, "hand_size": 6})) == (
        "python_draw_dominoes(episode=hand,hand_size=6,players=3,reward=zero_sum)"
    )
    assert str(pyspiel.load_game("python_draw_dominoes(max_pip=9,protected=0)")) == (
        "python_draw_dominoes(episode=hand,max_pip=9,players=2,protected=0,reward=zero_sum)"
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"max_pip": 1}, r"max_pip must be an integer in \[2, 9\], got 1"),
        ({"max_pip": 10}, r"max_pip must be an integer in \[2, 9\], got 10"),
        ({"hand_size": -1}, "hand_size must be an integer >= 0 \\(0: the seeds' deal"),
        ({"protected": -1}, "protected must be an integer >= 0, got -1"),
        ({"max_pip": 2, "hand_size": 3}, "hand_size=3 to 2 players with protected=2 needs 8 tiles"),
        ({"players": 4, "max_pip": 3}, "hand_size=6 to 4 players with protected=2 needs 26 tiles"),
    ],
)
def test_a_bad_variant_parameter_is_named(params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _load(params)
    text = ",".join(f"{name}={value}" for name, value in params.items())
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game(f"python_draw_dominoes({text})")


def test_a_deal_is_observed_tile_by_tile_in_the_variant_layout() -> None:
    game = _load(_params(3, 4, 3, 1, episode="match"))
    rules = game.rules
    state = game.new_initial_state()
    state.apply_action(2)  # the opener
    for tile in (0, 5, 9, 14, 1):  # seat 0's three tiles, then two of seat 1's
        state.apply_action(tile)
    blocks = layout(rules).split(np.asarray(state.observation_tensor(1), np.float32))
    assert np.flatnonzero(blocks["hand"]).tolist() == [1, 14]
    assert blocks["hand_sizes"].tolist() == [2, 0, 3, 0]  # seat 1, seat 2, seat 0, nobody
    assert blocks["boneyard_size"].tolist() == [rules.num_tiles - 5]
    assert blocks["in_play"].tolist() == [1, 1, 1, 0] and blocks["target"].tolist() == [61]
    assert not blocks["left_end"].any() and not blocks["to_act"].any() and not blocks["can_draw"].any()
    assert state.observation_string(1) == "p1 hand 0 scores 0 0 0 dealing 5 hand [0|1][4|4]"


def test_states_from_a_position_must_be_of_the_variant() -> None:
    game = _load(_params(3, 5, 4, 1))
    position = game.rules.new_state(random.Random(0))
    started = game.new_state_from_position(position)
    assert started.legal_actions() == position.legal_actions()
    with pytest.raises(ValueError, match="position is of the variant max_pip=5, hand_size=4, protected=1"):
        _load(_params(3, 5, 4, 2)).new_state_from_position(position)


@pytest.mark.parametrize("params", [_params(3, 4, 3, 1), _params(2, 9, 20, 1)], ids=str)
def test_resampling_keeps_the_information_state_in_a_variant(params: dict) -> None:
    game = _load(params)
    sampler = pyspiel.UniformProbabilitySampler(3, 0.0, 1.0)
    rng = random.Random(4)
    state = game.new_initial_state()
    checked = 0
    while not state.is_terminal():
        if not state.is_chance_node() and rng.random() < 0.3:
            for player in range(game.num_players()):
                other = state.resample_from_infostate(player, sampler)
                assert other.information_state_string(player) == state.information_state_string(player)
                assert other.information_state_tensor(player) == state.information_state_tensor(player)
                checked += 1
        state.apply_action(rng.choice(state.legal_actions()))
    assert checked > 0


def test_openspiel_enumerates_a_micro_variant_and_measures_exploitability() -> None:
    """get_all_states walks the whole tree; the information states are well formed for the policy tools."""
    game = _load(MICRO)
    states = get_all_states.get_all_states(
        game, depth_limit=-1, include_terminals=True, include_chance_states=False
    )
    legal_of: dict[str, list[int]] = {}
    terminals = 0
    for state in states.values():
        if state.is_terminal():
            terminals += 1
            assert sum(state.returns()) == pytest.approx(0)
            continue
        key = state.information_state_string()
        assert legal_of.setdefault(key, state.legal_actions()) == state.legal_actions()
    assert terminals > 0 and len(legal_of) > 0
    conv = exploitability.nash_conv(game, policy.UniformRandomPolicy(game))
    assert 0 < conv < 2 * game.max_utility()


# ---------------------------------------------------------------------- state strings


def _played(params: dict, seed: int, moves: int) -> pyspiel.State:
    state = _load(params).new_initial_state()
    rng = random.Random(seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize(
    "params", [_params(2, 2, 1, 0), _params(4, 9, None, 3), _params(3, 5, 4, 1, episode="match")], ids=str
)
@pytest.mark.parametrize("moves", [0, 12, 10_000])
def test_variant_states_round_trip_with_their_variant_line(params: dict, moves: int) -> None:
    state = _played(params, seed=moves, moves=moves)
    game = state.get_game()
    text = state.serialize()
    variant = game.rules.variant
    assert text.split("\n")[0] == "variant " + " ".join(f"{name}={variant[name]}" for name in variant)
    again = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    for other in (game.deserialize_state(text), again[1]):
        assert str(other) == str(state) and other.history() == state.history() and other.serialize() == text
        assert [other.information_state_string(p) for p in range(game.num_players())] == [
            state.information_state_string(p) for p in range(game.num_players())
        ]
    assert str(again[0]) == str(game)


def test_the_double_nine_pass_reads_back() -> None:
    """Action ids reach 111 in the double-nine set (three digits), and the longest game fits the bound."""
    game = _load(_params(2, 9, 20, 1))
    state = game.new_initial_state()
    rng = random.Random(0)
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply_action(111 if 111 in legal else rng.choice(legal))
    assert "111" in state.serialize().split("\n")
    assert game.deserialize_state(state.serialize()).history() == state.history()


@pytest.mark.parametrize(
    ("writer", "reader", "message"),
    [
        (
            _params(2, 3, 2, 1),
            _params(2, 4, 2, 1),
            "is a state of the variant max_pip=3, hand_size=2, protected=1; this game's is max_pip=4, hand_size=2, protected=1",
        ),
        (
            _params(2, 3, 2, 1),
            {"players": 2},
            "is a state of the variant max_pip=3, hand_size=2, protected=1; this game's is max_pip=6, hand_size=7, protected=2",
        ),
        (
            {"players": 2},
            _params(2, 6, 7, 0),
            "line 1: a state of this game's variant starts with 'variant max_pip=6 hand_size=7 protected=0'",
        ),
    ],
)
def test_a_state_text_of_another_variant_is_refused(writer: dict, reader: dict, message: str) -> None:
    text = _played(writer, seed=1, moves=9).serialize()
    with pytest.raises(ValueError, match=message):
        _load(reader).deserialize_state(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "variant max_pip=3 hand_size=2\n",
            "line 1: a variant line reads 'variant max_pip=N hand_size=H protected=P'",
        ),
        ("variant max_pip=03 hand_size=2 protected=1\n", "line 1: a variant line reads"),
        ("variant max_pip=3 hand_size=2 protected=1 \n", "line 1: a variant line reads"),
        ("variant" + "9" * 10_000, "more than the"),
        (
            "variant max_pip=3 hand_size=2 protected=1\nvariant max_pip=3 hand_size=2 protected=1\n",
            "line 2: must be an action id",
        ),
        ("variant max_pip=3 hand_size=2 protected=1\n0\n10\n", "line 3: chance outcome 10 is not legal here"),
    ],
)
def test_a_bad_variant_state_text_names_the_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _load(_params(2, 3, 2, 1)).deserialize_state(text)


def test_the_seeds_variant_has_no_variant_line() -> None:
    with pytest.raises(ValueError, match="line 1: a state of the seeds' variant has no variant line"):
        _load({"players": 2}).deserialize_state("variant max_pip=6 hand_size=7 protected=2\n0\n")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16), moves=st.integers(0, 40), cut=st.integers(0, 60), junk=st.text(max_size=12)
)
def test_mutated_variant_texts_are_refused_or_read(seed: int, moves: int, cut: int, junk: str) -> None:
    game = _load(_params(3, 4, 2, 1))
    lines = _played(_params(3, 4, 2, 1), seed, moves).serialize().split("\n")[:-1]
    lines.insert(cut % (len(lines) + 1), junk)
    text = "".join(f"{line}\n" for line in lines)
    try:
        state = game.deserialize_state(text)
    except ValueError:
        return
    assert state.serialize() == "".join(f"{line}\n" for line in lines if line)


# ---------------------------------------------------------------------- the seeds' games, unchanged

#: A game-and-state string written before variants existed: it must still load.
SAVED = (
    "# Automatically generated by OpenSpiel SerializeGameAndState\n[Meta]\nVersion: 1\n\n[Game]\n"
    "python_draw_dominoes(episode=hand,players=2,reward=zero_sum)\n[State]\n"
    + "".join(
        f"{action}\n"
        for action in (1, 23, 11, 27, 24, 26, 21, 17, 0, 16, 8, 2, 7, 5, 10, 56, 25, 14, 23, 51, 47, 20)
    )
)


def test_a_saved_string_of_the_seeds_game_still_loads() -> None:
    game, state = pyspiel.deserialize_game_and_state(SAVED)
    assert state.information_state_string(0) == (
        "p0 opener 1 dealt 14 [1|5][2|6][3|6][4|5][4|6][5|6][6|6] | 1:draw 1:[1|1]L 0:[1|5]R 1:[5|5]R 0:[4|5]R 1:[1|4]L"
    )
    assert pyspiel.serialize_game_and_state(game, state) == SAVED


def _digest(spec: str, seed: int) -> str:
    """A digest of everything a random game of ``spec`` says, state by state, but its information
    state tensor (the environment's information state, checked against it by
    :func:`_play_against_rules`)."""
    game = pyspiel.load_game(spec)
    digest = hashlib.sha256()

    def add(value: object) -> None:
        digest.update(repr(value).encode() + b"\0")

    add(str(game))
    add(
        (
            game.num_distinct_actions(),
            game.max_chance_outcomes(),
            game.max_game_length(),
            game.min_utility(),
            game.max_utility(),
            game.observation_tensor_shape(),
        )
    )
    rng = random.Random(seed)
    state = game.new_initial_state()
    for _ in range(400):
        add((str(state), state.serialize(), state.returns(), state.rewards()))
        for player in range(game.num_players()):
            add((state.observation_string(player), state.information_state_string(player)))
            digest.update(np.asarray(state.observation_tensor(player), np.float32).tobytes())
        if state.is_terminal():
            break
        if state.is_chance_node():
            add(state.chance_outcomes())
        legal = state.legal_actions()
        add((legal, [state.action_to_string(state.current_player(), action) for action in legal]))
        state.apply_action(rng.choice(legal))
    return digest.hexdigest()[:16]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("python_draw_dominoes", "3c45652db054805e"),
        ("python_draw_dominoes(players=3)", "07b5f5e7c77d9fbe"),
        ("python_draw_dominoes(players=4)", "18869c3494921dba"),
        ("python_draw_dominoes(players=2,episode=match)", "d4db69f70c12174e"),
        ("python_draw_dominoes(players=3,episode=match,reward=win_loss)", "c0657900f2008487"),
    ],
)
def test_the_seeds_games_say_what_they_always_said(spec: str, expected: str) -> None:
    """Strings, tensors, actions, chance outcomes, returns and serialization, as before variants."""
    assert _digest(spec, seed=0) == expected


def test_an_agent_bot_plays_a_variant_table() -> None:
    """AgentBot hands its agent the variant's mask (2T + 2 entries: 112 in double-nine)."""
    game = _load(_params(3, 9, None, 2))
    bots = [AgentBot(agents.make("random", seed=seat)) for seat in range(3)]
    state = game.new_initial_state()
    rng = random.Random(0)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.legal_actions()))
        else:
            state.apply_action(bots[state.current_player()].step(state))  # raises if illegal
    assert sum(state.returns()) == pytest.approx(0)
