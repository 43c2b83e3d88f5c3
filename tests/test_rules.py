"""The rules of the game, each shown on a position set up for it.

Positions come from fixed deals (:meth:`DrawGame.state_from_deal`) played with legal actions;
tiles are written as in the rules, ``"[1|4]"``.
"""

from __future__ import annotations

import math
import random

import pytest

from draw_env import tiles
from draw_env.rules import (
    DRAW,
    LANGUAGES,
    LEFT,
    MAX_HAND_POINTS,
    PASS,
    RIGHT,
    WORDS,
    DrawGame,
    DrawState,
    HandResult,
    IllegalActionError,
    action_name,
    check_reward_episode,
    ends_after,
    hand_rewards,
    next_opener,
    place_action,
    reward_fits_episode,
    worst_reward,
)
from draw_env.tiles import tile_id
from tests.positions import blocked_deal, complete_deal, ids, play


def place(tile: str, end: int) -> int:
    """The action placing ``tile`` (written ``"[a|b]"``) at ``end``."""
    return place_action(tile_id(tile), end)


def snapshot(state: DrawState) -> tuple:
    """Everything that changes during a hand, to check that a refused action changed nothing."""
    return (tuple(state.hands), tuple(state.boneyard), tuple(state.line), state.ends, state.current,
            state.passes_in_row, tuple(state.voids), tuple(state.scores), state.result)


# ---------------------------------------------------------------------- the deal and the opener


@pytest.mark.parametrize(("players", "hand_size", "boneyard_size"), [(2, 7, 14), (3, 7, 7), (4, 6, 4)])
def test_deal_gives_seven_or_six_tiles_each_and_the_rest_to_the_boneyard(
    players: int, hand_size: int, boneyard_size: int
) -> None:
    game = DrawGame(players)
    assert game.hand_size == hand_size
    for seed in range(20):
        state = game.new_state(random.Random(seed))
        assert [state.hand_count(seat) for seat in range(players)] == [hand_size] * players
        assert len(state.boneyard) == boneyard_size
        every_tile = [tile for seat in range(players) for tile in state.hand_tiles(seat)] + state.boneyard
        assert sorted(every_tile) == list(range(28))


def test_the_deal_and_the_opener_come_from_the_seeded_rng(num_players: int) -> None:
    game = DrawGame(num_players)

    def deal(seed: int) -> tuple:
        state = game.new_state(random.Random(seed))
        return tuple(state.hands), tuple(state.boneyard), state.opener

    assert deal(7) == deal(7)
    assert len({deal(seed) for seed in range(10)}) == 10


def test_the_first_opener_is_a_fair_lottery_over_seats(num_players: int) -> None:
    draws = 1200
    openers = [DrawGame(num_players).new_state(random.Random(seed)).opener for seed in range(draws)]
    expected = draws / num_players
    spread = math.sqrt(draws * (1 / num_players) * (1 - 1 / num_players))
    counts = [openers.count(seat) for seat in range(num_players)]
    # Five standard deviations: a fair lottery stays inside, a biased one (any seat favoured by
    # 25% or more) does not.
    assert all(abs(count - expected) < 5 * spread for count in counts), counts


def test_dealt_tiles_give_no_priority_the_opener_need_not_hold_the_highest_double() -> None:
    game = DrawGame(2)
    holds_highest_double = []
    for seed in range(400):
        state = game.new_state(random.Random(seed))
        doubles = [t for seat in range(2) for t in state.hand_tiles(seat) if tiles.IS_DOUBLE[t]]
        if doubles:
            holder = next(seat for seat in range(2) if max(doubles) in state.hand_tiles(seat))
            holds_highest_double.append(holder == state.opener)
    # With a lottery the opener holds the highest dealt double about half the time.
    share = sum(holds_highest_double) / len(holds_highest_double)
    assert 0.4 < share < 0.6, share


@pytest.mark.parametrize("tile", range(28), ids=tiles.NAMES)
def test_any_tile_may_open_and_lays_its_low_half_on_the_left(tile: int) -> None:
    others = [t for t in range(28) if t != tile]
    state = DrawGame(2).state_from_deal([[tile, *others[:6]], others[6:13]], others[13:], opener=0)
    held = state.hand_tiles(0)
    assert state.legal_actions() == [place_action(t, LEFT) for t in held] + [DRAW]
    assert not state.is_legal(place_action(tile, RIGHT))
    state.apply_action(place_action(tile, LEFT))
    assert state.ends == tiles.TILES[tile]
    assert state.line == [(tile, 0, LEFT)]
    assert state.current == 1


# ---------------------------------------------------------------------- the line


def test_a_double_joins_crosswise_inside_the_line_and_never_branches() -> None:
    hands, boneyard = complete_deal(
        [["[1|4]", "[1|6]", "[6|6]"], ["[1|1]", "[3|4]", "[5|5]"], None], boneyard=["[2|2]", "[2|3]", "[2|4]"]
    )
    state = play(
        DrawGame(3).state_from_deal(hands, boneyard, opener=0),
        [place("[1|4]", LEFT), place("[1|1]", LEFT)],
    )
    assert state.ends == (1, 4)  # crosswise: the double on the 1 leaves a 1 open
    state.apply_action(place("[1|3]", LEFT))  # seat 2 continues the line from the double
    assert state.ends == (3, 4)
    # [1|1] now sits inside the line. A spinner would take seat 0's [1|6] on its sides; in Draw
    # the line keeps two ends, so seat 0 has nothing to place.
    assert state.current == 0 and state.hand_tiles(0) == ids(["[1|6]", "[6|6]"])
    assert state.legal_actions() == [DRAW]


def test_an_opening_double_offers_its_value_at_both_ends_and_nothing_more() -> None:
    hands, boneyard = complete_deal([["[2|2]", "[2|6]", "[6|6]"], ["[2|5]", "[5|5]", "[2|3]"]], boneyard=None)
    state = DrawGame(2).state_from_deal(hands, boneyard, opener=0)
    state.apply_action(place("[2|2]", LEFT))
    assert state.ends == (2, 2)
    assert state.is_legal(place("[2|5]", LEFT)) and state.is_legal(place("[2|5]", RIGHT))
    state.apply_action(place("[2|5]", LEFT))
    assert state.ends == (5, 2)
    # [2|6] fits the 2 still open on the right, not a crosswise side of [2|2].
    assert state.is_legal(place("[2|6]", RIGHT)) and not state.is_legal(place("[2|6]", LEFT))


def test_a_blank_half_matches_only_a_blank_half() -> None:
    hands, boneyard = complete_deal([["[0|0]", "[0|3]"], None], boneyard=["[6|6]", "[5|6]"])
    state = DrawGame(2).state_from_deal(hands, boneyard, opener=0)
    held = state.hand_tiles(1)  # every tile but [0|0], [0|3] and the two in the boneyard
    state.apply_action(place("[0|0]", LEFT))
    blanks = [t for t in held if 0 in tiles.TILES[t]]
    assert [a >> 1 for a in state.legal_actions()] == sorted(blanks * 2)
    hands, boneyard = complete_deal([["[0|3]", "[6|6]"], None], boneyard=["[0|0]", "[5|6]"])
    state = DrawGame(2).state_from_deal(hands, boneyard, opener=0)
    held = state.hand_tiles(1)
    state.apply_action(place("[0|3]", LEFT))  # blank open on the left, 3 on the right
    lefts = [a >> 1 for a in state.legal_actions() if a & 1 == LEFT]
    rights = [a >> 1 for a in state.legal_actions() if a & 1 == RIGHT]
    assert lefts == [t for t in held if 0 in tiles.TILES[t]]
    assert rights == [t for t in held if 3 in tiles.TILES[t]]


# ---------------------------------------------------------------------- drawing and passing


def opened_on_1_4(seat1: list[str], boneyard: list[str]) -> DrawState:
    """Seat 0 has opened [1|4]; seat 1 holds ``seat1``; seat 0 holds every other tile."""
    hands, rest = complete_deal([None, seat1], boneyard=boneyard)
    state = DrawGame(2).state_from_deal(hands, rest, opener=0)
    return play(state, [place("[1|4]", LEFT)])


def test_a_player_may_draw_while_holding_a_playable_tile_and_keeps_the_turn() -> None:
    state = opened_on_1_4(["[4|6]", "[2|3]"], ["[3|3]", "[5|5]", "[0|0]", "[2|2]"])
    assert state.is_legal(place("[4|6]", RIGHT)) and DRAW in state.legal_actions()
    state.apply_action(DRAW)
    assert state.current == 1
    assert state.hand_tiles(1) == ids(["[2|3]", "[3|3]", "[4|6]"])  # boneyard[0] is drawn first
    assert state.boneyard == ids(["[5|5]", "[0|0]", "[2|2]"])
    state.apply_action(DRAW)  # and may draw again
    assert state.current == 1 and len(state.boneyard) == 2
    # then places any playable tile, not only a drawn one
    state.apply_action(place("[4|6]", RIGHT))
    assert state.current == 0 and state.ends == (1, 6)


def test_a_player_with_nothing_playable_must_draw_while_drawing_is_allowed() -> None:
    state = opened_on_1_4(["[2|3]", "[5|6]"], ["[0|0]", "[3|4]", "[5|5]", "[2|2]"])
    assert state.legal_actions() == [DRAW]
    before = snapshot(state)
    with pytest.raises(IllegalActionError):
        state.apply_action(PASS)  # no pass while the boneyard holds 3 or more
    assert snapshot(state) == before
    state.apply_action(DRAW)  # [0|0] does not fit either
    assert state.legal_actions() == [DRAW]
    state.apply_action(DRAW)  # [3|4] fits the 4
    assert state.legal_actions() == [place("[3|4]", RIGHT)]  # boneyard at 2: no more drawing


def test_drawing_is_forbidden_once_the_boneyard_is_down_to_two() -> None:
    state = opened_on_1_4(["[1|2]", "[5|6]"], ["[0|0]", "[2|2]", "[3|3]"])
    state.apply_action(DRAW)
    assert len(state.boneyard) == 2 and not state.can_draw
    assert DRAW not in state.legal_actions()
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="not legal"):
        state.apply_action(DRAW)
    assert snapshot(state) == before


def test_at_two_a_player_passes_only_when_no_tile_fits() -> None:
    # Boneyard at 2 from the start; seat 1 holds thirteen tiles without a 5 or a 6, seat 0 the
    # thirteen tiles with a 5 or a 6.
    low_tiles = [t for t in range(28) if tiles.HIGH[t] <= 4]
    hands, boneyard = complete_deal([None, low_tiles[:13]], boneyard=low_tiles[13:])
    state = DrawGame(2).state_from_deal(hands, boneyard, opener=0)
    state.apply_action(place("[6|6]", LEFT))
    assert state.legal_actions() == [PASS]
    state.apply_action(PASS)
    assert state.current == 0 and state.passes_in_row == 1
    assert state.voids[1] == 1 << 6  # the pass showed seat 1 holds no 6
    # Seat 0 holds sixes: it must place; passing is refused.
    assert PASS not in state.legal_actions() and state.legal_actions()
    with pytest.raises(IllegalActionError):
        state.apply_action(PASS)
    state.apply_action(place("[5|6]", LEFT))
    assert state.passes_in_row == 0  # a placement ends the run of passes
    state.apply_action(PASS)
    assert not state.is_hand_over  # one pass since the last placement is not a block


@pytest.mark.parametrize(
    ("leftover", "boneyard", "end_value", "points", "winner"),
    [
        # The rules' example: totals 3, 8, 10 give the 3-holder 8 + 10 - 3 = 15; the boneyard's 17 pips count for no one.
        ([["[1|2]"], ["[2|6]"], ["[4|6]"]], ["[1|4]", "[6|6]"], 0, (15, 0, 0), 0),
        ([["[4|6]"], ["[2|6]"], ["[1|2]"]], ["[1|4]", "[6|6]"], 0, (0, 0, 15), 2),
        # The rules' example: totals 3, 3, 10: the lowest is shared, nobody scores.
        ([["[1|2]"], ["[0|3]"], ["[5|5]"]], ["[0|1]", "[2|3]"], 6, (0, 0, 0), None),
        # Two players: 8 - 3 = 5, exact (no rounding to fives).
        ([["[1|2]"], ["[3|5]"]], ["[1|3]", "[2|5]"], 0, (5, 0), 0),
        # Four players: 8 + 10 + 10 - 3 = 25, once; no bonus.
        ([["[1|2]"], ["[2|6]"], ["[4|6]"], ["[5|5]"]], ["[1|4]", "[3|3]"], 0, (25, 0, 0, 0), 0),
    ],
    ids=["3-8-10", "10-8-3", "3-3-10", "2p", "4p"],
)
def test_a_block_scores_the_single_lowest_total_once(
    leftover: list[list[str]], boneyard: list[str], end_value: int, points: tuple, winner: int | None
) -> None:
    deal = blocked_deal(leftover, boneyard, end_value)
    players = len(leftover)
    state = play(DrawGame(players).state_from_deal(deal.hands, deal.boneyard, deal.opener), deal.placements)
    assert state.ends == (end_value, end_value) and len(state.boneyard) == 2
    for passes in range(1, players + 1):
        assert not state.is_hand_over
        assert state.legal_actions() == [PASS]
        state.apply_action(PASS)
        assert state.passes_in_row == passes or state.is_hand_over
    assert state.result.kind == "blocked"
    assert state.result.pips == tuple(sum(tiles.PIPS[t] for t in ids(hand)) for hand in leftover)
    assert state.result.points == points
    assert state.result.winner == winner
    assert state.scores == list(points)
    assert state.legal_actions() == []


# ---------------------------------------------------------------------- going out


@pytest.mark.parametrize(
    ("opponents", "points"),
    [
        # The rules' example: opponents holding 0 and 8 give the winner 8; [0|0] alone counts 0.
        ([["[0|0]"], ["[2|6]"]], 8),
        # 3 + 10 = 13, exact: no rounding, no dividing by five.
        ([["[1|2]"], ["[4|6]"]], 13),
        ([["[0|0]"]], 0),
        ([["[0|1]", "[5|5]"], ["[3|4]"], ["[0|0]"]], 18),
    ],
    ids=["0-and-8", "13", "double-blank", "4p"],
)
def test_going_out_scores_every_pip_left_in_the_opponents_hands(
    opponents: list[list[str]], points: int
) -> None:
    # Seat 0 holds only [6|6]: it opens and goes out at once. The boneyard, holding every other
    # tile, counts for no one.
    hands, boneyard = complete_deal([["[6|6]"], *opponents], boneyard=None)
    players = len(hands)
    state = DrawGame(players).state_from_deal(hands, boneyard, opener=0, scores=[10, 20, 30, 40][:players])
    state.apply_action(place("[6|6]", LEFT))
    result = state.result
    assert result.kind == "domino"
    assert result.winner == 0  # an opponent's lone [0|0] does not tie the empty hand
    assert result.points == (points,) + (0,) * (players - 1)
    # Only the scorer's total changes.
    assert state.scores == [10 + points, 20, 30, 40][:players]


def test_going_out_after_several_turns_scores_the_opponents_pips() -> None:
    hands, boneyard = complete_deal([["[3|3]", "[5|6]"], ["[3|4]", "[1|1]"], ["[4|5]"]], boneyard=None)
    state = play(
        DrawGame(3).state_from_deal(hands, boneyard, opener=0),
        [place("[3|3]", LEFT), place("[3|4]", RIGHT), place("[4|5]", RIGHT)],
    )
    assert state.result.kind == "domino" and state.result.winner == 2
    assert state.result.pips == (11, 2, 0)
    assert state.result.points == (0, 0, 13)


@pytest.mark.parametrize(
    ("points", "zero_sum"),
    [
        ((23, 0), (23.0, -23.0)),
        ((0, 15, 0), (-7.5, 15.0, -7.5)),
        ((0, 0, 0), (0.0, 0.0, 0.0)),
        ((0, 0, 0, 24), (-8.0, -8.0, -8.0, 24.0)),
    ],
)
def test_the_zero_sum_points_are_each_seats_points_minus_the_mean_of_the_others(
    points: tuple, zero_sum: tuple
) -> None:
    result = HandResult("domino", None, points, (0,) * len(points))
    assert result.zero_sum == zero_sum


# ---------------------------------------------------------------------- ends after a placement


@pytest.mark.parametrize(
    ("ends", "tile", "end", "after"),
    [
        (None, "[1|4]", LEFT, (1, 4)),  # the opening tile: low half left, high half right
        (None, "[3|3]", LEFT, (3, 3)),
        ((1, 4), "[4|6]", RIGHT, (1, 6)),
        ((1, 4), "[1|1]", LEFT, (1, 4)),  # a double leaves its value open
        ((1, 4), "[0|1]", LEFT, (0, 4)),  # joined by its high half
        ((2, 2), "[2|5]", LEFT, (5, 2)),
        ((2, 2), "[2|5]", RIGHT, (2, 5)),
    ],
)
def test_ends_after_a_placement(ends: tuple | None, tile: str, end: int, after: tuple) -> None:
    assert ends_after(ends, place(tile, end)) == after


def test_ends_after_agrees_with_the_line_in_random_games() -> None:
    """Every placement of random games: the new end is the placed tile's other half."""
    rng = random.Random(0)
    for _ in range(50):
        state = DrawGame(rng.choice([2, 3, 4])).new_state(rng)
        while not state.is_hand_over:
            action = rng.choice(state.legal_actions())
            before = state.ends
            predicted = ends_after(before, action) if action < DRAW else before
            state.apply_action(action)
            if action < DRAW and before is not None:
                side = action & 1
                assert predicted[side] == tiles.other_half(action >> 1, before[side])
                assert predicted[1 - side] == before[1 - side]
            assert state.ends == predicted


# ---------------------------------------------------------------------- the match


@pytest.mark.parametrize(("players", "target"), [(2, 100), (3, 61), (4, 61)])
def test_the_match_target_is_100_with_two_players_and_61_with_more(players: int, target: int) -> None:
    assert DrawGame(players).target == target


def quick_domino(players: int, opponents: list[list[str]], scores: list[int], opener: int = 0) -> DrawState:
    """The opener holds only [6|6] and goes out at once; ``opponents`` are the other hands, clockwise."""
    hands: list[list[str] | None] = [None] * players
    others = iter(opponents)
    for offset in range(players):
        seat = (opener + offset) % players
        hands[seat] = ["[6|6]"] if offset == 0 else next(others)
    full_hands, boneyard = complete_deal(hands, boneyard=None)
    state = DrawGame(players).state_from_deal(full_hands, boneyard, opener=opener, scores=scores)
    return play(state, [place("[6|6]", LEFT)])


@pytest.mark.parametrize(
    ("scores_before", "over", "winner", "scores_after"),
    [
        ([91, 40], False, None, [99, 40]),
        ([92, 40], True, 0, [100, 40]),  # reaching the target wins
        ([97, 40], True, 0, [105, 40]),  # passing it wins and the excess is kept
    ],
)
def test_reaching_the_target_wins_the_match_and_the_excess_is_kept(
    scores_before: list[int], over: bool, winner: int | None, scores_after: list[int]
) -> None:
    state = quick_domino(2, [["[2|6]"]], scores_before)
    assert state.scores == scores_after
    assert state.is_match_over is over
    assert state.match_winner == winner


def test_leaders_tied_at_the_target_draw_the_match() -> None:
    # Only the scorer's total moves, so a tie at the target needs a seat already there: the
    # rule is checked from such starting scores.
    state = quick_domino(3, [["[1|5]"], ["[5|6]"]], scores=[70, 53, 0], opener=1)
    assert state.result.points == (0, 17, 0)
    assert state.scores == [70, 70, 0]
    assert state.is_match_over
    assert state.match_winner is None


def test_the_next_opener_is_one_seat_clockwise_from_the_last_opener_not_from_the_winner() -> None:
    hands, boneyard = complete_deal([["[3|3]", "[5|6]"], ["[3|4]", "[1|1]"], ["[4|5]"]], boneyard=None)
    state = play(
        DrawGame(3).state_from_deal(hands, boneyard, opener=0),
        [place("[3|3]", LEFT), place("[3|4]", RIGHT), place("[4|5]", RIGHT)],
    )
    assert state.result.winner == 2
    state.next_hand(random.Random(0))
    assert state.opener == 1 and state.current == 1  # not 0, the seat after the winner
    assert state.hand_number == 1
    assert state.scores == [0, 0, 13]
    assert [state.hand_count(seat) for seat in range(3)] == [7, 7, 7] and len(state.boneyard) == 7
    assert state.line == [] and state.result is None and state.voids == [0, 0, 0]


def test_next_hand_needs_a_finished_hand_of_a_match_that_goes_on() -> None:
    state = DrawGame(2).new_state(random.Random(0))
    with pytest.raises(ValueError, match="finished hand"):
        state.next_hand(random.Random(0))
    over = quick_domino(2, [["[2|6]"]], [95, 0])
    with pytest.raises(ValueError, match="goes on"):
        over.next_hand(random.Random(0))


# ---------------------------------------------------------------------- rewards, words, openers


def test_a_hand_can_give_at_most_every_pip_of_the_set() -> None:
    assert MAX_HAND_POINTS == sum(a + b for a, b in tiles.TILES) == 168
    assert worst_reward("zero_sum") == worst_reward("points") == -168.0 and worst_reward("win_loss") == -1.0


def test_hand_rewards_follow_each_scheme() -> None:
    # Seat 1 goes out at once; seats 2 and 0 hold [1|5] and [5|6]: 17 points to seat 1.
    state = quick_domino(3, [["[1|5]"], ["[5|6]"]], scores=[70, 53, 0], opener=1)
    assert state.result.points == (0, 17, 0)
    assert hand_rewards("points", state, episode_over=True) == [0.0, 17.0, 0.0]
    assert hand_rewards("zero_sum", state, episode_over=True) == [-8.5, 17.0, -8.5]
    # A drawn match (leaders tied) pays nothing under win_loss; nor does a hand within a match.
    assert hand_rewards("win_loss", state, episode_over=True) == [0.0, 0.0, 0.0]
    won = quick_domino(2, [["[2|6]"]], [95, 40])
    assert won.match_winner == 0
    assert hand_rewards("win_loss", won, episode_over=True) == [1.0, -1.0]
    assert hand_rewards("win_loss", won, episode_over=False) == [0.0, 0.0]
    three = quick_domino(3, [["[1|5]"], ["[5|6]"]], scores=[0, 60, 0], opener=1)
    assert hand_rewards("win_loss", three, episode_over=True) == [-0.5, 1.0, -0.5]


def test_win_loss_needs_a_match() -> None:
    assert reward_fits_episode("win_loss", "match") and not reward_fits_episode("win_loss", "hand")
    assert all(reward_fits_episode(r, e) for r in ("zero_sum", "points") for e in ("hand", "match"))
    check_reward_episode("win_loss", "match")
    with pytest.raises(ValueError, match="reward='win_loss' needs episode='match'"):
        check_reward_episode("win_loss", "hand")


@pytest.mark.parametrize(("players", "opener", "following"), [(2, 0, 1), (2, 1, 0), (3, 2, 0), (4, 1, 2)])
def test_next_opener_is_one_seat_clockwise(players: int, opener: int, following: int) -> None:
    assert next_opener(opener, players) == following


@pytest.mark.parametrize(
    ("lang", "names"),
    [
        ("en", ["[0|0] left", "[1|4] right", "draw", "pass"]),
        ("ja", ["[0|0] 左", "[1|4] 右", "引く", "パス"]),
        ("it", ["[0|0] sinistra", "[1|4] destra", "pesca", "passo"]),
    ],
)
def test_action_names_in_each_language(lang: str, names: list[str]) -> None:
    actions = [place("[0|0]", LEFT), place("[1|4]", RIGHT), DRAW, PASS]
    assert [action_name(action, lang) for action in actions] == names
    assert set(WORDS) == set(LANGUAGES) and all(WORDS[lang].keys() == WORDS["en"].keys() for lang in LANGUAGES)
