"""Variants (other sets, hand sizes, protected tiles) in the rules and the AEC environment.

The seeds' game is the default and stays as it was (every other test checks that); here a grid
of variants is played through ``env()`` with random legal actions, and at every step the
environment is checked against the rules it is built on: the mask against ``legal_actions``,
the incremental observation against one built from scratch, the protected-tile rule, and the
scores against the pips left.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from pettingzoo.test import api_test

import draw_env
from draw_env import tiles
from draw_env.observation import BLOCKS, OBSERVATION_SIZE, layout, observe_state
from draw_env.rules import DrawGame, DrawState

#: (players, max_pip, hand_size, protected): the corners of SPEC's ranges and a few in between.
GRID = [
    (2, 2, 1, 0),
    (2, 2, 2, 2),
    (2, 3, 3, 3),
    (2, 3, 2, 1),
    (3, 3, 2, 0),
    (4, 4, 3, 1),
    (2, 5, None, 2),
    (3, 6, 5, 3),
    (4, 6, None, 0),
    (2, 7, 9, 2),
    (3, 8, 10, 2),
    (4, 9, None, 2),
    (4, 9, 12, 3),
]


@pytest.mark.parametrize("max_pip", range(2, 10))
def test_a_double_n_set_holds_its_tiles_in_canonical_order(max_pip: int) -> None:
    tile_set = tiles.tile_set(max_pip)
    assert tile_set.num_tiles == (max_pip + 1) * (max_pip + 2) // 2
    expected = [(low, high) for low in range(max_pip + 1) for high in range(low, max_pip + 1)]
    assert list(tile_set.tiles) == expected
    assert tile_set.tile_id(f"[{max_pip}|0]") == max_pip
    assert tile_set.tile_id((max_pip, max_pip)) == tile_set.num_tiles - 1
    assert tile_set.total_pips == sum(low + high for low, high in expected)
    for value in range(max_pip + 1):
        assert tile_set.holding[value].bit_count() == max_pip + 1
    mask = (1 << tile_set.num_tiles) - 1
    assert tile_set.mask_pips(mask) == tile_set.total_pips


def test_the_double_six_names_are_the_seeds_set() -> None:
    assert tiles.tile_set(6) is tiles.DOUBLE_SIX
    assert tiles.NUM_TILES == 28 and tiles.TILES[27] == (6, 6)
    with pytest.raises(ValueError, match="0..6"):
        tiles.tile_id("[7|7]")
    assert tiles.tile_set(9).tile_id("[7|7]") == tiles.tile_set(9).tiles.index((7, 7))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_pip": 1}, "max_pip"),
        ({"max_pip": 10}, "max_pip"),
        ({"max_pip": "6"}, "max_pip"),
        ({"hand_size": 0}, "hand_size"),
        ({"hand_size": 2.5}, "hand_size"),
        ({"protected": -1}, "protected"),
        ({"max_pip": 2, "hand_size": 3, "protected": 1}, "hand_size=3 to 2 players with protected=1"),
        ({"num_players": 4, "max_pip": 3}, "hand_size=6 to 4 players with protected=2"),
    ],
)
def test_a_bad_variant_is_refused_naming_the_argument(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DrawGame(**kwargs)
    env_kwargs = dict(kwargs)
    with pytest.raises(ValueError, match=message):
        draw_env.env(**env_kwargs)


def test_the_default_variant_is_the_seeds_game() -> None:
    for players, hand in ((2, 7), (3, 7), (4, 6)):
        game = DrawGame(players)
        assert game == DrawGame(players, max_pip=6, hand_size=hand, protected=2)
        assert game.is_default and game.num_actions == 58 and game.draw_action == 56
        assert game.max_hand_points == 168
    assert not DrawGame(2, hand_size=6).is_default
    assert layout(DrawGame(3)) is layout(DrawGame(2))
    assert layout(DrawGame(2)).size == OBSERVATION_SIZE == 258
    assert layout(DrawGame(2)).blocks == BLOCKS


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), GRID)
def test_spaces_follow_the_variant(players: int, max_pip: int, hand_size: int | None, protected: int) -> None:
    env = draw_env.env(num_players=players, max_pip=max_pip, hand_size=hand_size, protected=protected)
    num_tiles = (max_pip + 1) * (max_pip + 2) // 2
    observed = layout(env.unwrapped.game)
    assert env.action_space("player_0").n == 2 * num_tiles + 2
    space = env.observation_space("player_0")
    assert space["observation"].shape == (observed.size,)
    assert space["action_mask"].shape == (2 * num_tiles + 2,)
    # The contract's first blocks: hand (T), line (T), the two ends one-hot over 0..N.
    assert [(b.name, b.size) for b in observed.blocks[:4]] == [
        ("hand", num_tiles),
        ("line", num_tiles),
        ("left_end", max_pip + 1),
        ("right_end", max_pip + 1),
    ]


def _play_and_check(players: int, max_pip: int, hand_size: int | None, protected: int, seed: int) -> None:
    env = draw_env.env(num_players=players, max_pip=max_pip, hand_size=hand_size, protected=protected)
    env.reset(seed=seed)
    base = env.unwrapped
    game = base.game
    rng = random.Random(seed)
    observed = layout(game)
    dealt = game.hand_size
    state = base.state_ref
    assert all(state.hand_count(seat) == dealt for seat in range(players))
    assert len(state.boneyard) == game.num_tiles - players * dealt
    finals = {}
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            finals[agent] = reward
            env.step(None)
            continue
        state = base.state_ref
        legal = state.legal_actions()
        assert np.flatnonzero(observation["action_mask"]).tolist() == legal
        assert (game.draw_action in legal) == (len(state.boneyard) > protected)
        if game.pass_action in legal:
            assert len(state.boneyard) == protected and legal == [game.pass_action]
        assert len(state.boneyard) >= protected
        for other in range(players):
            assert np.array_equal(base.observe(f"player_{other}")["observation"], observe_state(state, other))
        vector = observation["observation"]
        assert vector.shape == (observed.size,) and np.all(vector <= observed.high)
        env.step(rng.choice(legal))
    state = base.state_ref
    result = state.result
    assert result is not None
    assert result.pips == tuple(state.hand_pips(s) for s in range(players))
    if result.kind == "domino":
        assert state.hand_count(result.winner) == 0
        assert result.points[result.winner] == sum(result.pips)
    else:
        assert len(state.boneyard) == protected
    assert sorted(finals) == env.possible_agents
    assert abs(sum(finals.values())) < 1e-9


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), GRID)
def test_random_hands_follow_the_rules_at_every_step(
    players: int, max_pip: int, hand_size: int | None, protected: int
) -> None:
    for seed in range(3):
        _play_and_check(players, max_pip, hand_size, protected, seed)


def test_the_protected_tiles_decide_drawing_and_passing() -> None:
    tile_set = tiles.tile_set(2)
    hands = [["[0|0]", "[2|2]"], ["[1|1]", "[1|2]"]]
    boneyard = ["[0|1]", "[0|2]"]
    # Nothing protected: seat 1, stuck, draws the whole boneyard and then places a drawn tile.
    game = DrawGame(2, max_pip=2, hand_size=2, protected=0)
    state = DrawState(game, hands, boneyard, opener=0)
    state.apply_action(0)  # [0|0] opens
    assert state.legal_actions() == [game.draw_action]
    state.apply_action(game.draw_action)  # [0|1] fits, and drawing on stays allowed
    assert state.legal_actions() == [2, 3, game.draw_action]
    state.apply_action(game.draw_action)
    assert not state.boneyard and state.current == 1
    assert state.legal_actions() == [2 * tile_set.tile_id(name) + end for name in ("[0|1]", "[0|2]") for end in (0, 1)]
    # Two protected: the same seat may not draw and must pass.
    game = DrawGame(2, max_pip=2, hand_size=2, protected=2)
    state = DrawState(game, hands, boneyard, opener=0)
    state.apply_action(0)
    assert state.legal_actions() == [game.pass_action]


def test_a_fixed_deal_takes_the_variants_tiles() -> None:
    env = draw_env.raw_env(max_pip=9, hand_size=2, protected=0)
    names = tiles.tile_set(9).names
    hands = [["[9|9]", "[8|9]"], ["[0|0]", (7, 9)]]
    held = {"[9|9]", "[8|9]", "[0|0]", "[7|9]"}
    env.reset(options={"hands": hands, "boneyard": [n for n in names if n not in held], "opener": 0})
    assert env.state_ref.hand_tiles(0) == [53, 54]
    with pytest.raises(ValueError, match="all 55 tiles"):
        env.reset(options={"hands": hands, "boneyard": ["[0|1]"], "opener": 0})


@pytest.mark.filterwarnings("ignore::UserWarning")  # api_test passes an unknown reset option on purpose
@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), [(2, 2, 1, 0), (3, 4, 3, 2), (4, 9, None, 2)])
def test_pettingzoo_api_test_on_variants(players: int, max_pip: int, hand_size: int | None, protected: int) -> None:
    api_test(draw_env.env(num_players=players, max_pip=max_pip, hand_size=hand_size, protected=protected), num_cycles=300)


def test_an_illegal_move_costs_the_variants_worst_hand() -> None:
    env = draw_env.env(max_pip=2, hand_size=2, protected=0)
    env.reset(seed=0)
    env.step(env.unwrapped.game.pass_action)  # never legal on an empty line
    offender = env.agent_selection
    assert all(env.terminations.values())
    assert env.rewards[offender] == -12.0  # every pip of double-two
    assert sum(env.rewards.values()) == -12.0


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), GRID)
def test_the_baselines_play_every_variant(players: int, max_pip: int, hand_size: int | None, protected: int) -> None:
    import agents
    from agents.base import tile_set_of

    env = draw_env.env(num_players=players, max_pip=max_pip, hand_size=hand_size, protected=protected)
    names = ["random", "random_forced", "heaviest", "variety"]
    table = [agents.make(names[seat % len(names)], seed=seat) for seat in range(players)]
    env.reset(seed=max_pip)
    pips = tiles.tile_set(max_pip).pips
    for agent in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        assert tile_set_of(observation).max_pip == max_pip
        player = table[int(agent.split("_")[1])]
        action = player.act(observation)
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        assert action in legal
        placements = [a for a in legal if a < 2 * len(pips)]
        if player.name in ("random_forced", "heaviest", "variety"):
            assert (action < 2 * len(pips)) == bool(placements)  # draws only when it must
        if player.name == "heaviest" and placements:
            assert pips[action >> 1] == max(pips[a >> 1] for a in placements)
        env.step(action)
    assert env.unwrapped.state_ref.result is not None


def test_an_action_mask_of_no_sets_length_is_refused() -> None:
    from agents.base import legal_actions

    with pytest.raises(ValueError, match="2T \\+ 2"):
        legal_actions({"observation": np.zeros(10, np.float32), "action_mask": np.ones(57, np.int8)})


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), GRID)
@pytest.mark.parametrize("match", [False, True])
def test_the_declared_blocks_write_the_observation_from_the_facts(
    players: int, max_pip: int, hand_size: int | None, protected: int, match: bool
) -> None:
    """The generic writer (the blocks' facts and reads) gives every observation the environment
    gives: what another engine derives from the declaration is the contract."""
    from draw_env.observation import facts_of_state, observe_facts

    game = DrawGame(players, max_pip, hand_size, protected)
    observed = layout(game)
    rng = random.Random(players * 100 + max_pip)
    state = game.new_state(rng)
    while True:
        for player in range(players):
            expected = observe_state(state, player, match)
            assert np.array_equal(observe_facts(observed, facts_of_state(state, player, match)), expected)
        if state.result is not None:
            break
        state.apply_action(rng.choice(state.legal_actions()))


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), GRID)
@pytest.mark.parametrize("match", [False, True])
def test_the_inverse_reader_recovers_exactly_the_facts_the_observation_holds(
    players: int, max_pip: int, hand_size: int | None, protected: int, match: bool
) -> None:
    """``facts_of_observation`` (what the search rebuilds its information set from) gives back
    every fact of the player's view but the other seats' hands, which the observation hides."""
    from draw_env.observation import facts_of_observation, facts_of_state

    game = DrawGame(players, max_pip, hand_size, protected)
    observed = layout(game)
    fact_offsets, _, _, _ = observed.fact_table()
    hidden = slice(fact_offsets["hand"] + 1, fact_offsets["hand"] + 4)  # relative seats 1 to 3
    rng = random.Random(players * 1000 + max_pip * 10 + protected)
    state = game.new_state(rng)
    while True:
        for player in range(players):
            held = facts_of_state(state, player, match)
            assert held[hidden].any() or state.result is not None  # something is hidden while it lasts
            held[hidden] = 0
            assert np.array_equal(facts_of_observation(observed, observe_state(state, player, match)), held)
        if state.result is not None:
            break
        state.apply_action(rng.choice(state.legal_actions()))


def test_the_inverse_reader_refuses_an_observation_of_another_layout() -> None:
    from draw_env.observation import facts_of_observation

    with pytest.raises(ValueError, match=r"shape \(258,\)"):
        facts_of_observation(layout(DrawGame(2)), np.zeros(100, np.float32))
