"""The hint of ``draw-play`` and ``draw-web``: what an agent would play from a position, the
probability it gives each legal move and, where it has them, its values in zero-sum hand points.

Both commands ask :func:`read_hint` and show the :class:`Hint` it returns, so that the same
agent at the same position gives the same hint in both. What an agent gives is declared in its
registry entry (:class:`agents.AgentEntry`): a search (``values: "actions"``) values each move it
searched and plays the best one; a network (``values: "position"``) gives its probabilities and,
when its policy file has a value network and records its ``value_unit``, the position's value.
Values are shown in zero-sum hand points: the agent's values times its unit (the entry's
``value_unit``, or the policy file's). A policy file that records no unit shows no value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

import agents
from agents.base import Observation, ValueSearchAgent, legal_actions, observation_for, seeded_from
from draw_env.rules import DrawGame

#: The hint agent in the seeds' game: the shipped network, sampling, so that its probabilities
#: are the softmax it plays from rather than a one-hot on its choice (and instant to answer).
DEFAULT_HINT = "network:deterministic=false"
#: The hint agent of a variant (the network plays the seeds' game only).
DEFAULT_VARIANT_HINT = "variety"
#: The hint agent's seed comes from (seed, this), apart from the seats' (seed, seat).
HINT_STREAM = 100


def default_hint(game: DrawGame) -> str:
    """The hint agent's spec when none is given: :data:`DEFAULT_HINT` in the seeds' game, else
    :data:`DEFAULT_VARIANT_HINT`."""
    return DEFAULT_HINT if game.is_default else DEFAULT_VARIANT_HINT


@dataclass(frozen=True)
class Hint:
    """An agent's reading of a position.

    Attributes:
        choice: the move it would play: the searched move of the best value (ties to the lowest
            action id, the searches' own rule), else the most probable (ties likewise).
        probabilities: each legal move's probability (a one-hot on ``choice`` for a search).
        values: each searched move's value in zero-sum hand points (empty: the agent values none).
        value: the position's value in zero-sum hand points for the player to move (a network's
            value head whose unit its file records), or ``None``.
    """

    choice: int
    probabilities: dict[int, float]
    values: dict[int, float] = field(default_factory=dict)
    value: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The hint as plain data (it crosses a process boundary in ``draw-web``)."""
        return {"choice": self.choice, "probabilities": dict(self.probabilities), "values": dict(self.values),
                "value": self.value}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Hint:
        return cls(int(data["choice"]), {int(a): float(p) for a, p in data["probabilities"].items()},
                   {int(a): float(v) for a, v in data["values"].items()},
                   None if data["value"] is None else float(data["value"]))


def read_hint(agent: agents.Agent, observation: Observation, num_players: int) -> Hint:
    """The hint of ``agent`` for the player to move at ``observation`` (as the environment gives
    it; an agent of observations is given the observation an information state holds).

    Raises:
        ValueError: the agent cannot read this position (or its file).
    """
    facts = agents.entry_of(agent)
    observation = observation_for(agent, observation)
    legal = legal_actions(observation)
    if facts.values == "actions":
        search = cast(ValueSearchAgent, agent)  # the searches that value moves are these
        # Seeded from the position and the agent's seed, as its action_probabilities are: the same
        # position gives the same search, in either command.
        with seeded_from(observation, search.seed, search.rng):
            raw = search.action_values(observation)
        unit = float(facts.value_unit or 1.0)
        values = {int(action): float(v) * unit for action, v in raw.items()}
        choice = max(values, key=lambda action: (values[action], -action))
        return Hint(choice, {action: float(action == choice) for action in legal}, values)
    probabilities = np.asarray(agent.action_probabilities(observation), np.float64)
    choice = max(legal, key=lambda action: (probabilities[action], -action))
    value = None
    if facts.values == "position":
        policy = agent.policy_for(num_players)  # type: ignore[attr-defined]  # declared in the registry
        unit = policy.weights.value_unit
        if policy.has_value and unit is not None:
            value = float(policy.values_batch(policy.encode(observation)[None])[0]) * unit
    return Hint(choice, {action: float(probabilities[action]) for action in legal}, {}, value)
