"""A searcher's information set as a state of :mod:`draw_env.engine`: from a view, or read
(compiled) from an observation of any set through that set's observation layout.

The state holds the searcher's hand, the line, the open ends, the voids, passes and scores, and
the boneyard's size; the opponents' hands and the boneyard stay empty until
:func:`agents.compiled_search.deals.determinize` deals them. Every seat's hand size comes apart,
as ``counts``.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from agents.base import Observation, tile_set_of
from draw_env import engine as E
from draw_env.observation import SEATS, Layout, layout
from draw_env.rules import PROTECTED_BONEYARD, DrawGame, PlayerView
from draw_env.tiles import TileSet

# The facts state_from_observation reads, in the order of its program's slots.
_READ_FACTS = ("hand", "line", "left", "right", "placed", "order", "sizes", "bones", "voids", "passes", "scores")
_F_HAND, _F_LINE, _F_LEFT, _F_RIGHT, _F_PLACED, _F_ORDER, _F_SIZES, _F_BONES, _F_VOIDS, _F_PASSES, _F_SCORES = (
    range(len(_READ_FACTS)))


@functools.cache
def set_layout(tile_set: TileSet) -> Layout:
    """The observation layout of ``tile_set``'s games (where blocks start depends on the set only)."""
    return layout(DrawGame(2, tile_set.max_pip, hand_size=1, protected=0))


@functools.cache
def read_program(tile_set: TileSet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """How :func:`state_from_observation` reads an observation of ``tile_set``'s games, from its layout.

    Returns:
        ``(slots, source, kind, argument)``, int64: ``slots`` holds where each fact it reads
        starts in the facts vector (the order of ``_READ_FACTS``), then the facts vector's
        length; the others are the layout's :meth:`~draw_env.observation.Layout.fact_table`.
    """
    observed = set_layout(tile_set)
    fact_offsets, source, kind, argument = observed.fact_table()
    slots = [fact_offsets[name] for name in _READ_FACTS] + [sum(observed.fact_sizes().values())]
    return np.array(slots, np.int64), source, kind, argument


@njit(cache=True)
def read_facts(obs: np.ndarray, source: np.ndarray, kind: np.ndarray, argument: np.ndarray, facts: np.ndarray) -> None:
    """The facts ``obs`` holds, into ``facts`` (int64, zeroed): compiled
    :func:`draw_env.observation.facts_of_observation`, which the tests check it against."""
    for i in range(source.shape[0]):
        if kind[i] == 2:
            facts[source[i]] = -1  # a one-hot fact with no entry set: an end of the empty line
    for i in range(source.shape[0]):
        on = obs[i] > 0.5
        if kind[i] == 0:
            if on:
                facts[source[i]] |= np.int64(1) << argument[i]
        elif kind[i] == 1:
            facts[source[i]] = int(obs[i] + 0.5)  # counts, scores, ranks: whole and >= 0
        elif on:
            facts[source[i]] = argument[i]


@njit(cache=True)
def state_from_observation(obs: np.ndarray, n: int, state: np.ndarray, counts: np.ndarray, max_pip: int,
                           protected: int, program: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> None:
    """The observer's information set as a state (observer = seat 0, seats relative).

    The game is the double-``max_pip`` set with ``protected`` boneyard tiles; ``program`` says
    how its observation holds the facts (:func:`read_program` of the set, from its layout).
    ``state`` int64 (at least :func:`draw_env.engine.state_size` slots) gets the observer's hand,
    the line (placements in order, ends unknown and written as 0), the open ends, the voids,
    passes and scores; the opponents' hands and the boneyard stay empty until
    :func:`~agents.compiled_search.deals.determinize` deals them. ``counts`` int64 ``(4,)`` gets every seat's hand size. The
    observer is to act.
    """
    slots, source, kind, argument = program
    facts = np.zeros(slots[len(_READ_FACTS)], np.int64)
    read_facts(obs, source, kind, argument, facts)
    num_tiles = (max_pip + 1) * (max_pip + 2) // 2
    E.init_variant_state(state, n, 0, max_pip, E.hand_size(n), protected)
    line_start = E.line_start(state)
    line = facts[slots[_F_LINE]]
    for t in range(num_tiles):
        if (line >> t) & 1:
            seat = 0
            for s in range(SEATS):
                if (facts[slots[_F_PLACED] + s] >> t) & 1:
                    seat = s
            state[line_start + facts[slots[_F_ORDER] + t] - 1] = t | seat << E.LINE_SEAT_SHIFT
    state[E.S_HANDS] = facts[slots[_F_HAND]]  # the observer's row: relative seat 0
    state[E.S_LINE_MASK] = line
    state[E.S_LINE_COUNT] = E.popcount(line)
    if facts[slots[_F_LEFT]] >= 0:
        state[E.S_LEFT] = facts[slots[_F_LEFT]]
        state[E.S_RIGHT] = facts[slots[_F_RIGHT]]
    for s in range(n):
        counts[s] = facts[slots[_F_SIZES] + s]
        state[E.S_VOIDS + s] = facts[slots[_F_VOIDS] + s]
        state[E.S_SCORES + s] = facts[slots[_F_SCORES] + s]
    # The size, for the root's legal actions; determinize deals the tiles.
    state[E.S_BONE_END] = facts[slots[_F_BONES]]
    state[E.S_PASSES] = facts[slots[_F_PASSES]]
    state[E.S_CURRENT] = 0


def state_from_view(view: PlayerView) -> tuple[np.ndarray, np.ndarray]:
    """``view``'s information set as ``(state, counts)``, seats absolute (see :func:`state_from_observation`)."""
    game = view.game
    n = game.num_players
    state = np.zeros(E.state_size(game.max_pip), np.int64)
    E.init_variant_state(state, n, 0, game.max_pip, game.hand_size, game.protected)
    state[E.S_HANDS + view.player] = view.hand
    state[E.S_LINE_MASK] = view.line_mask
    state[E.S_LINE_COUNT] = len(view.line)
    for k, (tile, seat, end) in enumerate(view.line):
        state[E.S_BONEYARD + game.num_tiles + k] = tile | seat << E.LINE_SEAT_SHIFT | max(end, 0) << E.LINE_END_SHIFT
    if view.ends is not None:
        state[E.S_LEFT], state[E.S_RIGHT] = view.ends
    for seat in range(n):
        state[E.S_VOIDS + seat] = view.voids[seat]
        state[E.S_SCORES + seat] = view.scores[seat]
    state[E.S_BONE_END] = view.boneyard_count
    state[E.S_PASSES] = view.passes_in_row
    state[E.S_CURRENT] = view.current
    state[E.S_OPENER] = view.opener
    counts = np.zeros(SEATS, np.int64)
    counts[:n] = view.hand_counts
    return state, counts


def information_set(
    source: PlayerView | Observation, protected: int | None = None,
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """``(state, counts, searcher, match)`` of a view or of an observation dict.

    A view carries its game. An observation's set is read from its action mask's length and its
    blocks from the set's layout; its protected boneyard tiles are ``protected``, or with
    ``None`` read or guessed from the observation (:func:`_protected_of`).

    Raises:
        ValueError: if the source is not of the player to act, its vector does not fit its mask,
            or its ``can_draw`` and ``boneyard_size`` contradict ``protected``.
    """
    if isinstance(source, PlayerView):
        if source.current != source.player:
            raise ValueError(f"view must be of the player to act: player {source.player}, to act {source.current}")
        state, counts = state_from_view(source)
        return state, counts, source.player, False  # a view does not say it is a match: hand layout
    if not isinstance(source, dict):
        raise ValueError("observation must be an observation dict with 'observation' and 'action_mask'")
    tile_set = tile_set_of(source)
    observed = set_layout(tile_set)
    offsets = observed.offsets
    vector = np.asarray(source["observation"], np.float32)
    if vector.shape != (observed.size,):
        raise ValueError(f"observation must have shape ({observed.size},) for its mask of "
                         f"{2 * tile_set.num_tiles + 2} actions, got {vector.shape}")
    if vector[offsets["to_act"]] < 0.5:
        raise ValueError("observation must be of the player to act (its to_act block starts with 1)")
    protected = _protected_of(vector, offsets, protected)
    num_players = round(float(vector[offsets["in_play"] : offsets["in_play"] + SEATS].sum()))
    state = np.zeros(E.state_size(tile_set.max_pip), np.int64)
    counts = np.zeros(SEATS, np.int64)
    state_from_observation(vector, num_players, state, counts, tile_set.max_pip, protected, read_program(tile_set))
    return state, counts, 0, bool(vector[offsets["target"]] > 0)


def _protected_of(vector: np.ndarray, offsets: dict[str, int], protected: int | None) -> int:
    """The protected boneyard tiles of an observation's game.

    Drawing stops when the boneyard holds exactly the protected tiles, so with ``can_draw`` 0 the
    boneyard's size is the protected count. While a draw is left the observation says only that
    fewer are protected than the boneyard holds: ``None`` then takes the seeds' 2, or the most
    the boneyard allows when it holds 2 or fewer. A given ``protected`` must agree with the observation.
    """
    boneyard = round(float(vector[offsets["boneyard_size"]]))
    can_draw = bool(vector[offsets["can_draw"]] > 0.5)
    if can_draw and boneyard < 1:
        raise ValueError(f"observation: can_draw 1 with boneyard_size {boneyard}")
    if protected is None:
        return min(PROTECTED_BONEYARD, boneyard - 1) if can_draw else boneyard
    if can_draw != (boneyard > protected):
        raise ValueError(f"observation: boneyard_size {boneyard} with can_draw {int(can_draw)} contradicts "
                         f"protected={protected}")
    return protected
