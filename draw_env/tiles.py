"""The double-six set: tile ids, names, pips, and bitmask lookup tables.

A tile id is an index ``0..27`` into :data:`TILES`, in canonical order, low half first
(``0:[0|0] 1:[0|1] ... 27:[6|6]``). Sets of tiles are Python ``int`` bitmasks with bit ``t``
set for tile ``t``: a hand, the line and "tiles holding value v" are all masks, so legality
checks are a single ``&``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from draw_env.checks import is_integer

NUM_VALUES = 7
NUM_TILES = 28
ALL_TILES_MASK = (1 << NUM_TILES) - 1

#: ``TILES[t] == (low, high)`` for every tile id ``t``.
TILES: tuple[tuple[int, int], ...] = tuple(
    (low, high) for low in range(NUM_VALUES) for high in range(low, NUM_VALUES)
)
LOW: tuple[int, ...] = tuple(low for low, _ in TILES)
HIGH: tuple[int, ...] = tuple(high for _, high in TILES)
PIPS: tuple[int, ...] = tuple(low + high for low, high in TILES)
IS_DOUBLE: tuple[bool, ...] = tuple(low == high for low, high in TILES)
NAMES: tuple[str, ...] = tuple(f"[{low}|{high}]" for low, high in TILES)

_ID_OF_PAIR: dict[tuple[int, int], int] = {}
for _tile, (_low, _high) in enumerate(TILES):
    _ID_OF_PAIR[(_low, _high)] = _tile
    _ID_OF_PAIR[(_high, _low)] = _tile

#: ``HOLDING[v]`` is the mask of the seven tiles that carry value ``v`` on a half.
HOLDING: tuple[int, ...] = tuple(
    sum(1 << tile for tile, (low, high) in enumerate(TILES) if value in (low, high))
    for value in range(NUM_VALUES)
)

# Pip totals and tile counts of masks, read seven bits at a time.
_CHUNK = 7
_CHUNK_MASK = (1 << _CHUNK) - 1
_PIPS_OF_CHUNK: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        sum(PIPS[offset + bit] for bit in range(_CHUNK) if chunk >> bit & 1)
        for chunk in range(1 << _CHUNK)
    )
    for offset in range(0, NUM_TILES, _CHUNK)
)

TileLike = int | tuple | list | str
# Strict on purpose: exactly the names the project writes (NAMES), halves in either order. The
# class [0-6] holds ASCII digits only, and fullmatch leaves no room for a trailing newline.
_TILE_STRING = re.compile(r"\[([0-6])\|([0-6])\]")


def tile_id(tile: TileLike) -> int:
    """Return the id of a tile given as an id, an ``(a, b)`` pair or a string like ``"[1|4]"``.

    Accepted: an integer id ``0..27`` (Python or NumPy); a pair (tuple or list) of two integers in
    ``0..6``, in either order; a string that is exactly ``"[a|b]"`` with ASCII digits ``a, b`` in
    ``0..6``, in either order (``"[4|1]"`` is ``"[1|4]"``). Strings are strict: no spaces, no
    missing bracket (``"1|4"``, ``"[1|4"``), no other digits (``"[١|٤]"``).

    Raises:
        ValueError: if ``tile`` names no tile of the double-six set.
    """
    if isinstance(tile, str):
        match = _TILE_STRING.fullmatch(tile)
        if match is None:
            raise ValueError(
                f"tile string must be exactly '[a|b]' with digits a, b in 0..6, no spaces, got {tile!r}"
            )
        return _ID_OF_PAIR[int(match.group(1)), int(match.group(2))]
    if isinstance(tile, (tuple, list)):
        if len(tile) != 2 or not all(is_integer(half) and 0 <= half < NUM_VALUES for half in tile):
            raise ValueError(f"tile pair must be (a, b) with a, b in 0..6, got {tile!r}")
        return _ID_OF_PAIR[int(tile[0]), int(tile[1])]
    if not is_integer(tile) or not 0 <= tile < NUM_TILES:
        raise ValueError(f"tile must be an id 0..27, an (a, b) pair or '[a|b]', got {tile!r}")
    return int(tile)


def mask_of(tiles: Iterable[int]) -> int:
    """The bitmask of an iterable of tile ids."""
    mask = 0
    for tile in tiles:
        mask |= 1 << tile
    return mask


def tiles_in(mask: int) -> Iterator[int]:
    """The tile ids in ``mask``, ascending."""
    while mask:
        lowest = mask & -mask
        yield lowest.bit_length() - 1
        mask ^= lowest


def count(mask: int) -> int:
    """How many tiles ``mask`` holds."""
    return mask.bit_count()


def pips(mask: int) -> int:
    """The pip total of the tiles in ``mask`` (both halves of each tile)."""
    return (
        _PIPS_OF_CHUNK[0][mask & _CHUNK_MASK]
        + _PIPS_OF_CHUNK[1][(mask >> 7) & _CHUNK_MASK]
        + _PIPS_OF_CHUNK[2][(mask >> 14) & _CHUNK_MASK]
        + _PIPS_OF_CHUNK[3][(mask >> 21) & _CHUNK_MASK]
    )


def other_half(tile: int, value: int) -> int:
    """The value left open when ``tile`` is joined by its ``value`` half."""
    low, high = TILES[tile]
    return high if low == value else low
