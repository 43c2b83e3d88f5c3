"""Line descriptions in the format of the source documents, in English, Japanese and Italian.

Example (``lang="en"``, after the opening ``[1|4]``)::

    Tiles: [1|4]. Connections: none. Legal connection positions: [1|4] (high end, 4); [1|4] (low end, 1).

Tiles are listed in placement order; connections in the order they were made, as
``existing tile (side) – new tile (side)``; open positions sorted by tile id, the high end before
the low end and side A before side B. A non-double's sides are its low and high end; a double
joined to the line is joined by its side A and leaves side B open.
"""

from __future__ import annotations

from collections.abc import Sequence

from draw_env import tiles
from draw_env.checks import check_choice
from draw_env.rules import LANGUAGES, LINE_WORDS

# Sides, in the order open positions are listed for one tile.
HIGH_END, LOW_END, SIDE_A, SIDE_B = range(4)


def describe_line(
    placements: Sequence[tuple[int, ...]], lang: str = "en", tile_set: tiles.TileSet = tiles.DOUBLE_SIX
) -> str:
    """Describe a line given its placements ``(tile, seat, end)`` in the order they were made.

    Args:
        placements: the line's placements; only ``tile`` and ``end`` (0 left, 1 right) are read.
        lang: ``"en"``, ``"ja"`` or ``"it"``.
        tile_set: the set the tile ids index (the game's ``DrawGame.tiles``).
    """
    words = LINE_WORDS[check_choice("lang", lang, LANGUAGES)]
    sides = words["sides"]
    names = tile_set.names
    if not placements:
        return (
            f"{words['tiles']}: {words['none_tiles']}. "
            f"{words['connections']}: {words['none_connections']}. "
            f"{words['positions']}: {words['none_positions']}."
        )
    first = placements[0][0]
    low, high = tile_set.tiles[first]
    # open_positions[end] = (tile, side, value) for the left and the right end.
    if low == high:
        open_positions = [(first, SIDE_A, low), (first, SIDE_B, high)]
    else:
        open_positions = [(first, LOW_END, low), (first, HIGH_END, high)]
    connections = []
    for tile, _seat, end, *_ in placements[1:]:
        existing, existing_side, value = open_positions[end]
        low, high = tile_set.tiles[tile]
        if low == high:
            joined, left_open = SIDE_A, (SIDE_B, value)
        elif low == value:
            joined, left_open = LOW_END, (HIGH_END, high)
        else:
            joined, left_open = HIGH_END, (LOW_END, low)
        connections.append(
            f"{names[existing]} ({sides[existing_side]}) – {names[tile]} ({sides[joined]})"
        )
        open_positions[end] = (tile, *left_open)
    listed = "; ".join(
        f"{names[tile]} ({sides[side]}, {value})" for tile, side, value in sorted(open_positions)
    )
    return (
        f"{words['tiles']}: {', '.join(names[p[0]] for p in placements)}. "
        f"{words['connections']}: {'; '.join(connections) or words['none_connections']}. "
        f"{words['positions']}: {listed}."
    )
