"""draw-web in a real browser: headless Chromium plays a whole hand against the shipped network.

First a hostile seat name, which the server refuses: its quoted text stays text on the page.
Then the page is driven as a person would: mouse clicks on hand tiles, on the ends and on the draw
button, a key press, and a click on a tile that fits nowhere (which the server refuses, and
nothing changes). The finished game's record is read from the records folder, replayed by the
rules, and its replay page opened to the same points. Skipped without Debian's chromium
(.ci/run installs it); the DevTools client is the replay test's.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from arena.web.decisions import DecisionPool  # noqa: E402
from arena.web.games import GameStore, RecordsFolder  # noqa: E402
from arena.web.server import make_server  # noqa: E402
from draw_env.io.records import read_record, replay_record  # noqa: E402
from tests.test_replay_html import CHROMIUM, DevTools, Page  # noqa: E402

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")


@contextmanager
def serve(records: Path) -> Iterator[str]:
    """draw-web's server on a free loopback port in a thread; yields its URL."""
    sock = socket.create_server(("127.0.0.1", 0))
    pool = DecisionPool(workers=1)
    server = make_server(GameStore(records=RecordsFolder(records), decide=pool.decide), pool)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        pool.close()


class WebPage(Page):
    """The replay test's page, with the mouse and waits a game needs: click elements, wait for the page."""

    def wait(self, expression: str, timeout: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page never made {expression!r} true")
            time.sleep(0.03)

    def click(self, selector: str) -> None:
        """A real mouse click at the middle of the element ``selector`` names."""
        point = self.evaluate(
            f"(() => {{ const e = document.querySelector({selector!r}); if (!e) return null;"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        assert point is not None, f"no element {selector}"
        for kind in ("mousePressed", "mouseReleased"):
            self.browser.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": point[0], "y": point[1], "button": "left", "clickCount": 1},
                session=self.session,
            )

    def press(self, key: str, code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            self.browser.send(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": key, "code": f"Key{key.upper()}", "windowsVirtualKeyCode": code},
                session=self.session,
            )


STEP = "Number(document.body.dataset.step)"
REFUSED = "Number(document.body.dataset.refused || 0)"
VIEW = "JSON.parse(JSON.stringify(view))"


def test_a_whole_hand_against_the_network_in_chromium(tmp_path: Path) -> None:
    records = tmp_path / "records"
    with serve(records) as url:
        browser = DevTools(tmp_path / "profile")
        try:
            page = WebPage(browser, url)
            page.wait("document.body.dataset.ready === '1'")
            assert page.evaluate("document.getElementById('seat-0').value") == "person"
            assert page.evaluate("document.getElementById('seat-1').value") == "network"
            # A hostile seat: the server's refusal quotes it, and the page shows it as text.
            hostile = '<img src=x onerror="document.documentElement.dataset.pwned=1">'
            page.evaluate(f"document.getElementById('seat-1').value = {hostile!r}; 0")
            page.click("#start")
            message = page.wait("document.getElementById('message').classList.contains('error') && document.getElementById('message').textContent")
            assert hostile in message and "agent must be one of" in message
            assert page.evaluate("document.querySelectorAll('img').length") == 0
            assert page.evaluate("document.documentElement.dataset.pwned") is None
            page.evaluate("document.getElementById('seat-1').value = 'network'; 0")
            browser.events.clear()  # the refused set-up's 400 is expected
            page.evaluate("document.getElementById('episode').value = 'hand'; document.getElementById('seed').value = '2'; 0")
            page.click("#start")
            page.wait("document.body.dataset.step !== undefined")
            drew = keyed = refused = two_ends = placed = 0
            for _turn in range(80):
                view = page.evaluate(VIEW)
                if view["finished"]:
                    break
                step = view["step"]
                unplayable = [i for i, entry in enumerate(view["hand"]) if not entry["actions"]]
                playable = [i for i, entry in enumerate(view["hand"]) if entry["actions"]]
                if not refused and unplayable and view["line"]:
                    # An illegal click: the tile is sent, the server refuses it, nothing changes.
                    before = page.evaluate(REFUSED)
                    page.click(f"#hand button[data-index='{unplayable[0] + 1}']")
                    page.wait(f"{REFUSED} > {before}")
                    assert "not legal" in page.evaluate("document.getElementById('message').textContent")
                    assert page.evaluate(VIEW) == view and page.evaluate(STEP) == step
                    refused += 1
                    continue
                if view["draw"] is not None and drew < 2:
                    if not keyed:
                        page.press("d", 68)  # the keyboard: D draws
                        keyed += 1
                    else:
                        page.click("#draw")
                    drew += 1
                elif playable:
                    entry = view["hand"][playable[0]]
                    page.click(f"#hand button[data-index='{playable[0] + 1}']")
                    if len(entry["actions"]) == 2:  # fits both ends: the page waits for an end
                        page.wait("!document.getElementById('end-left').disabled")
                        page.click("#end-right")
                        two_ends += 1
                    placed += 1
                elif view["draw"] is not None:
                    page.click("#draw")
                else:
                    page.click("#pass")
                page.wait(f"{STEP} > {step}")
            else:
                pytest.fail("the hand did not end in 80 turns")
            assert drew >= 1 and placed >= 1 and refused == 1 and keyed == 1
            view = page.evaluate(VIEW)
            assert page.evaluate("document.getElementById('finished').hidden") is False
            assert page.evaluate("document.getElementById('outcome').textContent").startswith("Hand 1 over")
            shown_points = page.evaluate("Array.from(document.querySelectorAll('#revealed li')).map(li => Number(li.dataset.points))")
            # The record the server wrote replays, by the rules, to the points the page showed.
            record = read_record(records / view["record"])
            assert record["players"] == ["person", "network"] and record["seed"] == 2
            replay_record(record)
            assert record["hands"][0]["points"] == shown_points
            assert any(action == 56 for seat, action in record["hands"][0]["actions"] if seat == 0)
            download = page.evaluate("document.getElementById('download').href")
            assert download.endswith(f"/api/games/{view['id']}/record")
            # The one error the browser logged is the refused move's answer, 400.
            errors = page.errors()
            assert len(errors) == 1 and "status of 400" in errors[0]["params"]["entry"]["text"], errors
            # The replay page opens the same game and ends on the same result.
            page.goto(page.evaluate("document.getElementById('replay').href"))
            page.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'End'})); 0")
            status = page.wait("document.getElementById('status') && document.getElementById('status').textContent")
            winner = record["hands"][0]["winner"]
            if winner is not None:
                assert re.search(rf"player_{winner} .*scores {shown_points[winner]}", status), status
            assert page.errors() == []
            assert two_ends >= 1  # the deal of seed 2 offers a tile that fits both ends
        finally:
            browser.close()
