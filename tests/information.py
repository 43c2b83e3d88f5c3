"""Histories for the tests of the information state, shared by every engine's tests.

The AEC environment with ``obs_type="information_state"`` is the reference the engines are
compared with; this module gives them the same variants, random histories played through it,
the key of what a seat knows of a history (what its information state must be a function of,
and must determine), histories that differ only in what the seat cannot see, and histories that
differ only in what it can.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

import draw_env
from draw_env.rules import DrawGame, DrawState, IllegalActionError, place_action
from draw_env.tiles import tile_id

#: The variants every engine is checked on: name -> (players, max_pip, hand_size, protected).
VARIANTS = {
    "micro": (2, 2, 1, 2),
    "mini": (2, 3, 3, 3),
    "three-players": (3, 3, 2, 2),
    "midi": (2, 3, 3, 2),
    "seeds-2": (2, 6, None, 2),
    "seeds-4": (4, 6, None, 2),
}


def game_of(name: str) -> DrawGame:
    players, max_pip, hand_size, protected = VARIANTS[name]
    return DrawGame(players, max_pip, hand_size, protected)


def variant_kwargs(name: str) -> dict:
    _, max_pip, hand_size, protected = VARIANTS[name]
    return {"max_pip": max_pip, "hand_size": hand_size, "protected": protected}


def make_env(name: str, episode: str = "hand", obs_type: str = "information_state") -> draw_env.raw_env:
    players = VARIANTS[name][0]
    return draw_env.raw_env(num_players=players, episode=episode, obs_type=obs_type, **variant_kwargs(name))


@dataclass
class Deal:
    """A hand's deal as reset options take it."""

    hands: list[list[int]]
    boneyard: list[int]
    opener: int

    def options(self) -> dict:
        return {"hands": [list(hand) for hand in self.hands], "boneyard": list(self.boneyard), "opener": self.opener}


def deal_of(state: DrawState) -> Deal:
    """The deal of a fresh rules state (before any action)."""
    hands = [sorted(int(t) for t in range(state.game.num_tiles) if mask >> t & 1) for mask in state.dealt]
    return Deal(hands, list(state.boneyard), state.opener)


def observer_key(state: DrawState, player: int, match: bool) -> tuple:
    """What ``player`` knows of the hand of ``state``: the variant and table size, the match's
    scores (in a match, in relative seats; once the hand is over, with its points), who opens, its dealt tiles and every action so far with
    the relative seat that took it (a draw's tile only where it drew). Its information state must
    be a function of this and determine it."""
    game = state.game
    players = game.num_players
    events = tuple(
        ((seat - player) % players, action, tile if action == game.draw_action and seat == player else -1)
        for seat, action, tile in state.history
    )
    scores = tuple(state.scores[(player + relative) % players] for relative in range(players)) if match else None
    return (game, scores, (state.opener - player) % players, state.dealt[player], events)


def random_histories(name: str, episode: str, games: int, seed: int) -> Iterator[tuple[draw_env.raw_env, int]]:
    """Random legal play in the reference environment: yields the environment before each action
    (and once at the end of each episode) with the seat to act."""
    env = make_env(name, episode)
    rng = random.Random(seed)
    for game in range(games):
        env.reset(seed=seed * 1000 + game)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            yield env, env.agents.index(agent) if agent in env.agents else -1
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            env.step(int(rng.choice(legal)))


def replay(game: DrawGame, deal: Deal, actions: list[int]) -> DrawState:
    """The rules state of ``deal`` after ``actions`` (raises IllegalActionError)."""
    state = game.state_from_deal(deal.hands, deal.boneyard, deal.opener)
    for action in actions:
        state.apply_action(action)
    return state


def played_hand(game: DrawGame, seed: int) -> tuple[Deal, list[int]]:
    """A random deal and a random legal hand played on it to the end."""
    rng = random.Random(seed)
    state = game.new_state(rng)
    deal = deal_of(state)
    actions = []
    while state.result is None:
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        actions.append(action)
    return deal, actions


def hidden_swaps(game: DrawGame, seed: int, tries: int = 200) -> Iterator[tuple[Deal, Deal, list[int], int]]:
    """Pairs of deals that give one observer the same history: ``(deal, other, actions, observer)``.

    A random hand is played; then the tiles the observer never sees (opponents' tiles never
    placed, the boneyard's tiles it never drew) are shuffled among their places in the deal
    (opponents' hands, boneyard positions), the placed tiles and the observer's draws staying
    where they were, and the actions replayed: where they are all still legal (a pass stays
    legal only if the passer still holds nothing that fits), the observer's history is the same
    and only what it cannot see differs.
    """
    rng = random.Random(seed)
    players = game.num_players
    for attempt in range(tries):
        deal, actions = played_hand(game, seed * 7919 + attempt)
        observer = rng.randrange(players)
        final = replay(game, deal, actions)
        placed = final.line_mask
        own_draws = {tile for seat, action, tile in final.history if seat == observer and action == game.draw_action}
        slots = [(seat, k) for seat in range(players) if seat != observer for k in range(len(deal.hands[seat]))]
        slots += [(-1, k) for k in range(len(deal.boneyard))]

        at = {(seat, k): deal.boneyard[k] if seat < 0 else deal.hands[seat][k] for seat, k in slots}
        free = [slot for slot in slots if not (placed >> at[slot] & 1) and at[slot] not in own_draws]
        hidden = [at[slot] for slot in free]
        rng.shuffle(hidden)
        hands = [list(hand) for hand in deal.hands]
        boneyard = list(deal.boneyard)
        for (seat, k), tile in zip(free, hidden):
            if seat < 0:
                boneyard[k] = tile
            else:
                hands[seat][k] = tile
        other = Deal(hands, boneyard, deal.opener)
        if boneyard == deal.boneyard and all(set(a) == set(b) for a, b in zip(hands, deal.hands)):
            continue  # tiles swapped within one hand: the same deal
        try:
            replay(game, other, actions)
        except IllegalActionError:
            continue
        yield deal, other, actions, observer


@dataclass
class RecallPair:
    """Two histories that differ for ``observer`` (what it may know), compared at their ends."""

    what: str
    game: DrawGame
    first: tuple[Deal, list[int]]
    second: tuple[Deal, list[int]]
    observer: int


def _places(*moves: tuple[str, int]) -> list[int]:
    return [place_action(tile_id(tile), end) for tile, end in moves]


def recall_pairs() -> list[RecallPair]:
    """Histories of the seeds' game (2 players) that give seat 0 the same observation at their
    ends but differ in what seat 0 knows: a placement's end, the time of an opponent's draw, the
    order of seat 0's own draws."""
    game = DrawGame(2)
    own = [tile_id(t) for t in ("[1|1]", "[1|2]", "[6|6]", "[0|0]", "[0|5]", "[4|4]", "[5|5]")]
    other = [tile_id(t) for t in ("[1|3]", "[2|3]", "[5|6]", "[4|6]", "[0|6]", "[0|4]", "[3|6]")]
    rest = [t for t in range(game.num_tiles) if t not in own + other]
    deal = Deal([own, other], rest, 0)
    # [1|1]; seat 1 puts [1|3] on one end, seat 0 [1|2] on the other, seat 1 [2|3] on the 2:
    # the same tiles by the same seats in the same order, the open ends 3 and 3 either way.
    left_first = _places(("[1|1]", 0), ("[1|3]", 0), ("[1|2]", 1), ("[2|3]", 1))
    right_first = _places(("[1|1]", 0), ("[1|3]", 1), ("[1|2]", 0), ("[2|3]", 0))
    # Seat 1 draws one tile before its first placement, or before its second.
    draw = game.draw_action
    draw_early = [left_first[0], draw, *left_first[1:]]
    draw_late = [*left_first[:3], draw, left_first[3]]
    # Seat 0 draws two tiles: the boneyard's order decides which it drew first.
    swapped = Deal([own, other], [rest[1], rest[0], *rest[2:]], 0)
    two_draws = [draw, draw, left_first[0]]
    return [
        RecallPair("the end of a placement", game, (deal, left_first), (deal, right_first), 0),
        RecallPair("when an opponent drew", game, (deal, draw_early), (deal, draw_late), 0),
        RecallPair("the order of the observer's draws", game, (deal, two_draws), (swapped, two_draws), 0),
    ]


#: A long hand of the seeds' game with 2 players: 51 actions of the 61 the bound allows (the
#: longest of a randomized depth-first search over a few hundred deals, in which the opener drew
#: the whole boneyard first); it ends blocked.
LONG_HAND = (
    Deal([[1, 5, 7, 9, 11, 20, 25], [6, 10, 13, 14, 16, 19, 21]],
         [26, 4, 17, 8, 18, 15, 22, 12, 2, 23, 27, 24, 0, 3], 1),
    [56] * 12 + [24, 2, 13, 10, 52, 57, 5, 57, 31, 57, 39, 19, 21, 57, 48, 57, 46, 22, 16, 57, 9, 57, 32, 50, 57,
                 40, 42, 57, 54, 57, 34, 57, 26, 57, 28, 57, 36, 57, 57],
)
