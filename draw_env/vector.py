"""The batched environment: ``num_envs`` games of Draw in lockstep, arrays in and out (docs/environment.md, "The batched environment").

:class:`DrawVectorEnv` runs every game inside compiled kernels (:mod:`draw_env.engine`): a step
is one call for all games, with no Python loop over them. Each game is one compact int64 row of
``engine.state_size(max_pip)`` slots, and the observation of any seat is written straight from it into the
output array (faster than gathering from an absolute table, measured in ``docs/engine.md``). The
conventions the contract leaves open (auto-reset in the same step, ended games, rewards by
absolute seat, seeding) follow pgx; ``docs/engine.md`` ("The batched environment") lists them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple, NoReturn, TypedDict

import numpy as np
from gymnasium import spaces

from draw_env import engine
from draw_env.checks import (
    MAX_SEED,
    check_bool,
    check_choice,
    check_int,
    check_seed,
    is_integer,
    warn_unknown_options,
)
from draw_env.observation import OBS_TYPES, check_history_room, information_layout, layout
from draw_env.rules import (
    EPISODES,
    PLAYER_COUNTS,
    PROTECTED_BONEYARD,
    REWARDS,
    IllegalActionError,
    action_name,
    check_reward_episode,
    variant_game,
)
from draw_env.tiles import DEFAULT_MAX_PIP

_OPTION_KEYS = ("deals", "scores", "seeds")
_DEAL_KEYS = ("hands", "boneyard", "opener")


class VectorStep(NamedTuple):
    """What ``reset`` and ``step`` return, one row per game (``n = num_players``, ``T`` the set's
    tiles: 28 in the seeds' game).

    Attributes:
        observation: float32 ``(num_envs, size)``, the player to act's observation (the AEC
            layout of the variant, :func:`draw_env.observation.layout`; 258 entries in the seeds' game),
            or with ``obs_type="information_state"`` its information state
            (:func:`draw_env.observation.information_layout`).
        action_mask: int8 ``(num_envs, 2T+2)``, that player's legal actions (zeros in an ended game).
        current_player: int32 ``(num_envs,)``, the absolute seat to act.
        rewards: float32 ``(num_envs, n)`` by absolute seat, what the AEC environment gives each
            agent at this step.
        terminated: bool ``(num_envs,)``, the episode (hand or match) is over at this step.
        truncated: bool ``(num_envs,)``, always False.
        hand_points: int32 ``(num_envs, n)``, points each seat scored in a hand that ended at this
            step, else 0 (the AEC info ``hand_points``).
        hand_pips: int32 ``(num_envs, n)``, pips in each hand; at the step a hand ends, the pips
            left (info ``hand_pips``).
        score: int32 ``(num_envs, n)``, match totals, the finished hand included (info ``score``).
        blocked: bool ``(num_envs,)``, a blocked hand ended at this step (info ``blocked``).
        hand_ended: bool ``(num_envs,)``, a hand ended at this step; in a match the episode may
            go on (the next hand is then dealt and observed).
        winner: int32 ``(num_envs,)``, the seat that scored the hand that ended at this step; -1
            when no hand ended or nobody scored (a block with a shared lowest total).
        hand_number: int32 ``(num_envs,)``, hands dealt before the hand in play in its match (0 in
            a new episode).
        deal_hands: int64 ``(num_envs, n)``, the hand in play as dealt: each seat's tiles as a
            bitmask (bit ``t`` = tile id ``t``).
        deal_boneyard: int8 ``(num_envs, T)``, its boneyard as dealt, the first draw first, then
            -1 to the end of the row.
        deal_opener: int32 ``(num_envs,)``, the seat that opened the hand in play.

    An ended game (without auto-reset) keeps the infos and the deal of the hand that ended it.
    """

    observation: np.ndarray
    action_mask: np.ndarray
    current_player: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    hand_points: np.ndarray
    hand_pips: np.ndarray
    score: np.ndarray
    blocked: np.ndarray
    hand_ended: np.ndarray
    winner: np.ndarray
    hand_number: np.ndarray
    deal_hands: np.ndarray
    deal_boneyard: np.ndarray
    deal_opener: np.ndarray


class GameOptions(TypedDict, total=False):
    """The keyword arguments of :class:`DrawVectorEnv` that choose what is played (the episode, the
    rewards and the variant), for a wrapper that passes them through to it unchanged
    (``**options: Unpack[GameOptions]``); their meanings and defaults are :class:`DrawVectorEnv`'s."""

    episode: str
    reward: str
    max_pip: int
    hand_size: int | None
    protected: int
    variant: str | None


class DrawVectorEnv:
    """``num_envs`` independent games of Draw stepped together.

    Args:
        num_envs: games in the batch (>= 1).
        num_players: 2, 3 or 4.
        episode: ``"hand"`` or ``"match"``.
        reward: ``"zero_sum"``, ``"points"`` or, with ``episode="match"``, ``"win_loss"``.
        autoreset: deal an ended game anew in the same step (True) or leave it ended until
            ``reset`` (False).
        max_pip, hand_size, protected: the variant (:class:`draw_env.rules.DrawGame`): the
            double-``max_pip`` set (2 to 9), tiles dealt to each player (``None``: 7, or 6 with
            4 players), boneyard tiles never drawn.
        obs_type: ``"observation"`` (the default) or ``"information_state"``: the AEC
            environment's of the same name (the observation, then the player's deal and the
            hand's actions in order); each game then keeps its hand's history in its state.
        parallel: step the games on all numba threads (``prange``). Off by default: it pays only
            on idle cores; on a shared machine a thread that waits for a core stalls every step.
        variant: a named variant of :data:`draw_env.rules.VARIANTS` (``"micro"``, ``"mini"``,
            ``"midi"``, ``"draw"``) instead of the three numbers; a number left at its default
            takes the variant's, any other must be the variant's own (else ``ValueError``).

    The arrays each call returns are new: the environment never writes them again. The conventions
    (auto-reset, ended games, seeding) are in ``docs/engine.md``. A bad argument is a
    ``ValueError`` naming it.

    Example::

        env = DrawVectorEnv(1024, num_players=3)
        out = env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(100):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in out.action_mask])
            out = env.step(actions)
    """

    metadata: ClassVar[dict[str, str]] = {"name": "draw_dominoes_vector_v0", "autoreset_mode": "same-step"}

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        episode: str = "hand",
        reward: str = "zero_sum",
        autoreset: bool = True,
        max_pip: int = DEFAULT_MAX_PIP,
        hand_size: int | None = None,
        protected: int = PROTECTED_BONEYARD,
        obs_type: str = "observation",
        *,
        parallel: bool = False,
        variant: str | None = None,
    ) -> None:
        self.num_envs = check_int("num_envs", num_envs, minimum=1)
        self.num_players = check_choice("num_players", num_players, PLAYER_COUNTS)
        self.episode = check_choice("episode", episode, EPISODES)
        self.reward = check_choice("reward", reward, REWARDS)
        check_reward_episode(self.reward, self.episode)
        self.autoreset = check_bool("autoreset", autoreset)
        self.parallel = check_bool("parallel", parallel)
        self.obs_type = check_choice("obs_type", obs_type, OBS_TYPES)
        self.game = game = variant_game(self.num_players, variant, max_pip, hand_size, protected)
        self._match = self.episode == "match"
        self._scheme = REWARDS.index(self.reward)
        self._information = information = self.obs_type == "information_state"
        observed = information_layout(game) if information else layout(game)
        self._size, self._num_actions = observed.size, game.num_actions
        self.single_observation_space = spaces.Box(0.0, observed.high, (observed.size,), np.float32)
        self.single_action_space = spaces.Discrete(game.num_actions)
        self.observation_space = spaces.Box(
            0.0, np.broadcast_to(observed.high, (self.num_envs, observed.size)), dtype=np.float32
        )
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, game.num_actions))
        n, players = self.num_envs, self.num_players
        size = engine.history_state_size(game) if information else engine.state_size(game.max_pip)
        self._states = np.zeros((n, size), np.int64)
        for i in range(n):
            engine.init_variant_state(self._states[i], players, 0, game.max_pip, game.hand_size, game.protected)
        self._finished = np.zeros(n, np.bool_)
        # The infos and the deal of each game, kept between steps (an ended game keeps its own).
        self._hand_points = np.zeros((n, players), np.int32)
        self._hand_pips = np.zeros((n, players), np.int32)
        self._score = np.zeros((n, players), np.int32)
        self._blocked = np.zeros(n, np.bool_)
        self._winner = np.full(n, -1, np.int32)
        self._hand_number = np.zeros(n, np.int32)
        self._deal_hands = np.zeros((n, players), np.int64)
        self._deal_boneyard = np.full((n, game.num_tiles), -1, np.int8)
        self._deal_opener = np.zeros(n, np.int32)
        #: What a step returns a copy of, in :class:`VectorStep`'s order (``hand_ended`` aside).
        self._kept = (
            self._hand_points, self._hand_pips, self._score, self._blocked, self._winner, self._hand_number,
            self._deal_hands, self._deal_boneyard, self._deal_opener,
        )
        self._all = np.arange(n, dtype=np.int64)
        self._bad = np.zeros(n, np.bool_)
        self._seeded = False
        self._has_reset = False

    # ------------------------------------------------------------------ reset

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> VectorStep:
        """Start a new episode in every game.

        Args:
            seed: seeds every game's generator (``None``: continue the streams; the very first
                reset without a seed draws fresh entropy).
            options: ``"deals"``: a list of ``num_envs`` entries, each ``None`` (dealt from the
                generator) or ``{"hands", "boneyard", "opener"}`` as the AEC environment's reset
                options (tiles as ids, ``(a, b)`` pairs or ``"[a|b]"``; ``opener`` optional, else
                the lottery); with ``episode="match"``, ``"scores"``: a list of ``num_envs``
                entries, each ``None`` or one integer per seat below the target; ``"seeds"``: a
                list of ``num_envs`` non-negative integers, one seed per game's generator (games
                given the same seed and deal are dealt the same later hands: duplicate
                evaluations replay a deal this way), instead of ``seed``. Unknown keys are
                ignored with a warning.

        Raises:
            ValueError: for a malformed seed or option, saying which game and what is wrong; no
                game changes then.
        """
        seed = check_seed("seed", seed)
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict with keys {', '.join(_OPTION_KEYS)}, got {options!r}")
        options = dict(options or {})
        warn_unknown_options(options, _OPTION_KEYS, stacklevel=2)
        n, players = self.num_envs, self.num_players
        scores = self._parse_scores(options.get("scores"))
        fixed, hands, boneyards, lengths, openers = self._parse_deals(options.get("deals"))
        game_seeds = self._parse_seeds(options.get("seeds"), seed)
        if game_seeds is not None:
            words = np.array([np.random.SeedSequence(s).generate_state(1, np.uint64)[0] for s in game_seeds])
            self._states[:, engine.S_RNG] = words.view(np.int64)
            self._seeded = True
        elif seed is not None or not self._seeded:
            words = np.random.SeedSequence(seed).generate_state(n, np.uint64)
            self._states[:, engine.S_RNG] = words.view(np.int64)
            self._seeded = True
        obs = np.empty((n, self._size), np.float32)
        mask = np.empty((n, self._num_actions), np.int8)
        current = np.empty(n, np.int32)
        engine.reset_batch(
            self._states, self._match, self._information, scores, fixed, hands, boneyards, lengths, openers,
            self._finished, self._hand_points, self._hand_pips, self._score, self._blocked, self._winner,
            self._deal_hands, self._deal_boneyard, self._deal_opener, self._hand_number, obs, mask, current,
        )
        self._has_reset = True
        zeros = np.zeros((n, players), np.float32)
        return self._step_result(obs, mask, current, zeros, np.zeros(n, np.bool_), np.zeros(n, np.bool_), None)

    def _parse_seeds(self, seeds: object, seed: int | None) -> list[int] | None:
        if seeds is None:
            return None
        if seed is not None:
            raise ValueError("give either seed or options['seeds'], not both")
        if not isinstance(seeds, (list, tuple)) or len(seeds) != self.num_envs:
            raise ValueError(f"options['seeds'] must be a list of {self.num_envs} seeds, got {seeds!r}")
        return [check_int(f"options['seeds'][{i}]", value, minimum=0, maximum=MAX_SEED) for i, value in enumerate(seeds)]

    def _parse_scores(self, scores: object) -> np.ndarray:
        out = np.zeros((self.num_envs, engine.SEATS), np.int64)
        if scores is None:
            return out
        if not self._match:
            raise ValueError("options['scores'] needs episode='match'")
        if not isinstance(scores, Sequence) or isinstance(scores, str) or len(scores) != self.num_envs:
            raise ValueError(f"options['scores'] must be a list of {self.num_envs} entries (None or scores), got {scores!r}")
        players, goal = self.num_players, self.game.target
        for i, entry in enumerate(scores):
            if entry is None:
                continue
            if (
                not isinstance(entry, (Sequence, np.ndarray))
                or isinstance(entry, str)
                or len(entry) != players
                or not all(is_integer(s) and 0 <= s < goal for s in entry)
            ):
                raise ValueError(
                    f"options['scores'][{i}] must be {players} integers in 0..{goal - 1} (below the target), got {entry!r}"
                )
            out[i, :players] = [int(s) for s in entry]
        return out

    def _parse_deals(self, deals: object) -> tuple[np.ndarray, ...]:
        n = self.num_envs
        fixed = np.zeros(n, np.bool_)
        hands = np.zeros((n, engine.SEATS), np.int64)
        boneyards = np.zeros((n, self.game.num_tiles), np.int64)
        lengths = np.zeros(n, np.int64)
        openers = np.full(n, -1, np.int64)
        if deals is None:
            return fixed, hands, boneyards, lengths, openers
        if not isinstance(deals, Sequence) or isinstance(deals, str) or len(deals) != n:
            raise ValueError(f"options['deals'] must be a list of {n} entries (None or a deal dict), got {deals!r}")
        players = self.num_players
        for i, deal in enumerate(deals):
            if deal is None:
                continue
            where = f"options['deals'][{i}]"
            if not isinstance(deal, Mapping):
                # A malformed option is a ValueError throughout the project, type or value.
                raise ValueError(f"{where} must be None or a dict with keys hands, boneyard, opener, got {deal!r}")  # noqa: TRY004
            extra = sorted(str(key) for key in deal if key not in _DEAL_KEYS)
            if extra or "hands" not in deal or "boneyard" not in deal:
                raise ValueError(
                    f"{where} must hold 'hands' and 'boneyard' (and optionally 'opener'), got keys {sorted(map(str, deal))}"
                )
            opener = deal.get("opener")
            if opener is not None:
                openers[i] = check_int(f"{where}['opener']", opener, minimum=0, maximum=players - 1)
            try:
                state = self.game.state_from_deal(deal["hands"], deal["boneyard"], 0)
                if self._information:
                    check_history_room(self.game, len(state.boneyard))
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from None
            fixed[i] = True
            hands[i, :players] = state.hands
            lengths[i] = len(state.boneyard)
            boneyards[i, : lengths[i]] = state.boneyard
        return fixed, hands, boneyards, lengths, openers

    # ------------------------------------------------------------------ step

    def step(self, actions: Any, games: Any = None) -> VectorStep:
        """Play one action in every game: ``actions`` integer ``(num_envs,)``, one per game.

        Ended games (``autoreset=False``) ignore their entry.

        Args:
            actions: one action per game, or with ``games`` one per listed game.
            games: optional distinct game indices: only these games move (the others keep their
                state and are not returned); the result then has one row per listed game, in
                the order given. Learner views use it to let opponents move in the games where
                it is not the learner's turn.

        Raises:
            ValueError: for a wrong shape or type, or actions outside ``0..2T+1`` (``0..57`` in the
                seeds' game);
                :class:`draw_env.IllegalActionError` (a ``ValueError``) naming the games whose
                action is illegal and listing their legal actions. No game changes then.
        """
        if not self._has_reset:
            raise RuntimeError("call reset() before step()")
        rows = self._all if games is None else self._rows(games)
        n = len(rows)
        actions = np.asarray(actions)
        # The dtype's kind, not np.issubdtype (which costs a tenth of a one-game step): signed or
        # unsigned integers, never bools.
        if actions.shape != (n,) or actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({n},), got {actions.dtype} {actions.shape}")
        actions = actions.astype(np.int64, copy=False)
        obs = np.empty((n, self._size), np.float32)
        mask = np.empty((n, self._num_actions), np.int8)
        current = np.empty(n, np.int32)
        rewards = np.empty((n, self.num_players), np.float32)
        terminated = np.empty(n, np.bool_)
        hand_ended = np.empty(n, np.bool_)
        kernel = engine.step_batch if self.parallel else engine.step_batch_serial
        if kernel(
            self._states, rows, actions, self._match, self._scheme, self.autoreset, True, self._information, self._bad,
            self._finished, self._hand_points, self._hand_pips, self._score, self._blocked, self._winner,
            self._deal_hands, self._deal_boneyard, self._deal_opener, self._hand_number, obs, mask, current,
            rewards, terminated, hand_ended,
        ):
            self._raise_illegal(rows, actions, np.flatnonzero(self._bad[:n]))
        return self._step_result(obs, mask, current, rewards, terminated, hand_ended, None if games is None else rows)

    def _step_result(
        self, obs: np.ndarray, mask: np.ndarray, current: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
        hand_ended: np.ndarray, rows: np.ndarray | None,
    ) -> VectorStep:
        """The step's arrays with copies of what the games keep (of the games ``rows`` only, if given)."""
        kept = [info.copy() if rows is None else info[rows] for info in self._kept]
        hand_points, hand_pips, score, blocked, winner, hand_number, deal_hands, deal_boneyard, deal_opener = kept
        return VectorStep(
            obs, mask, current, rewards, terminated, np.zeros(len(current), np.bool_), hand_points, hand_pips, score,
            blocked, hand_ended, winner, hand_number, deal_hands, deal_boneyard, deal_opener,
        )

    def _raise_illegal(self, rows: np.ndarray, actions: np.ndarray, where: np.ndarray) -> NoReturn:
        """The error for the rows ``where`` of a step whose actions were refused."""
        num_actions = self._num_actions
        outside = where[(actions[where] < 0) | (actions[where] >= num_actions)]
        if len(outside):
            raise ValueError(
                f"actions must be integers in 0..{num_actions - 1} (Discrete({num_actions})); games "
                f"{_listed(rows[outside])} got {_listed(actions[outside])}"
            )
        raise IllegalActionError(self._illegal_message(rows[where], actions[where]))

    def _rows(self, games: Any) -> np.ndarray:
        """``games`` checked as distinct indices ``int64 (k,)``."""
        rows = np.asarray(games)
        if (
            rows.ndim != 1
            or not (np.issubdtype(rows.dtype, np.integer) and rows.dtype != np.bool_)
            or (rows.size and (rows.min() < 0 or rows.max() >= self.num_envs))
            or len(np.unique(rows)) != len(rows)
        ):
            raise ValueError(f"games must be distinct integers in 0..{self.num_envs - 1}, got {games!r}")
        return rows.astype(np.int64)

    def _illegal_message(self, games: np.ndarray, actions: np.ndarray) -> str:
        mask = np.zeros(self._num_actions, np.int8)
        details = []
        for game, action in zip(games[:5].tolist(), actions[:5].tolist()):
            engine.legal_mask(self._states[game], mask)
            legal = ", ".join(f"{a} ({action_name(int(a), game=self.game)})" for a in np.flatnonzero(mask))
            details.append(
                f"game {game}: action {action} ({action_name(action, game=self.game)}) is not legal for seat "
                f"{self._states[game, engine.S_CURRENT]}; legal actions: {legal}"
            )
        more = f"; and {len(games) - 5} more" if len(games) > 5 else ""
        return f"illegal actions in games {_listed(games)}; no game changed. " + "; ".join(details) + more

    # ------------------------------------------------------------------ observing

    def observe(self, seat: int) -> np.ndarray:
        """Every game's observation (or information state, by ``obs_type``) from absolute seat
        ``seat``'s view: float32 ``(num_envs, size)``."""
        if not self._has_reset:
            raise RuntimeError("call reset() before observe()")
        seat = check_int("seat", seat, minimum=0, maximum=self.num_players - 1)
        out = np.empty((self.num_envs, self._size), np.float32)
        engine.observe_batch(self._states, seat, self._match, self._information, out)
        return out

    def observe_seats(self, seats: Any) -> np.ndarray:
        """Game ``i``'s observation from absolute seat ``seats[i]``: float32 ``(num_envs, size)``."""
        if not self._has_reset:
            raise RuntimeError("call reset() before observe_seats()")
        seats = np.asarray(seats)
        if (
            seats.shape != (self.num_envs,)
            or not np.issubdtype(seats.dtype, np.integer)
            or seats.dtype == np.bool_
            or (seats.size and (seats.min() < 0 or seats.max() >= self.num_players))
        ):
            raise ValueError(f"seats must be integers in 0..{self.num_players - 1} of shape ({self.num_envs},)")
        out = np.empty((self.num_envs, self._size), np.float32)
        engine.observe_seats(self._states, seats.astype(np.int64), self._match, self._information, out)
        return out

    @property
    def action_mask(self) -> np.ndarray:
        """Every game's legal-action mask now, int8 ``(num_envs, 2T+2)`` (zeros in an ended game)."""
        if not self._has_reset:
            raise RuntimeError("call reset() before reading action_mask")
        mask = np.empty((self.num_envs, self._num_actions), np.int8)
        engine.masks_of(self._states, self._finished, mask)
        return mask

    @property
    def current_player(self) -> np.ndarray:
        """The seat to act in each game now, int32 ``(num_envs,)``."""
        return self._states[:, engine.S_CURRENT].astype(np.int32)

    @property
    def states(self) -> np.ndarray:
        """The engine states ``(num_envs, engine.state_size(max_pip))`` (``engine.history_state_size(game)``
        with ``obs_type="information_state"``), hidden tiles included: for tools,
        tests and centralised critics, never for agents. A read-only view."""
        view = self._states.view()
        view.flags.writeable = False
        return view

    def deals(self) -> list[dict[str, Any]]:
        """Each game's current hand as dealt, as reset options ``{hands, boneyard, opener}``."""
        return [engine.deal_of(state) for state in self._states]

    def close(self) -> None:
        """Nothing to release."""


def _listed(values: np.ndarray, limit: int = 20) -> str:
    shown = ", ".join(str(int(v)) for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}]"
