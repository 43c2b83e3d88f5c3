"""The batched learner games: one learner seat per game, the opponents acting inside ``step``.

:class:`LearnerGames` is the one "learner against an opponent pool" of the project, under its two
views: the Stable-Baselines3 ``VecEnv`` :class:`train.vector_learner.DrawLearnerVecEnv`
(``draw-train``'s self-play, the exploiter) and the Gymnasium ``VectorEnv``
:class:`train.gym_learner.DrawLearnerVectorEnv`. Both take their options as
:class:`LearnerOptions` and share :class:`LearnerView`. It plays ``num_envs`` games of
:class:`draw_env.vector.DrawVectorEnv` in lockstep, arrays in and out; opponents drawn per episode
from a weighted pool move inside :meth:`LearnerGames.step`, one call for all the games where the
same policy is to act. Its semantics (those of the one-game view
:class:`draw_env.single_agent.DrawSingleAgentEnv`: forced moves, auto-reset, pool changes,
seeding) are on the docs page "Training" (``docs/training.md``, batched learner games).

This module imports numpy, gymnasium, draw_env, agents and train.config (no torch, no
Stable-Baselines3).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from gymnasium import spaces

import agents
from agents.base import observations_for
from agents.batched import AsMeasured, BatchActor, OneByOne, batch_actor, make_batched
from agents.inputs import DEFAULT_OBS_TYPE, check_obs_type, encode_inputs, input_size, observed_layout
from agents.policy_network import NumpyPolicy
from arena.specs import parse_agent_spec
from draw_env.checks import check_bool, check_number, check_seed
from draw_env.rules import DrawGame
from draw_env.single_agent import DEFAULT_REWARD_SCALE
from draw_env.vector import DrawVectorEnv, GameOptions
from train.learner_config import SELF, SNAPSHOTS

if TYPE_CHECKING:
    from typing_extensions import Unpack

Opponent = BatchActor


def make_opponent(
    spec: str, num_players: int, seed: int | None, game: DrawGame | None = None, as_measured: bool = False
) -> Opponent:
    """The opponent an agent spec names (:func:`arena.specs.parse_agent_spec`: ``"heaviest"``,
    ``"ppo:path=agents/policies/ppo_2p.npz"``, ``"ismcts:simulations=200"``), answering for a batch
    of games (:func:`agents.batched.batch_actor`): the batched baselines and networks (played as
    ``agents.make`` builds them: deterministic unless ``deterministic=false``) for all their games
    at once, agents without a batched version game by game. In a variant (``game`` other than the
    seeds') the opponents are asked game by game as their one-game agents, which read the tile
    set from the mask: a batched network plays the seeds' set only, and a seeded batched baseline
    draws its games from another generator than its one-game agent.

    With ``as_measured``, an agent asked game by game plays as the exact measures read it
    (:class:`agents.batched.AsMeasured`: sampled from its ``action_probabilities``, a search seeded
    from each observation); the batched ones already play the distribution they answer.

    Raises:
        ValueError: on a malformed spec, an unknown agent or keyword, or a bad value.
    """
    name, kwargs = parse_agent_spec(spec)
    if game is not None and not game.is_default:
        options = {"seed": seed, **kwargs} if _takes_seed(name) else dict(kwargs)
        agent = agents.make(name, **options)
        return AsMeasured(agent, seed) if as_measured else OneByOne(agent)
    actor = batch_actor(name, kwargs, num_players, seed)
    return AsMeasured(actor.agent, seed) if as_measured and isinstance(actor, OneByOne) else actor


def _takes_seed(name: str) -> bool:
    return "seed" in inspect.signature(agents.agent_class(name)).parameters


def _checked_weights(opponents: Mapping[str, float] | None) -> dict[str, float]:
    """The pool's positive weights by name (``None``: uniformly random play)."""
    if opponents is None:
        return {"random": 1.0}
    if not isinstance(opponents, Mapping):
        raise ValueError(f"opponents must be a mapping of opponent names to weights, got {opponents!r}")
    weights = {}
    for name, weight in opponents.items():
        value = check_number(f"opponents[{name!r}]", weight, minimum=0)
        if value > 0:
            weights[str(name)] = value
    if not weights:
        raise ValueError(f"opponents must give at least one opponent a weight above 0, got {dict(opponents)!r}")
    return weights


class LearnerStep(NamedTuple):
    """What :meth:`LearnerGames.step` returns, one row per game (``F = feature_size(features, game)``,
    ``A = game.num_actions``: 58 in the seeds' game).

    Attributes:
        observation: float32 ``(num_envs, F)``, the learner's next decision (in a game whose
            episode ended, the next episode's first).
        action_mask: int8 ``(num_envs, A)``, the learner's legal actions there.
        reward: float32 ``(num_envs,)``, the learner's AEC rewards of this step times ``reward_scale``.
        done: bool ``(num_envs,)``, the episode ended during this step.
        final_observation: float32 ``(num_envs, F)``, the observation the learner answered with
            this step's action: where ``done``, the ended episode's last observation.
        final_action_mask: int8 ``(num_envs, A)``, its legal actions.
    """

    observation: np.ndarray
    action_mask: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    final_observation: np.ndarray
    final_action_mask: np.ndarray


class LearnerGames:
    """``num_envs`` games, one learner seat each, opponents batched inside :meth:`step`.

    Args:
        num_envs: games played in lockstep.
        num_players: 2, 3 or 4 (the arguments after it are keywords: :class:`LearnerOptions`).
        reward_scale: the learner's reward is its AEC reward times this (> 0).
        features: ``"scaled"`` (258 entries) or ``"extended"`` (340) observation encodings
            (:mod:`draw_env.features`).
        obs_type: what the learner reads, ``"observation"`` or ``"information_state"`` (its
            encoding: :mod:`agents.inputs`); the games are :class:`draw_env.vector.DrawVectorEnv`'s
            of that ``obs_type``, and each opponent is given what it reads (an opponent of
            observations, the observation an information state holds).
        skip_forced: play the learner's forced moves (one legal action) for it.
        opponents: name -> weight (>= 0): ``"self"`` (the learner's current policy, sent by
            :meth:`update_pool`), ``"snapshots"`` (frozen past learners, the weight shared among
            them; until there are some, their weight goes to ``"self"``) or an agent spec
            (:func:`make_opponent`). Until a policy is sent, games whose pool holds only
            ``"self"``/``"snapshots"`` play uniformly random opponents. ``None``: uniformly
            random legal play.
        seed: seeds the deals, the seats, the pool draws and the sampled opponents until
            ``reset(seed=...)`` seeds them anew (``None``: fresh entropy).
        opponents_as_measured: the named opponents asked game by game play as the exact measures
            read them (:func:`make_opponent`'s ``as_measured``; the exploiter's target).
        game_options: ``episode``, ``reward`` and the variant (``variant``, or ``max_pip``, ``hand_size``, ``protected``),
            passed to :class:`draw_env.vector.DrawVectorEnv` (:class:`draw_env.vector.GameOptions`;
            the defaults: hands scored ``zero_sum`` in the seeds' game).

    Raises:
        ValueError: for a bad argument, naming it and the allowed values.

    Attributes:
        single_observation_space: ``Box(0, 1, (F,), float32)``, one game's learner observation.
        single_action_space: ``Discrete(game.num_actions)`` (58 in the seeds' game).
        game: the variant played.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        *,
        reward_scale: float = DEFAULT_REWARD_SCALE,
        features: str = "extended",
        obs_type: str = DEFAULT_OBS_TYPE,
        skip_forced: bool = True,
        opponents: Mapping[str, float] | None = None,
        seed: int | None = 0,
        opponents_as_measured: bool = False,
        **game_options: Unpack[GameOptions],
    ) -> None:
        self.obs_type = check_obs_type("obs_type", obs_type)
        self.venv = DrawVectorEnv(num_envs, num_players, autoreset=True, obs_type=obs_type, **game_options)
        self.game = game = self.venv.game
        self.num_envs = self.venv.num_envs
        self.num_players = self.venv.num_players
        self.reward_scale = check_number("reward_scale", reward_scale, minimum=0, exclusive_minimum=True)
        self.features = features
        self.feature_size = input_size(features, game, obs_type)
        self.single_observation_space = spaces.Box(0.0, 1.0, (self.feature_size,), np.float32)
        self.single_action_space = spaces.Discrete(game.num_actions)
        self.skip_forced = check_bool("skip_forced", skip_forced)
        self.weights = _checked_weights(opponents)
        self.opponents_as_measured = check_bool("opponents_as_measured", opponents_as_measured)
        self.seed_value = check_seed("seed", seed)
        self.current: NumpyPolicy | None = None
        self.snapshots: list[NumpyPolicy] = []
        n = self.num_envs
        self._learner = np.zeros(n, np.int64)
        # Opponents in play: each seat's code into self._players (-1: the learner), kept for the episode.
        self._seat_codes = np.full((n, num_players), -1, np.int64)
        self._players: list[Opponent] = []
        self._pool: list[int] = []
        self._pool_weights = np.zeros(0)
        self._seed_streams(self.seed_value)
        self._reset_once = False
        self._obs = np.zeros((n, observed_layout(game, obs_type).size), np.float32)
        self._mask = np.zeros((n, game.num_actions), np.int8)
        self._current = np.zeros(n, np.int64)
        # The learner's encoded observation now: what the last reset or step returned.
        self._observation = np.zeros((n, self.feature_size), np.float32)

    # ------------------------------------------------------------------ the pool

    def update_pool(self, current: NumpyPolicy | None = None, snapshots: Sequence[NumpyPolicy] | None = None) -> None:
        """Replace the learner's current policy and/or the snapshots (from the next episodes on)."""
        if current is not None:
            self.current = current
        if snapshots is not None:
            self.snapshots = list(snapshots)
        self._install()

    def _seed_streams(self, seed: int | None) -> None:
        """Seed the pool draws and build the named opponents from ``seed`` (their own streams)."""
        self.rng = np.random.default_rng(seed)
        self.baselines: dict[str, Opponent] = {
            name: make_opponent(name, self.num_players, seed, self.game, self.opponents_as_measured)
            for name in self.weights
            if name not in (SELF, SNAPSHOTS)
        }
        self._install()

    def _install(self) -> None:
        entries: list[tuple[Opponent, float]] = []
        self_weight = self.weights.get(SELF, 0.0)
        snapshot_weight = self.weights.get(SNAPSHOTS, 0.0)
        if not self.snapshots:
            self_weight += snapshot_weight
        else:
            # Policy opponents sample their moves, as the learner does while training.
            entries += [(s.playing(False, self.rng), snapshot_weight / len(self.snapshots)) for s in self.snapshots]
        if self.current is not None and self_weight > 0:
            entries.append((self.current.playing(False, self.rng), self_weight))
        entries += [(agent, self.weights[name]) for name, agent in self.baselines.items()]
        if sum(weight for _, weight in entries) <= 0:  # only policy opponents asked for, none sent yet
            entries = [(self._random(), 1.0)]
        # Keep the opponents that games in play still use; drop the rest.
        codes = self._seat_codes
        used = np.unique(codes[codes >= 0])
        remap = np.full(max(len(self._players), 1), -1, np.int64)
        kept = [self._players[code] for code in used]
        remap[used] = np.arange(len(used))
        codes[codes >= 0] = remap[codes[codes >= 0]]
        self._players = kept + [player for player, _ in entries]
        self._pool = list(range(len(kept), len(self._players)))
        weights = np.array([weight for _, weight in entries])
        self._pool_weights = weights / weights.sum()

    def _seat_players(self, games: np.ndarray) -> None:
        """Draw the learner's seat and each opponent for new episodes in ``games``."""
        if not games.size:
            return
        self._learner[games] = self.rng.integers(self.num_players, size=len(games))
        codes = np.asarray(self._pool)[self.rng.choice(len(self._pool), size=(len(games), self.num_players), p=self._pool_weights)]
        codes[np.arange(len(games)), self._learner[games]] = -1
        self._seat_codes[games] = codes

    # ------------------------------------------------------------------ playing

    def reset(self, seed: int | None = None) -> np.ndarray:
        """New episodes in every game; the learner's first observations float32 ``(num_envs, F)``.

        ``seed`` seeds every stream anew (deals, seats, pool draws, every opponent's sampling:
        the named opponents are rebuilt from it, unless this is the first reset and the seed is
        the constructor's, whose opponents are then still untouched); ``None`` continues them,
        except at the very first reset, which uses the constructor's seed. With ``skip_forced``
        an episode that ends before the learner's first decision is replaced by the next one
        (its rewards are returned by no step; see ``docs/training.md``).

        Raises:
            ValueError: if ``seed`` is not ``None`` or a non-negative integer; nothing changes then.
        """
        seed = check_seed("seed", seed)
        fresh = seed is not None or not self._reset_once
        self._seat_codes[:] = -1
        # Before the first reset the streams are as the constructor seeded them: rebuild them only
        # for another seed, so that opponents built by the constructor stay the ones that play.
        if seed is not None and (self._reset_once or seed != self.seed_value):
            self.seed_value = seed
            self._seed_streams(seed)
        out = self.venv.reset(seed=self.seed_value if fresh else None)
        self._reset_once = True
        self._obs[:], self._mask[:], self._current[:] = out.observation, out.action_mask, out.current_player
        self._seat_players(np.arange(self.num_envs))
        self._advance(np.zeros(self.num_envs, np.float32), np.zeros(self.num_envs, bool), in_step=False)
        self._observation = self._encode()
        return self._observation

    def step(self, actions: Any) -> LearnerStep:
        """Play the learner's action in every game, then the opponents' until the learner decides again.

        Args:
            actions: integer ``(num_envs,)``, the learner's action in each game.

        Raises:
            ValueError: as :meth:`draw_env.vector.DrawVectorEnv.step` (a wrong shape or type, an
                action outside ``0..57``, an illegal action); no game changes then.
        """
        if not self._reset_once:
            raise RuntimeError("call reset() before step()")
        n = self.num_envs
        final_observation, final_mask = self._observation, self._mask.copy()
        rewards = np.zeros(n, np.float32)
        dones = np.zeros(n, bool)
        # DrawVectorEnv checks the actions before any game moves: an error leaves everything as it was.
        out = self.venv.step(actions)
        self._absorb(np.arange(n), out, rewards, dones)
        self._advance(rewards, dones)
        self._observation = self._encode()
        return LearnerStep(
            self._observation, self._mask.copy(), rewards * self.reward_scale, dones, final_observation, final_mask
        )

    def _absorb(self, games: np.ndarray, out: Any, rewards: np.ndarray, dones: np.ndarray) -> None:
        """Take a step's rows for ``games``: the learner's reward, and new episodes where one ended."""
        rewards[games] += out.rewards[np.arange(len(games)), self._learner[games]]
        self._obs[games], self._mask[games], self._current[games] = out.observation, out.action_mask, out.current_player
        ended = games[out.terminated]
        if ended.size:
            dones[ended] = True
            self._seat_codes[ended] = -1
            self._seat_players(ended)

    def _advance(self, rewards: np.ndarray, dones: np.ndarray, in_step: bool = True) -> None:
        """Let opponents (and the learner's forced moves) play until the learner decides everywhere.

        In a step (``in_step``) a game whose episode ended (``dones``) stops skipping the learner's
        forced moves, so that the step ends in the episode that follows; ``reset`` is no step and
        keeps skipping them, replacing every episode that ends before the learner's first decision.
        """
        while True:
            waiting = self._current != self._learner
            choices = self._mask.sum(axis=1)
            forced = ~waiting & (choices == 1) if self.skip_forced else np.zeros_like(waiting)
            if in_step:
                forced &= ~dones
            games = np.flatnonzero(waiting | forced)
            if not games.size:
                return
            actions = self._mask[games].argmax(axis=1).astype(np.int64)  # the forced moves
            # Opponents are asked only where they have a choice: with one legal action every agent
            # plays it, and a forced draw is a frequent move (a network would spend a forward pass on it).
            asked = waiting[games] & (choices[games] > 1)
            codes = self._seat_codes[games, self._current[games]]
            for code in np.unique(codes[asked]):
                rows = np.flatnonzero(asked & (codes == code))
                picked = games[rows]
                player = self._players[code]
                actions[rows] = player.act_batch(observations_for(player, self._obs[picked], self._mask[picked]),
                                                 self._mask[picked])
            self._absorb(games, self.venv.step(actions, games=games), rewards, dones)

    def _encode(self) -> np.ndarray:
        return encode_inputs(self._obs, self._mask, self.features, self.game, self.obs_type)

    def _random(self) -> Opponent:
        """Uniformly random legal play, batched in the seeds' game."""
        if self.game.is_default:
            return make_batched("random", seed=self.seed_value)
        return make_opponent("random", self.num_players, self.seed_value, self.game)

    @property
    def action_mask(self) -> np.ndarray:
        """The learner's legal actions in every game now: a new int8 ``(num_envs, A)``."""
        return self._mask.copy()

    @property
    def learner_seat(self) -> np.ndarray:
        """The learner's absolute seat in each game's episode now: a new int64 ``(num_envs,)``."""
        return self._learner.copy()

    def close(self) -> None:
        """Nothing to release."""
        self.venv.close()


class LearnerOptions(GameOptions, total=False):
    """The keyword arguments of :class:`LearnerGames` and of its views, with their meanings there
    (each view gives its own defaults): the game's (:class:`draw_env.vector.GameOptions`) and these."""

    reward_scale: float
    features: str
    obs_type: str
    skip_forced: bool
    opponents: Mapping[str, float] | None
    seed: int | None
    opponents_as_measured: bool


class LearnerView:
    """What the learner views share: the :class:`LearnerGames` they show and its pool protocol.

    Attributes:
        games: the core, built by the view from its arguments (checked there).
    """

    games: LearnerGames

    def update_pool(self, current: NumpyPolicy | None = None, snapshots: Sequence[NumpyPolicy] | None = None) -> None:
        """Replace the learner's current policy and/or the snapshots (from the next episodes on)."""
        self.games.update_pool(current, snapshots)
