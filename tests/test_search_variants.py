"""The compiled search agents (``ismcts``, ``pimc``) on the game's variants: they read the set from
the observation's mask, its blocks from the set's layout, and the protected tiles from the
observation or their ``protected`` keyword."""

from __future__ import annotations

import random

import numpy as np
import pytest

import agents
import draw_env
from agents.base import observe
from agents.baselines import placements_or_forced
from agents.ismcts import REWARD_SCALE
from agents.ismcts_compiled import (
    determinize,
    information_set,
    read_facts,
    read_program,
    state_from_observation,
    state_from_view,
)
from agents.pimc import Table, _key, solve_state
from draw_env import engine as E
from draw_env import tiles
from draw_env.observation import facts_of_observation, layout, view_from_observation
from draw_env.rules import DrawGame, DrawState
from tests.test_variants import GRID

VARIANTS = [
    {"num_players": 2, "max_pip": 3, "hand_size": 3, "protected": 3},
    {"num_players": 4, "max_pip": 9},
    {"num_players": 2, "max_pip": 4, "protected": 0},
]
BUDGETS = {"ismcts": {"simulations": 50}, "pimc": {"worlds": 4}}


def _positions(game: DrawGame, hands: int, seed: int) -> list[DrawState]:
    """Copies of the decision points of ``hands`` hands of random play in ``game``."""
    rng = random.Random(seed)
    positions = []
    for _ in range(hands):
        state = game.new_state(rng)
        while state.result is None:
            positions.append(state.clone())
            state.apply_action(rng.choice(state.legal_actions()))
    return positions


@pytest.mark.parametrize("name", sorted(BUDGETS))
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda variant: "-".join(map(str, variant.values())))
@pytest.mark.parametrize("told", [False, True], ids=["protected-read", "protected-told"])
def test_search_agents_play_whole_hands_of_a_variant_legally(name: str, variant: dict, told: bool) -> None:
    assert agents.plays_variants(name)
    protected = {"protected": variant.get("protected", 2)} if told else {}
    agent = agents.make(name, seed=0, **BUDGETS[name], **protected)
    env = draw_env.env(**variant)
    env.reset(seed=5)
    decisions = 0
    for _seat in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = agent.act(observation)
        assert observation["action_mask"][action] == 1, (variant, action)
        env.step(action)
        decisions += 1
    assert decisions > 0


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda variant: "-".join(map(str, variant.values())))
def test_a_variant_observation_becomes_its_information_set(variant: dict) -> None:
    game = DrawGame(**variant)
    words = np.array([7, 0], np.int64)
    for state in _positions(game, hands=2, seed=1)[::3]:
        observation = observe(state, state.current)
        base, counts, searcher, _match = information_set(observation)
        assert base.shape == (E.state_size(game.max_pip),) and searcher == 0
        legal = np.empty(E.MAX_ACTIONS, np.int64)
        assert legal[: E.legal_actions(base, legal)].tolist() == np.flatnonzero(observation["action_mask"]).tolist()
        world = np.zeros_like(base)
        assert determinize(base, counts, 0, words, world)
        hands = [int(world[E.S_HANDS + seat]) for seat in range(game.num_players)]
        assert [bin(hand).count("1") for hand in hands] == counts[: game.num_players].tolist()
        boneyard = world[E.S_BONEYARD + world[E.S_BONE_POS] : E.S_BONEYARD + world[E.S_BONE_END]].tolist()
        dealt = sorted([t for hand in hands for t in range(game.num_tiles) if hand >> t & 1] + boneyard)
        on_line = [t for t in range(game.num_tiles) if state.line_mask >> t & 1]
        assert sorted(dealt + on_line) == list(range(game.num_tiles))  # every tile once


def test_protected_is_read_when_no_draw_is_left_and_a_told_one_must_agree() -> None:
    game = DrawGame(2, max_pip=3, hand_size=3, protected=3)
    positions = _positions(game, hands=6, seed=2)
    drawing = [state for state in positions if state.can_draw]
    done = [state for state in positions if not state.can_draw]
    assert drawing and done
    for state in done:  # the boneyard holds exactly the protected tiles
        observation = observe(state, state.current)
        assert information_set(observation)[0][E.S_PROTECTED] == 3
        with pytest.raises(ValueError, match="protected=2"):
            information_set(observation, protected=2)
    for state in drawing:
        observation = observe(state, state.current)
        assert information_set(observation, protected=3)[0][E.S_PROTECTED] == 3
        with pytest.raises(ValueError, match=f"protected={len(state.boneyard)}"):
            information_set(observation, protected=len(state.boneyard))


def _engine_state(state: DrawState) -> np.ndarray:
    """The compiled engine's state of the rules ``state``, every hidden tile included."""
    array, _counts = state_from_view(state.view(state.current))
    hands = np.zeros(E.SEATS, np.int64)
    hands[: state.num_players] = state.hands
    E.redeal(array, hands, np.array(state.boneyard, np.int64), len(state.boneyard))
    return array


def _minimax(state: DrawState, searcher: int) -> dict[int, float]:
    """Each searched action's exact paranoid value, over the rules: placements, else the forced draw or pass."""
    tile_set = state.game.tiles
    values = {}
    for action in placements_or_forced(state.legal_actions(), 2 * tile_set.num_tiles):
        child = state.clone()
        child.apply_action(action)
        if child.result is not None:
            values[action] = child.result.zero_sum[searcher] / REWARD_SCALE
        else:
            below = _minimax(child, searcher).values()
            values[action] = max(below) if child.current == searcher else min(below)
    return values


@pytest.mark.parametrize("max_pip", [7, 9])
def test_exact_solves_of_a_large_set_agree_with_a_plain_minimax(max_pip: int) -> None:
    # Sets over 28 tiles key the transposition table by a word per hand; a few drawable tiles keep it small.
    num_tiles = tiles.tile_set(max_pip).num_tiles
    game = DrawGame(2, max_pip=max_pip, hand_size=4, protected=num_tiles - 10)
    table = Table()  # one table for all: entries of earlier positions must never leak into later ones
    states = _positions(game, hands=3, seed=3)[::2]
    assert len(states) >= 6
    for state in states:
        assert solve_state(_engine_state(state), None, table) == pytest.approx(_minimax(state, state.current),
                                                                            abs=1e-12), state


def test_states_of_a_large_set_that_differ_in_one_hand_have_different_table_keys() -> None:
    # Tile 28 in the first hand against tile 0 in the second: two hands packed into one word would collide.
    state = np.zeros(E.state_size(9), np.int64)
    E.init_variant_state(state, 2, 0, 9, 4, 2)
    first, second = state.copy(), state.copy()
    first[E.S_HANDS] = 1 << 28
    second[E.S_HANDS + 1] = 1
    assert _key(first) != _key(second)


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), GRID)
def test_the_compiled_reader_rebuilds_the_information_set_the_observation_holds(
    players: int, max_pip: int, hand_size: int | None, protected: int
) -> None:
    """On every variant of the grid the compiled reader reads the facts the declared inverse reads,
    and the state it rebuilds is the one the observer's view (rebuilt in Python) gives."""
    game = DrawGame(players, max_pip, hand_size, protected)
    observed = layout(game)
    program = read_program(game.tiles)
    for state in _positions(game, hands=2, seed=max_pip)[::2]:
        vector = observe(state, state.current, match=True)["observation"]
        facts = np.zeros(program[0][-1], np.int64)
        read_facts(vector, *program[1:], facts)
        assert np.array_equal(facts, facts_of_observation(observed, vector))
        from_obs = np.zeros(E.state_size(max_pip), np.int64)
        counts = np.zeros(E.SEATS, np.int64)
        state_from_observation(vector, players, from_obs, counts, max_pip, protected, program)
        from_view, counts_view = state_from_view(view_from_observation(vector, players, game))
        from_obs[E.S_HAND_SIZE] = from_view[E.S_HAND_SIZE]  # not observed: the deal's, not the search's
        assert np.array_equal(from_obs, from_view) and np.array_equal(counts, counts_view)
