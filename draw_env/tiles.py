"""Domino sets: tile ids, names, pips, and bitmask lookup tables.

A tile id is an index into a set's tiles in canonical order, low half first: the double-N set
holds ``(N+1)(N+2)/2`` tiles ``[0|0] [0|1] ... [0|N] [1|1] ... [N|N]``. :class:`TileSet` holds
one set's tables; :func:`tile_set` returns the (cached) set of a given ``max_pip``. The
module-level names (:data:`TILES`, :data:`NUM_TILES`, :func:`tile_id`, ...) are the double-six
set's, the game of the seeds (``0:[0|0] 1:[0|1] ... 27:[6|6]``).

Sets of tiles are Python ``int`` bitmasks with bit ``t`` set for tile ``t``: a hand, the line
and "tiles holding value v" are all masks, so legality checks are a single ``&``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from draw_env.checks import check_int, is_integer

#: The sets a game may use: double-two to double-nine (6 to 55 tiles).
MIN_PIP = 2
MAX_PIP = 9
#: The seeds' set: double-six.
DEFAULT_MAX_PIP = 6

TileLike = int | tuple | list | str
# Strict on purpose: exactly the names the project writes, halves in either order. The class
# [0-9] holds ASCII digits only, and fullmatch leaves no room for a trailing newline.
_TILE_STRING = re.compile(r"\[([0-9])\|([0-9])\]")


@dataclass(frozen=True)
class TileSet:
    """The double-``max_pip`` set: its tiles in canonical order and the tables read from them.

    Attributes:
        max_pip: the highest value on a half (N).
        num_values: N + 1 values, ``0..N``.
        num_tiles: T = (N+1)(N+2)/2 tiles.
        all_mask: the mask of every tile.
        tiles: ``tiles[t] == (low, high)`` for every tile id ``t``.
        low, high, pips, is_double, names: per tile id.
        holding: ``holding[v]`` is the mask of the N + 1 tiles that carry value ``v`` on a half.
    """

    max_pip: int
    num_values: int = field(init=False)
    num_tiles: int = field(init=False)
    all_mask: int = field(init=False)
    tiles: tuple[tuple[int, int], ...] = field(init=False)
    low: tuple[int, ...] = field(init=False)
    high: tuple[int, ...] = field(init=False)
    pips: tuple[int, ...] = field(init=False)
    is_double: tuple[bool, ...] = field(init=False)
    names: tuple[str, ...] = field(init=False)
    holding: tuple[int, ...] = field(init=False)
    _id_of_pair: dict[tuple[int, int], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values = self.max_pip + 1
        pairs = tuple((low, high) for low in range(values) for high in range(low, values))
        ids = {}
        for tile, (low, high) in enumerate(pairs):
            ids[(low, high)] = ids[(high, low)] = tile
        facts = {
            "num_values": values,
            "num_tiles": len(pairs),
            "all_mask": (1 << len(pairs)) - 1,
            "tiles": pairs,
            "low": tuple(low for low, _ in pairs),
            "high": tuple(high for _, high in pairs),
            "pips": tuple(low + high for low, high in pairs),
            "is_double": tuple(low == high for low, high in pairs),
            "names": tuple(f"[{low}|{high}]" for low, high in pairs),
            "holding": tuple(
                sum(1 << tile for tile, pair in enumerate(pairs) if value in pair) for value in range(values)
            ),
            "_id_of_pair": ids,
        }
        for name, value in facts.items():
            object.__setattr__(self, name, value)

    @property
    def total_pips(self) -> int:
        """Every pip of the set (168 for double-six)."""
        return sum(self.pips)

    def tile_id(self, tile: TileLike) -> int:
        """Return the id of a tile given as an id, an ``(a, b)`` pair or a string like ``"[1|4]"``.

        Accepted: an integer id ``0..T-1`` (Python or NumPy); a pair (tuple or list) of two
        integers in ``0..N``, in either order; a string that is exactly ``"[a|b]"`` with ASCII
        digits ``a, b`` in ``0..N``, in either order (``"[4|1]"`` is ``"[1|4]"``). Strings are
        strict: no spaces, no missing bracket (``"1|4"``, ``"[1|4"``), no other digits (``"[١|٤]"``).

        Raises:
            ValueError: if ``tile`` names no tile of this set.
        """
        top = self.max_pip
        if isinstance(tile, str):
            match = _TILE_STRING.fullmatch(tile)
            pair = (int(match.group(1)), int(match.group(2))) if match else None
            if pair is None or pair not in self._id_of_pair:
                raise ValueError(
                    f"tile string must be exactly '[a|b]' with digits a, b in 0..{top}, no spaces, got {tile!r}"
                )
            return self._id_of_pair[pair]
        if isinstance(tile, (tuple, list)):
            if len(tile) != 2 or not all(is_integer(half) and 0 <= half <= top for half in tile):
                raise ValueError(f"tile pair must be (a, b) with a, b in 0..{top}, got {tile!r}")
            return self._id_of_pair[int(tile[0]), int(tile[1])]
        if not is_integer(tile) or not 0 <= tile < self.num_tiles:
            raise ValueError(
                f"tile must be an id 0..{self.num_tiles - 1}, an (a, b) pair or '[a|b]', got {tile!r}"
            )
        return int(tile)

    def mask_pips(self, mask: int) -> int:
        """The pip total of the tiles in ``mask`` (both halves of each tile)."""
        return sum(self.pips[tile] for tile in tiles_in(mask))

    def other_half(self, tile: int, value: int) -> int:
        """The value left open when ``tile`` is joined by its ``value`` half."""
        low, high = self.tiles[tile]
        return high if low == value else low


def tile_set(max_pip: int = DEFAULT_MAX_PIP) -> TileSet:
    """The double-``max_pip`` set, ``max_pip`` from 2 to 9 (one shared object per size).

    Raises:
        ValueError: naming ``max_pip`` and the allowed range.
    """
    return _tile_set(check_int("max_pip", max_pip, minimum=MIN_PIP, maximum=MAX_PIP))


@functools.cache
def _tile_set(max_pip: int) -> TileSet:
    return TileSet(max_pip)


#: The seeds' set; the names below are its tables.
DOUBLE_SIX = tile_set(DEFAULT_MAX_PIP)
NUM_VALUES = DOUBLE_SIX.num_values
NUM_TILES = DOUBLE_SIX.num_tiles
ALL_TILES_MASK = DOUBLE_SIX.all_mask
#: ``TILES[t] == (low, high)`` for every tile id ``t``.
TILES = DOUBLE_SIX.tiles
LOW = DOUBLE_SIX.low
HIGH = DOUBLE_SIX.high
PIPS = DOUBLE_SIX.pips
IS_DOUBLE = DOUBLE_SIX.is_double
NAMES = DOUBLE_SIX.names
#: ``HOLDING[v]`` is the mask of the seven tiles that carry value ``v`` on a half.
HOLDING = DOUBLE_SIX.holding

# Double-six pip totals of masks, read seven bits at a time (hot in the AEC environment).
_CHUNK = 7
_CHUNK_MASK = (1 << _CHUNK) - 1
_PIPS_OF_CHUNK: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        sum(PIPS[offset + bit] for bit in range(_CHUNK) if chunk >> bit & 1)
        for chunk in range(1 << _CHUNK)
    )
    for offset in range(0, NUM_TILES, _CHUNK)
)


def tile_id(tile: TileLike) -> int:
    """A double-six tile's id (:meth:`TileSet.tile_id`)."""
    return DOUBLE_SIX.tile_id(tile)


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
    """The pip total of the double-six tiles in ``mask`` (both halves of each tile)."""
    return (
        _PIPS_OF_CHUNK[0][mask & _CHUNK_MASK]
        + _PIPS_OF_CHUNK[1][(mask >> 7) & _CHUNK_MASK]
        + _PIPS_OF_CHUNK[2][(mask >> 14) & _CHUNK_MASK]
        + _PIPS_OF_CHUNK[3][(mask >> 21) & _CHUNK_MASK]
    )


def other_half(tile: int, value: int) -> int:
    """The value left open when double-six ``tile`` is joined by its ``value`` half."""
    low, high = TILES[tile]
    return high if low == value else low
