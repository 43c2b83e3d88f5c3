"""The runs of ``draw-train``, one :class:`train.run_dir.RunKind` each: :data:`RUNS`.

A kind says what :class:`train.run_dir.RunDir` needs to know of a pipeline's runs: the
``pipeline:`` name its marker records, its config model, the files it writes in ``output_dir``
(a run started over loses those and nothing else) and the keys that may change when a run is
continued. A pipeline's run function hands its kind to :class:`~train.run_dir.RunDir`, with
:data:`RUNS` as the runs a directory may already hold (:func:`open_run_dir`); the command's registry
(:mod:`train.pipelines`) adds how each is run.
"""

from __future__ import annotations

from typing import Any

from train.bench.config import ATTEMPT_RUNS, BENCH_FILES, BenchConfig
from train.cfr.config import CfrConfig
from train.config import Section
from train.exit.config import ExitConfig
from train.exploit.config import ExploitConfig
from train.inference.config import InferenceConfig
from train.jax_ppo.config import JaxPPOConfig
from train.nfsp.config import NfspConfig
from train.run_dir import RunDir, RunKind
from train.selfplay.config import TrainConfig

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


#: ``pipeline:`` -> the kind of its runs.
RUNS: dict[str, RunKind] = {
    kind.name: kind
    for kind in (
        RunKind(
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
        ),
        RunKind(
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
        ),
        RunKind(
            "exploit", ExploitConfig,
            files=(
                r"exploit\.json",
                r"eval\.csv",
                r"exploit_curve\.png",
                r"(final|interrupted)\.(zip|policy\.json)",
                policy_file("final"),
                policy_file(r"checkpoints/cpu_\d+s"),
            ),
        ),
        RunKind(
            "jax_ppo", JaxPPOConfig,
            files=(*_EVALUATED_RUN, _EXPLOITABILITY, r"state\.npz", policy_file("final"),
                   policy_file(r"checkpoints/update_\d+")),
        ),
        RunKind(
            "nfsp", NfspConfig,
            files=(*_EVALUATED_RUN, _EXPLOITABILITY, policy_file("final"), policy_file(r"checkpoints/steps_\d+")),
        ),
        RunKind(
            "cfr", CfrConfig,
            files=(r"state\.npz", r"progress\.json", r"curve\.(json|png)", policy_file("policy"), r"summary\.json"),
            free=("iterations", "cpu_minutes", "target", "checkpoint_minutes"),
        ),
        RunKind(
            "inference", InferenceConfig,
            files=(r"hidden_tiles\.(npz|json)", r"summary\.json"),
        ),
    )
}
RUNS["bench"] = RunKind(
    "bench", BenchConfig,
    # The attempts hold run folders of the pipelines the cells drive (expert iteration, the exploiter).
    files=(*BENCH_FILES, *(rf"work/[A-Za-z0-9_.-]+/\d+/{name}/{pattern}" for name in ATTEMPT_RUNS
                           for pattern in (r"config\.json", r"\.draw-run\.json", *RUNS[name].files))),
    free=("algorithms", "seeds", "workers"),
)


def open_run_dir(config: Section, name: str, **options: Any) -> RunDir:
    """:class:`~train.run_dir.RunDir` of ``config`` for a run of pipeline ``name``, which
    recognises a run of any pipeline of :data:`RUNS` already there (``options``: its keywords)."""
    return RunDir(config, RUNS[name], known=RUNS, **options)
