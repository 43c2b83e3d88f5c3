"""``draw-web``: play Draw dominoes in the browser against agents, on a local server.

Example::

    draw-web                       # opens http://127.0.0.1:8765/ : you against the shipped network
    draw-web --port 9000 --no-browser --records games/
    draw-web --agent solver=tabular:path=runs/cfr_micro/table.npz   # offer an agent with a file

The server (Starlette, run by uvicorn) serves one page and a small JSON API; the games live in
the server (:class:`arena.web.games.GameStore`). What it accepts from a client:

* ``POST /api/games`` a set-up (:func:`arena.web.games.parse_setup`), answered with the view;
* ``GET /api/games/{id}`` the view, ``POST /api/games/{id}/move`` ``{"action": int, "step": int}``;
* ``GET /api/games/{id}/hint``, ``/record`` (the JSON record, a download) and ``/replay`` (the
  record as ``draw-replay``'s HTML page).

Every request is checked: bodies are small JSON objects with a JSON content type (which a page
of another site cannot send without the server's consent), the Host header must name this
server (no DNS rebinding: :func:`allowed_hosts`), ids are random 128-bit tokens, moves are
checked by the rules, and every answer carries a strict Content-Security-Policy. No request
names a file, and no agent or budget beyond :mod:`arena.web.budgets`.

What a client costs is bounded: the agents decide in worker processes, each decision within a
time limit (:class:`arena.web.decisions.DecisionPool`), so a search never holds the server, and a
signal stops it at once; each connection must send its whole request within a deadline and the
open connections are capped (:func:`limited_protocol`), so clients that never finish their
headers cannot lock others out.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import re
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Awaitable, Callable, Iterable, MutableMapping, Sequence
from importlib import resources
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from uvicorn.protocols.http.h11_impl import H11Protocol

import agents
from arena.hints import DEFAULT_HINT, DEFAULT_VARIANT_HINT
from arena.options import add_obs_type_argument
from arena.specs import check_buildable, parse_agent_spec
from arena.web.budgets import PAGE_AGENTS, SEARCH_SECONDS, page_agents
from arena.web.decisions import DecisionPool, PoolClosed
from arena.web.games import (
    DEFAULT_SEATS,
    PERSON,
    GameStore,
    MoveRefused,
    RecordsFolder,
    StaleMove,
    WebGame,
    parse_setup,
)
from draw_env.checks import MAX_SEED
from draw_env.commands import error_line
from draw_env.io.replay import html_page
from draw_env.io.untrusted import UntrustedInputError, loads_json
from draw_env.render import _PIPS
from draw_env.rules import LANGUAGES, VARIANTS
from draw_env.tiles import MAX_PIP, MIN_PIP

DEFAULT_PORT = 8765
DEFAULT_RECORDS = "draw-web-records"
#: Worker processes for the agents' decisions, and the longest one decision may take (seconds):
#: a page's searches stop by themselves within budgets.SEARCH_SECONDS; the limit stops anything
#: else (an agent the operator offered, a first use that compiles the search's code).
DEFAULT_WORKERS = 2
DEFAULT_DECISION_SECONDS = 30.0
#: Connections open at once, and the seconds a connection has to send a whole request (from its
#: opening, or from the previous answer on a kept-alive connection).
DEFAULT_MAX_CONNECTIONS = 64
DEFAULT_REQUEST_SECONDS = 10.0
#: Seconds an idle kept-alive connection stays open, and a stopping server waits for answers.
KEEP_ALIVE_SECONDS = 5
SHUTDOWN_SECONDS = 2
#: The Host names of this machine's loopback, answered whatever the address listened on.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
#: The largest request body read: a set-up or a move is a few hundred bytes.
MAX_BODY_BYTES = 4096
#: The page's policy: its own script and style only, requests to this server only, no frames.
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_STATIC = resources.files("arena.web") / "static"
_STATIC_TYPES = {"index.html": "text/html; charset=utf-8", "play.js": "text/javascript; charset=utf-8", "play.css": "text/css; charset=utf-8"}
_REPLAY_POLICY = re.compile(r'http-equiv="Content-Security-Policy" content="([^"]*)"')

ASGIApp = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


class SecurityHeaders:
    """ASGI middleware: every answer gets the page's CSP (unless it sets its own) and no-sniff."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                extra = [
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                    (b"cache-control", b"no-store"),
                    (b"cross-origin-opener-policy", b"same-origin"),
                    (b"cross-origin-resource-policy", b"same-origin"),
                ]
                if b"content-security-policy" not in names:
                    extra.append((b"content-security-policy", PAGE_POLICY.encode()))
                message["headers"] = headers + [(n, v) for n, v in extra if n not in names]
            await send(message)

        await self.app(scope, receive, with_headers)


_T = TypeVar("_T")


def locked(game: WebGame, read: Callable[[], _T]) -> _T:
    """``read()`` under the game's lock: run in a worker thread (``run_in_threadpool``), since a
    move in progress may hold the lock for as long as its agents think, and the event loop must
    not wait for it."""
    with game.lock:
        return read()


def _error(status: int, text: str) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)


async def _read_json(request: Request) -> Any:
    """The request's JSON body, bounded in size and checked by the project's JSON reader.

    Raises:
        ValueError: with the HTTP status to answer as its second argument.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise ValueError("the body must be JSON (Content-Type: application/json)", 415)
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        raise ValueError(f"the body must be at most {MAX_BODY_BYTES} bytes", 413)
    body = b""
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise ValueError(f"the body must be at most {MAX_BODY_BYTES} bytes", 413)
    except ClientDisconnect:  # closed at its request deadline: nobody reads the answer
        raise ValueError("the client went away", 400) from None
    try:
        return loads_json(body.decode("utf-8"), "the request body", max_depth=4, max_values=200, expect=dict)
    except UnicodeDecodeError:
        raise ValueError("the request body is not UTF-8", 400) from None
    except UntrustedInputError as error:
        raise ValueError(str(error), 400) from None


def _stopping() -> JSONResponse:
    return _error(503, "the server is stopping")


def create_app(store: GameStore, hosts: Sequence[str] = LOOPBACK_HOSTS) -> Starlette:
    """The ASGI application serving the page and the API over ``store``, answering only requests
    whose Host header is one of ``hosts`` (:func:`allowed_hosts`; never a wildcard)."""
    if any("*" in host for host in hosts):
        raise ValueError(f"hosts must be host names or addresses, never a wildcard, got {list(hosts)}")

    def static(name: str) -> Callable[[Request], Awaitable[Response]]:
        content = (_STATIC / name).read_bytes()  # read once, at start: no file is named by a request

        async def serve(request: Request) -> Response:
            return Response(content, media_type=_STATIC_TYPES[name])

        return serve

    def with_game(
        handler: Callable[[Request, WebGame], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        """The endpoint that answers ``handler(request, game)`` for the game its path names, and 404
        for an id the store does not hold."""

        async def endpoint(request: Request) -> Response:
            try:
                game = store.get(request.path_params["game_id"])
            except KeyError:
                return _error(404, "no such game (it may have ended long ago: start a new one)")
            return await handler(request, game)

        return endpoint

    async def options(request: Request) -> Response:
        offered = page_agents()
        return JSONResponse(
            {
                "agents": offered,
                "variantAgents": [name for name in agents.variant_agents() if name in offered],
                "budgets": {name: {key: most for key, most in PAGE_AGENTS[name].items() if most is not None} for name in offered},
                "searchSeconds": SEARCH_SECONDS,
                "named": sorted(store.named),
                "person": PERSON,
                "defaultSeats": list(DEFAULT_SEATS),
                "defaultHint": DEFAULT_HINT,
                "defaultVariantHint": DEFAULT_VARIANT_HINT,
                "languages": list(LANGUAGES),
                "pips": {str(value): [list(cell) for cell in cells] for value, cells in _PIPS.items()},
                "limits": {"minPip": MIN_PIP, "maxPip": MAX_PIP, "maxSeed": MAX_SEED},
                "variants": {name: numbers._asdict() for name, numbers in VARIANTS.items()},
            }
        )

    async def create(request: Request) -> Response:
        try:
            setup = parse_setup(await _read_json(request), store.named)
        except ValueError as error:
            status = error.args[1] if len(error.args) > 1 else 400
            return _error(status, str(error.args[0]))
        try:
            game = await run_in_threadpool(store.create, setup)
        except PoolClosed:
            return _stopping()
        return JSONResponse(game.view(), status_code=201)

    async def view(request: Request, game: WebGame) -> Response:
        return JSONResponse(await run_in_threadpool(locked, game, game.view))

    async def move(request: Request, game: WebGame) -> Response:
        try:
            body = await _read_json(request)
        except ValueError as error:
            return _error(error.args[1], str(error.args[0]))
        unknown = sorted(set(body) - {"action", "step"})
        if unknown:
            return _error(400, f"unknown move field {unknown[0][:40]!r}")
        try:
            answer = await run_in_threadpool(store.move, game, body.get("action"), body.get("step"))
        except StaleMove as error:
            return _error(409, str(error))
        except MoveRefused as error:
            return _error(400, str(error))
        except PoolClosed:
            return _stopping()
        return JSONResponse(answer)

    async def hint(request: Request, game: WebGame) -> Response:
        try:
            return JSONResponse(await run_in_threadpool(locked, game, game.hint))
        except MoveRefused as error:
            return _error(409, str(error))
        except PoolClosed:
            return _stopping()

    async def record(request: Request, game: WebGame) -> Response:
        data, name = await run_in_threadpool(locked, game, lambda: (game.visible_record(), game.record_name()))
        return Response(
            json.dumps(data, indent=1),
            media_type="application/json",
            headers={"content-disposition": f'attachment; filename="{name}"'},
        )

    async def replay(request: Request, game: WebGame) -> Response:
        shown = await run_in_threadpool(locked, game, game.replay_record)
        if shown is None:
            return _error(409, "the replay opens once a hand is over")
        page = html_page(shown, game.setup.lang)
        policy = _REPLAY_POLICY.search(page)
        assert policy is not None  # html_page always writes its policy
        # The header repeats the page's own policy (a browser applies both), with no framing.
        return HTMLResponse(page, headers={"content-security-policy": policy.group(1) + "; frame-ancestors 'none'"})

    async def no_icon(request: Request) -> Response:
        return Response(status_code=204)  # the page has no icon; answered, so browsers log no 404

    routes = [
        Route("/", static("index.html")),
        Route("/favicon.ico", no_icon),
        Route("/play.js", static("play.js")),
        Route("/play.css", static("play.css")),
        Route("/api/options", options),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{game_id}", with_game(view)),
        Route("/api/games/{game_id}/move", with_game(move), methods=["POST"]),
        Route("/api/games/{game_id}/hint", with_game(hint)),
        Route("/api/games/{game_id}/record", with_game(record)),
        Route("/api/games/{game_id}/replay", with_game(replay)),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))]
    return Starlette(routes=routes, middleware=middleware)


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an IP address, or ``None`` when it is a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _is_loopback(host: str) -> bool:
    """Whether listening on ``host`` listens on this machine only (``localhost``, ``127.0.0.1``, ``::1``)."""
    address = _address(host)
    return host == "localhost" or (address is not None and address.is_loopback)


def _is_wildcard(host: str) -> bool:
    """Whether listening on ``host`` listens on every address (``0.0.0.0``, ``::``)."""
    address = _address(host)
    return host == "" or (address is not None and address.is_unspecified)


def host_text(host: str) -> str:
    """``host`` as a Host header names it: an IPv6 address compressed in brackets, a name in lower case.

    Raises:
        ValueError: ``host`` is neither an address nor a host name (a wildcard, a port, a path...).
    """
    text = host.strip().lower()
    address = _address(text.strip("[]"))
    if address is not None:
        return f"[{address.compressed}]" if address.version == 6 else address.compressed
    if not re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,62}\.?)*", text) or len(text) > 253:
        raise ValueError(f"a host name or address, never a wildcard, got {host[:80]!r}")
    return text


def _own_addresses() -> set[str]:
    """This machine's name and the addresses it resolves to (from the system's host table)."""
    name = socket.gethostname()
    found = {name}
    try:
        found |= {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
    except OSError:
        pass
    return {host_text(host) for host in found if host}


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> list[str]:
    """The Host header values the server answers when it listens on ``bind``: the loopback names
    (:data:`LOOPBACK_HOSTS`), ``bind`` itself, the ``extra`` names (``--allowed-host``), and, when
    it listens on more than loopback, this machine's name and addresses. Never a wildcard: a page
    of another site that rebinds its own name to this machine sends its own name, which is refused.

    Raises:
        ValueError: an ``extra`` value that is not a host name or address.
    """
    names = set(LOOPBACK_HOSTS)
    if not _is_wildcard(bind):
        names.add(host_text(bind))
    if not _is_loopback(bind):
        names |= _own_addresses()
    names |= {host_text(host) for host in extra}
    return sorted(names)


def limited_protocol(request_seconds: float = DEFAULT_REQUEST_SECONDS, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with two bounds on slow clients, which uvicorn itself does not have
    (its ``timeout_keep_alive`` starts only after an answer, and ``limit_concurrency`` answers 503
    to whole requests while unfinished ones hold their places):

    * a connection must send a whole request (head and body) within ``request_seconds`` of its
      opening, or of the previous answer, else it is closed;
    * at most ``max_connections`` are open: a new one beyond closes the one that has waited
      longest for its request (a client that sends nothing holds no place for long against one
      that sends at once), or itself when every open connection is being answered.
    """

    class LimitedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _waiting_since = 0.0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            open_now = [c for c in self.connections if isinstance(c, LimitedH11Protocol) and not c.transport.is_closing()]
            if len(open_now) > max_connections:
                waiting = [c for c in open_now if c is not self and c._deadline is not None]
                if not waiting:
                    transport.close()
                    return
                min(waiting, key=lambda c: c._waiting_since).transport.close()
            self._watch()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()

        def connection_lost(self, exc: Exception | None) -> None:
            super().connection_lost(exc)
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _watch(self) -> None:
            """Arm the deadline while a request is awaited or arriving; disarm it once it is in."""
            cycle = self.cycle
            receiving = cycle is None or cycle.response_complete or cycle.more_body
            if receiving and self._deadline is None and not self.transport.is_closing():
                self._waiting_since = time.monotonic()
                self._deadline = self.loop.call_later(request_seconds, self._expire)
            elif not receiving and self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            self.transport.close()

    return LimitedH11Protocol


class DrawWebServer(uvicorn.Server):
    """uvicorn's server that also stops the agents' workers at the first stop signal, so that a
    search in progress never holds the server (its request is answered 503 at once)."""

    def __init__(self, config: uvicorn.Config, pool: DecisionPool) -> None:
        super().__init__(config)
        self.pool = pool

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.pool.close()
        super().handle_exit(sig, frame)


def make_server(
    store: GameStore,
    pool: DecisionPool,
    hosts: Sequence[str] = LOOPBACK_HOSTS,
    request_seconds: float = DEFAULT_REQUEST_SECONDS,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
) -> DrawWebServer:
    """The server of ``draw-web``: the app over ``store`` (its decisions made by ``pool``), answering
    ``hosts``, with its bounds on connections; run it with ``.run(sockets=[...])``."""
    config = uvicorn.Config(
        create_app(store, hosts),
        log_level="warning",
        access_log=False,
        http=limited_protocol(request_seconds, max_connections),
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
    )
    return DrawWebServer(config, pool)


def parse_named_agents(items: Sequence[str]) -> dict[str, str]:
    """``--agent NAME=AGENT`` values as ``{NAME: SPEC}``, each spec checked (its files read later).

    Raises:
        ValueError: naming the bad item.
    """
    named: dict[str, str] = {}
    for item in items:
        name, equals, spec = item.partition("=")
        name = name.strip()
        if not equals or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]{0,39}", name) or name.lower() == PERSON:
            raise ValueError(f"--agent must be NAME=AGENT with NAME a word of letters, digits, _.- (not {PERSON!r}), got {item!r}")
        if name in named or name in agents.available():
            raise ValueError(f"--agent name {name!r} is taken (an agent's name, or given twice)")
        try:
            parse_agent_spec(spec.strip())
        except ValueError as error:
            raise ValueError(f"--agent {name}: {error}") from None
        named[name] = spec.strip()
    return named


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-web",
        description="Play Draw dominoes against agents in your browser: a local server and one page.",
        epilog="Example: draw-web --port 9000 --records games/",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"the port to listen on (default {DEFAULT_PORT}; 0: any free port)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1, this machine only); another address lets other machines play, with a warning",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host is NAME (a host name or address of this machine, never a wildcard); repeatable",
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open the page in the browser")
    parser.add_argument(
        "--records", default=DEFAULT_RECORDS, help=f"the folder finished games are written to as JSON records (default ./{DEFAULT_RECORDS})"
    )
    parser.add_argument("--max-games", type=int, default=32, help="games kept at once; a new one drops the one idle longest (default 32)")
    parser.add_argument("--max-age", type=float, default=6.0, help="hours a game is kept after its last request (default 6)")
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="NAME=AGENT",
        help="offer an agent under NAME, any spec and budget, e.g. solver=tabular:path=table.npz (the page names only "
        "the agents and budgets of docs/web.md, and no file); repeatable",
    )
    parser.add_argument(
        "--workers", type=int, default=DEFAULT_WORKERS, help=f"processes the agents decide in (default {DEFAULT_WORKERS})"
    )
    parser.add_argument(
        "--decision-seconds",
        type=float,
        default=DEFAULT_DECISION_SECONDS,
        help=f"the longest one decision of an agent may take; past it the game stops with the reason (default {DEFAULT_DECISION_SECONDS:g})",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=DEFAULT_MAX_CONNECTIONS,
        help=f"connections open at once (default {DEFAULT_MAX_CONNECTIONS})",
    )
    parser.add_argument(
        "--request-seconds",
        type=float,
        default=DEFAULT_REQUEST_SECONDS,
        help=f"the time a connection has to send a whole request (default {DEFAULT_REQUEST_SECONDS:g})",
    )
    add_obs_type_argument(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``draw-web`` until interrupted; 2 with one line on bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if not 0 <= args.port <= 65535:
            raise ValueError(f"--port must be in 0..65535, got {args.port}")
        if args.max_games < 1 or not args.max_age > 0:
            raise ValueError("--max-games must be at least 1 and --max-age above 0")
        if not 1 <= args.workers <= 64 or not 0 < args.decision_seconds <= 3600:
            raise ValueError("--workers must be in 1..64 and --decision-seconds in (0, 3600]")
        if not 1 <= args.max_connections <= 10_000 or not 0 < args.request_seconds <= 600:
            raise ValueError("--max-connections must be in 1..10000 and --request-seconds in (0, 600]")
        try:
            hosts = allowed_hosts(args.host, args.allowed_host)
        except ValueError as error:
            raise ValueError(f"--host and --allowed-host take {error}") from None
        named = parse_named_agents(args.agent)
        check_buildable([parse_agent_spec(spec) for spec in named.values()])  # their files, read once now
        records = Path(args.records)
        if records.exists() and not records.is_dir():
            raise ValueError(f"--records must be a folder, but {records} is a file")
        records.mkdir(parents=True, exist_ok=True)
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        try:
            sock = socket.create_server((args.host, args.port), family=family)
        except OSError as error:
            raise OSError(f"cannot listen on {args.host}:{args.port}: {error.strerror or error} (choose another --port)") from None
    except (OSError, ValueError) as error:
        print(f"{parser.prog}: error: {error_line(error)}", file=sys.stderr)
        return 2
    if not _is_loopback(args.host):
        print(
            f"{parser.prog}: warning: listening on {args.host or '0.0.0.0'}: anyone who can reach this machine can play "
            f"and start agents here (the default 127.0.0.1 keeps it to this machine); Host names answered: {', '.join(hosts)} "
            "(more with --allowed-host)",
            file=sys.stderr,
        )
    port = sock.getsockname()[1]
    shown = ("::1" if family == socket.AF_INET6 else "127.0.0.1") if _is_wildcard(args.host) else args.host
    url = f"http://{host_text(shown)}:{port}/"
    pool = DecisionPool(args.workers, args.decision_seconds)
    store = GameStore(args.max_games, args.max_age * 3600, RecordsFolder(records), named, decide=pool.decide,
                      obs_type=args.obs_type)
    server = make_server(store, pool, hosts, args.request_seconds, args.max_connections)
    print(f"draw-web: serving on {url} (records in {records}/; Ctrl-C stops)", flush=True)
    if not args.no_browser:
        threading.Timer(0.5, webbrowser.open, [url]).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        pool.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
