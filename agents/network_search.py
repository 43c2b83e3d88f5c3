"""The compiled search with a policy network: expert iteration's expert, as an agent.

:class:`NetworkSearchAgent` (``agents.make("ppo_search")``) plays the network's file (the
shipped policy of the table's size by default) under the compiled ISMCTS in one of two ways:

* ``guide="root"`` (the default): the plain compiled search (rollouts only), then each root
  action's mean shrunk toward the network's value of it, worth ``prior_visits`` visits
  (:func:`root_values`): one forward pass a decision.
* ``guide="tree"``: :meth:`agents.ismcts_compiled.CompiledISMCTSAgent.action_values_many` with
  the network as its leaf evaluator (:func:`network_evaluator`): the policy's probabilities are
  the priors (which untried action a walk expands, and the progressive bias
  ``prior_weight * prior / (1 + visits)``), and a value network's output is mixed with the
  rollout's at every leaf (``value_weight``): one forward pass a simulation.

It plays the root action of the best value, as ``ismcts`` does. ``draw-train`` with
``pipeline: exit`` (:mod:`train.exit`) uses the same two guides in self-play; docs/training.md
gives the measurements behind the defaults and the agent's strength, with their commands."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from agents.base import (
    BaseAgent,
    Observation,
    legal_actions,
    num_players,
    observation_of,
    one_hot,
    seeded_from,
)
from agents.ismcts import MAX_SIMULATIONS
from agents.ismcts_compiled import CompiledISMCTSAgent, Evaluator
from agents.policy_network import NumpyPolicy, load_policy, shipped_policy
from draw_env.checks import check_choice, check_int, check_number
from draw_env.rules import DrawGame

#: Defaults of the search at play time (docs/results.md gives the measurement).
DEFAULT_SIMULATIONS = 5000
GUIDES = ("root", "tree")
DEFAULT_GUIDE = "root"
DEFAULT_PRIOR_VISITS = 500.0
DEFAULT_TEMPERATURE = 0.1
DEFAULT_VALUE_WEIGHT = 0.5
DEFAULT_PRIOR_WEIGHT = 1.0


def network_evaluator(policy: NumpyPolicy, use_value: bool = True) -> Evaluator:
    """The batched leaf evaluator of ``policy`` for :meth:`CompiledISMCTSAgent.action_values_many`.

    ``evaluate(observations (N, O) float32, masks (N, A) int8) -> (priors (N, A) float32,
    values (N,) float32)``, ``O`` and ``A`` the sizes of the policy's variant (258 and 58 in the
    seeds' game): softmax of the policy's logits over each row's legal actions (uniform
    zeros for a row with none: a seat not to act), and the value network's output (zeros when
    ``use_value`` is False or the file has none). Rows without a legal action are left out of the
    policy's forward pass.
    """
    with_value = use_value and policy.has_value

    def evaluate(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        legal = masks != 0
        inputs = policy.encode_batch(observations, masks)  # the policy's variant
        priors = np.zeros(masks.shape, np.float32)
        acting = np.flatnonzero(legal.any(axis=1))
        if len(acting):
            logits = np.where(legal[acting], policy.logits_batch(inputs[acting]), -np.inf)
            weights = np.exp(logits - logits.max(axis=1, keepdims=True))
            priors[acting] = weights / weights.sum(axis=1, keepdims=True)
        values = policy.values_batch(inputs) if with_value else np.zeros(len(masks), np.float32)
        return priors, values

    return evaluate


def root_values(
    actions: np.ndarray, visits: np.ndarray, totals: np.ndarray, logits: np.ndarray,
    temperature: float, prior_visits: float,
) -> dict[int, float]:
    """Each root action's search mean shrunk toward the network's estimate of it.

    A policy fitted to ``softmax(values / temperature)`` has logits ``values / temperature`` up to
    a constant per position, so ``temperature * logit`` is the network's value of each action (its
    average over the legal actions set to the search's). That estimate counts as ``prior_visits``
    extra visits: ``(totals + prior_visits * estimate) / (visits + prior_visits)``. The search
    corrects the network where this position differs from the average one it learnt; the
    network damps the search's sampling noise.

    Args:
        actions: ``(L,)`` the legal root actions; ``visits``, ``totals``: ``(L,)`` their statistics.
        logits: ``(58,)`` the network's logits of the position.
    """
    estimate = temperature * logits[actions].astype(np.float64)
    estimate += totals.sum() / visits.sum() - estimate.mean()
    combined = (totals + prior_visits * estimate) / (visits + prior_visits)
    return {int(action): float(value) for action, value in zip(actions, combined, strict=True)}


def root_guided_values(
    search: CompiledISMCTSAgent, policy: NumpyPolicy, views: Sequence[Observation],
    temperature: float, prior_visits: float,
) -> list[dict[int, float]]:
    """``guide="root"`` for many decisions: the plain search of each view, then :func:`root_values`
    with the policy's logits of all of them from one forward pass.

    Args:
        views: observation dicts of the players to act (``observation`` (258,), ``action_mask`` (58,)),
            or their information states when ``policy`` reads them (the search is given the
            observation each holds).
    """
    found = [search.search(observation_of(view)) for view in views]
    observations = np.stack([np.asarray(view["observation"]) for view in views])
    masks = np.stack([np.asarray(view["action_mask"]) for view in views])
    logits = policy.logits_batch(policy.encode_batch(observations, masks))
    return [
        root_values(result.actions, result.visits, result.totals, row, temperature, prior_visits)
        for result, row in zip(found, logits, strict=True)
    ]


class NetworkSearchAgent(BaseAgent):
    """The compiled ISMCTS with a policy network, at the root or throughout the tree.

    ``guide="root"``: the plain compiled search (rollouts only, no network call inside it) and,
    at the root, the network's action values as ``prior_visits`` extra visits of each root action
    (:func:`root_values`): one forward pass a decision. ``guide="tree"``: the network's policy
    is the prior of every node (progressive bias ``prior_weight``) and its value, if the file has
    one, is mixed with the rollouts at the leaves (``value_weight``): one forward pass a simulation.

    Args:
        path: a policy file ``.npz`` (or checkpoint ``.zip``); ``None``: the shipped policy for
            the table's player count.
        simulations: simulations per decision (1 to :data:`agents.ismcts.MAX_SIMULATIONS`).
        guide: ``"root"`` or ``"tree"``.
        prior_visits: (root) the visits the network's estimate of a root action counts as (>= 0).
        temperature: (root) the temperature the policy was fitted with (> 0): its logits times
            this are action values in the search's unit.
        value_weight: (tree) weight of the network's value against the rollout's at a leaf, in
            0..1 (ignored, i.e. 0, when the file has no value network).
        prior_weight: (tree) weight of the progressive-bias term ``prior / (1 + visits)`` (>= 0).
        exploration: the UCB1 constant.
        seed: seeds every decision's search; ``None`` for fresh entropy.

    Raises:
        ValueError: if an argument is out of range, ``path`` is not a policy (the message
            names it) or reads information states (the search's positions are observations),
            or, in :meth:`act`, the file was trained for another table size.
    """

    name = "ppo_search"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        simulations: int = DEFAULT_SIMULATIONS,
        guide: str = DEFAULT_GUIDE,
        prior_visits: float = DEFAULT_PRIOR_VISITS,
        temperature: float = DEFAULT_TEMPERATURE,
        value_weight: float = DEFAULT_VALUE_WEIGHT,
        prior_weight: float = DEFAULT_PRIOR_WEIGHT,
        exploration: float = 1.0,
        seed: int | None = None,
    ) -> None:
        self.simulations = check_int("simulations", simulations, minimum=1, maximum=MAX_SIMULATIONS)
        self.guide = check_choice("guide", guide, GUIDES)
        self.prior_visits = check_number("prior_visits", prior_visits, minimum=0)
        self.temperature = check_number("temperature", temperature, minimum=0, exclusive_minimum=True)
        self.value_weight = check_number("value_weight", value_weight, minimum=0, maximum=1)
        self.prior_weight = check_number("prior_weight", prior_weight, minimum=0)
        self._search = CompiledISMCTSAgent(simulations=self.simulations, exploration=exploration, seed=seed)
        self._fixed = None if path is None else load_policy(path)
        if self._fixed is not None and self._fixed.obs_type != "observation":
            raise ValueError(
                f"the policy {str(path)!r} reads obs_type={self._fixed.obs_type!r}; ppo_search asks its network "
                "about the search's positions, which are observations: give it a policy of observations"
            )
        self._evaluators: dict[int, tuple[Evaluator, float, NumpyPolicy]] = {}

    def _evaluator(self, players: int) -> tuple[Evaluator, float, NumpyPolicy]:
        found = self._evaluators.get(players)
        if found is None:
            policy = self._fixed if self._fixed is not None else load_policy(shipped_policy(players))
            if policy.num_players not in (None, players):
                raise ValueError(
                    f"the policy was trained for {policy.num_players} players, but the table has {players}"
                )
            policy.check_game(DrawGame(players))  # the compiled search plays the seeds' game only
            found = (network_evaluator(policy), self.value_weight if policy.has_value else 0.0, policy)
            self._evaluators[players] = found
        return found

    def act(self, observation: Observation) -> int:
        actions = legal_actions(observation)
        if len(actions) == 1:
            return actions[0]
        evaluate, value_weight, policy = self._evaluator(num_players(observation["observation"]))
        if self.guide == "root":
            [values] = root_guided_values(self._search, policy, [observation], self.temperature, self.prior_visits)
        else:
            [values] = self._search.action_values_many(
                [observation], evaluate, value_weight=value_weight, prior_weight=self.prior_weight
            )
        return max(actions, key=lambda action: (values[action], -action))

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        """A one-hot on the action :meth:`act` plays when its search is seeded from the observation
        and the agent's seed (:func:`agents.base.seeded_from`): the same observation always gives
        the same answer."""
        with seeded_from(observation, self._search.seed, self._search.rng):
            return one_hot(observation, self.act(observation))
