"""The pipelines of draw-train, registered once (train.pipelines.PIPELINES), and their one evaluation section."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import Field

from train import cli, pipelines
from train.config import ConfigError, EvalSettings, Evaluated, Section, build, load
from train.exit.config import ExitConfig
from train.exploit.config import ExploitConfig
from train.jax_ppo.config import JaxPPOConfig
from train.pipelines import PIPELINES, Pipeline, load_run
from train.run_dir import MARKER
from train.runs import RUNS, open_run_dir
from train.selfplay.config import TrainConfig

ROOT = Path(__file__).resolve().parent.parent
CALLS: list[tuple[Section, argparse.Namespace]] = []


class TinyConfig(Evaluated):
    """A pipeline's config: its name, output directory and evaluation section."""

    pipeline: str = "tiny"
    output_dir: str = "runs/tiny"
    eval: EvalSettings = Field(default_factory=EvalSettings)

    evaluations: ClassVar[dict[str, dict[str, Any]]] = {"eval": {}}


def tiny_run(config: Section, args: argparse.Namespace) -> int:
    CALLS.append((config, args))
    return 7


def test_draw_train_dispatches_on_the_registry_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    entry = Pipeline(name="tiny", config=TinyConfig, run=f"{__name__}:tiny_run", files=(), options=("address",))
    monkeypatch.setitem(PIPELINES, "tiny", entry)
    CALLS.clear()
    path = tmp_path / "tiny.yaml"
    path.write_text("pipeline: tiny\neval: {matches: 3}\n")
    assert cli.main(["--config", str(path), "--address", "somewhere", f"output_dir={tmp_path / 'run'}"]) == 7
    ((config, args),) = CALLS
    assert isinstance(config, TinyConfig) and config.eval.matches == 3 and args.address == "somewhere"
    source = ast.parse((ROOT / "train" / "cli.py").read_text())
    assert not [node for node in ast.walk(source) if isinstance(node, ast.Name) and node.id == "isinstance"]


def test_every_entry_names_a_config_with_the_shared_evaluation_and_a_run_function() -> None:
    assert {"selfplay", "exit", "exploit", "jax_ppo"} <= set(PIPELINES)
    for name, entry in PIPELINES.items():
        assert entry.name == name
        fields = entry.config.model_fields
        # An evaluation, where a pipeline has one, is the shared section, with this pipeline's defaults.
        evaluations = [key for key in fields if key in ("eval", "final_eval") or key.startswith("eval_")]
        assert all(fields[key].annotation is EvalSettings for key in evaluations), name
        if evaluations:
            assert issubclass(entry.config, Evaluated) and set(entry.config.evaluations) == set(evaluations), name
        else:
            assert name not in ("selfplay", "exit", "exploit", "jax_ppo")
        module, _, function = entry.run.partition(":")
        spec = importlib.util.find_spec(module)  # found without importing torch or JAX
        assert spec is not None and spec.origin is not None
        defined = {node.name for node in ast.parse(Path(spec.origin).read_text()).body if isinstance(node, ast.FunctionDef)}
        assert function in defined, entry.run
        assert RUNS[name].files == entry.files
        assert (ROOT / entry.guide).is_file()


def test_an_option_a_pipeline_does_not_take_is_one_line_naming_those_that_do(tmp_path: Path) -> None:
    args = argparse.Namespace(resume="x.zip", address=None)
    with pytest.raises(ConfigError, match=r"^--resume does not apply to pipeline: exploit; .* pipeline: selfplay only$"):
        pipelines.check_options(PIPELINES["exploit"], args)
    pipelines.check_options(PIPELINES["selfplay"], args)
    with pytest.raises(ConfigError, match="'pipeline' must be one of 'selfplay', 'exit', 'exploit', 'jax_ppo'"):
        load_run(None, ["pipeline=nothing"])


@pytest.mark.parametrize(
    ("name", "pipeline"),
    [("quick", "selfplay"), ("exit_quick", "exit"), ("exploit", "exploit"), ("jax_ppo_quick", "jax_ppo")],
)
def test_the_shipped_configs_load_as_their_pipeline(name: str, pipeline: str) -> None:
    entry, config = load_run(ROOT / "configs" / f"{name}.yaml")
    assert entry.name == pipeline and isinstance(config, entry.config)
    assert isinstance(config.eval, EvalSettings)  # type: ignore[attr-defined]


def test_a_pipelines_evaluation_defaults_apply_key_by_key() -> None:
    exploit = load(ExploitConfig, None, ["eval.matches=5"])
    assert (exploit.eval.every, exploit.eval.matches, exploit.final_eval.matches) == (1.0, 5, 2000)
    exit_config = load(ExitConfig, None, ["eval.matches=7"])
    assert (exit_config.eval.previous, exit_config.eval.matches) == (True, 7)
    selfplay = load(TrainConfig, None, ["final_eval.matches=9"])
    assert selfplay.final_eval.opponents == ["heaviest", "variety", "random"] and selfplay.eval.every == 50_000
    # A whole saved config (every key, those that do not apply at their defaults) loads again.
    assert build(TrainConfig, selfplay.to_dict()) == selfplay
    assert build(ExploitConfig, exploit.to_dict()) == exploit


@pytest.mark.parametrize(
    ("model", "override", "message"),
    [
        (ExitConfig, "eval.every=2", "^config key 'eval.every' does not apply here: expert iteration evaluates after every iteration$"),
        (TrainConfig, "eval.previous=true", "^config key 'eval.previous' does not apply here"),
        (TrainConfig, "eval.every=100000.5", "^config key 'eval.every' must be a whole number of timesteps"),
        (TrainConfig, "eval.opponents=[nobody]", "^config key 'eval.opponents' must name agent specs"),
        (ExploitConfig, "eval_every=1", "^config key 'eval_every' was renamed eval.every"),
        (ExitConfig, "eval.workers=3", "^config key 'eval.workers' must be 1 or 2"),
        (JaxPPOConfig, "updates=5", r"^config key 'updates' must be a multiple of chunk \(10\), got 5$"),
        (JaxPPOConfig, "eval.every=15", r"^config key 'eval.every' must be a multiple of chunk \(10\) updates"),
        (JaxPPOConfig, "opponents=[ismcts]", "^config key 'opponents' must be a non-empty list of opponents"),
        (JaxPPOConfig, "final_eval.previous=true", "^config key 'final_eval.previous' does not apply here"),
    ],
)
def test_a_bad_evaluation_key_is_one_line_naming_it(model: type[Section], override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load(model, None, [override])


def test_a_run_saved_before_a_section_gained_a_key_continues(tmp_path: Path) -> None:
    config = load(TrainConfig, None, [f"output_dir={tmp_path}"])
    saved = config.to_dict()
    del saved["eval"]["previous"]  # a key the section gained since the run was saved
    (tmp_path / "config.json").write_text(json.dumps(saved))
    (tmp_path / MARKER).write_text(json.dumps({"format": "draw-dominoes-run", "version": 1, "pipeline": "selfplay"}))
    assert open_run_dir(config, "selfplay").resuming
    with pytest.raises(ConfigError, match="eval is"):
        open_run_dir(load(TrainConfig, None, [f"output_dir={tmp_path}", "eval.matches=3"]), "selfplay")
