"""Argument checks shared by every module of the project.

Each check returns the value in its plain Python type or raises a ``ValueError`` whose message
names the argument, the allowed values and what was given, e.g.
``simulations must be an integer >= 1, got 0``. Types count, not just equality: ``True == 1`` and
``2.0 == 2``, yet neither is a number of players; NumPy scalars (``np.int64(3)``) are accepted
wherever Python numbers are, as everywhere else in the ecosystem.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Sequence
from numbers import Integral, Real
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def is_integer(value: object) -> bool:
    """True for Python and NumPy integers, False for bools (which are ints to Python)."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """True for finite Python and NumPy reals (integers included), False for bools, NaN, infinity
    and integers beyond a float's range (which no float argument can hold)."""
    if not isinstance(value, Real) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _range_text(minimum: float | None, maximum: float | None, exclusive_minimum: bool = False) -> str:
    low = ">" if exclusive_minimum else ">="
    if minimum is not None and maximum is not None:
        return f" in {'(' if exclusive_minimum else '['}{minimum}, {maximum}]"
    if minimum is not None:
        return f" {low} {minimum}"
    if maximum is not None:
        return f" <= {maximum}"
    return ""


def check_int(name: str, value: object, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an ``int``, if it is an integer within ``[minimum, maximum]`` (bounds optional)."""
    if (
        not is_integer(value)
        or (minimum is not None and value < minimum)  # type: ignore[operator]
        or (maximum is not None and value > maximum)  # type: ignore[operator]
    ):
        raise ValueError(f"{name} must be an integer{_range_text(minimum, maximum)}, got {value!r}")
    return int(value)  # type: ignore[call-overload]


def check_number(
    name: str,
    value: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
) -> float:
    """``value`` as a ``float``, if it is a finite number within the bounds (NaN and infinity never pass)."""
    if (
        not is_number(value)
        or (minimum is not None and (value < minimum or (exclusive_minimum and value == minimum)))  # type: ignore[operator]
        or (maximum is not None and value > maximum)  # type: ignore[operator]
    ):
        raise ValueError(
            f"{name} must be a finite number{_range_text(minimum, maximum, exclusive_minimum)}, got {value!r}"
        )
    return float(value)  # type: ignore[arg-type]


def check_choice(name: str, value: T, allowed: Sequence[T]) -> T:
    """``value`` itself (an integer as ``int``), if it is one of ``allowed`` and of the same kind.

    Integers match integers whatever their type (``np.int64(3)`` is 3); anything else must have the
    choice's own type, so ``True`` is not 1 and ``2.0`` is not 2.
    """

    def same(choice: T) -> bool:
        if is_integer(choice):
            return is_integer(value) and value == choice
        return type(value) is type(choice) and value == choice

    if not any(same(choice) for choice in allowed):
        listed = ", ".join(repr(choice) for choice in allowed)
        raise ValueError(f"{name} must be one of {listed}, got {value!r}")
    return int(value) if is_integer(value) else value  # type: ignore[call-overload]


def check_bool(name: str, value: object) -> bool:
    """``value``, if it is ``True`` or ``False`` (NumPy bools included)."""
    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")
    if not isinstance(value, bool) and not numpy_bool:
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


#: The largest seed the project takes, everywhere it takes one: a seed fits 64 bits (and so the 20
#: digits the readers of received files allow), so every record that holds a seed can be read back.
MAX_SEED = 2**64 - 1


def check_path(name: str, value: object) -> Path:
    """``value`` as a ``Path``, if it is a file path: text (``str``) or an ``os.PathLike``."""
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
        raise ValueError(f"{name} must be a file path (text), got {value!r}")
    return Path(value)


def check_seed(name: str, value: object) -> int | None:
    """``None`` or an integer seed (Python or NumPy) in ``0..MAX_SEED``, as an ``int``."""
    if value is None:
        return None
    if not is_integer(value) or not 0 <= value <= MAX_SEED:  # type: ignore[operator]
        raise ValueError(f"{name} must be a non-negative integer or None, got {value!r} (a seed is below 2**64)")
    return int(value)  # type: ignore[call-overload]


#: The key PettingZoo's ``api_test`` resets with (``options={"options": 1}``) to see that ``reset``
#: takes ``options``: it asks for nothing, so it is ignored without a warning, as a check that the
#: environment keeps the API is no mistake of its user.
API_TEST_OPTION = "options"


def warn_unknown_options(options: Iterable[object], known: Sequence[str], stacklevel: int = 2) -> None:
    """Warn, naming them, about the reset ``options`` keys not in ``known``, which are ignored
    (:data:`API_TEST_OPTION` too, silently).

    ``stacklevel`` is what the caller would pass to :func:`warnings.warn` (2: the caller's caller).
    """
    unknown = sorted(str(key) for key in options if key not in known and key != API_TEST_OPTION)
    if not unknown:
        return
    if len(unknown) == 1:
        head = f"reset option {unknown[0]!r} is not known and was ignored"
    else:
        head = f"reset options {', '.join(map(repr, unknown))} are not known and were ignored"
    warnings.warn(f"{head}; known options: {', '.join(known) or 'none'}", stacklevel=stacklevel + 1)
