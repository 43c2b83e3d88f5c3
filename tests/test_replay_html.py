"""draw-replay: the terminal stepper and the HTML page, the page checked in headless Chromium.

The browser is driven through the DevTools protocol over ``--remote-debugging-pipe`` (NUL-separated
JSON on file descriptors 3 and 4): no websocket library and no network. The test is skipped where
Chromium is not installed (``.ci/run`` installs Debian's ``chromium``).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import select
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import draw_env
from draw_env.records import RecordingWrapper, positions, write_record
from draw_env.replay import html_page, main

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


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_the_page_loads_without_errors_and_the_right_arrow_steps(tmp_path: Path) -> None:
    record_path = make_record(tmp_path)
    page = tmp_path / "game.html"
    main([str(record_path), "--html", str(page)], stdout=io.StringIO())
    browser = DevTools(tmp_path / "profile")
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(f"{domain}.enable", session=session)
        browser.send("Page.navigate", {"url": page.as_uri()}, session=session)
        browser.wait_for("Page.loadEventFired")

        def evaluate(expression: str) -> object:
            return browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session)["result"]["value"]

        before = evaluate("document.getElementById('board').innerHTML")
        counter = evaluate("document.getElementById('counter').textContent")
        assert counter.startswith("Position 1 of ") and "<rect" in before
        for kind in ("keyDown", "keyUp"):
            browser.send(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": "ArrowRight", "code": "ArrowRight", "windowsVirtualKeyCode": 39},
                session=session,
            )
        after = evaluate("document.getElementById('board').innerHTML")
        assert evaluate("document.getElementById('counter').textContent").startswith("Position 2 of ")
        assert after != before
        assert evaluate("location.hash") == "#2"
        browser.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "End", "code": "End", "windowsVirtualKeyCode": 35}, session=session)
        assert "Match over" in evaluate("document.getElementById('match').textContent")
        errors = [
            event for event in browser.events
            if event.get("method") == "Runtime.exceptionThrown"
            or (event.get("method") == "Runtime.consoleAPICalled" and event["params"]["type"] in ("error", "assert"))
            or (event.get("method") == "Log.entryAdded" and event["params"]["entry"]["level"] == "error")
        ]
        assert errors == []
    finally:
        browser.close()
