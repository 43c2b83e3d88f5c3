"""What a page may ask of ``draw-web``'s agents: which agents, with which keywords, and how much
thinking a decision may take.

A seat or a hint agent that a page names is an agent spec (``ismcts:simulations=400``) from a
client the server cannot trust, so it is taken only if its agent is one of :data:`PAGE_AGENTS`
and each of its keywords is listed there, within its maximum. A search the page names always
runs with a count budget and a time budget (:func:`page_kwargs`), so one decision's time and
memory are bounded whatever the page asks. The server's operator offers anything else, under
a name, with ``--agent NAME=AGENT``; every decision, theirs included, is also stopped at the
worker pool's time limit (:mod:`arena.web.decisions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import agents
from agents.ismcts import SearchAgent

#: The longest wall-clock budget (``seconds=``) a search named by a page gets per decision, and
#: the one it gets when the page names none.
SEARCH_SECONDS = 5.0

#: The agents a page may name, each with the keywords it may set: their maximum, or ``None`` for
#: a keyword that does not change what a decision costs. A keyword not listed (a file, the
#: candidate deals of a hidden-tile model) is refused. The maxima keep an answer to a move within
#: a few seconds (docs/web.md has the figures) and a search tree within a few tens of megabytes.
PAGE_AGENTS: dict[str, dict[str, float | None]] = {
    "random": {"seed": None},
    "random_forced": {"seed": None},
    "heaviest": {"seed": None},
    "variety": {"seed": None},
    "network": {"deterministic": None, "num_players": None, "seed": None},
    "ppo": {"deterministic": None, "num_players": None, "seed": None},
    "ismcts": {
        "simulations": 20_000,
        "seconds": SEARCH_SECONDS,
        "exploration": None,
        "rollout_randomness": None,
        "protected": None,
        "seed": None,
    },
    "ismcts_python": {
        "simulations": 2_000,
        "seconds": SEARCH_SECONDS,
        "exploration": None,
        "rollout_randomness": None,
        "protected": None,
        "seed": None,
    },
    "pimc": {"worlds": 256, "depth": 4, "exact_tiles": 10, "seconds": SEARCH_SECONDS, "protected": None, "seed": None},
    "ppo_search": {
        "simulations": 5_000,
        "guide": None,
        "prior_visits": None,
        "temperature": None,
        "value_weight": None,
        "prior_weight": None,
        "exploration": None,
        "seed": None,
    },
    "openspiel-random": {"seed": None},
    "openspiel-mcts": {"simulations": 400, "determinizations": 10, "rollouts": 1, "uct_c": None, "seed": None},
    "openspiel-ismcts": {"simulations": 400, "rollouts": 1, "uct_c": None, "final_policy": None, "seed": None},
}


def page_agents() -> list[str]:
    """The agents a page may name here: :data:`PAGE_AGENTS` that this installation has."""
    available = agents.available()
    return [name for name in available if name in PAGE_AGENTS]


def page_kwargs(name: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments a page's spec ``name:kwargs`` (already parsed and checked by the
    agent) runs with: each keyword one the page may set, within its maximum; a search gets
    ``seconds`` = :data:`SEARCH_SECONDS` unless the page asks for less, and always a count of
    simulations (its default, or the most when the page gives only ``seconds``), so that its tree
    stays bounded.

    Raises:
        ValueError: naming the agent, the keyword and its maximum.
    """
    allowed = PAGE_AGENTS.get(name)
    if allowed is None or name not in agents.available():
        raise ValueError(
            f"agent {name!r} is not offered to the page (it may name {', '.join(page_agents())}); "
            "the server's operator offers others with --agent NAME=AGENT"
        )
    checked = dict(kwargs)
    for key, value in kwargs.items():
        if key not in allowed:
            raise ValueError(f"agent {name!r}: the page may set only {', '.join(sorted(allowed))}, got {key}=")
        maximum = allowed[key]
        if maximum is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value <= maximum:
            shown = int(maximum) if float(maximum).is_integer() else maximum
            raise ValueError(f"agent {name!r}: {key} must be at most {shown} in draw-web, got {str(value)[:40]}")
    if "seconds" in allowed:
        if "simulations" in allowed and "simulations" not in checked:
            # A search given seconds alone counts no simulations: it gets the most; given
            # neither, its own default (which a time budget alone would replace).
            search = agents.agent_class(name)
            assert issubclass(search, SearchAgent)  # the agents with simulations and seconds
            checked["simulations"] = int(allowed["simulations"] or 0) if "seconds" in checked else search.default_simulations
        checked.setdefault("seconds", SEARCH_SECONDS)
    return checked
