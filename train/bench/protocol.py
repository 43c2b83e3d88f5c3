"""The benchmark's interface: games, budgets, cells, policies and the algorithm registry.

A **cell** of the benchmark is one algorithm trained on one game with one seed at one budget
(:class:`train.meter.Budget`). An algorithm is a function ``(cell, work folder, checkpoint) ->
policy``: an adapter that maps the cell's settings onto its learner's config and calls the
learner's ``train(config, budget, on_checkpoint, points)``, which calls ``checkpoint(env_steps,
cpu_seconds, policy)`` at each of the cell's ``curve_points`` (the suite measures the policy
there: the learning curve) and returns its final policy (:class:`train.policies.Policy`). Algorithms are registered by name as module paths and imported on use, so
that a library (JAX, Ray, OpenSpiel) loads only in a cell that needs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from draw_env.rules import DrawGame
from train.meter import Budget, Checkpoint
from train.policies import Policy


@dataclass(frozen=True)
class BenchGame:
    """One game of the table.

    Attributes:
        name: ``"micro"``, ``"mini"`` (the named variants, 2 players, one hand: measured
            exactly), ``"draw2"``, ``"draw3"``, ``"draw4"`` (the seeds' game, ``draw``, with 2, 3,
            4 players and matches: measured by ratings).
        num_players: seats, 2 to 4.
        max_pip, hand_size, protected: the variant (:class:`draw_env.rules.DrawGame`).
        episode: ``"hand"`` (one hand) or ``"match"`` (hands until someone reaches the target).
    """

    name: str
    num_players: int
    max_pip: int
    hand_size: int
    protected: int
    episode: Literal["hand", "match"]

    @property
    def rules(self) -> DrawGame:
        """The game's rules (a fresh, validated :class:`DrawGame`)."""
        return DrawGame(self.num_players, self.max_pip, self.hand_size, self.protected)

    @classmethod
    def of_variant(cls, name: str, variant: str, num_players: int, episode: Literal["hand", "match"]) -> BenchGame:
        """The game ``name``: the named variant ``variant`` (:data:`draw_env.rules.VARIANTS`)
        with ``num_players`` seats and ``episode``."""
        return cls(name, num_players, **DrawGame.named(variant, num_players).variant, episode=episode)

    @property
    def exact(self) -> bool:
        """Measured by exact exploitability: one hand of a game whose whole tree fits the memory
        bound (:func:`draw_env.exact.game_tree.exactly_measurable`: two players, a small variant)."""
        from draw_env.exact.game_tree import exactly_measurable  # numba: loaded by the cells that measure

        return self.episode == "hand" and exactly_measurable(self.rules)

    @property
    def variant(self) -> dict[str, int]:
        """``max_pip``, ``hand_size``, ``protected`` (the keys the pipelines' configs take)."""
        return {"max_pip": self.max_pip, "hand_size": self.hand_size, "protected": self.protected}

    def to_dict(self) -> dict[str, Any]:
        """The game as a cell record stores it."""
        return {"name": self.name, "num_players": self.num_players, **self.variant, "episode": self.episode}


#: The benchmark's games, each a named variant with its players and episode: the two exact
#: variants (docs page "Exploitability") and the seeds' game.
GAMES: dict[str, BenchGame] = {
    "micro": BenchGame.of_variant("micro", "micro", 2, "hand"),
    "mini": BenchGame.of_variant("mini", "mini", 2, "hand"),
    "draw2": BenchGame.of_variant("draw2", "draw", 2, "match"),
    "draw3": BenchGame.of_variant("draw3", "draw", 3, "match"),
    "draw4": BenchGame.of_variant("draw4", "draw", 4, "match"),
}
#: The games of the benchmark, by name, in the table's order.
GAME_NAMES = tuple(GAMES)


def game_named(name: str) -> BenchGame:
    """The benchmark game ``name``.

    Raises:
        ValueError: naming the unknown game and the known ones.
    """
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; the games are {', '.join(GAMES)}")
    return GAMES[name]


@dataclass(frozen=True)
class Cell:
    """One run of the table: ``algorithm`` on ``game`` with ``seed`` within ``budget``.

    Attributes:
        algorithm: a name of :data:`ALGORITHMS`.
        settings: the algorithm's settings file contents (``configs/bench/algorithms/NAME.yaml``).
        curve_points: how many times the algorithm calls its checkpoint, evenly over the budget
            (the last at the end of training).
        obs_type: what the policy reads, ``"observation"`` or ``"information_state"`` (the suite's
            ``obs_type``), and so what it is measured with.
    """

    algorithm: str
    game: BenchGame
    seed: int
    budget: Budget
    settings: Mapping[str, Any] = field(default_factory=dict)
    curve_points: int = 5
    obs_type: str = "observation"

    @property
    def key(self) -> str:
        """The cell's file stem in a benchmark run: ``ALGORITHM-GAME-sSEED``."""
        return f"{self.algorithm}-{self.game.name}-s{self.seed}"


#: ``(cell, work folder, checkpoint) -> final policy``.
Algorithm = Callable[[Cell, Path, Checkpoint], Policy]

#: The algorithms by name: ``"module:function"``, imported on use (:func:`algorithm`).
ALGORITHM_PATHS: dict[str, str] = {
    "cfr": "train.bench.algorithms:cfr_plus",
    "sb3_ppo": "train.bench.algorithms:sb3_ppo",
    "jax_ppo": "train.bench.algorithms:jax_ppo",
    "jax_mmd": "train.bench.algorithms:jax_ppo",
    "exit": "train.bench.algorithms:expert_iteration",
    "rllib_ppo": "train.bench.algorithms:rllib_ppo",
    "nfsp": "train.bench.openspiel_algorithms:nfsp",
    "psro": "train.bench.openspiel_algorithms:psro",
    "mmd": "train.bench.openspiel_algorithms:mmd",
    "mccfr": "train.bench.openspiel_algorithms:mccfr",
}
#: The algorithms imported so far (filled by :func:`algorithm`).
ALGORITHMS: dict[str, Algorithm] = {}


def algorithm(name: str) -> Algorithm:
    """The algorithm ``name``, importing its module on first use.

    Raises:
        ValueError: naming the unknown algorithm and the known ones.
    """
    if name not in ALGORITHMS:
        if name not in ALGORITHM_PATHS:
            raise ValueError(f"unknown algorithm {name!r}; the algorithms are {', '.join(ALGORITHM_PATHS)}")
        module, _, function = ALGORITHM_PATHS[name].partition(":")
        ALGORITHMS[name] = getattr(importlib.import_module(module), function)
    return ALGORITHMS[name]
