"""A benchmark suite's config (``configs/bench/*.yaml``): the grid, the budgets, the panel.

It imports nothing heavy: ``draw-train``'s pipeline registry loads it with the other configs.
Each algorithm's settings are its own file, ``settings_dir/NAME.yaml`` (:func:`read_settings`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from agents.inputs import OBS_TYPES
from train.bench.protocol import ALGORITHM_PATHS, GAME_NAMES, GAMES, BenchGame
from train.config import ConfigError, Section, integer, number, output_dir, read_yaml, shown, workers
from train.meter import Budget

#: The files of a benchmark folder (``train.runs``: its run kind's ``files``), the attempts'
#: curve policies included (:mod:`train.bench.suite` describes them).
BENCH_FILES = (
    r"cells/[A-Za-z0-9_.-]+\.json",
    r"policies/[A-Za-z0-9_.-]+\.(npz|json)",
    r"(panel|reference)-[a-z0-9]+\.json",
    r"summary\.(md|json)",
    r"report/[A-Za-z0-9_.-]+\.(png|json|md)",
    r"work/[A-Za-z0-9_.-]+/\d+/curve/(point|rllib)_\d+\.(npz|json)",
    r"work/[A-Za-z0-9_.-]+/\d+/(request|result)\.json",
    r"work/[A-Za-z0-9_.-]+/\d+/rllib\.log",
)
#: The pipelines whose run folders a cell's attempt may hold (the exploiter's; expert iteration's in
#: a benchmark folder of an earlier version): their files count as the benchmark's (its run kind in
#: :data:`train.runs.RUNS` adds their patterns).
ATTEMPT_RUNS = ("exit", "exploit")
#: The largest grid a suite may hold.
MAX_SEEDS = 1000
#: The algorithms that train on information states (``obs_type: information_state``): the project's
#: own pipelines; OpenSpiel's and RLlib's train on observations here.
INFORMATION_STATE_ALGORITHMS = ("cfr", "sb3_ppo", "jax_ppo", "jax_mmd", "exit")


class BudgetSettings(Section):
    """A game's budget per cell: ``env_steps``, ``cpu_seconds`` or both (the first reached ends it)."""

    env_steps: int | None = Field(None, ge=1, le=10**13, description="an integer in [1, 1e13], or null")
    cpu_seconds: float | None = Field(None, gt=0, le=10**7, description="a number in (0, 1e7], or null")

    @model_validator(mode="after")
    def _one(self) -> BudgetSettings:
        if self.env_steps is None and self.cpu_seconds is None:
            raise ConfigError("a budget needs env_steps or cpu_seconds (or both)")
        return self

    def budget(self) -> Budget:
        return Budget(self.env_steps, self.cpu_seconds)


class PanelSettings(Section):
    """The reference panel of the full games: agent specs, the games each plays the policy, and its
    own league (played once per game, its ratings the fixed scale)."""

    specs: list[str] = Field(
        default_factory=lambda: ["heaviest", "variety", "ismcts:simulations=50", "ismcts:simulations=400", "network"],
        min_length=1, max_length=16, description="a non-empty list of agent specs (at most 16)",
    )
    matches: int = integer(200, 1, 1_000_000)
    league_matches: int = integer(200, 1, 1_000_000)
    seed: int = integer(20_260_101, 0, 2**63 - 1)


class ExploiterSettings(Section):
    """The exploiter on full games (train/exploit/): a MaskablePPO best response trained against
    each cell's final policy for ``cpu_minutes`` (null: none), then ``matches`` duplicate matches
    against it; ``settings`` are keys of an exploit config (``configs/exploit.yaml``)."""

    cpu_minutes: float | None = Field(None, gt=0, le=10_000, description="a number in (0, 10000], or null (no exploiter)")
    matches: int = integer(200, 1, 1_000_000)
    settings: dict[str, Any] = Field(default_factory=dict)


class BenchConfig(Section):
    """A benchmark suite: ``algorithms`` (each mapped to its games) x ``seeds``, at ``budgets``."""

    pipeline: Literal["bench"] = "bench"
    algorithms: dict[str, list[str]] = Field(
        default_factory=lambda: {"cfr": ["micro"]},
        description="a mapping of algorithm names to lists of game names",
    )
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1, max_length=MAX_SEEDS)
    budgets: dict[str, BudgetSettings] = Field(
        default_factory=lambda: {"micro": BudgetSettings(env_steps=1_000_000, cpu_seconds=None)},
        description="a mapping of game names to budgets",
    )
    budget_overrides: dict[str, dict[str, BudgetSettings]] = Field(
        default_factory=dict,
        description="a mapping of algorithm names to mappings of game names to budgets (each replacing the game's)",
    )
    curve_points: int = integer(5, 1, 1000)
    settings_dir: str = Field("configs/bench/algorithms", min_length=1)
    panel: PanelSettings = Field(default_factory=PanelSettings)
    exploiter: ExploiterSettings = Field(default_factory=lambda: ExploiterSettings(cpu_minutes=None))
    workers: int = workers(1)
    max_memory_gib: float = number(4.0, 0.0, 1024.0, low_open=True)
    obs_type: Literal[OBS_TYPES] = "observation"  # type: ignore[valid-type]
    output_dir: str = output_dir("runs/bench")
    progress_bar: bool = True

    @field_validator("algorithms")
    @classmethod
    def _grid(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        if not value:
            raise ValueError("must name at least one algorithm")
        for name, games in value.items():
            if name not in ALGORITHM_PATHS:
                raise ValueError(f"unknown algorithm {shown(name)}; the algorithms are {', '.join(ALGORITHM_PATHS)}")
            if not games or len(set(games)) != len(games) or not set(games) <= set(GAME_NAMES):
                raise ValueError(f"{name}: must be distinct games of {', '.join(GAME_NAMES)}, got {shown(games)}")
        return value

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, value: list[int]) -> list[int]:
        if len(set(value)) != len(value) or not all(0 <= seed < 2**32 for seed in value):
            raise ValueError(f"must be distinct seeds in [0, 2**32), got {shown(value)}")
        return value

    @model_validator(mode="after")
    def _obs_type(self) -> BenchConfig:
        if self.obs_type == "information_state":
            refused = [name for name in self.algorithms if name not in INFORMATION_STATE_ALGORITHMS]
            if refused:
                raise ConfigError(
                    f"config key 'obs_type': algorithm {refused[0]!r} trains on observations only; with "
                    f"obs_type: information_state the algorithms are {', '.join(INFORMATION_STATE_ALGORITHMS)}"
                )
        return self

    @model_validator(mode="after")
    def _budgets(self) -> BenchConfig:
        for game in self.games():
            if game.name not in self.budgets:
                raise ConfigError(f"config key 'budgets' must give game {game.name!r} a budget")
        unknown = sorted(set(self.budgets) - set(GAME_NAMES))
        if unknown:  # a game no algorithm of the grid plays is kept: a grid cut down by an override
            raise ConfigError(f"config key 'budgets' must name games of {', '.join(GAME_NAMES)}, got {shown(unknown)}")
        for name, games in self.budget_overrides.items():
            if name not in ALGORITHM_PATHS or not set(games) <= set(GAME_NAMES):
                raise ConfigError(f"config key 'budget_overrides' must map algorithms to games, "
                                  f"got {shown(name)}: {shown(sorted(games))}")
        return self

    def budget(self, algorithm: str, game: str) -> Budget:
        """The budget of ``algorithm``'s cells on ``game``: its override, else the game's."""
        return self.budget_overrides.get(algorithm, {}).get(game, self.budgets[game]).budget()

    def games(self) -> list[BenchGame]:
        """The games of the grid, in the benchmark's order."""
        named = {game for games in self.algorithms.values() for game in games}
        return [GAMES[name] for name in GAME_NAMES if name in named]

    def settings_file(self, algorithm: str) -> Path:
        return Path(self.settings_dir) / f"{algorithm}.yaml"


def read_settings(config: BenchConfig, algorithm: str, game: str) -> dict[str, Any]:
    """The settings of ``algorithm`` for ``game``: its file's keys but ``games``, with the keys of
    ``games: {GAME: {...}}`` for that game on top (one level deep, sections merged key by key).

    Raises:
        ConfigError: a missing or malformed file, or a ``games`` key that is not such a mapping.
    """
    path = config.settings_file(algorithm)
    data = read_yaml(path)
    per_game = data.pop("games", {})
    if not isinstance(per_game, dict) or not all(
        isinstance(key, str) and key in GAME_NAMES and isinstance(value, dict) for key, value in per_game.items()
    ):
        raise ConfigError(f"{path}: key 'games' must map game names ({', '.join(GAME_NAMES)}) to mappings of settings")
    for key, value in per_game.get(game, {}).items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data
