"""Training configurations: YAML files in ``configs/``, validated on load.

A config is a :class:`TrainConfig` (with :class:`PPOSettings` and two :class:`EvalSettings`).
:func:`load_config` reads a YAML file, applies ``KEY=VALUE`` overrides (dotted keys reach nested
sections: ``ppo.learning_rate=1e-4``; values are parsed as YAML) and checks everything: an unknown
key or a bad value raises ``ValueError`` naming the key and what it accepts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from draw_env.features import FEATURES

#: Opponent names with a special meaning in ``opponents``; every other name is an ``agents.make`` name.
SELF = "self"
SNAPSHOTS = "snapshots"
BASELINES = ("random", "random_forced", "heaviest", "variety", "ismcts")
OPPONENT_NAMES = (SELF, SNAPSHOTS, *BASELINES)
EVAL_BASELINES = ("random", "random_forced", "heaviest", "variety", "ismcts")
#: The partner name that seats the teacher itself in a distillation's ``partners``.
TEACHER = "teacher"


@dataclass
class PPOSettings:
    """MaskablePPO hyper-parameters (the names are sb3's)."""

    learning_rate: float = 3e-4
    lr_schedule: str = "constant"
    n_steps: int = 1024
    batch_size: int = 256
    n_epochs: int = 5
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    activation: str = "relu"


@dataclass
class EvalSettings:
    """An evaluation against baselines with ``agents.evaluate``.

    ``every`` (timesteps between evaluations) applies to the periodic evaluation only; 0 turns
    it off.
    """

    every: int = 50_000
    matches: int = 200
    opponents: list[str] = field(default_factory=lambda: ["heaviest", "variety"])
    duplicate: bool = True
    workers: int = 1


@dataclass
class TrainConfig:
    """Everything one ``draw-train`` run needs; see ``docs/training.md`` for each key."""

    num_players: int = 2
    seed: int = 0
    total_timesteps: int = 200_000
    n_envs: int = 2
    vec_env: str = "subproc"
    episode: str = "hand"
    reward: str = "zero_sum"
    reward_scale: float = 0.02
    features: str = "extended"
    skip_forced: bool = True
    opponents: dict[str, float] = field(
        default_factory=lambda: {SELF: 0.4, SNAPSHOTS: 0.2, "heaviest": 0.2, "variety": 0.2}
    )
    snapshot_every: int = 50_000
    snapshot_pool: int = 8
    checkpoint_every: int = 100_000
    output_dir: str = "runs/selfplay_2p"
    tensorboard: bool = True
    progress_bar: bool = True
    ppo: PPOSettings = field(default_factory=PPOSettings)
    eval: EvalSettings = field(default_factory=EvalSettings)
    final_eval: EvalSettings = field(
        default_factory=lambda: EvalSettings(
            every=0, matches=500, opponents=["heaviest", "variety", "random"]
        )
    )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class DistillConfig:
    """Everything one ``draw-distill`` run needs; see ``docs/training.md`` for each key."""

    num_players: int = 2
    seed: int = 0
    teacher_simulations: int = 200
    partners: dict[str, float] = field(
        default_factory=lambda: {TEACHER: 0.6, "variety": 0.2, "heaviest": 0.2}
    )
    matches: int = 2000
    shard_matches: int = 25
    workers: int = 2
    init: str | None = None
    net_arch: list[int] = field(default_factory=lambda: [512, 512])
    features: str = "extended"
    temperature: float = 0.1
    epochs: int = 8
    batch_size: int = 512
    learning_rate: float = 1e-3
    validation_share: float = 0.05
    output_dir: str = "runs/distill_2p"
    progress_bar: bool = True
    final_eval: EvalSettings = field(
        default_factory=lambda: EvalSettings(
            every=0, matches=500, opponents=["heaviest", "variety", "ismcts"], workers=2
        )
    )
    curve: list[int] = field(default_factory=list)
    eval: EvalSettings = field(
        default_factory=lambda: EvalSettings(
            every=0, matches=200, opponents=["heaviest", "variety", "ismcts"], workers=2
        )
    )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_SECTIONS = {"ppo": PPOSettings, "eval": EvalSettings, "final_eval": EvalSettings}


def _fail(key: str, expected: str, value: object) -> ValueError:
    return ValueError(f"config key {key!r} must be {expected}, got {value!r}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _positive_int(key: str, value: object, minimum: int = 1) -> None:
    if not _is_int(value) or value < minimum:
        raise _fail(key, f"an integer >= {minimum}", value)


def _number_in(key: str, value: object, low: float, high: float, low_open: bool = False) -> None:
    if not _is_number(value) or value > high or value < low or (low_open and value == low):
        bracket = "(" if low_open else "["
        raise _fail(key, f"a number in {bracket}{low}, {high}]", value)


def _choice(key: str, value: object, allowed: Sequence[object]) -> None:
    if isinstance(value, bool) or value not in allowed:
        raise _fail(key, "one of " + ", ".join(repr(choice) for choice in allowed), value)


def _boolean(key: str, value: object) -> None:
    if not isinstance(value, bool):
        raise _fail(key, "true or false", value)


def _workers(key: str, value: object) -> None:
    _positive_int(key, value)
    if value > 2:
        raise _fail(key, "1 or 2 (the project runs on 2 cores)", value)


def _output_dir(key: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise _fail(key, "a non-empty path", value)


def _weights(key: str, mapping: object, expected: str, check_name: Callable[[str], None]) -> None:
    """A non-empty mapping of names (each passed to ``check_name``) to weights, not all zero."""
    if not isinstance(mapping, dict) or not mapping:
        raise _fail(key, expected, mapping)
    for name, weight in mapping.items():
        check_name(name)
        _number_in(f"{key}.{name}", weight, 0.0, 1e6)
    if sum(mapping.values()) <= 0:
        raise _fail(key, "weights that are not all zero", mapping)


def _layer_widths(key: str, value: object) -> None:
    if not isinstance(value, list) or not value or not all(_is_int(width) and width >= 1 for width in value):
        raise _fail(key, "a non-empty list of positive layer widths, such as [256, 256]", value)


def _validate_ppo(settings: PPOSettings, n_envs: int) -> None:
    _number_in("ppo.learning_rate", settings.learning_rate, 0.0, 1.0, low_open=True)
    _choice("ppo.lr_schedule", settings.lr_schedule, ("constant", "linear"))
    _positive_int("ppo.n_steps", settings.n_steps, 2)
    _positive_int("ppo.batch_size", settings.batch_size, 2)
    if _is_int(settings.batch_size) and settings.batch_size > settings.n_steps * n_envs:
        raise _fail(
            "ppo.batch_size",
            f"at most ppo.n_steps * n_envs = {settings.n_steps * n_envs}",
            settings.batch_size,
        )
    _positive_int("ppo.n_epochs", settings.n_epochs)
    _number_in("ppo.gamma", settings.gamma, 0.0, 1.0)
    _number_in("ppo.gae_lambda", settings.gae_lambda, 0.0, 1.0)
    _number_in("ppo.clip_range", settings.clip_range, 0.0, 1.0, low_open=True)
    _number_in("ppo.ent_coef", settings.ent_coef, 0.0, 1.0)
    _number_in("ppo.vf_coef", settings.vf_coef, 0.0, 10.0)
    _number_in("ppo.max_grad_norm", settings.max_grad_norm, 0.0, 100.0, low_open=True)
    _layer_widths("ppo.net_arch", settings.net_arch)
    _choice("ppo.activation", settings.activation, ("relu", "tanh"))


def _validate_eval(section: str, settings: EvalSettings) -> None:
    _positive_int(f"{section}.every", settings.every, 0)
    _positive_int(f"{section}.matches", settings.matches)
    if not isinstance(settings.opponents, list) or not settings.opponents:
        raise _fail(f"{section}.opponents", "a non-empty list of baseline names", settings.opponents)
    for name in settings.opponents:
        _choice(f"{section}.opponents", name, EVAL_BASELINES)
    _boolean(f"{section}.duplicate", settings.duplicate)
    _workers(f"{section}.workers", settings.workers)


def validate(config: TrainConfig) -> None:
    """Check every value of ``config``; raise ``ValueError`` naming the first bad key."""
    _choice("num_players", config.num_players, (2, 3, 4))
    _positive_int("seed", config.seed, 0)
    _positive_int("total_timesteps", config.total_timesteps)
    _positive_int("n_envs", config.n_envs)
    _choice("vec_env", config.vec_env, ("subproc", "dummy"))
    if config.vec_env == "subproc" and config.n_envs > 2:
        raise _fail("n_envs", "1 or 2 with vec_env 'subproc' (one process per env, 2 cores)", config.n_envs)
    _choice("episode", config.episode, ("hand", "match"))
    _choice("reward", config.reward, ("zero_sum", "points", "win_loss"))
    if config.reward == "win_loss" and config.episode != "match":
        raise _fail(
            "reward",
            "'zero_sum' or 'points' with episode 'hand' ('win_loss' needs episode 'match')",
            config.reward,
        )
    _number_in("reward_scale", config.reward_scale, 0.0, 100.0, low_open=True)
    _choice("features", config.features, FEATURES)
    _boolean("skip_forced", config.skip_forced)
    _weights(
        "opponents",
        config.opponents,
        f"a mapping of opponent names ({', '.join(OPPONENT_NAMES)}) to weights",
        lambda name: _choice("opponents", name, OPPONENT_NAMES),
    )
    _positive_int("snapshot_every", config.snapshot_every)
    _positive_int("snapshot_pool", config.snapshot_pool)
    _positive_int("checkpoint_every", config.checkpoint_every)
    _output_dir("output_dir", config.output_dir)
    _boolean("tensorboard", config.tensorboard)
    _boolean("progress_bar", config.progress_bar)
    _validate_ppo(config.ppo, config.n_envs if _is_int(config.n_envs) else 1)
    _validate_eval("eval", config.eval)
    _validate_eval("final_eval", config.final_eval)


def validate_distill(config: DistillConfig) -> None:
    """Check every value of a distillation config; raise ``ValueError`` naming the first bad key."""
    from agents.evaluate import parse_agent_spec

    _choice("num_players", config.num_players, (2, 3, 4))
    _positive_int("seed", config.seed, 0)
    _positive_int("teacher_simulations", config.teacher_simulations)
    expected = f"a mapping of partners ('{TEACHER}' or an agent spec such as 'variety' or 'ppo:path=x.zip') to weights"

    def check_partner(spec: str) -> None:
        if spec == TEACHER:
            return
        try:
            name, kwargs = parse_agent_spec(str(spec))
        except ValueError as error:
            raise _fail("partners", f"{expected} ({error})", spec) from None
        if name == "ppo" and not Path(str(kwargs.get("path", ""))).is_file():
            raise _fail("partners", f"{expected}, a ppo partner naming an existing checkpoint", spec)

    _weights("partners", config.partners, expected, check_partner)
    _positive_int("matches", config.matches)
    _positive_int("shard_matches", config.shard_matches)
    _workers("workers", config.workers)
    if config.init is not None and (not isinstance(config.init, str) or not Path(config.init).is_file()):
        raise _fail(
            "init", "null (a fresh network) or the path of an existing MaskablePPO checkpoint", config.init
        )
    _layer_widths("net_arch", config.net_arch)
    _choice("features", config.features, FEATURES)
    _number_in("temperature", config.temperature, 0.0, 100.0, low_open=True)
    _positive_int("epochs", config.epochs)
    _positive_int("batch_size", config.batch_size, 2)
    _number_in("learning_rate", config.learning_rate, 0.0, 1.0, low_open=True)
    _number_in("validation_share", config.validation_share, 0.0, 0.5)
    _output_dir("output_dir", config.output_dir)
    _boolean("progress_bar", config.progress_bar)
    _validate_eval("final_eval", config.final_eval)
    if (
        not isinstance(config.curve, list)
        or not all(
            _is_int(matches) and 1 <= matches < config.matches and matches % config.shard_matches == 0
            for matches in config.curve
        )
        or config.curve != sorted(set(config.curve))
    ):
        raise _fail(
            "curve",
            f"[] or an increasing list of match counts below matches ({config.matches}), "
            f"each a multiple of shard_matches ({config.shard_matches})",
            config.curve,
        )
    _validate_eval("eval", config.eval)


def _build(cls: type, data: Mapping[str, Any], prefix: str) -> Any:
    if not isinstance(data, Mapping):
        raise _fail(prefix.rstrip(".") or "config", "a mapping of keys to values", data)
    known = {f.name for f in dataclasses.fields(cls)}
    values = {}
    for key, value in data.items():
        if key not in known:
            raise ValueError(
                f"unknown config key {prefix + str(key)!r}; known keys: {', '.join(sorted(known))}"
            )
        if prefix == "" and key in _SECTIONS:
            value = _build(_SECTIONS[key], value, f"{key}.")
        values[key] = value
    return cls(**values)


def _parse_override(text: str) -> tuple[list[str], Any]:
    if "=" not in text:
        raise ValueError(f"override {text!r} must look like KEY=VALUE (for example ppo.learning_rate=1e-4)")
    key, raw = text.split("=", 1)
    value = yaml.safe_load(raw)
    if isinstance(value, str):
        try:  # YAML 1.1 reads 1e-4 (no dot) as a string
            value = float(value)
        except ValueError:
            pass
    return key.strip().split("."), value


def _apply_override(data: dict[str, Any], path: list[str], value: Any) -> None:
    node = data
    for part in path[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ValueError(f"override key {'.'.join(path)!r}: {part!r} is not a section")
        node = child
    node[path[-1]] = value


def config_from_dict(data: Mapping[str, Any]) -> TrainConfig:
    """Build and validate a config from plain data (missing keys take the defaults)."""
    config = _build(TrainConfig, data, "")
    validate(config)
    return config


def load_config(path: str | Path | None, overrides: Sequence[str] = ()) -> TrainConfig:
    """Read a YAML config (``None``: the defaults), apply ``KEY=VALUE`` overrides, validate.

    Raises:
        ValueError: on an unknown key, a bad value or a malformed override (the message names it).
        FileNotFoundError: if ``path`` does not exist.
    """
    return config_from_dict(_read(path, overrides))


def load_distill_config(path: str | Path | None, overrides: Sequence[str] = ()) -> DistillConfig:
    """:func:`load_config` for a ``draw-distill`` config (:class:`DistillConfig`)."""
    config = _build(DistillConfig, _read(path, overrides), "")
    validate_distill(config)
    return config


def _read(path: str | Path | None, overrides: Sequence[str]) -> dict[str, Any]:
    """A config file's data (``None``: empty) with the ``KEY=VALUE`` overrides applied."""
    data: dict[str, Any] = {}
    if path is not None:
        with open(path, encoding="utf-8") as handle:
            loaded = yaml.safe_load(handle)
        if loaded is not None:
            if not isinstance(loaded, dict):
                raise ValueError(f"config file {str(path)!r} must hold a mapping of keys to values")
            data = loaded
    for text in overrides:
        path_parts, value = _parse_override(text)
        _apply_override(data, path_parts, value)
    return data
