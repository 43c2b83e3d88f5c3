"""Baseline agents that choose for many games at once, from arrays of observations and masks.

The batched environment (:class:`draw_env.vector.DrawVectorEnv`) gives the observation of the
player to act in every game as one ``(N, 258)`` array and the masks as ``(N, 58)``. Agents that
implement :class:`BatchAgent` answer for all ``N`` games with NumPy array operations (one call
per step, no Python loop over games): the batched evaluation and the learner's vectorised
opponents use them, through :func:`batch_actor`. The registry (:class:`agents.AgentEntry`) names
each agent's batched version.

The baselines here play every variant's set, read from the masks' width ``2T + 2``
(:func:`agents.base.tile_set_of_masks`); the arrays each set needs are built once per set
(:func:`_arrays_of`). Observations may be longer than the set's observation (an information
state): only the observation's blocks are read.

``heaviest`` and ``variety`` choose exactly as their one-game versions in
:mod:`agents.baselines` (the tests compare them on many positions). ``random`` and
``random_forced`` choose from the same distributions, drawn from a NumPy generator, so their
games differ from the one-game agents' games under the same seed. All four give, in
``action_probabilities_batch``, exactly the probabilities their one-game versions give one
observation at a time (the one-game agents answer batches through them).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

import agents
from agents.base import Agent, _layout_of, obs_type_of, observation_seed, tile_set_of_masks
from agents.policy_network import NetworkAgent, NumpyPolicy
from draw_env.checks import check_seed
from draw_env.tiles import TileSet


@dataclass(frozen=True)
class _SetArrays:
    """What the batched baselines read of one tile set of ``T`` tiles and ``V`` values.

    Attributes:
        placements: ``2T``, the action ids below it place a tile (``2T`` draws, ``2T + 1`` passes).
        observation_size: the length of the set's observation.
        hand, left_end, right_end: the observation's blocks.
        action_tile, action_end: int64 ``(2T,)``, the tile and end (0 left, 1 right) of each placement.
        action_shows: int64 ``(2T, V)``, 1 where the placement's tile carries the value on a half.
        shows: int64 ``(T, V)``, the same per tile.
        other: int64 ``(V, T)``, the other half of tile ``t`` when its half ``v`` is joined (-1:
            no such half).
        tile_low, tile_high: int64 ``(T,)``, each tile's halves.
        action_pips: int64 ``(2T,)``, the pips of each placement's tile.
        pip_range: ``2 * max_pip + 1``, the number of pip counts a tile may have.
        heaviest_keys: int64 ``(2T,)``, the pips of each placement's tile, then ``-action``
            (larger is better), as one number.
    """

    placements: int
    observation_size: int
    hand: slice
    left_end: slice
    right_end: slice
    action_tile: np.ndarray
    action_end: np.ndarray
    action_shows: np.ndarray
    shows: np.ndarray
    other: np.ndarray
    tile_low: np.ndarray
    tile_high: np.ndarray
    action_pips: np.ndarray
    pip_range: int
    heaviest_keys: np.ndarray


@functools.cache
def _arrays_of(tile_set: TileSet) -> _SetArrays:
    """The arrays of ``tile_set``, built on its first use."""
    layout = _layout_of(tile_set)
    tiles, values = tile_set.num_tiles, tile_set.num_values
    placements = 2 * tiles
    actions = np.arange(placements)
    action_tile = actions >> 1
    shows = np.zeros((tiles, values), np.int64)
    other = np.full((values, tiles), -1, np.int64)
    for tile, (low, high) in enumerate(tile_set.tiles):
        shows[tile, low] = shows[tile, high] = 1
        other[low, tile] = high
        other[high, tile] = low
    pips = np.array(tile_set.pips, np.int64)[action_tile]

    def block(name: str, width: int) -> slice:
        return slice(layout.offsets[name], layout.offsets[name] + width)

    return _SetArrays(
        placements=placements,
        observation_size=layout.size,
        hand=block("hand", tiles),
        left_end=block("left_end", values),
        right_end=block("right_end", values),
        action_tile=action_tile,
        action_end=actions & 1,
        action_shows=shows[action_tile],
        shows=shows,
        other=other,
        tile_low=np.array(tile_set.low, np.int64),
        tile_high=np.array(tile_set.high, np.int64),
        action_pips=pips,
        pip_range=2 * tile_set.max_pip + 1,
        heaviest_keys=pips * placements + (placements - 1 - actions),
    )


@runtime_checkable
class BatchAgent(Protocol):
    """An agent that chooses for a batch of games at once.

    Attributes:
        name: the registry name of the one-game agent it stands for.
    """

    name: str

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Legal actions ``int64 (N,)`` for observations ``(N, L)`` and masks ``(N, 2T + 2)``
        (``(N, 258)`` and ``(N, 58)`` for the seeds' game).

        Every row of ``masks`` must allow at least one action.
        """
        ...


def _checked(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, _SetArrays]:
    """``observations`` and ``masks`` (as booleans) once their shapes fit one set, and that set's arrays.

    Raises:
        ValueError: masks of no set's width or a row that allows nothing; observations that are
            not one row per mask, each at least the set's observation long.
    """
    masks = np.asarray(masks)
    arrays = _arrays_of(tile_set_of_masks(masks))
    empty = np.flatnonzero(~masks.any(axis=1))
    if empty.size:
        raise ValueError(f"masks allow no action in rows {empty[:10].tolist()}: no player is to act there")
    observations = np.asarray(observations)
    if observations.ndim != 2 or len(observations) != len(masks) or observations.shape[1] < arrays.observation_size:
        raise ValueError(
            f"observations must have shape ({len(masks)}, L) with L at least {arrays.observation_size} "
            f"for masks of shape {masks.shape}, got {observations.shape}"
        )
    return observations, masks.astype(bool, copy=False), arrays


def _forced(masks: np.ndarray) -> np.ndarray:
    """The last legal action of each row: where no placement is legal, the one legal draw or pass
    (the one-game agents' :func:`agents.baselines.placements_or_forced`)."""
    actions = masks.shape[1]
    return np.where(masks[:, actions - 1], actions - 1, actions - 2)


def _placements_or_forced(masks: np.ndarray, arrays: _SetArrays) -> np.ndarray:
    """bool ``(N, A)``: the legal placements of each row, or its forced move where none is legal."""
    allowed = masks.copy()
    can_place = masks[:, : arrays.placements].any(axis=1)
    allowed[can_place, arrays.placements :] = False
    cannot = np.flatnonzero(~can_place)
    allowed[cannot] = False
    allowed[cannot, _forced(masks[cannot])] = True
    return allowed


def _best_placement(masks: np.ndarray, keys: np.ndarray, arrays: _SetArrays) -> np.ndarray:
    """Per row, the legal placement with the largest key, or the forced move where none is legal.

    ``keys`` ``(N, 2T)`` (or ``(2T,)`` for every row) must be distinct within a row (they end in
    ``-action``), non-negative.
    """
    placements = masks[:, : arrays.placements]
    scored = np.where(placements, keys, -1)
    best = scored.argmax(axis=1)
    return np.where(placements.any(axis=1), best, _forced(masks))


def _uniform_over(allowed: np.ndarray) -> np.ndarray:
    """float64: equal weight on each row's allowed actions (as :func:`agents.base.uniform_over`)."""
    return allowed / allowed.sum(axis=1, keepdims=True)


def _one_hot(choices: np.ndarray, num_actions: int) -> np.ndarray:
    """float64 ``(N, num_actions)``: 1 at each row's choice."""
    probabilities = np.zeros((len(choices), num_actions))
    probabilities[np.arange(len(choices)), choices] = 1.0
    return probabilities


class _SampledBatch:
    """Uniform choices among a set of allowed actions per row, from a NumPy generator."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(check_seed("seed", seed))

    def _uniform(self, allowed: np.ndarray) -> np.ndarray:
        counts = allowed.sum(axis=1)
        picks = (self.rng.random(len(allowed)) * counts).astype(np.int64)
        # The pick-th allowed action of each row: the first index where the running count passes it.
        return (allowed.cumsum(axis=1) > picks[:, None]).argmax(axis=1)


class RandomBatch(_SampledBatch):
    """``random``: uniform over all legal actions, voluntary draws included."""

    name = "random"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self._uniform(_checked(observations, masks)[1])

    @staticmethod
    def action_probabilities_batch(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float64 ``(N, A)``: uniform over each row's legal actions."""
        return _uniform_over(_checked(observations, masks)[1])


class RandomForcedBatch(_SampledBatch):
    """``random_forced``: uniform over the legal placements; draws or passes only when it must."""

    name = "random_forced"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        _, masks, arrays = _checked(observations, masks)
        return self._uniform(_placements_or_forced(masks, arrays))

    @staticmethod
    def action_probabilities_batch(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float64 ``(N, A)``: uniform over each row's legal placements, or 1 on its forced move."""
        _, masks, arrays = _checked(observations, masks)
        return _uniform_over(_placements_or_forced(masks, arrays))


class HeaviestBatch:
    """``heaviest``: the highest-pip playable tile (ties: lowest action id); draws only when it must."""

    name = "heaviest"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        _, masks, arrays = _checked(observations, masks)
        return _best_placement(masks, arrays.heaviest_keys, arrays)

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float64 ``(N, A)``: 1 on each row's choice."""
        return _one_hot(self.act_batch(observations, masks), np.shape(masks)[1])


class VarietyBatch:
    """``variety``: keeps the hand flexible (see :class:`agents.baselines.VarietyAgent`).

    The key of placement ``a`` is, lexicographically: distinct values left in hand, open ends the
    remaining hand can answer (0-2), pips of the tile placed, then ``-a``.
    """

    name = "variety"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        observations, masks, arrays = _checked(observations, masks)
        hand = (observations[:, arrays.hand] > 0.5).astype(np.int64)  # (N, T)
        # Tiles of the hand carrying each value, then of the hand left after each placement: a
        # legal placement's tile is in the hand, so a value stays while the count stays above 0.
        holding = hand @ arrays.shows  # (N, V)
        values_left = holding[:, None, :] - arrays.action_shows > 0  # (N, 2T, V)
        distinct = values_left.sum(axis=2)
        ends = observations[:, arrays.left_end]
        empty_line = np.logical_not(ends.any(axis=1))
        left = ends.argmax(axis=1)[:, None]
        right = observations[:, arrays.right_end].argmax(axis=1)[:, None]
        tile = arrays.action_tile
        new_left = np.where(arrays.action_end == 0, arrays.other[left, tile], left)  # (N, 2T)
        new_right = np.where(arrays.action_end == 1, arrays.other[right, tile], right)
        new_left = np.where(empty_line[:, None], arrays.tile_low[tile], new_left)
        new_right = np.where(empty_line[:, None], arrays.tile_high[tile], new_right)
        # Placements that do not fit give -1 here; their keys are masked out, so any index will do.
        answerable = np.zeros_like(distinct)
        for end in (new_left, new_right):
            answerable += np.take_along_axis(values_left, np.maximum(end, 0)[:, :, None], axis=2)[:, :, 0]
        last = arrays.placements - 1
        keys = ((distinct * 3 + answerable) * arrays.pip_range + arrays.action_pips) * arrays.placements + (
            last - np.arange(arrays.placements)
        )
        return _best_placement(masks, keys, arrays)

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float64 ``(N, A)``: 1 on each row's choice."""
        return _one_hot(self.act_batch(observations, masks), np.shape(masks)[1])


def make_batched(name: str, seed: int | None = None) -> BatchAgent:
    """The batched version of ``name`` built from a seed alone (given ``seed`` if it takes one).

    Raises:
        ValueError: if ``name`` has no such batched version; the message lists those that do.
    """
    if name not in agents.available() or not _seeded_batch(name):
        have = [other for other in agents.available() if _seeded_batch(other)]
        raise ValueError(f"name must be one of {', '.join(map(repr, have))} for a batched agent, got {name!r}")
    cls = agents.batched_class(name)
    assert cls is not None
    if "seed" in inspect.signature(cls).parameters:
        return cls(seed)
    return cls()


def _seeded_batch(name: str) -> bool:
    """Whether ``name``'s batched version is built from a seed (a network's is built from its agent)."""
    return agents.entry(name).batched is not None and not issubclass(agents.agent_class(name), NetworkAgent)


class OneByOne:
    """A one-game agent asked game by game (for agents without a batched version)."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.name = str(getattr(agent, "name", type(agent).__name__))

    @property
    def obs_type(self) -> str:
        """What its agent reads (:func:`agents.base.obs_type_of`)."""
        return obs_type_of(self.agent)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array(
            [self.agent.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks)], np.int64
        )


class AsMeasured(OneByOne):
    """A one-game agent played as the exact measures read it: each move sampled from its
    ``action_probabilities`` (the docs page "Exploitability"), each observation's answer remembered.

    A search's answer to an observation is then the one its measure asks (seeded from the
    observation, :func:`agents.base.seeded_from`), not the next draw of its own generator, and
    it is searched once: an opponent met again and again (the exploiter's target on a small
    variant) costs a dictionary lookup after the first time. The memory keeps at most
    :attr:`REMEMBERED` answers, keyed by the observation's digest (:func:`agents.base.observation_seed`,
    63 bits of the observation's and mask's bytes).
    """

    REMEMBERED = 1 << 19

    def __init__(self, agent: Agent, seed: int | None = None) -> None:
        super().__init__(agent)
        self.rng = np.random.default_rng(check_seed("seed", seed))
        self.answers: dict[int, int | np.ndarray] = {}

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions = np.empty(len(observations), np.int64)
        for row, (observation, mask) in enumerate(zip(observations, masks)):
            answer = self._answer(observation, mask)
            actions[row] = answer if isinstance(answer, int) else self.rng.choice(len(answer), p=answer)
        return actions

    def _answer(self, observation: np.ndarray, mask: np.ndarray) -> int | np.ndarray:
        """The action where the distribution is one-hot, else the distribution."""
        key = observation_seed({"observation": observation, "action_mask": mask}, None)
        answer = self.answers.get(key)
        if answer is None:
            probabilities = np.asarray(
                self.agent.action_probabilities({"observation": observation, "action_mask": mask}), np.float64
            )
            ones = np.flatnonzero(probabilities == 1.0)
            answer = int(ones[0]) if len(ones) else probabilities / probabilities.sum()
            if len(self.answers) < self.REMEMBERED:
                self.answers[key] = answer
        return answer


#: What :func:`batch_actor` returns: all answer ``act_batch(observations, masks)``.
BatchActor = BatchAgent | NumpyPolicy | OneByOne


def _make_seeded(name: str, kwargs: Mapping[str, Any], seed: int | None) -> Agent:
    """``agents.make`` of the spec, seeded with ``seed`` unless the spec gives a seed."""
    options = dict(kwargs)
    if "seed" in inspect.signature(agents.agent_class(name)).parameters:
        options.setdefault("seed", seed)
    return agents.make(name, **options)


def batch_actor(
    name: str,
    kwargs: Mapping[str, Any],
    num_players: int,
    seed: int | None = None,
    build: Callable[[str, Mapping[str, Any]], Agent] | None = None,
) -> BatchActor:
    """The agent of spec ``(name, kwargs)`` answering for a batch of games at ``num_players``' table.

    A network plays its policy for all its games at once (deterministic or sampling with
    ``seed``, as its agent plays); a spec without keywords whose registry entry has a batched
    version built from a seed plays that (:func:`make_batched`); any other agent is asked game
    by game. The batched evaluation and the learner's opponents both build their players here.

    Args:
        build: builds the one-game agent of a spec (default: ``agents.make``, with ``seed`` given
            to an agent that takes one unless the spec gives its own).

    Raises:
        ValueError: on an unknown agent or keyword, or a bad value.
    """
    if not kwargs and _seeded_batch(name):
        return make_batched(name, seed)
    agent = _make_seeded(name, kwargs, seed) if build is None else build(name, kwargs)
    if isinstance(agent, NetworkAgent):  # its network at this table, deterministic or sampled as it plays
        return agent.policy_for(num_players).playing(agent.deterministic, np.random.default_rng(seed))
    return OneByOne(agent)
