"""The arena: where agents meet, and how their strength is measured.

:func:`~arena.evaluation.evaluate` plays 2 to 4 agents against each other over duplicate deals
and reports win rates with Wilson intervals; :func:`~arena.league.league` plays a round robin
with ratings and :func:`~arena.league.sweep` one agent over a range of a setting. Agents are
named by specs (:mod:`arena.specs`, ``"ismcts:simulations=200"``) and built from the registry
of :mod:`agents`. ``draw-eval`` (:mod:`arena.cli`) and ``draw-play`` (:mod:`arena.play`, a
person against agents in the terminal) are the command lines.

``arena`` imports :mod:`agents` and :mod:`draw_env`, never :mod:`train`.
"""
