"""The one config loader of draw-train and the RLlib script: every bad input is one line.

NaN and infinity are refused for every number (they used to train, or silently drop an
opponent); a duplicate YAML key is an error (PyYAML keeps the last one); a malformed file is
one line naming the file; no config error shows a traceback on the command line.
"""

from __future__ import annotations

import inspect
from collections.abc import Collection, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.scripts import load_script
from train.config import PPO_RENAMED, ConfigError, Section, load
from train.exit.config import ExitConfig
from train.pipelines import PIPELINES
from train.rllib.config import RLlibConfig
from train.selfplay.config import TrainConfig

ROOT = Path(__file__).resolve().parent.parent
#: Every draw-train pipeline's config, and the RLlib script's.
MODELS = (*(entry.config for entry in PIPELINES.values()), RLlibConfig)


def _float_keys(model: type[Section], prefix: str = "", unused: Collection[str] = ()) -> Iterator[str]:
    """The float keys of ``model`` (but those of ``unused``, which the pipeline refuses whatever their value)."""
    not_applying = getattr(model, "not_applying_to", lambda section: ())
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if inspect.isclass(annotation) and issubclass(annotation, Section):
            yield from _float_keys(annotation, f"{prefix}{name}.", not_applying(name))
        elif annotation is float and name not in unused:
            yield prefix + name


FLOAT_KEYS = [(model, key) for model in MODELS for key in _float_keys(model)]


def test_every_model_has_float_keys_to_check() -> None:
    assert {"ppo.gamma", "reward_scale", "ppo.learning_rate"} <= {
        key for model, key in FLOAT_KEYS if model is TrainConfig
    }
    assert {"temperature", "explore"} <= {key for model, key in FLOAT_KEYS if model is ExitConfig}
    assert {"ppo.learning_rate", "env.reward_scale"} <= {key for model, key in FLOAT_KEYS if model is RLlibConfig}


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


@pytest.mark.parametrize("text", ["", "\n# only a comment\n"])
def test_a_config_file_without_settings_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    line = _draw_train_error(tmp_path, capsys, text, [])
    assert line == (
        f"draw-train: error: config file {str(tmp_path / 'config.yaml')!r} holds no settings (it is empty or only "
        "comments): give a config such as configs/quick.yaml"
    )


def test_a_config_file_that_is_a_fifo_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    import os

    from tests.fifos import unblocked

    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    with unblocked(fifo), pytest.raises(ConfigError) as caught:
        load(TrainConfig, fifo)
    assert str(caught.value) == f"config file {str(fifo)!r} is a FIFO (named pipe), not a regular file: only regular files are read"


def test_a_bad_value_in_a_mapping_of_sections_names_the_field_and_what_it_takes() -> None:
    from train.bench.config import BenchConfig

    with pytest.raises(ConfigError) as caught:
        load(BenchConfig, None, ["budgets={micro: {env_steps: -5}}"])
    assert str(caught.value) == "config key 'budgets.micro.env_steps' must be an integer in [1, 1e13], or null, got -5"
    with pytest.raises(ConfigError) as caught:
        load(BenchConfig, None, ["budget_overrides={cfr: {micro: {cpu_seconds: 0}}}"])
    assert str(caught.value) == (
        "config key 'budget_overrides.cfr.micro.cpu_seconds' must be a number in (0, 1e7], or null, got 0"
    )


def _rllib_script() -> ModuleType:
    return load_script("train/rllib_selfplay.py", "rllib_selfplay_cli")


BAD_INPUTS = [
    ("seed: 1\nseed: 2\n", [], "duplicate key 'seed'"),
    ("seed: [1\n", [], "not valid YAML"),
    ("seed: 0\n", ["seed=.nan"], "'seed' must be an integer"),
    ("seed: 0\n", ["nothing=1"], "'nothing' is not known"),
    ("seed: 0\n", ["seed"], "KEY=VALUE"),
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


HUGE = "0x" + "f" * 5000  # 20,000 bits: Python cannot print it in decimal (4,300 digits at most)
WIDE = "0x" + "f" * 70  # 280 bits: a short literal, wider than any key takes


def _draw_train_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, overrides: list[str]) -> str:
    """The one error line of ``draw-train`` on a config file of ``text`` with ``overrides``."""
    from train import cli

    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(SystemExit) as caught:
        cli.main(["--config", str(path), f"output_dir={tmp_path / 'run'}", *overrides])
    assert caught.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert not (tmp_path / "run").exists()
    return line


@pytest.mark.parametrize(
    ("text", "overrides", "key"),
    [
        (f"seed: {WIDE}\n", [], "seed"),
        ("seed: 0\n", [f"seed={WIDE}"], "seed"),
        ("seed: 0\n", [f"ppo.net_arch=[64, {WIDE}]"], "ppo.net_arch"),
        ("seed: 0\n", [f"opponents={{self: {WIDE}}}"], "opponents.self"),
        ("seed: 0\n", [f"ppo.gamma={WIDE}"], "ppo.gamma"),
    ],
)
def test_an_integer_wider_than_any_key_takes_is_refused_naming_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, overrides: list[str], key: str
) -> None:
    assert _draw_train_error(tmp_path, capsys, text, overrides) == (
        f"draw-train: error: config key {key!r} must be an integer of at most 31 bits (at most 2,147,483,647), "
        "got one of 280 bits"
    )


@pytest.mark.parametrize(("text", "overrides"), [(f"seed: {HUGE}\n", []), ("seed: 0\n", [f"seed={HUGE}"])])
def test_an_integer_too_long_to_print_is_one_line_naming_the_file_or_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, overrides: list[str]
) -> None:
    line = _draw_train_error(tmp_path, capsys, text, overrides)
    assert "config key 'seed'" in line or f"config file {str(tmp_path / 'config.yaml')!r}" in line or "override 'seed=" in line
    assert "Exceeds the limit" not in line


def test_a_long_value_is_shown_cut_short() -> None:
    with pytest.raises(ConfigError) as caught:
        load(TrainConfig, None, ["features=" + "x" * 100_000])
    assert len(str(caught.value)) < 400 and str(caught.value).endswith("xxx...")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["n_envs=2000", "total_timesteps=4096"], r"'total_timesteps' must be at least one rollout, n_envs \* ppo.num_steps = 1,024,000 steps"),
        (["snapshot_every=1000"], r"'snapshot_every' must be at least one rollout, .* = 1,024 steps .*, got 1000$"),
        (["checkpoint_every=1023"], r"'checkpoint_every' must be at least one rollout"),
        (["eval.every=512"], r"'eval.every' must be at least one rollout"),
    ],
)
def test_budgets_and_intervals_are_at_least_one_rollout(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load(TrainConfig, ROOT / "configs" / "quick.yaml", overrides)


def test_a_run_without_periodic_evaluations_may_say_so_with_0() -> None:
    assert load(TrainConfig, ROOT / "configs" / "quick.yaml", ["eval.every=0"]).eval.every == 0


def test_sizes_beyond_any_memory_are_refused_naming_the_keys() -> None:
    from train.exploit.config import ExploitConfig

    with pytest.raises(ConfigError, match=r"^config keys 'n_envs' and 'ppo.num_steps' ask for about 167.5 TB of memory"):
        load(TrainConfig, ROOT / "configs" / "quick.yaml", ["n_envs=100000000"])
    with pytest.raises(ConfigError, match=r"^config keys 'n_envs' and 'ppo.num_steps' ask for about"):
        load(ExploitConfig, None, ["ppo.num_steps=2147483647"])
    with pytest.raises(ConfigError, match=r"^config keys 'matches' and 'window' ask for about .* TB of memory"):
        load(ExitConfig, None, ["matches=100000000"])


def test_memory_is_compared_with_this_machines(monkeypatch: pytest.MonkeyPatch) -> None:
    import train.config

    monkeypatch.setattr(train.config, "machine_memory", lambda: 10**9)
    load(TrainConfig, ROOT / "configs" / "selfplay_2p.yaml")  # 512 games x 16 steps: about 35 MB
    with pytest.raises(ConfigError, match=r"about 1.4 GB of memory .*, more than this machine's 1.0 GB: lower n_envs or ppo.num_steps$"):
        load(TrainConfig, ROOT / "configs" / "selfplay_2p.yaml", ["n_envs=20000"])
    with pytest.raises(ConfigError, match=r"^config keys 'simulations', 'lockstep' and 'workers' ask for"):
        load(ExitConfig, None, ["guide=tree", "simulations=20000", "lockstep=50"])


@pytest.mark.parametrize(
    ("overrides", "keys"),
    [
        (["guide=root", "simulations=2147483000"], "config key 'simulations' asks"),
        (["plain_simulations=715828000"], "config key 'plain_simulations' asks"),
        (["guide=tree", "simulations=10000000", "lockstep=100"], "config keys 'simulations' and 'lockstep' ask"),
    ],
)
def test_a_search_the_search_cannot_number_is_refused(overrides: list[str], keys: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{keys} for a search of [\d,]+ nodes .*the search numbers at most 2,147,483,647"):
        load(ExitConfig, None, overrides)


# ---------------------------------------------------------------------------------------------
# One PPO vocabulary: every PPO config takes the same names; each library's old ones are refused.


def _ppo_configs() -> list[tuple[type[Section], str, str]]:
    """Each PPO config kind: its model, the prefix of its PPO keys, its entry of PPO_RENAMED."""
    from train.exploit.config import ExploitConfig
    from train.jax_ppo.config import JaxPPOConfig

    return [(TrainConfig, "ppo.", "sb3"), (ExploitConfig, "ppo.", "sb3"), (JaxPPOConfig, "", "jax"),
            (RLlibConfig, "ppo.", "rllib")]


OLD_PPO_KEYS = [
    (model, prefix + old, prefix + new)
    for model, prefix, kind in _ppo_configs()
    for old, new in PPO_RENAMED[kind].items()
]


@pytest.mark.parametrize(("model", "old", "new"), OLD_PPO_KEYS, ids=[f"{m.__name__}:{o}" for m, o, _ in OLD_PPO_KEYS])
def test_an_old_ppo_key_is_refused_with_its_new_name(model: type[Section], old: str, new: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(model, None, [f"{old}=1"])
    assert str(caught.value) == f"config key {old!r} is now {new}"


def test_an_old_ppo_key_in_a_file_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _draw_train_error(tmp_path, capsys, "ppo:\n  ent_coef: 0.01\n  clip_range: 0.1\n", [])
    assert line == "draw-train: error: config key 'ppo.clip_range' is now ppo.clip_coef"
    line = _draw_train_error(tmp_path, capsys, "pipeline: jax_ppo\nentropy_coef: 0.02\n", [])
    assert line == "draw-train: error: config key 'entropy_coef' is now ent_coef"


def test_the_rllib_script_refuses_an_old_ppo_key_in_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("ppo:\n  entropy_coeff: 0.01\n")
    with pytest.raises(SystemExit) as caught:
        _rllib_script().main(["--config", str(path)])
    assert caught.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert line.endswith("error: config key 'ppo.entropy_coeff' is now ppo.ent_coef") and "Traceback" not in line


def test_an_old_ppo_key_in_the_benchmark_settings_names_the_algorithm_and_the_new_key() -> None:
    from train.bench.algorithms import Cell, _build
    from train.bench.protocol import Budget, game_named

    cell = Cell("sb3_ppo", game_named("micro"), 0, Budget(env_steps=1000), {"ppo": {"n_epochs": 2}})
    with pytest.raises(ConfigError, match=r"^settings of algorithm 'sb3_ppo' on game 'micro': "
                                          r"config key 'ppo.n_epochs' is now ppo.update_epochs$"):
        _build(cell, TrainConfig, dict(cell.settings))


#: The PPO keys' defaults before the one vocabulary (under their new names): unchanged.
PPO_DEFAULTS = {
    "sb3": {"learning_rate": 3e-4, "num_steps": 1024, "minibatch_size": 256, "update_epochs": 5, "gamma": 1.0,
            "gae_lambda": 0.95, "clip_coef": 0.2, "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5},
    "jax": {"learning_rate": 1e-3, "num_steps": 32, "update_epochs": 2, "num_minibatches": 4, "gamma": 1.0,
            "gae_lambda": 0.95, "clip_coef": 0.2, "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5},
    "rllib": {"learning_rate": 3e-4, "batch_size": 4000, "minibatch_size": 256, "update_epochs": 6, "gamma": 1.0,
              "gae_lambda": 0.95, "clip_coef": 0.2, "ent_coef": 0.01, "vf_coef": 0.5},
}


def test_the_new_ppo_keys_load_with_the_defaults_they_had() -> None:
    from train.exploit.config import ExploitConfig
    from train.jax_ppo.config import JaxPPOConfig

    assert TrainConfig().ppo.model_dump(include=set(PPO_DEFAULTS["sb3"])) == PPO_DEFAULTS["sb3"]
    exploiter = {**PPO_DEFAULTS["sb3"], "num_steps": 128, "minibatch_size": 512, "update_epochs": 4}
    assert ExploitConfig().ppo.model_dump(include=set(exploiter)) == exploiter
    assert JaxPPOConfig().model_dump(include=set(PPO_DEFAULTS["jax"])) == PPO_DEFAULTS["jax"]
    assert RLlibConfig().ppo.model_dump() == PPO_DEFAULTS["rllib"]
    # Every key of the new vocabulary loads, from a file or an override, in each kind.
    for model, prefix, kind in _ppo_configs():
        overrides = [f"{prefix}{key}={value}" for key, value in PPO_DEFAULTS[kind].items()
                     if model.__name__ != "ExploitConfig"]
        load(model, None, overrides)


def test_rllib_is_given_its_own_names_for_the_ppo_keys() -> None:
    from train.rllib.config import RLlibPPO

    given = RLlibPPO.rllib_training(RLlibConfig().ppo.to_dict())
    assert given == {"lr": 3e-4, "train_batch_size_per_learner": 4000, "minibatch_size": 256, "num_epochs": 6,
                     "gamma": 1.0, "lambda_": 0.95, "clip_param": 0.2, "entropy_coeff": 0.01, "vf_loss_coeff": 0.5}
