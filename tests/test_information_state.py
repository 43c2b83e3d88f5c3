"""The information state (``obs_type="information_state"``) of the AEC environment: its
declaration, the reference writer from the rules' history, the bound on a hand's actions, no
leak and perfect recall. The other engines are compared with this environment in their own
test files (``tests/test_vector_information.py``, ``tests/test_jax_information.py``,
``tests/test_openspiel_information.py``, ``tests/test_game_tree_information.py``)."""

from __future__ import annotations

import copy
import pickle
import random
from collections import defaultdict

import numpy as np
import pytest
from pettingzoo.test import api_test

import draw_env
from draw_env.exact import game_tree
from draw_env.observation import (
    EVENT_CODES,
    EVENT_KINDS,
    OBS_TYPES,
    event_code,
    expand_events,
    information_layout,
    information_state,
    layout,
    observe_state,
)
from draw_env.rules import DrawGame, DrawState
from tests.information import (
    LONG_HAND,
    VARIANTS,
    game_of,
    hidden_swaps,
    make_env,
    observer_key,
    random_histories,
    recall_pairs,
    replay,
)

EPISODES = ("hand", "match")


def test_the_default_is_the_observation_unchanged() -> None:
    plain, named = draw_env.env(num_players=3), draw_env.env(num_players=3, obs_type="observation")
    assert plain.observation_space("player_0") == named.observation_space("player_0")
    rng = random.Random(0)
    plain.reset(seed=4)
    named.reset(seed=4)
    for _agent in plain.agent_iter():
        observation, _, terminated, truncated, _ = plain.last()
        other, *_ = named.last()
        np.testing.assert_array_equal(observation["observation"], other["observation"])
        assert observation["observation"].shape == (layout(DrawGame(3)).size,)
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(observation["action_mask"])))
        plain.step(action)
        named.step(action)


@pytest.mark.parametrize("bad", ["info", "information-state", None, 1])
def test_a_bad_obs_type_is_refused_naming_it_and_the_allowed_values(bad: object) -> None:
    with pytest.raises(ValueError, match=r"obs_type must be one of 'observation', 'information_state'"):
        draw_env.env(obs_type=bad)
    assert OBS_TYPES == ("observation", "information_state")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_layout_is_the_observation_then_the_history_blocks(name: str) -> None:
    game = game_of(name)
    info, observed = information_layout(game), layout(game)
    assert info.observation is observed
    assert [block.name for block in info.blocks] == ["drawn_at", "events"]
    assert info.max_events == game.max_hand_actions
    sizes = [game.num_tiles, game.max_hand_actions]
    assert [block.size for block in info.blocks] == sizes
    assert info.size == observed.size + sum(sizes) and info.num_tiles == game.num_tiles
    np.testing.assert_array_equal(info.high[: observed.size], observed.high)
    high = info.split(info.high)
    assert (high["drawn_at"] == game.max_hand_actions).all() and (high["events"] == EVENT_CODES).all()
    assert EVENT_CODES == 16
    env = make_env(name)
    space = env.observation_space("player_0")["observation"]
    assert space.shape == (info.size,) and space.dtype == np.float32
    np.testing.assert_array_equal(space.low, 0)
    np.testing.assert_array_equal(space.high, info.high)


def test_the_bound_of_the_seeds_games() -> None:
    """``n(T - protected - n) + (T - n * hand_size - protected) + 1``: the docs' figures."""
    assert [DrawGame(n).max_hand_actions for n in (2, 3, 4)] == [61, 75, 91]
    assert [information_layout(DrawGame(n)).size for n in (2, 3, 4)] == [347, 361, 377]


@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("episode", EPISODES)
def test_the_environment_serves_the_reference_writer_at_every_step(name: str, episode: str) -> None:
    """The environment's incremental table against :func:`information_state` (the rules'
    history written from scratch) for every seat after every action; the prefix is the
    observation; every entry an integer within the declared bounds."""
    match = episode == "match"
    info = information_layout(game_of(name))
    games = (4 if name.startswith("seeds") else 12) if episode == "hand" else 2
    for env, _ in random_histories(name, episode, games, seed=1):
        state = env.state_ref
        for seat, agent in enumerate(env.possible_agents):
            vector = env.observe(agent)["observation"]
            expected = information_state(state, seat, match)
            np.testing.assert_array_equal(vector, expected)
            np.testing.assert_array_equal(vector[: info.observation.size], observe_state(state, seat, match))
            assert vector.dtype == np.float32 and (vector >= 0).all() and (vector <= info.high).all()
            assert (vector == np.rint(vector)).all()


def _events(vector: np.ndarray, game: DrawGame) -> np.ndarray:
    return information_layout(game).split(vector)["events"]


def test_the_history_blocks_say_what_happened() -> None:
    """Seat 1's view of a short hand: each action's code, the drawn tiles."""
    pair = recall_pairs()[1]  # seat 1 draws before its first placement
    game = pair.game
    deal, actions = pair.first
    state = replay(game, deal, actions)
    for player in (0, 1):
        blocks = information_layout(game).split(information_state(state, player))
        kinds = ["place_left", "draw", "place_left", "place_right", "place_right"]
        expected = [1 + 4 * ((seat - player) % 2) + EVENT_KINDS.index(kind) for seat, kind in zip((0, 1, 1, 0, 1), kinds)]
        assert blocks["events"][: len(actions)].tolist() == expected
        assert not blocks["events"][len(actions) :].any()
        drawn = {int(t): int(k) for t, k in enumerate(blocks["drawn_at"]) if k}
        assert drawn == ({deal.boneyard[0]: 2} if player == 1 else {})
    assert [event_code(seat, kind) for seat in range(4) for kind in range(4)] == list(range(1, 17))


def _read_back(vector: np.ndarray, game: DrawGame) -> tuple[int, list[tuple[int, int, int]]]:
    """The observer's deal and the hand's actions as it knows them, ``(relative seat, action,
    tile drawn or -1)``, read from its vector alone: the deal is the hand now plus the tiles it
    placed less those it drew, the tile of the k-th placement is the tile placed k-th."""
    blocks = information_layout(game).split(vector)
    tile_of = {int(k): t for t, k in enumerate(blocks["placement_order"]) if k}
    drawn = {int(k): t for t, k in enumerate(blocks["drawn_at"]) if k}
    placed_by_me = blocks["placed_by"][: game.num_tiles]
    dealt = {t for t in range(game.num_tiles) if blocks["hand"][t] or placed_by_me[t]} - set(drawn.values())
    actions, placements = [], 0
    for index, code in enumerate(blocks["events"].astype(int), start=1):
        if not code:
            break
        seat, kind = divmod(code - 1, 4)
        if kind < 2:
            placements += 1
            actions.append((seat, 2 * tile_of[placements] + kind, -1))
        else:
            actions.append((seat, game.draw_action + kind - 2, drawn.get(index, -1)))
    return sum(1 << t for t in dealt), actions


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_deal_and_every_action_are_read_back_from_the_vector(name: str) -> None:
    """The blocks left out (the deal, each placement's tile) are functions of the vector: read
    back, they are the rules' own, and so is every action with its seat and the observer's draws."""
    game = game_of(name)
    players = game.num_players
    for env, _ in random_histories(name, "hand", 4 if name.startswith("seeds") else 12, seed=4):
        state = env.state_ref
        for seat, agent in enumerate(env.possible_agents):
            dealt, actions = _read_back(env.observe(agent)["observation"], game)
            assert dealt == state.dealt[seat]
            assert actions == [((actor - seat) % players, action, tile if actor == seat else -1)
                               for actor, action, tile in state.history]


def test_expand_events_is_the_one_hot_of_each_code() -> None:
    game = game_of("mini")
    info = information_layout(game)
    vectors = np.zeros((3, info.size), np.float32)
    start = info.offsets["events"]
    vectors[1, start : start + 3] = [1, 16, 7]
    expanded = expand_events(vectors, game)
    assert expanded.shape == (3, info.max_events, 16) and expanded.dtype == np.float32
    assert not expanded[0].any() and not expanded[1, 3:].any()
    assert [int(np.flatnonzero(row)[0]) for row in expanded[1, :3]] == [0, 15, 6]
    assert expand_events(vectors[1], game).shape == (info.max_events, 16)
    with pytest.raises(ValueError, match=f"{info.size} entries, got shape"):
        expand_events(vectors[:, 1:], game)


@pytest.mark.parametrize("name", ["micro", "mini", "three-players"])
@pytest.mark.parametrize("episode", EPISODES)
def test_what_a_seat_knows_and_its_vector_determine_each_other(name: str, episode: str) -> None:
    """Over many random histories of a small variant (which meet the same histories often): two
    histories a seat knows alike give it one vector (no leak), and two it knows apart give
    different vectors (perfect recall)."""
    match = episode == "match"
    vectors: dict[tuple, bytes] = {}
    keys: dict[bytes, tuple] = {}
    repeats = 0
    for env, _ in random_histories(name, episode, 300 if episode == "hand" else 20, seed=2):
        state = env.state_ref
        for seat, agent in enumerate(env.possible_agents):
            key = observer_key(state, seat, match)
            vector = env.observe(agent)["observation"].tobytes()
            repeats += key in vectors
            assert vectors.setdefault(key, vector) == vector
            assert keys.setdefault(vector, key) == key
    assert repeats > (200 if episode == "hand" else 20)  # the histories did meet


@pytest.mark.parametrize("name", list(VARIANTS))
def test_swapping_what_a_seat_cannot_see_changes_nothing_it_is_shown(name: str) -> None:
    game = game_of(name)
    env, twin = make_env(name), make_env(name)
    swaps = 0
    for deal, other, actions, observer in hidden_swaps(game, seed=3, tries=60):
        agent = env.possible_agents[observer]
        env.reset(options=deal.options())
        twin.reset(options=other.options())
        assert env.state_ref.hands != twin.state_ref.hands or env.state_ref.boneyard != twin.state_ref.boneyard
        for action in actions:
            np.testing.assert_array_equal(env.observe(agent)["observation"], twin.observe(agent)["observation"])
            env.step(action)
            twin.step(action)
        np.testing.assert_array_equal(env.observe(agent)["observation"], twin.observe(agent)["observation"])
        swaps += 1
    assert swaps >= 5


def test_histories_a_seat_tells_apart_give_different_vectors_where_the_observation_is_the_same() -> None:
    for pair in recall_pairs():
        vectors, observations = [], []
        for deal, actions in (pair.first, pair.second):
            env = draw_env.raw_env(obs_type="information_state")
            env.reset(options=deal.options())
            for action in actions:
                env.step(action)
            vectors.append(env.observe("player_0")["observation"])
            observations.append(observe_state(env.state_ref, 0))
        np.testing.assert_array_equal(observations[0], observations[1], err_msg=pair.what)
        assert not np.array_equal(vectors[0], vectors[1]), pair.what


def _longest_by_rules(game: DrawGame) -> tuple[int, DrawState | None]:
    """The longest hand of a 2-player variant, every deal and line of play walked through the
    rules (the plain twin of :func:`draw_env.exact.game_tree.longest_hand`), and one such hand."""
    best: list = [0, None]

    def walk(state: DrawState) -> None:
        if state.result is not None:
            if len(state.history) > best[0]:
                best[:] = [len(state.history), state]
            return
        for action in state.legal_actions():
            child = state.clone()
            child.apply_action(action)
            walk(child)

    for row in game_tree.deals(game):
        opener, first, second = (int(x) for x in row[:3])
        hands = [[t for t in range(game.num_tiles) if mask >> t & 1] for mask in (first, second)]
        drawable = [int(t) for t in row[3:]]
        protected = [t for t in range(game.num_tiles) if not (first | second) >> t & 1 and t not in drawable]
        walk(game.state_from_deal(hands, drawable + protected, opener))
    return best[0], best[1]


def test_the_bound_on_a_hand_is_reached_on_micro_and_its_last_row_is_written() -> None:
    game = game_of("micro")
    length, longest = _longest_by_rules(game)
    assert length == game_tree.longest_hand(game) == game.max_hand_actions == 7
    assert longest is not None
    for player in (0, 1):
        rows = _events(information_state(longest, player), game)
        assert rows[-1] and rows.shape == (7,)


def test_the_bound_holds_on_mini_and_on_the_longest_hand_found_in_the_seeds_game() -> None:
    mini = game_of("mini")
    assert game_tree.longest_hand(mini) == 11 <= mini.max_hand_actions == 12
    game = DrawGame(2)
    deal, actions = LONG_HAND
    env = draw_env.raw_env(obs_type="information_state")
    env.reset(options=deal.options())
    last = None
    for action in actions:
        last = env.agent_selection
        env.step(action)
    assert env.state_ref.result is not None and len(env.state_ref.history) == 51
    rows = _events(env.observe(last)["observation"], game)
    assert rows[50] and not rows[51:].any()
    np.testing.assert_array_equal(env.observe(last)["observation"], information_state(env.state_ref, 1))


def test_a_set_up_deal_too_short_for_the_rows_is_refused_and_changes_nothing() -> None:
    game = DrawGame(2)
    hands = [[0, 1, 2], [3, 4, 5]]
    options = {"hands": hands, "boneyard": list(range(6, 28)), "opener": 0}
    draw_env.env().reset(options=options)  # the observation has no rows to outgrow
    env = draw_env.env(obs_type="information_state")
    env.reset(seed=1)
    before = env.observe(env.agent_selection)["observation"]
    with pytest.raises(ValueError, match=r"boneyard may hold at most 14 tiles .* got 22"):
        env.reset(options=options)
    np.testing.assert_array_equal(env.observe(env.agent_selection)["observation"], before)
    uneven = {"hands": [list(range(10)), list(range(10, 14))], "boneyard": list(range(14, 28)), "opener": 1}
    env.reset(options=uneven)  # 14 tiles in hands of any sizes: within the bound's proof
    assert game.max_hand_actions == 61


def test_copies_carry_the_history() -> None:
    env = draw_env.env(num_players=3, episode="match", obs_type="information_state")
    env.reset(seed=5)
    rng = random.Random(5)
    for _ in range(20):
        observation, *_ = env.last()
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    for duplicate in (copy.deepcopy, lambda env: pickle.loads(pickle.dumps(env))):
        other = duplicate(env)
        for _ in range(15):
            observation, _, terminated, _, _ = env.last()
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            for agent in env.possible_agents:
                np.testing.assert_array_equal(other.observe(agent)["observation"], env.observe(agent)["observation"])
            env.step(action)
            other.step(action)
        env = other


def test_seats_in_the_events_are_relative_like_the_observations_seats() -> None:
    """Each action's code names its seat as the observation's seat blocks do: the observer first,
    then clockwise; the opener's first code names the seat that ``to_act`` marked before it."""
    by_seat: dict[int, set] = defaultdict(set)
    for env, _ in random_histories("seeds-4", "hand", 2, seed=6):
        state = env.state_ref
        if not state.history:
            continue
        seat = state.history[-1][0]
        for player, agent in enumerate(env.possible_agents):
            code = _events(env.observe(agent)["observation"], state.game)[len(state.history) - 1]
            by_seat[(seat - player) % 4].add((int(code) - 1) // 4)
    assert dict(by_seat) == {0: {0}, 1: {1}, 2: {2}, 3: {3}}


@pytest.mark.filterwarnings("ignore::UserWarning")  # api_test passes an unknown reset option on purpose
@pytest.mark.parametrize("name", ["micro", "seeds-4"])
def test_pettingzoo_api_test_with_information_states(name: str) -> None:
    players, max_pip, hand_size, protected = VARIANTS[name]
    api_test(draw_env.env(num_players=players, max_pip=max_pip, hand_size=hand_size, protected=protected,
                          obs_type="information_state"), num_cycles=300)
