"""The value of a hand to every seat: once it is over (zero-sum hand points / REWARD_SCALE), or
after a rollout that plays it out heaviest-first with ``rollout_randomness``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.compiled_search.generators import SLOT_SIM, TWO_32
from agents.compiled_search.sets import PIPS_OF_SET
from agents.ismcts import REWARD_SCALE
from draw_env import engine as E


@njit(cache=True)
def zero_sum(state: np.ndarray, out: np.ndarray) -> None:
    """Every seat's zero-sum hand points / REWARD_SCALE into ``out`` float64 (the hand is over)."""
    E.hand_rewards(state, E.ZERO_SUM, True, out)
    for s in range(state[E.S_NUM_PLAYERS]):
        out[s] /= REWARD_SCALE


@njit(cache=True)
def rollout(state: np.ndarray, threshold: int, words: np.ndarray, legal: np.ndarray, out: np.ndarray) -> None:
    """Finish the hand: the heaviest playable tile, or with probability threshold / 2**32 a random one;
    every seat's zero-sum hand points / REWARD_SCALE into ``out``."""
    draw = E.draw_action(state)
    pips = PIPS_OF_SET[state[E.S_MAX_PIP]]
    while state[E.S_STATUS] == E.PLAYING:
        count = E.legal_actions(state, legal)
        if legal[0] >= draw:  # nothing fits: draw, or pass once drawing is over
            E.apply_action(state, legal[0])
            continue
        if legal[count - 1] == draw:  # rollouts never draw by choice
            count -= 1
        if count > 1 and E.random_below_at(words, SLOT_SIM, TWO_32) < threshold:
            E.apply_action(state, legal[E.random_below_at(words, SLOT_SIM, count)])
            continue
        best = legal[0]
        best_pips = pips[best >> 1]
        for k in range(1, count):
            if pips[legal[k] >> 1] > best_pips:
                best = legal[k]
                best_pips = pips[best >> 1]
        E.apply_action(state, best)
    zero_sum(state, out)
