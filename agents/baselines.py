"""Rule-based baseline agents: ``random``, ``random_forced``, ``heaviest`` and ``variety``.

All of them read only the observation dict, and play every variant's set (read from the mask's
length). "Draws only when it must" means: if any placement is legal, place; otherwise draw if
drawing is legal, else pass (exactly one of the two is legal then).

Each also answers ``action_probabilities_batch(observations, masks)``: the probabilities
:meth:`action_probabilities` gives, for many observations at once, from its batched version in
:mod:`agents.batched` (``draw-exploit`` asks them so: :attr:`agents.AgentEntry.batch_probabilities`).
"""

from __future__ import annotations

import numpy as np

from agents.base import (
    FIRST_NON_PLACEMENT,
    DeterministicAgent,
    Observation,
    SeededAgent,
    hand_mask,
    legal_actions,
    open_ends,
    tile_set_of,
    uniform_over,
)
from agents.batched import HeaviestBatch, RandomBatch, RandomForcedBatch, VarietyBatch
from draw_env.rules import ends_after
from draw_env.tiles import DOUBLE_SIX, TileSet


def placements_or_forced(actions: list[int], first_non_placement: int = FIRST_NON_PLACEMENT) -> list[int]:
    """The legal placements if there are any, else the one legal non-placement (draw or pass).

    Args:
        actions: legal action ids, ascending (so placements come first).
        first_non_placement: the draw action, ``2T`` (56 for the seeds' set).
    """
    placements = [action for action in actions if action < first_non_placement]
    return placements if placements else actions[-1:]


def placements_or_forced_of(observation: Observation) -> tuple[list[int], TileSet]:
    """:func:`placements_or_forced` of the observation's legal actions, and the set it is played with."""
    tile_set = tile_set_of(observation)
    return placements_or_forced(legal_actions(observation), 2 * tile_set.num_tiles), tile_set


def heaviest_placement(placements: list[int], tile_set: TileSet = DOUBLE_SIX) -> int:
    """The placement of the highest-pip tile; ties go to the lowest action id."""
    pips = tile_set.pips
    best = placements[0]
    for action in placements[1:]:
        if pips[action >> 1] > pips[best >> 1]:
            best = action
    return best


class RandomAgent(SeededAgent):
    """Uniform over all legal actions, voluntary draws included."""

    name = "random"

    def act(self, observation: Observation) -> int:
        return self.rng.choice(legal_actions(observation))

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        return uniform_over(observation, legal_actions(observation))

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`action_probabilities` of each row of ``observations`` ``(N, L)`` and ``masks`` ``(N, 2T + 2)``."""
        return RandomBatch.action_probabilities_batch(observations, masks)


class RandomForcedAgent(SeededAgent):
    """Uniform over the legal placements; draws (or passes) only when no placement is legal."""

    name = "random_forced"

    def act(self, observation: Observation) -> int:
        return self.rng.choice(self._choices(observation))

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        return uniform_over(observation, self._choices(observation))

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`action_probabilities` of each row of ``observations`` ``(N, L)`` and ``masks`` ``(N, 2T + 2)``."""
        return RandomForcedBatch.action_probabilities_batch(observations, masks)

    def _choices(self, observation: Observation) -> list[int]:
        return placements_or_forced_of(observation)[0]


class HeaviestAgent(DeterministicAgent):
    """Places the highest-pip playable tile (ties: lowest action id); draws only when it must."""

    name = "heaviest"

    def act(self, observation: Observation) -> int:
        choices, tile_set = placements_or_forced_of(observation)
        if choices[0] >= 2 * tile_set.num_tiles:
            return choices[0]
        return heaviest_placement(choices, tile_set)

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`action_probabilities` of each row of ``observations`` ``(N, L)`` and ``masks`` ``(N, 2T + 2)``."""
        return HeaviestBatch().action_probabilities_batch(observations, masks)


def values_held(hand: int, tile_set: TileSet = DOUBLE_SIX) -> int:
    """How many of the set's values (seven for double-six) appear on some tile of ``hand`` (a tile bitmask)."""
    return sum(1 for holding in tile_set.holding if hand & holding)


def variety_key(
    hand: int, ends: tuple[int, int] | None, action: int, tile_set: TileSet = DOUBLE_SIX
) -> tuple[int, int, int, int]:
    """How much :class:`VarietyAgent` likes placement ``action``; larger is better.

    Returns:
        ``(distinct values left in hand, open ends the remaining hand can answer (0-2),
        pips of the tile placed, -action)``: compared lexicographically.
    """
    tile = action >> 1
    remaining = hand & ~(1 << tile)
    new_left, new_right = ends_after(ends, action, tile_set)
    holding = tile_set.holding
    answerable = bool(remaining & holding[new_left]) + bool(remaining & holding[new_right])
    return values_held(remaining, tile_set), answerable, tile_set.pips[tile], -action


class VarietyAgent(DeterministicAgent):
    """Keeps its hand flexible; draws only when it must.

    Among legal placements it keeps the one whose remaining hand holds the most distinct values,
    then the one that leaves the most of the two open ends answerable by that remaining hand,
    then the heaviest tile, then the lowest action id.
    """

    name = "variety"

    def act(self, observation: Observation) -> int:
        choices, tile_set = placements_or_forced_of(observation)
        if len(choices) == 1:  # the one placement, or the forced draw or pass
            return choices[0]
        vector = observation["observation"]
        hand = hand_mask(vector, tile_set)
        ends = open_ends(vector, tile_set)
        return max(choices, key=lambda action: variety_key(hand, ends, action, tile_set))

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`action_probabilities` of each row of ``observations`` ``(N, L)`` and ``masks`` ``(N, 2T + 2)``."""
        return VarietyBatch().action_probabilities_batch(observations, masks)
