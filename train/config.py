"""Configs of ``draw-train``, ``draw-distill`` and ``train/rllib_selfplay.py``: YAML, overrides, checks.

One system for the three: a config is a pydantic model (:class:`TrainConfig`,
:class:`DistillConfig`, :class:`RLlibConfig`, with nested sections), read by :func:`load` from a
YAML file plus ``KEY=VALUE`` overrides (dotted keys reach sections: ``ppo.learning_rate=1e-4``;
values are parsed as YAML). Every model forbids unknown keys, takes no type coercion (``true`` is
not a number, ``1.0`` is not an integer) and no NaN or infinity. Any problem, in the file or in
a value, is one :class:`ConfigError` line that names the file or the dotted key, for example
``config key 'ppo.gamma' must be a finite number in [0, 1], got nan``.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from draw_env.checks import is_integer, is_number
from draw_env.features import FEATURES
from draw_env.rules import reward_fits_episode
from draw_env.untrusted import loads_yaml, read_text

#: The largest config file read (ours are a few kB).
MAX_CONFIG_BYTES = 1024 * 1024

#: Opponent names with a special meaning in ``opponents``; every other name is an ``agents.make`` name.
SELF = "self"
SNAPSHOTS = "snapshots"
BASELINES = ("random", "random_forced", "heaviest", "variety", "ismcts")
OPPONENT_NAMES = (SELF, SNAPSHOTS, *BASELINES)
#: Opponents of the RLlib script: the baselines ``integrations.rllib`` runs as RLlib modules.
RLLIB_OPPONENTS = (SELF, "random", "random_forced", "heaviest", "variety")
#: The partner name that seats the teacher itself in a distillation's ``partners``.
TEACHER = "teacher"

Model = TypeVar("Model", bound="Section")


class ConfigError(ValueError):
    """A config that cannot be used; the message is one line naming the file or the key."""


# ---------------------------------------------------------------------------------------------
# Field helpers: each field carries what it accepts, in words, for the error message.


def number(default: float, low: float, high: float, *, low_open: bool = False) -> Any:
    """A finite float field in ``[low, high]`` (``(low, high]`` with ``low_open``)."""
    bounds = {"gt": low} if low_open else {"ge": low}
    bracket = "(" if low_open else "["
    return Field(
        default,
        le=high,
        allow_inf_nan=False,
        description=f"a finite number in {bracket}{low:g}, {high:g}]",
        **bounds,
    )


#: The largest integer any key takes: int32's, the limit of the libraries a run hands its
#: numbers to (NumPy's legacy seeding, which SB3 uses, takes seeds below 2**32, and a run seeds
#: its environments and evaluations with small offsets from ``seed``).
MAX_INT = 2**31 - 1


def integer(default: int, minimum: int, maximum: int | None = None) -> Any:
    """An integer field ``>= minimum`` (and ``<= maximum``; never above :data:`MAX_INT`)."""
    if maximum is None:
        return Field(default, ge=minimum, le=MAX_INT, description=f"an integer >= {minimum} (at most {MAX_INT})")
    return Field(default, ge=minimum, le=maximum, description=f"an integer in [{minimum}, {maximum}]")


def seed_field() -> Any:
    """A run's seed: an integer in ``[0, MAX_INT]``."""
    return integer(0, 0, MAX_INT)


def workers(default: int) -> Any:
    return Field(default, ge=1, le=2, description="1 or 2 (the project runs on 2 cores)")


#: The widest layer a config may ask for (policy files allow no wider).
MAX_WIDTH = 65_536
_WIDTHS = f"a non-empty list of layer widths in 1..{MAX_WIDTH}, such as [256, 256]"


def layer_widths(default: Sequence[int]) -> Any:
    return Field(default_factory=lambda: list(default), min_length=1, description=_WIDTHS)


def output_dir(default: str) -> Any:
    return Field(default, min_length=1, description="a non-empty path")


def _positive_widths(value: list[Any]) -> list[Any]:
    if not all(is_integer(width) and 1 <= width <= MAX_WIDTH for width in value):
        raise ValueError(f"must be {_WIDTHS}, got {value!r}")
    return value


#: Hidden layer widths; the items are checked as a whole so that the message shows the whole list.
Widths = Annotated[list[Any], AfterValidator(_positive_widths)]


class Section(BaseModel):
    """Base of every config model: unknown keys, coercion, NaN and infinity are all errors."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


def _mapping_validator(field: str, what: str, check_name: Any) -> Any:
    """A validator for ``field``: a non-empty mapping of names (each passed to ``check_name``, which
    raises ``ValueError``) to finite weights in [0, 1e6], not all zero."""

    def validate(cls: type, mapping: dict[Any, Any]) -> dict[str, float]:
        if not mapping:
            raise ValueError(f"must be {what}, got {{}}")
        for name, weight in mapping.items():
            check_name(name)
            if not is_number(weight) or not 0 <= weight <= 1e6:
                raise _fail(f"{field}.{name}", "a finite weight in [0, 1e6]", weight)
        if sum(mapping.values()) <= 0:
            raise ValueError(f"must hold weights that are not all zero, got {mapping!r}")
        return {str(name): float(weight) for name, weight in mapping.items()}

    return field_validator(field)(classmethod(validate))  # type: ignore[arg-type]


def _init_validator() -> Any:
    """The validator of an ``init`` key: ``None`` (a fresh network) or an existing policy file."""

    def validate(cls: type, value: str | None) -> str | None:
        if value is not None and not Path(value).is_file():
            raise ValueError(
                f"must be null (a fresh network) or the path of an existing policy file, got {value!r}"
            )
        return value

    return field_validator("init")(classmethod(validate))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# draw-train


class PPOSettings(Section):
    """MaskablePPO hyper-parameters (the names are sb3's)."""

    learning_rate: float = number(3e-4, 0.0, 1.0, low_open=True)
    lr_schedule: Literal["constant", "linear"] = "constant"
    n_steps: int = integer(1024, 2)
    batch_size: int = integer(256, 2)
    n_epochs: int = integer(5, 1)
    gamma: float = number(1.0, 0.0, 1.0)
    gae_lambda: float = number(0.95, 0.0, 1.0)
    clip_range: float = number(0.2, 0.0, 1.0, low_open=True)
    ent_coef: float = number(0.01, 0.0, 1.0)
    vf_coef: float = number(0.5, 0.0, 10.0)
    max_grad_norm: float = number(0.5, 0.0, 100.0, low_open=True)
    net_arch: Widths = layer_widths([256, 256])
    activation: Literal["relu", "tanh"] = "relu"


class EvalSettings(Section):
    """An evaluation against baselines with ``arena.evaluation``.

    ``every`` (timesteps between evaluations) applies to the periodic evaluation only; 0 turns
    it off.
    """

    every: int = integer(50_000, 0)
    matches: int = integer(200, 1)
    opponents: list[Literal[BASELINES]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: ["heaviest", "variety"],
        min_length=1,
        description="a non-empty list of baseline names (" + ", ".join(BASELINES) + ")",
    )
    duplicate: bool = True
    workers: int = workers(1)


def _one_of(name: object, names: tuple[str, ...]) -> None:
    if name not in names:
        raise ValueError(f"must name opponents among {', '.join(names)}, got {name!r}")


class TrainConfig(Section):
    """Everything one ``draw-train`` run needs; see ``docs/training.md`` for each key."""

    num_players: Literal[2, 3, 4] = 2
    seed: int = seed_field()
    total_timesteps: int = integer(200_000, 1)
    n_envs: int = integer(2, 1)
    vec_env: Literal["subproc", "dummy", "batched"] = "subproc"
    episode: Literal["hand", "match"] = "hand"
    reward: Literal["zero_sum", "points", "win_loss"] = "zero_sum"
    reward_scale: float = number(0.02, 0.0, 100.0, low_open=True)
    features: Literal[FEATURES] = "extended"  # type: ignore[valid-type]
    skip_forced: bool = True
    opponents: dict[Any, Any] = Field(
        default_factory=lambda: {SELF: 0.4, SNAPSHOTS: 0.2, "heaviest": 0.2, "variety": 0.2},
        description=f"a mapping of opponent names ({', '.join(OPPONENT_NAMES)}) to weights",
    )
    snapshot_every: int = integer(50_000, 1)
    snapshot_pool: int = integer(8, 1)
    checkpoint_every: int = integer(100_000, 1)
    output_dir: str = output_dir("runs/selfplay_2p")
    tensorboard: bool = True
    progress_bar: bool = True
    ppo: PPOSettings = Field(default_factory=PPOSettings)
    eval: EvalSettings = Field(default_factory=EvalSettings)
    final_eval: EvalSettings = Field(
        default_factory=lambda: EvalSettings(
            every=0, matches=500, opponents=["heaviest", "variety", "random"]
        )
    )

    _opponents = _mapping_validator(
        "opponents",
        f"a mapping of opponent names ({', '.join(OPPONENT_NAMES)}) to weights",
        lambda name: _one_of(name, OPPONENT_NAMES),
    )

    @model_validator(mode="after")
    def _consistent(self) -> TrainConfig:
        if self.vec_env == "subproc" and self.n_envs > 2:
            raise _fail("n_envs", "1 or 2 with vec_env 'subproc' (one process per env, 2 cores)", self.n_envs)
        _check_ppo_run(self.reward, self.episode, self.ppo, self.n_envs)
        return self


def _check_ppo_run(reward: str, episode: str, ppo: PPOSettings, n_envs: int) -> None:
    """What every MaskablePPO run on learner games needs: ``win_loss`` only in matches, and
    minibatches no larger than one rollout."""
    if not reward_fits_episode(reward, episode):
        raise _fail("reward", "'zero_sum' or 'points' with episode 'hand' ('win_loss' needs episode 'match')", reward)
    if ppo.batch_size > ppo.n_steps * n_envs:
        raise _fail("ppo.batch_size", f"at most ppo.n_steps * n_envs = {ppo.n_steps * n_envs}", ppo.batch_size)


# ---------------------------------------------------------------------------------------------
# draw-distill


def _partner_spec(spec: object) -> None:
    """A partner is the teacher or an agent spec; a ppo partner must name an existing policy file."""
    from arena.specs import parse_agent_spec

    if spec == TEACHER:
        return
    try:
        name, kwargs = parse_agent_spec(str(spec))
    except ValueError as error:
        raise ValueError(
            f"must name partners ('{TEACHER}' or an agent spec), got {spec!r} ({error})"
        ) from None
    if name == "ppo" and not Path(str(kwargs.get("path", ""))).is_file():
        raise ValueError(f"must name partners whose ppo path is an existing policy file, got {spec!r}")


class DistillConfig(Section):
    """Everything one ``draw-distill`` run needs; see ``docs/training.md`` for each key."""

    num_players: Literal[2, 3, 4] = 2
    seed: int = seed_field()
    teacher_simulations: int = integer(200, 1)
    partners: dict[Any, Any] = Field(
        default_factory=lambda: {TEACHER: 0.6, "variety": 0.2, "heaviest": 0.2},
        description=f"a mapping of partners ('{TEACHER}' or an agent spec such as 'variety') to weights",
    )
    matches: int = integer(2000, 1)
    shard_matches: int = integer(25, 1)
    workers: int = workers(2)
    init: str | None = Field(
        None,
        description="null (a fresh network) or the path of an existing policy: a weights-only .npz with "
        "its .json record, or a MaskablePPO checkpoint .zip (its policy.pth is read as weights only)",
    )
    net_arch: Widths = layer_widths([512, 512])
    features: Literal[FEATURES] = "extended"  # type: ignore[valid-type]
    temperature: float = number(0.1, 0.0, 100.0, low_open=True)
    epochs: int = integer(8, 1)
    batch_size: int = integer(512, 2)
    learning_rate: float = number(1e-3, 0.0, 1.0, low_open=True)
    validation_share: float = number(0.05, 0.0, 0.5)
    output_dir: str = output_dir("runs/distill_2p")
    progress_bar: bool = True
    final_eval: EvalSettings = Field(
        default_factory=lambda: EvalSettings(
            every=0, matches=500, opponents=["heaviest", "variety", "ismcts"], workers=2
        )
    )
    curve: list[Any] = Field(default_factory=list)
    eval: EvalSettings = Field(
        default_factory=lambda: EvalSettings(
            every=0, matches=200, opponents=["heaviest", "variety", "ismcts"], workers=2
        )
    )

    _partners = _mapping_validator(
        "partners",
        f"a mapping of partners ('{TEACHER}' or an agent spec such as 'variety') to weights",
        _partner_spec,
    )

    _init_exists = _init_validator()

    @model_validator(mode="after")
    def _curve_points(self) -> DistillConfig:
        curve = self.curve
        if not all(
            is_integer(matches)
            and 1 <= matches < self.matches
            and matches % self.shard_matches == 0
            for matches in curve
        ) or curve != sorted(set(curve)):
            raise _fail(
                "curve",
                f"[] or an increasing list of match counts below matches ({self.matches}), "
                f"each a multiple of shard_matches ({self.shard_matches})",
                curve,
            )
        return self


# ---------------------------------------------------------------------------------------------
# draw-train with ``pipeline: exit`` (expert iteration, train/exit.py)


def _agent_spec(spec: object) -> None:
    from arena.specs import parse_agent_spec

    try:
        parse_agent_spec(str(spec))
    except ValueError as error:
        raise ValueError(f"must name agent specs such as 'ismcts:simulations=200', got {spec!r} ({error})") from None


class ExitEvalSettings(Section):
    """The evaluation of every iteration: duplicate matches against agent specs (and the previous iteration)."""

    matches: int = integer(100, 1)
    opponents: list[Any] = Field(
        default_factory=lambda: ["heaviest", "variety"],
        description="a list of agent specs such as 'heaviest' or 'ismcts_python:simulations=200'",
    )
    previous: bool = True
    workers: int = workers(1)

    @field_validator("opponents")
    @classmethod
    def _specs(cls, value: list[Any]) -> list[Any]:
        for spec in value:
            _agent_spec(spec)
        return value


class ExitConfig(Section):
    """Everything one expert-iteration run needs; see ``docs/training.md`` for each key."""

    pipeline: Literal["exit"] = "exit"
    num_players: Literal[2, 3, 4] = 2
    seed: int = seed_field()
    iterations: int = integer(4, 1)
    init: str | None = Field(
        None,
        description="null (a fresh network) or the path of an existing policy file (.npz with its .json) "
        "or checkpoint .zip",
    )
    net_arch: Widths = layer_widths([512, 512])
    value_arch: Widths = layer_widths([256, 256])
    features: Literal[FEATURES] = "extended"  # type: ignore[valid-type]
    matches: int = integer(200, 1)
    lockstep: int = integer(50, 1)
    simulations: int = integer(200, 1)
    guided_from: int = integer(1, 1)
    guide: Literal["root", "tree"] = "tree"
    prior_visits: float = number(200.0, 0.0, 1e6)
    plain_simulations: int = integer(2000, 1)
    value_weight: float = number(0.5, 0.0, 1.0)
    prior_weight: float = number(1.0, 0.0, 100.0)
    explore: float = number(0.25, 0.0, 1.0)
    temperature: float = number(0.1, 0.0, 100.0, low_open=True)
    window: int = integer(2, 1)
    epochs: int = integer(4, 1)
    batch_size: int = integer(512, 2)
    learning_rate: float = number(3e-4, 0.0, 1.0, low_open=True)
    value_loss_weight: float = number(1.0, 0.0, 100.0)
    workers: int = workers(2)
    output_dir: str = output_dir("runs/exit_2p")
    tensorboard: bool = True
    progress_bar: bool = True
    eval: ExitEvalSettings = Field(default_factory=ExitEvalSettings)

    _init_exists = _init_validator()


# ---------------------------------------------------------------------------------------------
# draw-train with ``pipeline: exploit`` (an approximate best response, train/exploit.py)


class ExploitConfig(Section):
    """Everything one approximate-exploitability run needs; see ``docs/training.md`` for each key."""

    pipeline: Literal["exploit"] = "exploit"
    target: str = Field(
        "heaviest", description="an agent spec such as 'heaviest', 'ppo' or 'ismcts:simulations=200'"
    )
    num_players: Literal[2, 3, 4] = 2
    seed: int = seed_field()
    cpu_minutes: float = number(10.0, 0.0, 10_000.0, low_open=True)
    init: str | None = Field(
        None,
        description="null (a fresh network) or the path of an existing policy file (.npz with its .json) "
        "or checkpoint .zip to start the exploiter from",
    )
    n_envs: int = integer(32, 1)
    episode: Literal["hand", "match"] = "hand"
    reward: Literal["zero_sum", "points", "win_loss"] = "zero_sum"
    reward_scale: float = number(0.02, 0.0, 100.0, low_open=True)
    features: Literal[FEATURES] = "extended"  # type: ignore[valid-type]
    skip_forced: bool = True
    ppo: PPOSettings = Field(default_factory=lambda: PPOSettings(n_steps=128, batch_size=512, n_epochs=4))
    eval_every: float = number(1.0, 0.0, 10_000.0, low_open=True)
    eval_matches: int = integer(200, 1)
    final_matches: int = integer(2000, 1)
    output_dir: str = output_dir("runs/exploit")
    progress_bar: bool = True

    @field_validator("target")
    @classmethod
    def _target_spec(cls, value: str) -> str:
        from arena.specs import parse_agent_spec

        try:
            name, kwargs = parse_agent_spec(value)
        except ValueError as error:
            raise ValueError(f"must be an agent spec such as 'ismcts:simulations=200', got {value!r} ({error})") from None
        if name == "ppo" and "path" in kwargs and not Path(str(kwargs["path"])).is_file():
            raise ValueError(f"must be an agent spec whose ppo path is an existing policy file, got {value!r}")
        return value

    _init_exists = _init_validator()

    @model_validator(mode="after")
    def _consistent(self) -> ExploitConfig:
        if self.ppo.lr_schedule != "constant":
            # SB3 schedules by timesteps, and a run of a CPU budget does not know its timesteps ahead.
            raise _fail("ppo.lr_schedule", "'constant' with pipeline: exploit (the budget is CPU time)", self.ppo.lr_schedule)
        _check_ppo_run(self.reward, self.episode, self.ppo, self.n_envs)
        return self


# ---------------------------------------------------------------------------------------------
# train/rllib_selfplay.py (the key names are RLlib's)


class RLlibEnv(Section):
    num_players: Literal[2, 3, 4] = 2
    episode: Literal["hand", "match"] = "hand"
    reward: Literal["zero_sum", "points", "win_loss"] = "zero_sum"
    reward_scale: float = number(0.02, 0.0, 100.0, low_open=True)


class RLlibEnvRunners(Section):
    num_env_runners: int = integer(1, 0)
    num_envs_per_env_runner: int = integer(4, 1)
    num_cpus_per_env_runner: int = integer(1, 1)


class RLlibPPO(Section):
    lr: float = number(3e-4, 0.0, 1.0, low_open=True)
    gamma: float = number(1.0, 0.0, 1.0)
    lambda_: float = number(0.95, 0.0, 1.0)
    train_batch_size_per_learner: int = integer(4000, 1)
    minibatch_size: int = integer(256, 1)
    num_epochs: int = integer(6, 1)
    entropy_coeff: float = number(0.01, 0.0, 1.0)
    vf_loss_coeff: float = number(0.5, 0.0, 10.0)
    clip_param: float = number(0.2, 0.0, 1.0, low_open=True)


class RLlibModel(Section):
    fcnet_hiddens: Widths = layer_widths([256, 256])
    fcnet_activation: Literal["tanh", "relu"] = "tanh"
    vf_share_layers: bool = False


class RLlibEvaluation(Section):
    opponents: list[Literal[BASELINES]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: ["random", "heaviest", "variety"],
        min_length=1,
        description="a non-empty list of baseline names (" + ", ".join(BASELINES) + ")",
    )
    num_games: int = Field(200, ge=0, le=MAX_INT, description="an integer >= 0 (0 skips the evaluation)")
    episode: Literal["hand", "match"] = "match"


class RLlibConfig(Section):
    """Everything one ``train/rllib_selfplay.py`` run needs; see ``configs/rllib_selfplay.yaml``."""

    seed: int = seed_field()
    iterations: int = integer(20, 1)
    env: RLlibEnv = Field(default_factory=RLlibEnv)
    learner_seats: int = integer(1, 1)
    opponents: dict[Any, Any] = Field(
        default_factory=lambda: {"self": 0.4, "heaviest": 0.3, "variety": 0.2, "random": 0.1},
        description=f"a mapping of opponent names ({', '.join(RLLIB_OPPONENTS)}) to weights",
    )
    env_runners: RLlibEnvRunners = Field(default_factory=RLlibEnvRunners)
    ppo: RLlibPPO = Field(default_factory=RLlibPPO)
    model: RLlibModel = Field(default_factory=RLlibModel)
    evaluation: RLlibEvaluation = Field(default_factory=RLlibEvaluation)
    output_dir: str = output_dir("runs/rllib_selfplay")

    _opponents = _mapping_validator(
        "opponents",
        f"a mapping of opponent names ({', '.join(RLLIB_OPPONENTS)}) to weights",
        lambda name: _one_of(name, RLLIB_OPPONENTS),
    )

    @model_validator(mode="after")
    def _consistent(self) -> RLlibConfig:
        if not reward_fits_episode(self.env.reward, self.env.episode):
            raise _fail("env.reward", "'zero_sum' or 'points' with env.episode 'hand'", self.env.reward)
        if self.learner_seats > self.env.num_players:
            raise _fail(
                "learner_seats", f"at most env.num_players ({self.env.num_players})", self.learner_seats
            )
        return self


# ---------------------------------------------------------------------------------------------
# Reading: YAML file + KEY=VALUE overrides -> model, every problem one ConfigError line.


def _fail(key: str, expected: str, value: object) -> ConfigError:
    return ConfigError(f"config key {key!r} must be {expected}, got {value!r}")


def _expectation(field: FieldInfo) -> str | None:
    if field.description:
        return field.description
    annotation = field.annotation
    if annotation is bool:
        return "true or false"
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(repr(choice) for choice in get_args(annotation))
    return None


def _message(model: type[Section], error: Mapping[str, Any], data: Any) -> str:
    """One pydantic error as ``config key 'a.b' must be ..., got ...``."""
    loc = [part for part in error["loc"] if not isinstance(part, int)]
    names: list[str] = []
    cls: type[Section] | None = model
    field: FieldInfo | None = None
    for part in loc:
        names.append(str(part))
        if cls is None:
            continue  # a key inside a mapping field
        if str(part) not in cls.model_fields:
            known = ", ".join(cls.model_fields)
            return f"config key {'.'.join(names)!r} is not known; known keys here: {known}"
        field = cls.model_fields[str(part)]
        annotation = field.annotation
        cls = annotation if inspect.isclass(annotation) and issubclass(annotation, Section) else None
    key = ".".join(names) or "config"
    value = data
    for part in loc:  # the whole value given for the key (not the list item that failed)
        value = value.get(part) if isinstance(value, Mapping) else value
    if error["type"] in ("value_error", "assertion_error"):
        text = str(error["ctx"]["error"])
        return text if text.startswith("config key") else f"config key {key!r} {text}"
    if error["type"] == "model_type" or (cls is not None and error["type"] == "dict_type"):
        return f"config key {key!r} must be a mapping of keys to values, got {value!r}"
    expected = _expectation(field) if field is not None else None
    return f"config key {key!r} must be {expected or error['msg'].lower()}, got {value!r}"


def build(model: type[Model], data: Any) -> Model:
    """Validate plain ``data`` (missing keys take the defaults) into ``model``.

    Raises:
        ConfigError: naming the first bad key, what it accepts and the value given.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"a config must be a mapping of keys to values, got {data!r}")
    try:
        return model.model_validate(dict(data))
    except ConfigError:
        raise
    except ValidationError as error:
        raise ConfigError(_message(model, error.errors()[0], data)) from None


def read_yaml(path: str | Path) -> dict[str, Any]:
    """A YAML config file's mapping (empty file: ``{}``), every problem one :class:`ConfigError` line.

    The file is read with :func:`draw_env.untrusted.read_yaml`: at most 1 MiB, no anchors or
    aliases, bounded nesting, no repeated keys.
    """
    name = f"config file {str(path)!r}"
    if not Path(path).exists():
        raise ConfigError(f"{name} does not exist")
    try:
        data = loads_yaml(read_text(path, MAX_CONFIG_BYTES), name)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{name} must hold a mapping at the top level, got {type(data).__name__}")
    return data


# YAML 1.1 reads 1e-4 (no dot) as a string; such a value on the command line is meant as a number.
_EXPONENT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"ppo.gamma=0.9"`` -> ``(["ppo", "gamma"], 0.9)``; the value is parsed as YAML."""
    key, separator, raw = text.partition("=")
    if not separator or not key.strip():
        raise ConfigError(f"override {text!r} must look like KEY=VALUE (for example ppo.learning_rate=1e-4)")
    try:
        value = loads_yaml(raw, f"override {text[:200]!r}")
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
        value = float(value)
    return key.strip().split("."), value


def apply_override(data: dict[str, Any], path: list[str], value: Any) -> None:
    node = data
    for index, part in enumerate(path[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(
                f"override key {'.'.join(path)!r}: {'.'.join(path[: index + 1])!r} is not a section"
            )
        node = child
    node[path[-1]] = value


def load(model: type[Model], path: str | Path | None, overrides: Sequence[str] = ()) -> Model:
    """Read a YAML config (``None``: the defaults), apply ``KEY=VALUE`` overrides, validate.

    Raises:
        ConfigError: a missing or malformed file, a duplicate key, a malformed override, an
            unknown key or a bad value; the message is one line naming it.
    """
    data = read_yaml(path) if path is not None else {}
    for text in overrides:
        keys, value = parse_override(text)
        apply_override(data, keys, value)
    return build(model, data)


def config_from_dict(data: Mapping[str, Any]) -> TrainConfig:
    """Build and validate a ``draw-train`` config from plain data (missing keys take the defaults)."""
    return build(TrainConfig, data)


def load_config(path: str | Path | None, overrides: Sequence[str] = ()) -> TrainConfig:
    """:func:`load` for a ``draw-train`` config."""
    return load(TrainConfig, path, overrides)


def load_distill_config(path: str | Path | None, overrides: Sequence[str] = ()) -> DistillConfig:
    """:func:`load` for a ``draw-distill`` config."""
    return load(DistillConfig, path, overrides)


def load_exit_config(path: str | Path | None, overrides: Sequence[str] = ()) -> ExitConfig:
    """:func:`load` for a ``draw-train`` config with ``pipeline: exit``."""
    return load(ExitConfig, path, overrides)


def load_exploit_config(path: str | Path | None, overrides: Sequence[str] = ()) -> ExploitConfig:
    """:func:`load` for a ``draw-train`` config with ``pipeline: exploit``."""
    return load(ExploitConfig, path, overrides)


def pipeline_of(path: str | Path | None, overrides: Sequence[str] = ()) -> str:
    """The ``pipeline`` a ``draw-train`` config names (``"selfplay"`` when it names none).

    Raises:
        ConfigError: a file that cannot be read, or an override that is malformed.
    """
    data = read_yaml(path) if path is not None else {}
    for text in overrides:
        keys, value = parse_override(text)
        if keys == ["pipeline"]:
            data["pipeline"] = value
    return str(data.get("pipeline", "selfplay"))
