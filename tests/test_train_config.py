"""The one config loader of draw-train and the RLlib script: every bad input is one line.

NaN and infinity are refused for every number (they used to train, or silently drop an
opponent); a duplicate YAML key is an error (PyYAML keeps the last one); a malformed file is
one line naming the file; no config error shows a traceback on the command line.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from train.config import ConfigError, Section, load
from train.exit.config import ExitConfig
from train.rllib.config import RLlibConfig
from train.selfplay.config import TrainConfig

ROOT = Path(__file__).resolve().parent.parent
MODELS = (TrainConfig, ExitConfig, RLlibConfig)


def _float_keys(model: type[Section], prefix: str = "") -> Iterator[str]:
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if inspect.isclass(annotation) and issubclass(annotation, Section):
            yield from _float_keys(annotation, f"{prefix}{name}.")
        elif annotation is float:
            yield prefix + name


FLOAT_KEYS = [(model, key) for model in MODELS for key in _float_keys(model)]


def test_every_model_has_float_keys_to_check() -> None:
    assert {"ppo.gamma", "reward_scale", "ppo.learning_rate"} <= {
        key for model, key in FLOAT_KEYS if model is TrainConfig
    }
    assert {"temperature", "explore"} <= {key for model, key in FLOAT_KEYS if model is ExitConfig}
    assert {"ppo.lr", "env.reward_scale"} <= {key for model, key in FLOAT_KEYS if model is RLlibConfig}


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
@pytest.mark.parametrize(("model", "key"), FLOAT_KEYS, ids=[f"{m.__name__}:{k}" for m, k in FLOAT_KEYS])
def test_nan_and_infinity_are_refused_for_every_number(model: type[Section], key: str, value: str) -> None:
    with pytest.raises(
        ConfigError, match=rf"^config key '{key}' must be a finite number in .*, got -?(nan|inf)$"
    ):
        load(model, None, [f"{key}={value}"])


@pytest.mark.parametrize(
    ("model", "key"),
    [(TrainConfig, "opponents"), (ExitConfig, "partners"), (RLlibConfig, "opponents")],
)
@pytest.mark.parametrize("value", [".nan", ".inf", "-1", "true"])
def test_a_bad_weight_is_refused_not_dropped(model: type[Section], key: str, value: str) -> None:
    name = "teacher" if model is ExitConfig else "self"
    with pytest.raises(ConfigError, match=rf"config key '{key}.{name}' must be a finite weight"):
        load(model, None, [f"{key}={{{name}: {value}, heaviest: 1}}"])


def test_the_message_names_the_key_the_range_and_the_value() -> None:
    with pytest.raises(ConfigError) as caught:
        load(TrainConfig, None, ["ppo.gamma=.nan"])
    assert str(caught.value) == "config key 'ppo.gamma' must be a finite number in [0, 1], got nan"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("seed: 1\nseed: 2\n", r"line 2: duplicate key 'seed' \(first on line 1\)"),
        ("ppo:\n  gamma: 1.0\n  n_steps: 64\n  gamma: 0.9\n", r"line 4: duplicate key 'ppo.gamma'"),
        ("opponents: {self: 1, self: 2}\n", r"duplicate key 'opponents.self'"),
        ("ppo: [1, 2\n", r"line \d+, column \d+: not valid YAML"),
        ("seed: 1\n  bad indent: 2\n", r"not valid YAML"),
        ("- a\n- b\n", r"must hold a mapping at the top level"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    for model in MODELS:
        with pytest.raises(ConfigError, match=message) as caught:
            load(model, path, [])
        assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_file_and_a_malformed_override_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load(TrainConfig, tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        load(TrainConfig, None, ["ppo.gamma"])
    with pytest.raises(ConfigError, match="'seed' is not a section"):
        load(TrainConfig, ROOT / "configs" / "quick.yaml", ["seed.x=1"])
    with pytest.raises(ConfigError, match="not valid YAML"):
        load(TrainConfig, None, ["opponents={self: [1"])


def _rllib_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rllib_selfplay_cli", ROOT / "train" / "rllib_selfplay.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


BAD_INPUTS = [
    ("seed: 1\nseed: 2\n", [], "duplicate key 'seed'"),
    ("seed: [1\n", [], "not valid YAML"),
    ("", ["seed=.nan"], "'seed' must be an integer"),
    ("", ["nothing=1"], "'nothing' is not known"),
    ("", ["seed"], "KEY=VALUE"),
]


@pytest.mark.parametrize(("text", "overrides", "message"), BAD_INPUTS)
@pytest.mark.parametrize("command", ["draw-train", "rllib_selfplay"])
def test_the_commands_print_one_error_line_and_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    text: str,
    overrides: list[str],
    message: str,
) -> None:
    from train import cli

    path = tmp_path / "config.yaml"
    path.write_text(text)
    main = cli.main if command == "draw-train" else _rllib_script().main
    with pytest.raises(SystemExit) as caught:
        main(["--config", str(path), *overrides])
    assert caught.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "error: " in error and message in error and "Traceback" not in error
