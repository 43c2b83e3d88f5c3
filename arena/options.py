"""The run options that :func:`~arena.evaluation.evaluate`, :func:`~arena.league.league` and
:func:`~arena.league.sweep` share, checked in one place.

Each of the three takes the table size and the number of games its own way and the rest as
keyword :class:`RunSettings`, from which it builds one :class:`RunOptions`. The variant is read
the same way by ``draw-eval``, ``draw-play`` and ``draw-exploit`` (:func:`add_variant_arguments`,
:func:`variant_of`: ``--variant NAME`` or the three numbers),
and only agents that play it take a seat (:func:`check_plays_variant`).
"""

from __future__ import annotations

import argparse
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import agents
from agents.inputs import OBS_TYPES
from draw_env.checks import MAX_SEED, check_bool, check_choice, check_int
from draw_env.rules import (
    DEFAULT_VARIANT,
    EPISODES,
    PLAYER_COUNTS,
    PROTECTED_BONEYARD,
    VARIANTS,
    DrawGame,
    Variant,
    variant_numbers,
)
from draw_env.tiles import DEFAULT_MAX_PIP, MAX_PIP, MIN_PIP

SEATINGS = ("rotations", "permutations")
#: The most games one run plays, every table's and every duplicate replay counted (``--games``, and
#: tables x games for a league or a sweep): each game's outcome stays in memory until the run is
#: summed, about 4 KB a match (13 KB at the peak).
MAX_GAMES = 100_000
#: The most worker processes a run starts.
MAX_WORKERS = 256
#: The most agents of a league (1,820 tables of 4 players) and values of a sweep.
MAX_LEAGUE_AGENTS = 16
MAX_SWEEP_VALUES = 32


def check_run_size(tables: int, options: RunOptions) -> None:
    """Refuse a run of ``tables`` tables that would play more than :data:`MAX_GAMES` games in all.

    Raises:
        ValueError: naming the games per table, the tables and the maximum.
    """
    total = tables * options.games_per_table
    if total > MAX_GAMES:
        raise ValueError(
            f"{tables} tables of {options.games_per_table} games are {total} games, more than the {MAX_GAMES} "
            "a run plays at most (their outcomes stay in memory): ask for fewer games, agents or sweep values"
        )


def check_plays_variant(names: Sequence[str], game: DrawGame, what: str = "agent") -> None:
    """Refuse, before anything is played, an agent named in ``names`` that cannot play ``game``.

    Raises:
        ValueError: naming the agent, the variant and the agents that can play it.
    """
    if game.is_default:
        return
    # The registry says which agents play variants (agents.AgentEntry.variants).
    playing = agents.variant_agents()
    for name in names:
        if name not in playing:
            variant = ", ".join(f"{key}={value}" for key, value in game.variant.items())
            raise ValueError(
                f"{what} {name!r} plays only the seeds' game (max_pip=6, hand_size=7 or 6 with 4 players, "
                f"protected=2), not {variant}; agents that play every variant: {', '.join(playing)}"
            )


def check_specs_play_variant(specs: Sequence[tuple[str, Mapping[str, Any]]], game: DrawGame, what: str = "agent") -> None:
    """:func:`check_plays_variant` for agent specs, and the files they play checked against ``game``
    before any deal: a network with a policy file plays the variant that its file records (and no
    other, even of the same sizes), and a search's hidden-tile model (``inference=PATH``) must be
    of ``game``'s table size and variant.

    Raises:
        ValueError: naming the agent, the file and the field, and both games.
    """
    from agents.ismcts_compiled import load_location_model
    from agents.policy_network import NetworkAgent, load_policy

    for name, kwargs in specs:
        if kwargs.get("inference") is not None:
            try:
                load_location_model(kwargs["inference"], game)
            except ValueError as error:
                raise ValueError(f"{what} {name!r}: {error}") from None
        if not game.is_default and "path" in kwargs and issubclass(agents.agent_class(name), NetworkAgent):
            load_policy(kwargs["path"]).check_game(game)
        else:
            check_plays_variant([name], game, what)


def table_obs_type(specs: Sequence[tuple[str, Mapping[str, Any]]], obs_type: str | None = None) -> str:
    """What the environment of a table of ``specs`` gives: ``obs_type`` if given, else
    ``"information_state"`` when one of the agents reads information states (its file says so:
    :func:`agents.spec_obs_type`), else ``"observation"``. An agent of observations is given the
    observation an information state holds (:func:`agents.base.observation_for`), so agents of
    both kinds share a table of information states.

    Raises:
        ValueError: if ``obs_type`` is ``"observation"`` and an agent reads information states
            (naming it and its file), or ``obs_type`` is not one of the types.
    """
    if obs_type is not None:
        check_choice("obs_type", obs_type, OBS_TYPES)
    readers = [(name, kwargs) for name, kwargs in specs if agents.spec_obs_type(name, kwargs) == "information_state"]
    if obs_type == "observation" and readers:
        name, kwargs = readers[0]
        raise ValueError(
            f"agent {name!r} reads information states (its file {kwargs.get('path')}), which an environment of "
            "obs_type='observation' does not give: play it with obs_type='information_state'"
        )
    return obs_type or ("information_state" if readers else "observation")


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


def add_variant_arguments(parser: argparse.ArgumentParser, required: bool = False) -> None:
    """``--variant`` or ``--max-pip``, ``--hand-size`` and ``--protected``: the variant played
    (draw-eval, draw-play, draw-exploit; read by :func:`variant_numbers_of`). ``required``: no
    default game (draw-exploit: the seeds' game has no tree to enumerate)."""
    title = "required: --variant, or --max-pip and --hand-size" if required else "default: the seeds' game"
    group = parser.add_argument_group(f"variant ({title})")
    named = ", ".join(
        f"{name} (double-{v.max_pip}, {'7 or 6' if v.hand_size is None else v.hand_size} each, {v.protected} protected)"
        for name, v in VARIANTS.items()
    )
    group.add_argument("--variant", metavar="NAME", default=None, help=f"a named variant instead of the numbers: {named}")
    # None: not given (the default, or the variant's number with --variant).
    group.add_argument(
        "--max-pip", type=int, default=None, help="the double-N set, N in 2..9" + ("" if required else " (default 6)")
    )
    group.add_argument(
        "--hand-size", type=int, default=None,
        help="tiles dealt to each player" + ("" if required else " (default 7, or 6 with 4 players)"),
    )
    group.add_argument("--protected", type=int, default=None, help="boneyard tiles never drawn (default 2)")


def add_obs_type_argument(parser: argparse.ArgumentParser, meaning: str | None = None) -> None:
    """``--obs-type``: what the environment gives the agents (draw-eval, draw-play, draw-web,
    draw-exploit); by default what the agents' files record (:func:`table_obs_type`)."""
    parser.add_argument(
        "--obs-type", choices=OBS_TYPES, default=None,
        help=meaning or (
            "what the environment gives the agents (default: information_state if an agent's file reads "
            "information states, else observation); agents of observations are given the observation "
            "an information state holds"
        ),
    )


#: The variant flags by the argument they give.
_VARIANT_FLAGS = {"variant": "--variant", "max_pip": "--max-pip", "hand_size": "--hand-size", "protected": "--protected"}


def variant_numbers_of(args: argparse.Namespace) -> dict[str, Any]:
    """``max_pip``, ``hand_size`` and ``protected`` of the variant flags (:func:`add_variant_arguments`):
    ``--variant``'s, or the numbers given (the seeds' game's where not), each checked under its flag's name.

    Raises:
        ValueError: one line naming the flag; an unknown name names the known ones, and a number
            that is not ``--variant``'s names both flags.
    """
    if args.max_pip is not None:
        check_int("--max-pip", args.max_pip, minimum=MIN_PIP, maximum=MAX_PIP)
    if args.hand_size is not None:
        check_int("--hand-size", args.hand_size, minimum=1)
    if args.protected is not None:
        check_int("--protected", args.protected, minimum=0)
    given = {key: getattr(args, key) for key in Variant._fields if getattr(args, key) is not None}
    if args.variant is not None:
        return variant_numbers(args.variant, given, _VARIANT_FLAGS)
    return {**DEFAULT_VARIANT, **given}


def variant_of(args: argparse.Namespace, num_players: int) -> DrawGame:
    """The game of the variant flags (:func:`variant_numbers_of`) for ``num_players`` seats.

    Raises:
        ValueError: one line naming the flag, or all three numbers when the deal does not fit the set.
    """
    numbers = variant_numbers_of(args)
    try:
        return DrawGame(num_players, **numbers)
    except ValueError as error:
        flags = f"--variant {args.variant}" if args.variant is not None else "--hand-size, --protected"
        raise ValueError(f"{flags}: {error}") from None


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
    max_pip: int
    hand_size: int | None
    protected: int
    obs_type: str | None


@dataclass(frozen=True)
class RunOptions:
    """How the games of every table of a run are played; invalid values raise ``ValueError``.

    Attributes:
        num_players: seats per table, 2 to 4.
        num_games: games per table, every duplicate replay counted (at most :data:`MAX_GAMES`);
            rounded up to whole deals (see :attr:`games_per_table`).
        episode: ``"match"`` (to 100 points, or 61 with 3-4 players) or ``"hand"``.
        duplicate: replay each deal under every seating of ``seatings``; else every game has its
            own deal and the seating rotates with the game index.
        seatings: with ``duplicate``, ``"rotations"`` (n replays per deal) or ``"permutations"`` (n!).
        seed: seeds every deal and every seeded agent (0 to 2**64 - 1).
        workers: processes to play on (1 plays in this process; at most :data:`MAX_WORKERS`).
        progress: show a tqdm progress bar.
        records: a directory to write one game record (:mod:`draw_env.io.records`) per game into (kept as a
            ``Path``), or ``None``.
        batched: play tables whose agents all choose for many games at once on the batched
            environment (:mod:`arena.batched_play`); False plays every game step by step.
        max_pip, hand_size, protected: the variant (:class:`draw_env.rules.DrawGame`); the
            defaults are the seeds' game.
        obs_type: what the environment gives the agents: ``None`` (the default), what they read
            (:func:`table_obs_type`, table by table), or ``"observation"`` /
            ``"information_state"`` for every table.
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
    max_pip: int = DEFAULT_MAX_PIP
    hand_size: int | None = None
    protected: int = PROTECTED_BONEYARD
    obs_type: str | None = None
    #: The game every table plays: the players and the variant.
    game: DrawGame = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        checked = {
            "num_players": check_choice("num_players", self.num_players, PLAYER_COUNTS),
            "num_games": check_int("num_games", self.num_games, minimum=1, maximum=MAX_GAMES),
            "episode": check_choice("episode", self.episode, EPISODES),
            "duplicate": check_bool("duplicate", self.duplicate),
            "seatings": check_choice("seatings", self.seatings, SEATINGS),
            "seed": check_int("seed", self.seed, minimum=0, maximum=MAX_SEED),
            "workers": check_int("workers", self.workers, minimum=1, maximum=MAX_WORKERS),
            "progress": check_bool("progress", self.progress),
            "records": None if self.records is None else _as_path("records", self.records),
            "batched": check_bool("batched", self.batched),
            "obs_type": None if self.obs_type is None else check_choice("obs_type", self.obs_type, OBS_TYPES),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)  # the plain Python value of each check
        # The game, built once here: every table, the deals and the results read this one.
        game = DrawGame(self.num_players, self.max_pip, self.hand_size, self.protected)
        object.__setattr__(self, "game", game)
        for name, value in game.variant.items():  # hand_size resolved, None -> 7 or 6
            object.__setattr__(self, name, value)

    @property
    def variant(self) -> dict[str, int] | None:
        """The variant's ``max_pip``, ``hand_size`` and ``protected``; None for the seeds' game."""
        return None if self.game.is_default else self.game.variant

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
