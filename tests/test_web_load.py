"""draw-web under load: the server itself (``python -m arena.web.server``) in its own process.

Slow clients that open connection after connection and never finish their headers, many games at
once with the largest budgets a page may ask and larger ones (refused), a search in progress when
a stop signal comes. Every request goes to 127.0.0.1 only; every wait is bounded, and the server
is killed at the end of each test whatever happens.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
resource = pytest.importorskip("resource")  # the server's file limit (POSIX)

LOOPBACK = "127.0.0.1"
#: The server's open-file limit in the slow-client test: below the slow connections it gets, so
#: that a server without a connection cap runs out of descriptors and cannot accept the person.
FILE_LIMIT = 256
SLOW_CONNECTIONS = 400


@contextmanager
def draw_web(tmp_path: Path, *options: str, file_limit: int | None = None) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``draw-web`` on a free loopback port, with ``options``; yields the process and its port."""

    def limit_files() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (file_limit, file_limit))

    command = [sys.executable, "-m", "arena.web.server", "--host", LOOPBACK, "--port", "0", "--no-browser"]
    process = subprocess.Popen(
        [*command, "--records", str(tmp_path / "records"), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit_files,  # noqa: PLW1509 - only setrlimit, before exec
    )
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout=120):
                raise TimeoutError("draw-web did not start")
        line = process.stdout.readline()
        match = re.search(r"serving on http://127\.0\.0\.1:(\d+)/", line)
        assert match, (line, process.stderr.read() if process.poll() is not None and process.stderr else "")
        yield process, int(match.group(1))
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


def request(port: int, method: str, path: str, body: Any = None, timeout: float = 30) -> tuple[int, Any]:
    """One request to the server on 127.0.0.1; its status and JSON answer."""
    connection = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout)
    try:
        headers = {"content-type": "application/json"} if body is not None else {}
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"null")
    finally:
        connection.close()


def slow_client(port: int) -> socket.socket:
    """A connection that sends the start of a request and never finishes its headers."""
    sock = socket.create_connection((LOOPBACK, port), timeout=10)
    sock.sendall(b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return sock


def closed_by_server(sock: socket.socket, deadline: float) -> bool:
    """Whether the server has closed ``sock`` (an end of stream or a reset) by ``deadline``."""
    sock.settimeout(max(0.01, deadline - time.monotonic()))
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


HUGE = [
    {"seats": ["person", "ismcts:simulations=1000000"]},
    {"seats": ["person", "pimc:worlds=1000000000"]},
    {"seats": ["person", "network"], "hint": "ppo_search:simulations=1000000"},
    {"seats": ["person", "ismcts:simulations=none,seconds=3600"]},
]
#: The largest budgets a page may ask (arena.web.budgets), with the baselines.
LARGEST = ["ismcts:simulations=20000", "pimc:worlds=256,depth=4", "network", "heaviest"]


def test_slow_clients_and_many_games_leave_a_person_served(tmp_path: Path) -> None:
    options = ["--max-connections", "32", "--request-seconds", "1", "--workers", "2"]
    with draw_web(tmp_path, *options, file_limit=FILE_LIMIT) as (process, port):
        slow = [slow_client(port) for _ in range(SLOW_CONNECTIONS)]
        try:
            # A person arriving after them is served, again and again.
            for _ in range(3):
                status, answer = request(port, "GET", "/api/options", timeout=10)
                assert status == 200 and "ismcts" in answer["agents"]
            # Many games at once, with the largest budgets a page may ask; larger ones are refused.
            games = []
            for number in range(12):
                setup = {"seats": ["person", LARGEST[number % len(LARGEST)]], "episode": "match", "seed": number}
                status, view = request(port, "POST", "/api/games", setup)
                assert status == 201 and view["failure"] is None, view
                games.append(view)
            for view in games:
                for _ in range(3):
                    if view["toMove"] is None:
                        break
                    move = {"action": view["legal"][0], "step": view["step"]}
                    status, view = request(port, "POST", f"/api/games/{view['id']}/move", move)
                    assert status == 200 and view["failure"] is None, view
            for setup in HUGE:
                status, answer = request(port, "POST", "/api/games", setup | {"seed": 1}, timeout=10)
                assert status == 400 and "at most" in answer["error"], answer
            # Every slow connection was closed: at its request deadline, or to make room.
            deadline = time.monotonic() + 10
            assert all(closed_by_server(sock, deadline) for sock in slow)
        finally:
            for sock in slow:
                sock.close()
        assert process.poll() is None  # still serving
        assert request(port, "GET", "/api/options", timeout=10)[0] == 200


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (Linux's /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the server's workers in Linux's /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_stops_the_server_at_once_in_the_middle_of_a_search(tmp_path: Path, stop: signal.Signals) -> None:
    slow = "slow=ismcts_python:simulations=1000000,seconds=300"
    with draw_web(tmp_path, "--agent", slow, "--decision-seconds", "600", "--workers", "1") as (process, port):
        status, view = request(port, "POST", "/api/games", {"seats": ["person", "slow"], "episode": "hand", "seed": 3})
        assert status == 201 and view["toMove"] == 0
        answers: list[Any] = []

        def move() -> None:
            try:
                answers.append(request(port, "POST", f"/api/games/{view['id']}/move", {"action": view["legal"][0], "step": view["step"]}))
            except OSError as error:
                answers.append(error)

        thread = threading.Thread(target=move, daemon=True)
        thread.start()
        time.sleep(1.5)
        assert thread.is_alive()  # the agent is searching (for 300 s if nothing stops it)
        started = time.monotonic()
        status, _ = request(port, "GET", "/api/options", timeout=5)
        assert status == 200 and time.monotonic() - started < 5  # the server answers meanwhile
        workers = {pid for child in children(process.pid) for pid in children(child)} | children(process.pid)
        assert workers
        process.send_signal(stop)
        process.wait(timeout=15)
        assert time.monotonic() - started < 15
        thread.join(timeout=15)
        assert answers and (isinstance(answers[0], OSError) or answers[0][0] == 503), answers
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in workers)  # no search goes on without the server
    assert os.path.isdir(tmp_path / "records")
