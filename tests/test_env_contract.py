"""The environment's public contract on positions set up through ``reset(options=...)``:
observations, action masks, reset options, infos, rewards and matches.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import draw_env
from draw_env import GuardedEnv, tiles
from draw_env.observation import BLOCKS, DEFAULT_LAYOUT, OFFSETS, split
from draw_env.rules import DRAW, LEFT, RIGHT, place_action
from draw_env.tiles import tile_id
from tests.positions import blocked_deal, complete_deal, ids

INFO_KEYS = {"hand_points", "hand_pips", "score", "blocked"}


def place(tile: str, end: int) -> int:
    """The action placing ``tile`` (written ``"[a|b]"``) at ``end``."""
    return place_action(tile_id(tile), end)


def make(players: int = 3, episode: str = "hand", reward: str = "zero_sum", **options: object) -> GuardedEnv:
    """A wrapped environment reset with ``options`` (a fixed deal when given)."""
    env = draw_env.env(num_players=players, episode=episode, reward=reward)
    env.reset(seed=0, options=options or None)
    return env


def step_all(env: GuardedEnv, actions: list[int]) -> None:
    for action in actions:
        env.step(action)


def infos_by_key(env: GuardedEnv) -> dict[str, tuple[int, ...]]:
    """The infos as one tuple per key, in seat order."""
    return {key: tuple(env.infos[agent][key] for agent in env.possible_agents) for key in sorted(INFO_KEYS)}


def rewards_of(env: GuardedEnv) -> tuple[float, ...]:
    return tuple(env.rewards[agent] for agent in env.possible_agents)


# Seat 0 holds only [6|6] and goes out at once; seat 1 holds only [0|0], seat 2 holds [2|6].
QUICK_HANDS, QUICK_BONEYARD = complete_deal([["[6|6]"], ["[0|0]"], ["[2|6]"]], boneyard=None)
QUICK = {"hands": QUICK_HANDS, "boneyard": QUICK_BONEYARD, "opener": 0}
# Seats 0, 1, 2 place [3|3], [3|4], [4|5]; seat 2 goes out and scores 11 + 2 = 13.
THREE_TURNS_HANDS, THREE_TURNS_BONEYARD = complete_deal(
    [["[3|3]", "[5|6]"], ["[3|4]", "[1|1]"], ["[4|5]"]], boneyard=None
)
THREE_TURNS = {"hands": THREE_TURNS_HANDS, "boneyard": THREE_TURNS_BONEYARD, "opener": 0}
THREE_TURNS_ACTIONS = [place("[3|3]", LEFT), place("[3|4]", RIGHT), place("[4|5]", RIGHT)]


# ---------------------------------------------------------------------- observations and masks


def test_the_first_70_entries_are_own_hand_line_and_open_ends() -> None:
    env = make(**THREE_TURNS)
    first = env.observe("player_0")["observation"]
    assert np.array_equal(np.flatnonzero(first[:28]), sorted(THREE_TURNS_HANDS[0]))
    assert not first[28:70].any()  # empty line, no open ends
    env.step(place("[3|3]", LEFT))
    env.step(place("[3|4]", RIGHT))
    for agent, seat in [("player_0", 0), ("player_1", 1), ("player_2", 2)]:
        observation = env.observe(agent)["observation"]
        held = sorted(set(THREE_TURNS_HANDS[seat]) - set(ids(["[3|3]", "[3|4]"])))
        assert np.array_equal(np.flatnonzero(observation[:28]), held)
        assert np.array_equal(np.flatnonzero(observation[28:56]), ids(["[3|3]", "[3|4]"]))
        assert np.array_equal(observation[56:63], np.eye(7)[3])  # left end shows 3
        assert np.array_equal(observation[63:70], np.eye(7)[4])  # right end shows 4


def test_seats_in_the_observation_are_relative_observer_first_then_clockwise() -> None:
    hands, boneyard = complete_deal(
        [list(range(5)), list(range(5, 8)), list(range(8, 14)), None], boneyard=list(range(14, 18))
    )
    env = make(players=4, hands=hands, boneyard=boneyard, opener=1)
    sizes = [len(hand) for hand in hands]  # 5, 3, 6, 10
    for seat, agent in enumerate(env.possible_agents):
        blocks = split(env.observe(agent)["observation"])
        assert list(blocks["hand_sizes"]) == [sizes[(seat + k) % 4] for k in range(4)]
        assert list(blocks["to_act"]) == [1.0 if (seat + k) % 4 == 1 else 0.0 for k in range(4)]
    assert env.agent_selection == "player_1"
    in_play = env.observe("player_0")["observation"][OFFSETS["in_play"] : OFFSETS["in_play"] + 4]
    assert in_play.sum() == 4


def test_only_the_acting_agent_has_a_mask_and_it_lists_the_legal_actions(num_players: int) -> None:
    env = draw_env.env(num_players=num_players)
    env.reset(seed=21)
    state = env.unwrapped.state_ref
    for _ in range(8):
        for agent in env.agents:
            mask = env.observe(agent)["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (58,)
            if agent == env.agent_selection:
                assert list(np.flatnonzero(mask)) == state.legal_actions()
            else:
                assert not mask.any()
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))


def test_a_drawn_tile_is_seen_only_by_the_drawer() -> None:
    env = make(**THREE_TURNS)
    env.step(place("[3|3]", LEFT))  # seat 1 to act, the boneyard holds 21 tiles
    before = {agent: split(env.observe(agent)["observation"]) for agent in env.agents}
    drawn = env.unwrapped.state_ref.boneyard[0]
    env.step(DRAW)
    for agent in env.agents:
        after = split(env.observe(agent)["observation"])
        changed = {name for name in after if not np.array_equal(after[name], before[agent][name])}
        if agent == "player_1":
            assert changed == {"hand", "hand_sizes", "boneyard_size"}
            assert after["hand"][drawn] == 1
        else:
            assert changed == {"hand_sizes", "boneyard_size"}  # a count, never the tile


# ---------------------------------------------------------------------- reset options


def test_reset_with_a_seed_deals_the_same_game_again(num_players: int) -> None:
    first, second = draw_env.env(num_players=num_players), draw_env.env(num_players=num_players)
    first.reset(seed=123)
    second.reset(seed=123)
    assert repr(first.unwrapped.state_ref) == repr(second.unwrapped.state_ref)
    assert first.agent_selection == f"player_{first.unwrapped.state_ref.opener}"
    second.reset(seed=124)
    assert repr(first.unwrapped.state_ref) != repr(second.unwrapped.state_ref)


@pytest.mark.parametrize(
    "spell",
    [
        lambda t: t,
        lambda t: tiles.TILES[t],
        lambda t: tiles.TILES[t][::-1],
        lambda t: list(tiles.TILES[t]),
        lambda t: tuple(np.int64(half) for half in tiles.TILES[t]),
        lambda t: tiles.NAMES[t],
        lambda t: "[{1}|{0}]".format(*tiles.TILES[t]),
        np.int64,
    ],
    ids=["id", "pair", "reversed-pair", "list-pair", "numpy-pair", "string", "reversed-string", "numpy-int"],
)
def test_a_tile_may_be_given_as_an_id_a_pair_or_a_string(spell: Callable[[int], object]) -> None:
    env = make(
        hands=[[spell(t) for t in hand] for hand in THREE_TURNS_HANDS],
        boneyard=[spell(t) for t in THREE_TURNS_BONEYARD],
        opener=0,
    )
    state = env.unwrapped.state_ref
    assert [state.hand_tiles(seat) for seat in range(3)] == [sorted(hand) for hand in THREE_TURNS_HANDS]
    assert state.boneyard == THREE_TURNS_BONEYARD


def test_the_boneyard_is_drawn_from_its_first_entry() -> None:
    boneyard = ids(["[5|5]", "[0|0]", "[1|1]", "[2|2]"])
    hands, rest = complete_deal([None, ["[4|6]"]], boneyard=boneyard)
    env = make(players=2, hands=hands, boneyard=rest, opener=1)
    env.step(DRAW)
    env.step(DRAW)
    held = np.flatnonzero(env.observe("player_1")["observation"][:28])
    assert list(held) == ids(["[0|0]", "[4|6]", "[5|5]"])
    assert env.unwrapped.state_ref.boneyard == ids(["[1|1]", "[2|2]"])


def test_hand_sizes_may_differ_from_a_normal_deal() -> None:
    hands, boneyard = complete_deal([["[1|2]"], None], boneyard=["[0|0]", "[6|6]"])
    env = make(players=2, hands=hands, boneyard=boneyard, opener=0)
    assert [env.unwrapped.state_ref.hand_count(seat) for seat in range(2)] == [1, 25]
    assert split(env.observe("player_1")["observation"])["hand_sizes"][:2].tolist() == [25, 1]


def test_the_opener_option_picks_the_seat_that_leads(num_players: int) -> None:
    for opener in range(num_players):
        env = make(players=num_players, opener=opener)
        assert env.agent_selection == f"player_{opener}"


def test_a_fixed_deal_without_an_opener_draws_the_opener_from_the_seeded_rng() -> None:
    openers = set()
    for seed in range(30):
        env = draw_env.env(num_players=3)
        env.reset(seed=seed, options={"hands": THREE_TURNS_HANDS, "boneyard": THREE_TURNS_BONEYARD})
        again = draw_env.env(num_players=3)
        again.reset(seed=seed, options={"hands": THREE_TURNS_HANDS, "boneyard": THREE_TURNS_BONEYARD})
        assert env.agent_selection == again.agent_selection
        openers.add(env.agent_selection)
    assert openers == {"player_0", "player_1", "player_2"}


def test_starting_scores_show_in_infos_and_observations() -> None:
    env = make(episode="match", scores=[10, 20, 30])
    assert infos_by_key(env)["score"] == (10, 20, 30)
    blocks = split(env.observe("player_1")["observation"])
    assert list(blocks["scores"][:3]) == [20, 30, 10]  # relative seats
    assert blocks["target"][0] == 61


# ---------------------------------------------------------------------- infos and rewards


def test_infos_hold_the_same_numeric_keys_at_every_step(num_players: int) -> None:
    for episode in ("hand", "match"):
        env = draw_env.env(num_players=num_players, episode=episode)
        env.reset(seed=5)
        for agent in env.agent_iter(2000):
            for info in env.infos.values():
                assert set(info) == INFO_KEYS
                assert all(type(value) is int for value in info.values())
            _obs, _reward, terminated, truncated, _info = env.last()
            mask = env.observe(agent)["action_mask"]
            env.step(None if terminated or truncated else int(np.flatnonzero(mask)[-1]))


@pytest.mark.parametrize(
    ("reward", "expected"),
    [("zero_sum", (8.0, -4.0, -4.0)), ("points", (8.0, 0.0, 0.0))],
)
def test_going_out_hand_infos_and_rewards(reward: str, expected: tuple) -> None:
    env = make(reward=reward, **QUICK)
    env.step(place("[6|6]", LEFT))
    assert infos_by_key(env) == {
        "blocked": (0, 0, 0),
        "hand_pips": (0, 0, 8),  # [0|0] counts 0, [2|6] counts 8
        "hand_points": (8, 0, 0),
        "score": (8, 0, 0),
    }
    assert rewards_of(env) == expected
    assert all(env.terminations.values()) and not any(env.truncations.values())
    for agent in env.agent_iter():
        _obs, reward_seen, terminated, _truncated, info = env.last()
        assert terminated and reward_seen == expected[int(agent[-1])]
        assert info == env.infos[agent]
        env.step(None)
    assert env.agents == []


@pytest.mark.parametrize(
    ("leftover", "boneyard", "end_value", "points", "zero_sum"),
    [
        ([["[1|2]"], ["[2|6]"], ["[4|6]"]], ["[1|4]", "[6|6]"], 0, (15, 0, 0), (15.0, -7.5, -7.5)),
        ([["[1|2]"], ["[0|3]"], ["[5|5]"]], ["[0|1]", "[2|3]"], 6, (0, 0, 0), (0.0, 0.0, 0.0)),
    ],
    ids=["3-8-10", "3-3-10"],
)
def test_blocked_hand_infos_and_rewards(
    leftover: list[list[str]], boneyard: list[str], end_value: int, points: tuple, zero_sum: tuple
) -> None:
    deal = blocked_deal(leftover, boneyard, end_value)
    env = make(**deal.options())
    step_all(env, deal.placements + [57, 57])
    assert infos_by_key(env)["blocked"] == (0, 0, 0)
    env.step(57)
    assert infos_by_key(env) == {
        "blocked": (1, 1, 1),
        "hand_pips": tuple(sum(tiles.PIPS[t] for t in ids(hand)) for hand in leftover),
        "hand_points": points,
        "score": points,
    }
    assert rewards_of(env) == zero_sum


def test_rewards_are_zero_until_the_hand_ends() -> None:
    env = make(reward="points", **THREE_TURNS)
    for action in THREE_TURNS_ACTIONS[:-1]:
        env.step(action)
        assert rewards_of(env) == (0.0, 0.0, 0.0)
        assert infos_by_key(env)["hand_points"] == (0, 0, 0)
    env.step(THREE_TURNS_ACTIONS[-1])
    assert rewards_of(env) == (0.0, 0.0, 13.0)


# ---------------------------------------------------------------------- matches


def test_in_a_match_the_step_that_ends_a_hand_deals_the_next_and_its_infos_describe_the_ended_hand() -> None:
    env = make(episode="match", scores=[10, 20, 30], **THREE_TURNS)
    step_all(env, THREE_TURNS_ACTIONS)
    assert infos_by_key(env) == {
        "blocked": (0, 0, 0),
        "hand_pips": (11, 2, 0),  # what each seat was left holding, not its new hand
        "hand_points": (0, 0, 13),
        "score": (10, 20, 43),
    }
    assert rewards_of(env) == (-6.5, -6.5, 13.0)
    assert not any(env.terminations.values())
    state = env.unwrapped.state_ref
    assert state.hand_number == 1 and state.opener == 1  # one seat on from the last opener, not the winner
    assert env.agent_selection == "player_1"
    assert [state.hand_count(seat) for seat in range(3)] == [7, 7, 7]
    observation = split(env.observe("player_1")["observation"])
    assert not observation["line"].any()
    assert list(observation["scores"][:3]) == [20, 43, 10]
    # The reward reaches each agent through last(); the next step starts clean.
    assert env.last()[1] == -6.5
    env.step(int(np.flatnonzero(env.observe("player_1")["action_mask"])[0]))
    assert infos_by_key(env)["hand_points"] == (0, 0, 0)
    assert infos_by_key(env)["hand_pips"] == tuple(state.hand_pips(seat) for seat in range(3))
    assert rewards_of(env) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("players", "scores", "win_loss"),
    [(3, [55, 20, 30], (1.0, -0.5, -0.5)), (3, [10, 20, 30], (0.0, 0.0, 0.0))],
    ids=["reaches-61", "below-61"],
)
def test_win_loss_rewards_the_match_winner(players: int, scores: list[int], win_loss: tuple) -> None:
    env = make(players=players, episode="match", reward="win_loss", scores=scores, **QUICK)
    env.step(place("[6|6]", LEFT))
    over = win_loss != (0.0, 0.0, 0.0)
    assert rewards_of(env) == win_loss
    assert infos_by_key(env)["score"] == (scores[0] + 8, *scores[1:])
    assert all(env.terminations.values()) is over


def test_win_loss_with_two_players_gives_plus_one_and_minus_one() -> None:
    hands, boneyard = complete_deal([["[6|6]"], ["[2|6]"]], boneyard=None)
    deal = {"hands": hands, "boneyard": boneyard, "opener": 0}
    env = make(players=2, episode="match", reward="win_loss", scores=[95, 40], **deal)
    env.step(place("[6|6]", LEFT))
    assert rewards_of(env) == (1.0, -1.0)
    assert infos_by_key(env)["score"] == (103, 40)  # the excess is kept
    assert all(env.terminations.values())


def test_a_match_drawn_at_the_target_gives_everyone_zero() -> None:
    # Legal starting scores are below the target and only one seat scores per hand, so a tie at
    # the target is set up by raising a score in the live state (a test-only move).
    hands, boneyard = complete_deal([["[5|6]"], ["[3|3]"], ["[1|5]"]], boneyard=None)
    env = make(
        episode="match", reward="win_loss", scores=[0, 53, 0], hands=hands, boneyard=boneyard, opener=1
    )
    env.unwrapped.state_ref.scores[0] = 70
    env.step(place("[3|3]", LEFT))
    assert infos_by_key(env)["score"] == (70, 70, 0)
    assert rewards_of(env) == (0.0, 0.0, 0.0)
    assert all(env.terminations.values())


def test_a_match_runs_until_someone_reaches_the_target(num_players: int) -> None:
    env = draw_env.env(num_players=num_players, episode="match", reward="win_loss")
    env.reset(seed=8)
    points_scored = 0
    final_rewards: tuple[float, ...] = ()
    for agent in env.agent_iter(100_000):
        _obs, _reward, terminated, _truncated, _info = env.last()
        if terminated:
            env.step(None)
            continue
        env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
        # hand_points are non-zero only at the step that ends a hand
        points_scored += sum(info["hand_points"] for info in env.infos.values())
        final_rewards = rewards_of(env)
    state = env.unwrapped.state_ref
    assert max(state.scores) >= (100 if num_players == 2 else 61)
    assert points_scored == sum(state.scores)
    winner = state.match_winner
    loss = -1 / (num_players - 1)
    assert final_rewards == tuple(1.0 if seat == winner else loss for seat in range(num_players))


def test_the_state_table_is_the_blocks_in_absolute_seats_with_every_hand() -> None:
    """``state()`` (for centralised critics): BLOCKS in order, per-seat blocks as rows by absolute
    seat, every seat's hand, then the always-zero cell."""
    assert list(DEFAULT_LAYOUT.table_shapes) == [block.name for block in BLOCKS] + ["zero"]
    env = make(players=3, hands=THREE_TURNS_HANDS, boneyard=THREE_TURNS_BONEYARD, opener=0)
    env.step(env.unwrapped.state_ref.legal_actions()[0])
    table = env.state()
    assert table.shape == (DEFAULT_LAYOUT.table_size,) and table[DEFAULT_LAYOUT.table_offsets["zero"]] == 0
    views = {
        name: table[DEFAULT_LAYOUT.table_offsets[name] :][: int(np.prod(shape))].reshape(shape)
        for name, shape in DEFAULT_LAYOUT.table_shapes.items()
    }
    state = env.unwrapped.state_ref
    for seat in range(3):
        assert np.flatnonzero(views["hand"][seat]).tolist() == state.hand_tiles(seat)
        assert views["hand_sizes"][seat] == state.hand_count(seat)
    assert np.flatnonzero(views["to_act"]).tolist() == [state.current]
    observer = env.agent_selection
    observed = split(env.observe(observer)["observation"])
    seat = int(observer.split("_")[1])
    assert np.array_equal(observed["hand"], views["hand"][seat])
    assert np.array_equal(observed["line"], views["line"])
