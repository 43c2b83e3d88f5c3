"""A sweep's config (``draw-tune --config configs/sweeps/NAME.yaml``) and its trials.

A sweep names a shipped ``draw-train`` config (``base``), overrides every trial shares
(``fixed``, and ``budget``: the base pipeline's own budget keys, such as ``total_timesteps`` or
``updates``), a ``grid`` (config key -> the values to try), the seeds that choose the winner
(``tuning_seeds``) and the seeds that report it (``held_out_seeds``). Every key is checked
against the base pipeline's config model, for every grid point, before anything runs
(:func:`check_sweep`): an unknown key or a bad value is one line naming it.

A trial is one ``draw-train`` run of the base config with its overrides (:class:`Trial`); its
name is a digest of those overrides, so a rerun finds the same trials in the same folders and a
changed budget or grid never reuses a run made with other settings.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from draw_env.exact.game_tree import DEFAULT_MAX_BYTES, exactly_measurable
from draw_env.rules import DrawGame
from train.config import ConfigError, Section, output_dir, shown, workers
from train.pipelines import Pipeline, load_run


@dataclass(frozen=True)
class Tunable:
    """What a sweep needs to know of a pipeline it tunes.

    Attributes:
        steps: the key of its ``summary.json`` that counts environment steps.
        continues: a rerun of an unfinished run continues it; else (runs that do not continue)
            the trial starts its run over.
    """

    steps: str
    continues: bool = True


#: The pipelines a sweep can tune. Each writes its final policy as ``final.npz`` (+ ``final.json``)
#: in its run folder.
TUNABLE = {
    "selfplay": Tunable("timesteps"),
    "jax_ppo": Tunable("env_steps"),
    "nfsp": Tunable("env_steps", continues=False),
}
#: The policy file a tunable pipeline leaves in its run folder.
FINAL_POLICY = "final.npz"
#: How a trial's final policy is played when it is measured: sampling its softmax (the policy
#: itself, what the training curves measure: ``network:path=...,deterministic=false``) or its
#: most probable action (how ``network`` plays by default).
PLAYS = ("sampling", "most_probable")
#: The keys a sweep sets itself in every trial.
SWEEP_KEYS = ("seed", "output_dir")
#: The most grid points and seeds (a bound on what one config can ask for).
MAX_POINTS = 1000
MAX_SEEDS = 100


class SweepConfig(Section):
    """The settings of one sweep (docs/tuning.md describes each key)."""

    base: str = Field(min_length=1, description=f"a draw-train config (pipeline {', '.join(TUNABLE)})")
    fixed: dict[str, Any] = Field(default_factory=dict, description="overrides every trial shares")
    budget: dict[str, Any] = Field(min_length=1, description="the base pipeline's budget keys, per trial")
    grid: dict[str, list[Any]] = Field(min_length=1, description="config key -> the values to try")
    tuning_seeds: list[int] = Field(min_length=1, max_length=MAX_SEEDS)
    held_out_seeds: list[int] = Field(min_length=1, max_length=MAX_SEEDS)
    play: Literal[PLAYS] = "sampling"  # type: ignore[valid-type]
    workers: int = workers(1)
    max_memory_gib: float = Field(DEFAULT_MAX_BYTES / 1024**3, gt=0, le=1024)
    output_dir: str = output_dir("runs/sweep")
    progress_bar: bool = True

    @field_validator("grid")
    @classmethod
    def _grid(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        points = 1
        for key, values in value.items():
            if not values:
                raise ValueError(f"grid key {key!r} has no values")
            if len({json.dumps(item, sort_keys=True) for item in values}) != len(values):
                raise ValueError(f"grid key {key!r} repeats a value: {shown(values)}")
            points *= len(values)
        if points > MAX_POINTS:
            raise ValueError(f"has {points} points, more than {MAX_POINTS}")
        return value

    @field_validator("tuning_seeds", "held_out_seeds")
    @classmethod
    def _seeds(cls, value: list[int]) -> list[int]:
        if len(set(value)) != len(value) or min(value) < 0:
            raise ValueError(f"must be distinct seeds >= 0, got {shown(value)}")
        return value

    @model_validator(mode="after")
    def _disjoint(self) -> SweepConfig:
        shared = sorted(set(self.tuning_seeds) & set(self.held_out_seeds))
        if shared:
            raise ValueError(f"held_out_seeds must not hold a tuning seed, both hold {shared}")
        sections = {"fixed": self.fixed, "budget": self.budget, "grid": self.grid}
        for name, keys in sections.items():
            for key in keys:
                if key.split(".")[0] in SWEEP_KEYS:
                    raise ValueError(f"{name}: the sweep sets {key!r} itself (tuning_seeds, output_dir)")
        for (one, left), (other, right) in itertools.combinations(sections.items(), 2):
            both = sorted(set(left) & set(right))
            if both:
                raise ValueError(f"{one} and {other} both set {both[0]!r}")
        return self

    def points(self) -> list[dict[str, Any]]:
        """Every grid point (key -> value), in the grid's order, the last key varying fastest."""
        keys = list(self.grid)
        return [dict(zip(keys, values)) for values in itertools.product(*self.grid.values())]


def override(key: str, value: Any) -> str:
    """``KEY=VALUE`` as ``draw-train`` parses it (the value as YAML: JSON is YAML)."""
    return f"{key}={json.dumps(value)}"


@dataclass(frozen=True)
class Trial:
    """One ``draw-train`` run of a sweep: the base config with ``point`` and ``seed``."""

    stage: str
    point: dict[str, Any]
    seed: int
    overrides: tuple[str, ...] = field(compare=False)

    @property
    def name(self) -> str:
        """A digest of the overrides and the seed: the trial's folder name."""
        digest = hashlib.sha256("\n".join(self.overrides).encode()).hexdigest()[:12]
        return f"{digest}-seed{self.seed}"

    def folder(self, sweep_dir: Path) -> Path:
        return sweep_dir / "trials" / self.name


def make_trial(config: SweepConfig, stage: str, point: dict[str, Any], seed: int) -> Trial:
    """The trial of ``point`` (grid key -> value; ``{}``: the base config) at ``seed``."""
    overrides = tuple(
        override(key, value)
        for key, value in (*config.fixed.items(), *config.budget.items(), *point.items(), ("seed", seed))
    )
    return Trial(stage, dict(point), seed, overrides)


def run_overrides(trial: Trial, sweep_dir: Path) -> list[str]:
    """What ``draw-train`` is given for ``trial``: its overrides, its run folder, no progress bar."""
    return [*trial.overrides, override("output_dir", str(trial.folder(sweep_dir) / "run")), "progress_bar=false"]


def check_sweep(config: SweepConfig) -> tuple[Pipeline, DrawGame]:
    """Check every grid point's ``draw-train`` config (and the base's) before anything runs.

    Returns:
        the base pipeline's entry and the game its trials play.

    Raises:
        ConfigError: one line: a pipeline the sweep cannot tune, a game that cannot be measured
            exactly, or a key or value the pipeline's config refuses (naming the grid point).
    """
    base = Path(config.base)
    if not base.is_file():
        raise ConfigError(f"config key 'base': no config file at {config.base!r}")
    pipeline, _ = load_run(base)
    if pipeline.name not in TUNABLE:
        raise ConfigError(
            f"config key 'base': {config.base} is a config of pipeline: {pipeline.name}; a sweep tunes "
            f"pipeline: {' or '.join(TUNABLE)} (their final policy is measured)"
        )
    _, base_config = load_run(base, make_trial(config, "held_out", {}, config.held_out_seeds[0]).overrides)
    game: DrawGame = base_config.game()  # type: ignore[attr-defined]
    if not exactly_measurable(game, int(config.max_memory_gib * 1024**3)):
        raise ConfigError(
            f"the trials play {dict(game.variant)}, a game whose exploitability cannot be measured exactly "
            "(2 players and a tree within max_memory_gib: variant micro or mini)"
        )
    for point in config.points():
        try:
            _, trial_config = load_run(base, make_trial(config, "tuning", point, config.tuning_seeds[0]).overrides)
        except ConfigError as error:
            raise ConfigError(f"grid point {shown(point)}: {error}") from None
        if trial_config.game() != game:  # type: ignore[attr-defined]
            raise ConfigError(f"grid point {shown(point)}: changes the game; a sweep compares trials of one game")
    return pipeline, game
