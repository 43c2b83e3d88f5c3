"""Play in the browser: ``draw-web``'s server (:mod:`arena.web.server`) and games (:mod:`arena.web.games`).

The page and its script and style are package data (``arena/web/static``); the docs page "Play in
the browser" describes the command.
"""
