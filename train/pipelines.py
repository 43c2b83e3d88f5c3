"""The pipelines of ``draw-train``, registered once: :data:`PIPELINES`, one :class:`Pipeline` entry each.

An entry says everything the command and the run directory need to know of a pipeline: the
``pipeline:`` name a config gives, its config model (a module that imports without torch, so a
config is checked before the heavy imports), its run function (imported once the config is
valid), the files it writes in ``output_dir`` (:class:`train.run_dir.RunDir` removes those and
nothing else), the keys that may change when a run is continued, and the ``draw-train`` options
it takes. Adding a pipeline is adding its entry to :data:`PIPELINES`.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from train.bench.config import ATTEMPT_RUNS, BENCH_FILES, BenchConfig
from train.cfr.config import CfrConfig
from train.config import ConfigError, Section, build, raw_config, shown
from train.exit.config import ExitConfig
from train.exploit.config import ExploitConfig
from train.inference.config import InferenceConfig
from train.jax_ppo.config import JaxPPOConfig
from train.selfplay.config import TrainConfig

#: A run function: the validated config and ``draw-train``'s arguments -> the exit status.
RunFunction = Callable[[Section, argparse.Namespace], int]

#: The ``draw-train`` options a pipeline may take beyond ``--config`` and ``--overwrite`` -> what
#: they do, for the message that refuses one where it does not apply.
OPTIONS = {
    "resume": "continues from a checkpoint .zip (rerunning the same command continues the run in output_dir)",
    "address": "collects on a Ray cluster",
}


#: The config keys that may differ when a run of any pipeline is continued: how it shows its
#: progress and where it writes (a run folder may be moved).
FREE_KEYS = ("progress_bar", "output_dir")


@dataclass(frozen=True)
class Pipeline:
    """One pipeline of ``draw-train``.

    Attributes:
        name: the ``pipeline:`` of its configs (and of its runs' marker).
        config: its config model.
        files: what a run writes in ``output_dir`` besides ``config.json`` and the marker: paths
            relative to it, ``/`` between folders, each part a regular expression.
        free: top-level config keys, beyond :data:`FREE_KEYS`, that may differ when a run is
            continued (they do not change what the run computes); :attr:`free_keys` holds all of them.
        options: the :data:`OPTIONS` it takes.
        guide: its docs page.
        run: ``"module:function"`` of its run function (:data:`RunFunction`); the default is
            ``train.NAME.run:NAME_main``.
    """

    name: str
    config: type[Section]
    files: tuple[str, ...]
    free: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    guide: str = "docs/training.md"
    run: str = ""

    def __post_init__(self) -> None:
        if not self.run:
            object.__setattr__(self, "run", f"train.{self.name}.run:{self.name}_main")

    @property
    def free_keys(self) -> tuple[str, ...]:
        """Every top-level key that may differ when a run is continued: :data:`FREE_KEYS` and :attr:`free`."""
        return (*FREE_KEYS, *self.free)

    def runner(self) -> RunFunction:
        """The run function, imported now (torch, JAX: the heavy imports)."""
        module, _, name = self.run.partition(":")
        function: RunFunction = getattr(importlib.import_module(module), name)
        return function


#: A checkpoint's files: the model zip, its side files, and its policy file (``.npz`` + ``.json``).
_CHECKPOINT = r"(zip|policy\.json|pool\.npz|state\.json|npz|json)"
#: What a run that evaluates as it trains writes: its summary and the table of its evaluations.
_EVALUATED_RUN = (r"summary\.json", r"eval\.csv")
#: The curve of a run that measures its exact exploitability as it trains (``exploitability_every``).
_EXPLOITABILITY = r"exploitability\.(json|png)"


def policy_file(stem: str) -> str:
    """The pattern of a policy file's two files (:mod:`agents.policy_file`): ``STEM.npz`` and its
    record ``STEM.json`` (``stem`` a pattern itself)."""
    return rf"{stem}\.(npz|json)"


#: ``pipeline:`` -> its entry.
PIPELINES: dict[str, Pipeline] = {
    entry.name: entry
    for entry in (
        Pipeline(
            "selfplay", TrainConfig,
            files=(
                *_EVALUATED_RUN,
                r"learning_curve\.png",
                _EXPLOITABILITY,
                rf"final\.{_CHECKPOINT}",
                rf"checkpoints/step_\d+\.{_CHECKPOINT}",
                policy_file("checkpoints/eval_latest"),
                r"tensorboard/ppo_\d+/events\.out\.tfevents\..+",
            ),
            free=("total_timesteps", "tensorboard", "final_eval"),
            options=("resume",),
            guide="docs/training_selfplay.md",
        ),
        Pipeline(
            "exit", ExitConfig,
            files=(
                *_EVALUATED_RUN,
                r"state\.json",
                r"strength\.png",
                policy_file("final"),
                policy_file(r"iter_\d{3,}/policy"),
                r"iter_\d{3,}/(data\.npz|eval\.json)",
                r"tensorboard/events\.out\.tfevents\..+",
            ),
            free=("iterations", "workers", "tensorboard", "eval"),
            options=("address",),
            guide="docs/training_exit.md",
        ),
        Pipeline(
            "exploit", ExploitConfig,
            files=(
                r"exploit\.json",
                r"eval\.csv",
                r"exploit_curve\.png",
                r"(final|interrupted)\.(zip|policy\.json)",
                policy_file("final"),
                policy_file(r"checkpoints/cpu_\d+s"),
            ),
            guide="docs/training_exploit.md",
        ),
        Pipeline(
            "jax_ppo", JaxPPOConfig,
            files=(*_EVALUATED_RUN, _EXPLOITABILITY, policy_file("final"), policy_file(r"checkpoints/update_\d+")),
            guide="docs/jax_training.md",
        ),
        Pipeline(
            "cfr", CfrConfig,
            files=(r"state\.npz", r"progress\.json", r"curve\.(json|png)", policy_file("policy"), r"summary\.json"),
            free=("iterations", "cpu_minutes", "target", "checkpoint_minutes"),
            guide="docs/exploitability.md",
        ),
        Pipeline(
            "inference", InferenceConfig,
            files=(r"hidden_tiles\.(npz|json)", r"summary\.json"),
            guide="docs/inference.md",
        ),
    )
}
PIPELINES["bench"] = Pipeline(
    "bench", BenchConfig,
    # The attempts hold run folders of the pipelines the cells drive (expert iteration, the exploiter).
    files=(*BENCH_FILES, *(rf"work/[A-Za-z0-9_.-]+/\d+/{name}/{pattern}" for name in ATTEMPT_RUNS
                           for pattern in (r"config\.json", r"\.draw-run\.json", *PIPELINES[name].files))),
    free=("algorithms", "seeds", "workers"),
    options=("address",),
    guide="docs/benchmark.md",
    run="train.bench.suite:bench_main",
)
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
