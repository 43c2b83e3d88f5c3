"""Exact measures of small 2-player variants: the enumerated game tree (:mod:`draw_env.exact.game_tree`)
and the best response that walks the histories without storing them (:mod:`draw_env.exact.streaming`)."""
