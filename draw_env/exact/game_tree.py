"""The game tree of a small 2-player variant, enumerated: one hand, the deal and the opener as chance.

Exact measures (a best response, exploitability, a solver) need every history of the game. For a
variant small enough (``DrawGame(2, max_pip=2, hand_size=1)`` has a few thousand, ``max_pip=3,
hand_size=3, protected=3`` a few million), :func:`build_tree` lists them all, compiled: each deal
(a uniform shuffle: both hands, the opener and the order of the drawable boneyard tiles; the
protected tiles are never seen and their order never matters) is one root, equally likely.

Every node where a seat acts belongs to one of that seat's *information states*, keyed with
perfect recall: the seat's dealt hand, the opener, and the whole public history in order (every
placement with its tile and end, every draw and pass by whom), with the tiles the seat drew
itself. Nodes of one information state share their legal actions; :class:`GameTree` keeps them
once per information state, with the observation the environment gives the seat there, so that
a policy that acts on observations can be queried once per information state.

No rule is written here: the tree plays the compiled engine's kernels on the engine's state
(:mod:`draw_env.engine`): :func:`~draw_env.engine.deal_fixed` sets each deal,
:func:`~draw_env.engine.legal_actions` lists a node's children in the order they are numbered,
:func:`~draw_env.engine.apply_action` plays each and says when the hand is over,
:func:`~draw_env.engine.hand_rewards` gives the zero-sum points there, and
:func:`~draw_env.engine.write_observation` and :func:`~draw_env.engine.write_information_state`
write what a seat sees. Beside the engine's state the enumeration keeps only its own bookkeeping
(each seat's sequence id, the node's index and depth). The tests play random paths of the tree
through :mod:`draw_env.rules` and compare every node.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
from numba import njit, types
from numba.typed import Dict

from draw_env.engine import (
    PLAYING,
    S_BONEYARD,
    S_CURRENT,
    S_HANDS,
    S_NUM_TILES,
    SEATS,
    ZERO_SUM,
    apply_action,
    deal_fixed,
    hand_rewards,
    history_state_size,
    init_variant_state,
    legal_actions,
    record_event,
    state_size,
    trailing_zeros,
    write_information_state,
    write_observation,
)
from draw_env.observation import information_layout, layout
from draw_env.rules import DrawGame

#: Bytes per node and per information-state action that :func:`build_tree` allocates (the node
#: arrays, the two sequence dictionaries at about 64 bytes an entry, and what a best response adds).
NODE_BYTES = 2 * 64 + 1 + 4 + 2 + 8 + 1 + 2 + 4 + 3 * 8
#: Default bound on the tree's memory, refused before anything large is allocated.
DEFAULT_MAX_BYTES = 4 * 1024**3

# Per stack entry of the enumeration, one int64 row: the node's position as the engine's state
# (draw_env.engine.state_size slots, S_BONEYARD + 2T), then the tree's bookkeeping at these offsets
# past it: each seat's sequence id (its view of the history), the node's index and its depth.
_SEQ0, _SEQ1, _NODE, _DEPTH = range(4)
_BOOKS = 4


@dataclass(frozen=True)
class GameTree:
    """Every history of one hand of a 2-player variant.

    Nodes are numbered so that a node comes before its children and the children of a node are
    consecutive; the roots (one per deal, all equally likely) are nodes ``0 .. num_deals - 1``.

    Attributes:
        game: the variant.
        num_deals: the chance outcomes (roots), each of probability ``1 / num_deals``.
        player: int8 ``(nodes,)``, the seat to act, -1 at a node where the hand is over.
        infoset: int32 ``(nodes,)``, the acting seat's information state (numbered per seat), -1 at
            the end of the hand.
        depth: int16 ``(nodes,)``, actions since the deal.
        first_child: int64 ``(nodes,)``, the first child; ``num_children`` int8 how many.
        utility: float32 ``(nodes,)``, where the hand is over, seat 0's zero-sum points (its
            points minus seat 1's; seat 1 gets the opposite).
        action_start: per seat, int64 ``(infosets + 1,)``: information state ``i`` has the legal
            actions ``actions[seat][action_start[seat][i] : action_start[seat][i + 1]]``, in the
            order of the node's children.
        actions: per seat, int16, the legal actions of every information state, ascending.
        observations: per seat, uint8 ``(infosets, layout.size)``: what the environment's
            observation vector holds there (as float32 it is exactly the environment's).
    """

    game: DrawGame
    num_deals: int
    player: np.ndarray
    infoset: np.ndarray
    depth: np.ndarray
    first_child: np.ndarray
    num_children: np.ndarray
    utility: np.ndarray
    action_start: tuple[np.ndarray, np.ndarray]
    actions: tuple[np.ndarray, np.ndarray]
    observations: tuple[np.ndarray, np.ndarray]

    @property
    def num_nodes(self) -> int:
        return len(self.player)

    def num_infosets(self, seat: int) -> int:
        """Information states of ``seat``."""
        return len(self.action_start[seat]) - 1

    def action_mask(self, seat: int) -> np.ndarray:
        """int8 ``(infosets, num_actions)``: each information state's legal actions, as the
        environment's mask."""
        count = self.num_infosets(seat)
        mask = np.zeros((count, self.game.num_actions), np.int8)
        rows = np.repeat(np.arange(count), np.diff(self.action_start[seat]))
        mask[rows, self.actions[seat]] = 1
        return mask

    def information_states(self, seat: int, rows: np.ndarray | None = None) -> np.ndarray:
        """uint8 ``(len(rows), size)``: the information-state vector (the environment's
        ``obs_type="information_state"``, :func:`draw_env.observation.information_layout`) of
        each of ``seat``'s information states ``rows`` (default all), as float32 exactly the
        environment's.

        Built on demand, not kept: each information state's history is read back from one of its
        nodes (parent links walked to the root, the deal of that root), so the memory is the
        result's, ``len(rows) * size`` bytes (``max_pip=3, hand_size=3, protected=3``: 136
        bytes each, about 0.21 GB for all of one seat's 1.5 million), plus four bytes a node
        while it is built. Distinct information states have distinct vectors.
        """
        count = self.num_infosets(seat)
        rows = np.arange(count) if rows is None else np.asarray(rows, np.int64)
        if rows.ndim != 1 or (rows.size and (rows.min() < 0 or rows.max() >= count)):
            raise ValueError(f"rows must be information states of seat {seat}: integers in 0..{count - 1}")
        return self.information_states_at(seat, _first_nodes(self.player, self.infoset, seat, count)[rows])

    @functools.cached_property
    def sequence_form(self) -> SequenceForm:
        """The tree as a game in sequence form (:class:`SequenceForm`), derived once per tree
        (a few seconds on ``mini``; 16 bytes per distinct pair of last sequences)."""
        return sequence_form(self)

    def information_states_at(self, seat: int, nodes: np.ndarray) -> np.ndarray:
        """uint8 ``(len(nodes), size)``: ``seat``'s information-state vector at each of ``nodes``
        (nodes where ``seat`` acts), read from each node's own path: the same for every node of
        one information state."""
        nodes = np.asarray(nodes, np.int64)
        if nodes.ndim != 1 or not np.all(self.player[nodes] == seat):
            raise ValueError(f"nodes must be nodes where seat {seat} acts")
        out = np.zeros((len(nodes), information_layout(self.game).size), np.uint8)
        _write_information_states(
            nodes, seat, _parents(self.first_child, self.num_children, self.player), self.player, self.infoset,
            self.first_child, self.action_start[0], self.actions[0], self.action_start[1], self.actions[1],
            deals(self.game), _template(self.game, history=True), out,
        )
        return out


@dataclass(frozen=True)
class SequenceForm:
    """The tree as a two-player game in sequence form (Koller, Megiddo and von Stengel 1994).

    A seat's *sequence* is one of its entries (an information state's action, numbered as
    ``tree.actions[seat]``) plus one; sequence 0 is the empty one, before the seat's first
    choice. With perfect recall each information state follows one sequence of its seat (its
    ``parent``), and a hand's end is reached through one last sequence of each seat; seat 0's
    expected points are then ``sum(payoff * x0[first] * x1[second])``, ``x`` each seat's
    realisation plan (the product of its own action probabilities along its sequence, 1 for the
    empty one). A seat's counterfactual value of one of its sequences is its part of that sum
    (the other seat's plan and chance included) plus the values of the information states that
    follow the sequence: what a CFR iteration computes, without a pass over the tree's nodes.

    Attributes:
        parent: per seat, int32 ``(infosets,)``: the sequence each information state follows. An
            information state's parent sequence belongs to an information state of a smaller
            number (the tree numbers them in the order its walk meets them).
        first, second: int32 ``(K,)``: seat 0's and seat 1's last sequences at the end of a
            hand, each pair once, ordered by ``first`` then ``second``.
        payoff: float64 ``(K,)``: seat 0's zero-sum points times the chance of the deal, summed
            over the hands that end at that pair of sequences.
    """

    parent: tuple[np.ndarray, np.ndarray]
    first: np.ndarray
    second: np.ndarray
    payoff: np.ndarray


def sequence_form(tree: GameTree) -> SequenceForm:
    """Derive ``tree``'s :class:`SequenceForm` (:attr:`GameTree.sequence_form` keeps it): one pass
    over the nodes for each node's last sequence of each seat, then the hands' ends merged by
    their pair of last sequences.

    Raises:
        ValueError: if the tree lacks perfect recall (an information state's nodes follow
            different sequences of its seat) or numbers an information state before the one it
            follows (either would be a bug of :func:`build_tree`).
    """
    counts = (tree.num_infosets(0), tree.num_infosets(1))
    parent = (np.full(counts[0], -1, np.int32), np.full(counts[1], -1, np.int32))
    ends = int(np.count_nonzero(tree.player < 0))
    last = np.zeros((2, ends), np.int32)
    points = np.zeros(ends)
    problem = _last_sequences(tree.player, tree.infoset, tree.first_child, tree.num_children, tree.utility,
                              tree.num_deals, tree.action_start[0], tree.action_start[1], parent[0], parent[1],
                              last, points)
    if problem:
        raise ValueError(f"the game tree {problem}: information states must follow one sequence of their seat, "
                         "numbered after it")
    # One key per pair, ordered by seat 0's sequence then seat 1's.
    key = last[0].astype(np.int64) * (len(tree.actions[1]) + 1) + last[1]
    del last
    pairs, inverse = np.unique(key, return_inverse=True)
    del key
    payoff = np.bincount(inverse.reshape(-1), weights=points, minlength=len(pairs)) / tree.num_deals
    width = len(tree.actions[1]) + 1
    return SequenceForm(parent, (pairs // width).astype(np.int32), (pairs % width).astype(np.int32), payoff)


@njit(cache=True)
def _last_sequences(
    player: np.ndarray, infoset: np.ndarray, first_child: np.ndarray, num_children: np.ndarray, utility: np.ndarray,
    num_deals: int, start0: np.ndarray, start1: np.ndarray, parent0: np.ndarray, parent1: np.ndarray,
    last: np.ndarray, points: np.ndarray,
) -> str:
    """Fill each information state's parent sequence, and at each end of a hand (in node order)
    each seat's last sequence and seat 0's points; an empty string, else what is wrong."""
    nodes = player.shape[0]
    sequence = np.zeros((2, nodes), np.int32)  # each node's last sequence of each seat (roots: empty)
    end = 0
    for node in range(nodes):
        acting = player[node]
        if acting < 0:
            last[0, end] = sequence[0, node]
            last[1, end] = sequence[1, node]
            points[end] = utility[node]
            end += 1
            continue
        index = infoset[node]
        start = start0[index] if acting == 0 else start1[index]
        parent = parent0 if acting == 0 else parent1
        mine = sequence[acting, node]
        if parent[index] < 0:
            parent[index] = mine
            # The information state of the parent sequence (entry mine - 1) must come first.
            if mine > 0:
                owner = np.searchsorted(start0 if acting == 0 else start1, mine - 1, side="right") - 1
                if owner >= index:
                    return "numbers an information state before the one it follows"
        elif parent[index] != mine:
            return "lacks perfect recall"
        first = first_child[node]
        for k in range(num_children[node]):
            sequence[0, first + k] = sequence[0, node]
            sequence[1, first + k] = sequence[1, node]
            sequence[acting, first + k] = start + k + 1
    return ""


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_index=True, return_inverse=True)``, twenty times faster:
    each row is compared as one run of bytes (the same rows, the same order)."""
    rows = np.ascontiguousarray(rows)
    keys = rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).reshape(-1)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return rows[first], first, inverse.reshape(-1)


def check_tree_game(game: DrawGame) -> None:
    """A game :func:`build_tree` takes: two players (one hand, zero-sum points).

    Raises:
        ValueError: naming ``num_players``.
    """
    if game.num_players != 2:
        raise ValueError(f"num_players must be 2 for an enumerated game tree, got {game.num_players}")


def deals(game: DrawGame) -> np.ndarray:
    """Every chance outcome of ``game``, equally likely: int64 rows ``(opener, hand 0 mask, hand 1
    mask, drawable tiles in drawing order...)``."""
    check_tree_game(game)
    size, tiles_all = game.hand_size, range(game.num_tiles)
    drawable = game.num_tiles - 2 * size - game.protected
    rows = []
    for first in itertools.combinations(tiles_all, size):
        rest = [t for t in tiles_all if t not in first]
        for second in itertools.combinations(rest, size):
            boneyard = [t for t in rest if t not in second]
            mask0, mask1 = _mask(first), _mask(second)
            for order in itertools.permutations(boneyard, drawable):
                for opener in (0, 1):
                    rows.append((opener, mask0, mask1, *order))
    return np.array(rows, np.int64).reshape(len(rows), 3 + drawable)


def count_deals(game: DrawGame) -> int:
    """How many chance outcomes ``game`` has (:func:`deals` without listing them)."""
    check_tree_game(game)
    size, total = game.hand_size, game.num_tiles
    boneyard = total - 2 * size
    return 2 * math.comb(total, size) * math.comb(total - size, size) * math.perm(boneyard, boneyard - game.protected)


def _mask(tiles: tuple[int, ...]) -> int:
    mask = 0
    for tile in tiles:
        mask |= 1 << tile
    return mask


def _template(game: DrawGame, history: bool = False) -> np.ndarray:
    """A row before any deal of ``game``: the engine's state of the variant
    (:func:`draw_env.engine.init_variant_state`), then zero slots for the tree's bookkeeping (a
    stack row), or with ``history`` for the hand's history (:func:`draw_env.engine.history_state_size`)."""
    slots = history_state_size(game) if history else state_size(game.max_pip) + _BOOKS
    row = np.zeros(slots, np.int64)
    init_variant_state(row, game.num_players, 0, game.max_pip, game.hand_size, game.protected)
    return row


def estimate_nodes(game: DrawGame, probes: int = 20_000, seed: int = 0) -> int:
    """The tree's node count, estimated in well under a second whatever the game's size, for
    refusing a game too large before it is built.

    Knuth's estimator: along a random path from a random deal, ``1 + b1 + b1*b2 + ...`` (the
    ``b`` the numbers of legal actions met) is on average the size of the deal's tree; the mean
    over ``probes`` paths, times the deals, estimates the whole tree.
    """
    total = count_deals(game)
    chosen = _random_deals(game, min(probes, 4096), np.random.default_rng(seed))
    mean = _knuth_estimate(chosen, probes, seed, _template(game))
    return math.ceil(mean * total)


def _random_deals(game: DrawGame, count: int, rng: np.random.Generator) -> np.ndarray:
    size = game.hand_size
    drawable = game.num_tiles - 2 * size - game.protected
    rows = np.zeros((count, 3 + drawable), np.int64)
    for row in rows:
        order = rng.permutation(game.num_tiles)
        row[0] = rng.integers(2)
        row[1] = _mask(tuple(order[:size]))
        row[2] = _mask(tuple(order[size : 2 * size]))
        row[3:] = order[2 * size : 2 * size + drawable]
    return rows


def tree_bytes(nodes: int) -> int:
    """The memory a tree of ``nodes`` nodes takes, with what a best response adds."""
    return nodes * NODE_BYTES


@functools.lru_cache(maxsize=64)
def exactly_measurable(game: DrawGame, max_bytes: int = DEFAULT_MAX_BYTES) -> bool:
    """Whether one hand of ``game`` can be measured exactly: two players (:func:`check_tree_game`)
    and a tree that :func:`build_tree` does not refuse at first sight, its estimated size
    (:func:`estimate_nodes`, a fixed sample: the same answer every time) within ``max_bytes``.
    ``micro`` and ``mini`` are (``mini`` at about 3.7 GiB of the default 4 GiB), ``midi`` and the
    seeds' game are not."""
    return game.num_players == 2 and tree_bytes(estimate_nodes(game)) <= max_bytes


def build_tree(game: DrawGame, max_bytes: int = DEFAULT_MAX_BYTES) -> GameTree:
    """Enumerate every history of one hand of ``game`` (2 players).

    Raises:
        ValueError: for a game of more than two players, or one whose tree would take more than
            ``max_bytes`` (estimated from a sample of deals before anything large is allocated;
            the message gives the estimate).
    """
    check_tree_game(game)
    estimate = estimate_nodes(game)
    if tree_bytes(estimate) > max_bytes:
        raise ValueError(
            f"the game tree of {_describe(game)} has about {estimate:.3g} nodes and would take about "
            f"{tree_bytes(estimate) / 1024**3:.3g} GiB, more than the {max_bytes / 1024**3:.3g} GiB allowed"
        )
    listed = deals(game)
    template = _template(game)
    nodes = _walk(listed, template)[0]
    if tree_bytes(nodes) > max_bytes:
        raise ValueError(
            f"the game tree of {_describe(game)} has {nodes:,} nodes and would take about "
            f"{tree_bytes(nodes) / 1024**3:.1f} GiB, more than the {max_bytes / 1024**3:.1f} GiB allowed"
        )
    arrays = _build(listed, template, nodes, layout(game).size)
    # _build returns the node arrays in GameTree's order, then each seat's three tables.
    player, infoset, depth, first_child, num_children, utility = arrays[:6]
    start0, actions0, observations0, start1, actions1, observations1 = arrays[6:]
    return GameTree(game, len(listed), player, infoset, depth, first_child, num_children, utility,
                    (start0, start1), (actions0, actions1), (observations0, observations1))


def _describe(game: DrawGame) -> str:
    return f"max_pip={game.max_pip}, hand_size={game.hand_size}, protected={game.protected}"


@njit(cache=True)
def _stack_shape(num_tiles: int) -> tuple[int, int]:
    """Pending positions of a depth-first walk: at most every sibling of each node on a path
    (fewer than ``2T + 2`` each) along a hand of fewer than ``3T + 4`` actions; each the engine's
    state and the bookkeeping."""
    return (2 * num_tiles + 2) * (3 * num_tiles + 4), S_BONEYARD + 2 * num_tiles + _BOOKS


@njit(cache=True, inline="always")
def _copy(destination: np.ndarray, source: np.ndarray) -> None:
    """``destination[:] = source`` as a plain loop: numba's slice assignment is slower by as much
    as the rest of a node's work."""
    for j in range(source.shape[0]):
        destination[j] = source[j]


@njit(cache=True)
def _deal(row: np.ndarray, template: np.ndarray, deal: np.ndarray) -> None:
    """Set ``row`` to the start of the hand ``deal`` (a row of :func:`deals`), its bookkeeping
    zero: the engine's fixed deal, the boneyard the drawable tiles in their order, then the
    protected ones (never drawn, so in any order)."""
    row[:] = template
    hands = np.zeros(SEATS, np.int64)
    hands[0] = deal[1]
    hands[1] = deal[2]
    boneyard = np.zeros(template[S_NUM_TILES], np.int64)
    rest = ((np.int64(1) << template[S_NUM_TILES]) - 1) & ~(deal[1] | deal[2])
    count = 0
    for k in range(3, deal.shape[0]):
        boneyard[count] = deal[k]
        rest &= ~(np.int64(1) << deal[k])
        count += 1
    while rest:
        boneyard[count] = trailing_zeros(rest)
        rest &= rest - 1
        count += 1
    deal_fixed(row, hands, boneyard, count, deal[0])


@njit(cache=True)
def _walk(deals: np.ndarray, template: np.ndarray) -> tuple[int, int]:
    """How many nodes the trees of ``deals`` hold, and the most actions a hand of them takes: one
    depth-first walk that keeps nothing."""
    num_tiles = template[S_NUM_TILES]
    depth = S_BONEYARD + 2 * num_tiles + _DEPTH
    stack = np.zeros(_stack_shape(num_tiles), np.int64)
    row = np.zeros(stack.shape[1], np.int64)
    legal = np.zeros(2 * num_tiles + 2, np.int64)
    total = 0
    longest = 0
    for d in range(deals.shape[0]):
        _deal(stack[0], template, deals[d])
        top = 1
        while top:
            top -= 1
            _copy(row, stack[top])
            total += 1
            count = legal_actions(row, legal)
            for k in range(count):
                child = stack[top]
                _copy(child, row)
                child[depth] = row[depth] + 1
                if apply_action(child, legal[k]) == PLAYING:
                    top += 1
                else:
                    total += 1
                    longest = max(longest, child[depth])
    return total, longest


def longest_hand(game: DrawGame) -> int:
    """The most actions any hand of ``game`` (2 players) takes, every deal and every line of play
    enumerated: how close :attr:`draw_env.rules.DrawGame.max_hand_actions` comes to the truth.

    A walk of the whole tree without keeping it (``max_pip=3, hand_size=3, protected=3`` takes a
    few seconds)."""
    return _walk(deals(game), _template(game))[1]


@njit(cache=True)
def _knuth_estimate(deals: np.ndarray, probes: int, seed: int, template: np.ndarray) -> float:
    """The mean over ``probes`` random paths of Knuth's estimate of a deal's tree size."""
    np.random.seed(seed)
    row = template.copy()
    legal = np.zeros(2 * template[S_NUM_TILES] + 2, np.int64)
    total = 0.0
    for probe in range(probes):
        _deal(row, template, deals[probe % deals.shape[0]])
        estimate, width = 1.0, 1.0
        while True:
            count = legal_actions(row, legal)
            width *= count
            estimate += width
            if apply_action(row, legal[np.random.randint(count)]) != PLAYING:
                break
        total += estimate
    return total / probes


@njit(cache=True)
def _sequence(table: Dict, key: int, counter: np.ndarray, seat: int) -> int:
    """The id of the sequence ``key`` of ``seat`` (a new one if unseen)."""
    found = table.get(key, -1)
    if found < 0:
        found = counter[seat]
        table[key] = found
        counter[seat] += 1
    return found


@njit(cache=True)
def _build(
    deals: np.ndarray, template: np.ndarray, nodes: int, observation_size: int,
):  # noqa: ANN202 - a tuple of twelve arrays, typed by numba
    num_tiles = template[S_NUM_TILES]
    books = S_BONEYARD + 2 * num_tiles  # the bookkeeping's first slot, after the engine's state
    num_actions = 2 * num_tiles + 2
    events = 3 * num_tiles + 2
    player = np.full(nodes, -1, np.int8)
    infoset = np.full(nodes, -1, np.int32)
    depth = np.zeros(nodes, np.int16)
    first_child = np.zeros(nodes, np.int64)
    num_children = np.zeros(nodes, np.int8)
    utility = np.zeros(nodes, np.float32)
    # Sequences (a seat's view of the history so far) -> ids, and decision sequences -> infosets.
    sequences0 = Dict.empty(types.int64, types.int64)
    sequences1 = Dict.empty(types.int64, types.int64)
    infosets0 = Dict.empty(types.int64, types.int64)
    infosets1 = Dict.empty(types.int64, types.int64)
    counter = np.zeros(2, np.int64)
    infoset_counter = np.zeros(2, np.int64)
    # Per seat's information state: its first action's place and its observation (grown as needed).
    starts = [np.zeros(1024, np.int64), np.zeros(1024, np.int64)]
    actions = [np.zeros(4096, np.int16), np.zeros(4096, np.int16)]
    observations = [np.zeros((1024, observation_size), np.uint8), np.zeros((1024, observation_size), np.uint8)]
    action_count = np.zeros(2, np.int64)
    stack = np.zeros(_stack_shape(num_tiles), np.int64)
    row = np.zeros(stack.shape[1], np.int64)
    legal = np.zeros(num_actions, np.int64)
    seen = np.zeros(observation_size, np.float32)
    rewards = np.zeros(SEATS)
    free = deals.shape[0]
    for d in range(deals.shape[0]):
        deal = deals[d]
        first = stack[0]
        _deal(first, template, deal)
        opener = deal[0]
        first[books + _SEQ0] = _sequence(sequences0, -(deal[1] * 2 + opener) - 1, counter, 0)
        first[books + _SEQ1] = _sequence(sequences1, -(deal[2] * 2 + opener) - 1, counter, 1)
        first[books + _NODE] = d
        top = 1
        while top:
            top -= 1
            _copy(row, stack[top])
            node = row[books + _NODE]
            seat = row[S_CURRENT]
            depth[node] = row[books + _DEPTH]
            count = legal_actions(row, legal)
            player[node] = seat
            sequence = row[books + _SEQ0 + seat]
            table = infosets0 if seat == 0 else infosets1
            found = table.get(sequence, -1)
            if found < 0:
                found = infoset_counter[seat]
                table[sequence] = found
                infoset_counter[seat] += 1
                if found + 1 >= starts[seat].shape[0]:
                    grown = np.zeros(2 * starts[seat].shape[0], np.int64)
                    grown[: starts[seat].shape[0]] = starts[seat]
                    starts[seat] = grown
                    grown_rows = np.zeros((2 * observations[seat].shape[0], observation_size), np.uint8)
                    grown_rows[: observations[seat].shape[0]] = observations[seat]
                    observations[seat] = grown_rows
                if action_count[seat] + count > actions[seat].shape[0]:
                    grown_actions = np.zeros(2 * actions[seat].shape[0] + count, np.int16)
                    grown_actions[: actions[seat].shape[0]] = actions[seat]
                    actions[seat] = grown_actions
                starts[seat][found] = action_count[seat]
                for k in range(count):
                    actions[seat][action_count[seat] + k] = legal[k]
                action_count[seat] += count
                starts[seat][found + 1] = action_count[seat]
                write_observation(row, seat, False, seen)
                for j in range(observation_size):
                    observations[seat][found, j] = np.uint8(seen[j])
            infoset[node] = found
            first_child[node] = free
            num_children[node] = count
            for k in range(count):
                child_node = free + k
                child = stack[top]
                _copy(child, row)
                action = legal[k]
                status = apply_action(child, action)
                depth[child_node] = row[books + _DEPTH] + 1
                if status == PLAYING:
                    for viewer in range(2):
                        if action < 2 * num_tiles:
                            event = action
                        elif action == 2 * num_tiles:  # the drawer sees the tile its hand gained
                            drawn = trailing_zeros(child[S_HANDS + seat] & ~row[S_HANDS + seat])
                            event = 2 * num_tiles + drawn if viewer == seat else 3 * num_tiles
                        else:
                            event = 3 * num_tiles + 1
                        key = row[books + _SEQ0 + viewer] * events + event
                        sequences = sequences0 if viewer == 0 else sequences1
                        child[books + _SEQ0 + viewer] = _sequence(sequences, key, counter, viewer)
                    child[books + _NODE] = child_node
                    child[books + _DEPTH] = row[books + _DEPTH] + 1
                    top += 1
                else:
                    hand_rewards(child, ZERO_SUM, False, rewards)  # seat 1's are the opposite
                    utility[child_node] = rewards[0]
            free += count
    return (
        player, infoset, depth, first_child, num_children, utility,
        starts[0][: infoset_counter[0] + 1].copy(), actions[0][: action_count[0]].copy(),
        observations[0][: infoset_counter[0]].copy(),
        starts[1][: infoset_counter[1] + 1].copy(), actions[1][: action_count[1]].copy(),
        observations[1][: infoset_counter[1]].copy(),
    )


@njit(cache=True)
def _parents(first_child: np.ndarray, num_children: np.ndarray, player: np.ndarray) -> np.ndarray:
    """int32 ``(nodes,)``: each node's parent (-1 for a root)."""
    parent = np.full(player.shape[0], -1, np.int32)
    for node in range(player.shape[0]):
        if player[node] >= 0:
            for k in range(num_children[node]):
                parent[first_child[node] + k] = node
    return parent


@njit(cache=True)
def _first_nodes(player: np.ndarray, infoset: np.ndarray, seat: int, count: int) -> np.ndarray:
    """int64 ``(count,)``: the first node of each of ``seat``'s information states."""
    first = np.full(count, -1, np.int64)
    for node in range(player.shape[0]):
        if player[node] == seat and first[infoset[node]] < 0:
            first[infoset[node]] = node
    return first


@njit(cache=True)
def _write_information_states(
    nodes: np.ndarray, seat: int, parent: np.ndarray, player: np.ndarray, infoset: np.ndarray,
    first_child: np.ndarray, start0: np.ndarray, actions0: np.ndarray, start1: np.ndarray, actions1: np.ndarray,
    deals: np.ndarray, template: np.ndarray, out: np.ndarray,
) -> None:
    """Write ``seat``'s information state at each of ``nodes`` into the rows of ``out``: every
    action on the path from the root (read from the parents' legal actions) replayed from the deal
    of the node's root on an engine state that keeps its history (``template``,
    :func:`draw_env.engine.history_state_size` slots), then the engine's
    :func:`~draw_env.engine.write_information_state`."""
    path = np.zeros(3 * template[S_NUM_TILES], np.int64)  # two players' hands take fewer actions (DrawGame.max_hand_actions)
    state = template.copy()
    written = np.zeros(out.shape[1], np.float32)
    for r in range(nodes.shape[0]):
        node = nodes[r]
        length = 0
        while parent[node] >= 0:
            above = parent[node]
            actor = player[above]
            start = start0[infoset[above]] if actor == 0 else start1[infoset[above]]
            index = start + node - first_child[above]
            path[length] = actions0[index] if actor == 0 else actions1[index]
            length += 1
            node = above
        _deal(state, template, deals[node])  # the roots are the deals, in order
        for k in range(length - 1, -1, -1):
            record_event(state, path[k])
            apply_action(state, path[k])
        write_information_state(state, seat, False, written)
        for j in range(written.shape[0]):
            out[r, j] = np.uint8(written[j])


def best_response(tree: GameTree, responder: int, policy: np.ndarray) -> tuple[float, np.ndarray]:
    """A best response of seat ``responder`` against ``policy`` in the other seat, exactly.

    Args:
        responder: the seat that responds (0 or 1).
        policy: float64, the other seat's probability of each legal action of each of its
            information states, laid out as ``tree.actions[other]`` (rows of
            ``tree.action_start[other]``).

    Returns:
        ``(value, choice)``: the responder's expected zero-sum points per hand, and per responder
        information state the index (among its legal actions) it picks.
    """
    other = 1 - responder
    if policy.shape != tree.actions[other].shape:
        raise ValueError(f"policy must hold {tree.actions[other].shape[0]} probabilities, got {policy.shape}")
    choice = np.zeros(tree.num_infosets(responder), np.int64)
    value = _best_response(
        tree.player, tree.infoset, tree.depth, tree.first_child, tree.num_children, tree.utility, tree.num_deals,
        responder, tree.action_start[other], np.asarray(policy, np.float64), tree.action_start[responder], choice,
    )
    return value, choice


@njit(cache=True)
def _best_response(
    player: np.ndarray, infoset: np.ndarray, depth: np.ndarray, first_child: np.ndarray, num_children: np.ndarray,
    utility: np.ndarray, num_deals: int, responder: int, policy_start: np.ndarray, policy: np.ndarray,
    responder_start: np.ndarray, choice: np.ndarray,
) -> float:
    nodes = player.shape[0]
    # The chance and opponent part of each node's reach: the responder's own choices count as 1.
    reach = np.zeros(nodes)
    ones = np.ones(responder_start[-1])
    if responder == 0:
        _reach(player, infoset, first_child, num_children, num_deals, responder_start, policy_start, ones, policy, reach)
    else:
        _reach(player, infoset, first_child, num_children, num_deals, policy_start, responder_start, policy, ones, reach)
    # Values from the last actions back: at each depth, every responder information state (its
    # nodes all lie at one depth: they share the public history) takes the action of the highest
    # reach-weighted value summed over its nodes.
    value = np.zeros(nodes)
    q = np.zeros(responder_start[-1])
    sign = 1.0 if responder == 0 else -1.0
    for level in range(depth.max(), -1, -1):
        for node in range(nodes):
            if depth[node] != level or player[node] != responder:
                continue
            start = responder_start[infoset[node]]
            first = first_child[node]
            for k in range(num_children[node]):
                q[start + k] += reach[node] * value[first + k]
        for node in range(nodes):
            if depth[node] != level:
                continue
            seat = player[node]
            first = first_child[node]
            if seat < 0:
                value[node] = sign * utility[node]
            elif seat == responder:
                index = infoset[node]
                start = responder_start[index]
                best = 0
                for k in range(1, num_children[node]):
                    if q[start + k] > q[start + best]:
                        best = k
                choice[index] = best
                value[node] = value[first + best]
            else:
                start = policy_start[infoset[node]]
                total = 0.0
                for k in range(num_children[node]):
                    total += policy[start + k] * value[first + k]
                value[node] = total
    return value[:num_deals].sum() / num_deals


def reach_probabilities(tree: GameTree, strategies: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """float64 ``(nodes,)``: the probability that a hand reaches each node when both seats play
    ``strategies`` (laid out as ``tree.actions``), chance included."""
    reach = np.zeros(tree.num_nodes)
    _reach(tree.player, tree.infoset, tree.first_child, tree.num_children, tree.num_deals, tree.action_start[0],
           tree.action_start[1], strategies[0], strategies[1], reach)
    return reach


@njit(cache=True)
def _reach(
    player: np.ndarray, infoset: np.ndarray, first_child: np.ndarray, num_children: np.ndarray, num_deals: int,
    start0: np.ndarray, start1: np.ndarray, strategy0: np.ndarray, strategy1: np.ndarray, reach: np.ndarray,
) -> None:
    reach[:num_deals] = 1.0 / num_deals
    for node in range(player.shape[0]):
        seat = player[node]
        if seat < 0:
            continue
        start = start0[infoset[node]] if seat == 0 else start1[infoset[node]]
        strategy = strategy0 if seat == 0 else strategy1
        first = first_child[node]
        for k in range(num_children[node]):
            reach[first + k] = reach[node] * strategy[start + k]
