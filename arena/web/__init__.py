"""Play in the browser: ``draw-web``'s server (:mod:`arena.web.server`) and games (:mod:`arena.web.games`).

The page and its script and style are package data (``arena/web/static``); the docs page "Play in
the browser" describes the command.
"""

from __future__ import annotations

from collections.abc import Sequence

from draw_env.commands import check_extras


def main(argv: Sequence[str] | None = None) -> int:
    """The ``draw-web`` command: the server's :func:`arena.web.server.main`, once
    :func:`~draw_env.commands.check_extras` found the ``web`` extra (the server module imports
    Starlette and uvicorn as it loads)."""
    check_extras("draw-web")
    from arena.web.server import main as serve

    return serve(argv)
