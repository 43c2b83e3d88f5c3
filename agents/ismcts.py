"""Information-set Monte Carlo tree search (single-observer ISMCTS) over the rules core.

The search works on *determinizations*: full states dealt at random from what the player knows.
For each one, every legal root action gets one simulation:

1. **Determinize.** Rebuild the player's information set from its observation
   (:func:`draw_env.observation.view_from_observation`) and deal the tiles it cannot see at
   random, consistently with every opponent's hand size and the values each opponent showed it
   lacks by passing (:meth:`draw_env.rules.PlayerView.sample_state`). The boneyard order is
   random too.
2. **Pair the root actions.** Each root action is played on its own copy of the same
   determinization, and what follows draws the same random numbers. The luck of the deal, by
   far the largest source of noise in a hand's outcome, is then shared by all root actions and
   cancels out when they are compared.
3. **Select and expand below the root.** Walk one tree, shared by all determinizations, whose
   nodes are the searching player's information sets: an edge is an action; the searcher's own
   draws branch further on the tile drawn (the searcher sees it), opponents' draws do not (it
   does not). At each node, only the actions legal in this determinization compete, by UCB1
   with *availability* counts (Cowling, Powley and Whitehouse, 2012): a child's exploration
   term uses how often it was legal, not how often its parent was visited. The first action of
   a node not yet tried is added and the walk stops.
4. **Roll out.** Finish the hand with a cheap policy for every seat: place the heaviest
   playable tile, or with probability ``rollout_randomness`` a uniformly random playable one;
   draw or pass only when no tile fits.
5. **Back up.** Every seat's zero-sum hand points (its points minus the mean of the others'),
   divided by :data:`REWARD_SCALE`, are added to the nodes along the path, each node keeping
   the value of the seat that moved into it (so each opponent is modelled as playing for
   itself, which is right for 2 to 4 players each for themselves).

The agent plays the root action with the best mean value. In match mode it still maximises
the hand's points: the score and target blocks are not used.
"""

from __future__ import annotations

import math
import os
import random
import time

import numpy as np

from agents.base import SEARCH_VALUE_UNIT, Observation, ValueSearchAgent, num_players
from agents.compiled_search.weights import DEFAULT_CANDIDATES, MAX_CANDIDATES, load_location_model
from draw_env.checks import check_int, check_number
from draw_env.observation import OBSERVATION_SIZE, view_from_observation
from draw_env.rules import DRAW, NUM_ACTIONS, PROTECTED_BONEYARD, DrawState, PlayerView
from draw_env.tiles import MAX_PIP, PIPS, tile_set

#: Default number of simulations per decision of the pure-Python search (docs/agents.md gives
#: the time it takes).
DEFAULT_SIMULATIONS = 200

#: The most simulations a search takes per decision (any search agent: ``ismcts``, ``ismcts_python``,
#: ``ppo_search``, OpenSpiel's bots), and where a search with a ``seconds`` budget stops at the latest,
#: so that its tree is bounded too: the compiled tree adds at most three nodes a simulation, of 257
#: bytes in the seeds' set (473 in double-nine), so it stays within 3,000,000 nodes and about 0.8 GB
#: (1.4 GB in double-nine).
MAX_SIMULATIONS = 1_000_000
#: The longest wall-clock budget per decision (``seconds``), an hour.
MAX_SECONDS = 3600.0
#: The most protected boneyard tiles an agent is told of: every tile of the largest set.
MAX_PROTECTED = tile_set(MAX_PIP).num_tiles

#: Zero-sum hand points are divided by this before UCB sees them (the searches' value unit,
#: declared in the agent registry).
REWARD_SCALE = SEARCH_VALUE_UNIT


class SearchAgent(ValueSearchAgent):
    """What both ISMCTS agents share: their settings, checked, and their move.

    The move is the root action with the best mean value (every root action is tried equally
    often); ties go to the lowest action id. Subclasses search in :meth:`action_values`.

    Args:
        simulations: determinized simulations per decision (1 to :data:`MAX_SIMULATIONS`), spent in whole
            determinizations (rounded up to a multiple of the legal actions). Default
            :attr:`default_simulations` when ``seconds`` is not given either.
        seconds: a wall-clock budget per decision (> 0, at most :data:`MAX_SECONDS`). With both
            budgets, the search stops at whichever runs out first; with ``seconds`` alone, at
            :data:`MAX_SIMULATIONS` simulations at the latest. A time budget makes play depend on machine speed, so
            it is reproducible from the seed only when ``simulations`` binds first.
        exploration: the UCB1 constant ``c`` in ``mean + c * sqrt(ln(available) / visits)``.
        rollout_randomness: probability that a rollout move is a uniformly random placement
            instead of the heaviest one, in 0..1.
        seed: seeds every decision's search; ``None`` for fresh entropy.
        protected: the variant's protected boneyard tiles, which an observation does not always
            show (``None``: read from the observation when it can be, else guessed; docs/agents.md).
            A search that plays only the seeds' game (:attr:`seeds_game_only`) takes ``None`` or 2.
        inference: a hidden-tile model file that weights the determinizations by where it says the
            hidden tiles lie (:func:`agents.compiled_search.weights.load_location_model`, read once
            here), or ``None`` for the uniform deals. A search that deals only uniformly
            (:attr:`weighted_deals` False) takes ``None``.
        candidates: deals drawn per determinization, one of them kept in proportion to the model's
            weight (1 to :data:`~agents.compiled_search.weights.MAX_CANDIDATES`; 1, or no model: the
            uniform deals).

    Raises:
        ValueError: if an argument is out of range (the message names it and the allowed values)
            or the ``inference`` file is not a model (naming it).
    """

    #: Simulations per decision when neither budget is given.
    default_simulations = DEFAULT_SIMULATIONS
    #: The search reads only the seeds' game (its ``protected`` can only be theirs).
    seeds_game_only = False
    #: The search can weight its deals by a hidden-tile model (``inference``).
    weighted_deals = True

    def __init__(
        self,
        simulations: int | None = None,
        seconds: float | None = None,
        exploration: float = 1.0,
        rollout_randomness: float = 0.25,
        seed: int | None = None,
        protected: int | None = None,
        inference: str | os.PathLike[str] | None = None,
        candidates: int = DEFAULT_CANDIDATES,
    ) -> None:
        super().__init__(seed)
        if simulations is None and seconds is None:
            simulations = self.default_simulations
        self.simulations = (
            None if simulations is None else check_int("simulations", simulations, minimum=1, maximum=MAX_SIMULATIONS)
        )
        self.seconds = None if seconds is None else check_number("seconds", seconds, minimum=0, maximum=MAX_SECONDS,
                                                                 exclusive_minimum=True)
        self.exploration = check_number("exploration", exploration, minimum=0)
        self.rollout_randomness = check_number("rollout_randomness", rollout_randomness, minimum=0, maximum=1)
        self.protected = None if protected is None else check_int("protected", protected, minimum=0,
                                                                  maximum=MAX_PROTECTED)
        if self.seeds_game_only and self.protected not in (None, PROTECTED_BONEYARD):
            raise ValueError(
                f"protected must be None or {PROTECTED_BONEYARD} (the seeds' game: this search plays no "
                f"other), got {protected}; the compiled 'ismcts' plays every variant"
            )
        self.candidates = check_int("candidates", candidates, minimum=1, maximum=MAX_CANDIDATES)
        if inference is not None and not self.weighted_deals:
            raise ValueError(
                f"inference must be None (this search deals uniformly), got {inference!r}; the compiled "
                "'ismcts' weights its deals by a hidden-tile model"
            )
        #: The model's file, named by errors at a decision (a model of another game).
        self.inference = inference
        self.model = None if inference is None else load_location_model(inference)

    def action_values(self, view: PlayerView | Observation) -> dict[int, float]:  # pragma: no cover - abstract
        """Search from ``view`` (a view of the player to act, or its observation dict) and return
        each legal root action's mean backed-up value: zero-sum hand points / :data:`REWARD_SCALE`."""
        raise NotImplementedError


class _Node:
    """One information set of the searcher in the tree (or, below a searcher's draw, the tile).

    Attributes:
        children: action id -> child; below a searcher's own draw node, tile drawn -> child.
        visits: simulations that passed through this node.
        total: sum of the backed-up rewards of the seat that moved into this node.
        available: simulations in which this node's action was legal at its parent.
    """

    __slots__ = ("children", "visits", "total", "available")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.total = 0.0
        self.available = 0


class ISMCTSAgent(SearchAgent):
    """Single-observer ISMCTS with paired root actions and heaviest-first rollouts, in pure Python
    (``agents.make("ismcts_python")``); the arguments are :class:`SearchAgent`'s. It plays only
    the seeds' game and deals only uniformly (the compiled
    :class:`agents.ismcts_compiled.CompiledISMCTSAgent` plays every variant and weights its deals
    by a hidden-tile model)."""

    name = "ismcts"
    seeds_game_only = True
    weighted_deals = False

    def action_values(self, view: PlayerView | Observation) -> dict[int, float]:
        """Search from ``view`` and return each legal root action's mean backed-up value.

        Values are the searcher's zero-sum hand points divided by :data:`REWARD_SCALE`.
        """
        if not isinstance(view, PlayerView):
            vector, mask = np.asarray(view["observation"]), np.asarray(view["action_mask"])
            if vector.shape != (OBSERVATION_SIZE,) or mask.shape != (NUM_ACTIONS,):
                raise ValueError(
                    f"ismcts_python plays only the seeds' game (the double-six set): this observation of length "
                    f"{vector.size} with {mask.size} actions is of another set; the compiled 'ismcts' plays every variant"
                )
            view = view_from_observation(vector, num_players(vector))
        return {action: child.total / child.visits for action, child in self.search(view).children.items()}

    def search(self, view: PlayerView) -> _Node:
        """Run the simulations from ``view`` (observer = seat 0) and return the root node.

        The budget is spent in whole determinizations (one simulation per root action each),
        so ``simulations`` is rounded up to a multiple of the number of legal actions, and
        at least one determinization is always searched. A ``seconds`` budget alone stops at
        :data:`MAX_SIMULATIONS` too.
        """
        rng = self.rng
        root = _Node()
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        limit = MAX_SIMULATIONS if self.simulations is None else self.simulations
        done = 0
        while done == 0 or (done < limit and (deadline is None or time.perf_counter() < deadline)):
            world = view.sample_state(rng)
            shared_seed = rng.getrandbits(64)
            # The root actions are the searcher's own legal moves: the same in every world.
            for action in world.legal_actions():
                self._simulate(root, world.clone(), action, random.Random(shared_seed))
                done += 1
        return root

    def _simulate(self, root: _Node, state: DrawState, root_action: int, rng: random.Random) -> None:
        """One pass on the determinization ``state``, starting with ``root_action``.

        Select, expand, roll out and back up, drawing every random number from ``rng``.
        """
        exploration = self.exploration
        node = root
        action = root_action
        path: list[tuple[_Node, int]] = []  # (node, seat that moved into it)
        while True:
            mover = state.current
            child = node.children.get(action)
            expanded = child is None
            if child is None:
                child = node.children[action] = _Node()
                child.available = 1
            path.append((child, mover))
            node = child
            if action == DRAW and mover == 0:
                # The searcher sees what it draws: its later choices hang below that tile.
                drawn = state.boneyard[0]
                outcome = node.children.get(drawn)
                if outcome is None:
                    outcome = node.children[drawn] = _Node()
                node = outcome
            state.apply_action(action)
            if expanded or state.result is not None:
                break
            # Select: an untried legal action if there is one, else the best UCB1 score.
            children = node.children
            untried = []
            best_score = -math.inf
            for legal in state.legal_actions():
                candidate = children.get(legal)
                if candidate is None:
                    untried.append(legal)
                    continue
                candidate.available += 1
                score = candidate.total / candidate.visits + exploration * math.sqrt(
                    math.log(candidate.available) / candidate.visits
                )
                if score > best_score:
                    best_score, action = score, legal
            if untried:
                action = untried[0] if len(untried) == 1 else rng.choice(untried)
        rewards = self._rollout(state, rng)
        for visited, seat in path:
            visited.visits += 1
            visited.total += rewards[seat]

    def _rollout(self, state: DrawState, rng: random.Random) -> list[float]:
        """Finish the hand with the rollout policy; each seat's scaled zero-sum hand points."""
        randomness = self.rollout_randomness
        while state.result is None:
            legal = state.legal_actions()
            if legal[0] >= DRAW:  # nothing fits: draw, or pass once drawing is over
                state.apply_action(legal[0])
                continue
            if legal[-1] == DRAW:  # rollouts never draw by choice
                legal.pop()
            if len(legal) > 1 and rng.random() < randomness:
                state.apply_action(rng.choice(legal))
                continue
            best = legal[0]
            best_pips = PIPS[best >> 1]
            for action in legal:
                if PIPS[action >> 1] > best_pips:
                    best, best_pips = action, PIPS[action >> 1]
            state.apply_action(best)
        return [points / REWARD_SCALE for points in state.result.zero_sum]
