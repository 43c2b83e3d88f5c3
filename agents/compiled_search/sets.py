"""Every tile set's facts as arrays the compiled kernels index by a state's ``max_pip``."""

from __future__ import annotations

import numpy as np

from draw_env import engine as E
from draw_env import tiles


def _set_tables() -> tuple[np.ndarray, np.ndarray]:
    """Every set's tile pips and per-value holding masks, indexed by ``max_pip`` first."""
    pips = np.zeros((tiles.MAX_PIP + 1, E.MAX_TILES), np.int64)
    holding = np.zeros((tiles.MAX_PIP + 1, E.MAX_VALUES), np.int64)
    for max_pip in range(tiles.MIN_PIP, tiles.MAX_PIP + 1):
        tile_set = tiles.tile_set(max_pip)
        pips[max_pip, : tile_set.num_tiles] = tile_set.pips
        holding[max_pip, : tile_set.num_values] = tile_set.holding
    return pips, holding


#: ``PIPS_OF_SET[max_pip, tile]``: the pips of each tile of each set.
#: ``HOLDING_OF_SET[max_pip, value]``: the mask of the set's tiles that hold the value.
PIPS_OF_SET, HOLDING_OF_SET = _set_tables()
