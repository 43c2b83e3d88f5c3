"""Baseline agents that choose for many games at once, from arrays of observations and masks.

The batched environment (:class:`draw_env.vector.DrawVectorEnv`) gives the observation of the
player to act in every game as one ``(N, 258)`` array and the masks as ``(N, 58)``. Agents that
implement :class:`BatchAgent` answer for all ``N`` games with NumPy array operations (one call
per step, no Python loop over games): the batched evaluation and the learner's vectorised
opponents use them, through :func:`batch_actor`. The registry (:class:`agents.AgentEntry`) names
each agent's batched version.

``heaviest`` and ``variety`` choose exactly as their one-game versions in
:mod:`agents.baselines` (the tests compare them on many positions). ``random`` and
``random_forced`` choose from the same distributions, drawn from a NumPy generator, so their
games differ from the one-game agents' games under the same seed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

import agents
from agents.base import Agent, obs_type_of
from agents.policy_network import NetworkAgent, NumpyPolicy
from draw_env.checks import check_seed
from draw_env.observation import OFFSETS
from draw_env.rules import NUM_ACTIONS
from draw_env.tiles import NUM_TILES, NUM_VALUES, PIPS, TILES

#: Action ids below this place a tile; 56 draws, 57 passes.
_PLACEMENTS = 2 * NUM_TILES
_HAND = slice(OFFSETS["hand"], OFFSETS["hand"] + NUM_TILES)
_LEFT_END = slice(OFFSETS["left_end"], OFFSETS["left_end"] + NUM_VALUES)
_RIGHT_END = slice(OFFSETS["right_end"], OFFSETS["right_end"] + NUM_VALUES)

_ACTION_TILE = np.arange(_PLACEMENTS) >> 1
_ACTION_END = np.arange(_PLACEMENTS) & 1
_ACTION_PIPS = np.array(PIPS, np.int64)[_ACTION_TILE]
#: ``_SHOWS[t, v]``: tile ``t`` carries value ``v`` on a half.
_SHOWS = np.zeros((NUM_TILES, NUM_VALUES), np.float32)
#: ``_OTHER[v, t]``: the other half of tile ``t`` when its half ``v`` is joined (-1: no such half).
_OTHER = np.full((NUM_VALUES, NUM_TILES), -1, np.int64)
for _tile, (_low, _high) in enumerate(TILES):
    _SHOWS[_tile, _low] = _SHOWS[_tile, _high] = 1
    _OTHER[_low, _tile] = _high
    _OTHER[_high, _tile] = _low
_TILE_LOW = np.array([low for low, _ in TILES], np.int64)
_TILE_HIGH = np.array([high for _, high in TILES], np.int64)


@runtime_checkable
class BatchAgent(Protocol):
    """An agent that chooses for a batch of games at once.

    Attributes:
        name: the registry name of the one-game agent it stands for.
    """

    name: str

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Legal actions ``int64 (N,)`` for observations ``(N, 258)`` and masks ``(N, 58)``.

        Every row of ``masks`` must allow at least one action.
        """
        ...


def _checked_masks(masks: np.ndarray) -> np.ndarray:
    masks = np.asarray(masks)
    if masks.ndim != 2 or masks.shape[1] != NUM_ACTIONS:
        raise ValueError(f"masks must have shape (N, {NUM_ACTIONS}), got {masks.shape}")
    empty = np.flatnonzero(~masks.any(axis=1))
    if empty.size:
        raise ValueError(f"masks allow no action in rows {empty[:10].tolist()}: no player is to act there")
    return masks.astype(bool, copy=False)


def _forced(masks: np.ndarray) -> np.ndarray:
    """The one legal non-placement of each row (draw if legal, else pass)."""
    return np.where(masks[:, NUM_ACTIONS - 2], NUM_ACTIONS - 2, NUM_ACTIONS - 1)


def _best_placement(masks: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Per row, the legal placement with the largest key, or the forced move where none is legal.

    ``keys`` ``(N, 56)`` must be distinct within a row (they end in ``-action``), non-negative.
    """
    placements = masks[:, :_PLACEMENTS]
    scored = np.where(placements, keys, -1)
    best = scored.argmax(axis=1)
    return np.where(placements.any(axis=1), best, _forced(masks))


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
        return self._uniform(_checked_masks(masks))


class RandomForcedBatch(_SampledBatch):
    """``random_forced``: uniform over the legal placements; draws or passes only when it must."""

    name = "random_forced"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = _checked_masks(masks)
        placements = masks.copy()
        can_place = masks[:, :_PLACEMENTS].any(axis=1)
        placements[can_place, _PLACEMENTS:] = False
        return self._uniform(placements)


class HeaviestBatch:
    """``heaviest``: the highest-pip playable tile (ties: lowest action id); draws only when it must."""

    name = "heaviest"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        keys = _ACTION_PIPS * 64 + (63 - np.arange(_PLACEMENTS))
        return _best_placement(_checked_masks(masks), np.broadcast_to(keys, (len(masks), _PLACEMENTS)))


class VarietyBatch:
    """``variety``: keeps the hand flexible (see :class:`agents.baselines.VarietyAgent`).

    The key of placement ``a`` is, lexicographically: distinct values left in hand, open ends the
    remaining hand can answer (0-2), pips of the tile placed, then ``-a``.
    """

    name = "variety"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = _checked_masks(masks)
        observations = np.asarray(observations)
        rows = np.arange(len(masks))[:, None]
        hand = observations[:, _HAND] > 0.5  # (N, 28)
        # The hand left after each placement: (N, 56, 28).
        remaining = np.repeat(hand[:, None, :], _PLACEMENTS, axis=1)
        remaining[:, np.arange(_PLACEMENTS), _ACTION_TILE] = False
        values_left: np.ndarray = np.matmul(remaining.astype(np.float32), _SHOWS) > 0  # (N, 56, 7)
        distinct = values_left.sum(axis=2)
        empty_line = np.logical_not(observations[:, _LEFT_END].any(axis=1))
        left = observations[:, _LEFT_END].argmax(axis=1)[:, None]
        right = observations[:, _RIGHT_END].argmax(axis=1)[:, None]
        joined_left = _OTHER[left, _ACTION_TILE]  # (N, 56): new left value when placed left
        joined_right = _OTHER[right, _ACTION_TILE]
        new_left = np.where(_ACTION_END == 0, joined_left, left)
        new_right = np.where(_ACTION_END == 1, joined_right, right)
        new_left = np.where(empty_line[:, None], _TILE_LOW[_ACTION_TILE], new_left)
        new_right = np.where(empty_line[:, None], _TILE_HIGH[_ACTION_TILE], new_right)
        # Illegal placements can give -1 here; their keys are masked out, so any index will do.
        new_left = np.maximum(new_left, 0)
        new_right = np.maximum(new_right, 0)
        placements = np.arange(_PLACEMENTS)[None, :]
        answerable = values_left[rows, placements, new_left].astype(np.int64) + values_left[
            rows, placements, new_right
        ].astype(np.int64)
        keys = ((distinct * 3 + answerable) * 13 + _ACTION_PIPS) * 64 + (63 - placements)
        return _best_placement(masks, keys)


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
