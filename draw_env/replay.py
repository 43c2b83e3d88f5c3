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
import html
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from draw_env import describe, tiles
from draw_env.files import write_text_atomic
from draw_env.records import Position, positions, read_record
from draw_env.render import Scene, describe_action, match_line, oriented_line, render_text, result_line
from draw_env.rules import DRAW


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
        "hands": [[list(tiles.TILES[t]) for t in state.hand_tiles(seat)] for seat in range(players)],
        "pips": [state.hand_pips(seat) for seat in range(players)],
        "points": None if result is None else list(result.points),
        "boneyard": len(state.boneyard),
        "scores": list(state.scores),
        "current": None if result is not None else state.current,
        "last": None if position.last is None else describe_action(*position.last),
        "lastEnd": None if position.last is None or position.last[1] >= DRAW else position.last[1] & 1,
        "status": status,
        "match": match_line(state) if record["episode"] == "match" else None,
        "description": describe.describe_line(state.line, lang),
    }


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body { background: #143d28; color: #eee; font-family: sans-serif; margin: 16px; }
#status { font-size: 18px; margin: 6px 0; }
#last { color: #8cd0ff; margin: 4px 0; }
#match { color: #fc3; font-weight: bold; }
#description { color: #bbb; font-size: 13px; max-width: 800px; }
svg { background: #1c5c3a; display: block; }
kbd { background: #eee; color: #222; border-radius: 3px; padding: 0 4px; }
</style></head>
<body>
<h1 style="font-size:20px">__TITLE__</h1>
<div id="counter"></div>
<div id="status"></div>
<div id="last"></div>
<div id="match"></div>
<svg id="board" xmlns="http://www.w3.org/2000/svg" width="820" height="__HEIGHT__" viewBox="0 0 820 __HEIGHT__"></svg>
<p id="description"></p>
<p><kbd>&rarr;</kbd> next, <kbd>&larr;</kbd> previous, <kbd>Home</kbd>/<kbd>End</kbd> first/last;
the page address ends with <code>#N</code> for position N.</p>
<script>
"use strict";
const RECORD = __RECORD__;
const FRAMES = __FRAMES__;
const NS = "http://www.w3.org/2000/svg";
const PIPS = {0: [], 1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]],
  4: [[0, 0], [0, 2], [2, 0], [2, 2]], 5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]],
  6: [[0, 0], [1, 0], [2, 0], [0, 2], [1, 2], [2, 2]]};
let index = 0;

function el(name, attrs, parent) {
  const node = document.createElementNS(NS, name);
  for (const key in attrs) node.setAttribute(key, attrs[key]);
  parent.appendChild(node);
  return node;
}
function face(parent, x, y, size, value) {
  for (const [row, col] of PIPS[value]) {
    el("circle", {cx: x + (col + 1) * size / 4, cy: y + (row + 1) * size / 4, r: size / 10, fill: "#191919"}, parent);
  }
}
// A tile showing a then b, left to right (or top to bottom when vertical); returns its width.
function tile(parent, x, y, a, b, size, vertical, outline) {
  const w = vertical ? size : 2 * size, h = vertical ? 2 * size : size;
  el("rect", {x: x, y: y, width: w, height: h, rx: 3, fill: "#f6f1e2", stroke: outline || "#191919",
    "stroke-width": outline ? 3 : 1}, parent);
  if (vertical) {
    el("line", {x1: x + 2, y1: y + size, x2: x + size - 2, y2: y + size, stroke: "#191919"}, parent);
    face(parent, x, y, size, a); face(parent, x, y + size, size, b);
  } else {
    el("line", {x1: x + size, y1: y + 2, x2: x + size, y2: y + size - 2, stroke: "#191919"}, parent);
    face(parent, x, y, size, a); face(parent, x + size, y, size, b);
  }
  return w;
}
function text(parent, x, y, content, color, size) {
  const node = el("text", {x: x, y: y, fill: color || "#eee", "font-size": size || 14, "font-family": "sans-serif"}, parent);
  node.textContent = content;
}
function show(i) {
  index = Math.max(0, Math.min(FRAMES.length - 1, i));
  const f = FRAMES[index];
  const svg = document.getElementById("board");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  document.getElementById("counter").textContent =
    `Position ${index + 1} of ${FRAMES.length}: hand ${f.hand + 1} of ${RECORD.numHands}, step ${f.step} of ${f.steps}`;
  document.getElementById("status").textContent = f.status;
  document.getElementById("last").textContent = f.last ? "Last action: " + f.last : "New deal";
  document.getElementById("match").textContent = f.match || "";
  document.getElementById("description").textContent = f.description;
  text(svg, 12, 22, `Boneyard ${f.boneyard} \u00b7 ` + (f.ends ? `open ends: left ${f.ends[0]}, right ${f.ends[1]}` : "empty line"), "#fc3");
  let x = 12, y = 40;
  const size = 22;
  f.line.forEach(([a, b], k) => {
    const vertical = a === b, w = vertical ? size : 2 * size;
    if (x + w > 808) { x = 12; y += 2 * size + 10; }
    let outline = null;
    if (f.lastEnd !== null && ((f.lastEnd === 0 && k === 0) || (f.lastEnd === 1 && k === f.line.length - 1))) outline = "#8cd0ff";
    const ty = y + (vertical ? 0 : size / 2);
    tile(svg, x, ty, a, b, size, vertical, outline);
    // The open ends: the outer half of the first and of the last tile, framed in gold.
    const ends = [];
    if (k === 0) ends.push(0);
    if (k === f.line.length - 1) ends.push(1);
    for (const end of ends) {
      const hx = vertical ? x : x + end * size, hy = vertical ? ty + end * size : ty;
      el("rect", {x: hx - 1, y: hy - 1, width: size + 2, height: size + 2, fill: "none", stroke: "#fc3", "stroke-width": 2}, svg);
    }
    x += w + 3;
  });
  let top = 200;
  f.hands.forEach((held, seat) => {
    const name = RECORD.players[seat] + ` (player_${seat})`;
    const marker = f.current === seat ? "\\u25b6 " : "";
    let label = `${marker}${name}: ${held.length} tiles, ${f.pips[seat]} pips, score ${f.scores[seat]}`;
    if (f.points) label += `, +${f.points[seat]} points`;
    text(svg, 12, top + 14, label, f.current === seat ? "#fc3" : "#eee");
    let hx = 12;
    for (const [a, b] of held) { if (hx + 16 < 808) tile(svg, hx, top + 20, a, b, 16, true, null); hx += 19; }
    top += 62;
  });
  if (location.hash !== "#" + (index + 1)) history.replaceState(null, "", "#" + (index + 1));
}
document.addEventListener("keydown", (event) => {
  if (event.key === "ArrowRight") show(index + 1);
  else if (event.key === "ArrowLeft") show(index - 1);
  else if (event.key === "Home") show(0);
  else if (event.key === "End") show(FRAMES.length - 1);
  else return;
  event.preventDefault();
});
const start = parseInt(location.hash.slice(1), 10);
show(Number.isFinite(start) ? start - 1 : 0);
</script>
</body></html>
"""


def html_page(record: Mapping[str, Any], lang: str = "en", title: str | None = None) -> str:
    """One self-contained HTML page stepping through ``record`` (no network, no external file)."""
    frames = [frame_data(record, position, lang) for position in positions(record)]
    players = int(record["num_players"])
    title = title or f"Draw dominoes: {' vs '.join(record['players'])} ({record['episode']})"

    def embed(value: object) -> str:
        # "</" inside a script element would end it: escape it (JSON allows "\/").
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")

    return (
        _PAGE.replace("__TITLE__", html.escape(title))
        .replace("__HEIGHT__", str(200 + 62 * players))
        .replace("__RECORD__", embed({"players": record["players"], "numHands": len(record["hands"])}))
        .replace("__FRAMES__", embed(frames))
    )


def write_html(record: Mapping[str, Any], path: str | os.PathLike[str], lang: str = "en") -> Path:
    """Write :func:`html_page` to ``path`` atomically (temp file, then rename)."""
    return write_text_atomic(path, html_page(record, lang))


def step_through(record: Mapping[str, Any], stdin: IO[str], stdout: IO[str], lang: str = "en") -> None:
    """Show one position at a time; Enter or ``n`` next, ``p`` previous, ``q`` quit; EOF quits."""
    shown = list(positions(record))
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
    parser = argparse.ArgumentParser(prog="draw-replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("record", help="a game record (JSON, see docs/records.md)")
    parser.add_argument("--html", metavar="OUT", help="write one self-contained HTML page here instead")
    parser.add_argument("--lang", choices=describe.LANGUAGES, default="en", help="language of the line description")
    args = parser.parse_args(argv)
    out = stdout or sys.stdout
    try:
        record = read_record(args.record)
        if args.html:
            path = write_html(record, args.html, args.lang)
            print(f"wrote {path} ({len(list(positions(record)))} positions; open it in a browser, arrow keys step)", file=out)
            return 0
        step_through(record, stdin or sys.stdin, out, args.lang)
    except (OSError, ValueError) as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
