"""What a table of an evaluation plays: its deals, as tasks any backend can play.

A *deal* fixes the first hand (every seat's tiles, the boneyard order, the opener) and seeds the
later hands of a match; a :class:`DealTask` is every replay of one deal at one table. The
step-by-step backend (:mod:`arena.evaluation`) and the batched one (:mod:`arena.batched_play`)
play the same tasks.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from draw_env.rules import DrawGame

#: A spec frozen into hashable, picklable form: ``(name, sorted kwargs items)``.
FrozenSpec = tuple[str, tuple[tuple[str, Any], ...]]


@dataclass(frozen=True)
class DealTask:
    """Every replay of one deal at one table: all a backend needs (picklable, for workers).

    Attributes:
        specs: per participant, its frozen spec.
        labels: per participant, its label (the ``players`` of its game records).
        episode: ``"hand"`` or ``"match"``.
        seed: the run's seed; with ``deal`` it seeds the cards and the seeded agents.
        deal: index of the deal within its table.
        seatings: the seatings to play, in order; ``seating[seat]`` is a participant index.
        records: the directory this table's game records go to, or ``None``.
        game: the game played: the players and the variant.
        obs_type: what the environment gives (:func:`arena.options.table_obs_type`).
    """

    specs: tuple[FrozenSpec, ...]
    labels: tuple[str, ...]
    episode: str
    seed: int
    deal: int
    seatings: tuple[tuple[int, ...], ...]
    records: str | None
    game: DrawGame
    obs_type: str = "observation"


def deal_options(num_players: int, deal_seed: int, game: DrawGame | None = None) -> dict[str, Any]:
    """The reset options that fix the first hand of a deal: hands by seat, boneyard, opener.

    ``game`` (default: the seeds' game of ``num_players``) gives the set dealt and the hand size.
    """
    if game is None:
        game = DrawGame(num_players)
    elif game.num_players != num_players:
        raise ValueError(f"game must seat num_players={num_players}, got {game.num_players}")
    state = game.new_state(random.Random(deal_seed))
    return {
        "hands": [state.hand_tiles(seat) for seat in range(num_players)],
        "boneyard": list(state.boneyard),
        "opener": state.opener,
    }


def record_name(deal: int, seating: Sequence[int]) -> str:
    """The file name of a game record: its deal and seating (participant index per seat)."""
    return f"deal-{deal:05d}_seating-{'-'.join(map(str, seating))}.json"
