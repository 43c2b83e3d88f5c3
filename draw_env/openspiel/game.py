"""The game and its states: ``pyspiel.load_game("python_draw_dominoes")``, on the rules core.

Every state wraps a :class:`~draw_env.rules.DrawState`, so there is no second implementation of
the game. Parameters (``pyspiel.load_game("python_draw_dominoes(players=3,episode=match)")``):
``players`` 2 (default), 3 or 4; ``episode`` ``"hand"`` (default) or ``"match"`` (hands until a
seat reaches the target); ``reward`` ``"zero_sum"`` (default), ``"points"`` or ``"win_loss"``
(matches only), as the AEC environment's, ``returns()`` being the sums of its rewards; and the
variant, as :class:`~draw_env.rules.DrawGame`'s: ``max_pip`` (6), ``hand_size`` (0, the seeds'
deal: OpenSpiel parameters cannot be ``None``) and ``protected`` (2), or its name, ``variant``
(``""``, none; ``"mini"``: a name of :data:`draw_env.rules.VARIANTS`, whose numbers a number left
at its default takes). The game's string names the numbers, so a variant given by name or by
numbers is one game.

Every random event (the opener lottery, the deal tile by tile, each draw) is an explicit chance
node with exact probabilities, so ``state.history()`` reproduces a game exactly;
:func:`deal_actions` turns an AEC deal into the chance outcomes that deal it.
``resample_from_infostate(p, sampler)`` samples the information set exactly as far as chance
goes (OpenSpiel's Python ``ISMCTSBot`` calls it). A state is serialized as its history, one
action per line (after a line naming the variant, for a variant other than the seeds'), and read
back by replaying it strictly; nothing is unpickled. The details, with
the observations and information states, are in ``docs/integrations.md`` (OpenSpiel).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import Any

import pyspiel

from draw_env import tiles
from draw_env.checks import check_choice, check_int, is_integer
from draw_env.observation import SEATS
from draw_env.openspiel.observer import DrawDominoesObserver
from draw_env.openspiel.progress import DEAL, DRAWING, OPENER, OVER, PLAY, Progress, events_text
from draw_env.rules import (
    EPISODES,
    PLAYER_COUNTS,
    PROTECTED_BONEYARD,
    REWARDS,
    DrawGame,
    DrawState,
    action_name,
    check_reward_episode,
    hand_rewards,
    next_opener,
    variant_game,
)
from draw_env.tiles import DEFAULT_MAX_PIP

SHORT_NAME = "python_draw_dominoes"
#: The parameters and their defaults; ``hand_size=0`` is the seeds' deal (7 each, 6 with 4 players),
#: ``variant=""`` no named variant.
PARAMETERS: dict[str, Any] = {
    "players": 2,
    "episode": "hand",
    "reward": "zero_sum",
    "max_pip": DEFAULT_MAX_PIP,
    "hand_size": 0,
    "protected": PROTECTED_BONEYARD,
    "variant": "",
}
#: The variant parameters, in the order the state text's variant line names them.
VARIANT_PARAMETERS = ("max_pip", "hand_size", "protected")
#: A match has no finite worst case (a blocked hand with a shared lowest total scores nothing, and
#: so can follow itself for ever), but OpenSpiel wants a bound: ``max_game_length`` of a match
#: assumes at most this many hands (at most 199 hands can score, each at least a point, with 2 players).
MAX_MATCH_HANDS = 1000
#: Every tile id of each set, by ``max_pip`` (the deal's chance outcomes are those not dealt yet).
_ALL_TILES = {top: frozenset(range(tiles.tile_set(top).num_tiles)) for top in range(tiles.MIN_PIP, tiles.MAX_PIP + 1)}
_CHANCE = int(pyspiel.PlayerId.CHANCE)
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
#: A line of a serialized state: one action id, plain ASCII digits (111 at most, double-nine's pass).
_ACTION_LINE = re.compile(r"0|[1-9][0-9]{0,2}")
#: The first line of a serialized state of a variant other than the seeds' (whose texts have none).
_VARIANT_LINE = re.compile(r"variant max_pip=([2-9]) hand_size=([1-9][0-9]?) protected=(0|[1-9][0-9]?)")


def game_type(reward: str, episode: str) -> pyspiel.GameType:
    """The game type; utility and reward model depend on the parameters."""
    kind = pyspiel.GameType
    zero_sum = reward != "points"
    per_hand = episode == "match" and reward != "win_loss"
    return kind(
        short_name=SHORT_NAME,
        long_name="Python Draw dominoes",
        dynamics=kind.Dynamics.SEQUENTIAL,
        chance_mode=kind.ChanceMode.EXPLICIT_STOCHASTIC,
        information=kind.Information.IMPERFECT_INFORMATION,
        utility=kind.Utility.ZERO_SUM if zero_sum else kind.Utility.GENERAL_SUM,
        reward_model=kind.RewardModel.REWARDS if per_hand else kind.RewardModel.TERMINAL,
        min_num_players=2, max_num_players=SEATS,
        # Observations and information states, each as a string and as a tensor.
        provides_information_state_string=True, provides_information_state_tensor=True,
        provides_observation_string=True, provides_observation_tensor=True,
        provides_factored_observation_string=False,
        parameter_specification=PARAMETERS,
    )


def max_hand_length(game: DrawGame | int) -> int:
    """An upper bound on the decisions of one hand of ``game`` (a number of players: the seeds'
    game): every placement, draw and pass.

    At most ``T - protected`` tiles are ever held (26 in the seeds' game), so at most as many
    placements; the opener places first (any tile fits the empty line); passes happen only once
    drawing is over, at most ``n - 1`` between two placements and ``n`` at the end.

    Looser than :attr:`draw_env.rules.DrawGame.max_hand_actions` (which also counts the tiles
    still held at the end) on purpose: OpenSpiel bounds a history, chance nodes included, by twice
    this, and in the smallest variants the deal's chance nodes outnumber the tighter bound.
    """
    rules = game if isinstance(game, DrawGame) else DrawGame(game)
    players = rules.num_players
    placements = rules.num_tiles - rules.protected
    draws = placements - players * rules.hand_size
    return placements + draws + (players - 1) * (placements - 1) + players


def _variant_rules(players: int, params: dict[str, Any]) -> DrawGame:
    """The rules of ``players`` seats and the variant parameters of ``params`` (``hand_size=0``:
    the seeds' deal; ``variant=""``: no name).

    Raises:
        ValueError: naming the parameter (see :func:`~draw_env.rules.variant_game`).
    """
    hand_size = params["hand_size"]
    if not is_integer(hand_size) or hand_size < 0:
        raise ValueError(
            "hand_size must be an integer >= 0 (0: the seeds' deal, 7 tiles each or 6 with 4 players), "
            f"got {hand_size!r}"
        )
    name = params["variant"]
    return variant_game(players, name if name != "" else None, params["max_pip"], int(hand_size) or None, params["protected"])


def _describe_variant(variant: dict[str, int]) -> str:
    return ", ".join(f"{name}={variant[name]}" for name in VARIANT_PARAMETERS)


def _variant_line(rules: DrawGame) -> str:
    """The first line of a serialized state of ``rules``' variant; ``""`` for the seeds' variant."""
    if rules.is_default:
        return ""
    return "variant " + " ".join(f"{name}={rules.variant[name]}" for name in VARIANT_PARAMETERS)


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
        self.rules = rules = _variant_rules(players, params)
        self.episode = episode
        self.reward = reward
        self.match = episode == "match"
        if reward == "win_loss":
            low, high = -1.0, 1.0
        else:
            # A hand gives or costs at most every pip of the set; in a match a seat ends with at
            # most target - 1 + one hand's points.
            points = rules.max_hand_points
            high = float(rules.target - 1 + points if self.match else points)
            low = -high if reward == "zero_sum" else 0.0
        info = pyspiel.GameInfo(
            num_distinct_actions=rules.num_actions,
            max_chance_outcomes=rules.num_tiles,
            num_players=players,
            min_utility=low,
            max_utility=high,
            utility_sum=None if reward == "points" else 0.0,
            max_game_length=max_hand_length(rules) * (MAX_MATCH_HANDS if self.match else 1),
        )
        # The game string names a variant parameter only where it differs from the seeds' game,
        # so that equal games have one string (and the seeds' games the strings they always had).
        seeds = DrawGame(players).variant
        named = {name: value for name, value in rules.variant.items() if value != seeds[name]}
        super().__init__(
            game_type(reward, episode), info, {"players": players, "episode": episode, "reward": reward, **named}
        )

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
        if position.game != self.rules:
            raise ValueError(
                f"position is of the variant {_describe_variant(position.game.variant)}, "
                f"the game of {_describe_variant(self.rules.variant)}"
            )
        if position.result is not None:
            raise ValueError("position must be a hand in play, got a finished hand")
        state = DrawDominoesState(self)
        state._play.start_position(position)
        return state

    def deserialize_state(self, text: str) -> DrawDominoesState:
        """The state that :meth:`DrawDominoesState.serialize` wrote: its history replayed.

        ``text`` is OpenSpiel's history format, one action per line (chance outcomes included),
        after a variant line (``variant max_pip=3 hand_size=2 protected=1``) unless the game is
        the seeds' variant; each action line must be a plain integer, legal where it is applied,
        and ``text`` at most as long as the longest game's. Nothing in it is unpickled or
        evaluated (OpenSpiel's default for Python games unpickles a ``__dict__`` line).

        Raises:
            ValueError: naming the line and what is wrong with it, e.g. ``python_draw_dominoes
                state text, line 17: action 57 (pass) is not legal here; legal: 0, 56``, or the
                text's variant and the game's when they differ.
        """
        where = f"{SHORT_NAME} state text"
        if not isinstance(text, str):
            raise ValueError(f"{where} must be a str, got {type(text).__name__}")  # noqa: TRY004
        header = _variant_line(self.rules)
        # Each action: its digits (the longest id's) and a newline.
        per_action = len(str(self.num_distinct_actions() - 1)) + 1
        limit = (len(header) + 1 if header else 0) + per_action * self.max_history_length() + 1
        if len(text) > limit:
            raise ValueError(f"{where} has {len(text)} characters, more than the {limit} of the longest game")
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()  # the newline that ends the last action
        first = self._check_variant_line(lines[0] if lines else "", where)
        state = self.new_initial_state()
        for number, line in enumerate(lines[first:], first + 1):
            if not _ACTION_LINE.fullmatch(line):
                raise ValueError(f"{where}, line {number}: must be an action id (an integer), got {line[:40]!r}")
            action = int(line)
            if state.is_terminal():
                raise ValueError(f"{where}, line {number}: the game is over, yet the text goes on with {action}")
            legal = state.legal_actions()
            if action not in legal:
                name = (
                    f"chance outcome {action}"
                    if state.is_chance_node()
                    else f"action {action} ({action_name(action, game=self.rules)})"
                )
                raise ValueError(f"{where}, line {number}: {name} is not legal here; legal: {', '.join(map(str, legal))}")
            state.apply_action(action)
        return state

    def _check_variant_line(self, line: str, where: str) -> int:
        """How many lines the variant line takes (1, or 0 in the seeds' variant's texts).

        Raises:
            ValueError: if ``line`` is a variant line of another variant or a malformed one, or
                the game is a variant and ``line`` is not its variant line.
        """
        header = _variant_line(self.rules)
        if line.startswith("variant"):
            match = _VARIANT_LINE.fullmatch(line)
            if match is None:
                raise ValueError(
                    f"{where}, line 1: a variant line reads 'variant max_pip=N hand_size=H protected=P', "
                    f"got {line[:80]!r}"
                )
            if line == header:
                return 1
            read = dict(zip(VARIANT_PARAMETERS, map(int, match.groups())))
            if read != self.rules.variant:
                raise ValueError(
                    f"{where} is a state of the variant {_describe_variant(read)}; this game's is "
                    f"{_describe_variant(self.rules.variant)}"
                )
            raise ValueError(f"{where}, line 1: a state of the seeds' variant has no variant line, got {line!r}")
        if header:
            raise ValueError(
                f"{where}, line 1: a state of this game's variant starts with {header!r} (a text without "
                f"it is of the seeds' variant: max_pip=6, the seeds' deal, protected=2), got {line[:40]!r}"
            )
        return 0

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> DrawDominoesObserver:
        """The observer behind the observation (default) and information state (perfect recall)."""
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        return DrawDominoesObserver(self, iig_obs_type)


class DrawDominoesState(pyspiel.State):
    """A state of ``python_draw_dominoes``: a hand of the rules core plus its chance nodes."""

    def __init__(self, game: DrawDominoesGame) -> None:
        super().__init__(game)
        # One attribute: OpenSpiel clones a Python state by deep-copying each of them.
        self._play = Progress(game.rules, game.match, game.reward)

    # ------------------------------------------------------------------ reading

    @property
    def core(self) -> DrawState | None:
        """The rules state of the hand in play (``None`` while it is being dealt); do not modify."""
        return self._play.core

    def current_player(self) -> int:
        play = self._play
        if play.phase == PLAY:
            assert play.core is not None
            return play.core.current
        return _TERMINAL if play.phase == OVER else _CHANCE

    def is_terminal(self) -> bool:
        return self._play.phase == OVER

    def _legal_actions(self, player: int) -> list[int]:
        core = self._play.core
        assert core is not None and player == core.current
        return core.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        play = self._play
        if play.phase == OPENER:
            return [(seat, 1.0 / play.num_players) for seat in range(play.num_players)]
        if play.phase == DEAL:
            outcomes = sorted(_ALL_TILES[play.rules.max_pip] - set(play.dealt))
        elif play.phase == DRAWING:
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
        if phase == OVER:
            raise ValueError("the game is over: no action applies")
        if phase == PLAY:
            core = play.core
            assert core is not None
            seat = core.current
            draw = play.rules.draw_action
            if action == draw:
                if not core.is_legal(draw):
                    core.apply_action(draw)  # raises IllegalActionError naming the legal actions
                play.phase = DRAWING
                play.events.append((seat, draw, -1))
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
        if phase == OPENER:
            play.opener = action
            play.phase = DEAL
        elif phase == DEAL:
            play.dealt.append(action)
            rules = play.rules
            if len(play.dealt) == rules.num_players * rules.hand_size:
                hands = [play.own_deal(seat) for seat in range(rules.num_players)]
                boneyard = sorted(set(range(rules.num_tiles)) - set(play.dealt))
                play.core = rules.state_from_deal(hands, boneyard, play.opener, play.scores)
                play.phase = PLAY
        else:
            core = play.core
            assert core is not None
            # The core draws from the front of its boneyard: put the tile chance picked there.
            core.boneyard.remove(action)
            core.boneyard.insert(0, action)
            seat, draw, _ = play.events[-1]
            core.apply_action(draw)
            play.events[-1] = (seat, draw, action)
            play.phase = PLAY

    def _end_hand(self) -> None:
        play = self._play
        core = play.core
        assert core is not None and core.result is not None
        match_over = not play.match or core.is_match_over
        rewards = hand_rewards(play.reward, core, match_over)
        play.rewards = rewards
        play.returns = [total + reward for total, reward in zip(play.returns, rewards)]
        if match_over:
            play.phase = OVER
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
        play.phase = DEAL

    # ------------------------------------------------------------------ text

    def _action_to_string(self, player: int, action: int) -> str:
        play = self._play
        if player != _CHANCE:
            return action_name(int(action), game=play.rules)
        names = play.rules.tiles.names
        phase = play.phase
        if phase == OPENER:
            return f"Opener: player {action}"
        if phase == DEAL:
            size = play.rules.hand_size
            return f"Deal {names[action]} to player {len(self._play.dealt) // size}"
        return f"Draw {names[action]}"

    def __str__(self) -> str:
        play = self._play
        if play.core is None:
            dealt = " ".join(play.rules.tiles.names[tile] for tile in play.dealt)
            opener = "not drawn yet" if play.phase == OPENER else play.opener
            return f"hand {play.hand_number}, dealing; opener {opener}; scores {play.scores}; dealt: {dealt}"
        events = events_text(play, None)
        pending = " (drawing)" if play.phase == DRAWING else ""
        return f"hand {play.hand_number}{pending}: {play.core!r}; actions: {events}"

    # ------------------------------------------------------------------ serialization

    def serialize(self) -> str:
        """The history, one action per line (OpenSpiel's format for C++ games): no pickle. A
        variant other than the seeds' writes its variant line first
        (``variant max_pip=3 hand_size=2 protected=1``).

        :meth:`DrawDominoesGame.deserialize_state` replays it. A state made by
        :meth:`DrawDominoesGame.new_state_from_position` has no history from the initial state
        and cannot be serialized (``ValueError``).
        """
        if self._play.lineage is not None:
            raise ValueError(
                "a state made by new_state_from_position cannot be serialized: its history does not "
                "start from the initial state"
            )
        header = _variant_line(self._play.rules)
        return (f"{header}\n" if header else "") + "".join(f"{action}\n" for action in self.history())

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
        if play.core is None or play.phase == OVER:
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
            root.boneyard = list(tiles.tiles_in(play.rules.tiles.all_mask & ~root.line_mask & ~held))
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
        draw = play.rules.draw_action
        for seat, action, tile in play.events:
            state.apply_action(action)
            if action == draw and tile >= 0:  # a draw still waiting for its tile stays so
                state.apply_action(next(draws[seat]))
        return state


def _reconstruct(
    play: Progress, player: int, hands: Sequence[int], rng: random.Random
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
        start_counts = [play.rules.hand_size] * num_players
        own_start = play.own_deal(player)
    draw = play.rules.draw_action
    start_tiles: list[list[int]] = []
    drawn_tiles: list[list[int]] = []
    for seat in range(num_players):
        placed = [(time, action >> 1) for time, (s, action, _) in enumerate(play.events) if s == seat and action < draw]
        draw_times = [
            time for time, (s, action, tile) in enumerate(play.events) if s == seat and action == draw and tile >= 0
        ]
        if seat == player:
            start_tiles.append(own_start)
            drawn_tiles.append(play.own_draws(seat))
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
