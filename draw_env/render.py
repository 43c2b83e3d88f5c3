"""Pictures of a position: the ansi text and the ``rgb_array`` frame of the environment.

Both read a :class:`Scene`: the rules state, the last action and who made it, the hand that
ended at this step (in a match, the environment deals the next hand within the same step, so
the finished hand is kept apart to be shown), and whether every hand is shown (spectators).

* :func:`render_text` returns the text of ``render_mode="ansi"``: the line with its open ends,
  whose turn, the last action, hand sizes and boneyard, scores, every hand when revealed, the
  finished hand's result (revealed hands, pips, points), the match winner, and the line
  description (:func:`draw_env.describe.describe_line`) on a line of its own.
* :class:`Painter` draws the ``uint8 (H, W, 3)`` frame of ``render_mode="rgb_array"`` with NumPy
  alone: tile sprites are drawn once and blitted, text comes from a small built-in 3x5 pixel font.
  Every frame has the same size (:data:`FRAME_SHAPE`) whatever the number of players.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from draw_env import describe
from draw_env.rules import DEFAULT_GAME, PLAYER_COUNTS, DrawGame, DrawState, end_name

# ---------------------------------------------------------------------------- the scene


@dataclass(frozen=True)
class Scene:
    """What a picture shows.

    Attributes:
        state: the current position (in a match, possibly the hand just dealt).
        episode: ``"hand"`` or ``"match"`` (scores and the target are shown in matches).
        last: ``(seat, action)`` of the last action, or ``None`` right after a reset.
        finished: the hand that ended at this step when the environment has already dealt the
            next one (match mode); ``None`` otherwise.
        reveal: show every hand face up (for spectators); hands are always shown once a hand ends.
    """

    state: DrawState
    episode: str = "hand"
    last: tuple[int, int] | None = None
    finished: DrawState | None = None
    reveal: bool = False

    @property
    def ended(self) -> DrawState | None:
        """The hand whose result this step shows, if one ended."""
        if self.finished is not None:
            return self.finished
        return self.state if self.state.result is not None else None


def oriented_line(state: DrawState) -> list[tuple[int, int]]:
    """The line's tiles left to right, each as ``(left value, right value)`` as it lies."""
    oriented: list[tuple[int, int]] = []
    tile_set = state.game.tiles
    for tile, _seat, end in state.line:
        if not oriented:
            oriented.append(tile_set.tiles[tile])
        elif end == 0:
            value = oriented[0][0]
            oriented.insert(0, (tile_set.other_half(tile, value), value))
        else:
            value = oriented[-1][1]
            oriented.append((value, tile_set.other_half(tile, value)))
    return oriented


def player_name(seat: int) -> str:
    return f"player_{seat}"


def describe_action(seat: int, action: int, game: DrawGame = DEFAULT_GAME) -> str:
    """A sentence such as ``player_1 placed [1|4] at the left end``, ``drew a tile``, ``passed``."""
    if action == game.draw_action:
        return f"{player_name(seat)} drew a tile"
    if action == game.pass_action:
        return f"{player_name(seat)} passed"
    return f"{player_name(seat)} placed {game.tiles.names[action >> 1]} at the {end_name(action & 1)} end"


def hand_text(state: DrawState, seat: int) -> str:
    """A hand's tiles, ascending, e.g. ``[0|3] [2|5]``, or ``no tiles``."""
    return " ".join(state.game.tiles.names[t] for t in state.hand_tiles(seat)) or "no tiles"


def result_line(state: DrawState) -> str:
    """How the finished hand ``state`` ended, e.g. ``domino: player_0 went out and scores 23``."""
    result = state.result
    if result is None:
        raise ValueError("result_line needs a finished hand")
    winner = result.winner
    if winner is None:
        return "blocked: the lowest total is shared, nobody scores"
    if result.kind == "domino":
        return f"domino: {player_name(winner)} went out and scores {result.points[winner]}"
    return f"blocked: {player_name(winner)} holds the single lowest total and scores {result.points[winner]}"


def match_line(state: DrawState) -> str | None:
    """``Match over: player_0 wins with 104 points`` (or drawn) once the match is over, else None."""
    if not state.is_match_over:
        return None
    winner = state.match_winner
    if winner is None:
        return f"Match over: drawn, the leaders are tied at {max(state.scores)} points"
    return f"Match over: {player_name(winner)} wins with {state.scores[winner]} points"


# ---------------------------------------------------------------------------- text


def render_text(scene: Scene, lang: str = "en") -> str:
    """The ansi text of ``scene``; its last line is the line description (:mod:`draw_env.describe`)."""
    state = scene.state
    players = state.num_players
    lines: list[str] = []
    ended = scene.ended
    if scene.finished is not None:
        # The hand that ended at this step, before the next deal shown below.
        finished = scene.finished
        lines.append(f"Hand {finished.hand_number + 1} over, {result_line(finished)}")
        lines.append(f"  Final line: {_line_text(finished)}")
        lines.extend(_revealed(finished))
        lines.append(f"Hand {state.hand_number + 1} dealt: {player_name(state.opener)} opens")
    ends = "none" if state.ends is None else f"left {state.left}, right {state.right}"
    result = state.result
    if result is None:
        turn = f"{player_name(state.current)} to act"
    elif result.winner is None:
        turn = f"hand over ({result.kind}), nobody scores"
    else:
        turn = f"hand over ({result.kind}), {player_name(result.winner)} scores {result.points[result.winner]}"
    counts = ", ".join(f"{player_name(seat)} {state.hand_count(seat)}" for seat in range(players))
    lines += [
        f"Line: {_line_text(state)}",
        f"Open ends: {ends}",
        f"Turn: {turn}",
        f"Last action: {'none' if scene.last is None else describe_action(*scene.last, scene.state.game)}",
        f"Tiles in hand: {counts}; boneyard {len(state.boneyard)}",
    ]
    if result is not None and ended is state:
        lines.append(f"Result: {result_line(state)}")
        lines.extend(_revealed(state))
    elif scene.reveal:
        lines.append("Hands: " + "; ".join(f"{player_name(s)} {hand_text(state, s)}" for s in range(players)))
        lines.append(f"Boneyard: {' '.join(state.game.tiles.names[t] for t in state.boneyard)} (next draw first)")
    if scene.episode == "match":
        scores = ", ".join(f"{player_name(seat)} {score}" for seat, score in enumerate(state.scores))
        lines.append(f"Scores: {scores} (target {state.game.target})")
        over = match_line(state)
        if over is not None:
            lines.append(over)
    lines.append(describe.describe_line(state.line, lang, state.game.tiles))
    return "\n".join(lines)


def _line_text(state: DrawState) -> str:
    return "".join(f"[{a}|{b}]" for a, b in oriented_line(state)) or "(empty)"


def _revealed(state: DrawState) -> list[str]:
    result = state.result
    assert result is not None
    return [
        f"  {player_name(seat)}: {hand_text(state, seat)} ({result.pips[seat]} pips, {result.points[seat]} points)"
        for seat in range(state.num_players)
    ]


# ---------------------------------------------------------------------------- the 3x5 pixel font

# Each glyph is 5 rows of 3 pixels, '#' set. Drawn for this project; upper case only.
_GLYPHS = {
    "0": "### #.# #.# #.# ###", "1": ".#. ##. .#. .#. ###", "2": "### ..# ### #.. ###",
    "3": "### ..# ### ..# ###", "4": "#.# #.# ### ..# ..#", "5": "### #.. ### ..# ###",
    "6": "### #.. ### #.# ###", "7": "### ..# ..# .#. .#.", "8": "### #.# ### #.# ###",
    "9": "### #.# ### ..# ###", "A": ".#. #.# ### #.# #.#", "B": "##. #.# ##. #.# ##.",
    "C": ".## #.. #.. #.. .##", "D": "##. #.# #.# #.# ##.", "E": "### #.. ##. #.. ###",
    "F": "### #.. ##. #.. #..", "G": ".## #.. #.# #.# .##", "H": "#.# #.# ### #.# #.#",
    "I": "### .#. .#. .#. ###", "J": "..# ..# ..# #.# .#.", "K": "#.# #.# ##. #.# #.#",
    "L": "#.. #.. #.. #.. ###", "M": "#.# ### ### #.# #.#", "N": "##. #.# #.# #.# #.#",
    "O": ".#. #.# #.# #.# .#.", "P": "##. #.# ##. #.. #..", "Q": ".#. #.# #.# ##. .##",
    "R": "##. #.# ##. #.# #.#", "S": ".## #.. .#. ..# ##.", "T": "### .#. .#. .#. .#.",
    "U": "#.# #.# #.# #.# ###", "V": "#.# #.# #.# #.# .#.", "W": "#.# #.# ### ### #.#",
    "X": "#.# #.# .#. #.# #.#", "Y": "#.# #.# .#. .#. .#.", "Z": "### ..# .#. #.. ###",
    " ": "... ... ... ... ...", ":": "... .#. ... .#. ...", "-": "... ... ### ... ...",
    "|": ".#. .#. .#. .#. .#.", "[": "##. #.. #.. #.. ##.", "]": ".## ..# ..# ..# .##",
    ".": "... ... ... ... .#.", ",": "... ... ... .#. #..", "(": ".#. #.. #.. #.. .#.",
    ")": ".#. ..# ..# ..# .#.", "/": "..# ..# .#. #.. #..", "+": "... .#. ### .#. ...",
    "?": "### ..# .#. ... .#.", "=": "... ### ... ### ...", ">": "#.. .#. ..# .#. #..",
    "!": ".#. .#. .#. ... .#.", "#": "#.# ### #.# ### #.#", "_": "... ... ... ... ###",
}
_FONT = {
    char: np.array([[cell == "#" for cell in row] for row in rows.split()], bool) for char, rows in _GLYPHS.items()
}
TEXT_SCALE = 2
_ADVANCE = 4 * TEXT_SCALE  # 3 pixels and a gap
TEXT_HEIGHT = 5 * TEXT_SCALE


@lru_cache(maxsize=4096)
def text_patch(text: str, color: tuple[int, int, int], background: tuple[int, int, int]) -> np.ndarray:
    """``text`` drawn in the pixel font: ``uint8 (10, 8 * len(text), 3)``, upper-cased."""
    patch = np.empty((TEXT_HEIGHT, max(1, _ADVANCE * len(text)), 3), np.uint8)
    patch[:] = background
    for index, char in enumerate(text.upper()):
        glyph = _FONT.get(char, _FONT["?"])
        big = glyph.repeat(TEXT_SCALE, 0).repeat(TEXT_SCALE, 1)
        x = index * _ADVANCE
        patch[:, x : x + 3 * TEXT_SCALE][big] = color
    patch.flags.writeable = False
    return patch


# ---------------------------------------------------------------------------- tile sprites

FELT = (28, 92, 58)
PANEL = (22, 72, 46)
IVORY = (246, 241, 226)
INK = (25, 25, 30)
BACK = (128, 36, 48)
WHITE = (240, 240, 240)
GOLD = (250, 204, 60)
SKY = (120, 200, 250)
GREY = (170, 185, 175)

#: Pip positions per value in a 3x3 grid of (row, column).
_PIPS = {
    0: (),
    1: ((1, 1),),
    2: ((0, 0), (2, 2)),
    3: ((0, 0), (1, 1), (2, 2)),
    4: ((0, 0), (0, 2), (2, 0), (2, 2)),
    5: ((0, 0), (0, 2), (1, 1), (2, 0), (2, 2)),
    6: ((0, 0), (1, 0), (2, 0), (0, 2), (1, 2), (2, 2)),
    # The larger sets' faces, as double-nine sets print them.
    7: ((0, 0), (1, 0), (2, 0), (1, 1), (0, 2), (1, 2), (2, 2)),
    8: ((0, 0), (1, 0), (2, 0), (0, 1), (2, 1), (0, 2), (1, 2), (2, 2)),
    9: ((0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2)),
}


def _face(value: int, half: int) -> np.ndarray:
    """One square half of a tile with its pips: ``uint8 (half, half, 3)``."""
    face = np.empty((half, half, 3), np.uint8)
    face[:] = IVORY
    radius = max(1.2, half / 9)
    yy, xx = np.mgrid[0:half, 0:half] + 0.5
    for row, column in _PIPS[value]:
        cy, cx = (row + 1) * half / 4, (column + 1) * half / 4
        face[(yy - cy) ** 2 + (xx - cx) ** 2 <= radius**2] = INK
    return face


@lru_cache(maxsize=512)
def tile_sprite(first: int, second: int, vertical: bool, half: int) -> np.ndarray:
    """A tile showing ``first`` left (or on top) and ``second`` right (or below), with a border.

    Shape ``(half + 2, 2 * half + 3, 3)``, or transposed when ``vertical``.
    """
    sprite = np.empty((half + 2, 2 * half + 3, 3), np.uint8)
    sprite[:] = INK
    sprite[1 : half + 1, 1 : half + 1] = _face(first, half)
    sprite[1 : half + 1, half + 2 : 2 * half + 2] = _face(second, half)
    if vertical:
        sprite = np.ascontiguousarray(sprite.transpose(1, 0, 2))
    sprite.flags.writeable = False
    return sprite


@lru_cache(maxsize=8)
def back_sprite(half: int) -> np.ndarray:
    """A face-down tile, standing: ``(2 * half + 3, half + 2, 3)``."""
    sprite = np.empty((2 * half + 3, half + 2, 3), np.uint8)
    sprite[:] = INK
    sprite[1:-1, 1:-1] = BACK
    sprite[half + 1, 2:-2] = (170, 80, 90)
    sprite.flags.writeable = False
    return sprite


# ---------------------------------------------------------------------------- the frame

WIDTH = 800
HEIGHT = 480
FRAME_SHAPE = (HEIGHT, WIDTH, 3)
LINE_HALF = 22  # half-tile size on the line
HAND_HALF = 12  # half-tile size in the hands
BONEYARD_HALF = 6  # half-tile size of the boneyard's tiles
_LINE_TOP = 70
_LINE_ROW = 54
_LINE_ROWS = 3
_PLAYERS_TOP = 262
_PLAYER_ROW = 53
_MARGIN = 12


def _background(players: int) -> np.ndarray:
    background = np.empty(FRAME_SHAPE, np.uint8)
    background[:] = FELT
    background[_LINE_TOP - 8 : _LINE_TOP + _LINE_ROWS * _LINE_ROW, :] = PANEL
    for seat in range(players - 1):
        top = _PLAYERS_TOP + seat * _PLAYER_ROW
        background[top + _PLAYER_ROW - 4 : top + _PLAYER_ROW - 3, _MARGIN:-_MARGIN] = PANEL
    background.flags.writeable = False
    return background


class Painter:
    """Draws :class:`Scene` frames.

    ``paint(scene)`` returns a new ``uint8 (480, 800, 3)`` array (frames may be kept, e.g. by a
    video recorder). The background and every sprite are made once; a frame is a copy of the
    background plus slice assignments.
    """

    def __init__(self) -> None:
        self._backgrounds = {players: _background(players) for players in PLAYER_COUNTS}

    def paint(self, scene: Scene) -> np.ndarray:
        frame = self._backgrounds[scene.state.num_players].copy()
        ended = scene.ended
        shown = ended if ended is not None else scene.state  # the finished hand is what to show
        state = scene.state
        self._header(frame, scene, shown)
        self._line(frame, shown, scene.last)
        reveal = scene.reveal or ended is not None
        for seat in range(shown.num_players):
            self._player(frame, shown, seat, reveal, acting=ended is None and seat == state.current)
        return frame

    # -- pieces

    def _text(self, frame: np.ndarray, x: int, y: int, text: str, color: tuple[int, int, int] = WHITE,
              background: tuple[int, int, int] = FELT) -> int:
        """Draw ``text`` with its top left at ``(x, y)``, clipped at the right edge; return the end x."""
        patch = text_patch(text, color, background)
        width = min(patch.shape[1], WIDTH - x)
        if width > 0:
            frame[y : y + TEXT_HEIGHT, x : x + width] = patch[:, :width]
        return x + patch.shape[1]

    def _header(self, frame: np.ndarray, scene: Scene, shown: DrawState) -> None:
        state = scene.state
        top = f"DRAW DOMINOES   HAND {shown.hand_number + 1}   BONEYARD {len(shown.boneyard)}"
        if scene.episode == "match":
            top += f"   TARGET {state.game.target}"
        self._text(frame, _MARGIN, 10, top)
        ended = scene.ended
        if ended is None:
            status, color = f"TURN: P{state.current}", WHITE
        else:
            status, color = "HAND OVER - " + result_line(ended).upper(), GOLD
        self._text(frame, _MARGIN, 28, status, color)
        if scene.finished is not None:
            over = None
        else:
            over = match_line(state) if scene.episode == "match" else None
        if over is not None:
            self._text(frame, _MARGIN, 46, over, GOLD)
        elif scene.last is not None:
            self._text(frame, _MARGIN, 46, "LAST: " + describe_action(*scene.last, scene.state.game).replace("player_", "P"), SKY)
        row = _LINE_TOP + _LINE_ROWS * _LINE_ROW + 8
        if shown.ends is not None:
            self._text(frame, _MARGIN, row, f"OPEN ENDS: LEFT {shown.left}   RIGHT {shown.right}", GOLD)
        # The boneyard, face down; the last two (never drawn) set apart.
        x = self._text(frame, 400, row, "BONEYARD", GREY) + 8
        sprite = back_sprite(BONEYARD_HALF)
        count = len(shown.boneyard)
        for index in range(count):
            if index == count - 2:
                x += 6
            x = _blit_row(frame, sprite, x, row - 4)

    def _line(self, frame: np.ndarray, state: DrawState, last: tuple[int, int] | None) -> None:
        oriented = oriented_line(state)
        if not oriented:
            self._text(frame, _MARGIN + 4, _LINE_TOP + 10, "EMPTY LINE: THE OPENER MAY LEAD ANY TILE", GREY, PANEL)
            return
        # Which shown position the last placement took: the left or the right end of the line.
        last_index = None
        if last is not None and last[1] < state.game.draw_action:
            last_index = 0 if (last[1] & 1) == 0 else len(oriented) - 1
        x, row = _MARGIN, 0
        positions = []
        for a, b in oriented:
            sprite = tile_sprite(a, b, a == b, LINE_HALF)
            height, width = sprite.shape[:2]
            if x + width > WIDTH - _MARGIN:
                x, row = _MARGIN, min(row + 1, _LINE_ROWS - 1)
            y = _LINE_TOP + row * _LINE_ROW + (_LINE_ROW - 8 - height) // 2
            frame[y : y + height, x : x + width] = sprite
            positions.append((x, y, width, height))
            x += width + 2
        if last_index is not None:
            _outline(frame, *positions[last_index], SKY)
        # The open ends: the outer half of the first and of the last tile.
        x, y, width, height = positions[0]
        if oriented[0][0] == oriented[0][1]:
            _outline(frame, x, y, width, height // 2 + 1, GOLD)
        else:
            _outline(frame, x, y, width // 2 + 1, height, GOLD)
        x, y, width, height = positions[-1]
        if oriented[-1][0] == oriented[-1][1]:
            _outline(frame, x, y + height // 2, width, height - height // 2, GOLD)
        else:
            _outline(frame, x + width // 2, y, width - width // 2, height, GOLD)

    def _player(self, frame: np.ndarray, state: DrawState, seat: int, reveal: bool, acting: bool) -> None:
        top = _PLAYERS_TOP + seat * _PLAYER_ROW
        color = GOLD if acting else WHITE
        self._text(frame, _MARGIN, top + 4, f"{'>' if acting else ' '}P{seat}", color)
        count = state.hand_count(seat)
        self._text(frame, _MARGIN, top + 20, f"{count} TILE{'S' if count != 1 else ''}", GREY)
        self._text(frame, _MARGIN, top + 34, f"SCORE {state.scores[seat]}", GREY)
        x = 150
        if reveal:
            result = state.result
            pips = state.hand_pips(seat)
            label = f"{pips} PIPS" + (f"  +{result.points[seat]} POINTS" if result is not None else "")
            self._text(frame, WIDTH - _MARGIN - _ADVANCE * 22, top + 4, f"{label:>22}", GOLD if result and result.points[seat] else GREY)
            for tile in state.hand_tiles(seat):
                low, high = state.game.tiles.tiles[tile]
                sprite = tile_sprite(low, high, True, HAND_HALF)
                x = _blit_row(frame, sprite, x, top + 20 - 4)
        else:
            sprite = back_sprite(HAND_HALF)
            for _ in range(count):
                x = _blit_row(frame, sprite, x, top + 20 - 4)


def _blit_row(frame: np.ndarray, sprite: np.ndarray, x: int, y: int) -> int:
    """Blit a hand sprite at ``(x, y)`` unless it would leave the frame; return the next x."""
    height, width = sprite.shape[:2]
    if x + width <= WIDTH - _MARGIN:
        frame[y : y + height, x : x + width] = sprite
    return x + width + 3


def _outline(frame: np.ndarray, x: int, y: int, width: int, height: int, color: tuple[int, int, int]) -> None:
    """A 2-pixel frame just outside the rectangle ``(x, y, width, height)``."""
    x0, y0 = max(0, x - 2), max(0, y - 2)
    x1, y1 = min(WIDTH, x + width + 2), min(HEIGHT, y + height + 2)
    frame[y0 : y0 + 2, x0:x1] = color
    frame[y1 - 2 : y1, x0:x1] = color
    frame[y0:y1, x0 : x0 + 2] = color
    frame[y0:y1, x1 - 2 : x1] = color


@lru_cache(maxsize=1)
def painter() -> Painter:
    """The shared :class:`Painter` (it holds nothing but read-only backgrounds)."""
    return Painter()


def render_rgb(scene: Scene) -> np.ndarray:
    """The ``rgb_array`` frame of ``scene``: ``uint8`` :data:`FRAME_SHAPE`."""
    return painter().paint(scene)
