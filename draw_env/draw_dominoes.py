"""
# Draw dominoes

| Creation           | `draw_env.env(num_players=2, episode="hand", reward="zero_sum")` |
|--------------------|-------------------------------------------------------------------|
| Actions            | Discrete(58)                                                      |
| Parallel API       | No (`is_parallelizable` is False)                                 |
| Agents             | `['player_0', ..., 'player_{n-1}']`, n = 2, 3 or 4                 |
| Observation Shape  | `{"observation": (258,) float32, "action_mask": (58,) int8}`     |
| Observation Values | [0, HIGH] per entry (`draw_env.observation.HIGH`)                 |

Draw is the plain block-and-draw domino game with the double-six set: players join tiles to
either end of one line, may draw from the boneyard while it holds three or more tiles, pass only
when stuck at the last two, and score the pips left in the opponents' hands when they go out or
hold the single lowest total when the hand blocks. The rules live in `draw_env/rules.py`.

### Actions
`2 * tile + end` places tile id `tile` (canonical order `0:[0|0] ... 27:[6|6]`) at `end`
(0 left, 1 right); 56 draws; 57 passes. On an empty line only `2 * tile + 0` is legal.

### Observations
A dict with `observation` (the blocks of `draw_env.observation.BLOCKS`, relative seats: the
observer first, then clockwise) and `action_mask` (1 for each legal action of the agent to act,
all zeros for the others). Nothing in it depends on tiles the observer cannot see. With
`obs_type="information_state"` the vector is that observation followed by when the player drew
each tile and the hand's actions in order (perfect recall; `draw_env.observation.information_layout`).

### Rewards
Rewards arrive when a hand ends, for every agent. `zero_sum`: the agent's hand points minus
the mean of the other agents' hand points. `points`: the agent's own hand points. `win_loss`
(matches only): +1 to the match winner, -1/(n-1) to each other agent, 0 to all on a drawn
match. No scaling. Through `env()`, an illegal action ends the episode and gives the offender
`ILLEGAL_PENALTY[reward]` (-168, -168, -1) and every other agent 0.

### Infos
Every agent's info holds the integers `hand_points`, `hand_pips`, `score` and `blocked` at every
step (docs/environment.md, "Infos").

### Version History
* v0: Initial release.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Generic, TypeVar, overload

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import BaseWrapper

from draw_env import render
from draw_env.checks import check_bool, check_choice, check_int, check_seed, is_integer, warn_unknown_options
from draw_env.observation import (
    OBS_TYPES,
    InformationTable,
    ObservationTable,
    check_history_room,
    information_layout,
    layout,
)
from draw_env.rules import (
    EPISODES,
    LANGUAGES,
    NUM_ACTIONS,
    PLAYER_COUNTS,
    REWARDS,
    DrawState,
    IllegalActionError,
    check_reward_episode,
    hand_rewards,
    illegal_move_penalty,
    variant_game,
)

RENDER_MODES = ("human", "ansi", "rgb_array")
#: What an illegal action through ``env()`` costs the offender in the seeds' game
#: (:func:`draw_env.rules.illegal_move_penalty` gives a variant's).
ILLEGAL_PENALTY = {reward: illegal_move_penalty(reward) for reward in REWARDS}
_OPTION_KEYS = ("hands", "boneyard", "opener", "scores")


def env(**kwargs: Any) -> GuardedEnv:
    """The environment with PettingZoo's standard protections (see :class:`GuardedEnv`).

    Takes the same arguments as :class:`raw_env`.
    """
    return GuardedEnv(raw_env(**kwargs))


class raw_env(AECEnv):
    """The Draw dominoes AEC environment without protections: an illegal action raises.

    Args:
        num_players: 2, 3 or 4.
        episode: ``"hand"`` (one hand) or ``"match"`` (hands until someone reaches the target).
        reward: ``"zero_sum"``, ``"points"`` or, with ``episode="match"``, ``"win_loss"``.
        render_mode: ``None``, ``"human"`` (prints the text), ``"ansi"`` (returns the text) or
            ``"rgb_array"`` (returns a ``uint8 (480, 800, 3)`` picture); see :mod:`draw_env.render`.
        lang: language of the line description: ``"en"``, ``"ja"`` or ``"it"``.
        reveal_hands: show every hand (and, in the text, the boneyard) face up in ``render()``,
            for spectators; by default hands are hidden until the hand ends.
        max_pip, hand_size, protected: the variant (:class:`draw_env.rules.DrawGame`): the
            double-``max_pip`` set (2 to 9), tiles dealt to each player (``None``: 7, or 6 with
            4 players) and boneyard tiles never drawn. The defaults are the seeds' game. A set of
            ``T`` tiles has ``Discrete(2T + 2)`` actions and its own observation length.
        obs_type: what ``observation`` holds: ``"observation"`` (the default; what the player
            sees now) or ``"information_state"`` (that observation followed by when the player drew
            each tile and the hand's actions in order: perfect recall; :func:`draw_env.observation.information_layout`).
        variant: a named variant of :data:`draw_env.rules.VARIANTS` (``"micro"``, ``"mini"``,
            ``"midi"``, ``"draw"``) instead of the three numbers; a number left at its default
            takes the variant's, any other must be the variant's own (else ``ValueError``).

    Copies (``copy.deepcopy``, ``pickle``, ``cloudpickle``) hold the whole running game, the deal
    RNG included: a copy continues exactly like the original under the same actions, and the two
    share nothing. (PettingZoo's classic environments pickle through ``EzPickle``, which rebuilds
    an empty environment from the constructor arguments; this one pickles its state.)
    """

    metadata = {
        "name": "draw_dominoes_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        num_players: int = 2,
        episode: str = "hand",
        reward: str = "zero_sum",
        render_mode: str | None = None,
        lang: str = "en",
        reveal_hands: bool = False,
        max_pip: int = 6,
        hand_size: int | None = None,
        protected: int = 2,
        obs_type: str = "observation",
        *,
        variant: str | None = None,
    ) -> None:
        super().__init__()
        num_players = check_choice("num_players", num_players, PLAYER_COUNTS)
        check_choice("episode", episode, EPISODES)
        check_choice("reward", reward, REWARDS)
        check_reward_episode(reward, episode)
        check_choice("render_mode", render_mode, (None, *RENDER_MODES))
        check_choice("lang", lang, LANGUAGES)
        self.obs_type = check_choice("obs_type", obs_type, OBS_TYPES)
        self.game = variant_game(num_players, variant, max_pip, hand_size, protected)
        self.episode = episode
        self.reward_scheme = reward
        self.render_mode = render_mode
        self.lang = lang
        self.reveal_hands = check_bool("reveal_hands", reveal_hands)
        self.possible_agents = [f"player_{seat}" for seat in range(num_players)]
        information = obs_type == "information_state"
        observed = information_layout(self.game) if information else layout(self.game)
        num_actions = self._num_actions = self.game.num_actions
        self._draw_action = self.game.draw_action
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, observed.high, (observed.size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(num_actions) for agent in self.possible_agents}
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        match = episode == "match"
        self._table: InformationTable | ObservationTable = (
            InformationTable(self.game, match) if information else ObservationTable(self.game, match)
        )
        self._rng = random.Random()  # from entropy, until a reset gives a seed
        self._state: DrawState | None = None
        self._mask: bytes | None = None  # the acting agent's mask, computed on demand
        self._rewards_pending = False  # rewards were handed out at the last step
        self._infos_pending = False  # infos describe a hand that ended at the last step
        self._last_action: tuple[int, int] | None = None  # (seat, action), for render()
        self._finished_hand: DrawState | None = None  # the hand a match step ended, for render()

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset

    @property
    def state_ref(self) -> DrawState:
        """The rules state, hidden tiles included: for tests and tools, never for agents."""
        if self._state is None:
            raise RuntimeError("call reset() before reading the state")
        return self._state

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        """Deal a new episode from the seeded RNG, or the deal fixed by ``options``.

        Args:
            seed: ``None`` (go on with the environment's RNG; the first reset seeds it from
                entropy) or a non-negative integer, Python or NumPy.
            options: all optional: ``hands`` and ``boneyard`` together fix the deal (tiles as
                ids, ``(a, b)`` pairs or strict ``"[a|b]"`` strings, see
                :func:`draw_env.tiles.tile_id`), ``opener`` the seat that leads, and with
                ``episode="match"`` ``scores`` the starting scores (each below the target).
                Unknown keys are ignored with a warning.

        Raises:
            ValueError: for a bad seed or option; the environment, its RNG included, is then
                left exactly as it was.
        """
        seed = check_seed("seed", seed)
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict of reset options ({', '.join(_OPTION_KEYS)}), got {options!r}")
        rng = self._rng if seed is None else random.Random(seed)
        state = self._deal(dict(options) if options else {}, rng)
        self._rng = rng
        self._state = state
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: _info(state, seat) for seat, agent in enumerate(self.agents)}
        self.agent_selection = self.agents[state.current]
        self._table.rebuild(state)
        self._mask = None
        self._rewards_pending = False
        self._infos_pending = False
        self._last_action = None
        self._finished_hand = None

    def _deal(self, options: dict[str, Any], rng: random.Random) -> DrawState:
        """The first state of the episode; ``rng`` moves on only if no ``ValueError`` is raised."""
        warn_unknown_options(options, _OPTION_KEYS, stacklevel=3)
        game = self.game
        opener = options.get("opener")
        if opener is not None:
            try:
                opener = check_int("opener", opener, minimum=0, maximum=game.num_players - 1)
            except ValueError:
                raise ValueError(f"options['opener'] must be a seat in 0..{game.num_players - 1}, got {opener!r}") from None
        scores = options.get("scores")
        if scores is not None:
            if self.episode != "match":
                raise ValueError("options['scores'] needs episode='match'")
            if (
                not isinstance(scores, (list, tuple))
                or len(scores) != game.num_players
                or not all(is_integer(s) and 0 <= s < game.target for s in scores)
            ):
                raise ValueError(
                    f"options['scores'] must be {game.num_players} integers in 0..{game.target - 1} "
                    f"(below the target), got {scores!r}"
                )
            scores = [int(s) for s in scores]
        if ("hands" in options) != ("boneyard" in options):
            raise ValueError("options['hands'] and options['boneyard'] fix a deal together: give both or neither")
        if "hands" not in options:
            return game.new_state(rng, opener=opener, scores=scores)  # cannot fail: all checked above
        before = rng.getstate()
        if opener is None:
            opener = rng.randrange(game.num_players)
        try:
            state = game.state_from_deal(options["hands"], options["boneyard"], opener, scores)
            if self.obs_type == "information_state":
                check_history_room(game, len(state.boneyard))
            return state
        except ValueError as error:
            rng.setstate(before)
            raise ValueError(f"options['hands'] / options['boneyard']: {error}") from None

    # ------------------------------------------------------------------ observing

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self._state is None:
            raise RuntimeError("call reset() before observe()")
        seat = self._seat[agent]
        if agent == self.agent_selection and not self.terminations[agent] and not self.truncations[agent]:
            if self._mask is None:
                mask = bytearray(self._num_actions)
                for action in self._state.legal_actions():
                    mask[action] = 1
                self._mask = bytes(mask)
            action_mask = np.frombuffer(bytearray(self._mask), np.int8)
        else:
            action_mask = np.zeros(self._num_actions, np.int8)
        return {"observation": self._table.observe(seat), "action_mask": action_mask}

    # ------------------------------------------------------------------ stepping

    def step(self, action: int | np.integer | None) -> None:
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        if not self.agents:
            raise RuntimeError("every agent is done: call reset() to start a new episode")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is not int or not 0 <= action < self._num_actions:
            action = as_action(action, self._num_actions)  # raises ValueError outside the space
        state = self._state
        seat = state.current
        drawn = state.boneyard[0] if action == self._draw_action and state.boneyard else -1
        state.apply_action(action)  # raises IllegalActionError and changes nothing if illegal
        self._mask = None
        self._last_action = (seat, action)
        self._finished_hand = None
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_pending:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewards_pending = False
        if self._infos_pending:
            self.infos = {other: _info(state, s) for s, other in enumerate(self.agents)}
            self._infos_pending = False
        if state.result is None:
            self._table.record(state, seat, action, drawn)
            self.infos[agent] = _info(state, seat)
            self.agent_selection = self.agents[state.current]
        else:
            self._end_hand(state)
        if self.render_mode == "human":
            self.render()

    def _end_hand(self, state: DrawState) -> None:
        # Built before a match deals on, so that they describe the hand that ended.
        self.infos = {agent: _info(state, seat) for seat, agent in enumerate(self.agents)}
        self._infos_pending = True
        episode_over = self.episode == "hand" or state.is_match_over
        rewards = hand_rewards(self.reward_scheme, state, episode_over)
        self.rewards = {agent: rewards[seat] for seat, agent in enumerate(self.agents)}
        self._rewards_pending = True
        self._accumulate_rewards()
        if episode_over:
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self._finished_hand = state.clone()  # render() shows the result before the next deal
            state.next_hand(self._rng)
            self.agent_selection = self.agents[state.current]
        self._table.rebuild(state)

    # ------------------------------------------------------------------ rendering

    def render(self) -> str | np.ndarray | None:
        """The text (``"ansi"``; ``"human"`` prints it) or the picture (``"rgb_array"``).

        Both show the last action and who made it; at the step that ends a hand, that hand's
        result with every hand revealed (in a match, before the next deal, which follows in the
        text); at the match end, the winner.
        """
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn(
                "render() was called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'"
            )
            return None
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        scene = render.Scene(self._state, self.episode, self._last_action, self._finished_hand, self.reveal_hands)
        if self.render_mode == "rgb_array":
            return render.render_rgb(scene)
        text = render.render_text(scene, self.lang)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def state(self) -> np.ndarray:
        """The full-information table (every hand included), for centralised critics."""
        if self._state is None:
            raise RuntimeError("call reset() before state()")
        return self._table.table.copy()

    def close(self) -> None:
        """Nothing to release: rendering draws into fresh NumPy arrays."""


def _info(state: DrawState, seat: int) -> dict[str, int]:
    """``seat``'s info: ``hand_points``, ``hand_pips``, ``score``, ``blocked`` (``docs/environment.md``,
    Infos); once the hand is over, about the hand that ended."""
    result = state.result
    if result is None:  # the step path: keep it to one dict display
        return {"hand_points": 0, "hand_pips": state.hand_pips(seat), "score": state.scores[seat], "blocked": 0}
    return {
        "hand_points": result.points[seat],
        "hand_pips": result.pips[seat],
        "score": state.scores[seat],
        "blocked": int(result.kind == "blocked"),
    }


def as_action(action: object, num_actions: int = NUM_ACTIONS) -> int:
    """``action`` as an ``int``: what ``step`` accepts, Python and NumPy integers (also 0-d or
    one-element arrays) in ``0..num_actions - 1`` (57 in the seeds' game); a ``ValueError`` for
    anything else.

    The one normalisation of an action: the environment and the wrappers that look at actions
    (:class:`draw_env.io.records.RecordingWrapper`) all go through it.
    """
    if isinstance(action, np.ndarray) and action.size == 1:
        action = action.reshape(()).item()
    if isinstance(action, np.integer):
        action = int(action)
    if type(action) is not int or not 0 <= action < num_actions:
        raise ValueError(
            f"action must be an integer in 0..{num_actions - 1} (Discrete({num_actions})), got {action!r}"
        )
    return action


_Value = TypeVar("_Value")


class _AfterReset(Generic[_Value]):
    """An attribute of the wrapped environment that :class:`GuardedEnv` lets be read only after
    ``reset()``: a descriptor, as cheap as a property, rather than a ``__getattr__`` look-up."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.before_reset = f"call reset() before reading {name}"

    @overload
    def __get__(self, wrapper: None, owner: type) -> _AfterReset[_Value]: ...
    @overload
    def __get__(self, wrapper: GuardedEnv, owner: type) -> _Value: ...
    def __get__(self, wrapper: GuardedEnv | None, owner: type) -> _AfterReset[_Value] | _Value:
        if wrapper is None:
            return self
        if not wrapper._has_reset:
            raise RuntimeError(self.before_reset)
        return getattr(wrapper.env, self.name)

    def __set__(self, wrapper: GuardedEnv, value: _Value) -> None:
        raise AttributeError(f"{self.name} of {type(wrapper).__name__} is read-only")


class GuardedEnv(BaseWrapper):
    """PettingZoo's TerminateIllegal, AssertOutOfBounds and OrderEnforcing protections, fused.

    * an action outside the action space raises ``ValueError``; nothing changes;
    * an illegal action ends the episode with a warning (:func:`draw_env.rules.illegal_move_penalty`:
      the offender gets the worst outcome, the others 0), and the game state stays as it was;
    * ``step``, ``observe``, ``render``, ``state`` and ``agent_iter`` before ``reset`` raise,
      and stepping once every agent is done warns.

    The hot attributes are descriptors rather than ``__getattr__`` look-ups: the three
    separate wrappers cost more than the whole environment step.
    """

    def __init__(self, env: raw_env) -> None:
        super().__init__(env)
        self._penalty = illegal_move_penalty(env.reward_scheme, env.game)
        self._has_reset = False

    def _require_reset(self, what: str) -> None:
        if not self._has_reset:
            raise RuntimeError(f"call reset() before {what}")

    agents: _AfterReset[list[str]] = _AfterReset()
    agent_selection: _AfterReset[str] = _AfterReset()
    rewards: _AfterReset[dict[str, float]] = _AfterReset()
    terminations: _AfterReset[dict[str, bool]] = _AfterReset()
    truncations: _AfterReset[dict[str, bool]] = _AfterReset()
    infos: _AfterReset[dict[str, dict[str, int]]] = _AfterReset()

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        return self.env._cumulative_rewards

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self._has_reset = True

    def last(self, observe: bool = True):
        self._require_reset("last()")
        return self.env.last(observe)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        self._require_reset("observe()")
        return self.env.observe(agent)

    def agent_iter(self, max_iter: int = 2**63):
        self._require_reset("agent_iter()")
        return super().agent_iter(max_iter)

    def render(self) -> str | np.ndarray | None:
        self._require_reset("render()")
        return self.env.render()

    def state(self) -> np.ndarray:
        self._require_reset("state()")
        return self.env.state()

    def step(self, action: int | np.integer | None) -> None:
        self._require_reset("step()")
        base = self.env
        if not base.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        try:
            base.step(action)
        except IllegalActionError:
            self._terminate_for_illegal_move()

    def _terminate_for_illegal_move(self) -> None:
        base = self.env
        offender = base.agent_selection
        EnvLogger.warn_on_illegal_move()
        base._mask = None
        base.rewards = {agent: 0.0 for agent in base.agents}
        base.rewards[offender] = self._penalty
        base._rewards_pending = True
        base._cumulative_rewards[offender] = 0.0
        base._accumulate_rewards()
        base.terminations = dict.fromkeys(base.agents, True)

    def __str__(self) -> str:
        return str(self.env)
