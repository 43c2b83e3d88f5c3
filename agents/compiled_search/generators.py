"""The random numbers of a compiled search: the two splitmix64 generators of a decision's ``words``.

``words[SLOT_MAIN]`` is the decision's generator (determinizations, the pick among candidate
deals, the seed each determinization's simulations share); ``words[SLOT_SIM]`` is one
simulation's generator, restarted from that shared seed for each root action, so that the root
actions of one determinization meet the same random numbers (paired root actions).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from draw_env import engine as E

SLOT_MAIN = 0  # the decision's generator: determinizations, the pick among candidates and the shared seeds
SLOT_SIM = 1  # one simulation's generator, restarted from the shared seed for each root action

TWO_32 = 1 << 32


@njit(cache=True, inline="always")
def uniform(words: np.ndarray) -> float:
    """A uniform draw in [0, 1) from the simulation's generator."""
    return E.random_below_at(words, SLOT_SIM, TWO_32) / TWO_32


@njit(cache=True, inline="always")
def shared_seed(words: np.ndarray) -> int:
    """A 64-bit seed from the decision's generator, for the simulations of one determinization."""
    high = E.random_below_at(words, SLOT_MAIN, TWO_32)
    low = E.random_below_at(words, SLOT_MAIN, TWO_32)
    return (high << 32) | low
