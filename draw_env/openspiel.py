"""Draw dominoes as an OpenSpiel game: ``pyspiel.load_game("python_draw_dominoes")``.

Importing this module registers the game with pyspiel (it needs the ``openspiel`` extra). The
rules are :mod:`draw_env.rules`: every state wraps a :class:`~draw_env.rules.DrawState`, so
there is no second implementation of the game.

Parameters (``pyspiel.load_game("python_draw_dominoes(players=3,episode=match)")``):

========== ============================================ ===========================================
parameter  values                                       meaning
========== ============================================ ===========================================
players    2 (default), 3, 4                            seats, each for themselves
episode    ``"hand"`` (default), ``"match"``            one hand, or hands until someone reaches
                                                        the target (100 with 2 players, 61 else)
reward     ``"zero_sum"`` (default), ``"points"``,      as the AEC environment's ``reward``;
           ``"win_loss"`` (match only)                  ``returns()`` are the sums of its rewards
========== ============================================ ===========================================

**Chance.** Every random event is an explicit chance node, with exact probabilities:

* the opener lottery of the first hand (outcome = seat, each ``1/n``);
* the deal, tile by tile: seat 0's tiles first, then seat 1's, ... (outcome = tile id, uniform
  over the tiles not dealt yet); the tiles left over form the boneyard, in no order yet;
* each draw: the player chooses action 56 (draw) and a chance node picks the tile, uniform over
  the boneyard's tiles. A shuffled boneyard drawn from the front gives every remaining tile the
  same chance to come next, the two that end up protected included, so drawing lazily is the
  same game as shuffling first. The rules core keeps its boneyard as a list drawn from the
  front: the tile chance picks is moved to the front before the core draws it.

So the history (``state.history()``) reproduces a game exactly, and :func:`deal_actions` turns a
deal of the AEC environment (``hands`` and ``opener``) into the chance outcomes that deal it.
In match mode the later hands are dealt by chance nodes the same way; their opener moves one
seat clockwise, as in the rules.

**Information.** ``observation_tensor(p)`` is the AEC environment's 258-entry observation vector
of seat ``p`` (:mod:`draw_env.observation`), ``observation_string(p)`` the same facts as text.
``information_state_string(p)`` is perfect recall within the hand: the tiles dealt to ``p`` and
every action since, with the tile of each of ``p``'s own draws and nothing of the others'.
``information_state_tensor(p)`` is the observation vector plus one 28-entry block, the order in
which ``p`` drew each tile it drew this hand (k for its k-th draw), a fixed-size summary. In a
match, earlier hands enter both only through the scores: they have no bearing on the rest of
the match beyond them (this is the one place where the information state forgets).

**Resampling.** ``resample_from_infostate(p, sampler)`` deals the tiles ``p`` cannot see with
:meth:`draw_env.rules.PlayerView.sample_state` (uniform over the deals consistent with the hand
sizes and the values each opponent showed it lacks), then rebuilds a whole history consistent
with it: which of each opponent's tiles it was dealt and which it drew at each of its draws
(uniformly among the assignments that had every placed tile in hand before it was placed).
Every consistent history is equally likely under the deal, so this samples the information set
exactly, as far as chance is concerned (opponents' policies are not modelled). This is what
OpenSpiel's Python ``ISMCTSBot`` calls.

**Positions.** :meth:`DrawDominoesGame.new_state_from_position` starts a state from any
:class:`~draw_env.rules.DrawState` in play (for example one dealt from an agent's observation):
its information states describe that position as each seat sees it, then the actions since.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyspiel

from draw_env import tiles
from draw_env.checks import check_choice, check_int
from draw_env.observation import OBSERVATION_SIZE, OFFSETS, SEATS, ObservationTable
from draw_env.rules import (
    DRAW,
    EPISODES,
    MAX_HAND_POINTS,
    NUM_ACTIONS,
    PLAYER_COUNTS,
    PROTECTED_BONEYARD,
    REWARDS,
    DrawGame,
    DrawState,
    action_name,
    check_reward_episode,
    hand_rewards,
    next_opener,
)
from draw_env.tiles import NUM_TILES

SHORT_NAME = "python_draw_dominoes"
PARAMETERS: dict[str, Any] = {"players": 2, "episode": "hand", "reward": "zero_sum"}
#: A match has no finite worst case (a blocked hand with a shared lowest total scores nothing, and
#: so can follow itself for ever), but OpenSpiel wants a bound: ``max_game_length`` of a match
#: assumes at most this many hands (at most 199 hands can score, each at least a point, with 2 players).
MAX_MATCH_HANDS = 1000
#: Size of the ``drawn`` block that the information state tensor adds to the observation vector.
DRAWN_SIZE = NUM_TILES
INFORMATION_STATE_SIZE = OBSERVATION_SIZE + DRAWN_SIZE

_ALL_TILES = frozenset(range(NUM_TILES))
_CHANCE = int(pyspiel.PlayerId.CHANCE)
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
#: A line of a serialized state: one action id, plain ASCII digits.
_ACTION_LINE = re.compile(r"0|[1-9][0-9]?")
# Phases of the hand in play.
_OPENER, _DEAL, _PLAY, _DRAWING, _OVER = range(5)


def _game_type(reward: str, episode: str) -> pyspiel.GameType:
    """The game type; utility and reward model depend on the parameters."""
    zero_sum = reward != "points"
    per_hand = episode == "match" and reward != "win_loss"
    return pyspiel.GameType(
        short_name=SHORT_NAME,
        long_name="Python Draw dominoes",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.REWARDS if per_hand else pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=SEATS,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        provides_factored_observation_string=False,
        parameter_specification=PARAMETERS,
    )


def max_hand_length(num_players: int) -> int:
    """An upper bound on the decisions of one hand: every placement, draw and pass.

    At most 26 tiles are ever held (two stay in the boneyard), so at most 26 placements; passes
    happen only once drawing is over, at most ``n - 1`` between two placements and ``n`` at the end.
    """
    game = DrawGame(num_players)
    placements = NUM_TILES - PROTECTED_BONEYARD
    draws = NUM_TILES - num_players * game.hand_size - PROTECTED_BONEYARD
    return placements + draws + (num_players - 1) * (placements - 1) + num_players


class DrawDominoesGame(pyspiel.Game):
    """The OpenSpiel game; build it with ``pyspiel.load_game`` (see the module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**PARAMETERS, **(params or {})}
        unknown = sorted(set(params) - set(PARAMETERS))
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(unknown)}; known: {', '.join(PARAMETERS)}")
        players = check_choice("players", params["players"], PLAYER_COUNTS)
        episode = check_choice("episode", params["episode"], EPISODES)
        reward = check_choice("reward", params["reward"], REWARDS)
        check_reward_episode(reward, episode)
        self.rules = DrawGame(players)
        self.episode = episode
        self.reward = reward
        self.match = episode == "match"
        target = self.rules.target
        if reward == "win_loss":
            low, high = -1.0, 1.0
        else:
            # In a match a seat ends with at most target - 1 + one hand's points.
            high = float(target - 1 + MAX_HAND_POINTS if self.match else MAX_HAND_POINTS)
            low = -high if reward == "zero_sum" else 0.0
        hand_length = max_hand_length(players)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_TILES,
            num_players=players,
            min_utility=low,
            max_utility=high,
            utility_sum=None if reward == "points" else 0.0,
            max_game_length=hand_length * (MAX_MATCH_HANDS if self.match else 1),
        )
        super().__init__(_game_type(reward, episode), info, {"players": players, "episode": episode, "reward": reward})

    def new_initial_state(self) -> DrawDominoesState:
        """The state before the opener lottery and the deal."""
        return DrawDominoesState(self)

    def new_state_from_position(self, position: DrawState) -> DrawDominoesState:
        """A state that starts at ``position`` (a hand in play; it is copied, not kept).

        Information states describe the position as each seat sees it, then the actions since.

        Raises:
            ValueError: if ``position`` has another number of players or its hand is over.
        """
        if position.num_players != self.rules.num_players:
            raise ValueError(f"position has {position.num_players} players, the game {self.rules.num_players}")
        if position.result is not None:
            raise ValueError("position must be a hand in play, got a finished hand")
        state = DrawDominoesState(self)
        state._play.start_position(position)
        return state

    def deserialize_state(self, text: str) -> DrawDominoesState:
        """The state that :meth:`DrawDominoesState.serialize` wrote: its history replayed.

        ``text`` is OpenSpiel's history format, one action per line (chance outcomes included);
        each line must be a plain integer, legal where it is applied, and ``text`` at most
        three characters per action of :meth:`max_history_length`. Nothing in it is unpickled
        or evaluated (OpenSpiel's default for Python games unpickles a ``__dict__`` line).

        Raises:
            ValueError: naming the line and what is wrong with it, e.g. ``python_draw_dominoes
                state text, line 17: action 57 (pass) is not legal here; legal: 0, 56``.
        """
        where = f"{SHORT_NAME} state text"
        if not isinstance(text, str):
            raise ValueError(f"{where} must be a str, got {type(text).__name__}")  # noqa: TRY004
        limit = 3 * self.max_history_length() + 1
        if len(text) > limit:
            raise ValueError(f"{where} has {len(text)} characters, more than the {limit} of the longest game")
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()  # the newline that ends the last action
        state = self.new_initial_state()
        for number, line in enumerate(lines, 1):
            if not _ACTION_LINE.fullmatch(line):
                raise ValueError(f"{where}, line {number}: must be an action id (an integer), got {line[:40]!r}")
            action = int(line)
            if state.is_terminal():
                raise ValueError(f"{where}, line {number}: the game is over, yet the text goes on with {action}")
            legal = state.legal_actions()
            if action not in legal:
                name = f"chance outcome {action}" if state.is_chance_node() else f"action {action} ({action_name(action)})"
                raise ValueError(f"{where}, line {number}: {name} is not legal here; legal: {', '.join(map(str, legal))}")
            state.apply_action(action)
        return state

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> DrawDominoesObserver:
        """The observer behind the observation (default) and information state (perfect recall)."""
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        return DrawDominoesObserver(self, iig_obs_type)


class _Play:
    """Everything a state holds, in one object that copies itself quickly.

    OpenSpiel clones a Python state by deep-copying each attribute; this one does it with
    :meth:`DrawState.clone` and list copies.
    """

    __slots__ = (
        "core",
        "dealt",
        "events",
        "hand_number",
        "hand_start",
        "lineage",
        "match",
        "moves",
        "num_players",
        "opener",
        "phase",
        "returns",
        "reward",
        "rewards",
        "rules",
        "scores",
        "start",
    )

    def __init__(self, rules: DrawGame, match: bool, reward: str) -> None:
        self.rules = rules
        self.num_players = num_players = rules.num_players
        self.match = match
        self.reward = reward
        #: The hand in play, from the end of its deal.
        self.core: DrawState | None = None
        self.phase = _OPENER
        self.hand_number = 0
        #: Match scores before the hand in play.
        self.scores = [0] * num_players
        self.opener = -1
        #: Tiles dealt so far in this hand, in deal order (seat 0's first).
        self.dealt: list[int] = []
        #: This hand's actions: ``(seat, action, tile drawn or -1)``.
        self.events: list[tuple[int, int, int]] = []
        #: The position this hand started from, when it did not start with a deal (never mutated).
        self.start: DrawState | None = None
        #: The position the whole game started from, if any (never mutated).
        self.lineage: DrawState | None = None
        #: Actions applied before this hand's first one.
        self.hand_start = 0
        self.moves = 0
        self.returns = [0.0] * num_players
        #: Rewards since the last decision (chance nodes carry them to the next decision).
        self.rewards = [0.0] * num_players

    def __deepcopy__(self, memo: dict[int, Any]) -> _Play:
        other = _Play.__new__(_Play)
        other.rules = self.rules
        other.num_players = self.num_players
        other.match = self.match
        other.reward = self.reward
        other.core = None if self.core is None else self.core.clone()
        other.phase = self.phase
        other.hand_number = self.hand_number
        other.scores = self.scores[:]
        other.opener = self.opener
        other.dealt = self.dealt[:]
        other.events = self.events[:]
        other.start = self.start
        other.lineage = self.lineage
        other.hand_start = self.hand_start
        other.moves = self.moves
        other.returns = self.returns[:]
        other.rewards = self.rewards[:]
        return other

    def start_position(self, position: DrawState) -> None:
        self.core = position.clone()
        self.start = self.lineage = position.clone()
        self.scores = list(position.scores)
        self.opener = position.opener
        self.phase = _PLAY


class DrawDominoesState(pyspiel.State):
    """A state of ``python_draw_dominoes``: a hand of the rules core plus its chance nodes."""

    def __init__(self, game: DrawDominoesGame) -> None:
        super().__init__(game)
        # One attribute: OpenSpiel clones a Python state by deep-copying each of them.
        self._play = _Play(game.rules, game.match, game.reward)

    # ------------------------------------------------------------------ reading

    @property
    def core(self) -> DrawState | None:
        """The rules state of the hand in play (``None`` while it is being dealt); do not modify."""
        return self._play.core

    def current_player(self) -> int:
        play = self._play
        if play.phase == _PLAY:
            assert play.core is not None
            return play.core.current
        return _TERMINAL if play.phase == _OVER else _CHANCE

    def is_terminal(self) -> bool:
        return self._play.phase == _OVER

    def _legal_actions(self, player: int) -> list[int]:
        core = self._play.core
        assert core is not None and player == core.current
        return core.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        play = self._play
        if play.phase == _OPENER:
            return [(seat, 1.0 / play.num_players) for seat in range(play.num_players)]
        if play.phase == _DEAL:
            outcomes = sorted(_ALL_TILES - set(play.dealt))
        elif play.phase == _DRAWING:
            assert play.core is not None
            outcomes = sorted(play.core.boneyard)
        else:
            raise ValueError("chance_outcomes() needs a chance node")
        probability = 1.0 / len(outcomes)
        return [(tile, probability) for tile in outcomes]

    def returns(self) -> list[float]:
        return self._play.returns[:]

    def rewards(self) -> list[float]:
        return self._play.rewards[:]

    # ------------------------------------------------------------------ playing

    def _apply_action(self, action: int) -> None:
        play = self._play
        action = int(action)
        phase = play.phase
        if phase == _OVER:
            raise ValueError("the game is over: no action applies")
        if phase == _PLAY:
            core = play.core
            assert core is not None
            seat = core.current
            if action == DRAW:
                if not core.is_legal(DRAW):
                    core.apply_action(DRAW)  # raises IllegalActionError naming the legal actions
                play.phase = _DRAWING
                play.events.append((seat, DRAW, -1))
            else:
                core.apply_action(action)  # raises, changing nothing, if the action is illegal
                play.events.append((seat, action, -1))
            play.rewards = [0.0] * play.num_players
            play.moves += 1
            if core.result is not None:
                self._end_hand()
            return
        possible = [outcome for outcome, _ in self.chance_outcomes()]
        if action not in possible:
            raise ValueError(f"chance outcome {action} is not possible here; possible: {possible}")
        play.moves += 1
        if phase == _OPENER:
            play.opener = action
            play.phase = _DEAL
        elif phase == _DEAL:
            play.dealt.append(action)
            rules = play.rules
            size = rules.hand_size
            if len(play.dealt) == rules.num_players * size:
                hands = [play.dealt[seat * size : (seat + 1) * size] for seat in range(rules.num_players)]
                boneyard = sorted(set(range(NUM_TILES)) - set(play.dealt))
                play.core = rules.state_from_deal(hands, boneyard, play.opener, play.scores)
                play.phase = _PLAY
        else:
            core = play.core
            assert core is not None
            # The core draws from the front of its boneyard: put the tile chance picked there.
            core.boneyard.remove(action)
            core.boneyard.insert(0, action)
            seat, _, _ = play.events[-1]
            core.apply_action(DRAW)
            play.events[-1] = (seat, DRAW, action)
            play.phase = _PLAY

    def _end_hand(self) -> None:
        play = self._play
        core = play.core
        assert core is not None and core.result is not None
        match_over = not play.match or core.is_match_over
        rewards = hand_rewards(play.reward, core, match_over)
        play.rewards = rewards
        play.returns = [total + reward for total, reward in zip(play.returns, rewards)]
        if match_over:
            play.phase = _OVER
            return
        # The next hand of the match: dealt by chance nodes, opened one seat clockwise.
        play.scores = list(core.scores)
        play.opener = next_opener(core.opener, play.num_players)
        play.hand_number += 1
        play.hand_start = play.moves
        play.dealt = []
        play.events = []
        play.start = None
        play.core = None
        play.phase = _DEAL

    # ------------------------------------------------------------------ text

    def _action_to_string(self, player: int, action: int) -> str:
        if player != _CHANCE:
            return action_name(int(action))
        play = self._play
        phase = play.phase
        if phase == _OPENER:
            return f"Opener: player {action}"
        if phase == _DEAL:
            size = play.rules.hand_size
            return f"Deal {tiles.NAMES[action]} to player {len(self._play.dealt) // size}"
        return f"Draw {tiles.NAMES[action]}"

    def __str__(self) -> str:
        play = self._play
        if play.core is None:
            dealt = " ".join(tiles.NAMES[tile] for tile in play.dealt)
            opener = "not drawn yet" if play.phase == _OPENER else play.opener
            return f"hand {play.hand_number}, dealing; opener {opener}; scores {play.scores}; dealt: {dealt}"
        events = " ".join(_event_token(event, None) for event in play.events)
        pending = " (drawing)" if play.phase == _DRAWING else ""
        return f"hand {play.hand_number}{pending}: {play.core!r}; actions: {events}"

    # ------------------------------------------------------------------ serialization

    def serialize(self) -> str:
        """The history, one action per line (OpenSpiel's format for C++ games): no pickle.

        :meth:`DrawDominoesGame.deserialize_state` replays it. A state made by
        :meth:`DrawDominoesGame.new_state_from_position` has no history from the initial state
        and cannot be serialized (``ValueError``).
        """
        if self._play.lineage is not None:
            raise ValueError(
                "a state made by new_state_from_position cannot be serialized: its history does not "
                "start from the initial state"
            )
        return "".join(f"{action}\n" for action in self.history())

    # ------------------------------------------------------------------ resampling

    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float]) -> DrawDominoesState:
        """A state ``player_id`` cannot tell from this one, drawn from its information set.

        Args:
            player_id: the seat whose information set is sampled.
            probability_sampler: a callable giving uniform numbers in [0, 1) (OpenSpiel's
                ``pyspiel.UniformProbabilitySampler``); two calls seed the sampling.

        Raises:
            ValueError: if ``player_id`` is not a seat (an integer in ``0..n-1``), or during a deal
                or once the game is over (nothing is hidden to sample).
        """
        play = self._play
        player = check_int("player_id", player_id, minimum=0, maximum=play.num_players - 1)
        if play.core is None or play.phase == _OVER:
            raise ValueError("resample_from_infostate needs a hand in play (not its deal, not the end)")
        seed = int(probability_sampler() * 2**32) << 32 | int(probability_sampler() * 2**32)
        rng = random.Random(seed)
        sampled = play.core.view(player).sample_state(rng)
        start_tiles, drawn_tiles = _reconstruct(play, player, sampled.hands, rng)
        game = self.get_game()
        if play.start is not None:
            root = play.start.clone()
            root.hands = [tiles.mask_of(hand) for hand in start_tiles]
            held = tiles.mask_of(tile for hand in start_tiles for tile in hand)
            root.boneyard = list(tiles.tiles_in(tiles.ALL_TILES_MASK & ~root.line_mask & ~held))
            state = game.new_state_from_position(root)
        else:
            if play.lineage is not None:
                state = game.new_state_from_position(play.lineage)
            else:
                state = game.new_initial_state()
            for action in self.history()[: play.hand_start]:
                state.apply_action(action)
            if play.hand_number == 0 and play.lineage is None:
                state.apply_action(play.opener)
            for hand in start_tiles:
                for tile in hand:
                    state.apply_action(tile)
        draws = [iter(seat_draws) for seat_draws in drawn_tiles]
        for seat, action, tile in play.events:
            state.apply_action(action)
            if action == DRAW and tile >= 0:  # a draw still waiting for its tile stays so
                state.apply_action(next(draws[seat]))
        return state


def _reconstruct(
    play: _Play, player: int, hands: Sequence[int], rng: random.Random
) -> tuple[list[list[int]], list[list[int]]]:
    """A history of the hand in play consistent with current ``hands`` and ``player``'s knowledge.

    Returns, per seat, the tiles it held at the hand's start (dealt, or held at the start
    position) and the tile of each of its draws, in order. ``player``'s own are the real ones;
    each opponent's tiles ever held (its hand now plus what it placed) are spread over its
    start slots and draws uniformly among the spreads in which every tile it placed was in its
    hand before it was placed.
    """
    core = play.core
    assert core is not None
    num_players = play.num_players
    if play.start is not None:
        start_counts = [play.start.hand_count(seat) for seat in range(num_players)]
        own_start = list(tiles.tiles_in(play.start.hands[player]))
    else:
        size = len(play.dealt) // num_players
        start_counts = [size] * num_players
        own_start = play.dealt[player * size : (player + 1) * size]
    start_tiles: list[list[int]] = []
    drawn_tiles: list[list[int]] = []
    for seat in range(num_players):
        placed = [(time, action >> 1) for time, (s, action, _) in enumerate(play.events) if s == seat and action < DRAW]
        draw_times = [
            time for time, (s, action, tile) in enumerate(play.events) if s == seat and action == DRAW and tile >= 0
        ]
        if seat == player:
            start_tiles.append(own_start)
            drawn_tiles.append([tile for s, action, tile in play.events if s == seat and action == DRAW and tile >= 0])
            continue
        slot_times = [-1] * start_counts[seat] + draw_times
        assignment = [-1] * len(slot_times)
        free = list(range(len(slot_times)))
        for time, tile in placed:  # events are in time order: earliest deadline first
            allowed = [slot for slot in free if slot_times[slot] < time]
            slot = rng.choice(allowed)
            assignment[slot] = tile
            free.remove(slot)
        held = list(tiles.tiles_in(hands[seat]))
        rng.shuffle(held)
        for slot, tile in zip(free, held):
            assignment[slot] = tile
        start_tiles.append(assignment[: start_counts[seat]])
        drawn_tiles.append(assignment[start_counts[seat] :])
    return start_tiles, drawn_tiles


def deal_actions(hands: Sequence[Sequence[int]], opener: int | None = None) -> list[int]:
    """The chance outcomes that deal ``hands`` (tile ids, one list per seat), opener first.

    With the AEC environment's deal (``env.unwrapped.state_ref`` before the first action, or a
    ``hands``/``opener`` reset option), these are the first actions of the same game; each draw's
    outcome is then the next tile of its ``boneyard``. Give ``opener=None`` for the later hands of
    a match, whose opener is not drawn.
    """
    return ([] if opener is None else [int(opener)]) + [int(tile) for hand in hands for tile in hand]


# ---------------------------------------------------------------------- observations


def _event_token(event: tuple[int, int, int], player: int | None) -> str:
    """One action as ``player`` saw it (``None``: as the referee saw it)."""
    seat, action, tile = event
    if action < DRAW:
        return f"{seat}:{tiles.NAMES[action >> 1]}{'LR'[action & 1]}"  # the end as one letter
    if action == DRAW and tile >= 0 and (player is None or player == seat):
        return f"{seat}:{action_name(action)}{tiles.NAMES[tile]}"
    return f"{seat}:{action_name(action)}"


def _view_string(core: DrawState, player: int) -> str:
    """What ``player`` sees of ``core`` (the facts of the observation vector), as text."""
    view = core.view(player)
    hand = "".join(tiles.NAMES[t] for t in tiles.tiles_in(view.hand))
    line = " ".join(f"{seat}:{tiles.NAMES[tile]}" for tile, seat, _ in view.line)
    ends = "-" if view.ends is None else f"{view.ends[0]}-{view.ends[1]}"
    lacks = " ".join(
        f"{seat}:" + "".join(str(v) for v in range(tiles.NUM_VALUES) if voids >> v & 1)
        for seat, voids in enumerate(view.voids)
        if voids
    )
    to_act = "-" if core.result is not None else str(view.current)
    sizes = " ".join(str(count) for count in view.hand_counts)
    return (
        f"hand {hand} line {line or '-'} ends {ends} sizes {sizes} boneyard {view.boneyard_count} "
        f"lacks {lacks or '-'} to_act {to_act} passes {view.passes_in_row}"
    )


class DrawDominoesObserver:
    """OpenSpiel's PyObserver: the observation (default) or the information state (perfect recall).

    ``tensor`` is the 258-entry observation vector of :mod:`draw_env.observation`, followed for
    the information state by the ``drawn`` block (28 entries, k where the observer drew that
    tile as its k-th draw of the hand).
    """

    def __init__(self, game: DrawDominoesGame, iig_obs_type: pyspiel.IIGObservationType | None) -> None:
        perfect_recall = False
        if iig_obs_type is not None:
            if not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
                raise ValueError(
                    "python_draw_dominoes observes for one player: public_info=True and "
                    "private_info=SINGLE_PLAYER are the only supported observation type fields"
                )
            perfect_recall = iig_obs_type.perfect_recall
        self.match = game.match
        self.target = game.rules.target if game.match else 0
        self.perfect_recall = perfect_recall
        # The environment's observation table, rebuilt from the rules state at each call.
        self._table = ObservationTable(game.rules, game.match)
        size = INFORMATION_STATE_SIZE if perfect_recall else OBSERVATION_SIZE
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[:OBSERVATION_SIZE]}
        if perfect_recall:
            self.dict["drawn"] = self.tensor[OBSERVATION_SIZE:]

    def set_from(self, state: DrawDominoesState, player: int) -> None:
        play = state._play
        if play.core is not None:
            self._table.rebuild(play.core)
            self.tensor[:OBSERVATION_SIZE] = self._table.observe(player)
        else:
            self._set_dealing(play, player)
        if self.perfect_recall:
            drawn = self.tensor[OBSERVATION_SIZE:]
            drawn[:] = 0
            order = 0
            for seat, action, tile in play.events:
                if seat == player and action == DRAW and tile >= 0:
                    order += 1
                    drawn[tile] = order

    def _set_dealing(self, play: _Play, player: int) -> None:
        """The observation during a deal: own tiles so far, counts, seats, scores."""
        vector = self.tensor[:OBSERVATION_SIZE]
        vector[:] = 0
        n = play.num_players
        size = play.rules.hand_size
        for index, tile in enumerate(play.dealt):
            if index // size == player:
                vector[OFFSETS["hand"] + tile] = 1
        for relative in range(n):
            seat = (player + relative) % n
            vector[OFFSETS["hand_sizes"] + relative] = min(max(len(play.dealt) - seat * size, 0), size)
            vector[OFFSETS["in_play"] + relative] = 1
            if self.match:
                vector[OFFSETS["scores"] + relative] = play.scores[seat]
        vector[OFFSETS["boneyard_size"]] = NUM_TILES - len(play.dealt)
        vector[OFFSETS["target"]] = self.target

    def string_from(self, state: DrawDominoesState, player: int) -> str:
        play = state._play
        head = f"p{player}"
        if self.match:
            head += f" hand {play.hand_number} scores {' '.join(map(str, play.scores))}"
        if not self.perfect_recall:
            if play.core is None:
                size = play.rules.hand_size
                own = play.dealt[player * size : (player + 1) * size]
                return f"{head} dealing {len(play.dealt)} hand {''.join(tiles.NAMES[t] for t in sorted(own))}"
            return f"{head} {_view_string(play.core, player)}"
        if play.start is not None:
            head += f" from {_view_string(play.start, player)}"
        else:
            size = play.rules.hand_size
            own = play.dealt[player * size : (player + 1) * size]
            opener = "?" if play.phase == _OPENER else str(play.opener)
            head += f" opener {opener} dealt {len(play.dealt)} {''.join(tiles.NAMES[t] for t in sorted(own))}"
        events = " ".join(_event_token(event, player) for event in play.events)
        return f"{head} | {events}"


# ---------------------------------------------------------------------- game and state strings

# OpenSpiel's own functions, which serialize a Python game's state as a pickle of its __dict__
# and unpickle whatever a string holds there (in C++, out of reach of the methods above).
_pyspiel_serialize_game_and_state = pyspiel.serialize_game_and_state
_pyspiel_deserialize_game_and_state = pyspiel.deserialize_game_and_state
_SECTIONS = ("[Meta]", "[Game]", "[State]")


def serialize_game_and_state(game: pyspiel.Game, state: pyspiel.State) -> str:
    """``pyspiel.serialize_game_and_state``, with this game's state as its history (no pickle).

    The sections are OpenSpiel's (``[Meta]``, ``[Game]``, ``[State]``); other games' states are
    serialized by OpenSpiel itself.
    """
    if not isinstance(state, DrawDominoesState):
        return str(_pyspiel_serialize_game_and_state(game, state))
    return (
        "# Automatically generated by OpenSpiel SerializeGameAndState\n[Meta]\nVersion: 1\n\n"
        f"[Game]\n{game.serialize()}\n[State]\n{state.serialize()}"
    )


def deserialize_game_and_state(text: str) -> tuple[pyspiel.Game, pyspiel.State]:
    """``pyspiel.deserialize_game_and_state`` that never unpickles a ``python_draw_dominoes`` state.

    A string whose game is ``python_draw_dominoes`` is read here: the game string is loaded by
    ``pyspiel.load_game`` (its parameters checked) and the state rebuilt by
    :meth:`DrawDominoesGame.deserialize_state`. Other games' strings go to OpenSpiel.

    Raises:
        ValueError: if the sections are malformed or the state text is refused.
    """
    if not isinstance(text, str):
        raise ValueError(f"a serialized game and state must be a str, got {type(text).__name__}")  # noqa: TRY004
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for number, line in enumerate(text.split("\n"), 1):
        if not line or line.startswith("#"):
            continue
        if line in _SECTIONS:
            if line in sections or (current is None) != (line == "[Meta]"):
                raise ValueError(f"serialized game and state, line {number}: section {line} out of order")
            current = line
            sections[line] = []
        elif current is None:
            raise ValueError(f"serialized game and state, line {number}: text before the [Meta] section")
        else:
            sections[current].append(line)
    game_lines = sections.get("[Game]", [])
    if not any(SHORT_NAME in line for line in game_lines):
        return _pyspiel_deserialize_game_and_state(text)
    if len(game_lines) != 1 or not (game_lines[0] == SHORT_NAME or game_lines[0].startswith(SHORT_NAME + "(")):
        # Any other game string that names this game (a wrapper game around it, a near spelling)
        # is refused rather than left to OpenSpiel, whose reader of this game's states unpickles.
        raise ValueError(
            f"serialized game and state, [Game] section: only a {SHORT_NAME}(...) game string is read, got "
            f"{' '.join(game_lines)[:80]!r}"
        )
    if "[State]" not in sections:
        raise ValueError("serialized game and state: the [State] section is missing")
    try:
        game = pyspiel.load_game(game_lines[0])
    except pyspiel.SpielError as error:
        raise ValueError(f"serialized game and state, [Game] section: {error}") from None
    return game, game.deserialize_state("".join(f"{line}\n" for line in sections["[State]"]))


pyspiel.register_game(_game_type(PARAMETERS["reward"], PARAMETERS["episode"]), DrawDominoesGame)
# The module functions that users call: this game's strings are read as history, never unpickled.
pyspiel.serialize_game_and_state = serialize_game_and_state
pyspiel.deserialize_game_and_state = deserialize_game_and_state
