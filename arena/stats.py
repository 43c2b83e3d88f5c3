"""The statistics of the evaluation: Wilson score intervals and shared first places."""

from __future__ import annotations

import math
from collections.abc import Sequence

from draw_env.checks import check_int, check_number

#: The 97.5% quantile of the standard normal distribution: a two-sided 95% interval.
Z_95 = 1.959963984540054


def wilson_interval(successes: float, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion.

    Args:
        successes: the success count (may be fractional when draws count as half a win).
        trials: the number of trials, at least 1.
        z: the normal quantile; the default gives a two-sided 95% interval.

    Returns:
        ``(low, high)``, both in ``[0, 1]``.
    """
    trials = check_int("trials", trials, minimum=1)
    successes = check_number("successes", successes, minimum=0, maximum=trials)
    proportion = successes / trials
    denominator = 1 + z * z / trials
    centre = (proportion + z * z / (2 * trials)) / denominator
    half_width = (
        z * math.sqrt(proportion * (1 - proportion) / trials + z * z / (4 * trials * trials)) / denominator
    )
    # The interval always holds the proportion; the clamps only undo rounding (0/n gives 1e-17).
    return max(0.0, min(proportion, centre - half_width)), min(1.0, max(proportion, centre + half_width))


def shared_first(values: Sequence[int]) -> tuple[float, ...]:
    """1/k of a win to each of the k entries with the highest value, 0 to the others."""
    best = max(values)
    leaders = sum(1 for value in values if value == best)
    return tuple(1.0 / leaders if value == best else 0.0 for value in values)
