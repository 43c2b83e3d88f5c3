"""The compiled kernels (:mod:`draw_env.engine`) against the rulebook (:mod:`draw_env.rules`).

Many random hands and matches with 2 to 4 players, in the seeds' game and in a grid of variants
(every set from double-two to double-nine, several hand sizes, 0 to 3 protected tiles), from the
kernel's own deals and from odd set-up deals (short boneyards, uneven hands, blocks with shared
lowest totals), compared after every action: the legal mask, the legal action list, ``is_legal``
of every action id, each seat's observation (against the AEC environment's incremental table),
and the result, scores and match outcome.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from draw_env import engine as E
from draw_env import observation
from draw_env.rules import DrawGame, DrawState
from tests.positions import DeckRng, blocked_deal

#: (players, max_pip, hand_size, protected): every set, the corners of the ranges and a few between.
VARIANTS = [
    (2, 2, 1, 0),
    (2, 2, 2, 2),
    (3, 3, 2, 0),
    (4, 3, 1, 3),
    (2, 4, 5, 1),
    (3, 5, 4, 3),
    (4, 5, 3, 2),
    (2, 6, 9, 0),
    (3, 6, 7, 3),
    (3, 7, None, 1),
    (4, 7, 8, 3),
    (2, 8, 12, 2),
    (3, 9, None, 0),
    (4, 9, 12, 3),
    (2, 9, 20, 2),
]


#: What the slots past a state's end hold, to show that no kernel writes past the variant's size.
GUARD = -12345


def new_state(game: DrawGame) -> np.ndarray:
    """A state of ``game``'s size, the first slots of a longer array whose other slots hold :data:`GUARD`."""
    size = E.state_size(game.max_pip)
    return np.full(size + 8, GUARD, np.int64)[:size]


def kernel_state(ref: DrawState, seed: int) -> np.ndarray:
    """A kernel state holding the same hand as the fresh rules state ``ref``."""
    game = ref.game
    state = new_state(game)
    E.init_variant_state(state, game.num_players, seed, game.max_pip, game.hand_size, game.protected)
    hands = np.zeros(E.SEATS, np.int64)
    hands[: ref.num_players] = ref.hands
    boneyard = np.array(ref.boneyard, np.int64)
    for seat, score in enumerate(ref.scores):
        state[E.S_SCORES + seat] = score
    E.deal_fixed(state, hands, boneyard, len(boneyard), ref.current)
    return state


def dealt_state(game: DrawGame, seed: int) -> tuple[np.ndarray, DrawState]:
    """A kernel state of a new match dealt by the kernel, and the rules state of the same deal."""
    state = new_state(game)
    E.init_variant_state(state, game.num_players, seed, game.max_pip, game.hand_size, game.protected)
    E.new_match(state, -1)
    deal = E.deal_of(state)
    return state, game.state_from_deal(deal["hands"], deal["boneyard"], deal["opener"])


def deck_of(state: np.ndarray) -> list[int]:
    deal = E.deal_of(state)
    return [tile for hand in deal["hands"] for tile in hand] + deal["boneyard"]


def odd_deal(rng: random.Random, game: DrawGame) -> DrawState:
    """A set-up deal: a boneyard of the protected tiles to 4 more and uneven hands (blocks become
    common)."""
    players, num_tiles = game.num_players, game.num_tiles
    deck = list(range(num_tiles))
    rng.shuffle(deck)
    bones = rng.randint(game.protected, min(game.protected + 4, num_tiles - players))
    cuts = sorted(rng.sample(range(1, num_tiles - bones), players - 1))
    bounds = [0, *cuts, num_tiles - bones]
    hands = [deck[bounds[s] : bounds[s + 1]] for s in range(players)]
    return game.state_from_deal(hands, deck[num_tiles - bones :], rng.randrange(players))


def assert_same(state: np.ndarray, ref: DrawState, ref_table: observation.ObservationTable, match: bool) -> None:
    game = ref.game
    mask = np.zeros(game.num_actions, np.int8)
    actions = np.zeros(E.MAX_ACTIONS, np.int64)
    legal = ref.legal_actions()
    assert E.legal_mask(state, mask) == len(legal)
    assert np.flatnonzero(mask).tolist() == legal
    count = E.legal_actions(state, actions)
    assert actions[:count].tolist() == legal
    for action in range(-1, game.num_actions + 1):
        assert E.is_legal(state, action) == ref.is_legal(action), action
    out = np.full(observation.layout(game).size, 7.0, np.float32)
    for seat in range(ref.num_players):
        E.write_observation(state, seat, match, out)
        np.testing.assert_array_equal(out, ref_table.observe(seat))
        assert E.hand_pips(state, seat) == ref.hand_pips(seat)
        assert E.popcount(state[E.S_HANDS + seat]) == ref.hand_count(seat)
    assert E.boneyard_count(state) == len(ref.boneyard)
    assert state[E.S_CURRENT] == ref.current


def play_hand(state: np.ndarray, ref: DrawState, rng: random.Random, match: bool) -> None:
    """Random legal play of one hand in both engines, compared after every action.

    The reference observations come from the incremental table the AEC environment serves.
    """
    ref_table = observation.ObservationTable(ref.game, match)
    ref_table.rebuild(ref)
    while True:
        assert_same(state, ref, ref_table, match)
        if ref.result is not None:
            break
        action = rng.choice(ref.legal_actions())
        seat = ref.current
        drawn = ref.boneyard[0] if action == ref.game.draw_action else -1
        ref.apply_action(action)
        status = E.apply_action(state, action)
        ref_table.record(ref, seat, action, drawn)
        assert status == (E.PLAYING if ref.result is None else E.DOMINO if ref.result.kind == "domino" else E.BLOCKED)
    result = ref.result
    players = ref.num_players
    assert tuple(state[E.S_POINTS : E.S_POINTS + players]) == result.points
    assert tuple(E.hand_pips(state, seat) for seat in range(players)) == result.pips
    assert tuple(state[E.S_SCORES : E.S_SCORES + players]) == tuple(ref.scores)
    assert state[E.S_WINNER] == (-1 if result.winner is None else result.winner)
    assert E.match_over(state) == ref.is_match_over
    assert E.match_winner(state) == (-1 if ref.match_winner is None else ref.match_winner)
    assert (state.base[len(state) :] == GUARD).all()  # nothing written past the variant's slots


def play_match(state: np.ndarray, ref: DrawState, rng: random.Random) -> None:
    """A whole match: the kernel deals each next hand and the rules core is handed that deal."""
    players = ref.num_players
    while True:
        play_hand(state, ref, rng, match=True)
        if ref.is_match_over:
            break
        opener, hand_number = state[E.S_OPENER], state[E.S_HAND_NUMBER]
        E.next_hand(state)
        assert state[E.S_OPENER] == (opener + 1) % players
        assert state[E.S_HAND_NUMBER] == hand_number + 1
        ref.next_hand(DeckRng(deck_of(state)))
        assert ref.opener == state[E.S_OPENER]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_hands_agree_with_rules(players: int) -> None:
    rng = random.Random(players)
    game = DrawGame(players)
    kinds = set()
    for index in range(120):
        ref = game.new_state(rng) if index % 2 else odd_deal(rng, game)
        state = kernel_state(ref, index)
        play_hand(state, ref, rng, match=index % 3 == 0)
        kinds.add((ref.result.kind, ref.result.winner is None))
    # The games covered dominoes and blocks with a single lowest total (shared ones: below).
    assert {("domino", False), ("blocked", False)} <= kinds


@pytest.mark.parametrize("players", [2, 3, 4])
def test_matches_agree_with_rules(players: int) -> None:
    rng = random.Random(10 + players)
    game = DrawGame(players)
    for match_index in range(6):
        start = [rng.randrange(game.target) for _ in range(players)] if match_index % 2 else None
        ref = game.new_state(rng, scores=start)
        play_match(kernel_state(ref, 1000 + match_index), ref, rng)


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected"), VARIANTS)
def test_variants_agree_with_rules(players: int, max_pip: int, hand_size: int | None, protected: int) -> None:
    """Hands dealt by the kernel and odd set-up deals, then a match, in each variant."""
    game = DrawGame(players, max_pip, hand_size, protected)
    rng = random.Random(max_pip * 100 + players * 10 + protected)
    for index in range(12):
        if index % 2:
            state, ref = dealt_state(game, index)
        else:
            ref = odd_deal(rng, game)
            state = kernel_state(ref, index)
        play_hand(state, ref, rng, match=index % 3 == 0)
    state, ref = dealt_state(game, 99)
    play_match(state, ref, rng)


def test_init_state_is_the_seeds_variant() -> None:
    assert E.state_size(6) == E.STATE_SIZE == 96 and E.state_size(9) == E.MAX_STATE_SIZE
    for players in (2, 3, 4):
        game = DrawGame(players)
        plain, variant = np.zeros((2, E.STATE_SIZE), np.int64)
        E.init_state(plain, players, 5)
        E.init_variant_state(variant, players, 5, game.max_pip, game.hand_size, game.protected)
        np.testing.assert_array_equal(plain, variant)


def test_every_observation_fact_has_a_kernel() -> None:
    assert not set(E.FACT_KERNELS) & set(E.BLOCK_WRITERS)
    assert set(E.FACT_KERNELS) | set(E.BLOCK_WRITERS) == set(observation.FACTS)


def test_shared_lowest_block_scores_nothing() -> None:
    # Leftovers [0|2] and [1|1]: both seats keep 2 pips, so nobody scores.
    deal = blocked_deal([["[0|2]"], ["[1|1]"]], ["[0|3]", "[2|3]"], end_value=5)
    ref = DrawGame(2).state_from_deal(deal.hands, deal.boneyard, deal.opener)
    state = kernel_state(ref, 0)
    for action in deal.placements:
        ref.apply_action(action)
        E.apply_action(state, action)
    for _ in range(2):
        assert E.legal_mask(state, np.zeros(58, np.int8)) == 1
        ref.apply_action(57)
        status = E.apply_action(state, 57)
    assert status == E.BLOCKED and ref.result.kind == "blocked"
    assert ref.result.winner is None and ref.result.points == (0, 0)
    assert tuple(state[E.S_POINTS : E.S_POINTS + 2]) == (0, 0) and state[E.S_WINNER] == -1


@pytest.mark.parametrize(
    ("players", "max_pip", "hand_size", "protected"), [(2, 6, None, 2), (3, 6, None, 2), (4, 6, None, 2), *VARIANTS[::3]]
)
def test_random_deal_is_a_deal_and_is_seeded(players: int, max_pip: int, hand_size: int | None, protected: int) -> None:
    game = DrawGame(players, max_pip, hand_size, protected)
    openers = np.zeros(players, int)
    for seed in range(200):
        state, ref = dealt_state(game, seed)  # the rules validate the deal
        deal = E.deal_of(state)
        assert all(len(hand) == game.hand_size for hand in deal["hands"])
        assert len(deal["boneyard"]) == game.num_tiles - players * game.hand_size
        openers[deal["opener"]] += 1
        again, _ = dealt_state(game, seed)
        assert E.deal_of(again) == deal
    # A fair lottery: every seat opens about 200 / players times (loose bound, fixed seeds).
    assert openers.min() > 200 / players * 0.6


def test_random_below_is_uniform() -> None:
    state = np.zeros(E.STATE_SIZE, np.int64)
    E.init_state(state, 2, 12345)
    for n in (1, 3, 7, 28):
        counts = np.bincount([E.random_below(state, n) for _ in range(7000)], minlength=n)
        assert len(counts) == n
        expected = 7000 / n
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        assert chi2 < n + 6 * np.sqrt(2 * n) + 1  # far above any fair outcome with these seeds


@pytest.mark.parametrize("match", [False, True])
def test_play_random_keeps_every_tile_somewhere(match: bool) -> None:
    states = np.zeros((64, E.MAX_STATE_SIZE), np.int64)  # rows as long as the largest variant's
    for i in range(64):
        players, max_pip, hand_size, protected = VARIANTS[i % len(VARIANTS)] if i % 2 else (2 + i % 3, 6, None, 2)
        game = DrawGame(players, max_pip, hand_size, protected)
        E.init_variant_state(states[i], players, i, max_pip, game.hand_size, protected)
        E.new_match(states[i], -1)
    assert E.play_random(states, 200, match) == 64 * 200
    for state in states:
        players, num_tiles = state[E.S_NUM_PLAYERS], int(state[E.S_NUM_TILES])
        held = 0
        for seat in range(players):
            assert held & state[E.S_HANDS + seat] == 0
            held |= int(state[E.S_HANDS + seat])
        bones = {int(t) for t in state[E.S_BONEYARD + state[E.S_BONE_POS] : E.S_BONEYARD + state[E.S_BONE_END]]}
        assert held & int(state[E.S_LINE_MASK]) == 0
        on_line = {t for t in range(num_tiles) if state[E.S_LINE_MASK] >> t & 1}
        in_hands = {t for t in range(num_tiles) if held >> t & 1}
        assert on_line | in_hands | bones == set(range(num_tiles))
        assert len(on_line) + len(in_hands) + len(bones) == num_tiles
        assert E.boneyard_count(state) >= state[E.S_PROTECTED]
        assert state[E.S_LINE_COUNT] == len(on_line)


@pytest.mark.parametrize("players", [2, 4])
def test_redeal_then_play_agrees_with_rules(players: int) -> None:
    """A determinization: the rules core's sampled hidden tiles written in with ``redeal``."""
    rng = random.Random(50 + players)
    game = DrawGame(players)
    for index in range(30):
        ref = game.new_state(rng)
        state = kernel_state(ref, index)
        for _ in range(rng.randrange(1, 12)):
            if ref.result is not None:
                break
            action = rng.choice(ref.legal_actions())
            ref.apply_action(action)
            E.apply_action(state, action)
        if ref.result is not None:
            continue
        sampled = ref.view(ref.current).sample_state(rng)
        hands = np.zeros(E.SEATS, np.int64)
        hands[:players] = sampled.hands
        E.redeal(state, hands, np.array(sampled.boneyard, np.int64), len(sampled.boneyard))
        play_hand(state, sampled, rng, match=False)
