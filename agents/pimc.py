"""Perfect-information Monte Carlo (PIMC), compiled: ``agents.make("pimc")``.

For each decision the agent deals ``worlds`` *worlds*: the tiles it cannot see are dealt
consistently with what it knows (opponents' hand sizes and the values they showed they lack by
passing), with the compiled search's sampler :func:`agents.compiled_search.deals.determinize`, and the
boneyard gets the rest in a random order. In a world every hand is known and the boneyard order is
fixed, so each draw gives a known tile: the world is a deterministic game of perfect information.
With a model of where the hidden tiles lie (``inference``), each world is the one of ``candidates``
deals kept by :func:`agents.compiled_search.deals.weighted_determinize` (importance resampling). Each
world is solved by alpha-beta search for every root action, and the agent plays the action with
the best mean value over the worlds (ties: the lowest action id).

**It draws only when no tile fits, and so does every seat in its search.** PIMC cannot value a
voluntary draw fairly: in a world the boneyard order is known, and the choice that follows the
draw is made in that world, knowing every hidden tile, so drawing gains a clairvoyant choice that
no player has, and it looks good in nearly every world. Searched freely, the agent drew at almost
every chance and played worse than ``heaviest``. So the actions searched, at the root and below,
are the legal placements, and the draw (or the pass) only when no tile fits, as the ``heaviest``
and ``variety`` agents and the playouts play.

The value of a world is the searcher's zero-sum hand points (its points minus the mean of the
others'), divided by :data:`agents.ismcts.REWARD_SCALE` as the ISMCTS agents' values are.

**More than two players: the paranoid reduction.** Every other seat is taken to minimise the
searcher's zero-sum points. With two players this is the game itself (zero-sum, exact minimax).
With three or four it is pessimistic, but it keeps the search a two-sided game, so alpha-beta
prunes deeply and the transposition table stores plain bounds; max^n (each seat maximising its
own points) allows only shallow pruning and would reach a much smaller depth at the same cost.

**Exact near the end, depth-limited before.** When the tiles still to be placed or drawn (tiles in
all hands plus the boneyard tiles that may still be drawn) are at most ``exact_tiles``, the world is
solved to the end of the hand. Before that the search looks ``depth`` choices ahead: the depth
counts the nodes with two or more actions to search. A forced move (a draw, a pass, a lone fitting
tile) does not count, so forced lines are followed for free. At the horizon the value is a playout
to the end of the hand in which every seat places its heaviest playable tile (ties: the lowest
action id) and draws only when nothing fits, as the ``heaviest`` agent plays (the compiled
search's rollout with no randomness).

The search: fail-soft alpha-beta with an explicit stack (numba does not cache recursive functions),
moves ordered with the transposition table's best move first, then the heaviest placements. The
transposition table is keyed by the exact state (every hand, the open ends, the seat to act, the
passes in a row and the boneyard position: two 64-bit words, compared in full) and an entry
serves only a search of the same remaining depth in the same world, so the value of each root
action is exactly the depth-limited paranoid minimax value of the world; the tests check it
against a plain minimax over :mod:`draw_env.rules`.

PIMC's known weakness holds for placements too: in a world the searcher "knows" the hidden tiles,
so it can prefer moves that are good in each world separately but not under uncertainty (strategy
fusion), and it takes its opponents to know its hand.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
from numba import njit

from agents.base import Observation, ValueSearchAgent
from agents.baselines import placements_or_forced_of
from agents.compiled_search.deals import weighted_determinize
from agents.compiled_search.information import information_set
from agents.compiled_search.playout import rollout, zero_sum
from agents.compiled_search.sets import PIPS_OF_SET
from agents.compiled_search.weights import DEFAULT_CANDIDATES, MAX_CANDIDATES, load_location_model, weighting
from agents.ismcts import MAX_PROTECTED, MAX_SECONDS
from draw_env import engine as E
from draw_env.checks import check_int, check_number
from draw_env.rules import PlayerView
from draw_env.tiles import NUM_TILES

#: Worlds dealt per decision.
DEFAULT_WORLDS = 16
#: Choices (nodes with two or more actions to search) looked ahead, the root's included, before the playout.
DEFAULT_DEPTH = 3
#: Solve to the end of the hand once this few tiles are left to place or draw.
DEFAULT_EXACT_TILES = 10

#: The most worlds a decision takes: worlds are counted, and the transposition table stamped, in
#: int64 over the agent's whole life.
MAX_WORLDS = 1_000_000_000

#: The remaining depth of an exact solve.
UNLIMITED = -1

_NO_DEAL = 2
# Longer than any hand of any set of T tiles from any position: at most T placements, T draws, and
# a round of passes before each placement and at the end.
_MAX_PLY = 2 * E.MAX_TILES + E.SEATS * (E.MAX_TILES + 1)
#: The deepest ``depth``: no hand has more choices than placements (55 in the largest set), so a
#: deeper search is an exact one.
MAX_DEPTH = 160
_TABLE_BITS = 16

# Transposition-table entry (int64 columns): the key's four words, the world's stamp, the remaining
# depth searched, and the bound flag | best move << 8; its value is in a float64 array beside it.
_T_KEY1, _T_KEY2, _T_KEY3, _T_KEY4, _T_STAMP, _T_DEPTH, _T_FLAG_MOVE = 0, 1, 2, 3, 4, 5, 6
_T_COLUMNS = 7
_EXACT, _LOWER, _UPPER = 0, 1, 2
# A stack frame: its actions' count, the index of the one being searched, its remaining depth, its
# table slot and its best move so far.
_F_COUNT, _F_INDEX, _F_DEPTH, _F_SLOT, _F_BEST_MOVE = 0, 1, 2, 3, 4
_F_COLUMNS = 5
# A stack frame's window: alpha, beta, the best value so far, and the window it was entered with.
_B_ALPHA, _B_BETA, _B_BEST, _B_ALPHA0, _B_BETA0 = 0, 1, 2, 3, 4
_B_COLUMNS = 5


# ---------------------------------------------------------------------- moves and keys


@njit(cache=True)
def order_moves(moves: np.ndarray, count: int, first: int, draw: int, pips: np.ndarray) -> None:
    """Order the legal actions ``moves[:count]`` (ascending ids) for the search, in place.

    ``first`` (the table's best move, or -1) leads; then placements by tile pips (``pips[tile]``
    of the set), heaviest first (ties: the lower id first); the draw (action ``draw``, or the lone
    pass) stays last.
    """
    for i in range(1, count):
        move = moves[i]
        if move >= draw:
            break
        weight = pips[move >> 1]
        j = i
        while j > 0 and pips[moves[j - 1] >> 1] < weight:
            moves[j] = moves[j - 1]
            j -= 1
        moves[j] = move
    if first >= 0:
        for i in range(count):
            if moves[i] == first:
                for j in range(i, 0, -1):
                    moves[j] = moves[j - 1]
                moves[0] = first
                break


@njit(cache=True)
def actions_searched(state: np.ndarray, out: np.ndarray) -> int:
    """The actions the search considers, ascending, into ``out``: the legal ones, but the draw only when
    no tile fits (see the module docstring)."""
    count = E.legal_actions(state, out)
    if count > 1 and out[count - 1] == E.draw_action(state):
        count -= 1
    return count


@njit(cache=True)
def search_moves(state: np.ndarray, first: int, out: np.ndarray) -> int:
    """The actions a node of the search considers, in search order (:func:`order_moves`), into ``out``;
    returns how many. The legal actions, but the draw only when no tile fits."""
    count = actions_searched(state, out)
    order_moves(out, count, first, E.draw_action(state), PIPS_OF_SET[state[E.S_MAX_PIP]])
    return count


@njit(cache=True, inline="always")
def _key(state: np.ndarray) -> tuple[int, int, int, int]:
    """Four words that hold everything the rest of a hand in a world depends on (the line is implied).

    Sets of up to 28 tiles (double-six and smaller) pack two hands per word and fill the first two;
    larger sets take a word per hand (at most 55 bits), the rest above it.
    """
    if state[E.S_NUM_TILES] <= 28:
        first = (state[E.S_HANDS] | state[E.S_HANDS + 1] << 28 | state[E.S_CURRENT] << 56
                 | state[E.S_PASSES] << 58 | (state[E.S_LEFT] + 1) << 60)
        second = (state[E.S_HANDS + 2] | state[E.S_HANDS + 3] << 28 | (state[E.S_RIGHT] + 1) << 56
                  | state[E.S_BONE_POS] << 59)
        return first, second, 0, 0
    first = state[E.S_HANDS] | state[E.S_CURRENT] << 55 | state[E.S_PASSES] << 57
    second = state[E.S_HANDS + 1] | (state[E.S_LEFT] + 1) << 55
    third = state[E.S_HANDS + 2] | (state[E.S_RIGHT] + 1) << 55
    fourth = state[E.S_HANDS + 3] | state[E.S_BONE_POS] << 55
    return first, second, third, fourth


@njit(cache=True, inline="always")
def _slot(first: int, second: int, third: int, fourth: int, mask: int) -> int:
    # third and fourth are 0 in sets of up to 28 tiles: their slots are the two-word hash's.
    mixed = (np.uint64(first) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(second) * np.uint64(0xC2B2AE3D27D4EB4F)
             ^ np.uint64(third) * np.uint64(0x165667B19E3779F9) ^ np.uint64(fourth) * np.uint64(0x27D4EB2F165667C5))
    mixed ^= mixed >> np.uint64(31)
    return np.int64(mixed & np.uint64(mask))


@njit(cache=True, inline="always")
def tiles_left(state: np.ndarray) -> int:
    """Tiles still to be placed or drawn: in all hands, plus the boneyard's drawable ones."""
    count = max(E.boneyard_count(state) - state[E.S_PROTECTED], 0)
    for seat in range(state[E.S_NUM_PLAYERS]):
        count += E.popcount(state[E.S_HANDS + seat])
    return count


@njit(cache=True, inline="always")
def _child_depth(depth: int, count: int) -> int:
    """The remaining depth below a node of remaining ``depth`` with ``count`` actions: one less after a
    choice, the same after a forced move (and :data:`UNLIMITED` stays)."""
    return depth - 1 if depth > 0 and count > 1 else depth


# ---------------------------------------------------------------------- alpha-beta in one world


@njit(cache=True)
def _search(
    root: np.ndarray, searcher: int, depth: int, alpha: float, beta: float, stamp: int, table: np.ndarray,
    table_values: np.ndarray, states: np.ndarray, moves: np.ndarray, frames: np.ndarray, bounds: np.ndarray,
    legal: np.ndarray, rewards: np.ndarray, words: np.ndarray,
) -> tuple[float, int]:
    """:func:`alphabeta` on a given stack: ``states``, ``moves``, ``frames`` and ``bounds`` have one row
    per ply, ``legal`` and ``rewards`` are scratch."""
    mask = table.shape[0] - 1
    draw = E.draw_action(root)
    pips = PIPS_OF_SET[root[E.S_MAX_PIP]]
    ply = 0
    states[0, :] = root
    frames[0, _F_DEPTH] = depth
    bounds[0, _B_ALPHA] = alpha
    bounds[0, _B_BETA] = beta
    nodes = 0
    value = 0.0
    returning = False
    while True:
        if not returning:
            nodes += 1
            state = states[ply]
            row = moves[ply]
            remaining = frames[ply, _F_DEPTH]
            alpha = bounds[ply, _B_ALPHA]
            beta = bounds[ply, _B_BETA]
            if state[E.S_STATUS] != E.PLAYING:
                zero_sum(state, rewards)
                value = rewards[searcher]
                returning = True
                continue
            count = actions_searched(state, row)
            if remaining == 0 and count > 1:
                rollout(state, 0, words, legal, rewards)
                value = rewards[searcher]
                returning = True
                continue
            first, second, third, fourth = _key(state)
            slot = _slot(first, second, third, fourth, mask)
            best_move = -1
            entry = table[slot]
            if (entry[_T_STAMP] == stamp and entry[_T_KEY1] == first and entry[_T_KEY2] == second
                    and entry[_T_KEY3] == third and entry[_T_KEY4] == fourth):
                best_move = entry[_T_FLAG_MOVE] >> 8
                if entry[_T_DEPTH] == remaining:
                    stored = table_values[slot]
                    flag = entry[_T_FLAG_MOVE] & 255
                    if (flag == _EXACT or (flag == _LOWER and stored >= beta)
                            or (flag == _UPPER and stored <= alpha)):
                        value = stored
                        returning = True
                        continue
            order_moves(row, count, best_move, draw, pips)
            frames[ply, _F_COUNT] = count
            frames[ply, _F_INDEX] = 0
            frames[ply, _F_SLOT] = slot
            frames[ply, _F_BEST_MOVE] = -1
            bounds[ply, _B_ALPHA0] = alpha
            bounds[ply, _B_BETA0] = beta
            bounds[ply, _B_BEST] = -math.inf if state[E.S_CURRENT] == searcher else math.inf
        else:
            if ply == 0:
                return value, nodes
            ply -= 1
            index = frames[ply, _F_INDEX]
            if states[ply, E.S_CURRENT] == searcher:
                if value > bounds[ply, _B_BEST]:
                    bounds[ply, _B_BEST] = value
                    frames[ply, _F_BEST_MOVE] = moves[ply, index]
                    if value > bounds[ply, _B_ALPHA]:
                        bounds[ply, _B_ALPHA] = value
            elif value < bounds[ply, _B_BEST]:
                bounds[ply, _B_BEST] = value
                frames[ply, _F_BEST_MOVE] = moves[ply, index]
                if value < bounds[ply, _B_BETA]:
                    bounds[ply, _B_BETA] = value
            index += 1
            frames[ply, _F_INDEX] = index
            if bounds[ply, _B_ALPHA] >= bounds[ply, _B_BETA] or index == frames[ply, _F_COUNT]:
                best = bounds[ply, _B_BEST]
                flag = _EXACT
                if best <= bounds[ply, _B_ALPHA0]:
                    flag = _UPPER
                elif best >= bounds[ply, _B_BETA0]:
                    flag = _LOWER
                slot = frames[ply, _F_SLOT]
                first, second, third, fourth = _key(states[ply])
                entry = table[slot]
                entry[_T_KEY1] = first
                entry[_T_KEY2] = second
                entry[_T_KEY3] = third
                entry[_T_KEY4] = fourth
                entry[_T_STAMP] = stamp
                entry[_T_DEPTH] = frames[ply, _F_DEPTH]
                entry[_T_FLAG_MOVE] = flag | frames[ply, _F_BEST_MOVE] << 8
                table_values[slot] = best
                value = best
                continue  # still returning, to the parent
            returning = False
        # Enter the next child of the node at ply.
        child = states[ply + 1]
        child[:] = states[ply]
        move = moves[ply, frames[ply, _F_INDEX]]
        E.apply_action(child, move)
        frames[ply + 1, _F_DEPTH] = _child_depth(frames[ply, _F_DEPTH], frames[ply, _F_COUNT])
        bounds[ply + 1, _B_ALPHA] = bounds[ply, _B_ALPHA]
        bounds[ply + 1, _B_BETA] = bounds[ply, _B_BETA]
        ply += 1


@njit(cache=True)
def alphabeta(
    root: np.ndarray, searcher: int, depth: int, alpha: float, beta: float, stamp: int, table: np.ndarray,
    table_values: np.ndarray,
) -> tuple[float, int]:
    """The paranoid minimax value of ``root`` for ``searcher`` at remaining ``depth``, searched in the
    window ``(alpha, beta)``; returns ``(value, nodes visited)``.

    Fail-soft: a value at or below ``alpha`` is an upper bound of the true value, one at or above
    ``beta`` a lower bound, one in between exact. Every node, ``root`` included, considers the
    actions of :func:`search_moves`; ``depth`` counts the nodes with two or more of them
    (:data:`UNLIMITED`: to the end of the hand). The table's entries of this world carry ``stamp``.
    """
    width = E.draw_action(root) + 2
    return _search(root, searcher, depth, alpha, beta, stamp, table, table_values,
                   np.empty((_MAX_PLY, root.shape[0]), np.int64), np.empty((_MAX_PLY, width), np.int64),
                   np.empty((_MAX_PLY, _F_COLUMNS), np.int64), np.empty((_MAX_PLY, _B_COLUMNS), np.float64),
                   np.empty(width, np.int64), np.zeros(E.SEATS), np.zeros(2, np.int64))


@njit(cache=True)
def solve_world(
    world: np.ndarray, depth: int, stamp: int, table: np.ndarray, table_values: np.ndarray, actions: np.ndarray,
    values: np.ndarray,
) -> int:
    """Each root action's value in ``world`` for the seat to act, each searched with a full window.

    The root actions are those of :func:`actions_searched` (the legal ones, the draw only when no
    tile fits), written ascending into ``actions``; their values (zero-sum points / REWARD_SCALE) go
    into ``values``. Returns the nodes visited. ``depth`` counts the root's choice (:data:`UNLIMITED`:
    exact).
    """
    searcher = world[E.S_CURRENT]
    width = E.draw_action(world) + 2
    states = np.empty((_MAX_PLY, world.shape[0]), np.int64)
    moves = np.empty((_MAX_PLY, width), np.int64)
    frames = np.empty((_MAX_PLY, _F_COLUMNS), np.int64)
    bounds = np.empty((_MAX_PLY, _B_COLUMNS), np.float64)
    legal = np.empty(width, np.int64)
    rewards = np.zeros(E.SEATS)
    words = np.zeros(2, np.int64)  # the playouts draw from it, but without randomness nothing depends on it
    child = np.empty(world.shape[0], np.int64)
    count = actions_searched(world, actions)
    nodes = 0
    for r in range(count):
        child[:] = world
        E.apply_action(child, actions[r])
        values[r], visited = _search(child, searcher, _child_depth(depth, count), -math.inf, math.inf, stamp, table,
                                     table_values, states, moves, frames, bounds, legal, rewards, words)
        nodes += visited
    return nodes


@njit(cache=True)
def search_worlds(
    base: np.ndarray, counts: np.ndarray, searcher: int, worlds: int, depth: int, exact_tiles: int, stamp: int,
    table: np.ndarray, table_values: np.ndarray, words: np.ndarray, totals: np.ndarray, meta: np.ndarray,
    log_place: np.ndarray, candidates: np.ndarray,
) -> int:
    """Deal and solve ``worlds`` worlds of the information set ``base``; add each root action's value to ``totals``.

    ``totals`` float64 ``(2T + 2,)`` is indexed like :func:`actions_searched` of ``base``; world ``w``
    uses table stamp ``stamp + w``. ``meta[0]`` counts the worlds done, ``meta[1]`` the nodes.
    Worlds are :func:`weighted_determinize`'s with ``log_place`` and ``candidates``. Returns 0, or
    ``_NO_DEAL`` when no deal is consistent with the view.
    """
    world = np.empty(base.shape[0], np.int64)
    actions = np.empty(totals.shape[0], np.int64)
    values = np.empty(totals.shape[0], np.float64)
    count = actions_searched(base, actions)
    for w in range(worlds):
        if not weighted_determinize(base, counts, searcher, words, world, log_place, candidates):
            return _NO_DEAL
        limit = UNLIMITED if tiles_left(world) <= exact_tiles else depth
        meta[1] += solve_world(world, limit, stamp + w, table, table_values, actions, values)
        for r in range(count):
            totals[r] += values[r]
        meta[0] += 1
    return 0


# ---------------------------------------------------------------------- the agent


class Table:
    """A transposition table: ``2**bits`` entries, reused across decisions (entries carry their world's stamp)."""

    def __init__(self, bits: int = _TABLE_BITS) -> None:
        self.entries = np.zeros((1 << bits, _T_COLUMNS), np.int64)
        self.values = np.zeros(1 << bits, np.float64)
        self.next_stamp = 1  # stamps start at 1: an empty entry's stamp 0 matches no world


def solve_state(state: np.ndarray, depth: int | None = None, table: Table | None = None) -> dict[int, float]:
    """Each searched action's value for the seat to act in a full engine ``state`` (every hand and the
    boneyard known): the legal placements, or the draw or the pass when no tile fits.

    Args:
        state: an int64 state of :mod:`draw_env.engine` (any variant), hand in play.
        depth: choices to search before the heaviest-first playout (1 to :data:`MAX_DEPTH`; forced
            moves do not count); ``None`` solves exactly.
        table: a transposition table to use (a fresh one by default).

    Returns:
        action -> the seat's zero-sum hand points / REWARD_SCALE under paranoid minimax.
    """
    limit = UNLIMITED if depth is None else check_int("depth", depth, minimum=1, maximum=MAX_DEPTH)
    table = table or Table()
    width = E.draw_action(np.asarray(state, np.int64)) + 2
    actions = np.empty(width, np.int64)
    values = np.empty(width, np.float64)
    solve_world(np.asarray(state, np.int64), limit, table.next_stamp, table.entries, table.values, actions, values)
    table.next_stamp += 1
    count = actions_searched(np.asarray(state, np.int64), actions)
    return {int(actions[r]): float(values[r]) for r in range(count)}


class PIMCAgent(ValueSearchAgent):
    """Perfect-information Monte Carlo with an alpha-beta solver per world (``agents.make("pimc")``).

    Args:
        worlds: worlds dealt per decision (1 to :data:`MAX_WORLDS`). With ``seconds`` too,
            whichever runs out first.
        depth: choices searched ahead before the heaviest-first playout (1 to :data:`MAX_DEPTH`):
            nodes with two or more actions to search; forced moves do not count.
        exact_tiles: solve a world to the end of the hand once at most this many tiles are left to
            place or draw (tiles in hands plus drawable boneyard tiles; 0 to 28, the whole set).
        seconds: a wall-clock budget per decision (> 0, at most :data:`agents.ismcts.MAX_SECONDS`), checked between worlds (at least one world
            is solved). A time budget makes play depend on machine speed: reproducible from the
            seed only when ``worlds`` binds first.
        seed: seeds every decision's deals; ``None`` for fresh entropy.
        protected: the variant's protected boneyard tiles, which an observation does not always
            show (``None``: read from the observation when it can be, else guessed; docs/agents.md).
        inference: a hidden-tile model file (:func:`agents.compiled_search.weights.load_location_model`,
            read once here), or ``None`` for the uniform deals.
        candidates: deals drawn per world, one of them kept in proportion to the model's weight
            (1 to :data:`agents.compiled_search.weights.MAX_CANDIDATES`; 1, or no model: the uniform deals).

    Raises:
        ValueError: if an argument is out of range (the message names it and the allowed values)
            or the file is not a model (naming it).
    """

    name = "pimc"

    def __init__(
        self,
        worlds: int = DEFAULT_WORLDS,
        depth: int = DEFAULT_DEPTH,
        exact_tiles: int = DEFAULT_EXACT_TILES,
        seconds: float | None = None,
        seed: int | None = None,
        protected: int | None = None,
        inference: str | os.PathLike[str] | None = None,
        candidates: int = DEFAULT_CANDIDATES,
    ) -> None:
        super().__init__(seed)
        self.protected = None if protected is None else check_int("protected", protected, minimum=0,
                                                                  maximum=MAX_PROTECTED)
        self.worlds = check_int("worlds", worlds, minimum=1, maximum=MAX_WORLDS)
        self.depth = check_int("depth", depth, minimum=1, maximum=MAX_DEPTH)
        self.exact_tiles = check_int("exact_tiles", exact_tiles, minimum=0, maximum=NUM_TILES)
        self.seconds = None if seconds is None else check_number("seconds", seconds, minimum=0, maximum=MAX_SECONDS,
                                                                 exclusive_minimum=True)
        self.candidates = check_int("candidates", candidates, minimum=1, maximum=MAX_CANDIDATES)
        #: The model's file, named by errors at a decision (a model of another game).
        self.inference = inference
        self.model = None if inference is None else load_location_model(inference)
        self._table = Table()
        #: Nodes searched by the last decision (for benchmarks).
        self.last_nodes = 0

    def searched_actions(self, observation: Observation) -> list[int]:
        """The legal placements, or the draw or the pass when no tile fits (the module docstring)."""
        return placements_or_forced_of(observation)[0]

    def action_values(self, view: PlayerView | Observation) -> dict[int, float]:
        """Each searched action's mean value over the worlds: zero-sum hand points / REWARD_SCALE.

        The actions searched are the legal placements, or the draw or the pass when no tile fits
        (the agent never draws by choice: see the module docstring).

        Args:
            view: a :class:`PlayerView` of the player to act, or its observation dict.
        """
        base, counts, searcher, _match = information_set(view, self.protected)
        width = E.draw_action(base) + 2
        log_place, candidates = weighting(self.model, self.candidates, view, base, searcher, self.inference)
        words = np.array([self.rng.getrandbits(63), 0], np.int64)
        totals = np.zeros(width, np.float64)
        meta = np.zeros(2, np.int64)
        table = self._table
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        # Without a time budget every world is solved in one compiled call; with one, a world at a time.
        chunk = self.worlds if deadline is None else 1
        while meta[0] < self.worlds:
            status = search_worlds(base, counts, searcher, min(chunk, self.worlds - int(meta[0])), self.depth,
                                   self.exact_tiles, table.next_stamp + int(meta[0]), table.entries,
                                   table.values, words, totals, meta, log_place, candidates)
            if status == _NO_DEAL:
                raise ValueError("no deal of the hidden tiles is consistent with this view")
            if deadline is not None and time.perf_counter() >= deadline:
                break
        table.next_stamp += int(meta[0])
        self.last_nodes = int(meta[1])
        actions = np.empty(width, np.int64)
        count = actions_searched(base, actions)
        return {int(actions[r]): float(totals[r] / meta[0]) for r in range(count)}

