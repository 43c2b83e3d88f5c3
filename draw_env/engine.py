"""Compiled rules kernels: the rules of :mod:`draw_env.rules` as numba functions on NumPy arrays.

Three users share these kernels: the batched environment (:mod:`draw_env.vector`, which loops over
games inside compiled code), compiled search, which copies one game's state, plays it out and
reads the result, and the enumerated game tree (:mod:`draw_env.exact.game_tree`), which plays every
action of every deal of a small variant. :mod:`draw_env.rules` stays the readable reference; the differential tests
(``tests/test_engine_differential.py``) check every kernel against it over many random games and
variants. The kernels stay in one module, longer than 600 lines, on purpose: they are the rules
once more, calling one another and sharing one state layout, and split across files they would
spread one rulebook over several without making any part of it usable alone.

State layout
------------
One game is one ``int64`` array (a batch is ``(N, size)``; row ``i`` is game ``i``): 40 fixed
slots, then ``T`` boneyard slots and ``T`` line slots, ``T`` the variant's tiles, so
:func:`state_size` slots (:data:`STATE_SIZE`, 96, in the seeds' game; :data:`MAX_STATE_SIZE`,
150, holds any variant). A state that keeps the hand's history, for information states, has
``ceil(E / 16)`` more slots (:func:`history_state_size`, ``E`` = ``DrawGame.max_hand_actions``).
Rows only as long as the variant needs keep the memory a batched step
sweeps small (rows sized for 55 tiles would make a step of 4,096 games of the seeds' game a
quarter slower). Copy a state with ``state.copy()`` or ``dst[:] = src``. Seats are absolute;
slots of seats past ``num_players`` stay zero. The variant (the set, the hand size, the protected
tiles) lives in its own slots, so one compiled kernel plays every variant.

==================  =====  ==============================================================
slot                size   meaning
==================  =====  ==============================================================
``S_HANDS``         4      hand of each seat, bitmask over tile ids (bit ``t`` = tile ``t``)
``S_VOIDS``         4      mask per seat of the values it showed it lacks by passing
``S_NUM_PLAYERS``   1      2, 3 or 4
``S_LEFT``          1      open value at the left end, -1 on an empty line
``S_RIGHT``         1      open value at the right end, -1 on an empty line
``S_CURRENT``       1      seat to act (the last mover once the hand is over)
``S_PASSES``        1      passes since the last placement
``S_BONE_POS``      1      boneyard read position; tiles left = ``S_BONE_END - S_BONE_POS``
``S_BONE_END``      1      one past the last boneyard slot
``S_LINE_MASK``     1      bitmask of the tiles on the line
``S_LINE_COUNT``    1      tiles placed
``S_STATUS``        1      :data:`PLAYING`, :data:`DOMINO` or :data:`BLOCKED`
``S_MAX_PIP``       1      the variant's set: double-``max_pip`` (2 to 9)
``S_NUM_TILES``     1      the set's tiles, T = (max_pip+1)(max_pip+2)/2; actions 2T, 2T+1
``S_PROTECTED``     1      boneyard tiles never drawn
``S_HAND_SIZE``     1      tiles a random deal gives each seat
``S_BONE_START``    1      first boneyard slot of the deal (``deal_of`` reads the deal from it)
``S_OPENER``        1      this hand's opener
``S_HAND_NUMBER``   1      hands dealt before this one in the match
``S_WINNER``        1      the seat that scored, -1 for none (or while playing)
``S_RNG``           1      this game's splitmix64 generator state (the bits of a uint64)
``S_EVENTS``        1      actions recorded in the history slots this hand (0 without them)
``S_SCORES``        4      match scores, the finished hand included
``S_POINTS``        4      points each seat scored in the hand (valid once the hand is over)
``S_DEALT``         4      each hand as dealt at the start of the hand (for records)
``S_BONEYARD``      T      boneyard tile ids; the next draw is ``S_BONEYARD + state[S_BONE_POS]``
``line_start``      T      placements in order, ``tile | seat << 6 | end << 8``, from slot
                           ``S_BONEYARD + T`` (:data:`S_LINE` in the seeds' game)
``history_start``   E/16   optional: the hand's actions in order, from slot ``S_BONEYARD + 2T``,
                           16 to a slot, 4 bits each: ``4 * seat + kind`` (``record_event``)
==================  =====  ==============================================================

Every kernel is ``@njit(cache=True)``, callable from Python and from other numba code; the
kernel API (single-game, observation and batched kernels) is listed on the docs page "The
compiled engine" (``docs/engine.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numba import njit, prange
from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros

from draw_env import tiles
from draw_env.observation import DEFAULT_LAYOUT, EVENT_KINDS, Block, Layout, layout
from draw_env.rules import MIN_PLAYERS, PROTECTED_BONEYARD, DrawGame

#: The index of a mask's lowest set bit (numba's intrinsic; numba code only).
trailing_zeros: Callable[[int], int] = _trailing_zeros  # type: ignore[assignment]

SEATS = 4
#: The seeds' set (double-six); a variant's is in its state (``S_NUM_TILES``, ``S_MAX_PIP``).
NUM_TILES = tiles.NUM_TILES
NUM_VALUES = tiles.NUM_VALUES
#: The largest variant's (double-nine): what the state's slots, the tables and the scratch
#: arrays of the kernels are sized for.
MAX_TILES = tiles.tile_set(tiles.MAX_PIP).num_tiles
MAX_VALUES = tiles.MAX_PIP + 1
MAX_ACTIONS = 2 * MAX_TILES + 2

S_HANDS = 0
S_VOIDS = 4
S_NUM_PLAYERS = 8
S_LEFT = 9
S_RIGHT = 10
S_CURRENT = 11
S_PASSES = 12
S_BONE_POS = 13
S_BONE_END = 14
S_LINE_MASK = 15
S_LINE_COUNT = 16
S_STATUS = 17
S_MAX_PIP = 18
S_NUM_TILES = 19
S_PROTECTED = 20
S_HAND_SIZE = 21
S_BONE_START = 22
S_OPENER = 23
S_HAND_NUMBER = 24
S_WINNER = 25
S_RNG = 26
S_EVENTS = 27
S_SCORES = 28
S_POINTS = 32
S_DEALT = 36
S_BONEYARD = 40
#: The line of the seeds' game: a variant's starts after its T boneyard slots (:func:`line_start`).
S_LINE = S_BONEYARD + NUM_TILES
#: Slots of a seeds'-game state (96); a variant's: :func:`state_size`.
STATE_SIZE = S_BONEYARD + 2 * NUM_TILES
#: Slots of the largest variant's state (the double-nine set: 150).
MAX_STATE_SIZE = S_BONEYARD + 2 * MAX_TILES

PLAYING = 0
DOMINO = 1
BLOCKED = 2

#: Reward schemes, in the order of ``draw_env.rules.REWARDS``.
ZERO_SUM = 0
POINTS = 1
WIN_LOSS = 2

#: A line entry: the tile id in the low 6 bits (up to 54), then the seat, then the end.
LINE_TILE_MASK = 63
LINE_SEAT_SHIFT = 6
LINE_END_SHIFT = 8
#: The kinds of :data:`draw_env.observation.EVENT_KINDS` (a placement's is its end, ``action & 1``).
_KINDS = len(EVENT_KINDS)
_KIND_DRAW, _KIND_PASS = EVENT_KINDS.index("draw"), EVENT_KINDS.index("pass")
#: Bit 0 of each of a history slot's 16 nibbles, and the kind's two bits of each.
_NIBBLES = 0x1111111111111111
_KIND_BITS = 0x3333333333333333


#: Where each block of a seeds'-game observation starts (:data:`draw_env.observation.OFFSETS`), as
#: numba constants for compiled search, which reads observations of the seeds' game.
_OFFSETS = DEFAULT_LAYOUT.offsets
O_HAND = _OFFSETS["hand"]
O_LINE = _OFFSETS["line"]
O_LEFT = _OFFSETS["left_end"]
O_RIGHT = _OFFSETS["right_end"]
O_PLACED_BY = _OFFSETS["placed_by"]
O_ORDER = _OFFSETS["placement_order"]
O_SIZES = _OFFSETS["hand_sizes"]
O_BONEYARD = _OFFSETS["boneyard_size"]
O_CAN_DRAW = _OFFSETS["can_draw"]
O_LACKS = _OFFSETS["lacks"]
O_TO_ACT = _OFFSETS["to_act"]
O_IN_PLAY = _OFFSETS["in_play"]
O_PASSES = _OFFSETS["passes_in_row"]
O_SCORES = _OFFSETS["scores"]
O_TARGET = _OFFSETS["target"]


def _tables() -> tuple[np.ndarray, ...]:
    """Every set's lookup tables, indexed by ``max_pip`` first (rows below 2 stay zero)."""
    holding = np.zeros((tiles.MAX_PIP + 1, MAX_VALUES), np.int64)
    low = np.zeros((tiles.MAX_PIP + 1, MAX_TILES), np.int64)
    high = np.zeros((tiles.MAX_PIP + 1, MAX_TILES), np.int64)
    # Pip totals of masks, read 7 bits at a time: [max_pip, chunk, bits].
    chunks = -(-MAX_TILES // 7)
    pips_of_chunk = np.zeros((tiles.MAX_PIP + 1, chunks, 128), np.int64)
    for max_pip in range(tiles.MIN_PIP, tiles.MAX_PIP + 1):
        tile_set = tiles.tile_set(max_pip)
        holding[max_pip, : tile_set.num_values] = tile_set.holding
        low[max_pip, : tile_set.num_tiles] = tile_set.low
        high[max_pip, : tile_set.num_tiles] = tile_set.high
        pips = np.zeros(chunks * 7, np.int64)
        pips[: tile_set.num_tiles] = tile_set.pips
        bits = (np.arange(128)[:, None] >> np.arange(7)) & 1
        pips_of_chunk[max_pip] = pips.reshape(chunks, 7) @ bits.T
    return holding, low, high, pips_of_chunk


_HOLDING, _LOW, _HIGH, _PIPS_OF_CHUNK = _tables()


# ---------------------------------------------------------------------- small helpers


@njit(cache=True, inline="always")
def popcount(mask: int) -> int:
    """Tiles in a mask (a 64-bit popcount; masks hold at most 55 bits, so the sum stays positive)."""
    x = mask - ((mask >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56


@njit(cache=True, inline="always")
def pips(mask: int, max_pip: int) -> int:
    """The pip total of the tiles in a mask of the double-``max_pip`` set."""
    table = _PIPS_OF_CHUNK[max_pip]
    total = 0
    chunk = 0
    while mask:
        total += table[chunk, mask & 127]
        mask >>= 7
        chunk += 1
    return total


@njit(cache=True, inline="always")
def target(num_players: int) -> int:
    """Match target: 100 points with 2 players, 61 with 3 or 4 (``DrawGame.target``)."""
    return 100 if num_players == 2 else 61


@njit(cache=True, inline="always")
def hand_size(num_players: int) -> int:
    """Tiles dealt to each player in the seeds' game (``DrawGame.hand_size`` with the default)."""
    return 7 if num_players < 4 else 6


@njit(cache=True, inline="always")
def hand_pips(state: np.ndarray, seat: int) -> int:
    return pips(state[S_HANDS + seat], state[S_MAX_PIP])


@njit(cache=True, inline="always")
def line_start(state: np.ndarray) -> int:
    """The first line slot: after the variant's T boneyard slots (:data:`S_LINE` in the seeds' game)."""
    return S_BONEYARD + state[S_NUM_TILES]


def state_size(max_pip: int) -> int:
    """Slots of a state of the double-``max_pip`` set: the fixed slots, then T boneyard and T line slots."""
    return S_BONEYARD + 2 * tiles.tile_set(max_pip).num_tiles


def history_state_size(game: DrawGame) -> int:
    """Slots of a state of ``game`` that keeps the hand's history (for information states):
    :func:`state_size`, then one slot per 16 actions a hand can take (:func:`record_event`)."""
    return state_size(game.max_pip) + -(-game.max_hand_actions // 16)


@njit(cache=True, inline="always")
def history_start(state: np.ndarray) -> int:
    """The first history slot: after the variant's T boneyard and T line slots."""
    return S_BONEYARD + 2 * state[S_NUM_TILES]


@njit(cache=True, inline="always")
def max_hand_actions(state: np.ndarray) -> int:
    """The most actions a hand of the state's variant takes (``DrawGame.max_hand_actions``)."""
    n = state[S_NUM_PLAYERS]
    free = state[S_NUM_TILES] - state[S_PROTECTED]
    return n * (free - n) + (free - n * state[S_HAND_SIZE]) + 1


@njit(cache=True, inline="always")
def boneyard_count(state: np.ndarray) -> int:
    return state[S_BONE_END] - state[S_BONE_POS]


@njit(cache=True, inline="always")
def draw_action(state: np.ndarray) -> int:
    """The variant's draw action, 2T (:data:`draw_env.rules.DRAW` in the seeds' game); passing is 2T + 1."""
    return 2 * state[S_NUM_TILES]


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
def init_variant_state(state: np.ndarray, num_players: int, seed: int, max_pip: int, dealt: int,
                       protected: int) -> None:
    """Clear ``state`` for a game of ``num_players`` in a variant and seed its generator with ``seed``.

    The variant is not checked here (``draw_env.rules.DrawGame`` checks it): the double-``max_pip``
    set, ``dealt`` tiles to each seat by a random deal, ``protected`` boneyard tiles never drawn.
    """
    state[:] = 0
    state[S_NUM_PLAYERS] = num_players
    state[S_RNG] = seed
    state[S_LEFT] = -1
    state[S_RIGHT] = -1
    state[S_WINNER] = -1
    state[S_MAX_PIP] = max_pip
    state[S_NUM_TILES] = (max_pip + 1) * (max_pip + 2) // 2
    state[S_HAND_SIZE] = dealt
    state[S_PROTECTED] = protected


@njit(cache=True)
def init_state(state: np.ndarray, num_players: int, seed: int) -> None:
    """Clear ``state`` for a game of ``num_players`` in the seeds' variant and seed its generator."""
    init_variant_state(state, num_players, seed, tiles.DEFAULT_MAX_PIP, hand_size(num_players), PROTECTED_BONEYARD)


@njit(cache=True)
def _start_hand(state: np.ndarray, opener: int) -> None:
    for seat in range(SEATS):
        state[S_DEALT + seat] = state[S_HANDS + seat]
        state[S_VOIDS + seat] = 0
        state[S_POINTS + seat] = 0
    state[S_LEFT] = -1
    state[S_RIGHT] = -1
    state[S_CURRENT] = opener
    state[S_OPENER] = opener
    state[S_PASSES] = 0
    state[S_LINE_MASK] = 0
    state[S_LINE_COUNT] = 0
    state[S_STATUS] = PLAYING
    state[S_WINNER] = -1
    state[S_EVENTS] = 0


@njit(cache=True)
def deal_random(state: np.ndarray, opener: int) -> None:
    """Shuffle and deal a hand from the game's generator; ``opener=-1`` draws it by lottery.

    The lottery comes first, then a Fisher-Yates shuffle of the set's T tiles into the boneyard
    slots; the first ``hand_size`` tiles go to seat 0, the next to seat 1, and so on (as
    ``DrawGame.deal`` cuts its deck); the rest is the boneyard. Scores are kept.
    """
    n = state[S_NUM_PLAYERS]
    if opener < 0:
        opener = random_below(state, n)
    deck = S_BONEYARD
    num_tiles = state[S_NUM_TILES]
    for t in range(num_tiles):
        state[deck + t] = t
    for i in range(num_tiles - 1, 0, -1):
        j = random_below(state, i + 1)
        swap = state[deck + i]
        state[deck + i] = state[deck + j]
        state[deck + j] = swap
    size = state[S_HAND_SIZE]
    for seat in range(SEATS):
        mask = 0
        if seat < n:
            for k in range(seat * size, (seat + 1) * size):
                mask |= 1 << state[deck + k]
        state[S_HANDS + seat] = mask
    state[S_BONE_START] = n * size
    state[S_BONE_POS] = n * size
    state[S_BONE_END] = num_tiles
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
    holding = _HOLDING[state[S_MAX_PIP]]
    return hand & holding[left], hand & holding[state[S_RIGHT]]


@njit(cache=True, inline="always")
def legal_mask(state: np.ndarray, out: np.ndarray) -> int:
    """Write the legal-action mask (int8 ``(2T+2,)``, zeros once the hand is over) into ``out``;
    return the count (``DrawState.legal_actions``)."""
    num_tiles = state[S_NUM_TILES]
    if state[S_STATUS] != PLAYING:
        for a in range(2 * num_tiles + 2):
            out[a] = 0
        return 0
    fits_left, fits_right = _fitting(state, state[S_HANDS + state[S_CURRENT]])
    for tile in range(num_tiles):
        out[2 * tile] = (fits_left >> tile) & 1
        out[2 * tile + 1] = (fits_right >> tile) & 1
    count = popcount(fits_left) + popcount(fits_right)
    can_draw = boneyard_count(state) > state[S_PROTECTED]
    out[2 * num_tiles] = 1 if can_draw else 0
    out[2 * num_tiles + 1] = 1 if count == 0 and not can_draw else 0
    return count + 1 if can_draw or count == 0 else count


@njit(cache=True, inline="always")
def write_placements(fits_left: int, fits_right: int, out: np.ndarray) -> int:
    """Write the placements of the tiles of ``fits_left`` at the left end and of ``fits_right`` at
    the right end into ``out``, ascending (``2 * tile + end``); return how many."""
    count = 0
    either = fits_left | fits_right
    while either:
        tile = trailing_zeros(either)
        if fits_left >> tile & 1:
            out[count] = 2 * tile
            count += 1
        if fits_right >> tile & 1:
            out[count] = 2 * tile + 1
            count += 1
        either &= either - 1
    return count


@njit(cache=True)
def legal_actions(state: np.ndarray, out: np.ndarray) -> int:
    """Write the legal action ids ascending into ``out`` (at least 2T+2 long; :data:`MAX_ACTIONS`
    fits every variant); return how many (``DrawState.legal_actions``)."""
    if state[S_STATUS] != PLAYING:
        return 0
    fits_left, fits_right = _fitting(state, state[S_HANDS + state[S_CURRENT]])
    count = write_placements(fits_left, fits_right, out)
    if boneyard_count(state) > state[S_PROTECTED]:
        out[count] = draw_action(state)
        count += 1
    elif count == 0:
        out[0] = draw_action(state) + 1
        count = 1
    return count


@njit(cache=True, inline="always")
def is_legal(state: np.ndarray, action: int) -> bool:
    """Whether ``action`` is legal for the player to act (``DrawState.is_legal``)."""
    draw = draw_action(state)
    if state[S_STATUS] != PLAYING or action < 0 or action > draw + 1:
        return False
    if action == draw:
        return boneyard_count(state) > state[S_PROTECTED]
    fits_left, fits_right = _fitting(state, state[S_HANDS + state[S_CURRENT]])
    if action == draw + 1:
        return boneyard_count(state) == state[S_PROTECTED] and (fits_left | fits_right) == 0
    fits = fits_right if action & 1 else fits_left
    return (fits >> (action >> 1) & 1) == 1


# ---------------------------------------------------------------------- playing and scoring


@njit(cache=True)
def _score(state: np.ndarray, status: int, winner: int) -> None:
    """Record the hand's result; ``winner=-1`` on a block means the lowest total decides
    (``DrawState._score_domino`` and ``DrawState._score_block``)."""
    n = state[S_NUM_PLAYERS]
    max_pip = state[S_MAX_PIP]
    total = 0
    for seat in range(n):
        total += pips(state[S_HANDS + seat], max_pip)
        state[S_POINTS + seat] = 0
    if status == DOMINO:
        state[S_POINTS + winner] = total  # every pip left in the opponents' hands
    else:
        lowest = pips(state[S_HANDS], max_pip)
        winner = 0
        shared = False
        for seat in range(1, n):
            value = pips(state[S_HANDS + seat], max_pip)
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
    draw = draw_action(state)
    if action == draw:
        tile = state[S_BONEYARD + state[S_BONE_POS]]
        state[S_BONE_POS] += 1
        state[S_HANDS + seat] |= 1 << tile
        return PLAYING
    if action == draw + 1:
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
    max_pip = state[S_MAX_PIP]
    low = _LOW[max_pip, tile]
    high = _HIGH[max_pip, tile]
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
    state[line_start(state) + state[S_LINE_COUNT]] = tile | seat << LINE_SEAT_SHIFT | end << LINE_END_SHIFT
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
#
# The observation vector is derived from the blocks of draw_env.observation (Layout): each block
# names the fact its entries read and how. Below, each fact of observation.FACTS is one compiled
# function. Most give a number, fact(state, seat, match) with ``seat`` absolute (facts that are
# not per seat ignore it): a "bit" block reads it as a mask, a "one_hot" block as a value (-1: no
# entry), a "value" block as a number. The facts of the placements (who placed each tile, in
# which order) write their block themselves, fact(state, player, match, out, offset, width), from
# ``player``'s view: one pass over the line serves every seat, where a mask per seat would take a
# pass per seat. Facts are branch-free where the branch would go either way from seat to seat (a
# mispredicted branch per seat costs more than the rest of the fact).
#
# The writer is generated from the blocks (one statement per block, the per-seat blocks in one
# loop over the seats) and compiled once; where each block starts comes from a table of every
# set's offsets, read with the set of the state. Generated rather than interpreted block by block
# at run time, and given the seeds' game's offsets as constants (numba folds them into the
# code), it is as fast as a hand-written writer.


@njit(cache=True, inline="always")
def _fact_hand(state: np.ndarray, seat: int, match: bool) -> int:
    return state[S_HANDS + seat]


@njit(cache=True, inline="always")
def _fact_line(state: np.ndarray, seat: int, match: bool) -> int:
    return state[S_LINE_MASK]


@njit(cache=True, inline="always")
def _fact_left(state: np.ndarray, seat: int, match: bool) -> int:
    return state[S_LEFT]


@njit(cache=True, inline="always")
def _fact_right(state: np.ndarray, seat: int, match: bool) -> int:
    return state[S_RIGHT]


@njit(cache=True, inline="always")
def _write_placed(state: np.ndarray, player: int, match: bool, out: np.ndarray, offset: int, width: int) -> None:
    """Each placed tile's bit in the row of its placer, seats relative to ``player``."""
    n = state[S_NUM_PLAYERS]
    first = line_start(state)
    for k in range(state[S_LINE_COUNT]):
        entry = state[first + k]
        relative = ((entry >> LINE_SEAT_SHIFT) & 3) - player
        relative += n * (relative < 0)
        out[offset + relative * width + (entry & LINE_TILE_MASK)] = 1.0


@njit(cache=True, inline="always")
def _write_order(state: np.ndarray, player: int, match: bool, out: np.ndarray, offset: int, width: int) -> None:
    """Each placed tile's place in the line, from 1."""
    first = line_start(state)
    for k in range(state[S_LINE_COUNT]):
        out[offset + (state[first + k] & LINE_TILE_MASK)] = k + 1


@njit(cache=True, inline="always")
def _fact_sizes(state: np.ndarray, seat: int, match: bool) -> int:
    return popcount(state[S_HANDS + seat])


@njit(cache=True, inline="always")
def _fact_bones(state: np.ndarray, seat: int, match: bool) -> int:
    return boneyard_count(state)


@njit(cache=True, inline="always")
def _fact_can_draw(state: np.ndarray, seat: int, match: bool) -> bool:
    return boneyard_count(state) > state[S_PROTECTED]


@njit(cache=True, inline="always")
def _fact_voids(state: np.ndarray, seat: int, match: bool) -> int:
    return state[S_VOIDS + seat]


@njit(cache=True, inline="always")
def _fact_to_act(state: np.ndarray, seat: int, match: bool) -> bool:
    return (state[S_STATUS] == PLAYING) & (state[S_CURRENT] == seat)


@njit(cache=True, inline="always")
def _fact_in_play(state: np.ndarray, seat: int, match: bool) -> int:
    return 1


@njit(cache=True, inline="always")
def _fact_passes(state: np.ndarray, seat: int, match: bool) -> int:
    return state[S_PASSES]


@njit(cache=True, inline="always")
def _fact_scores(state: np.ndarray, seat: int, match: bool) -> int:
    return state[S_SCORES + seat] if match else 0


@njit(cache=True, inline="always")
def _fact_target(state: np.ndarray, seat: int, match: bool) -> int:
    return target(state[S_NUM_PLAYERS]) if match else 0


#: The compiled function of each fact of :data:`draw_env.observation.FACTS` that gives a number.
FACT_KERNELS: dict[str, Callable[..., object]] = {
    "hand": _fact_hand,
    "line": _fact_line,
    "left": _fact_left,
    "right": _fact_right,
    "sizes": _fact_sizes,
    "bones": _fact_bones,
    "can_draw": _fact_can_draw,
    "voids": _fact_voids,
    "to_act": _fact_to_act,
    "in_play": _fact_in_play,
    "passes": _fact_passes,
    "scores": _fact_scores,
    "target": _fact_target,
}
#: The compiled function of each fact that writes its block itself.
BLOCK_WRITERS: dict[str, Callable[..., None]] = {"placed": _write_placed, "order": _write_order}


@njit(cache=True, inline="always")
def _write_bits(out: np.ndarray, offset: int, mask: int) -> None:
    while mask:
        out[offset + trailing_zeros(mask)] = 1.0
        mask &= mask - 1


@njit(cache=True, inline="always")
def _write_one_hot(out: np.ndarray, offset: int, value: int) -> None:
    if value >= 0:
        out[offset + value] = 1.0


def _block_statement(index: int, block: Block, seat: str) -> str:
    """The statement that writes block ``index`` of a number fact for the (absolute) seat named ``seat``."""
    fact = FACT_KERNELS[block.fact].__name__
    offset = f"program[{index}, 0]"
    if block.seats == "relative":
        offset += f" + relative * program[{index}, 1]"
    read = f"{fact}(state, {seat}, match)"
    if block.read == "bit":
        return f"_write_bits(out, {offset}, {read})"
    if block.read == "one_hot":
        return f"_write_one_hot(out, {offset}, {read})"
    if block.width == 1:
        return f"out[{offset}] = {read}"
    raise ValueError(f"block {block.name!r}: a fact read as several values must write its block (BLOCK_WRITERS)")


def _writer_source(blocks: Sequence[Block]) -> str:
    """The source of the writer of layouts made of ``blocks`` (of their kinds; the offsets come
    in ``program``: where each block starts and one seat's row width)."""
    once, per_seat = [], []
    for index, block in enumerate(blocks):
        if block.fact in BLOCK_WRITERS:
            writer = BLOCK_WRITERS[block.fact].__name__
            once.append(f"{writer}(state, player, match, out, program[{index}, 0], program[{index}, 1])")
        elif block.seats == "relative":
            per_seat.append(_block_statement(index, block, "seat"))
        else:
            once.append(_block_statement(index, block, "player"))
    lines = [
        "def _write_blocks(state, player, match, program, out):",
        "    for j in range(out.shape[0]):",
        "        out[j] = 0.0",
        *(f"    {statement}" for statement in once),
        "    n = state[S_NUM_PLAYERS]",
        "    for relative in range(n):",  # a seat nobody sits in reads zeros
        "        seat = player + relative",
        "        if seat >= n:",  # a compare is cheaper than a modulo here
        "            seat -= n",
        *(f"        {statement}" for statement in per_seat),
    ]
    return "\n".join(lines) + "\n"


def _kinds(observed: Layout) -> list[tuple[str, str, str, str, bool]]:
    return [(b.name, b.fact, b.read, b.seats, b.width > 1) for b in observed.blocks]


def _compile_writer(observed: Layout) -> Callable[..., None]:
    for fact, kernel in {**FACT_KERNELS, **BLOCK_WRITERS}.items():
        assert globals()[kernel.__name__] is kernel, fact  # the generated source calls it by name
    namespace: dict[str, Callable[..., None]] = {}
    # Compiled under this file's name so that numba caches it beside the other kernels.
    exec(compile(_writer_source(observed.blocks), __file__, "exec"), globals(), namespace)
    return njit(cache=True, inline="always")(namespace["_write_blocks"])


def _program(observed: Layout) -> np.ndarray:
    """Where each block of ``observed`` starts and one seat's row width: int64 ``(blocks, 2)``."""
    if _kinds(observed) != _kinds(DEFAULT_LAYOUT):
        raise ValueError("the layout's blocks differ from those the compiled observation writer was made for")
    return np.array([[observed.offsets[b.name], b.width] for b in observed.blocks], np.int64)


def _programs() -> np.ndarray:
    """Every set's program, by ``max_pip`` (rows below 2 unused): a set's layout, whatever the
    protected tiles (they change only its bounds)."""
    programs = np.zeros((tiles.MAX_PIP + 1, len(DEFAULT_LAYOUT.blocks), 2), np.int64)
    for max_pip in range(tiles.MIN_PIP, tiles.MAX_PIP + 1):
        programs[max_pip] = _program(layout(DrawGame(MIN_PLAYERS, max_pip, hand_size=1, protected=0)))
    return programs


_write_blocks = _compile_writer(DEFAULT_LAYOUT)
_PROGRAMS = _programs()
#: The seeds' game's program apart, so that numba folds its offsets into the code.
_DEFAULT_PROGRAM = _program(DEFAULT_LAYOUT)


@njit(cache=True)
def write_observation(state: np.ndarray, player: int, match: bool, out: np.ndarray) -> None:
    """``player``'s observation of ``state`` written into ``out`` (float32, the variant's layout:
    ``(258,)`` in the seeds' game); ``match`` fills the scores and target blocks.

    Written straight from the compact state: a zero fill and a few dozen stores, faster than
    gathering from an absolute table and with nothing to keep up to date between steps. A call,
    not inlined into the kernels: inlined, its two copies of the writer would double their compile
    time, for a few percent of a step.
    """
    max_pip = state[S_MAX_PIP]
    if max_pip == tiles.DEFAULT_MAX_PIP:
        _write_blocks(state, player, match, _DEFAULT_PROGRAM, out)
    else:
        _write_blocks(state, player, match, _PROGRAMS[max_pip], out)


def _observation_sizes() -> np.ndarray:
    """Every set's observation length, by ``max_pip`` (rows below 2 unused)."""
    sizes = np.zeros(tiles.MAX_PIP + 1, np.int64)
    for max_pip in range(tiles.MIN_PIP, tiles.MAX_PIP + 1):
        sizes[max_pip] = layout(DrawGame(MIN_PLAYERS, max_pip, hand_size=1, protected=0)).size
    return sizes


_OBSERVATION_SIZES = _observation_sizes()


# ---------------------------------------------------------------------- information states


@njit(cache=True, inline="always")
def record_event(state: np.ndarray, action: int) -> None:
    """Append ``action`` of the player to act (legal, about to be applied) to the state's
    history slots (a state of :func:`history_state_size`): the k-th action of the hand as
    ``4 * seat + kind`` (kind an index of :data:`draw_env.observation.EVENT_KINDS`) in bits
    ``4 * (k % 16)`` of history slot ``k // 16``. A draw's tile is not kept: the hand's j-th
    draw takes its boneyard's j-th tile."""
    index = state[S_EVENTS]
    draw = 2 * state[S_NUM_TILES]
    kind = action & 1 if action < draw else _KIND_DRAW if action == draw else _KIND_PASS
    slot = history_start(state) + (index >> 4)
    shift = (index & 15) << 2
    # The first event of a slot overwrites what an earlier hand left there.
    state[slot] = state[slot] * (shift != 0) | (_KINDS * state[S_CURRENT] + kind) << shift
    state[S_EVENTS] = index + 1


@njit(cache=True)
def write_information_state(state: np.ndarray, player: int, match: bool, out: np.ndarray) -> None:
    """``player``'s information state of ``state`` (a state that keeps its history) into ``out``
    (float32, :func:`draw_env.observation.information_layout`'s size): the observation, then
    the blocks ``drawn_at`` and ``events`` written from the history (:func:`record_event`)."""
    drawn_at = _OBSERVATION_SIZES[state[S_MAX_PIP]]
    events = drawn_at + state[S_NUM_TILES]
    # The observation's writer clears the whole of ``out`` (the history blocks too) before
    # writing its blocks at their offsets.
    write_observation(state, player, match, out)
    codes = _KINDS * state[S_NUM_PLAYERS]
    turn = _KINDS * player
    first = history_start(state)
    count = state[S_EVENTS]
    for k in range(count):  # no branch, no store but its own: the compiler vectorises it
        code = ((state[first + (k >> 4)] >> ((k & 15) << 2)) & 15) - turn
        out[events + k] = 1 + code + codes * (code < 0)  # draw_env.observation.event_code
    # The observer's draws, found 16 actions at a time: bit 4i of ``drawn`` (``own``) is set where
    # the slot's i-th action is a draw (the observer's draw). The j-th draw took the boneyard's
    # j-th tile.
    bone = S_BONEYARD + state[S_BONE_START]
    mine = (_KINDS * player + _KIND_DRAW) * _NIBBLES
    before = 0
    for slot in range((count + 15) >> 4):
        word = state[first + slot]
        left = count - 16 * slot
        valid = _NIBBLES if left >= 16 else _NIBBLES & ((1 << (left << 2)) - 1)
        kind = (word & _KIND_BITS) ^ (_KIND_DRAW * _NIBBLES)
        drawn = ~(kind | kind >> 1) & valid
        same = word ^ mine
        own = ~(same | same >> 1 | same >> 2 | same >> 3) & valid
        while own:
            bit = trailing_zeros(own)
            tile = state[bone + before + popcount(drawn & ((1 << bit) - 1))]
            out[drawn_at + tile] = 16 * slot + (bit >> 2) + 1
            own &= own - 1
        before += popcount(drawn)


# ---------------------------------------------------------------------- batched kernels


@njit(cache=True, inline="always")
def _fresh_infos(i: int, state: np.ndarray, hand_points: np.ndarray, hand_pips_out: np.ndarray,
                 score_out: np.ndarray, blocked: np.ndarray, winner: np.ndarray) -> None:
    max_pip = state[S_MAX_PIP]
    for seat in range(state[S_NUM_PLAYERS]):
        hand_points[i, seat] = 0
        hand_pips_out[i, seat] = pips(state[S_HANDS + seat], max_pip)
        score_out[i, seat] = state[S_SCORES + seat]
    blocked[i] = False
    winner[i] = -1


@njit(cache=True)
def _record_deal(i: int, state: np.ndarray, deal_hands: np.ndarray, deal_boneyard: np.ndarray,
                 deal_opener: np.ndarray, hand_number: np.ndarray) -> None:
    """Game ``i``'s hand as just dealt: hands, boneyard (padded with -1), opener, hand number."""
    for seat in range(state[S_NUM_PLAYERS]):
        deal_hands[i, seat] = state[S_DEALT + seat]
    first = S_BONEYARD + state[S_BONE_START]
    length = state[S_BONE_END] - state[S_BONE_START]
    for k in range(deal_boneyard.shape[1]):
        deal_boneyard[i, k] = state[first + k] if k < length else -1
    deal_opener[i] = state[S_OPENER]
    hand_number[i] = state[S_HAND_NUMBER]


@njit(cache=True, inline="always")
def _observe(state: np.ndarray, player: int, match: bool, information: bool, out: np.ndarray) -> None:
    if information:
        write_information_state(state, player, match, out)
    else:
        write_observation(state, player, match, out)


@njit(cache=True, inline="always")
def _write_outputs(k: int, state: np.ndarray, finished: bool, match: bool, observe: bool, information: bool,
                   obs: np.ndarray, mask: np.ndarray, current: np.ndarray) -> None:
    seat = state[S_CURRENT]
    current[k] = seat
    if observe:
        _observe(state, seat, match, information, obs[k])
    if finished:
        for a in range(mask.shape[1]):
            mask[k, a] = 0
    else:
        legal_mask(state, mask[k])


def _step_kernel(loop: type) -> Callable[..., int]:
    """The batched step compiled to loop over the games with ``loop``: ``prange`` (numba threads)
    or ``range`` (one thread). One body for both kernels, each cached apart (numba keys its cache
    on the closure's ``loop``)."""

    @njit(cache=True, parallel=loop is prange)
    def step(states: np.ndarray, rows: np.ndarray, actions: np.ndarray, match: bool, scheme: int, autoreset: bool,
             observe: bool, information: bool, bad: np.ndarray, finished: np.ndarray, hand_points: np.ndarray,
             hand_pips_out: np.ndarray, score_out: np.ndarray, blocked: np.ndarray, winner: np.ndarray,
             deal_hands: np.ndarray, deal_boneyard: np.ndarray, deal_opener: np.ndarray, hand_number: np.ndarray,
             obs: np.ndarray, mask: np.ndarray, current: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
             hand_ended: np.ndarray) -> int:
        """Step games ``rows`` (distinct, int64 ``(k,)``) with ``actions`` ``(k,)``; return how many
        actions are illegal or out of range in games not ended: ``bad[k]`` marks their rows, and
        unless that is 0 no game moves.

        Updates in place, by game: ``states``, ``finished`` (games ended without auto-reset, whose
        actions are ignored), the infos ``hand_points``, ``hand_pips_out``, ``score_out``
        ``(N, n)``, ``blocked`` and ``winner`` ``(N,)``, and the deal of the hand in play
        (``deal_hands`` ``(N, n)``, ``deal_boneyard`` ``(N, T)``, ``deal_opener`` and
        ``hand_number`` ``(N,)``, written when a hand is dealt). With ``information`` the states
        keep their history (:func:`history_state_size`) and ``obs`` holds information states.
        Writes by row ``k``: ``obs`` ``(k, size)`` float32 (skipped when ``observe`` is False),
        ``mask`` ``(k, 2T+2)`` int8,
        ``current`` ``(k,)``, ``rewards`` ``(k, n)`` float32, ``terminated`` ``(k,)`` and
        ``hand_ended`` ``(k,)`` (a hand ended at this step; in a match also when the episode goes
        on).
        """
        illegal = 0
        for k in range(rows.shape[0]):
            i = rows[k]
            bad[k] = (not finished[i]) and not is_legal(states[i], actions[k])
            illegal += bad[k]
        if illegal:
            return illegal
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
                if information:
                    record_event(state, actions[k])
                status = apply_action(state, actions[k])
                if status == PLAYING:
                    _fresh_infos(i, state, hand_points, hand_pips_out, score_out, blocked, winner)
                else:
                    for s in range(n):
                        hand_points[i, s] = state[S_POINTS + s]
                        hand_pips_out[i, s] = hand_pips(state, s)
                        score_out[i, s] = state[S_SCORES + s]
                    blocked[i] = status == BLOCKED
                    winner[i] = state[S_WINNER]
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
                    if not finished[i]:
                        _record_deal(i, state, deal_hands, deal_boneyard, deal_opener, hand_number)
            _write_outputs(k, state, finished[i], match, observe, information, obs, mask, current)
        return 0

    return step


#: The batched step with numba threads over the games (its docstring gives the arguments).
step_batch = _step_kernel(prange)
#: The batched step on one thread (on a busy machine or for small batches, threads cost more).
step_batch_serial = _step_kernel(range)


@njit(cache=True)
def masks_of(states: np.ndarray, finished: np.ndarray, mask: np.ndarray) -> None:
    """Every game's legal-action mask into ``mask`` (N, 2T+2); zeros where ``finished``."""
    for i in range(states.shape[0]):
        if finished[i]:
            for a in range(mask.shape[1]):
                mask[i, a] = 0
        else:
            legal_mask(states[i], mask[i])


@njit(cache=True)
def reset_batch(
    states: np.ndarray,
    match: bool,
    information: bool,
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
    winner: np.ndarray,
    deal_hands: np.ndarray,
    deal_boneyard: np.ndarray,
    deal_opener: np.ndarray,
    hand_number: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    current: np.ndarray,
) -> None:
    """Start a new episode in every game: a fixed deal where ``fixed[i]``, else a random one.

    ``scores (N, 4)`` are the starting scores, ``openers (N,)`` the openers (-1: lottery); the
    other arrays and ``information`` are :data:`step_batch`'s.
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
        _fresh_infos(i, state, hand_points, hand_pips_out, score_out, blocked, winner)
        _record_deal(i, state, deal_hands, deal_boneyard, deal_opener, hand_number)
        _write_outputs(i, state, False, match, True, information, obs, mask, current)


@njit(cache=True)
def observe_batch(states: np.ndarray, seat: int, match: bool, information: bool, out: np.ndarray) -> None:
    """Every game's observation (``information``: information state) from absolute seat ``seat``
    into ``out`` (N, size)."""
    for i in range(states.shape[0]):
        _observe(states[i], seat, match, information, out[i])


@njit(cache=True)
def observe_seats(states: np.ndarray, seats: np.ndarray, match: bool, information: bool, out: np.ndarray) -> None:
    """Game ``i``'s observation (``information``: information state) from absolute seat
    ``seats[i]`` into ``out[i]`` (N, size)."""
    for i in range(states.shape[0]):
        _observe(states[i], seats[i], match, information, out[i])


@njit(cache=True)
def random_actions(words: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    """A uniform legal action per row of ``mask`` (N, 2T+2) into ``out`` (N,), row ``i`` drawn from
    the generator ``words[i]`` (int64 ``(N,)``, e.g. seeded with ``SeedSequence.generate_state``).

    Rows with no legal action (ended games) get 0, which their step ignores.
    """
    for i in range(mask.shape[0]):
        count = 0
        for a in range(mask.shape[1]):
            count += mask[i, a]
        out[i] = 0
        if count == 0:
            continue
        pick = random_below_at(words, i, count)
        for a in range(mask.shape[1]):
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
        legal = np.empty(MAX_ACTIONS, np.int64)
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
    """The deal of ``state``'s current hand as reset options: ``hands``, ``boneyard``, ``opener``."""
    n = int(state[S_NUM_PLAYERS])
    hands = [list(tiles.tiles_in(int(state[S_DEALT + seat]))) for seat in range(n)]
    boneyard = [int(t) for t in state[S_BONEYARD + state[S_BONE_START] : S_BONEYARD + state[S_BONE_END]]]
    return {"hands": hands, "boneyard": boneyard, "opener": int(state[S_OPENER])}
