"""Fixtures and settings shared by the tests (helpers that build positions are in
``tests/positions.py``)."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# The same code runs the same examples, so a CI failure replays locally; set
# HYPOTHESIS_PROFILE=explore to search fresh random examples on each run.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture(params=[2, 3, 4], ids=lambda n: f"{n}p")
def num_players(request: pytest.FixtureRequest) -> int:
    """Every table size: 2, 3 and 4 players."""
    return request.param
