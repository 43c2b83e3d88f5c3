"""A policy network as an agent, and the NumPy network that plays it.

``agents.make("network")`` plays the shipped policy for the table's player count
(``agents/policies/ppo_{2,3,4}p.npz``, loaded on first use, one per count);
``agents.make("network", path=...)`` plays one policy file (``.npz`` + ``.json``) or ``draw-train``
checkpoint (``.zip``), read without running code (:mod:`agents.policy_file`, :mod:`agents.sb3_checkpoint`; the files and how
they load: ``docs/agents.md``). A file trained for another player count than the table's is
refused, and so is a vector of the other ``obs_type`` than the file records (observations or
information states: :mod:`agents.inputs`). ``ppo`` is another name of the same agent (:data:`NAMES`). Play runs on NumPy: one small
matrix product per layer, much faster than a torch call for a single observation, and the same
code serves the opponents inside training workers. Training runs the same network as a torch
module, :class:`train.network.PolicyValueNetwork`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import BaseAgent, Observation, legal_actions, num_players, tile_set_of
from agents.inputs import DEFAULT_OBS_TYPE, OBS_TYPES, encode_inputs, observed_layout
from agents.policy_file import (
    PLAYER_COUNTS,
    PolicyWeights,
    describe_variant,
    load_policy_file,
    save_policy_file,
)
from agents.sb3_checkpoint import read_checkpoint
from draw_env.checks import check_bool, check_choice, check_path, check_seed
from draw_env.rules import DrawGame

POLICY_DIR = Path(__file__).resolve().parent / "policies"
#: The registry names of :class:`NetworkAgent` (``ppo`` too, the name existing specs use).
NAMES = ("network", "ppo")


def shipped_policy(players: int) -> Path:
    """The shipped default policy file for a table of ``players`` (2, 3 or 4)."""
    check_choice("num_players", players, PLAYER_COUNTS)
    return POLICY_DIR / f"ppo_{players}p.npz"


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


_ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"relu": _relu, "tanh": np.tanh}


def _set_of_mask(mask_size: int) -> str:
    """``max_pip=3``: the set whose games have ``mask_size`` actions, for messages."""
    try:
        return f"max_pip={tile_set_of({'action_mask': np.zeros(mask_size)}).max_pip}"
    except ValueError:
        return "no set's number of actions"


class NumpyPolicy:
    """A policy network, and optionally a value network, running on NumPy.

    It plays as an agent for one game (:meth:`act`) or for many at once (:meth:`act_batch`, a
    :class:`agents.batched.BatchAgent`), the most probable legal action or one sampled.

    Args:
        weights: the networks, as read from a policy file or taken from a trained network.
        deterministic: play the most probable legal action (default) or sample from the policy.
        rng: the generator sampling draws from (needed when ``deterministic`` is False).
        source: where the weights were read from, for messages.
    """

    name = NAMES[0]

    def __init__(
        self, weights: PolicyWeights, deterministic: bool = True, rng: np.random.Generator | None = None,
        source: str = "(in memory)",
    ) -> None:
        self.weights = weights
        self.deterministic = deterministic
        self.rng = rng
        self.source = source
        self._activate = _ACTIVATIONS[weights.activation]
        game = weights.game
        self._sizes = (observed_layout(game, weights.obs_type).size, game.num_actions)
        other = next(kind for kind in OBS_TYPES if kind != weights.obs_type)
        #: The vector size of the other obs_type, named in the refusal of such a vector.
        self._other_size = (other, observed_layout(game, other).size)

    def playing(self, deterministic: bool, rng: np.random.Generator | None = None) -> NumpyPolicy:
        """The same network (its weights shared) playing deterministically or sampling with ``rng``."""
        return NumpyPolicy(self.weights, deterministic, rng, self.source)

    def check_game(self, game: DrawGame) -> None:
        """Refuse to play ``game`` if the policy was trained for another variant.

        Raises:
            ValueError: naming the file and both variants.
        """
        trained = self.weights.game
        if trained.variant != DrawGame(trained.num_players, **game.variant).variant:
            raise ValueError(
                f"the policy {self.source!r} was trained for {describe_variant(trained)}, "
                f"not for {describe_variant(game)}"
            )

    def check_observation(self, vector_size: int, mask_size: int) -> None:
        """Refuse an observation (or rows) of another variant or ``obs_type`` than the policy's.

        Raises:
            ValueError: naming the file and, for a vector of the other ``obs_type``, both types;
                else its variant and the observation's set and sizes.
        """
        if (vector_size, mask_size) == (self._other_size[1], self._sizes[1]):
            raise ValueError(
                f"the policy {self.source!r} reads obs_type={self.obs_type!r}, and this vector is an "
                f"{self._other_size[0]} ({vector_size} entries): play it on an environment made with "
                f"obs_type={self.obs_type!r}"
            )
        if (vector_size, mask_size) != self._sizes:
            raise ValueError(
                f"the policy {self.source!r} was trained for {describe_variant(self.weights.game)} "
                f"({self._sizes[0]} observation entries, {self._sizes[1]} actions); this observation is of another "
                f"variant ({_set_of_mask(mask_size)}: {vector_size} entries, {mask_size} actions)"
            )

    @property
    def obs_type(self) -> str:
        """What the network reads: ``"observation"`` or ``"information_state"`` (:mod:`agents.inputs`)."""
        return self.weights.obs_type

    @property
    def features(self) -> str:
        """The input encoding (``"scaled"`` or ``"extended"``, see :mod:`draw_env.features`)."""
        return self.weights.features

    @property
    def num_players(self) -> int | None:
        """The table size the policy was trained for (``None``: unknown, an old checkpoint)."""
        return self.weights.num_players

    @property
    def has_value(self) -> bool:
        return self.weights.value is not None

    def encode(self, observation: Observation) -> np.ndarray:
        """The network's input for one observation dict of the policy's variant and ``obs_type``."""
        return self.encode_batch(np.asarray(observation["observation"])[None], np.asarray(observation["action_mask"])[None])[0]

    def encode_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The network's inputs for vectors ``(N, L)`` and masks ``(N, A)`` of the policy's variant
        and ``obs_type``.

        Raises:
            ValueError: if they are another variant's or obs_type's (:meth:`check_observation`).
        """
        self.check_observation(np.shape(observations)[-1], np.shape(masks)[-1])
        return encode_inputs(observations, masks, self.features, self.weights.game, self.obs_type)

    def logits(self, inputs: np.ndarray) -> np.ndarray:
        """Unmasked action logits, shape ``(58,)``, for one input vector ``(feature_size,)``."""
        hidden = inputs
        *layers, (last_weight, last_bias) = self.weights.policy
        for weight, bias in layers:
            hidden = self._activate(weight @ hidden + bias)
        return last_weight @ hidden + last_bias

    def logits_batch(self, inputs: np.ndarray) -> np.ndarray:
        """Unmasked action logits ``(N, 58)`` for inputs ``(N, feature_size)``.

        Equal to :meth:`logits` row by row up to float32 rounding (a matrix product sums in
        another order than a matrix-vector one).
        """
        return self._forward(self.weights.policy, inputs)

    def values_batch(self, inputs: np.ndarray) -> np.ndarray:
        """The value network's outputs ``(N,)`` for inputs ``(N, feature_size)``.

        Raises:
            ValueError: if the file holds no value network.
        """
        if self.weights.value is None:
            raise ValueError("this policy has no value network")
        return self._forward(self.weights.value, inputs)[:, 0]

    def _forward(self, layers: tuple[tuple[np.ndarray, np.ndarray], ...], inputs: np.ndarray) -> np.ndarray:
        hidden = np.asarray(inputs, np.float32)
        if hidden.ndim != 2:
            raise ValueError(f"inputs must have shape (N, features), got {hidden.shape}")
        *body, (last_weight, last_bias) = layers
        for weight, bias in body:
            hidden = self._activate(hidden @ weight.T + bias)
        return hidden @ last_weight.T + last_bias

    def choose(
        self, observation: Observation, deterministic: bool, rng: random.Random | np.random.Generator | None
    ) -> int:
        """An action for an AEC observation dict: the best legal one, or one sampled by probability.

        Raises:
            ValueError: if sampling is asked without ``rng``.
        """
        self.check_observation(np.size(observation["observation"]), np.size(observation["action_mask"]))
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 1:
            return int(legal[0])
        logits = self.logits(self.encode(observation))[legal]
        if deterministic:
            return int(legal[np.argmax(logits)])
        if rng is None:
            raise ValueError("rng must be a random generator when deterministic is False")
        cumulative = np.cumsum(np.exp(logits - logits.max()))
        index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
        return int(legal[min(index, len(legal) - 1)])

    def probabilities(self, observation: Observation, deterministic: bool) -> np.ndarray:
        """float64 ``(A,)``: the distribution :meth:`choose` plays from, zero on illegal actions.

        Deterministic play gives a one-hot on its choice; sampling the softmax of the legal
        actions' logits, with the float32 weights :meth:`choose` draws by.
        """
        legal = np.flatnonzero(observation["action_mask"])
        probabilities = np.zeros(len(observation["action_mask"]))
        if len(legal) == 1 or deterministic:
            probabilities[self.choose(observation, True, None)] = 1.0
            return probabilities
        logits = self.logits(self.encode(observation))[legal]
        weights = np.exp(logits - logits.max()).astype(np.float64)
        probabilities[legal] = weights / weights.sum()
        return probabilities

    def probabilities_batch(self, observations: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
        """float64 ``(N, A)``: :meth:`probabilities` of each row from one forward pass (equal to it
        row by row up to float32 rounding, see :meth:`logits_batch`).

        Raises:
            ValueError: if a mask allows nothing.
        """
        legal = np.asarray(masks) != 0
        if legal.ndim != 2 or not legal.any(axis=1).all():
            raise ValueError("masks must have shape (N, A) with at least one legal action per row")
        logits = np.where(legal, self.logits_batch(self.encode_batch(observations, masks)), -np.inf)
        probabilities = np.zeros(legal.shape)
        if deterministic:
            probabilities[np.arange(len(legal)), np.argmax(logits, axis=1)] = 1.0
            return probabilities
        weights = np.exp(logits - logits.max(axis=1, keepdims=True)).astype(np.float64)
        return weights / weights.sum(axis=1, keepdims=True)

    def act(self, observation: Observation) -> int:
        """An action for one AEC observation dict, played as this policy plays (:meth:`choose`)."""
        return self.choose(observation, self.deterministic, self.rng)

    def act_batch(
        self,
        observations: np.ndarray,
        masks: np.ndarray,
        deterministic: bool | None = None,
        rng: np.random.Generator | None = None,
    ) -> np.ndarray:
        """Actions ``int64 (N,)`` for observation vectors ``(N, 258)`` and action masks ``(N, 58)``.

        Deterministic play takes the most probable legal action (as :meth:`choose`); otherwise
        each row samples from the policy's probabilities over its legal actions with ``rng``.
        ``deterministic`` and ``rng`` default to the policy's own.

        Raises:
            ValueError: if a mask allows nothing, or sampling is asked without ``rng``.
        """
        deterministic = self.deterministic if deterministic is None else deterministic
        rng = self.rng if rng is None else rng
        legal = np.asarray(masks) != 0
        if legal.ndim != 2 or not legal.any(axis=1).all():
            raise ValueError("masks must have shape (N, 58) with at least one legal action per row")
        logits = np.where(legal, self.logits_batch(self.encode_batch(observations, masks)), -np.inf)
        if deterministic:
            return np.argmax(logits, axis=1)
        if rng is None:
            raise ValueError("rng must be a numpy Generator when deterministic is False")
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        cumulative = np.cumsum(weights, axis=1)
        draws = rng.random(len(cumulative))[:, None] * cumulative[:, -1:]
        # The first action whose cumulative weight passes the draw (illegal ones weigh 0, so it is
        # legal); rounding can put a draw on the total, hence the cap at the last legal action.
        chosen = (cumulative <= draws).sum(axis=1)
        last_legal = legal.shape[1] - 1 - np.argmax(legal[:, ::-1], axis=1)
        return np.minimum(chosen, last_legal)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> NumpyPolicy:
        """Load a policy file (``.npz`` + ``.json``) or an SB3 training checkpoint (``.zip``).

        Raises:
            ValueError: if ``path`` is neither, or is malformed (see :mod:`agents.policy_file`).
        """
        target = Path(path)
        if target.suffix == ".npz":
            return cls(load_policy_file(target), source=str(target))
        if target.suffix == ".zip":
            return cls(read_checkpoint(target), source=str(target))
        raise ValueError(
            f"path must be a policy file (.npz) or a training checkpoint (.zip), got {str(target)!r}"
        )

    def save(self, path: str | os.PathLike[str], provenance: Mapping[str, Any] | None = None) -> Path:
        """Write this policy as a policy file ``path`` (``.npz``) and its JSON record."""
        weights = (
            self.weights if provenance is None else dataclasses.replace(self.weights, provenance=provenance)
        )
        return save_policy_file(weights, path)


@functools.lru_cache(maxsize=16)
def _load_cached(path: str, mtime_ns: int, size: int) -> NumpyPolicy:
    """Load a file once per process and file version (the evaluator builds an agent per game)."""
    return NumpyPolicy.load(path)


def load_policy(path: str | os.PathLike[str]) -> NumpyPolicy:
    """:meth:`NumpyPolicy.load`, cached per process while the file is unchanged.

    Raises:
        ValueError: if ``path`` does not exist or is not a policy file or checkpoint.
    """
    target = check_path("path", path)
    if not target.is_file():
        raise ValueError(
            f"path must be an existing policy file (.npz) or training checkpoint (.zip), got {str(target)!r}"
        )
    stat = target.stat()
    return _load_cached(str(target.resolve()), stat.st_mtime_ns, stat.st_size)


class NetworkAgent(BaseAgent):
    """A policy network playing from its observation alone.

    Args:
        path: a policy file ``.npz`` or a training checkpoint ``.zip``; ``None`` plays the shipped
            policy for the table's player count.
        deterministic: play the most probable legal action (default) or sample from the policy.
        seed: seeds the sampling when ``deterministic`` is False.
        num_players: the table size, if known in advance: the file is checked against it now
            (else at the first :meth:`act`), and the shipped policy for it is loaded now.

    Raises:
        ValueError: if ``path`` does not exist or is not a policy, or was trained for another
            player count than ``num_players`` (or, in :meth:`act`, than the table's).
    """

    name = NAMES[0]
    # It reads what its file records, and refuses a vector of the other obs_type.
    reads_information_state = True

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        deterministic: bool = True,
        seed: int | None = None,
        num_players: int | None = None,
    ) -> None:
        self.deterministic = check_bool("deterministic", deterministic)
        self.rng = random.Random(check_seed("seed", seed))
        self.num_players = (
            None if num_players is None else check_choice("num_players", num_players, PLAYER_COUNTS)
        )
        self.path = None if path is None else check_path("path", path)
        self._policies: dict[int, NumpyPolicy] = {}
        self._fixed = None if self.path is None else load_policy(self.path)
        if self.num_players is not None:
            self.policy_for(self.num_players)

    @staticmethod
    def obs_type_of_file(path: str | os.PathLike[str]) -> str:
        """What the policy file (or checkpoint) ``path`` reads (:func:`agents.spec_obs_type`)."""
        return load_policy(path).obs_type

    @property
    def obs_type(self) -> str:
        """What the agent reads: its file's ``obs_type`` (the shipped policies read observations)."""
        return DEFAULT_OBS_TYPE if self._fixed is None else self._fixed.obs_type

    def policy_for(self, players: int) -> NumpyPolicy:
        """The policy that plays at a table of ``players``.

        Raises:
            ValueError: if the agent's file was trained for another player count, or the agent
                was made for another table size.
        """
        if self.num_players is not None and players != self.num_players:
            raise ValueError(
                f"this agent was made for num_players={self.num_players}, but the table has {players}"
            )
        if self._fixed is not None:
            trained = self._fixed.num_players
            if trained is not None and trained != players:
                raise ValueError(
                    f"the policy {str(self.path)!r} was trained for {trained} players, "
                    f"but the table has {players} players"
                )
            return self._fixed
        policy = self._policies.get(players)
        if policy is None:
            policy = self._policies[players] = load_policy(shipped_policy(players))
        return policy

    def check_game(self, game: DrawGame) -> None:
        """Refuse a table of ``game`` before play: its player count (:meth:`policy_for`) or its
        variant is not the policy's.

        Raises:
            ValueError: naming the file and both player counts or both variants.
        """
        self.policy_for(game.num_players).check_game(game)

    def act(self, observation: Observation) -> int:
        return self._policy_of(observation).choose(observation, self.deterministic, self.rng)

    def _policy_of(self, observation: Observation) -> NumpyPolicy:
        """The policy for the observation's table, once the observation is one of its variant."""
        legal_actions(observation)  # rejects a mask that allows nothing
        policy = self.policy_for(num_players(observation["observation"], tile_set_of(observation)))
        policy.check_observation(np.size(observation["observation"]), np.size(observation["action_mask"]))
        return policy

    def action_probabilities(self, observation: Observation) -> np.ndarray:
        """The distribution :meth:`act` plays from: a one-hot on the most probable legal action
        (``deterministic``, the default), else the softmax of the legal actions' logits."""
        return self._policy_of(observation).probabilities(observation, self.deterministic)

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`action_probabilities` of ``k`` observation vectors and masks, float64 ``(k, A)``,
        from one forward pass per player count among the rows (equal to it row by row up to
        float32 rounding).

        Raises:
            ValueError: if the shapes do not pair up, a mask allows nothing, or a row's table is
                not one this agent plays.
        """
        observations, masks = np.asarray(observations), np.asarray(masks)
        if observations.ndim != 2 or masks.ndim != 2 or len(observations) != len(masks):
            raise ValueError(
                f"observations (k, size) and masks (k, A) must pair up, got {observations.shape} and {masks.shape}"
            )
        probabilities = np.zeros(masks.shape)
        if not len(masks):
            return probabilities
        tile_set = tile_set_of({"action_mask": masks[0]})
        players = np.array([num_players(vector, tile_set) for vector in observations], np.int64)
        for count in np.unique(players).tolist():
            rows = players == count
            policy = self.policy_for(count)
            probabilities[rows] = policy.probabilities_batch(observations[rows], masks[rows], self.deterministic)
        return probabilities
