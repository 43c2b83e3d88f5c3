"""The agent protocol and the helpers every agent uses to read its observation.

An agent sees exactly what the environment gives the player it sits for: the observation dict
``{"observation": float32 (258,), "action_mask": int8 (58,)}``. It never touches the
environment or the rules state. The helpers here decode the public-contract blocks of the
vector (hand, line, open ends, seats in play) into the bitmasks of :mod:`draw_env.tiles`.

A variant's set of ``T`` tiles gives masks of ``2T + 2`` entries: the helpers read the set from
the mask's length (:func:`tile_set_of`), so the agents built on them play every set.

An environment made with ``obs_type="information_state"`` gives the observation followed by the
player's deal and the hand's actions (:func:`draw_env.observation.information_layout`). The agents
here read the observation alone: :class:`BaseAgent` hands every subclass's :meth:`act` and
:meth:`action_probabilities` the observation an information state holds (:func:`observation_of`),
unless the class says it reads information states itself (:attr:`BaseAgent.reads_information_state`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import random
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

import numpy as np

from draw_env import tiles
from draw_env.checks import check_seed
from draw_env.observation import SEATS, Layout, layout, observe_state
from draw_env.rules import NUM_ACTIONS, DrawGame, DrawState, PlayerView
from draw_env.tiles import NUM_TILES, TileSet

#: Action ids below this place a tile (``2 * tile + end``); 56 draws, 57 passes (the seeds' set;
#: a set of ``T`` tiles places below ``2T``).
FIRST_NON_PLACEMENT = 2 * NUM_TILES

Observation = dict[str, np.ndarray]

#: The set of each action count ``2T + 2``.
_SET_OF_ACTIONS: dict[int, TileSet] = {
    2 * tile_set.num_tiles + 2: tile_set
    for tile_set in (tiles.tile_set(max_pip) for max_pip in range(tiles.MIN_PIP, tiles.MAX_PIP + 1))
}


def tile_set_of(observation: Observation) -> TileSet:
    """The set a game is played with, read from the length of its action mask (``2T + 2``).

    Raises:
        ValueError: if the mask's length is no set's.
    """
    size = np.shape(observation["action_mask"])
    tile_set = _SET_OF_ACTIONS.get(size[0]) if len(size) == 1 else None
    if tile_set is None:
        counts = ", ".join(str(count) for count in _SET_OF_ACTIONS)
        raise ValueError(f"observation['action_mask'] must have one of the lengths {counts} (2T + 2), got shape {size}")
    return tile_set


def tile_set_of_masks(masks: np.ndarray) -> TileSet:
    """:func:`tile_set_of` for a batch: the set of games whose masks are ``(N, 2T + 2)``.

    Raises:
        ValueError: if ``masks`` is not 2-D or its width is no set's.
    """
    size = np.shape(masks)
    tile_set = _SET_OF_ACTIONS.get(size[1]) if len(size) == 2 else None
    if tile_set is None:
        counts = ", ".join(str(count) for count in _SET_OF_ACTIONS)
        raise ValueError(f"masks must have shape (N, A) with A one of {counts} (2T + 2), got {size}")
    return tile_set


@functools.cache
def _layout_of(tile_set: TileSet) -> Layout:
    # Where the blocks start depends on the set only (protected tiles change bounds, not offsets).
    return layout(DrawGame(2, tile_set.max_pip, hand_size=1, protected=0))


def is_information_state(vector_size: int, num_actions: int) -> bool:
    """Whether a vector of ``vector_size`` entries, beside a mask of ``num_actions = 2T + 2``, has an
    information state's shape: the set's observation, then ``drawn_at`` (``T`` entries) and at least
    one ``events`` entry (an observation is exactly the observation's length)."""
    tile_set = _SET_OF_ACTIONS.get(num_actions)
    if tile_set is None:
        return False
    return vector_size - _layout_of(tile_set).size - tile_set.num_tiles > 0


def observation_of(observation: Observation) -> Observation:
    """The observation an information state holds: the dict with its vector cut to the
    observation's length (the information state's prefix is exactly the observation). Any other
    dict (an observation, or something malformed for the agent to refuse) is returned as it is."""
    vector, mask = observation.get("observation"), observation.get("action_mask")
    if vector is None or mask is None or np.ndim(vector) != 1 or np.ndim(mask) != 1:
        return observation
    size, actions = np.shape(vector)[0], np.shape(mask)[0]
    if not is_information_state(size, actions):
        return observation
    return {**observation, "observation": np.asarray(vector)[: _layout_of(_SET_OF_ACTIONS[actions]).size]}


def obs_type_of(agent: object) -> str:
    """What ``agent`` (a one-game agent or a batch actor) reads: its ``obs_type`` where it has one
    (a network or ``tabular``: what its file records), else ``"observation"``."""
    obs_type = getattr(agent, "obs_type", "observation")
    return obs_type if isinstance(obs_type, str) else "observation"


def observation_for(agent: object, observation: Observation) -> Observation:
    """What ``agent`` is given of ``observation``: the whole dict if the agent reads information
    states (:func:`obs_type_of`), else the observation it holds (:func:`observation_of`). Where a
    table gives information states, agents of observations sit at it through this."""
    return observation if obs_type_of(agent) == "information_state" else observation_of(observation)


def observations_for(agent: object, vectors: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """:func:`observation_for` for a batch: ``vectors`` ``(N, L)`` cut to the observation's length
    where they are information states and ``agent`` reads observations."""
    if obs_type_of(agent) == "information_state" or np.ndim(vectors) != 2 or np.ndim(masks) != 2:
        return vectors
    actions = np.shape(masks)[1]
    if not is_information_state(np.shape(vectors)[1], actions):
        return vectors
    return vectors[:, : _layout_of(_SET_OF_ACTIONS[actions]).size]


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _on_observation(method: _Method) -> _Method:
    """``method(self, observation, ...)`` given :func:`observation_of` ``observation``."""

    @functools.wraps(method)
    def reading_observation(self: Any, observation: Observation, *args: Any, **kwargs: Any) -> Any:
        return method(self, observation_of(observation), *args, **kwargs)

    reading_observation.__wrapped_for_observation__ = True  # type: ignore[attr-defined]
    return reading_observation  # type: ignore[return-value]


@runtime_checkable
class Agent(Protocol):
    """What the evaluator and the training code expect of a player.

    Attributes:
        name: the registry name the agent was made under (``"random"``, ``"ismcts"``...).
    """

    name: str

    def act(self, observation: Observation) -> int:
        """A legal action id (0..57) for the acting player, chosen from ``observation`` only.

        Args:
            observation: ``{"observation": float32 (258,), "action_mask": int8 (58,)}`` exactly as
                the environment returns it; the mask has at least one 1.
        """
        ...

    def reset(self) -> None:
        """Forget anything carried between decisions; called at the start of a hand or match."""
        ...

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        """float64 over the mask's actions, zero on illegal ones, summing to 1: the distribution
        :meth:`act` samples from (a one-hot for an agent that plays one action; docs/agents.md
        says what each agent gives)."""
        ...


class BaseAgent:
    """Shared plumbing: a name, a no-op :meth:`reset`, a readable ``repr``, and the observation of
    an information state.

    Attributes:
        reads_information_state: ``False`` (the default): the agent reads the observation, and an
            information state reaches the :meth:`act` and :meth:`action_probabilities` of every
            subclass as the observation it holds (:func:`observation_of`), whatever the
            environment's ``obs_type``. ``True``: the agent takes the vector whole and checks
            which ``obs_type`` it is given (the network and ``tabular`` agents, whose files say
            which they read).
    """

    name = "base"
    reads_information_state: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.reads_information_state:
            return
        for name in ("act", "action_probabilities"):
            method = cls.__dict__.get(name)
            if callable(method) and not getattr(method, "__wrapped_for_observation__", False):
                setattr(cls, name, _on_observation(method))

    def reset(self) -> None:
        """Nothing to forget by default."""

    def act(self, observation: Observation) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class SeededAgent(BaseAgent):
    """An agent that draws random numbers from its own seeded :class:`random.Random`.

    Args:
        seed: ``None`` for fresh entropy; a non-negative integer makes every decision reproducible.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.seed = check_seed("seed", seed)
        self.rng = random.Random(self.seed)


class DeterministicAgent(BaseAgent):
    """An agent whose decisions depend on the observation only.

    Args:
        seed: accepted and ignored, so that callers may pass a seed to every agent alike.
    """

    def __init__(self, seed: int | None = None) -> None:
        check_seed("seed", seed)

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        """A one-hot on the action :meth:`act` plays."""
        return one_hot(observation, self.act(observation))


class ValueSearchAgent(SeededAgent):
    """A seeded agent that searches each decision and plays the action of the best value.

    Subclasses give :meth:`action_values` (each searched action's value) and may narrow
    :meth:`searched_actions` (default: every legal action). The move is the searched action of
    the best value, ties to the lowest action id; a lone searched action is played unsearched.
    """

    def searched_actions(self, observation: Observation) -> list[int]:
        """The actions the search values, in increasing id order: the legal ones."""
        return legal_actions(observation)

    def action_values(self, view: PlayerView | Observation) -> dict[int, float]:  # pragma: no cover - abstract
        """Search from ``view`` (a view of the player to act, or its observation dict) and return
        each searched action's value."""
        raise NotImplementedError

    def act(self, observation: Observation) -> int:
        actions = self.searched_actions(observation)
        if len(actions) == 1:
            return actions[0]
        values = self.action_values(observation)
        return max(actions, key=lambda action: (values[action], -action))

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        """A one-hot on the action :meth:`act` plays when its search is seeded from the observation
        and the agent's seed (:func:`seeded_from`): the same observation always gives the same
        answer (with a time budget, only while the agent's count budget binds first)."""
        with seeded_from(observation, self.seed, self.rng):
            return one_hot(observation, self.act(observation))


#: Zero-sum hand points per unit of a search's values (the ISMCTS agents' and PIMC's): typical
#: hands end within about +-40 points, so values stay mostly within [-1, 1].
SEARCH_VALUE_UNIT = 40.0


def one_hot(observation: Observation, action: int) -> np.ndarray:
    """float64 over the mask's actions: 1 at ``action``."""
    probabilities = np.zeros(np.shape(observation["action_mask"])[0])
    probabilities[action] = 1.0
    return probabilities


def observation_seed(observation: Observation, seed: int | None) -> int:
    """A 63-bit seed from the observation's bytes (vector as float32, mask as int8) and ``seed``:
    the same observation and agent seed always give the same number."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(np.ascontiguousarray(observation["observation"], np.float32).tobytes())
    digest.update(np.ascontiguousarray(observation["action_mask"], np.int8).tobytes())
    digest.update(repr(seed).encode())
    return int.from_bytes(digest.digest(), "little") >> 1


@contextlib.contextmanager
def seeded_from(
    observation: Observation, seed: int | None, rng: random.Random, *numpy_rngs: np.random.RandomState
) -> Iterator[None]:
    """Reseed ``rng`` (and ``numpy_rngs``) in place from :func:`observation_seed` for the block,
    then put their states back: a search inside gives the same answer for the same observation
    and leaves the agent's own sequence of decisions as it was. In place, so that generators a
    search holds by reference (a bound ``rng.random``) are reseeded too."""
    states = rng.getstate(), [numpy_rng.get_state() for numpy_rng in numpy_rngs]
    derived = observation_seed(observation, seed)
    rng.seed(derived)
    for numpy_rng in numpy_rngs:
        numpy_rng.seed(derived % 2**32)
    try:
        yield
    finally:
        rng.setstate(states[0])
        for numpy_rng, state in zip(numpy_rngs, states[1], strict=True):
            numpy_rng.set_state(state)


def uniform_over(observation: Observation, actions: list[int]) -> np.ndarray:
    """float64 over the mask's actions: equal on ``actions``."""
    probabilities = np.zeros(np.shape(observation["action_mask"])[0])
    probabilities[actions] = 1.0 / len(actions)
    return probabilities


def legal_actions(observation: Observation) -> list[int]:
    """The legal action ids, ascending, read from the action mask.

    Raises:
        ValueError: if the mask is not ``2T + 2`` entries long (58 for the seeds' set) or allows
            nothing (the agent is not to act).
    """
    mask = np.asarray(observation["action_mask"])
    if mask.shape != (NUM_ACTIONS,):
        tile_set_of(observation)  # a variant's mask is fine; anything else raises
    actions = np.flatnonzero(mask).tolist()
    if not actions:
        raise ValueError("observation['action_mask'] is all zeros: this agent is not the one to act")
    return actions


def hand_mask(vector: np.ndarray, tile_set: TileSet = tiles.DOUBLE_SIX) -> int:
    """The observer's hand as a tile bitmask, from the observation vector (shape (258,) for the
    seeds' set; its first ``T`` entries for ``tile_set``'s)."""
    bits = 0
    for tile in np.flatnonzero(vector[: tile_set.num_tiles]).tolist():
        bits |= 1 << tile
    return bits


def open_ends(vector: np.ndarray, tile_set: TileSet = tiles.DOUBLE_SIX) -> tuple[int, int] | None:
    """The open values ``(left, right)``, or ``None`` while the line is empty."""
    offsets, values = _layout_of(tile_set).offsets, tile_set.num_values
    left = np.flatnonzero(vector[offsets["left_end"] : offsets["left_end"] + values])
    if left.size == 0:
        return None
    right = np.flatnonzero(vector[offsets["right_end"] : offsets["right_end"] + values])
    return int(left[0]), int(right[0])


def num_players(vector: np.ndarray, tile_set: TileSet = tiles.DOUBLE_SIX) -> int:
    """How many seats are in play (2, 3 or 4), from the ``in_play`` block."""
    start = _layout_of(tile_set).offsets["in_play"]
    return round(float(vector[start : start + SEATS].sum()))


def observe(state: DrawState, player: int, match: bool = False) -> Observation:
    """The observation dict the environment would give ``player`` in ``state``.

    For tests and analysis tools that hold a rules state: the vector comes from
    :func:`draw_env.observation.observe_state`, and the mask is the legal actions when
    ``player`` is to act, else all zeros.
    """
    mask = np.zeros(state.game.num_actions, np.int8)
    if state.result is None and state.current == player:
        mask[state.legal_actions()] = 1
    return {"observation": observe_state(state, player, match), "action_mask": mask}
