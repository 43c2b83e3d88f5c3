"""Properties that hold in every game, checked by Hypothesis over random deals and random play.

Random play draws from the legal actions; ``draw_bias`` makes players draw more often than
uniform play would, so the protected boneyard, passes and blocks come up often.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import draw_env
from draw_env import tiles
from draw_env.observation import observe_state
from draw_env.rules import DRAW, NUM_ACTIONS, PASS, DrawGame, DrawState

players_st = st.sampled_from([2, 3, 4])
seeds_st = st.integers(0, 2**32 - 1)
draw_bias_st = st.sampled_from([0.0, 0.5, 0.95])

#: No hand lasts longer: every tile but the protected two placed, every drawable tile drawn,
#: and at most one pass per player between placements.
MAX_ACTIONS_PER_HAND = 26 + 12 + 4 * 27


def choose(legal: list[int], rng: random.Random, draw_bias: float) -> int:
    return DRAW if DRAW in legal and rng.random() < draw_bias else rng.choice(legal)


def check_tiles_in_one_place(state: DrawState) -> None:
    places = [*state.hands, state.line_mask, tiles.mask_of(state.boneyard)]
    assert sum(bin(mask).count("1") for mask in places) == 28
    combined = 0
    for mask in places:
        assert combined & mask == 0
        combined |= mask
    assert combined == tiles.ALL_TILES_MASK
    assert len(set(state.boneyard)) == len(state.boneyard)
    assert state.line_mask == tiles.mask_of(tile for tile, _seat, _end in state.line)


@settings(deadline=None, max_examples=100)
@given(players=players_st, deal_seed=seeds_st, play_seed=seeds_st, draw_bias=draw_bias_st)
def test_a_random_match_keeps_every_rule_invariant(
    players: int, deal_seed: int, play_seed: int, draw_bias: float
) -> None:
    game = DrawGame(players)
    deal_rng, rng = random.Random(deal_seed), random.Random(play_seed)
    state = game.new_state(deal_rng)
    scores = list(state.scores)
    while True:
        actions = 0
        while not state.is_hand_over:
            check_tiles_in_one_place(state)
            assert len(state.boneyard) >= 2
            legal = state.legal_actions()
            assert legal, "the player to act always has a legal action"
            assert [a for a in range(NUM_ACTIONS) if state.is_legal(a)] == legal
            assert (DRAW in legal) == (len(state.boneyard) >= 3)
            assert (PASS in legal) == (legal == [PASS])
            state.apply_action(choose(legal, rng, draw_bias))
            actions += 1
            assert actions <= MAX_ACTIONS_PER_HAND
        check_tiles_in_one_place(state)
        result = state.result
        assert result.pips == tuple(state.hand_pips(seat) for seat in range(players))
        if result.kind == "domino":
            assert result.pips[result.winner] == 0
            assert result.points[result.winner] == sum(result.pips)
        else:
            assert len(state.boneyard) == 2
        assert sum(points > 0 for points in result.points) <= 1
        assert all(new >= old for new, old in zip(state.scores, scores, strict=True))  # scores only grow
        assert [new - old for new, old in zip(state.scores, scores, strict=True)] == list(result.points)
        scores = list(state.scores)
        if state.is_match_over:
            break
        state.next_hand(deal_rng)


def hidden_swap(state: DrawState, player: int, rng: random.Random) -> DrawState:
    """A copy of ``state`` that ``player`` cannot tell apart: hidden tiles trade places.

    Tiles move between the opponents' hands and the boneyard; hand sizes stay, and no opponent
    receives a tile with a value it showed it lacks. The boneyard is reshuffled too.
    """
    copy = state.clone()
    opponents = [seat for seat in range(state.num_players) if seat != player]

    def where(tile: int) -> int:
        """The seat holding ``tile``, or -1 for the boneyard."""
        return next((seat for seat in opponents if copy.hands[seat] >> tile & 1), -1)

    def may_hold(seat: int, tile: int) -> bool:
        lacking = copy.voids[seat] if seat >= 0 else 0
        return not (lacking >> tiles.LOW[tile] & 1 or lacking >> tiles.HIGH[tile] & 1)

    hidden = [t for t in range(28) if not (copy.hands[player] | copy.line_mask) >> t & 1]
    for _ in range(30):
        first, second = rng.sample(hidden, 2)
        first_place, second_place = where(first), where(second)
        allowed = may_hold(first_place, second) and may_hold(second_place, first)
        if first_place == second_place or not allowed:
            continue
        for tile, old, new in ((first, first_place, second_place), (second, second_place, first_place)):
            if old >= 0:
                copy.hands[old] &= ~(1 << tile)
            else:
                copy.boneyard.remove(tile)
            if new >= 0:
                copy.hands[new] |= 1 << tile
            else:
                copy.boneyard.append(tile)
    rng.shuffle(copy.boneyard)
    return copy


def random_position(players: int, deal_seed: int, play_seed: int, draw_bias: float, length: int) -> DrawState:
    """A position reached by up to ``length`` random actions (fewer if the hand ends first)."""
    state = DrawGame(players).new_state(random.Random(deal_seed))
    rng = random.Random(play_seed)
    for _ in range(length):
        legal = state.legal_actions()
        probe = state.clone()
        probe.apply_action(choose(legal, rng, draw_bias))
        if probe.is_hand_over:
            break
        state = probe
    return state


@settings(deadline=None, max_examples=200)
@given(
    players=players_st,
    deal_seed=seeds_st,
    play_seed=seeds_st,
    draw_bias=draw_bias_st,
    length=st.integers(0, 60),
    observer=st.integers(0, 3),
    swap_seed=seeds_st,
)
def test_an_observation_does_not_change_when_tiles_the_observer_cannot_see_are_swapped(
    players: int, deal_seed: int, play_seed: int, draw_bias: float, length: int, observer: int, swap_seed: int
) -> None:
    state = random_position(players, deal_seed, play_seed, draw_bias, length)
    player = observer % players
    swapped = hidden_swap(state, player, random.Random(swap_seed))
    check_tiles_in_one_place(swapped)
    for match in (False, True):
        assert np.array_equal(observe_state(swapped, player, match), observe_state(state, player, match))
    # The search agents' determinization is such a swap too.
    sampled = state.view(player).sample_state(random.Random(swap_seed))
    check_tiles_in_one_place(sampled)
    assert np.array_equal(observe_state(sampled, player), observe_state(state, player))


def test_the_swap_really_moves_hidden_tiles() -> None:
    state = DrawGame(3).new_state(random.Random(0))
    swapped = hidden_swap(state, 0, random.Random(0))
    assert swapped.hands[0] == state.hands[0]
    assert swapped.hands[1:] != state.hands[1:] and sorted(swapped.boneyard) != sorted(state.boneyard)


@settings(deadline=None, max_examples=40)
@given(
    players=players_st,
    episode=st.sampled_from(["hand", "match"]),
    reward=st.sampled_from(["zero_sum", "points"]),
    seed=seeds_st,
    play_seed=seeds_st,
    draw_bias=draw_bias_st,
)
def test_random_play_through_the_env_keeps_the_contract(
    players: int, episode: str, reward: str, seed: int, play_seed: int, draw_bias: float
) -> None:
    env = draw_env.env(num_players=players, episode=episode, reward=reward)
    env.reset(seed=seed)
    rng = random.Random(play_seed)
    base = env.unwrapped
    match = episode == "match"
    for agent in env.agent_iter(5000):
        _obs, _reward, terminated, _truncated, _info = env.last()
        if terminated:
            env.step(None)
            continue
        state = base.state_ref
        for seat, other in enumerate(env.agents):
            observation = env.observe(other)
            # The incremental table agrees with an observation built from scratch.
            assert np.array_equal(observation["observation"], observe_state(state, seat, match))
            mask = observation["action_mask"]
            if other == agent:
                assert mask.any()
                assert list(np.flatnonzero(mask)) == state.legal_actions()
            else:
                assert not mask.any()
        hand_before = state.hand_number
        env.step(choose(state.legal_actions(), rng, draw_bias))
        infos = [env.infos[other] for other in env.possible_agents]
        rewards = [env.rewards.get(other, 0.0) for other in env.possible_agents]
        hand_ended = all(env.terminations.values()) or base.state_ref.hand_number != hand_before
        if hand_ended and reward == "points":
            assert rewards == [float(info["hand_points"]) for info in infos]
        elif hand_ended:
            assert abs(sum(rewards)) < 1e-9  # zero_sum
        else:
            assert rewards == [0.0] * players
            assert all(info["hand_points"] == 0 and info["blocked"] == 0 for info in infos)
    assert env.agents == []


@settings(deadline=None, max_examples=25)
@given(players=players_st, episode=st.sampled_from(["hand", "match"]), seed=seeds_st, play_seed=seeds_st)
def test_the_same_seed_and_actions_replay_the_same_game(
    players: int, episode: str, seed: int, play_seed: int
) -> None:
    def replay() -> list:
        env = draw_env.env(num_players=players, episode=episode)
        env.reset(seed=seed)
        rng = random.Random(play_seed)
        trace = []
        for agent in env.agent_iter(5000):
            observation, reward, terminated, truncated, info = env.last()
            vector, mask = observation["observation"].tobytes(), observation["action_mask"].tobytes()
            trace.append((agent, vector, mask, reward, dict(info)))
            legal = np.flatnonzero(observation["action_mask"])
            env.step(None if terminated or truncated else int(rng.choice(list(legal))))
        return trace

    assert replay() == replay()
