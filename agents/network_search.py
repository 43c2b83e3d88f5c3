"""The compiled search guided by a policy network: expert iteration's expert, as an agent.

:class:`NetworkSearchAgent` (``agents.make("ppo_search", simulations=200)``) runs
:meth:`agents.ismcts_compiled.CompiledISMCTSAgent.action_values_many` with a
:class:`agents.ppo.NumpyPolicy` as its leaf evaluator (:func:`network_evaluator`): the policy's
probabilities over the legal actions are the priors (which untried action a walk expands, and
the progressive bias ``prior_weight * prior / (1 + visits)``), and, when the file has a value
network, its output is mixed with the rollout's at every leaf (``value_weight``). It then plays
the root action of the best mean value, as ``ismcts`` does. ``draw-train`` with
``pipeline: exit`` (:mod:`train.exit`) uses the same evaluator in self-play; docs/training.md
gives the measurements behind the defaults.
"""

from __future__ import annotations

import os

import numpy as np

from agents.base import BaseAgent, Observation, legal_actions, num_players
from agents.ismcts_compiled import CompiledISMCTSAgent, Evaluator
from agents.ppo import NumpyPolicy, load_policy, shipped_policy
from draw_env.checks import check_int, check_number
from draw_env.features import encode_batch

#: Defaults of the search at play time (docs/training.md, "Expert iteration", gives the measurement).
DEFAULT_SIMULATIONS = 200
DEFAULT_VALUE_WEIGHT = 0.5
DEFAULT_PRIOR_WEIGHT = 1.0


def network_evaluator(policy: NumpyPolicy, use_value: bool = True) -> Evaluator:
    """The batched leaf evaluator of ``policy`` for :meth:`CompiledISMCTSAgent.action_values_many`.

    ``evaluate(observations (N, 258) float32, masks (N, 58) int8) -> (priors (N, 58) float32,
    values (N,) float32)``: softmax of the policy's logits over each row's legal actions (uniform
    zeros for a row with none: a seat not to act), and the value network's output (zeros when
    ``use_value`` is False or the file has none). Rows without a legal action are left out of the
    policy's forward pass.
    """
    with_value = use_value and policy.has_value

    def evaluate(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        legal = masks != 0
        inputs = encode_batch(observations, masks, policy.features)
        priors = np.zeros(masks.shape, np.float32)
        acting = np.flatnonzero(legal.any(axis=1))
        if len(acting):
            logits = np.where(legal[acting], policy.logits_batch(inputs[acting]), -np.inf)
            weights = np.exp(logits - logits.max(axis=1, keepdims=True))
            priors[acting] = weights / weights.sum(axis=1, keepdims=True)
        values = policy.values_batch(inputs) if with_value else np.zeros(len(masks), np.float32)
        return priors, values

    return evaluate


class NetworkSearchAgent(BaseAgent):
    """The compiled ISMCTS with a policy network as its prior and (if it has one) leaf value.

    Args:
        path: a policy file ``.npz`` (or checkpoint ``.zip``); ``None``: the shipped policy for
            the table's player count.
        simulations: simulations per decision (>= 1).
        value_weight: weight of the network's value against the rollout's at a leaf, in 0..1
            (ignored, i.e. 0, when the file has no value network).
        prior_weight: weight of the progressive-bias term ``prior / (1 + visits)`` (>= 0).
        exploration: the UCB1 constant.
        seed: seeds every decision's search; ``None`` for fresh entropy.

    Raises:
        ValueError: if an argument is out of range or ``path`` is not a policy (the message
            names it), or, in :meth:`act`, the file was trained for another table size.
    """

    name = "ppo_search"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        simulations: int = DEFAULT_SIMULATIONS,
        value_weight: float = DEFAULT_VALUE_WEIGHT,
        prior_weight: float = DEFAULT_PRIOR_WEIGHT,
        exploration: float = 1.0,
        seed: int | None = None,
    ) -> None:
        self.simulations = check_int("simulations", simulations, minimum=1)
        self.value_weight = check_number("value_weight", value_weight, minimum=0, maximum=1)
        self.prior_weight = check_number("prior_weight", prior_weight, minimum=0)
        self._search = CompiledISMCTSAgent(simulations=self.simulations, exploration=exploration, seed=seed)
        self._fixed = None if path is None else load_policy(path)
        self._evaluators: dict[int, tuple[Evaluator, float]] = {}

    def _evaluator(self, players: int) -> tuple[Evaluator, float]:
        found = self._evaluators.get(players)
        if found is None:
            policy = self._fixed if self._fixed is not None else load_policy(shipped_policy(players))
            if policy.num_players not in (None, players):
                raise ValueError(
                    f"the policy was trained for {policy.num_players} players, but the table has {players}"
                )
            found = (network_evaluator(policy), self.value_weight if policy.has_value else 0.0)
            self._evaluators[players] = found
        return found

    def act(self, observation: Observation) -> int:
        actions = legal_actions(observation)
        if len(actions) == 1:
            return actions[0]
        evaluate, value_weight = self._evaluator(num_players(observation["observation"]))
        [values] = self._search.action_values_many(
            [observation], evaluate, value_weight=value_weight, prior_weight=self.prior_weight
        )
        return max(actions, key=lambda action: (values[action], -action))
