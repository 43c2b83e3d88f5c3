"""The pipelines of ``draw-train``, registered once: :data:`PIPELINES`, one :class:`Pipeline` entry each.

An entry is the kind of the pipeline's runs (:data:`train.runs.RUNS`: the ``pipeline:`` name a
config gives, its config model, a module that imports without torch, so that a config is checked
before the heavy imports; the files it writes in ``output_dir``; the keys that may change when a
run is continued) and what the command needs besides: its run function (imported once the config
is valid), its guide and the ``draw-train`` options it takes. Adding a pipeline is adding its run
kind to :data:`train.runs.RUNS` and its entry here. Only the command imports this module.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from train.config import ConfigError, Section, build, raw_config, shown
from train.run_dir import RunKind
from train.runs import RUNS

#: A run function: the validated config and ``draw-train``'s arguments -> the exit status.
RunFunction = Callable[[Section, argparse.Namespace], int]

#: The ``draw-train`` options a pipeline may take beyond ``--config`` and ``--overwrite`` -> what
#: they do, for the message that refuses one where it does not apply.
OPTIONS = {
    "resume": "continues from a checkpoint .zip (rerunning the same command continues the run in output_dir)",
    "address": "collects on a Ray cluster",
}


@dataclass(frozen=True)
class Pipeline(RunKind):
    """One pipeline of ``draw-train``: the kind of its runs (name, config model, files, free keys:
    :class:`train.run_dir.RunKind`) and how the command runs it.

    Attributes:
        options: the :data:`OPTIONS` it takes.
        guide: its docs page.
        run: ``"module:function"`` of its run function (:data:`RunFunction`); the default is
            ``train.NAME.run:NAME_main``.
    """

    options: tuple[str, ...] = ()
    guide: str = "docs/training.md"
    run: str = ""

    def __post_init__(self) -> None:
        if not self.run:
            object.__setattr__(self, "run", f"train.{self.name}.run:{self.name}_main")

    def runner(self) -> RunFunction:
        """The run function, imported now (torch, JAX: the heavy imports)."""
        module, _, name = self.run.partition(":")
        function: RunFunction = getattr(importlib.import_module(module), name)
        return function


#: How each pipeline runs under ``draw-train``: its options, its guide, its run function.
_COMMAND: dict[str, dict[str, Any]] = {
    "selfplay": {"options": ("resume",), "guide": "docs/training_selfplay.md"},
    "exit": {"options": ("address",), "guide": "docs/training_exit.md"},
    "exploit": {"guide": "docs/training_exploit.md"},
    "jax_ppo": {"guide": "docs/jax_training.md"},
    "nfsp": {"guide": "docs/training_nfsp.md"},
    "cfr": {"guide": "docs/exploitability.md"},
    "inference": {"guide": "docs/inference.md"},
    "bench": {"options": ("address",), "guide": "docs/benchmark.md", "run": "train.bench.suite:bench_main"},
}
#: ``pipeline:`` -> its entry: the kind of its runs (:data:`train.runs.RUNS`) and how it runs.
PIPELINES: dict[str, Pipeline] = {
    name: Pipeline(**{field.name: getattr(kind, field.name) for field in fields(RunKind)}, **_COMMAND[name])
    for name, kind in RUNS.items()
}
#: The pipeline of a config that names none (self-play's configs name none).
DEFAULT_PIPELINE = "selfplay"


def pipeline_named(name: object) -> Pipeline:
    """The entry of ``pipeline: name`` (``None``: :data:`DEFAULT_PIPELINE`).

    Raises:
        ConfigError: naming the pipelines there are.
    """
    if name == "distill":
        raise ConfigError(
            "pipeline: distill was replaced: a distillation is a run of pipeline: exit with iterations: 1 "
            "(configs/distill_2p.yaml shows one)"
        )
    if name is None:
        name = DEFAULT_PIPELINE
    if not isinstance(name, str) or name not in PIPELINES:
        raise ConfigError(f"config key 'pipeline' must be one of {', '.join(map(repr, PIPELINES))}, got {shown(name)}")
    return PIPELINES[name]


def load_run(path: str | Path | None, overrides: Sequence[str] = ()) -> tuple[Pipeline, Section]:
    """A ``draw-train`` config: the entry of the ``pipeline`` it names (none: ``selfplay``) and the
    config, loaded as its model.

    Raises:
        ConfigError: an unknown pipeline, or anything :func:`train.config.load` refuses.
    """
    data = raw_config(path, overrides)
    pipeline = pipeline_named(data.get("pipeline"))
    if "pipeline" not in pipeline.config.model_fields:  # a model without the key (self-play's)
        data.pop("pipeline", None)
    return pipeline, build(pipeline.config, data)


def load_pipeline(path: str | Path | None, overrides: Sequence[str] = ()) -> Section:
    """:func:`load_run`'s config alone."""
    return load_run(path, overrides)[1]


def check_options(pipeline: Pipeline, args: argparse.Namespace) -> None:
    """Refuse a ``draw-train`` option the pipeline does not take.

    Raises:
        ConfigError: one line naming the option and the pipelines that take it.
    """
    for option, what in OPTIONS.items():
        if getattr(args, option, None) is not None and option not in pipeline.options:
            takers = [name for name, entry in PIPELINES.items() if option in entry.options]
            raise ConfigError(
                f"--{option} does not apply to pipeline: {pipeline.name}; it {what} and applies to "
                f"pipeline: {' and '.join(takers)} only"
            )
