"""Bridges to OpenSpiel, both ways (needs the ``openspiel`` extra).

* :class:`AgentBot` seats any of our agents (``agents.make(...)``) at an OpenSpiel table of
  ``python_draw_dominoes`` (:mod:`draw_env.openspiel`) as a ``pyspiel.Bot``: it hands the agent
  the observation dict the AEC environment would give (the observation tensor is the same
  vector).
* :class:`OpenSpielISMCTSAgent`, :class:`OpenSpielMCTSAgent` and :class:`OpenSpielRandomAgent`
  are OpenSpiel's bots as our agents (``agents.make("openspiel-ismcts")``, ``"openspiel-mcts"``,
  ``"openspiel-random"``), so ``draw-eval`` plays them in duplicate format like any other.

Our agents decide from their observation alone, and so do these: each decision rebuilds an
OpenSpiel state from the observation (:func:`draw_env.observation.view_from_observation`, then
:meth:`~draw_env.rules.PlayerView.sample_state`, then
:meth:`~draw_env.openspiel.DrawDominoesGame.new_state_from_position`), seen from seat 0. Why
``ISMCTSBot`` is OpenSpiel's Python one and ``MCTSBot`` runs determinized: the docs page
"Integrations" (``docs/integrations.md``, the bridges).
"""

from __future__ import annotations

import random

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from agents.base import (
    Agent,
    Observation,
    SeededAgent,
    legal_actions,
    num_players,
    one_hot,
    seeded_from,
    uniform_over,
)
from agents.ismcts import DEFAULT_SIMULATIONS, MAX_SIMULATIONS
from draw_env import openspiel as draw_openspiel
from draw_env.checks import check_choice, check_int, check_number
from draw_env.observation import view_from_observation

#: OpenSpiel's MCTS example (``open_spiel/python/examples/mcts.py``) uses ``uct_c=2``.
DEFAULT_UCT_C = 2.0
FINAL_POLICIES = {
    "max_visit_count": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
    "normalized_visit_count": ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT,
    "max_value": ismcts.ISMCTSFinalPolicyType.MAX_VALUE,
}

_GAMES: dict[int, draw_openspiel.DrawDominoesGame] = {}


def planning_game(players: int) -> draw_openspiel.DrawDominoesGame:
    """The one-hand, zero-sum ``python_draw_dominoes`` the bots plan in (one per player count)."""
    if players not in _GAMES:
        _GAMES[players] = pyspiel.load_game(draw_openspiel.SHORT_NAME, {"players": players})
    return _GAMES[players]


def state_from_observation(observation: Observation, rng: random.Random) -> draw_openspiel.DrawDominoesState:
    """An OpenSpiel state consistent with ``observation``, the observer at seat 0.

    The hidden tiles are dealt at random (:meth:`~draw_env.rules.PlayerView.sample_state`); the
    state's information state for seat 0 depends on the observation only.
    """
    vector = observation["observation"]
    players = num_players(vector)
    position = view_from_observation(vector, players).sample_state(rng)
    return planning_game(players).new_state_from_position(position)


class _OpenSpielSearch(SeededAgent):
    """The settings both OpenSpiel searches take, checked, and the NumPy generator OpenSpiel's
    bots draw from (seeded from the agent's own).

    Args:
        simulations: simulations per decision (1 to :data:`agents.ismcts.MAX_SIMULATIONS`, the
            bound of every search budget).
        uct_c: the UCT exploration constant (>= 0); returns are zero-sum hand points.
        rollouts: random rollouts per leaf (``RandomRolloutEvaluator(n_rollouts)``, 1 to
            ``MAX_SIMULATIONS``).
        seed: seeds the positions sampled from the observation, the search and the rollouts.
    """

    def __init__(self, simulations: int, uct_c: float, rollouts: int, seed: int | None) -> None:
        super().__init__(seed)
        self.simulations = check_int("simulations", simulations, minimum=1, maximum=MAX_SIMULATIONS)
        self.uct_c = check_number("uct_c", uct_c, minimum=0)
        self.rollouts = check_int("rollouts", rollouts, minimum=1, maximum=MAX_SIMULATIONS)
        self._numpy = np.random.RandomState(self.rng.getrandbits(32))

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        """A one-hot on the action :meth:`act` plays when the positions it samples, its search and
        its rollouts are seeded from the observation and the agent's seed
        (:func:`agents.base.seeded_from`): the same observation always gives the same answer."""
        with seeded_from(observation, self.seed, self.rng, self._numpy):
            return one_hot(observation, self.act(observation))


class OpenSpielISMCTSAgent(_OpenSpielSearch):
    """OpenSpiel's ``ISMCTSBot`` with random rollouts, deciding from the observation alone.

    Args:
        simulations: simulations per decision (``max_simulations``); default 200, the default
            budget of our Python search ``ismcts_python``. OpenSpiel's examples use 1000.
        uct_c, rollouts, seed: as :class:`_OpenSpielSearch`.
        final_policy: ``"max_visit_count"`` (OpenSpiel's default), ``"normalized_visit_count"``
            or ``"max_value"``.
    """

    name = "openspiel-ismcts"

    def __init__(
        self,
        simulations: int = DEFAULT_SIMULATIONS,
        uct_c: float = DEFAULT_UCT_C,
        rollouts: int = 1,
        final_policy: str = "max_visit_count",
        seed: int | None = None,
    ) -> None:
        super().__init__(simulations, uct_c, rollouts, seed)
        self.final_policy = check_choice("final_policy", final_policy, tuple(FINAL_POLICIES))
        self._bots: dict[int, ismcts.ISMCTSBot] = {}

    def _bot(self, players: int) -> ismcts.ISMCTSBot:
        if players not in self._bots:
            bot = ismcts.ISMCTSBot(
                planning_game(players),
                mcts.RandomRolloutEvaluator(n_rollouts=self.rollouts, random_state=self._numpy),
                self.uct_c,
                self.simulations,
                random_state=self._numpy,
                final_policy_type=FINAL_POLICIES[self.final_policy],
            )
            sampler = self.rng.random  # resample_from_infostate's probability_sampler: uniform in [0, 1)
            bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))
            self._bots[players] = bot
        return self._bots[players]

    def act(self, observation: Observation) -> int:
        actions = legal_actions(observation)
        if len(actions) == 1:
            return actions[0]
        state = state_from_observation(observation, self.rng)
        return int(self._bot(state.num_players()).step(state))


class OpenSpielMCTSAgent(_OpenSpielSearch):
    """Determinized MCTS: OpenSpiel's ``MCTSBot`` on sampled positions, root visits summed.

    Args:
        simulations: simulations per decision, spread evenly over the determinizations.
        determinizations: positions sampled from the observation per decision (1 to
            ``MAX_SIMULATIONS``).
        uct_c, rollouts, seed: as :class:`_OpenSpielSearch`.
    """

    name = "openspiel-mcts"

    def __init__(
        self,
        simulations: int = DEFAULT_SIMULATIONS,
        determinizations: int = 10,
        uct_c: float = DEFAULT_UCT_C,
        rollouts: int = 1,
        seed: int | None = None,
    ) -> None:
        super().__init__(simulations, uct_c, rollouts, seed)
        self.determinizations = check_int("determinizations", determinizations, minimum=1, maximum=MAX_SIMULATIONS)
        self._bots: dict[int, mcts.MCTSBot] = {}

    def _bot(self, players: int) -> mcts.MCTSBot:
        if players not in self._bots:
            self._bots[players] = mcts.MCTSBot(
                planning_game(players),
                self.uct_c,
                max(1, self.simulations // self.determinizations),
                mcts.RandomRolloutEvaluator(n_rollouts=self.rollouts, random_state=self._numpy),
                random_state=self._numpy,
            )
        return self._bots[players]

    def act(self, observation: Observation) -> int:
        actions = legal_actions(observation)
        if len(actions) == 1:
            return actions[0]
        visits = dict.fromkeys(actions, 0)
        for _ in range(self.determinizations):
            state = state_from_observation(observation, self.rng)
            root = self._bot(state.num_players()).mcts_search(state)
            for child in root.children:
                visits[int(child.action)] += child.explore_count
        return max(actions, key=lambda action: (visits[action], -action))


class OpenSpielRandomAgent(SeededAgent):
    """OpenSpiel's uniform random bot (``pyspiel.make_uniform_random_bot``): any legal action."""

    name = "openspiel-random"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._bot = pyspiel.make_uniform_random_bot(0, self.rng.getrandbits(31))

    def act(self, observation: Observation) -> int:
        actions = legal_actions(observation)
        if len(actions) == 1:
            return actions[0]
        return int(self._bot.step(state_from_observation(observation, self.rng)))

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        """Uniform over the legal actions, as OpenSpiel's random bot plays."""
        return uniform_over(observation, legal_actions(observation))


class AgentBot(pyspiel.Bot):
    """One of our agents as an OpenSpiel bot for ``python_draw_dominoes``.

    Args:
        agent: any :class:`agents.base.Agent` (``agents.make("ismcts", seed=0)``...).
        player_id: the seat it plays; ``None`` plays whichever seat is to act.

    The agent gets ``{"observation": state.observation_tensor(seat), "action_mask": ...}``, what
    the AEC environment would give it; :meth:`restart_at` resets it.
    """

    def __init__(self, agent: Agent, player_id: int | None = None) -> None:
        pyspiel.Bot.__init__(self)
        self.agent = agent
        self._player_id = player_id

    def player_id(self) -> int:
        return -1 if self._player_id is None else self._player_id

    def restart_at(self, state: pyspiel.State) -> None:
        self.agent.reset()

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        """Nothing to do: the agent reads everything from its next observation."""

    def provides_policy(self) -> bool:
        return False

    def step(self, state: pyspiel.State) -> int:
        seat = state.current_player()
        if self._player_id is not None and seat != self._player_id:
            raise ValueError(f"this bot plays seat {self._player_id}, but seat {seat} is to act")
        mask = np.zeros(state.get_game().num_distinct_actions(), np.int8)  # the variant's 2T + 2
        mask[state.legal_actions()] = 1
        observation: Observation = {
            "observation": np.asarray(state.observation_tensor(seat), np.float32),
            "action_mask": mask,
        }
        return int(self.agent.act(observation))

