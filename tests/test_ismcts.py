"""The ISMCTS agent: legality, budgets, seeding, hidden information and a found win."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

import agents
from agents.base import num_players, observe
from agents.ismcts import MAX_SIMULATIONS, ISMCTSAgent
from draw_env.observation import view_from_observation
from draw_env.rules import DrawGame, DrawState, PlayerView
from tests.positions import random_positions


def position(hands: list[list[str]], boneyard: list[str], opener: int, history: list[int]) -> DrawState:
    """The 2-player state reached from a fixed deal by the actions ``history``."""
    state = DrawGame(2).state_from_deal(hands, boneyard, opener=opener)
    for action in history:
        state.apply_action(action)
    return state


def strand_position() -> DrawState:
    """Seat 1 holds [2|2] [2|4] on open ends (2, 4); the boneyard is down to 2 tiles.

    Seat 0 has passed with 2, 3 and 4 open, so it can answer neither end. [2|2] on the left
    (action 26) or [2|4] on the right (31) leaves an end that seat 1's last tile fits: a sure
    domino next turn. [2|4] on the left (30), heaviest's pick by the lowest-id tie-break, opens
    4 and 4 and strands [2|2]: the hand blocks, and seat 1 scores at most the opponent's pips
    less 4.
    """
    return position(
        [
            ["[0|3]", "[0|5]", "[1|2]", "[2|6]", "[3|3]", "[3|4]", "[4|4]"],
            ["[0|4]", "[0|6]", "[1|4]", "[2|2]", "[2|5]", "[3|6]", "[5|6]"],
        ],
        ["[0|0]", "[1|1]", "[0|2]", "[0|1]", "[6|6]", "[2|3]", "[4|5]",
         "[2|4]", "[3|5]", "[1|3]", "[4|6]", "[1|6]", "[1|5]", "[5|5]"],
        0,
        [44, 20, 56, 39, 43, 56, 16, 53, 56, 34, 33, 56, 5, 13, 56, 55, 56, 56,
         56, 56, 56, 56, 48, 56, 25, 46, 15, 40, 36, 19, 7, 9, 57, 28, 57],
    )


def block_position() -> DrawState:
    """Seat 0 holds [1|2] [1|3] [3|5] on open ends (2, 1); the boneyard is down to 2 tiles.

    [1|2] on the right (17) opens 2 and 2 with every 2 on the line: a sure block that pays the
    opponent's pips less seat 0's 12. [1|3] on the right (19) opens 2 and 3, which nobody else
    can answer; seat 0 then lays [1|2] on the 2 and goes out with [3|5] on the 3 next turn: a
    sure domino worth the opponent's pips less at most the 7 of [1|6]. Better by at least 5.
    """
    return position(
        [
            ["[0|4]", "[1|1]", "[1|2]", "[1|3]", "[2|4]", "[3|5]", "[3|6]"],
            ["[0|0]", "[0|1]", "[0|2]", "[3|4]", "[4|4]", "[4|5]", "[5|5]"],
        ],
        ["[4|6]", "[2|3]", "[1|5]", "[1|4]", "[3|3]", "[2|5]", "[0|3]",
         "[2|2]", "[2|6]", "[5|6]", "[1|6]", "[0|6]", "[6|6]", "[0|5]"],
        0,
        [42, 38, 56, 30, 56, 56, 56, 28, 56, 36, 56, 56, 6, 56, 8,
         20, 14, 2, 56, 49, 47, 56, 53, 4, 35, 56, 33, 26, 56, 23],
    )


def test_ismcts_keeps_a_tile_that_fits_where_greed_strands_it() -> None:
    state = strand_position()
    assert state.current == 1 and len(state.boneyard) == 2
    assert state.legal_actions() == [26, 30, 31]
    observation = observe(state, 1)
    assert agents.make("heaviest").act(observation) == 30
    stranded = state.clone()
    stranded.apply_action(30)
    while stranded.result is None:
        stranded.apply_action(stranded.legal_actions()[0])
    assert stranded.result.kind == "blocked"
    for seed in range(5):
        assert agents.make("ismcts", seed=seed).act(observation) in (26, 31)


def test_ismcts_prefers_a_sure_domino_to_a_smaller_sure_block() -> None:
    state = block_position()
    assert state.current == 0 and state.legal_actions() == [16, 17, 19]
    observation = observe(state, 0)
    for seed in range(5):
        assert agents.make("ismcts", seed=seed).act(observation) == 19


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_ismcts_plays_legal_actions(num_players: int) -> None:
    agent = agents.make("ismcts", simulations=3, seed=num_players)
    states = random_positions(num_players, hands=25, seed=num_players, min_legal=2)[:400]
    for state in states:
        action = agent.act(observe(state, state.current))
        assert type(action) is int and state.is_legal(action), (state, action)
    assert len(states) >= 300


def test_same_seed_same_decisions_and_hidden_tiles_do_not_matter() -> None:
    rng = random.Random(9)
    states = random_positions(3, hands=6, seed=2, min_legal=2)[::4]
    for index, state in enumerate(states):
        player = state.current
        other = state.view(player).sample_state(rng)
        seen, seen_other = observe(state, player), observe(other, player)
        assert np.array_equal(seen["observation"], seen_other["observation"])
        first = agents.make("ismcts", simulations=40, seed=index).act(seen)
        again = agents.make("ismcts", simulations=40, seed=index).act(seen)
        moved = agents.make("ismcts", simulations=40, seed=index).act(seen_other)
        assert first == again == moved
    assert len(states) >= 20


def test_the_seed_drives_the_search_and_root_actions_share_each_deal() -> None:
    state = random_positions(2, hands=1, seed=4, min_legal=2)[0]
    observation = observe(state, state.current)
    roots = []
    for seed in (1, 1, 2):
        agent = ISMCTSAgent(simulations=50, seed=seed)
        root = agent.search(agent_view(observation))
        roots.append({action: (child.visits, child.total) for action, child in root.children.items()})
    assert roots[0] == roots[1]
    assert roots[0] != roots[2]
    # Every root action is tried once per determinization: the budget rounds up to whole ones.
    actions = state.legal_actions()
    assert sorted(roots[0]) == actions
    visits = {visits for visits, _total in roots[0].values()}
    assert len(visits) == 1 and visits.pop() == -(-50 // len(actions))


def agent_view(observation: dict[str, np.ndarray]) -> PlayerView:
    """The information set the agent rebuilds from ``observation``."""
    vector = observation["observation"]
    return view_from_observation(vector, num_players(vector))


def test_a_single_legal_action_is_returned_without_search() -> None:
    state = block_position()
    state.apply_action(17)  # every 2 is on the line: seat 1 can only pass
    assert state.legal_actions() == [57]
    agent = agents.make("ismcts", simulations=MAX_SIMULATIONS, seed=0)
    started = time.perf_counter()
    assert agent.act(observe(state, state.current)) == 57
    assert time.perf_counter() - started < 0.5


def test_a_time_budget_bounds_the_decision() -> None:
    state = random_positions(4, hands=1, seed=1, min_legal=2)[0]
    agent = agents.make("ismcts", seconds=0.05, seed=0)
    started = time.perf_counter()
    action = agent.act(observe(state, state.current))
    assert state.is_legal(action)
    # Generous: the machine running the tests may be busy.
    assert time.perf_counter() - started < 1.0


def test_determinizations_exist_for_a_tightly_constrained_view() -> None:
    """A 4-player view where two opponents lack 0 and 6 and one lacks 0 and 4.

    Met in play by ``ismcts``: random picks strand a seat here about once in 500 deals, which
    used to abort a search. Every sample must respect the hand sizes and the voids.
    """
    placements = [(27, 2), (12, 3), (1, 0), (26, 2), (11, 3), (0, 0), (8, 1), (17, 2), (6, 0), (2, 0), (15, 1), (10, 3)]
    view = PlayerView(
        game=DrawGame(4),
        player=0,
        hand=(1 << 4) | (1 << 5),  # [0|4] [0|5]
        line=tuple((tile, seat, -1) for tile, seat in placements),
        line_mask=sum(1 << tile for tile, _seat in placements),
        ends=(1, 0),
        hand_counts=(2, 6, 3, 3),
        boneyard_count=2,
        voids=(0, 0b1000001, 0b0010001, 0b1000001),
        current=0,
        passes_in_row=0,
        scores=(0, 0, 0, 0),
        opener=0,
    )
    rng = random.Random(0)
    for _ in range(2000):
        state = view.sample_state(rng)
        for seat in (1, 2, 3):
            assert state.hands[seat].bit_count() == view.hand_counts[seat]
            assert not state.hands[seat] & ~view.allowed(seat)
        assert len(state.boneyard) == 2


def test_the_python_search_takes_the_search_arguments_and_refuses_a_hidden_tile_model() -> None:
    # Both searches take one argument list (agents.ismcts.SearchAgent's): the pure-Python one deals
    # uniformly only, so it refuses a model before reading any file, as it refuses another variant.
    with pytest.raises(ValueError, match="inference must be None .this search deals uniformly., got 'no-such.npz'"):
        agents.make("ismcts_python", inference="no-such.npz")
    with pytest.raises(ValueError, match=r"candidates must be an integer in \[1, 4096\], got 0"):
        agents.make("ismcts_python", candidates=0)
    agent = agents.make("ismcts_python", candidates=3, simulations=20, seed=0)
    assert isinstance(agent, ISMCTSAgent) and agent.model is None and agent.candidates == 3
    with pytest.raises(ValueError, match="inference=no-such.npz"):
        agents.make("ismcts", inference="no-such.npz")
