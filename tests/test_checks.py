"""draw_env.checks: one place for argument checks; NumPy scalars pass, bools and NaN do not."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from draw_env.checks import (
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_seed,
    warn_unknown_options,
)


def test_numpy_scalars_are_accepted_as_their_python_kind() -> None:
    assert check_int("n", np.int64(3), minimum=1) == 3 and type(check_int("n", np.int32(3))) is int
    assert check_choice("num_players", np.int64(4), (2, 3, 4)) == 4
    assert check_number("gamma", np.float32(0.5), minimum=0, maximum=1) == 0.5
    assert check_bool("flag", np.True_) is True and check_bool("flag", np.bool_(False)) is False
    assert check_seed("seed", np.uint8(7)) == 7 and check_seed("seed", None) is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: check_int("simulations", 0, minimum=1), "simulations must be an integer >= 1, got 0"),
        (lambda: check_int("seat", True), "seat must be an integer, got True"),
        (lambda: check_int("seat", 5, minimum=0, maximum=3), r"seat must be an integer in \[0, 3\], got 5"),
        (lambda: check_number("gamma", math.nan), "gamma must be a finite number, got nan"),
        (lambda: check_number("rate", math.inf, minimum=0), "rate must be a finite number >= 0, got inf"),
        (lambda: check_number("seconds", 0.0, minimum=0, exclusive_minimum=True), "seconds must be a finite number > 0"),
        (lambda: check_choice("num_players", True, (0, 1)), "num_players must be one of 0, 1, got True"),
        (lambda: check_choice("num_players", 2.0, (2, 3, 4)), "num_players must be one of 2, 3, 4, got 2.0"),
        (lambda: check_choice("episode", "Hand", ("hand", "match")), "episode must be one of 'hand', 'match'"),
        (lambda: check_bool("flag", 1), "flag must be True or False, got 1"),
        (lambda: check_seed("seed", -1), "seed must be a non-negative integer or None, got -1"),
        (lambda: check_seed("seed", 1.0), "seed must be a non-negative integer or None, got 1.0"),
    ],
)
def test_bad_values_are_value_errors_naming_the_argument(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_unknown_options_warn_in_one_sentence_and_known_ones_do_not() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_unknown_options({"hands": 1}, ("hands", "boneyard"))  # known: silent
    with pytest.warns(UserWarning, match="^reset option 'colour' is not known and was ignored; known options: none$"):
        warn_unknown_options({"colour": 1}, ())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_unknown_options({"options": 1}, ())  # PettingZoo's api_test probe: silent
    with pytest.warns(UserWarning, match="^reset options 'x', 'y' are not known and were ignored; known options: a$"):
        warn_unknown_options({"y": 1, "x": 2, "a": 3}, ("a",))
