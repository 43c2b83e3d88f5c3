// draw-web's page: set up a table, then show the game the server holds and send moves.
// Everything from the server is shown with textContent or as SVG attributes (numbers only):
// no markup is ever built from data. The server checks every move; this script only offers them.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const HALF = 22; // px: one square half of a tile
let options = null; // GET /api/options
let view = null; // the game's latest view
let selected = null; // the hand entry chosen, waiting for an end
let busy = false; // a request is under way: one at a time

const $ = (id) => document.getElementById(id);

// The page's own words in the game's language (the game's sentences come from the server).
const LABELS = {
  en: {
    hint: "Show the hint agent's view", keys: "Keys: 1-9 choose a tile, L or R an end, D draw, P pass, H the hint panel.",
    move: "move", probability: "probability", value: "value (points)", download: "Download the record", replay: "Open the replay",
    again: "New game", saved: "saved as", tile: "tile", tiles: "tiles", points: "points", you: "you",
    position: "value of the position: {v} points (its estimate of your zero-sum hand points)",
  },
  ja: {
    hint: "ヒントのエージェントの見方を表示", keys: "キー: 1-9 でタイルを選ぶ、L か R で端、D で引く、P でパス、H でヒント欄。",
    move: "手", probability: "確率", value: "価値（点）", download: "記録をダウンロード", replay: "リプレイを開く",
    again: "新しいゲーム", saved: "保存先", tile: "枚", tiles: "枚", points: "点", you: "あなた",
    position: "局面の価値: {v} 点（あなたのゼロサムの得点の推定）",
  },
  it: {
    hint: "Mostra il parere dell'agente dei suggerimenti", keys: "Tasti: 1-9 scelgono una tessera, L o R un'estremità, D pesca, P passa, H il pannello dei suggerimenti.",
    move: "mossa", probability: "probabilità", value: "valore (punti)", download: "Scarica la registrazione", replay: "Apri la riproduzione",
    again: "Nuova partita", saved: "salvata come", tile: "tessera", tiles: "tessere", points: "punti", you: "tu",
    position: "valore della posizione: {v} punti (la sua stima dei tuoi punti a somma zero)",
  },
};
const words = () => LABELS[view && LABELS[view.lang] ? view.lang : "en"];

function showLabels() {
  const w = words();
  [["label-hint", w.hint], ["label-keys", w.keys], ["label-move", w.move], ["label-probability", w.probability],
    ["hint-value-head", w.value], ["download", w.download], ["replay", w.replay], ["again", w.again]]
    .forEach(([id, text]) => { $(id).textContent = text; });
  document.documentElement.lang = view.lang;
}

function say(text, isError) {
  const box = $("message");
  box.textContent = text || "";
  box.classList.toggle("error", Boolean(isError));
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) {
    const error = new Error(data.error || response.statusText);
    error.status = response.status;
    throw error;
  }
  return data;
}

// ---------------------------------------------------------------- drawing

function node(tag, attributes) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

function face(group, value, x, y) {
  for (const [row, column] of options.pips[String(value)] || []) {
    group.appendChild(node("circle", { cx: x + ((column + 1) * HALF) / 4, cy: y + ((row + 1) * HALF) / 4, r: HALF / 9 + 0.4, class: "pip" }));
  }
}

// One tile [a|b] as an SVG element: a on the left (or top), b on the right (or bottom).
function tile(a, b, vertical) {
  const width = vertical ? HALF : 2 * HALF;
  const height = vertical ? 2 * HALF : HALF;
  const svg = node("svg", { width: width + 2, height: height + 2, viewBox: `-1 -1 ${width + 2} ${height + 2}`, class: "tile" });
  svg.appendChild(node("rect", { x: 0, y: 0, width, height, rx: 3, class: "face" }));
  if (vertical) svg.appendChild(node("line", { x1: 2, y1: HALF, x2: HALF - 2, y2: HALF, class: "divider" }));
  else svg.appendChild(node("line", { x1: HALF, y1: 2, x2: HALF, y2: HALF - 2, class: "divider" }));
  face(svg, a, 0, 0);
  face(svg, b, vertical ? 0 : HALF, vertical ? HALF : 0);
  const title = document.createElementNS(SVG, "title");
  title.textContent = `[${Math.min(a, b)}|${Math.max(a, b)}]`;
  svg.appendChild(title);
  return svg;
}

function drawLine(container, pairs) {
  container.replaceChildren(...pairs.map(([a, b]) => tile(a, b, a === b)));
}

// ---------------------------------------------------------------- set-up

function seatInputs() {
  const count = Number($("players").value);
  const box = $("seats");
  const kept = Array.from(box.querySelectorAll("input")).map((input) => input.value);
  box.replaceChildren();
  for (let seat = 0; seat < count; seat += 1) {
    const label = document.createElement("label");
    label.textContent = `player_${seat} `;
    const input = document.createElement("input");
    input.id = `seat-${seat}`;
    input.setAttribute("list", "agent-names");
    input.value = kept[seat] !== undefined ? kept[seat] : seat === 0 ? options.person : options.defaultSeats[1];
    label.appendChild(input);
    box.appendChild(label);
  }
}

function numberOrNull(id) {
  const text = $(id).value.trim();
  return text === "" ? null : Number(text);
}

async function start() {
  if (busy) return;
  const count = Number($("players").value);
  const setup = {
    seats: Array.from({ length: count }, (_, seat) => $(`seat-${seat}`).value.trim()),
    episode: $("episode").value,
    lang: $("lang").value,
    variant: $("variant").value || null,
    max_pip: numberOrNull("max-pip"),
    hand_size: numberOrNull("hand-size"),
    protected: numberOrNull("protected"),
    seed: numberOrNull("seed"),
    hint: $("hint-agent").value.trim() || null,
  };
  busy = true;
  say("Dealing...");
  try {
    const answer = await api("POST", "/api/games", setup);
    location.hash = answer.id;
    say("");
    show(answer);
  } catch (error) {
    say(error.message, true);
  } finally {
    busy = false;
  }
}

// ---------------------------------------------------------------- the table

function show(next) {
  view = next;
  selected = null;
  document.body.dataset.step = String(view.step);
  document.body.dataset.finished = String(view.finished);
  showLabels();
  const w = words();
  $("setup").hidden = true;
  $("table").hidden = false;
  const texts = view.texts;
  $("turn").textContent = view.toMove === null ? "" : texts.turn.replace(/^[-\s]+|[-\s]+$/g, "");
  $("scores").textContent = view.episode === "match" ? texts.scores : "";
  $("seat-list").replaceChildren(
    ...view.players.map((label, seat) => {
      const item = document.createElement("li");
      const who = seat === view.you ? `player_${seat} (${label}, ${w.you})` : `player_${seat} (${label})`;
      const count = `${view.counts[seat]} ${view.counts[seat] === 1 ? w.tile : w.tiles}`;
      item.textContent = `${who}: ${count}${view.episode === "match" ? `, ${view.scores[seat]} ${w.points}` : ""}`;
      if (seat === view.toMove) item.classList.add("to-move");
      return item;
    }),
  );
  drawLine($("line"), view.line);
  $("ends").textContent = texts.ends;
  $("boneyard").textContent = texts.boneyard;
  $("description").textContent = view.description;
  $("recent").replaceChildren(
    ...view.recent.map((line) => {
      const item = document.createElement("li");
      item.textContent = line;
      return item;
    }),
  );
  $("drew").textContent = view.drew || "";
  $("hand-title").textContent = texts.hand;
  showHand();
  $("draw").textContent = view.words.draw;
  $("pass").textContent = view.words.pass;
  $("draw").disabled = view.draw === null;
  $("pass").disabled = view.pass === null;
  showEnds();
  showResults();
  $("finished").hidden = !view.finished;
  if (view.finished) {
    $("outcome").textContent = view.outcome || "";
    $("download").href = `/api/games/${encodeURIComponent(view.id)}/record`;
    $("replay").href = `/api/games/${encodeURIComponent(view.id)}/replay`;
    $("saved").textContent = view.record ? `${w.saved} ${view.record}` : "";
  }
  // A record the server could not write (the records folder failing): it keeps it, and says why.
  if (view.recordError) say(view.recordError, true);
  if (view.failure) say(view.failure, true);
  if ($("show-hint").checked && view.toMove !== null) loadHint();
  else $("hint").hidden = true;
}

function showHand() {
  const buttons = view.hand.map((entry, index) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "hand-tile";
    button.dataset.tile = String(entry.tile);
    button.dataset.index = String(index + 1);
    button.setAttribute("aria-label", `${index + 1}: ${entry.name}`);
    if (entry.actions.length) button.classList.add("playable");
    if (selected === entry) button.classList.add("selected");
    button.appendChild(tile(entry.faces[0], entry.faces[1], true));
    button.addEventListener("click", () => choose(entry));
    return button;
  });
  $("hand").replaceChildren(...buttons);
}

function endAction(end) {
  // end 0 is the left end, 1 the right: an action places tile t at end e as 2t + e.
  return selected === null ? null : selected.actions.find((action) => action % 2 === end);
}

function showEnds() {
  const ends = view.ends;
  [["end-left", 0, view.words.left], ["end-right", 1, view.words.right]].forEach(([id, end, word]) => {
    const button = $(id);
    button.textContent = ends === null ? word : `${word} ${ends[end]}`;
    button.disabled = endAction(end) === undefined || endAction(end) === null;
  });
}

function showResults() {
  const results = view.results;
  $("results").hidden = results === null;
  if (results === null) return;
  $("results-title").textContent = results.text;
  drawLine($("results-line"), results.line);
  $("revealed").replaceChildren(
    ...results.revealed.map((seat) => {
      const item = document.createElement("li");
      item.textContent = seat.text;
      item.dataset.points = String(seat.points);
      return item;
    }),
  );
}

// A click on a hand tile: it plays at once when it fits one end only; with two ends it waits
// for an end. A tile that fits nowhere is still sent, and the server refuses it.
function choose(entry) {
  if (view === null || view.toMove === null || busy) return;
  if (entry.actions.length === 1) {
    send(entry.actions[0]);
  } else if (entry.actions.length === 0) {
    send(2 * entry.tile);
  } else {
    selected = entry;
    showHand();
    showEnds();
    say(`${entry.name}: ${view.words.left} / ${view.words.right}?`);
  }
}

function chooseEnd(end) {
  const action = endAction(end);
  if (action !== undefined && action !== null) send(action);
}

async function send(action) {
  if (busy) return;
  busy = true;
  try {
    const answer = await api("POST", `/api/games/${encodeURIComponent(view.id)}/move`, { action, step: view.step });
    say("");
    show(answer);
  } catch (error) {
    say(error.message, true);
    document.body.dataset.refused = String(Number(document.body.dataset.refused || 0) + 1);
    if (error.status === 409) await reload();
  } finally {
    busy = false;
  }
}

async function reload() {
  try {
    show(await api("GET", `/api/games/${encodeURIComponent(view.id)}`));
  } catch (error) {
    say(error.message, true);
  }
}

async function loadHint() {
  const asked = view.step;
  try {
    const hint = await api("GET", `/api/games/${encodeURIComponent(view.id)}/hint`);
    if (view === null || view.step !== asked) return;
    $("hint").hidden = false;
    $("hint-title").textContent = `${hint.agent}:`;
    $("hint-value").textContent = hint.value === undefined ? "" : words().position.replace("{v}", hint.value.toFixed(1));
    const withValues = hint.moves.some((move) => move.value !== undefined);
    $("hint-value-head").hidden = !withValues;
    $("hint-moves").replaceChildren(
      ...hint.moves.map((move) => {
        const row = document.createElement("tr");
        const name = document.createElement("td");
        name.textContent = move.name;
        const probability = document.createElement("td");
        const meter = document.createElement("meter");
        meter.min = 0;
        meter.max = 1;
        meter.value = move.probability;
        const percent = document.createElement("span");
        percent.textContent = ` ${(100 * move.probability).toFixed(1)}%`;
        probability.append(meter, percent);
        const value = document.createElement("td");
        value.textContent = move.value === undefined ? "" : move.value.toFixed(1);
        value.hidden = !withValues;
        row.append(name, probability, value);
        return row;
      }),
    );
  } catch (error) {
    say(error.message, true);
  }
}

function onKey(event) {
  if (view === null || $("table").hidden || event.target instanceof HTMLInputElement) return;
  const key = event.key.toLowerCase();
  if (/^[1-9]$/.test(key)) {
    const entry = view.hand[Number(key) - 1];
    if (entry) choose(entry);
  } else if (key === "l" || key === "arrowleft") {
    if (selected !== null) chooseEnd(0);
  } else if (key === "r" || key === "arrowright") {
    if (selected !== null) chooseEnd(1);
  } else if (key === "d") {
    if (view.draw !== null) send(view.draw);
  } else if (key === "p") {
    if (view.pass !== null) send(view.pass);
  } else if (key === "h") {
    $("show-hint").checked = !$("show-hint").checked;
    show(view);
  } else if (key === "escape") {
    selected = null;
    showHand();
    showEnds();
  } else {
    return;
  }
  event.preventDefault();
}

async function init() {
  try {
    options = await api("GET", "/api/options");
  } catch (error) {
    say(`cannot reach the server: ${error.message}`, true);
    return;
  }
  $("agent-names").replaceChildren(
    ...[options.person, ...options.named, ...options.agents].map((name) => {
      const option = document.createElement("option");
      option.value = name;
      return option;
    }),
  );
  // A named variant fills in its numbers; editing a number leaves the name for the numbers.
  $("variant").append(
    ...Object.keys(options.variants).map((name) => {
      const option = document.createElement("option");
      option.value = option.textContent = name;
      return option;
    }),
  );
  $("variant").addEventListener("change", () => {
    const numbers = options.variants[$("variant").value];
    if (!numbers) return;
    $("max-pip").value = numbers.max_pip;
    $("hand-size").value = numbers.hand_size === null ? "" : numbers.hand_size;
    $("protected").value = numbers.protected;
  });
  for (const id of ["max-pip", "hand-size", "protected"]) {
    $(id).addEventListener("input", () => { $("variant").value = ""; });
  }
  seatInputs();
  $("players").addEventListener("change", seatInputs);
  $("start").addEventListener("click", start);
  $("draw").addEventListener("click", () => view && view.draw !== null && send(view.draw));
  $("pass").addEventListener("click", () => view && view.pass !== null && send(view.pass));
  $("end-left").addEventListener("click", () => chooseEnd(0));
  $("end-right").addEventListener("click", () => chooseEnd(1));
  $("show-hint").addEventListener("change", () => view && show(view));
  $("again").addEventListener("click", () => {
    view = null;
    document.documentElement.lang = "en";
    location.hash = "";
    $("table").hidden = true;
    $("setup").hidden = false;
  });
  document.addEventListener("keydown", onKey);
  // #ID reopens a game the server still holds (a reload keeps the game); #ID/hint also opens the hint panel.
  const [id, panel] = location.hash.slice(1).split("/");
  if (panel === "hint") $("show-hint").checked = true;
  if (/^[A-Za-z0-9_-]{22}$/.test(id)) {
    try {
      show(await api("GET", `/api/games/${id}`));
    } catch (error) {
      say(error.message, true);
    }
  }
  document.body.dataset.ready = "1";
}

init();
