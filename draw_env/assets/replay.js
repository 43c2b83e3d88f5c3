"use strict";
// The game is data, never code: a JSON block parsed here, and every text drawn with textContent.
const DATA = JSON.parse(document.getElementById("game-data").textContent);
const RECORD = DATA.record;
const FRAMES = DATA.frames;
const NS = "http://www.w3.org/2000/svg";
const PIPS = {0: [], 1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]],
  4: [[0, 0], [0, 2], [2, 0], [2, 2]], 5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]],
  6: [[0, 0], [1, 0], [2, 0], [0, 2], [1, 2], [2, 2]],
  // The larger sets' faces, as draw_env/render.py draws them.
  7: [[0, 0], [1, 0], [2, 0], [1, 1], [0, 2], [1, 2], [2, 2]],
  8: [[0, 0], [1, 0], [2, 0], [0, 1], [2, 1], [0, 2], [1, 2], [2, 2]],
  9: [[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1], [0, 2], [1, 2], [2, 2]]};
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
    const marker = f.current === seat ? "\u25b6 " : "";
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
