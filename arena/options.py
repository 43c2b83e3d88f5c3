"""The run options that :func:`~arena.evaluation.evaluate`, :func:`~arena.league.league` and
:func:`~arena.league.sweep` share, checked in one place.

Each of the three takes the table size and the number of games its own way and the rest as
keyword :class:`RunSettings`, from which it builds one :class:`RunOptions`.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from draw_env.checks import MAX_SEED, check_bool, check_choice, check_int
from draw_env.rules import EPISODES, PLAYER_COUNTS

SEATINGS = ("rotations", "permutations")


def seatings_for(num_players: int, scheme: str) -> list[tuple[int, ...]]:
    """The seatings one deal is replayed under: ``seating[seat]`` is a participant index.

    Args:
        num_players: 2, 3 or 4.
        scheme: ``"rotations"`` (n cyclic rotations) or ``"permutations"`` (all n! orders).
    """
    base = tuple(range(num_players))
    if scheme == "rotations":
        return [base[shift:] + base[:shift] for shift in range(num_players)]
    return list(itertools.permutations(base))


class RunSettings(TypedDict, total=False):
    """The keyword settings of ``evaluate``, ``league`` and ``sweep``: :class:`RunOptions`'s
    fields but the table size and the number of games (same meanings, same defaults)."""

    episode: str
    duplicate: bool
    seatings: str
    seed: int
    workers: int
    progress: bool
    records: str | os.PathLike[str] | None
    batched: bool


@dataclass(frozen=True)
class RunOptions:
    """How the games of every table of a run are played; invalid values raise ``ValueError``.

    Attributes:
        num_players: seats per table, 2 to 4.
        num_games: games per table, every duplicate replay counted; rounded up to whole deals
            (see :attr:`games_per_table`).
        episode: ``"match"`` (to 100 points, or 61 with 3-4 players) or ``"hand"``.
        duplicate: replay each deal under every seating of ``seatings``; else every game has its
            own deal and the seating rotates with the game index.
        seatings: with ``duplicate``, ``"rotations"`` (n replays per deal) or ``"permutations"`` (n!).
        seed: seeds every deal and every seeded agent (0 to 2**64 - 1).
        workers: processes to play on (1 plays in this process).
        progress: show a tqdm progress bar.
        records: a directory to write one game record (:mod:`draw_env.records`) per game into (kept as a
            ``Path``), or ``None``.
        batched: play tables whose agents all choose for many games at once on the batched
            environment (:mod:`arena.batched_play`); False plays every game step by step.
    """

    num_players: int
    num_games: int = 2000
    episode: str = "match"
    duplicate: bool = True
    seatings: str = "rotations"
    seed: int = 0
    workers: int = 1
    progress: bool = True
    records: str | os.PathLike[str] | None = None
    batched: bool = True

    def __post_init__(self) -> None:
        checked = {
            "num_players": check_choice("num_players", self.num_players, PLAYER_COUNTS),
            "num_games": check_int("num_games", self.num_games, minimum=1),
            "episode": check_choice("episode", self.episode, EPISODES),
            "duplicate": check_bool("duplicate", self.duplicate),
            "seatings": check_choice("seatings", self.seatings, SEATINGS),
            "seed": check_int("seed", self.seed, minimum=0, maximum=MAX_SEED),
            "workers": check_int("workers", self.workers, minimum=1),
            "progress": check_bool("progress", self.progress),
            "records": None if self.records is None else _as_path("records", self.records),
            "batched": check_bool("batched", self.batched),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)  # the plain Python value of each check

    @property
    def replays_per_deal(self) -> int:
        """How many games each deal gives: its seatings with ``duplicate``, else 1."""
        return len(seatings_for(self.num_players, self.seatings)) if self.duplicate else 1

    @property
    def num_deals(self) -> int:
        """Deals per table: ``num_games`` over the replays per deal, rounded up."""
        return -(-self.num_games // self.replays_per_deal)

    @property
    def games_per_table(self) -> int:
        """Games each table plays: ``num_games`` rounded up to whole deals."""
        return self.num_deals * self.replays_per_deal


def _as_path(name: str, value: object) -> Path:
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
        raise ValueError(f"{name} must be a directory path (str or Path) or None, got {value!r}")
    return Path(value)
