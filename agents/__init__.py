"""Agents that play Draw dominoes from their observation alone (or, for a network or a table
whose file says so, from their information state: :func:`spec_obs_type`, ``agents.base``).

``agents.make(name, **kwargs)`` builds an agent; ``agents.available()`` lists the names. Every
agent follows :class:`agents.base.Agent`: ``act(observation) -> int`` returns a legal action for
the observation dict the environment gives, and ``reset()`` is called at the start of each
hand or match.

The registry maps a name to its :class:`AgentEntry`, the one place that says what the project may
ask of the agent: its ``"module:Class"`` path, its batched version, whether it plays
deterministically, is a training baseline, plays the variants, answers probabilities in batches,
and which values it gives in which unit (:func:`entry_of` finds an agent's entry by its class). Paths are imported on first use, so
that importing :mod:`agents` stays light (``network`` loads its policy on first use; it needs torch only
to read a training checkpoint ``.zip``).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agents.base import SEARCH_VALUE_UNIT, Agent, BaseAgent

__all__ = [
    "Agent",
    "AgentEntry",
    "BaseAgent",
    "agent_class",
    "available",
    "baseline_names",
    "batched_class",
    "check_keywords",
    "entry",
    "entry_of",
    "UNREGISTERED",
    "make",
    "plays_deterministically",
    "plays_variants",
    "register",
    "spec_obs_type",
    "variant_agents",
]

@dataclass(frozen=True)
class AgentEntry:
    """What the project knows of a registered agent.

    Attributes:
        path: ``"module:Class"`` of the one-game agent.
        batched: ``"module:Class"`` of its batched version (an :class:`agents.batched.BatchAgent`),
            or ``None``. A class that takes a ``seed`` is built with one; the network's batched
            version is the policy its agent plays (:func:`agents.batched.batch_actor`).
        deterministic: it plays the same action from the same observation, so a batch of games
            plays exactly as the games one by one (the batched evaluation).
        deterministic_keyword: a boolean keyword argument that, set to ``False``, makes a
            deterministic agent sample instead (the network's ``deterministic``).
        baseline: a training config may name it as an opponent or an evaluation baseline.
        variants: it plays every variant of the game, not only the seeds' game.
        batch_probabilities: the one-game agent answers ``action_probabilities_batch(observations,
            masks)``, the probabilities of many vectors in one call, exactly those
            ``action_probabilities`` gives one observation at a time (which every agent answers).
            This is the one thing :func:`arena.exploitability.agent_probabilities` reads to ask
            in batches; the baselines answer through their batched versions' NumPy code.
        values: which values it gives: ``"actions"``, each searched move's value
            (``action_values(observation)``, the searches); ``"position"``, the position's
            value from its policy's value head (``policy_for(players)``, the network, when its
            file has one); ``None``, none.
        value_unit: zero-sum hand points per unit of its values (``"actions"``: the searches'
            :data:`agents.base.SEARCH_VALUE_UNIT`); ``None`` with ``"position"``: each policy
            file records its own (``value_unit`` in :mod:`agents.policy_file`).
    """

    path: str
    batched: str | None = None
    deterministic: bool = False
    deterministic_keyword: str | None = None
    baseline: bool = False
    variants: bool = False
    batch_probabilities: bool = False
    values: Literal["actions", "position"] | None = None
    value_unit: float | None = None


#: The facts of a search that values each move (in the searches' unit).
_SEARCH_VALUES: dict[str, Any] = {"values": "actions", "value_unit": SEARCH_VALUE_UNIT}


_BATCHED = "agents.batched:"
# Variants: the baselines read the set from the action mask's length, and tabular plays the variant
# its table was solved for (another is refused at its first move); the network, the searches and
# OpenSpiel's bots play the seeds' game only.
_REGISTRY: dict[str, AgentEntry] = {
    "random": AgentEntry(
        "agents.baselines:RandomAgent", _BATCHED + "RandomBatch", baseline=True, variants=True, batch_probabilities=True
    ),
    "random_forced": AgentEntry(
        "agents.baselines:RandomForcedAgent", _BATCHED + "RandomForcedBatch", baseline=True, variants=True,
        batch_probabilities=True,
    ),
    "heaviest": AgentEntry(
        "agents.baselines:HeaviestAgent", _BATCHED + "HeaviestBatch", deterministic=True, baseline=True,
        variants=True, batch_probabilities=True,
    ),
    "variety": AgentEntry(
        "agents.baselines:VarietyAgent", _BATCHED + "VarietyBatch", deterministic=True, baseline=True,
        variants=True, batch_probabilities=True,
    ),
    "ismcts": AgentEntry("agents.ismcts_compiled:CompiledISMCTSAgent", baseline=True, variants=True, **_SEARCH_VALUES),
    "ismcts_python": AgentEntry("agents.ismcts:ISMCTSAgent", **_SEARCH_VALUES),
    "pimc": AgentEntry("agents.pimc:PIMCAgent", variants=True, **_SEARCH_VALUES),
    "tabular": AgentEntry("agents.tabular:TabularAgent", variants=True, batch_probabilities=True),
    **{
        # "ppo" is the same agent, under the name existing specs use.
        name: AgentEntry(
            "agents.policy_network:NetworkAgent",
            "agents.policy_network:NumpyPolicy",
            deterministic=True,
            deterministic_keyword="deterministic",
            batch_probabilities=True,
            values="position",
        )
        for name in ("network", "ppo")
    },
    "ppo_search": AgentEntry("agents.network_search:NetworkSearchAgent"),
    # OpenSpiel's bots (the openspiel extra): agents/openspiel_bots.py
    "openspiel-random": AgentEntry("agents.openspiel_bots:OpenSpielRandomAgent"),
    "openspiel-mcts": AgentEntry("agents.openspiel_bots:OpenSpielMCTSAgent"),
    "openspiel-ismcts": AgentEntry("agents.openspiel_bots:OpenSpielISMCTSAgent"),
}


def available() -> list[str]:
    """The registered agent names, in registry order (weakest baselines first)."""
    return list(_REGISTRY)


def _check_import_path(what: str, import_path: str) -> None:
    module_name, colon, class_name = import_path.partition(":")
    if not colon or not module_name or not class_name:
        raise ValueError(f"{what} must look like 'module:Class', got {import_path!r}")


def register(
    name: str,
    import_path: str,
    *,
    batched: str | None = None,
    deterministic: bool = False,
    deterministic_keyword: str | None = None,
    baseline: bool = False,
    variants: bool = False,
    batch_probabilities: bool = False,
    values: Literal["actions", "position"] | None = None,
    value_unit: float | None = None,
) -> None:
    """Add an agent kept outside this package under ``name``, as a ``"module:Class"`` path.

    The keywords are those of :class:`AgentEntry`. Example:
    ``agents.register("rllib", "integrations.rllib:RLlibAgent")``. Only this process sees it
    (``arena.evaluation`` with ``workers=1`` plays in this process).

    Raises:
        ValueError: if ``name`` is already registered or a path is not ``"module:Class"``.
    """
    if name in _REGISTRY:
        raise ValueError(f"name {name!r} is already registered; registered: {', '.join(available())}")
    _check_import_path("import_path", import_path)
    if batched is not None:
        _check_import_path("batched", batched)
    _REGISTRY[name] = AgentEntry(import_path, batched, deterministic, deterministic_keyword, baseline, variants,
                                 batch_probabilities, values, value_unit)


def entry(name: str) -> AgentEntry:
    """The registry entry of ``name``.

    Raises:
        ValueError: if ``name`` is not registered.
    """
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(f"name must be one of {', '.join(available())}; got {name!r}")
    return _REGISTRY[name]


#: The facts of an agent no entry names (an object that follows :class:`agents.base.Agent`):
#: probabilities one observation at a time, no values.
UNREGISTERED = AgentEntry("")


def entry_of(agent: object) -> AgentEntry:
    """The registry entry of ``agent``'s class (the first that names it: ``network`` for ``ppo``,
    whose facts are the same); :data:`UNREGISTERED` for a class no entry names."""
    path = f"{type(agent).__module__}:{type(agent).__qualname__}"
    return next((found for found in _REGISTRY.values() if found.path == path), UNREGISTERED)


def _load(import_path: str) -> Any:
    module_name, class_name = import_path.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def batched_class(name: str) -> type | None:
    """The class of the batched version of ``name`` (``None``: it has none)."""
    path = entry(name).batched
    return None if path is None else _load(path)


def baseline_names() -> list[str]:
    """The names a training config may give as opponents or evaluation baselines.

    (Not ``baselines``: that is the module :mod:`agents.baselines`.)
    """
    return [name for name, agent in _REGISTRY.items() if agent.baseline]


def plays_variants(name: str) -> bool:
    """Whether ``name`` plays every variant of the game (others play only the seeds' game)."""
    return entry(name).variants


def variant_agents() -> list[str]:
    """The names of the agents that play every variant."""
    return [name for name, agent in _REGISTRY.items() if agent.variants]


def plays_deterministically(name: str, kwargs: Mapping[str, Any]) -> bool:
    """Whether the agent of spec ``(name, kwargs)`` plays the same action from the same observation."""
    agent = entry(name)
    switch = agent.deterministic_keyword
    return agent.deterministic and (switch is None or kwargs.get(switch, True) is True)


def agent_class(name: str) -> type:
    """The class registered under ``name`` (importing its module on first use).

    Raises:
        ValueError: if ``name`` is not registered.
    """
    return _load(entry(name).path)


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


def spec_obs_type(name: str, kwargs: Mapping[str, Any]) -> str:
    """What the agent of spec ``(name, kwargs)`` reads: ``"information_state"`` for an agent whose
    file says so (a network's policy file, a ``tabular`` table: read from the file's record, the
    class's ``obs_type_of_file``), else ``"observation"`` (every other agent reads the observation,
    and is given the observation an information state holds: :class:`agents.base.BaseAgent`).

    Raises:
        ValueError: if ``name`` is unknown or its file cannot be read.
    """
    reader = getattr(agent_class(name), "obs_type_of_file", None)
    path = kwargs.get("path")
    return "observation" if reader is None or path is None else str(reader(path))


def make(name: str, **kwargs: Any) -> Agent:
    """Build the agent registered under ``name`` with keyword arguments ``kwargs``.

    Example: ``agents.make("ismcts", simulations=200, seed=1)``.

    Raises:
        ValueError: if ``name`` is unknown (the message lists the names) or a keyword is not one
            the agent takes (the message lists the ones it takes), or a value is out of range.
    """
    return check_keywords(name, kwargs)(**kwargs)
