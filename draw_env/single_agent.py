"""A single-agent Gymnasium view of the Draw AEC environment, for MaskablePPO and friends.

One seat is the learner; every other seat is played by an opponent policy inside :meth:`step`,
until it is the learner's turn again or the episode ends. The learner therefore receives its own
end-of-hand reward whatever happened, losses included: a hand the learner loses gives it a
negative reward under ``"zero_sum"``, even when an opponent made the last move.

* The learner's seat is drawn uniformly per episode (from the env's seeded ``np_random``), so it
  opens, follows and sits everywhere at the table.
* Opponents are policies ``obs_dict -> action`` (callables, or objects with ``.act`` and an
  optional ``.reset``) that see exactly what the AEC environment shows them. Each opponent seat
  draws one policy per episode from a weighted list; by default they play uniformly at random
  among legal actions.
* :meth:`action_masks` gives MaskablePPO the legal actions as a ``bool`` array of 58.
* Copies (``copy.deepcopy``, ``pickle``, ``cloudpickle``) carry the whole episode, opponents
  included, by value (docs/environment.md, "Copies").

Observations (``features``) are the encodings of :mod:`draw_env.features`: ``"scaled"`` (258
entries) or ``"extended"`` (default, 340 entries).

This module imports only numpy, gymnasium, pettingzoo and draw_env.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import gymnasium
import numpy as np
from gymnasium import spaces

from draw_env.checks import check_bool, check_choice, check_int, check_number, check_seed
from draw_env.draw_dominoes import ILLEGAL_PENALTY, raw_env
from draw_env.features import FEATURES, encode_observation, feature_size
from draw_env.rules import NUM_ACTIONS, IllegalActionError

#: Default reward scale: one hand's zero-sum reward is at most :data:`draw_env.rules.MAX_HAND_POINTS` in size,
#: usually tens.
DEFAULT_REWARD_SCALE = 0.02


class ActingPolicy(Protocol):
    """An agent object: picks a legal action from an AEC observation dict."""

    def act(self, observation: dict[str, np.ndarray]) -> int: ...


Policy = Callable[[dict[str, np.ndarray]], int] | ActingPolicy


class DrawSingleAgentEnv(gymnasium.Env):
    """Draw dominoes for one learner against opponent policies that act inside :meth:`step`.

    Args:
        num_players: 2, 3 or 4.
        opponents: ``None`` (uniformly random legal moves), one policy, or a sequence of
            policies from which each opponent seat draws one per episode. A policy is a callable
            ``obs_dict -> action`` or an object with ``act(obs_dict)`` (and optionally
            ``reset()``, called when it is drawn for an episode).
        opponent_weights: relative sampling weights, one per policy in ``opponents``
            (default uniform).
        episode: ``"hand"`` or ``"match"``, as in :func:`draw_env.env`.
        reward: ``"zero_sum"``, ``"points"`` or (matches) ``"win_loss"``, as in :func:`draw_env.env`.
        reward_scale: every reward is multiplied by this (default 0.02: 50 points give 1.0).
        features: ``"scaled"`` or ``"extended"`` (see the module docstring).
        skip_forced: play the learner's forced moves (a single legal action: a forced draw or
            pass, a lone fitting tile) for it, so that every learner step is a real choice. An
            episode that ends before the learner has a choice to make (with 4 players a hand, or
            even a match, can end with every learner move forced) is then not the learner's:
            :meth:`reset` deals the next one (see there).
        seed: seeds the first :meth:`reset` that is given no seed.
        render_mode: ``None``, ``"ansi"`` (the AEC environment's text) or ``"rgb_array"`` (its
            picture, e.g. for gymnasium's ``RecordVideo``).

    An illegal learner action (MaskablePPO never makes one; ``check_env`` does) ends the episode
    with ``ILLEGAL_PENALTY[reward] * reward_scale`` and ``info["illegal_action"] = 1``.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": raw_env.metadata["render_fps"]}

    def __init__(
        self,
        num_players: int = 2,
        opponents: Policy | Sequence[Policy] | None = None,
        opponent_weights: Sequence[float] | None = None,
        episode: str = "hand",
        reward: str = "zero_sum",
        reward_scale: float = DEFAULT_REWARD_SCALE,
        features: str = "extended",
        skip_forced: bool = False,
        seed: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        check_choice("features", features, FEATURES)
        check_choice("render_mode", render_mode, (None, "ansi", "rgb_array"))
        self.skip_forced = check_bool("skip_forced", skip_forced)
        self.reward_scale = check_number("reward_scale", reward_scale, minimum=0, exclusive_minimum=True)
        self._aec = raw_env(num_players=num_players, episode=episode, reward=reward, render_mode=render_mode)
        self.num_players = self._aec.game.num_players
        self.episode = episode
        self.reward_scheme = reward
        self.features = features
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, 1.0, (feature_size(features),), np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._initial_seed = check_seed("seed", seed)
        self._aec_seeded = False
        self._opponents: list[Policy] = []
        self._weights = np.zeros(0)
        self.set_opponents(opponents, opponent_weights)
        self._seat_policies: dict[str, Policy | None] = {}
        self.learner = ""
        self._observation: dict[str, np.ndarray] | None = None

    # ------------------------------------------------------------------ opponents

    def set_opponents(
        self,
        opponents: Policy | Sequence[Policy] | None,
        weights: Sequence[float] | None = None,
    ) -> None:
        """Replace the opponent policies (takes effect at the next :meth:`reset`).

        Args:
            opponents: as in the constructor.
            weights: one non-negative weight per policy, not all zero (default uniform).
        """
        if opponents is None:
            policies: list[Policy] = []
        elif callable(opponents) or hasattr(opponents, "act"):
            policies = [opponents]
        else:
            policies = list(opponents)
            for index, policy in enumerate(policies):
                if not (callable(policy) or hasattr(policy, "act")):
                    raise ValueError(
                        f"opponents[{index}] must be a callable obs_dict -> action or an object with .act, "
                        f"got {policy!r}"
                    )
        if weights is None:
            weights_array = np.ones(len(policies))
        else:
            allowed = f"{len(policies)} finite non-negative numbers, not all zero"
            if isinstance(weights, str) or not isinstance(weights, Sequence) or len(weights) != len(policies):
                raise ValueError(f"opponent_weights must be {allowed}, got {weights!r}")
            weights_array = np.array(
                [check_number(f"opponent_weights[{i}]", w, minimum=0) for i, w in enumerate(weights)], np.float64
            )
            if policies and weights_array.sum() <= 0:
                raise ValueError(f"opponent_weights must be {allowed}, got {weights!r}")
        self._opponents = policies
        self._weights = weights_array / weights_array.sum() if policies else weights_array

    def _random_legal(self, observation: dict[str, np.ndarray]) -> int:
        return int(self.np_random.choice(np.flatnonzero(observation["action_mask"])))

    def _opponent_action(self, agent: str, observation: dict[str, np.ndarray]) -> int:
        policy = self._seat_policies[agent]
        if policy is None:
            return self._random_legal(observation)
        if hasattr(policy, "act"):
            return int(policy.act(observation))
        return int(policy(observation))

    # ------------------------------------------------------------------ gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode: draw the learner's seat and the opponents, deal, play up to the learner.

        ``options`` go to the AEC environment's ``reset`` (a fixed deal, an opener, scores),
        except ``options["learner_seat"]``, which fixes the learner's seat.

        An episode that ends before the learner's first decision (with ``skip_forced``, when
        every learner move until the end was forced; with a set-up deal, also without) has no
        step to return its reward from: it is played out and replaced by a new one (seat,
        opponents and deals drawn anew from the continuing streams, the same ``options``
        applied), until the learner has a choice to make.

        Returns:
            ``(observation, info)``: the learner's first decision and ``info`` with
            ``learner_seat`` (its seat), ``skipped_episodes`` (how many episodes were replaced
            as above, usually 0) and ``reset_reward`` (the learner's scaled reward that arrived
            before this first decision, which no step returns: the replaced episodes' and, in a
            match, that of hands which ended before it; usually 0.0).

        Raises:
            ValueError: for a bad seed or option. The RNGs are then left as they were (neither
                reseeded nor advanced) and so is the episode in play, except when the hand
                set up by ``options["hands"]`` ends the episode before the learner's first
                decision: that is only found out by playing it, and the episode is then over
                (call ``reset`` again).
        """
        seed = check_seed("seed", seed)
        aec_options = dict(options or {})
        learner_seat = aec_options.pop("learner_seat", None)
        if learner_seat is not None:
            learner_seat = check_int("options['learner_seat']", learner_seat, minimum=0, maximum=self.num_players - 1)
        generator, generator_seed, initial_seed = self._np_random, self._np_random_seed, self._initial_seed
        generator_state = None if generator is None else generator.bit_generator.state
        try:
            return self._start_episode(seed, learner_seat, aec_options)
        except ValueError:
            self._np_random, self._np_random_seed, self._initial_seed = generator, generator_seed, initial_seed
            if generator is not None and generator_state is not None:
                generator.bit_generator.state = generator_state
            raise

    def _start_episode(
        self, seed: int | None, learner_seat: int | None, aec_options: dict[str, Any]
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is None and self._initial_seed is not None:
            seed, self._initial_seed = self._initial_seed, None
        super().reset(seed=seed)
        skipped, reset_reward = 0, 0.0
        while True:
            seat = int(self.np_random.integers(self.num_players)) if learner_seat is None else learner_seat
            # The AEC env keeps its own deal RNG between resets; reseed it from ours when we were
            # seeded, and on the first reset, so that one seed fixes every deal. A replacement
            # episode (below) continues that RNG.
            aec_seed = None
            if (seed is not None and not skipped) or not self._aec_seeded:
                aec_seed = int(self.np_random.integers(2**31))
            self._aec.reset(seed=aec_seed, options=aec_options or None)  # leaves itself as it was if it raises
            self._aec_seeded = True
            self.learner = self._aec.possible_agents[seat]
            self._draw_opponents()
            first_hand = self._aec.state_ref.hand_number
            reward, terminated = self._play_opponents()
            reset_reward += reward
            if not terminated:
                break
            # The episode ended before the learner had a choice (skip_forced played every one of
            # its moves; the ended state stays in place). Dealt from the RNG, it is replaced. A
            # hand set up by the options that ends its episode so is the caller's deal to fix.
            self._observation = None
            if "hands" in aec_options and self._aec.state_ref.hand_number == first_hand:
                raise ValueError(
                    "options['hands'] / options['boneyard'] give a deal that ends the episode before the "
                    f"learner's first decision (learner seat {seat}, skip_forced={self.skip_forced})"
                )
            skipped += 1
        info = {"learner_seat": seat, "skipped_episodes": skipped, "reset_reward": reset_reward * self.reward_scale}
        return self._learner_observation(), info

    def _draw_opponents(self) -> None:
        """Draw each opponent seat's policy for the episode (and reset it)."""
        self._seat_policies = {}
        for agent in self._aec.possible_agents:
            if agent == self.learner:
                continue
            policy = None
            if self._opponents:
                policy = self._opponents[int(self.np_random.choice(len(self._opponents), p=self._weights))]
                if hasattr(policy, "reset"):
                    policy.reset()
            self._seat_policies[agent] = policy

    def step(self, action: int | np.integer) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's ``action``, then the opponents until the learner's turn or the end.

        Returns:
            ``(observation, reward, terminated, truncated, info)``: ``reward`` is everything the
            learner earned since its last step, scaled; ``info`` is the learner's AEC info
            (``hand_points``, ``hand_pips``, ``score``, ``blocked``) plus ``learner_seat``.
        """
        aec = self._aec
        if self._observation is None or aec.terminations[self.learner]:
            raise RuntimeError("call reset() before step() (the episode is over)")
        try:
            aec.step(int(action))
        except IllegalActionError:
            self._observation = None
            info = {**aec.infos[self.learner], "learner_seat": self._learner_seat(), "illegal_action": 1}
            penalty = ILLEGAL_PENALTY[self.reward_scheme] * self.reward_scale
            return np.zeros(feature_size(self.features), np.float32), penalty, True, False, info
        reward = aec.rewards[self.learner]
        more_reward, terminated = self._play_opponents()
        reward += more_reward
        observation = self._learner_observation()
        info = {**aec.infos[self.learner], "learner_seat": self._learner_seat(), "illegal_action": 0}
        return observation, reward * self.reward_scale, terminated, False, info

    def _learner_seat(self) -> int:
        return self._aec.possible_agents.index(self.learner)

    def _play_opponents(self) -> tuple[float, bool]:
        """Let opponents act until the learner has a choice to make or the episode is over.

        Returns:
            The learner's unscaled reward collected meanwhile, and whether the episode ended.
        """
        aec = self._aec
        reward = 0.0
        while not aec.terminations[self.learner]:
            agent = aec.agent_selection
            if agent != self.learner:
                aec.step(self._opponent_action(agent, aec.observe(agent)))
            elif self.skip_forced and len(legal := aec.state_ref.legal_actions()) == 1:
                aec.step(legal[0])
            else:
                break
            reward += aec.rewards[self.learner]
        return reward, aec.terminations[self.learner]

    def _learner_observation(self) -> np.ndarray:
        self._observation = self._aec.observe(self.learner)
        return encode_observation(self._observation, self.features)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions, shape ``(58,)`` ``bool``.

        Once the episode is over no action is legal; the mask is then all ``True`` so that a
        masked distribution built from it stays defined (vectorised envs reset before using it).
        """
        if self._observation is None:
            return np.ones(NUM_ACTIONS, bool)
        mask = self._observation["action_mask"].astype(bool)
        return mask if mask.any() else np.ones(NUM_ACTIONS, bool)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        return self._aec.render()

    def close(self) -> None:
        self._aec.close()


__all__ = [
    "DEFAULT_REWARD_SCALE",
    "FEATURES",
    "DrawSingleAgentEnv",
    "encode_observation",
    "feature_size",
]
