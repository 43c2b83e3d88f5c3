"""Positions for the tests of the rules core and the environment.

Positions are set up the way a user would: with a fixed deal (``hands``, ``boneyard``,
``opener``) given to :meth:`DrawGame.state_from_deal` or to ``reset(options=...)``, then
played with legal actions. :func:`complete_deal` fills in the tiles a test does not care
about; :func:`blocked_deal` builds a deal plus a script of placements that ends in a block with
chosen hands left over.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from draw_env import tiles
from draw_env.rules import DrawGame, DrawState, place_action
from draw_env.tiles import NUM_TILES, TileLike

SEEDS_DIR = Path(__file__).parent / "data" / "seeds"
#: The source documents, copied from the project brief: the rules in Japanese and in Italian.
JAPANESE_SEED = SEEDS_DIR / "000_e2e9994e5718c0ca.txt"
ITALIAN_SEED = SEEDS_DIR / "004_3c4be286085318bc.txt"


def ids(tile_list: Sequence[TileLike]) -> list[int]:
    """Tile ids of ``tile_list`` (ids, ``(a, b)`` pairs or ``"[a|b]"`` strings)."""
    return [tiles.tile_id(tile) for tile in tile_list]


def complete_deal(
    hands: Sequence[Sequence[TileLike] | None],
    boneyard: Sequence[TileLike] | None = None,
) -> tuple[list[list[int]], list[int]]:
    """A full deal in which exactly one of the hands or the boneyard is ``None``.

    The ``None`` place receives every tile not named elsewhere, ascending, so a test names only
    the tiles that matter.

    Returns:
        ``(hands, boneyard)`` as tile ids, holding each of the 28 tiles once.
    """
    places: list[Sequence[TileLike] | None] = [*hands, boneyard]
    if sum(place is None for place in places) != 1:
        raise ValueError("exactly one of the hands or the boneyard must be None")
    named = [tile for place in places if place is not None for tile in ids(place)]
    if len(set(named)) != len(named):
        raise ValueError(f"a tile is named twice in {places!r}")
    rest = [tile for tile in range(NUM_TILES) if tile not in named]
    filled = [rest if place is None else ids(place) for place in places]
    return filled[:-1], filled[-1]


@dataclass(frozen=True)
class BlockedDeal:
    """A deal and the placements that lead to a blocked hand.

    After ``placements`` the line's two ends both show ``end_value``, the boneyard holds its two
    protected tiles, and each seat holds exactly its ``leftover`` tiles, none of which fits:
    every player passes in turn and the hand blocks.
    """

    hands: list[list[int]]
    boneyard: list[int]
    opener: int
    placements: list[int]
    end_value: int
    leftover: list[list[int]]

    def options(self) -> dict[str, object]:
        """The deal as ``reset(options=...)`` takes it."""
        return {"hands": self.hands, "boneyard": self.boneyard, "opener": self.opener}


def _closed_trail(tile_ids: list[int], start: int) -> list[tuple[int, int]]:
    """An Euler circuit from ``start`` using every tile once, as ``(tile, value left open)``.

    Hierholzer's algorithm on the multigraph whose vertices are the values 0..6 and whose edges
    are the tiles (a double is a loop).
    """
    unused = set(tile_ids)
    stack: list[tuple[int, int]] = [(-1, start)]
    circuit: list[tuple[int, int]] = []
    while stack:
        _tile, value = stack[-1]
        step = next((t for t in sorted(unused) if value in tiles.TILES[t]), None)
        if step is None:
            circuit.append(stack.pop())
        else:
            unused.discard(step)
            stack.append((step, tiles.other_half(step, value)))
    if unused:
        raise ValueError("the line's tiles do not form one connected trail")
    circuit.reverse()
    return circuit[1:]


def blocked_deal(
    leftover: Sequence[Sequence[TileLike]],
    boneyard: Sequence[TileLike],
    end_value: int,
    opener: int = 0,
) -> BlockedDeal:
    """A deal whose hand ends blocked with ``leftover[seat]`` left in each hand.

    Every other tile goes on the line as one closed trail from ``end_value`` back to it; the
    players place those tiles in turn from ``opener`` on. Needs every value to appear an even
    number of times among the leftover and boneyard tiles (so the rest forms a closed trail), and
    no leftover tile to carry ``end_value``.
    """
    players = len(leftover)
    left_ids = [ids(hand) for hand in leftover]
    kept = {tile for hand in left_ids for tile in hand} | set(ids(boneyard))
    if not all(left_ids):
        raise ValueError("every seat must keep at least one tile, or it would go out")
    if any(end_value in tiles.TILES[tile] for hand in left_ids for tile in hand):
        raise ValueError(f"a leftover tile fits the end value {end_value}")
    line_tiles = [tile for tile in range(NUM_TILES) if tile not in kept]
    trail = _closed_trail(line_tiles, end_value)
    hands = [list(hand) for hand in left_ids]
    placements = []
    # The opening tile lays its low half on the left; the trail then continues from the end that
    # shows the value the opening tile leaves open along the trail.
    first_tile, first_open = trail[0]
    trail_end = 1 if tiles.HIGH[first_tile] == first_open else 0
    for index, (tile, _open) in enumerate(trail):
        hands[(opener + index) % players].append(tile)
        placements.append(place_action(tile, 0 if index == 0 else trail_end))
    return BlockedDeal(
        hands=[sorted(hand) for hand in hands],
        boneyard=ids(boneyard),
        opener=opener,
        placements=placements,
        end_value=end_value,
        leftover=left_ids,
    )


def play(state: DrawState, actions: Sequence[int]) -> DrawState:
    """Apply ``actions`` in order to ``state`` (in place) and return it."""
    for action in actions:
        state.apply_action(action)
    return state


def random_positions(num_players: int, hands: int, seed: int, min_legal: int = 1) -> list[DrawState]:
    """Copies of the decision points of ``hands`` hands of uniformly random play.

    Only positions with at least ``min_legal`` legal actions are kept (2: real decisions).
    """
    rng = random.Random(seed)
    game = DrawGame(num_players)
    positions = []
    for _ in range(hands):
        state = game.new_state(rng)
        while state.result is None:
            legal = state.legal_actions()
            if len(legal) >= min_legal:
                positions.append(state.clone())
            state.apply_action(rng.choice(legal))
    return positions


class DeckRng(random.Random):
    """Gives the AEC environment's next shuffle a given deck (the deal a faster twin made).

    The reference environment deals a later hand of a match by shuffling with its RNG; a
    differential test sets this as that RNG so the reference deals what the twin dealt.
    """

    def __init__(self, deck: list[int]) -> None:
        super().__init__(0)
        self.deck = deck

    def shuffle(self, x: list) -> None:  # type: ignore[override]
        x[:] = self.deck


def assert_plays_legally(player: Any, env: Any, seeds: Sequence[int]) -> None:
    """``player`` plays every seat of ``env`` (an AEC environment) for a hand of each of ``seeds``:
    each move is legal, and its probabilities sum to 1 with no weight on an illegal action."""
    for seed in seeds:
        env.reset(seed=seed)
        for _ in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            action = None if terminated or truncated else player.act(observation)
            if action is not None:
                assert observation["action_mask"][action] == 1
                probabilities = player.action_probabilities(observation)
                assert np.isclose(probabilities.sum(), 1.0) and np.all(probabilities[observation["action_mask"] == 0] == 0)
            env.step(action)
