"""Agents that play Draw dominoes from their observation alone.

``agents.make(name, **kwargs)`` builds an agent; ``agents.available()`` lists the names. Every
agent follows :class:`agents.base.Agent`: ``act(observation) -> int`` returns a legal action for
the observation dict the environment gives, and ``reset()`` is called at the start of each
hand or match.

The registry maps a name to an ``"module:Class"`` import path, imported on first use, so that
importing :mod:`agents` stays light (``network`` loads its policy on first use; it needs torch only
to read a training checkpoint ``.zip``).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable
from typing import Any

from agents.base import Agent, BaseAgent

__all__ = ["Agent", "BaseAgent", "agent_class", "available", "check_keywords", "make", "register"]

_REGISTRY: dict[str, str] = {
    "random": "agents.baselines:RandomAgent",
    "random_forced": "agents.baselines:RandomForcedAgent",
    "heaviest": "agents.baselines:HeaviestAgent",
    "variety": "agents.baselines:VarietyAgent",
    "ismcts": "agents.ismcts_compiled:CompiledISMCTSAgent",
    "ismcts_python": "agents.ismcts:ISMCTSAgent",
    "pimc": "agents.pimc:PIMCAgent",
    "tabular": "agents.tabular:TabularAgent",
    "network": "agents.policy_network:NetworkAgent",
    "ppo": "agents.policy_network:NetworkAgent",  # the same agent, under the name existing specs use
    "ppo_search": "agents.network_search:NetworkSearchAgent",
    # OpenSpiel's bots (the openspiel extra): agents/openspiel_bots.py
    "openspiel-random": "agents.openspiel_bots:OpenSpielRandomAgent",
    "openspiel-mcts": "agents.openspiel_bots:OpenSpielMCTSAgent",
    "openspiel-ismcts": "agents.openspiel_bots:OpenSpielISMCTSAgent",
}


def available() -> list[str]:
    """The registered agent names, in registry order (weakest baselines first)."""
    return list(_REGISTRY)


def register(name: str, import_path: str) -> None:
    """Add an agent kept outside this package under ``name``, as a ``"module:Class"`` path.

    Example: ``agents.register("rllib", "integrations.rllib:RLlibAgent")``. Only this process
    sees it (``arena.evaluation`` with ``workers=1`` plays in this process).

    Raises:
        ValueError: if ``name`` is already registered or ``import_path`` is not ``"module:Class"``.
    """
    if name in _REGISTRY:
        raise ValueError(f"name {name!r} is already registered; registered: {', '.join(available())}")
    module_name, colon, class_name = import_path.partition(":")
    if not colon or not module_name or not class_name:
        raise ValueError(f"import_path must look like 'module:Class', got {import_path!r}")
    _REGISTRY[name] = import_path


def agent_class(name: str) -> type:
    """The class registered under ``name`` (importing its module on first use).

    Raises:
        ValueError: if ``name`` is not registered.
    """
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(f"name must be one of {', '.join(available())}; got {name!r}")
    module_name, class_name = _REGISTRY[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def check_keywords(name: str, keywords: Iterable[str]) -> type:
    """The class registered under ``name``, once every one of ``keywords`` is an argument it takes.

    Raises:
        ValueError: if ``name`` is unknown (the message lists the names) or a keyword is not one
            the agent takes (the message lists the ones it takes).
    """
    cls = agent_class(name)
    parameters = inspect.signature(cls).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    if not takes_any:
        allowed = [p for p, spec in parameters.items() if spec.kind is not inspect.Parameter.VAR_POSITIONAL]
        unknown = sorted(str(key) for key in set(keywords) - set(allowed))
        if unknown:
            takes = ", ".join(allowed) if allowed else "no keyword arguments"
            raise ValueError(f"agent {name!r} got unknown keyword(s) {', '.join(unknown)}; it takes: {takes}")
    return cls


def make(name: str, **kwargs: Any) -> Agent:
    """Build the agent registered under ``name`` with keyword arguments ``kwargs``.

    Example: ``agents.make("ismcts", simulations=200, seed=1)``.

    Raises:
        ValueError: if ``name`` is unknown (the message lists the names) or a keyword is not one
            the agent takes (the message lists the ones it takes), or a value is out of range.
    """
    return check_keywords(name, kwargs)(**kwargs)
