"""``draw-replay``: step through a game record in the terminal, or write it as one HTML page.

Usage::

    draw-replay game.json                 # Enter or n: next, p: previous, q: quit (also piped)
    draw-replay game.json --html game.html  # one self-contained page; arrow keys step

Every position is shown as a spectator sees it (every hand face up), with the last action and
who made it; the last position of each hand shows its result. The page needs no network: the
positions are embedded as JSON and drawn as inline SVG by a small script.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import IO, Any

from draw_env import describe
from draw_env.commands import check_extras, error_line, exit_on_signals
from draw_env.io.files import check_distinct, check_writable, write_text_atomic
from draw_env.io.records import Position, positions, read_record, record_game, replay_record, variant_text
from draw_env.render import Scene, describe_action, match_line, oriented_line, render_text, result_line


def scene_of(record: Mapping[str, Any], position: Position) -> Scene:
    return Scene(position.state, record["episode"], position.last, None, True)


def position_header(record: Mapping[str, Any], position: Position, index: int, total: int) -> str:
    steps = len(record["hands"][position.hand]["actions"])
    return (
        f"[{index + 1}/{total}] hand {position.hand + 1} of {len(record['hands'])}, "
        f"step {position.step}/{steps}"
    )


def frame_data(record: Mapping[str, Any], position: Position, lang: str) -> dict[str, Any]:
    """What the page draws for one position (JSON-ready)."""
    state = position.state
    result = state.result
    players = state.num_players
    game = state.game
    if result is not None:
        status = "Hand over, " + result_line(state)
    else:
        status = f"player_{state.current} to act"
    return {
        "hand": position.hand,
        "step": position.step,
        "steps": len(record["hands"][position.hand]["actions"]),
        "line": [list(pair) for pair in oriented_line(state)],
        "ends": None if state.ends is None else list(state.ends),
        "hands": [[list(game.tiles.tiles[t]) for t in state.hand_tiles(seat)] for seat in range(players)],
        "pips": [state.hand_pips(seat) for seat in range(players)],
        "points": None if result is None else list(result.points),
        "boneyard": len(state.boneyard),
        "scores": list(state.scores),
        "current": None if result is not None else state.current,
        "last": None if position.last is None else describe_action(*position.last, game),
        "lastEnd": None if position.last is None or position.last[1] >= game.draw_action else position.last[1] & 1,
        "status": status,
        "match": match_line(state) if record["episode"] == "match" else None,
        "description": describe.describe_line(state.line, lang, game.tiles),
    }


#: The page template and its style and script: package data (``draw_env/assets``).
_ASSETS = resources.files("draw_env") / "assets"
_PLACEHOLDER = re.compile(r"__([A-Z]+)__")


def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _csp_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def embed_json(value: object) -> str:
    """``value`` as JSON that is inert inside any HTML element, a ``<script>`` block included.

    ``<``, ``>`` and ``&`` (which could end the block or start markup) and U+2028/U+2029 (line
    ends to some JavaScript parsers) become ``\\uXXXX`` escapes, which JSON reads back as the
    same characters; outside strings JSON never holds them.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def html_page(record: Mapping[str, Any], lang: str = "en", title: str | None = None) -> str:
    """One self-contained HTML page stepping through ``record`` (no network, no external file).

    The record's text (player names...) reaches the page only as data: HTML-escaped in the title,
    and otherwise inside one JSON block that the page's script reads and draws with
    ``textContent``. The template is filled in one pass, so a value that looks like a
    placeholder stays text. A Content-Security-Policy lets only the page's own script and style
    (by hash) run: no inline event handler, no other script, no network.
    """
    frames = [frame_data(record, position, lang) for position in positions(record)]
    players = int(record["num_players"])
    game = record_game(record)
    variant = "" if game.is_default else f", {variant_text(game)}"
    title = title or f"Draw dominoes: {' vs '.join(record['players'])} ({record['episode']}{variant})"
    style, script = _asset("replay.css"), _asset("replay.js")
    csp = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    values = {
        "CSP": csp,
        "TITLE": html.escape(title),
        "STYLE": style,
        "SCRIPT": script,
        "HEIGHT": str(200 + 62 * players),
        "DATA": embed_json(
            {"record": {"players": list(record["players"]), "numHands": len(record["hands"])}, "frames": frames}
        ),
    }
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], _asset("replay.html"))


def write_html(record: Mapping[str, Any], path: str | os.PathLike[str], lang: str = "en") -> Path:
    """Write :func:`html_page` to ``path`` atomically (temp file, then rename)."""
    return write_text_atomic(path, html_page(record, lang))


def step_through(record: Mapping[str, Any], stdin: IO[str], stdout: IO[str], lang: str = "en") -> None:
    """Show one position at a time; Enter or ``n`` next, ``p`` previous, ``q`` quit; EOF quits."""
    shown = list(positions(record))
    game = record_game(record)
    if not game.is_default:
        print(f"Variant: {variant_text(game)}", file=stdout)
    index = 0
    while True:
        position = shown[index]
        print(position_header(record, position, index, len(shown)), file=stdout)
        print(render_text(scene_of(record, position), lang), file=stdout)
        if index == len(shown) - 1:
            print("End of the record.", file=stdout)
        stdout.write("[Enter/n] next, [p] previous, [q] quit: ")
        stdout.flush()
        line = stdin.readline()
        print(file=stdout)
        if not line:
            return
        command = line.strip().lower()
        if command in ("q", "quit"):
            return
        if command == "p":
            index = max(0, index - 1)
        elif command in ("", "n"):
            if index == len(shown) - 1:
                return
            index += 1
        else:
            print(f"  unknown command {command!r}: use Enter or n, p, q", file=stdout)


def main(argv: Sequence[str] | None = None, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    check_extras("draw-replay")
    parser = argparse.ArgumentParser(prog="draw-replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("record", help="a game record (JSON, see docs/records.md)")
    parser.add_argument("--html", metavar="OUT", help="write one self-contained HTML page here instead")
    parser.add_argument("--lang", choices=describe.LANGUAGES, default="en", help="language of the line description")
    args = parser.parse_args(argv)
    out = stdout or sys.stdout
    try:
        with exit_on_signals():
            if args.html:  # before reading the record; nothing is created yet
                check_distinct([("--html", args.html)], [("the record", args.record)])
                check_writable("--html", args.html, create=False)
            record = read_record(args.record)
            try:
                replay_record(record)  # every recomputable field agrees, or the record is refused
            except ValueError as error:
                raise ValueError(f"{args.record}: {error}") from None
            if args.html:
                path = write_html(record, args.html, args.lang)
                print(f"wrote {path} ({len(list(positions(record)))} positions; open it in a browser, arrow keys step)", file=out)
                return 0
            step_through(record, stdin or sys.stdin, out, args.lang)
    except (OSError, ValueError) as error:
        # One line naming the file and the field, no traceback, as reported_errors prints it;
        # returned rather than raised, so that main() can be called from Python.
        print(f"{parser.prog}: error: {error_line(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(file=out)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
