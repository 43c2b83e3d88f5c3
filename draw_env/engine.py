"""Compiled rules kernels: the rules of :mod:`draw_env.rules` as numba functions on NumPy arrays.

Two users share these kernels: the batched environment (:mod:`draw_env.vector`, which loops over
games inside compiled code) and compiled search, which copies one game's state, plays it out and
reads the result. :mod:`draw_env.rules` stays the readable reference; the differential tests
(``tests/test_engine_differential.py``) check every kernel against it over many random games.
The kernels stay in one module, longer than 600 lines, on purpose: they are the rules once more,
calling one another and sharing one state layout, and split across files they would spread one
rulebook over several without making any part of it usable alone.

State layout
------------
One game is one ``int64`` array of :data:`STATE_SIZE` slots (a batch is ``(N, STATE_SIZE)``; row
``i`` is game ``i``). Copy a state with ``state.copy()`` or ``dst[:] = src`` (768 bytes). Seats are
absolute; slots of seats past ``num_players`` stay zero.

==================  =====  ==============================================================
slot                size   meaning
==================  =====  ==============================================================
``S_HANDS``         4      hand of each seat, bitmask over tile ids (bit ``t`` = tile ``t``)
``S_DEALT``         4      each hand as dealt at the start of the hand (for records)
``S_VOIDS``         4      7-bit mask per seat of the values it showed it lacks by passing
``S_SCORES``        4      match scores, the finished hand included
``S_POINTS``        4      points each seat scored in the hand (valid once the hand is over)
``S_PIPS``          4      pips each seat was left holding (valid once the hand is over)
``S_BONEYARD``      28     boneyard tile ids; the next draw is ``S_BONEYARD + state[S_BONE_POS]``
``S_LINE``          28     placements in order: ``tile | seat << 5 | end << 7``
``S_NUM_PLAYERS``   1      2, 3 or 4
``S_LEFT``          1      open value at the left end, -1 on an empty line
``S_RIGHT``         1      open value at the right end, -1 on an empty line
``S_CURRENT``       1      seat to act (the last mover once the hand is over)
``S_PASSES``        1      passes since the last placement
``S_BONE_START``    1      first boneyard slot of the deal (``deal_of`` reads the deal from it)
``S_BONE_POS``      1      boneyard read position; tiles left = ``S_BONE_END - S_BONE_POS``
``S_BONE_END``      1      one past the last boneyard slot
``S_LINE_MASK``     1      bitmask of the tiles on the line
``S_LINE_COUNT``    1      tiles placed
``S_OPENER``        1      this hand's opener
``S_HAND_NUMBER``   1      hands dealt before this one in the match
``S_STATUS``        1      :data:`PLAYING`, :data:`DOMINO` or :data:`BLOCKED`
``S_WINNER``        1      the seat that scored, -1 for none (or while playing)
``S_RNG``           1      this game's splitmix64 generator state (the bits of a uint64)
==================  =====  ==============================================================

Every kernel is ``@njit(cache=True)``, callable from Python and from other numba code; the
kernel API (single-game, observation and batched kernels) is listed on the docs page "The
compiled engine" (``docs/engine.md``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit, prange

from draw_env import tiles
from draw_env.observation import OBSERVATION_SIZE, OFFSETS
from draw_env.rules import DRAW, NUM_ACTIONS, PASS, PROTECTED_BONEYARD

SEATS = 4
NUM_TILES = tiles.NUM_TILES
NUM_VALUES = tiles.NUM_VALUES

S_HANDS = 0
S_DEALT = 4
S_VOIDS = 8
S_SCORES = 12
S_POINTS = 16
S_PIPS = 20
S_BONEYARD = 24
S_LINE = 52
S_NUM_PLAYERS = 80
S_LEFT = 81
S_RIGHT = 82
S_CURRENT = 83
S_PASSES = 84
S_BONE_START = 85
S_BONE_POS = 86
S_BONE_END = 87
S_LINE_MASK = 88
S_LINE_COUNT = 89
S_OPENER = 90
S_HAND_NUMBER = 91
S_STATUS = 92
S_WINNER = 93
S_RNG = 94
STATE_SIZE = 96

PLAYING = 0
DOMINO = 1
BLOCKED = 2

#: Reward schemes, in the order of ``draw_env.rules.REWARDS``.
ZERO_SUM = 0
POINTS = 1
WIN_LOSS = 2

LINE_SEAT_SHIFT = 5
LINE_END_SHIFT = 7

_HOLDING = np.array(tiles.HOLDING, np.int64)
_LOW = np.array(tiles.LOW, np.int64)
_HIGH = np.array(tiles.HIGH, np.int64)
_PIPS_OF_CHUNK = np.array(tiles._PIPS_OF_CHUNK, np.int64)

#: Where each block of an observation starts (:data:`draw_env.observation.OFFSETS`), as numba
#: constants (compiled search reads observations through them too).
O_HAND = OFFSETS["hand"]
O_LINE = OFFSETS["line"]
O_LEFT = OFFSETS["left_end"]
O_RIGHT = OFFSETS["right_end"]
O_PLACED_BY = OFFSETS["placed_by"]
O_ORDER = OFFSETS["placement_order"]
O_SIZES = OFFSETS["hand_sizes"]
O_BONEYARD = OFFSETS["boneyard_size"]
O_CAN_DRAW = OFFSETS["can_draw"]
O_LACKS = OFFSETS["lacks"]
O_TO_ACT = OFFSETS["to_act"]
O_IN_PLAY = OFFSETS["in_play"]
O_PASSES = OFFSETS["passes_in_row"]
O_SCORES = OFFSETS["scores"]
O_TARGET = OFFSETS["target"]


# ---------------------------------------------------------------------- small helpers


@njit(cache=True, inline="always")
def popcount(mask: int) -> int:
    """Tiles in a mask (28-bit popcount)."""
    x = mask - ((mask >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return (x * 0x01010101 & 0xFFFFFFFF) >> 24


@njit(cache=True, inline="always")
def pips(mask: int) -> int:
    """The pip total of the tiles in a mask."""
    return (
        _PIPS_OF_CHUNK[0, mask & 127]
        + _PIPS_OF_CHUNK[1, (mask >> 7) & 127]
        + _PIPS_OF_CHUNK[2, (mask >> 14) & 127]
        + _PIPS_OF_CHUNK[3, (mask >> 21) & 127]
    )


@njit(cache=True, inline="always")
def target(num_players: int) -> int:
    """Match target: 100 points with 2 players, 61 with 3 or 4 (``DrawGame.target``)."""
    return 100 if num_players == 2 else 61


@njit(cache=True, inline="always")
def hand_size(num_players: int) -> int:
    """Tiles dealt to each player (``DrawGame.hand_size``)."""
    return 7 if num_players < 4 else 6


@njit(cache=True, inline="always")
def hand_pips(state: np.ndarray, seat: int) -> int:
    return pips(state[S_HANDS + seat])


@njit(cache=True, inline="always")
def boneyard_count(state: np.ndarray) -> int:
    return state[S_BONE_END] - state[S_BONE_POS]


# ---------------------------------------------------------------------- the generator


@njit(cache=True, inline="always")
def _next_u64(words: np.ndarray, slot: int) -> np.uint64:
    """splitmix64: the next 64 random bits of the generator whose state is ``words[slot]``."""
    x = np.uint64(words[slot]) + np.uint64(0x9E3779B97F4A7C15)
    words[slot] = np.int64(x)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def random_below_at(words: np.ndarray, slot: int, n: int) -> int:
    """A uniform integer in ``0..n-1`` from the generator ``words[slot]`` (any int64 array).

    Lemire's multiply-and-reject on 32 random bits: no bias, and the modulo that sets the
    rejection threshold is computed only in the rare case it may matter. Search keeps its own
    generator this way, apart from the game's.
    """
    bound = np.uint64(n)
    low_bits = np.uint64(0xFFFFFFFF)
    product = (_next_u64(words, slot) >> np.uint64(32)) * bound
    if (product & low_bits) < bound:
        threshold = np.uint64((1 << 32) % n)
        while (product & low_bits) < threshold:
            product = (_next_u64(words, slot) >> np.uint64(32)) * bound
    return np.int64(product >> np.uint64(32))


@njit(cache=True, inline="always")
def random_below(state: np.ndarray, n: int) -> int:
    """A uniform integer in ``0..n-1`` from the game's own generator (slot ``S_RNG``)."""
    return random_below_at(state, S_RNG, n)


# ---------------------------------------------------------------------- dealing


@njit(cache=True)
def init_state(state: np.ndarray, num_players: int, seed: int) -> None:
    """Clear ``state`` for a game of ``num_players`` and seed its generator with ``seed``."""
    state[:] = 0
    state[S_NUM_PLAYERS] = num_players
    state[S_RNG] = seed
    state[S_LEFT] = -1
    state[S_RIGHT] = -1
    state[S_WINNER] = -1


@njit(cache=True)
def _start_hand(state: np.ndarray, opener: int) -> None:
    for seat in range(SEATS):
        state[S_DEALT + seat] = state[S_HANDS + seat]
        state[S_VOIDS + seat] = 0
        state[S_POINTS + seat] = 0
        state[S_PIPS + seat] = 0
    state[S_LEFT] = -1
    state[S_RIGHT] = -1
    state[S_CURRENT] = opener
    state[S_OPENER] = opener
    state[S_PASSES] = 0
    state[S_LINE_MASK] = 0
    state[S_LINE_COUNT] = 0
    state[S_STATUS] = PLAYING
    state[S_WINNER] = -1


@njit(cache=True)
def deal_random(state: np.ndarray, opener: int) -> None:
    """Shuffle and deal a hand from the game's generator; ``opener=-1`` draws it by lottery.

    The lottery comes first, then a Fisher-Yates shuffle of the 28 tiles into the boneyard
    slots; the first ``hand_size`` tiles go to seat 0, the next to seat 1, and so on (as
    ``DrawGame.new_state`` cuts its deck); the rest is the boneyard. Scores are kept.
    """
    n = state[S_NUM_PLAYERS]
    if opener < 0:
        opener = random_below(state, n)
    deck = S_BONEYARD
    for t in range(NUM_TILES):
        state[deck + t] = t
    for i in range(NUM_TILES - 1, 0, -1):
        j = random_below(state, i + 1)
        swap = state[deck + i]
        state[deck + i] = state[deck + j]
        state[deck + j] = swap
    size = hand_size(n)
    for seat in range(SEATS):
        mask = 0
        if seat < n:
            for k in range(seat * size, (seat + 1) * size):
                mask |= 1 << state[deck + k]
        state[S_HANDS + seat] = mask
    state[S_BONE_START] = n * size
    state[S_BONE_POS] = n * size
    state[S_BONE_END] = NUM_TILES
    _start_hand(state, opener)


@njit(cache=True)
def deal_fixed(state: np.ndarray, hands: np.ndarray, boneyard: np.ndarray, boneyard_len: int, opener: int) -> None:
    """A hand from a fixed deal (not validated here: :mod:`draw_env.rules` validates options).

    Args:
        hands: int64 ``(4,)`` hand bitmasks by seat (zeros past ``num_players``).
        boneyard: int64 tile ids, ``boneyard[0]`` drawn first; the first ``boneyard_len`` count.
        opener: the seat that leads; -1 draws it by lottery from the game's generator.
    """
    if opener < 0:
        opener = random_below(state, state[S_NUM_PLAYERS])
    redeal(state, hands, boneyard, boneyard_len)
    _start_hand(state, opener)


@njit(cache=True)
def redeal(state: np.ndarray, hands: np.ndarray, boneyard: np.ndarray, boneyard_len: int) -> None:
    """Replace the hidden tiles of a hand in play (a determinization): hands and boneyard only.

    The line, ends, turn, passes, voids and scores stay. ``hands`` int64 ``(4,)`` bitmasks;
    ``boneyard[:boneyard_len]`` the tiles left to draw, next draw first. ``S_DEALT`` is not touched.
    """
    for seat in range(SEATS):
        state[S_HANDS + seat] = hands[seat]
    for k in range(boneyard_len):
        state[S_BONEYARD + k] = boneyard[k]
    state[S_BONE_START] = 0
    state[S_BONE_POS] = 0
    state[S_BONE_END] = boneyard_len


@njit(cache=True)
def new_match(state: np.ndarray, opener: int) -> None:
    """Zero the scores and deal the first hand of an episode (``opener=-1``: lottery)."""
    for seat in range(SEATS):
        state[S_SCORES + seat] = 0
    state[S_HAND_NUMBER] = 0
    deal_random(state, opener)


@njit(cache=True)
def next_hand(state: np.ndarray) -> None:
    """Deal the next hand of a match; the opener moves one seat clockwise (``DrawState.next_hand``)."""
    opener = (state[S_OPENER] + 1) % state[S_NUM_PLAYERS]  # twin of rules.next_opener
    state[S_HAND_NUMBER] += 1
    deal_random(state, opener)


# ---------------------------------------------------------------------- legal actions


@njit(cache=True, inline="always")
def _fitting(state: np.ndarray, hand: int) -> tuple[int, int]:
    left = state[S_LEFT]
    if left < 0:
        return hand, 0  # the opening tile is laid with action 2 * tile + LEFT
    return hand & _HOLDING[left], hand & _HOLDING[state[S_RIGHT]]


@njit(cache=True, inline="always")
def legal_mask(state: np.ndarray, out: np.ndarray) -> int:
    """Write the legal-action mask (int8 ``(58,)``, zeros once the hand is over); return the count
    (``DrawState.legal_actions``)."""
    if state[S_STATUS] != PLAYING:
        for a in range(NUM_ACTIONS):
            out[a] = 0
        return 0
    fits_left, fits_right = _fitting(state, state[S_HANDS + state[S_CURRENT]])
    for tile in range(NUM_TILES):
        out[2 * tile] = (fits_left >> tile) & 1
        out[2 * tile + 1] = (fits_right >> tile) & 1
    count = popcount(fits_left) + popcount(fits_right)
    can_draw = boneyard_count(state) > PROTECTED_BONEYARD
    out[DRAW] = 1 if can_draw else 0
    out[PASS] = 1 if count == 0 and not can_draw else 0
    return count + 1 if can_draw or count == 0 else count


@njit(cache=True)
def legal_actions(state: np.ndarray, out: np.ndarray) -> int:
    """Write the legal action ids ascending into ``out`` (at least 58 long); return how many
    (``DrawState.legal_actions``)."""
    if state[S_STATUS] != PLAYING:
        return 0
    fits_left, fits_right = _fitting(state, state[S_HANDS + state[S_CURRENT]])
    count = 0
    either = fits_left | fits_right
    for tile in range(NUM_TILES):
        if either >> tile & 1:
            if fits_left >> tile & 1:
                out[count] = 2 * tile
                count += 1
            if fits_right >> tile & 1:
                out[count] = 2 * tile + 1
                count += 1
    if boneyard_count(state) > PROTECTED_BONEYARD:
        out[count] = DRAW
        count += 1
    elif count == 0:
        out[0] = PASS
        count = 1
    return count


@njit(cache=True, inline="always")
def is_legal(state: np.ndarray, action: int) -> bool:
    """Whether ``action`` is legal for the player to act (``DrawState.is_legal``)."""
    if state[S_STATUS] != PLAYING or action < 0 or action >= NUM_ACTIONS:
        return False
    if action == DRAW:
        return boneyard_count(state) > PROTECTED_BONEYARD
    fits_left, fits_right = _fitting(state, state[S_HANDS + state[S_CURRENT]])
    if action == PASS:
        return boneyard_count(state) == PROTECTED_BONEYARD and (fits_left | fits_right) == 0
    fits = fits_right if action & 1 else fits_left
    return (fits >> (action >> 1) & 1) == 1


# ---------------------------------------------------------------------- playing and scoring


@njit(cache=True)
def _score(state: np.ndarray, status: int, winner: int) -> None:
    """Record the hand's result; ``winner=-1`` on a block means the lowest total decides
    (``DrawState._score_domino`` and ``DrawState._score_block``)."""
    n = state[S_NUM_PLAYERS]
    total = 0
    for seat in range(n):
        left = pips(state[S_HANDS + seat])
        state[S_PIPS + seat] = left
        state[S_POINTS + seat] = 0
        total += left
    if status == DOMINO:
        state[S_POINTS + winner] = total  # every pip left in the opponents' hands
    else:
        lowest = state[S_PIPS]
        winner = 0
        shared = False
        for seat in range(1, n):
            value = state[S_PIPS + seat]
            if value < lowest:
                lowest, winner, shared = value, seat, False
            elif value == lowest:
                shared = True
        if shared:
            winner = -1  # a shared lowest total scores nothing
        else:
            state[S_POINTS + winner] = total - 2 * lowest
    state[S_STATUS] = status
    state[S_WINNER] = winner
    for seat in range(n):
        state[S_SCORES + seat] += state[S_POINTS + seat]


@njit(cache=True, inline="always")
def apply_action(state: np.ndarray, action: int) -> int:
    """Play a legal ``action`` for the player to act (``DrawState.apply_action``); return the status after it.

    The action is not checked (search calls this in its inner loop): check with
    :func:`is_legal` or :func:`legal_mask` first. A draw keeps the turn.
    """
    n = state[S_NUM_PLAYERS]
    seat = state[S_CURRENT]
    if action == DRAW:
        tile = state[S_BONEYARD + state[S_BONE_POS]]
        state[S_BONE_POS] += 1
        state[S_HANDS + seat] |= 1 << tile
        return PLAYING
    if action == PASS:
        # A pass at the protected boneyard shows the passer holds neither open value.
        state[S_VOIDS + seat] |= (1 << state[S_LEFT]) | (1 << state[S_RIGHT])
        state[S_PASSES] += 1
        if state[S_PASSES] == n:
            _score(state, BLOCKED, -1)
            return BLOCKED
        state[S_CURRENT] = (seat + 1) % n
        return PLAYING
    tile = action >> 1
    end = action & 1
    low = _LOW[tile]
    high = _HIGH[tile]
    if state[S_LEFT] < 0:
        state[S_LEFT] = low
        state[S_RIGHT] = high
    elif end == 0:
        state[S_LEFT] = high if low == state[S_LEFT] else low
    else:
        state[S_RIGHT] = high if low == state[S_RIGHT] else low
    hand = state[S_HANDS + seat] & ~(1 << tile)
    state[S_HANDS + seat] = hand
    state[S_LINE_MASK] |= 1 << tile
    state[S_LINE + state[S_LINE_COUNT]] = tile | seat << LINE_SEAT_SHIFT | end << LINE_END_SHIFT
    state[S_LINE_COUNT] += 1
    state[S_PASSES] = 0
    if hand != 0:
        state[S_CURRENT] = (seat + 1) % n
        return PLAYING
    _score(state, DOMINO, seat)
    return DOMINO


@njit(cache=True)
def match_over(state: np.ndarray) -> bool:
    """The hand is over and someone is at or past the target (``DrawState.is_match_over``)."""
    if state[S_STATUS] == PLAYING:
        return False
    n = state[S_NUM_PLAYERS]
    goal = target(n)
    for seat in range(n):
        if state[S_SCORES + seat] >= goal:
            return True
    return False


@njit(cache=True)
def match_winner(state: np.ndarray) -> int:
    """The seat that won the match; -1 while it goes on or when the leaders tie
    (``DrawState.match_winner``)."""
    if not match_over(state):
        return -1
    n = state[S_NUM_PLAYERS]
    best = state[S_SCORES]
    winner = 0
    for seat in range(1, n):
        value = state[S_SCORES + seat]
        if value > best:
            best, winner = value, seat
        elif value == best:
            winner = -1
    if winner >= 0:
        for seat in range(n):
            if seat != winner and state[S_SCORES + seat] == best:
                return -1
    return winner


@njit(cache=True)
def hand_rewards(state: np.ndarray, scheme: int, episode_over: bool, out: np.ndarray) -> None:
    """The AEC environment's rewards at the step a hand ends, by seat, into ``out`` (float32/64).

    The compiled twin of :func:`draw_env.rules.hand_rewards` (the rules' definition of each
    scheme), checked against it by the differential tests.
    """
    n = state[S_NUM_PLAYERS]
    if scheme == WIN_LOSS:
        winner = match_winner(state) if episode_over else -1
        for seat in range(n):
            if winner < 0:
                out[seat] = 0.0
            elif seat == winner:
                out[seat] = 1.0
            else:
                out[seat] = -1.0 / (n - 1)
        return
    total = 0
    for seat in range(n):
        total += state[S_POINTS + seat]
    for seat in range(n):
        points = state[S_POINTS + seat]
        if scheme == POINTS:
            out[seat] = float(points)
        else:
            out[seat] = points - (total - points) / (n - 1)


# ---------------------------------------------------------------------- observations


@njit(cache=True, inline="always")
def write_observation(state: np.ndarray, player: int, match: bool, out: np.ndarray) -> None:
    """``player``'s observation of ``state`` (the AEC layout, :data:`draw_env.observation.BLOCKS`)
    written into ``out``, float32 ``(258,)``; ``match`` fills the scores and target blocks.

    Written straight from the compact state: a zero fill and a few dozen stores, faster than
    gathering from an absolute table and with nothing to keep up to date between steps.
    """
    for j in range(OBSERVATION_SIZE):
        out[j] = 0.0
    n = state[S_NUM_PLAYERS]
    hand = state[S_HANDS + player]
    for tile in range(NUM_TILES):
        if hand >> tile & 1:
            out[O_HAND + tile] = 1.0
    for k in range(state[S_LINE_COUNT]):
        entry = state[S_LINE + k]
        tile = entry & 31
        relative = ((entry >> LINE_SEAT_SHIFT) & 3) - player
        if relative < 0:  # a compare is cheaper than a modulo here
            relative += n
        out[O_LINE + tile] = 1.0
        out[O_PLACED_BY + relative * NUM_TILES + tile] = 1.0
        out[O_ORDER + tile] = k + 1
    left = state[S_LEFT]
    if left >= 0:
        out[O_LEFT + left] = 1.0
        out[O_RIGHT + state[S_RIGHT]] = 1.0
    for relative in range(n):
        seat = player + relative
        if seat >= n:
            seat -= n
        out[O_SIZES + relative] = popcount(state[S_HANDS + seat])
        voids = state[S_VOIDS + seat]
        for value in range(NUM_VALUES):
            if voids >> value & 1:
                out[O_LACKS + relative * NUM_VALUES + value] = 1.0
        out[O_IN_PLAY + relative] = 1.0
        if match:
            out[O_SCORES + relative] = state[S_SCORES + seat]
    bones = boneyard_count(state)
    out[O_BONEYARD] = bones
    out[O_CAN_DRAW] = 1.0 if bones > PROTECTED_BONEYARD else 0.0
    if state[S_STATUS] == PLAYING:
        to_act = state[S_CURRENT] - player
        out[O_TO_ACT + (to_act + n if to_act < 0 else to_act)] = 1.0
    out[O_PASSES] = state[S_PASSES]
    if match:
        out[O_TARGET] = target(n)


# ---------------------------------------------------------------------- batched kernels


@njit(cache=True)
def find_illegal(states: np.ndarray, rows: np.ndarray, actions: np.ndarray, finished: np.ndarray,
                 bad: np.ndarray) -> int:
    """Mark ``bad[k]`` where game ``rows[k]`` (not finished) is given an illegal or out-of-range
    ``actions[k]``; return how many."""
    count = 0
    for k in range(rows.shape[0]):
        i = rows[k]
        bad[k] = (not finished[i]) and not is_legal(states[i], actions[k])
        count += bad[k]
    return count


@njit(cache=True, inline="always")
def _fresh_infos(i: int, state: np.ndarray, hand_points: np.ndarray, hand_pips_out: np.ndarray,
                 score_out: np.ndarray, blocked: np.ndarray) -> None:
    for seat in range(state[S_NUM_PLAYERS]):
        hand_points[i, seat] = 0
        hand_pips_out[i, seat] = pips(state[S_HANDS + seat])
        score_out[i, seat] = state[S_SCORES + seat]
    blocked[i] = False


@njit(cache=True, inline="always")
def _write_outputs(k: int, state: np.ndarray, finished: bool, match: bool, observe: bool, obs: np.ndarray,
                   mask: np.ndarray, current: np.ndarray) -> None:
    seat = state[S_CURRENT]
    current[k] = seat
    if observe:
        write_observation(state, seat, match, obs[k])
    if finished:
        for a in range(NUM_ACTIONS):
            mask[k, a] = 0
    else:
        legal_mask(state, mask[k])


def _step_kernel(loop: type) -> Callable[..., None]:
    """The batched step compiled to loop over the games with ``loop``: ``prange`` (numba threads)
    or ``range`` (one thread). One body for both kernels, each cached apart (numba keys its cache
    on the closure's ``loop``)."""

    @njit(cache=True, parallel=loop is prange)
    def step(states: np.ndarray, rows: np.ndarray, actions: np.ndarray, match: bool, scheme: int, autoreset: bool,
             observe: bool, finished: np.ndarray, hand_points: np.ndarray, hand_pips_out: np.ndarray,
             score_out: np.ndarray, blocked: np.ndarray, obs: np.ndarray, mask: np.ndarray, current: np.ndarray,
             rewards: np.ndarray, terminated: np.ndarray, hand_ended: np.ndarray) -> None:
        """Step games ``rows`` (distinct, int64 ``(k,)``) with legal ``actions`` ``(k,)``.

        Updates in place, by game: ``states``, ``finished`` (games ended without auto-reset, whose
        actions are ignored) and the infos ``hand_points``, ``hand_pips_out``, ``score_out``
        ``(N, n)`` and ``blocked`` ``(N,)``. Writes by row ``k``: ``obs`` ``(k, 258)`` float32
        (skipped when ``observe`` is False), ``mask`` ``(k, 58)`` int8, ``current`` ``(k,)``,
        ``rewards`` ``(k, n)`` float32, ``terminated`` ``(k,)`` and ``hand_ended`` ``(k,)`` (a hand
        ended at this step; in a match also when the episode goes on). Check the actions first
        with :func:`find_illegal`.
        """
        for k in loop(rows.shape[0]):
            i = rows[k]
            state = states[i]
            n = state[S_NUM_PLAYERS]
            for seat in range(n):
                rewards[k, seat] = 0.0
            hand_ended[k] = False
            # An ended game stays ended: zero rewards, infos kept (pgx, AEC).
            terminated[k] = finished[i]
            if not finished[i]:
                status = apply_action(state, actions[k])
                if status == PLAYING:
                    _fresh_infos(i, state, hand_points, hand_pips_out, score_out, blocked)
                else:
                    for s in range(n):
                        hand_points[i, s] = state[S_POINTS + s]
                        hand_pips_out[i, s] = state[S_PIPS + s]
                        score_out[i, s] = state[S_SCORES + s]
                    blocked[i] = status == BLOCKED
                    hand_ended[k] = True
                    episode_over = (not match) or match_over(state)
                    hand_rewards(state, scheme, episode_over, rewards[k])
                    if episode_over:
                        terminated[k] = True
                        if autoreset:
                            new_match(state, -1)
                        else:
                            finished[i] = True
                    else:
                        next_hand(state)
            _write_outputs(k, state, finished[i], match, observe, obs, mask, current)

    return step


#: The batched step with numba threads over the games (its docstring gives the arguments).
step_batch = _step_kernel(prange)
#: The batched step on one thread (on a busy machine or for small batches, threads cost more).
step_batch_serial = _step_kernel(range)


@njit(cache=True)
def masks_of(states: np.ndarray, finished: np.ndarray, mask: np.ndarray) -> None:
    """Every game's legal-action mask into ``mask`` (N, 58); zeros where ``finished``."""
    for i in range(states.shape[0]):
        if finished[i]:
            for a in range(NUM_ACTIONS):
                mask[i, a] = 0
        else:
            legal_mask(states[i], mask[i])


@njit(cache=True)
def reset_batch(
    states: np.ndarray,
    match: bool,
    scores: np.ndarray,
    fixed: np.ndarray,
    fixed_hands: np.ndarray,
    fixed_boneyard: np.ndarray,
    fixed_boneyard_len: np.ndarray,
    openers: np.ndarray,
    finished: np.ndarray,
    hand_points: np.ndarray,
    hand_pips_out: np.ndarray,
    score_out: np.ndarray,
    blocked: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    current: np.ndarray,
) -> None:
    """Start a new episode in every game: a fixed deal where ``fixed[i]``, else a random one.

    ``scores (N, 4)`` are the starting scores, ``openers (N,)`` the openers (-1: lottery).
    """
    for i in range(states.shape[0]):
        state = states[i]
        for seat in range(SEATS):
            state[S_SCORES + seat] = scores[i, seat]
        state[S_HAND_NUMBER] = 0
        if fixed[i]:
            deal_fixed(state, fixed_hands[i], fixed_boneyard[i], fixed_boneyard_len[i], openers[i])
        else:
            deal_random(state, openers[i])
        finished[i] = False
        _fresh_infos(i, state, hand_points, hand_pips_out, score_out, blocked)
        _write_outputs(i, state, False, match, True, obs, mask, current)


@njit(cache=True)
def observe_batch(states: np.ndarray, seat: int, match: bool, out: np.ndarray) -> None:
    """Every game's observation from absolute seat ``seat`` into ``out`` (N, 258)."""
    for i in range(states.shape[0]):
        write_observation(states[i], seat, match, out[i])


@njit(cache=True)
def observe_seats(states: np.ndarray, seats: np.ndarray, match: bool, out: np.ndarray) -> None:
    """Game ``i``'s observation from absolute seat ``seats[i]`` into ``out[i]`` (N, 258)."""
    for i in range(states.shape[0]):
        write_observation(states[i], seats[i], match, out[i])


@njit(cache=True)
def random_actions(words: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    """A uniform legal action per row of ``mask`` (N, 58) into ``out`` (N,), row ``i`` drawn from
    the generator ``words[i]`` (int64 ``(N,)``, e.g. seeded with ``SeedSequence.generate_state``).

    Rows with no legal action (ended games) get 0, which their step ignores.
    """
    for i in range(mask.shape[0]):
        count = 0
        for a in range(NUM_ACTIONS):
            count += mask[i, a]
        out[i] = 0
        if count == 0:
            continue
        pick = random_below_at(words, i, count)
        for a in range(NUM_ACTIONS):
            if mask[i, a]:
                if pick == 0:
                    out[i] = a
                    break
                pick -= 1


@njit(cache=True, parallel=True)
def play_random(states: np.ndarray, steps: int, match: bool) -> int:
    """The batched core, no observations: ``steps`` random legal decisions in every game.

    Ended episodes are dealt anew; returns the decisions made (``steps * N``). For benchmarks and
    as a template for compiled rollouts.
    """
    n_games = states.shape[0]
    for i in prange(n_games):
        state = states[i]
        legal = np.empty(NUM_ACTIONS, np.int64)
        for _ in range(steps):
            count = legal_actions(state, legal)
            status = apply_action(state, legal[random_below(state, count)])
            if status != PLAYING:
                if (not match) or match_over(state):
                    new_match(state, -1)
                else:
                    next_hand(state)
    return steps * n_games


def deal_of(state: np.ndarray) -> dict:
    """The deal of ``state``'s current hand as reset options (``hands``, ``boneyard``, ``opener``): hands, boneyard, opener."""
    n = int(state[S_NUM_PLAYERS])
    hands = [list(tiles.tiles_in(int(state[S_DEALT + seat]))) for seat in range(n)]
    boneyard = [int(t) for t in state[S_BONEYARD + state[S_BONE_START] : S_BONEYARD + state[S_BONE_END]]]
    return {"hands": hands, "boneyard": boneyard, "opener": int(state[S_OPENER])}
