"""How far a ``python_draw_dominoes`` game has got: what a state holds, read by its observer.

A state is a phase (the opener lottery, the deal, play, a draw waiting for its tile, the end), the
hand in play as a :class:`~draw_env.rules.DrawState` once dealt, and the facts the information
states need: the tiles dealt so far and every action of the hand with the tile of each draw.
"""

from __future__ import annotations

from typing import Any

from draw_env.rules import DrawGame, DrawState, action_name

# Phases of the hand in play: the first hand's opener lottery, the deal, a player to act, a
# draw whose tile chance has yet to pick, the game over.
OPENER, DEAL, PLAY, DRAWING, OVER = range(5)

#: One action of the hand: ``(seat, action, tile drawn or -1)``.
Event = tuple[int, int, int]


class Progress:
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
        self.phase = OPENER
        self.hand_number = 0
        #: Match scores before the hand in play.
        self.scores = [0] * num_players
        self.opener = -1
        #: Tiles dealt so far in this hand, in deal order (seat 0's first).
        self.dealt: list[int] = []
        #: This hand's actions.
        self.events: list[Event] = []
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

    def __deepcopy__(self, memo: dict[int, Any]) -> Progress:
        other = Progress.__new__(Progress)
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
        self.phase = PLAY

    def own_deal(self, player: int) -> list[int]:
        """The tiles dealt to ``player`` so far in this hand (all of them once the deal is over)."""
        size = self.rules.hand_size
        return self.dealt[player * size : (player + 1) * size]

    def own_draws(self, player: int) -> list[int]:
        """The tiles ``player`` drew this hand, in order."""
        draw = self.rules.draw_action
        return [tile for seat, action, tile in self.events if seat == player and action == draw and tile >= 0]


def events_text(play: Progress, player: int | None) -> str:
    """The actions of the hand in play as ``player`` saw them (``None``: as the referee saw them),
    one token each: ``1:[1|4]L`` (the end as one letter), ``0:draw[5|5]`` (the tile shown only to
    the drawer), ``2:pass``."""
    rules = play.rules
    draw, names = rules.draw_action, rules.tiles.names
    words = {draw: action_name(draw, game=rules), rules.pass_action: action_name(rules.pass_action, game=rules)}
    tokens = []
    for seat, action, tile in play.events:
        if action < draw:
            tokens.append(f"{seat}:{names[action >> 1]}{'LR'[action & 1]}")
        elif action == draw and tile >= 0 and (player is None or player == seat):
            tokens.append(f"{seat}:{words[draw]}{names[tile]}")
        else:
            tokens.append(f"{seat}:{words[action]}")
    return " ".join(tokens)
