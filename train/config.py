"""The one config loader of ``draw-train`` and ``train/rllib_selfplay.py``: YAML, overrides, checks.

A config is a pydantic model (a :class:`Section`, with nested sections) that each pipeline
defines beside its code (``train/selfplay/config.py``, ``train/exit/config.py``,
``train/exploit/config.py``, ``train/rllib/config.py``; those modules import without torch, so a
config is checked before the heavy imports). :func:`load` reads a YAML file plus ``KEY=VALUE``
overrides (dotted keys reach sections: ``ppo.learning_rate=1e-4``; values are parsed as YAML);
:func:`train.pipelines.load_pipeline` picks the model a ``draw-train`` config's ``pipeline:``
names. Every pipeline evaluates with the one section :class:`EvalSettings`. Every model
forbids unknown keys, takes no type coercion (``true`` is not a number, ``1.0`` is not an
integer) and no NaN or infinity. Any problem, in the file or in a value, is one
:class:`ConfigError` line that names the file or the dotted key, for example
``config key 'ppo.gamma' must be a finite number in [0, 1], got nan``.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar, get_args, get_origin

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

import agents
from draw_env.checks import is_integer, is_number
from draw_env.io.files import check_regular_file
from draw_env.io.untrusted import loads_yaml, read_text

#: The largest config file read (ours are a few kB).
MAX_CONFIG_BYTES = 1024 * 1024

#: The baselines an evaluation or an opponent pool may name: the registry's (``agents.baseline_names()``)
#: when this module is imported.
BASELINES = tuple(agents.baseline_names())

Model = TypeVar("Model", bound="Section")


class ConfigError(ValueError):
    """A config that cannot be used; the message is one line naming the file or the key.

    Raised inside a validator, its message is shown as it is (for a key that was replaced).
    """


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


#: The coefficients every PPO of the project takes (self-play and the exploiter's MaskablePPO,
#: :class:`train.learner_config.PPOSettings`; PPO in JAX, :class:`train.jax_ppo.config.JaxPPOConfig`;
#: RLlib's PPO, :class:`train.rllib.config.RLlibPPO`), under the project's one PPO vocabulary
#: (CleanRL's names, :data:`PPO_RENAMED`): ``(default, low, high, low_open)`` for :func:`number`.
PPO_COEFFICIENTS: dict[str, tuple[float, float, float, bool]] = {
    "gamma": (1.0, 0.0, 1.0, False),
    "gae_lambda": (0.95, 0.0, 1.0, False),
    "clip_coef": (0.2, 0.0, 1.0, True),
    "ent_coef": (0.01, 0.0, 1.0, False),
    "vf_coef": (0.5, 0.0, 10.0, False),
    "max_grad_norm": (0.5, 0.0, 100.0, True),
}

#: The PPO keys each library named its own way -> the project's one name for them, per config
#: kind. The one vocabulary is CleanRL's: ``learning_rate``, ``gamma``, ``gae_lambda``,
#: ``clip_coef``, ``ent_coef``, ``vf_coef``, ``max_grad_norm``, ``update_epochs``, ``num_steps``
#: (a rollout's steps per game), ``batch_size`` (the steps of one update), ``minibatch_size`` or
#: ``num_minibatches``. Each PPO section refuses its old keys (:attr:`Section.renamed`); each
#: library's own argument names are given in one place per library
#: (:func:`train.sb3_adapter.make_maskable_ppo`, :meth:`train.rllib.config.RLlibPPO.rllib_training`).
PPO_RENAMED: dict[str, dict[str, str]] = {
    "sb3": {  # MaskablePPO's (stable-baselines3) names
        "clip_range": "clip_coef",
        "n_steps": "num_steps",
        "batch_size": "minibatch_size",
        "n_epochs": "update_epochs",
    },
    "jax": {
        "clip": "clip_coef",
        "value_coef": "vf_coef",
        "entropy_coef": "ent_coef",
        "epochs": "update_epochs",
        "minibatches": "num_minibatches",
    },
    "rllib": {  # RLlib's names
        "lr": "learning_rate",
        "lambda_": "gae_lambda",
        "clip_param": "clip_coef",
        "entropy_coeff": "ent_coef",
        "vf_loss_coeff": "vf_coef",
        "num_epochs": "update_epochs",
        "train_batch_size_per_learner": "batch_size",
    },
}


def ppo_coefficient(name: str) -> Any:
    """The field of PPO's coefficient ``name`` (a key of :data:`PPO_COEFFICIENTS`)."""
    default, low, high, low_open = PPO_COEFFICIENTS[name]
    return number(default, low, high, low_open=low_open)



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


def machine_memory() -> int | None:
    """This machine's physical memory in bytes (``None`` where the system does not tell)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows) or no such name
        return None


def _size(count: float) -> str:
    return f"{count / 1e9:,.1f} GB" if count < 1e12 else f"{count / 1e12:,.1f} TB"


def check_memory(keys: Sequence[str], needed: int, how: str) -> None:
    """Refuse a config whose estimated memory, ``needed`` bytes, is more than this machine has.

    Args:
        keys: the size keys the estimate grows with (the message names them).
        how: how the estimate is made, in words.

    Raises:
        ConfigError: one line naming ``keys``, the estimate and the machine's memory.
    """
    available = machine_memory()
    if available is None or needed <= available:
        return
    raise ConfigError(
        f"{config_keys(keys)} ask{'s' * (len(keys) == 1)} for about {_size(needed)} of memory ({how}), "
        f"more than this machine's {_size(available)}: lower {' or '.join(keys)}"
    )


def config_keys(keys: Sequence[str]) -> str:
    """``config key 'a'``, ``config keys 'a' and 'b'``, ``config keys 'a', 'b' and 'c'``."""
    quoted = [repr(key) for key in keys]
    if len(quoted) == 1:
        return f"config key {quoted[0]}"
    return f"config keys {', '.join(quoted[:-1])} and {quoted[-1]}"


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
        raise ValueError(f"must be {_WIDTHS}, got {shown(value)}")
    return value


#: Hidden layer widths; the items are checked as a whole so that the message shows the whole list.
Widths = Annotated[list[Any], AfterValidator(_positive_widths)]


class Section(BaseModel):
    """Base of every config model: unknown keys, coercion, NaN and infinity are all errors.

    :attr:`renamed` maps keys this section once took to the key that replaced them: :func:`build`
    refuses each with one line naming the new key (``config key 'ppo.clip_range' is now ppo.clip_coef``).
    """

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    renamed: ClassVar[Mapping[str, str]] = {}

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


def mapping_validator(field: str, what: str, check_name: Callable[[object], None]) -> Any:
    """A validator for ``field``: a non-empty mapping of names (each passed to ``check_name``, which
    raises ``ValueError``) to finite weights in [0, 1e6], not all zero."""

    def validate(cls: type, mapping: dict[Any, Any]) -> dict[str, float]:
        if not mapping:
            raise ValueError(f"must be {what}, got {{}}")
        for name, weight in mapping.items():
            check_name(name)
            if not is_number(weight) or not 0 <= weight <= 1e6:
                raise fail(f"{field}.{name}", "a finite weight in [0, 1e6]", weight)
        if sum(mapping.values()) <= 0:
            raise ValueError(f"must hold weights that are not all zero, got {shown(mapping)}")
        return {str(name): float(weight) for name, weight in mapping.items()}

    return field_validator(field)(classmethod(validate))  # type: ignore[arg-type]


def init_validator() -> Any:
    """The validator of an ``init`` key: ``None`` (a fresh network) or an existing policy file."""

    def validate(cls: type, value: str | None) -> str | None:
        if value is not None and not Path(value).is_file():
            raise ValueError(
                f"must be null (a fresh network) or the path of an existing policy file, got {shown(value)}"
            )
        return value

    return field_validator("init")(classmethod(validate))  # type: ignore[arg-type]


def baselines(default: Sequence[str]) -> Any:
    """A non-empty list of :data:`BASELINES` names."""
    return Field(
        default_factory=lambda: list(default),
        min_length=1,
        description="a non-empty list of baseline names (" + ", ".join(BASELINES) + ")",
    )


#: A list of baseline names (with :func:`baselines` as the field).
Baselines = list[Literal[BASELINES]]  # type: ignore[valid-type]


def one_of(name: object, names: tuple[str, ...]) -> None:
    """Check a name of a mapping field (:func:`mapping_validator`) against ``names``."""
    if name not in names:
        raise ValueError(f"must name opponents among {', '.join(names)}, got {shown(name)}")


def _opponent_mapping(names: tuple[str, ...]) -> str:
    return f"a mapping of opponent names ({', '.join(names)}) to weights"


def opponent_weights(names: tuple[str, ...], default: Mapping[str, float]) -> Any:
    """The field of an ``opponents`` key: opponent names among ``names`` -> weights (a copy of
    ``default`` by default); its class checks it with :func:`opponents_validator` of ``names``."""
    return Field(default_factory=lambda: dict(default), description=_opponent_mapping(names))


def opponents_validator(names: tuple[str, ...]) -> Any:
    """The validator of an ``opponents`` key (:func:`opponent_weights`): a non-empty mapping of
    names among ``names`` to weights, not all zero (:func:`mapping_validator`)."""
    return mapping_validator("opponents", _opponent_mapping(names), lambda name: one_of(name, names))


def agent_spec(spec: object, *, policy_must_exist: bool = False) -> tuple[str, dict[str, Any]]:
    """Check an agent spec such as ``'ismcts:simulations=200'``; return its name and arguments.

    Args:
        policy_must_exist: a ``ppo`` or ``network`` spec's ``path`` must be an existing file.

    Raises:
        ValueError: naming the spec and the reason (a validator turns it into a config error).
    """
    from arena.specs import parse_agent_spec

    try:
        name, kwargs = parse_agent_spec(str(spec))
    except ValueError as error:
        raise ValueError(f"must name agent specs such as 'ismcts:simulations=200', got {shown(spec)} ({error})") from None
    if policy_must_exist and name in ("ppo", "network") and "path" in kwargs and not Path(str(kwargs["path"])).is_file():
        raise ValueError(f"must name agent specs whose policy path is an existing policy file, got {shown(spec)}")
    return name, kwargs


def replaced_keys(replaced: Mapping[str, str]) -> Any:
    """A model validator refusing the keys of ``replaced`` (key -> what replaced it, in words),
    each with one line such as ``config key 'eval_matches' was renamed eval.matches``."""

    def refuse(cls: type, data: Any) -> Any:
        for key, what in replaced.items():
            if isinstance(data, Mapping) and key in data:
                raise ConfigError(f"config key {key!r} {what}")
        return data

    return model_validator(mode="before")(classmethod(refuse))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# The evaluation section of every pipeline.


def _agent_specs(value: list[Any]) -> list[Any]:
    for spec in value:
        agent_spec(spec)
    return value


#: A list of agent specs, each checked (:func:`agent_spec`).
AgentSpecs = Annotated[list[Any], AfterValidator(_agent_specs)]


class EvalSettings(Section):
    """An evaluation of the policy being trained (:func:`arena.learner.evaluate_learner`): ``matches``
    duplicate matches against each of ``opponents``.

    Every pipeline's ``eval`` (during training) and ``final_eval`` (at the end) sections are of
    this class; each pipeline sets its defaults and refuses the keys that do not apply to it
    (:class:`Evaluated`). ``every`` counts in the pipeline's unit (self-play: timesteps; the
    exploiter: CPU-minutes; PPO in JAX: updates); 0 turns the periodic evaluation off.
    """

    every: float = number(0.0, 0.0, float(MAX_INT))
    matches: int = integer(200, 1)
    opponents: AgentSpecs = Field(
        default_factory=lambda: ["heaviest", "variety"],
        min_length=1,
        description="a non-empty list of agent specs such as 'heaviest' or 'ismcts_python:simulations=200'",
    )
    duplicate: bool = True
    previous: bool = False
    workers: int = workers(1)


class Evaluated(Section):
    """Base of a pipeline config with evaluation sections (:class:`EvalSettings`).

    :attr:`evaluations` gives each section's defaults in this pipeline: a key the config leaves
    out takes the pipeline's default (not the class's), key by key. :attr:`not_applying` names,
    per section, the keys this pipeline does not use, each with why: giving one another value
    than its default is an error.
    """

    evaluations: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    not_applying: ClassVar[Mapping[str, Mapping[str, str]]] = {}

    @classmethod
    def not_applying_to(cls, section: str) -> Mapping[str, str]:
        """The keys of the evaluation section ``section`` this pipeline does not use, each with why."""
        return cls.not_applying.get(section, {})

    @model_validator(mode="before")
    @classmethod
    def _evaluation_defaults(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        for name, defaults in cls.evaluations.items():
            given = data.get(name, {})
            if not isinstance(given, Mapping):
                continue  # the field's own check names it
            section = {**EvalSettings().model_dump(), **defaults}
            for key, why in cls.not_applying_to(name).items():
                # Its default is accepted: a saved config.json holds every key.
                if key in given and given[key] != section[key]:
                    raise ConfigError(f"config key '{name}.{key}' does not apply here: {why}")
            data[name] = {**defaults, **given}
        return data


class EvaluatedLearner(Evaluated):
    """Base of the config of a pipeline that trains one learner (no iterations): evaluated every
    ``eval.every`` during training and once at the end (``final_eval``).

    Neither section takes ``previous`` (there is no previous iteration: :attr:`no_previous` says
    so in the pipeline's words), nor ``final_eval`` ``every``; :attr:`not_applying` adds the
    pipeline's own.
    """

    #: Why ``previous`` does not apply, in the pipeline's words.
    no_previous: ClassVar[str] = "this pipeline has no previous iteration"

    eval: EvalSettings = Field(default_factory=EvalSettings)
    final_eval: EvalSettings = Field(default_factory=EvalSettings)

    @classmethod
    def not_applying_to(cls, section: str) -> Mapping[str, str]:
        once = {"every": "the final evaluation runs once"} if section == "final_eval" else {}
        return {**once, "previous": cls.no_previous, **cls.not_applying.get(section, {})}


# ---------------------------------------------------------------------------------------------
# Reading: YAML file + KEY=VALUE overrides -> model, every problem one ConfigError line.


def fail(key: str, expected: str, value: object) -> ConfigError:
    return ConfigError(f"config key {key!r} must be {expected}, got {shown(value)}")


#: How much of a value a message shows (a config may hold a megabyte-long string).
_SHOWN_CHARS = 200
#: Integers wider than this are refused before validation: no key takes one (:data:`MAX_INT`
#: has 31 bits), and past 4,300 digits Python cannot even print one in a message.
_WIDEST_INTEGER_BITS = 64


def shown(value: object) -> str:
    """``repr(value)`` for a message: at most :data:`_SHOWN_CHARS` characters, and never an error."""
    if isinstance(value, int) and value.bit_length() > _WIDEST_INTEGER_BITS:
        return f"an integer of {value.bit_length():,} bits"
    try:
        text = repr(value)
    except ValueError:  # an integer past Python's 4,300-digit str() limit, somewhere inside
        return f"a {type(value).__name__} holding an integer too long to print"
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."


def _refuse_huge_integers(data: Any, key: str = "") -> None:
    """Raise :class:`ConfigError` naming the key of the first integer in ``data`` (keys included)
    wider than :data:`_WIDEST_INTEGER_BITS` bits."""

    def too_wide(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _WIDEST_INTEGER_BITS

    def refuse(where: str, value: int) -> ConfigError:
        return ConfigError(
            f"config key {where!r} must be an integer of at most 31 bits (at most {MAX_INT:,}), "
            f"got one of {value.bit_length():,} bits"
        )

    if isinstance(data, Mapping):
        for name, value in data.items():
            if too_wide(name):
                raise refuse(key or "config", name)
            _refuse_huge_integers(value, f"{key}.{name}" if key else str(name))
    elif isinstance(data, list):
        for item in data:
            _refuse_huge_integers(item, key)
    elif too_wide(data):
        raise refuse(key or "config", data)


def _expectation(field: FieldInfo) -> str | None:
    if field.description:
        return field.description
    annotation = field.annotation
    if annotation is bool:
        return "true or false"
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(repr(choice) for choice in get_args(annotation))
    return None


def _mapped_section(annotation: Any) -> tuple[int, type[Section]] | None:
    """For a mapping field whose values are sections, directly or through more mappings
    (``dict[str, BudgetSettings]``, ``dict[str, dict[str, BudgetSettings]]``): how many keys lead
    to a section, and its class; else ``None``."""
    levels = 0
    while get_origin(annotation) is dict:
        annotation = get_args(annotation)[1]
        levels += 1
    if levels and inspect.isclass(annotation) and issubclass(annotation, Section):
        return levels, annotation
    return None


def _message(model: type[Section], error: Mapping[str, Any], data: Any) -> str:
    """One pydantic error as ``config key 'a.b' must be ..., got ...``."""
    loc = [part for part in error["loc"] if not isinstance(part, int)]
    names: list[str] = []
    cls: type[Section] | None = model
    field: FieldInfo | None = None
    # A mapping field of sections (budgets: {micro: {...}}): the keys left before its section.
    mapped: tuple[int, type[Section]] | None = None
    for part in loc:
        names.append(str(part))
        if cls is None:
            if mapped is not None:  # a key of a mapping of sections
                levels, section = mapped
                cls, mapped = (section, None) if levels == 1 else (None, (levels - 1, section))
            continue  # a key inside a mapping field
        if str(part) not in cls.model_fields:
            known = ", ".join(cls.model_fields)
            return f"config key {'.'.join(names)!r} is not known; known keys here: {known}"
        field = cls.model_fields[str(part)]
        annotation = field.annotation
        cls = annotation if inspect.isclass(annotation) and issubclass(annotation, Section) else None
        mapped = _mapped_section(annotation) if cls is None else None
    key = ".".join(names) or "config"
    value = data
    for part in loc:  # the whole value given for the key (not the list item that failed)
        value = value.get(part) if isinstance(value, Mapping) else value
    if error["type"] in ("value_error", "assertion_error"):
        if isinstance(error["ctx"]["error"], ConfigError):
            return str(error["ctx"]["error"])
        text = str(error["ctx"]["error"])
        return text if text.startswith("config key") else f"config key {key!r} {text}"
    if error["type"] == "model_type" or (cls is not None and error["type"] == "dict_type"):
        return f"config key {key!r} must be a mapping of keys to values, got {shown(value)}"
    expected = _expectation(field) if field is not None else None
    return f"config key {key!r} must be {expected or error['msg'].lower()}, got {shown(value)}"


def _refuse_renamed(model: type[Section], data: Mapping[Any, Any], prefix: str = "") -> None:
    """Raise :class:`ConfigError` for the first key of ``data`` that ``model`` (or one of its
    sections, at any depth) lists in :attr:`Section.renamed`, naming the key that replaced it."""
    for key, value in data.items():
        if key in model.renamed:
            raise ConfigError(f"config key {prefix + str(key)!r} is now {prefix + model.renamed[key]}")
        field = model.model_fields.get(key) if isinstance(key, str) else None
        section = field.annotation if field is not None else None
        if isinstance(value, Mapping) and inspect.isclass(section) and issubclass(section, Section):
            _refuse_renamed(section, value, f"{prefix}{key}.")


def build(model: type[Model], data: Any) -> Model:
    """Validate plain ``data`` (missing keys take the defaults) into ``model``.

    Raises:
        ConfigError: naming the first bad key, what it accepts and the value given.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"a config must be a mapping of keys to values, got {shown(data)}")
    _refuse_huge_integers(data)
    _refuse_renamed(model, data)
    try:
        return model.model_validate(dict(data))
    except ConfigError:
        raise
    except ValidationError as error:
        raise ConfigError(_message(model, error.errors()[0], data)) from None


def read_yaml(path: str | Path) -> dict[str, Any]:
    """A YAML config file's mapping (empty file: ``{}``), every problem one :class:`ConfigError` line.

    The file must be a regular file (or a link to one), checked before it is opened; it is read
    with :func:`draw_env.io.untrusted.read_yaml`'s bounds: at most 1 MiB, no anchors or aliases,
    bounded nesting, no repeated keys.
    """
    try:
        check_regular_file("config file", path)  # a FIFO would block the read below
    except ValueError as error:
        raise ConfigError(str(error)) from None
    name = f"config file {str(path)!r}"
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
        raise ConfigError(f"override {shown(text)} must look like KEY=VALUE (for example ppo.learning_rate=1e-4)")
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
    return build(model, raw_config(path, overrides))


def raw_config(path: str | Path | None, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The YAML config at ``path`` (``None``: empty) with the overrides applied, not yet validated.

    Raises:
        ConfigError: also for a file that holds no setting at all (empty, or comments only):
            a run of every default is asked for by no file, not by an empty one.
    """
    data = read_yaml(path) if path is not None else {}
    if path is not None and not data:
        raise ConfigError(
            f"config file {str(path)!r} holds no settings (it is empty or only comments): "
            "give a config such as configs/quick.yaml"
        )
    for text in overrides:
        keys, value = parse_override(text)
        apply_override(data, keys, value)
    return data


class PPOCoefficients(Section):
    """Every coefficient of :data:`PPO_COEFFICIENTS`, the fields of each PPO config that takes
    them all (self-play's and the exploiter's ``ppo:`` section, PPO in JAX)."""

    gamma: float = ppo_coefficient("gamma")
    gae_lambda: float = ppo_coefficient("gae_lambda")
    clip_coef: float = ppo_coefficient("clip_coef")
    ent_coef: float = ppo_coefficient("ent_coef")
    vf_coef: float = ppo_coefficient("vf_coef")
    max_grad_norm: float = ppo_coefficient("max_grad_norm")
