"""Rule-based baseline agents: ``random``, ``random_forced``, ``heaviest`` and ``variety``.

All of them read only the observation dict. "Draws only when it must" means: if any placement
is legal, place; otherwise draw if drawing is legal, else pass (exactly one of the two is legal
then).
"""

from __future__ import annotations

from agents.base import (
    FIRST_NON_PLACEMENT,
    DeterministicAgent,
    Observation,
    SeededAgent,
    hand_mask,
    legal_actions,
    open_ends,
)
from draw_env.rules import ends_after
from draw_env.tiles import HOLDING, NUM_VALUES, PIPS


def placements_or_forced(actions: list[int]) -> list[int]:
    """The legal placements if there are any, else the one legal non-placement (draw or pass).

    Args:
        actions: legal action ids, ascending (so placements come first).
    """
    placements = [action for action in actions if action < FIRST_NON_PLACEMENT]
    return placements if placements else actions[-1:]


def heaviest_placement(placements: list[int]) -> int:
    """The placement of the highest-pip tile; ties go to the lowest action id."""
    best = placements[0]
    for action in placements[1:]:
        if PIPS[action >> 1] > PIPS[best >> 1]:
            best = action
    return best


class RandomAgent(SeededAgent):
    """Uniform over all legal actions, voluntary draws included."""

    name = "random"

    def act(self, observation: Observation) -> int:
        return self.rng.choice(legal_actions(observation))


class RandomForcedAgent(SeededAgent):
    """Uniform over the legal placements; draws (or passes) only when no placement is legal."""

    name = "random_forced"

    def act(self, observation: Observation) -> int:
        return self.rng.choice(placements_or_forced(legal_actions(observation)))


class HeaviestAgent(DeterministicAgent):
    """Places the highest-pip playable tile (ties: lowest action id); draws only when it must."""

    name = "heaviest"

    def act(self, observation: Observation) -> int:
        choices = placements_or_forced(legal_actions(observation))
        if choices[0] >= FIRST_NON_PLACEMENT:
            return choices[0]
        return heaviest_placement(choices)


def values_held(hand: int) -> int:
    """How many of the seven values appear on some tile of ``hand`` (a tile bitmask)."""
    return sum(1 for value in range(NUM_VALUES) if hand & HOLDING[value])


def variety_key(hand: int, ends: tuple[int, int] | None, action: int) -> tuple[int, int, int, int]:
    """How much :class:`VarietyAgent` likes placement ``action``; larger is better.

    Returns:
        ``(distinct values left in hand, open ends the remaining hand can answer (0-2),
        pips of the tile placed, -action)``: compared lexicographically.
    """
    tile = action >> 1
    remaining = hand & ~(1 << tile)
    new_left, new_right = ends_after(ends, action)
    answerable = bool(remaining & HOLDING[new_left]) + bool(remaining & HOLDING[new_right])
    return values_held(remaining), answerable, PIPS[tile], -action


class VarietyAgent(DeterministicAgent):
    """Keeps its hand flexible; draws only when it must.

    Among legal placements it keeps the one whose remaining hand holds the most distinct values,
    then the one that leaves the most of the two open ends answerable by that remaining hand,
    then the heaviest tile, then the lowest action id.
    """

    name = "variety"

    def act(self, observation: Observation) -> int:
        choices = placements_or_forced(legal_actions(observation))
        if choices[0] >= FIRST_NON_PLACEMENT:
            return choices[0]
        if len(choices) == 1:
            return choices[0]
        vector = observation["observation"]
        hand = hand_mask(vector)
        ends = open_ends(vector)
        return max(choices, key=lambda action: variety_key(hand, ends, action))
