"""draw-replay: the terminal stepper and the HTML page, the page checked in headless Chromium.

The browser is driven through the DevTools protocol over ``--remote-debugging-pipe`` (NUL-separated
JSON on file descriptors 3 and 4): no websocket library and no network. The test is skipped where
Chromium is not installed (``.ci/run`` installs Debian's ``chromium``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import random
import re
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import draw_env
from draw_env.io.records import RecordingWrapper, positions, write_record
from draw_env.io.replay import html_page, main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def make_record(tmp_path: Path, num_players: int = 3) -> Path:
    env = RecordingWrapper(draw_env.env(num_players=num_players, episode="match"), players=["human", "ppo", "ismcts"][:num_players])
    env.reset(seed=9)
    rng = random.Random(9)
    for _agent in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return write_record(env.record, tmp_path / "game.json")


def test_terminal_replay_steps_forward_and_back(tmp_path: Path) -> None:
    path = make_record(tmp_path)
    out = io.StringIO()
    assert main([str(path)], stdin=io.StringIO("\nn\np\nq\n"), stdout=out) == 0
    shown = [int(match.group(1)) for match in re.finditer(r"^\[(\d+)/\d+\] hand ", out.getvalue(), re.MULTILINE)]
    assert shown == [1, 2, 3, 2]
    # Piped to the end: every position once, the last one shows the match result.
    out = io.StringIO()
    total = len(list(positions(json.loads(path.read_text()))))
    main([str(path)], stdin=io.StringIO("\n" * (total + 5)), stdout=out)
    text = out.getvalue()
    assert len(re.findall(r"^\[\d+/\d+\] hand ", text, re.MULTILINE)) == total and "End of the record." in text and "Match over: " in text


def test_the_page_is_self_contained(tmp_path: Path) -> None:
    record = json.loads(make_record(tmp_path).read_text())
    page = html_page(record)
    assert "<svg" in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page and "<script src" not in page and "<link" not in page
    out = io.StringIO()
    assert main([str(tmp_path / "game.json"), "--html", str(tmp_path / "game.html")], stdout=out) == 0
    assert (tmp_path / "game.html").read_text(encoding="utf-8") == page


class DevTools:
    """A minimal Chrome DevTools protocol client over --remote-debugging-pipe."""

    def __init__(self, profile: Path) -> None:
        to_browser_read, self._write = os.pipe()
        self._read, from_browser_write = os.pipe()
        # The browser reads commands on fd 3 and writes replies on fd 4.
        def remap() -> None:
            # Via high numbers first, so that neither dup2 clobbers the other pipe's end.
            read_end, write_end = os.dup(to_browser_read) + 100, os.dup(from_browser_write) + 100
            os.dup2(to_browser_read, read_end)
            os.dup2(from_browser_write, write_end)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen(
            [
                CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
                f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank",
            ],
            preexec_fn=remap, pass_fds=(3, 4),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 20.0) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 20.0) -> dict:
        for event in self.events:
            if event.get("method") == method:
                return event
        deadline = time.monotonic() + timeout
        while True:
            event = self._receive(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._read], [], [], remaining)[0]:
                raise TimeoutError("no reply from chromium")
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self) -> None:
        try:
            os.write(self._write, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read)


class Page:
    """One page open in headless Chromium: evaluate expressions, press keys, collect errors."""

    def __init__(self, browser: DevTools, url: str) -> None:
        self.browser = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(f"{domain}.enable", session=self.session)
        self.goto(url)

    def goto(self, url: str) -> None:
        self.browser.events.clear()
        self.browser.send("Page.navigate", {"url": url}, session=self.session)
        self.browser.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        reply = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=self.session)
        return reply["result"].get("value")

    def press(self, key: str, code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            self.browser.send(
                "Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code}, session=self.session
            )

    def errors(self) -> list[dict]:
        return [
            event for event in self.browser.events
            if event.get("method") == "Runtime.exceptionThrown"
            or (event.get("method") == "Runtime.consoleAPICalled" and event["params"]["type"] in ("error", "assert"))
            or (event.get("method") == "Log.entryAdded" and event["params"]["entry"]["level"] == "error")
        ]


@contextmanager
def open_page(tmp_path: Path, path: Path) -> Iterator[Page]:
    browser = DevTools(tmp_path / "profile")
    try:
        yield Page(browser, path.as_uri())
    finally:
        browser.close()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_the_page_loads_without_errors_and_the_right_arrow_steps(tmp_path: Path) -> None:
    record_path = make_record(tmp_path)
    path = tmp_path / "game.html"
    main([str(record_path), "--html", str(path)], stdout=io.StringIO())
    with open_page(tmp_path, path) as page:
        before = page.evaluate("document.getElementById('board').innerHTML")
        counter = page.evaluate("document.getElementById('counter').textContent")
        assert counter.startswith("Position 1 of ") and "<rect" in before
        page.press("ArrowRight", 39)
        after = page.evaluate("document.getElementById('board').innerHTML")
        assert page.evaluate("document.getElementById('counter').textContent").startswith("Position 2 of ")
        assert after != before
        assert page.evaluate("location.hash") == "#2"
        page.press("End", 35)
        assert "Match over" in page.evaluate("document.getElementById('match').textContent")
        assert page.errors() == []


# Player names that would be markup or code if a page took them for anything but text: each
# live handler would set a data-pwned marker on the document.
HOSTILE_NAMES = [
    '<svg onload="document.documentElement.dataset.pwned=1">__RECORD__',
    "<img src=x onerror=\"document.documentElement.dataset.pwned=2\"> __FRAMES__ \u2028\u2029 '\"`",
    "</script><script>document.documentElement.dataset.pwned=3</script>__TITLE__ &amp; __DATA__ __CSP__",
]


def hostile_record(tmp_path: Path) -> Path:
    env = RecordingWrapper(draw_env.env(num_players=3, episode="match"), players=HOSTILE_NAMES)
    env.reset(seed=9)
    rng = random.Random(9)
    for _agent in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return write_record(env.record, tmp_path / "hostile.json")


def test_the_page_keeps_hostile_names_as_data(tmp_path: Path) -> None:
    record = json.loads(hostile_record(tmp_path).read_text(encoding="utf-8"))
    page = html_page(record)
    # No markup of the record's: the page's own elements only, two scripts (data and code).
    for fragment in ("<svg onload", "<img", 'onerror="', "</script><script>"):
        assert fragment not in page
    assert page.count("<script") == 2
    data = re.search(r'<script type="application/json" id="game-data">(.*?)</script>', page, re.DOTALL)
    assert data is not None and json.loads(data.group(1))["record"]["players"] == HOSTILE_NAMES
    assert "\u2028" not in data.group(1) and "<" not in data.group(1)
    # The policy admits exactly the page's own script (by hash) and no inline handler.
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None and "'unsafe-inline'" not in policy.group(1)
    script = re.search(r"<script>(.*?)</script>", page, re.DOTALL)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}';" in policy.group(1)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_hostile_names_show_as_text_in_the_browser_and_nothing_of_the_record_runs(tmp_path: Path) -> None:
    path = tmp_path / "hostile.html"
    assert main([str(hostile_record(tmp_path)), "--html", str(path)], stdout=io.StringIO()) == 0
    with open_page(tmp_path, path) as page:
        labels = page.evaluate("Array.from(document.querySelectorAll('#board text')).map(t => t.textContent)")
        for seat, name in enumerate(HOSTILE_NAMES):
            assert any(f"{name} (player_{seat}): " in label for label in labels)
        assert page.evaluate("document.title") == f"Draw dominoes: {' vs '.join(HOSTILE_NAMES)} (match)"
        assert page.evaluate("document.getElementById('title').textContent") == page.evaluate("document.title")
        page.press("ArrowRight", 39)
        assert page.evaluate("document.getElementById('counter').textContent").startswith("Position 2 of ")
        page.press("End", 35)
        assert "Match over" in page.evaluate("document.getElementById('match').textContent")
        # Nothing of the record became an element or ran.
        assert page.evaluate("document.querySelectorAll('img, script:not([id]) ~ script, body svg svg').length") == 0
        assert page.evaluate("document.scripts.length") == 2
        assert page.evaluate("document.documentElement.dataset.pwned") is None
        assert page.evaluate("document.documentElement.outerHTML").count("data-pwned") == 0
        assert page.errors() == []
        # Defence in depth: the page's policy refuses an inline handler even when one gets in.
        page.evaluate(
            "const probe = document.createElement('img');"
            "probe.setAttribute('onerror', 'document.documentElement.dataset.pwned=4');"
            "probe.src = 'x'; document.body.appendChild(probe); 0"
        )
        time.sleep(0.5)
        assert page.evaluate("document.documentElement.dataset.pwned") is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[" * 100_000, "nested deeper than"),
        (b'{"players": ["caf\xe9"]}', "not UTF-8"),
        (b'{"version": 1' + b"0" * 5000 + b"}", "an integer of 5001 digits"),
        (b'{"format": "draw-dominoes-record"', "not valid JSON"),
        (None, "no such file"),
        ("winner", "record field winner must be the replay's"),
        ("action", r"record field hands\[1\]\.actions\[2\] (says seat|plays)"),
    ],
    ids=["nested", "latin-1", "long-int", "truncated", "missing", "wrong-winner", "wrong-action"],
)
def test_draw_replay_refuses_a_bad_file_in_one_line(tmp_path: Path, capsys, content, message: str) -> None:
    path = tmp_path / "bad.json"
    if content in ("winner", "action"):
        record = json.loads(make_record(tmp_path).read_text())
        if content == "winner":
            record["winner"] = (record["winner"] + 1) % 3
        else:
            record["hands"][1]["actions"][2][1] = 57 - record["hands"][1]["actions"][2][1] % 2
        path.write_text(json.dumps(record))
    elif content is not None:
        path.write_bytes(content)
    for extra in ([], ["--html", str(tmp_path / "out.html")]):
        assert main([str(path), *extra], stdin=io.StringIO(""), stdout=io.StringIO()) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"draw-replay: error: {path}: ") and "Traceback" not in err
        assert re.search(message, err)
        assert not (tmp_path / "out.html").exists()


# ---------------------------------------------------------------------------- variants


def variant_record(tmp_path: Path) -> Path:
    env = RecordingWrapper(draw_env.env(num_players=2, episode="match", max_pip=9, protected=0), players=["a", "b"])
    env.reset(seed=5)
    rng = random.Random(5)
    for _agent in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return write_record(env.record, tmp_path / "double9.json")


def test_the_pages_tile_faces_are_the_renderers_for_every_value() -> None:
    from draw_env.render import _PIPS

    script = (Path(draw_env.__file__).parent / "assets" / "replay.js").read_text(encoding="utf-8")
    table = re.search(r"const PIPS = \{(.*?)\};", script, re.DOTALL)
    assert table is not None
    body = re.sub(r"//[^\n]*", "", table.group(1))
    faces = {int(value): json.loads(f"[{cells}]") for value, cells in re.findall(r"(\d+): \[(.*?)\](?=,\s*\d+:|\s*$)", body, re.DOTALL)}
    assert faces == {value: [list(cell) for cell in cells] for value, cells in _PIPS.items()}
    assert sorted(faces) == list(range(10))  # up to the double-9 set


def test_a_variant_record_replays_in_the_terminal_and_as_a_page(tmp_path: Path) -> None:
    path = variant_record(tmp_path)
    out = io.StringIO()
    assert main([str(path)], stdin=io.StringIO("n\nq\n"), stdout=out) == 0
    text = out.getvalue()
    assert text.startswith("Variant: double-9 set, 7 tiles each, 0 protected\n[1/")
    page_path = tmp_path / "double9.html"
    assert main([str(path), "--html", str(page_path)], stdout=io.StringIO()) == 0
    page = page_path.read_text(encoding="utf-8")
    assert "<title>Draw dominoes: a vs b (match, double-9 set, 7 tiles each, 0 protected)</title>" in page
    data = json.loads(re.search(r'<script type="application/json" id="game-data">(.*?)</script>', page, re.DOTALL).group(1))
    values = {value for frame in data["frames"] for held in frame["hands"] for tile in held for value in tile}
    assert values == set(range(10))  # every face of the set reaches the page


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_a_double_nine_page_steps_to_its_end_without_errors(tmp_path: Path) -> None:
    path = tmp_path / "double9.html"
    main([str(variant_record(tmp_path)), "--html", str(path)], stdout=io.StringIO())
    with open_page(tmp_path, path) as page:
        page.press("End", 35)
        assert "Match over" in page.evaluate("document.getElementById('match').textContent")
        assert "<circle" in page.evaluate("document.getElementById('board').innerHTML")
        assert page.errors() == []
