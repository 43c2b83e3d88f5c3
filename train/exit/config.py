"""The config of expert iteration (``draw-train`` with ``pipeline: exit``); see ``docs/training_exit.md``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from draw_env.features import FEATURES
from train.config import (
    ConfigError,
    Section,
    Widths,
    agent_spec,
    init_validator,
    integer,
    layer_widths,
    mapping_validator,
    number,
    output_dir,
    seed_field,
    workers,
)

#: The partner name that seats the search itself in ``partners``.
TEACHER = "teacher"

#: Keys of the former ``draw-distill`` configs -> what replaced them (a distillation is a run of
#: expert iteration with ``iterations: 1``: the plain search labels, the network learns).
REPLACED = {
    "teacher_simulations": "was replaced by plain_simulations (the plain compiled search is the teacher)",
    "shard_matches": "was replaced by lockstep (the matches of a shard)",
    "final_eval": "was replaced by eval (the evaluation after every iteration)",
    "validation_share": "was removed: the fit reports its losses and agreement on the data it fitted",
    "curve": "was removed: for a learning curve, run the config at several values of matches",
}


def _partner(spec: object) -> None:
    if spec != TEACHER:
        try:
            agent_spec(spec, policy_must_exist=True)
        except ValueError as error:
            raise ValueError(str(error).replace("must name agent specs", f"must name partners ('{TEACHER}' or agent specs)")) from None


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
            agent_spec(spec)
        return value


class ExitConfig(Section):
    """Everything one expert-iteration run needs; see ``docs/training_exit.md`` for each key."""

    pipeline: Literal["exit"] = "exit"
    num_players: Literal[2, 3, 4] = 2
    seed: int = seed_field()
    iterations: int = integer(4, 1)
    partners: dict[Any, Any] = Field(
        default_factory=lambda: {TEACHER: 1.0},
        description=f"a mapping of partners ('{TEACHER}' or an agent spec such as 'variety') to weights",
    )
    init: str | None = Field(
        None,
        description="null (a fresh network) or the path of an existing policy file (.npz with its .json) "
        "or checkpoint .zip",
    )
    net_arch: Widths = layer_widths([512, 512])
    value_arch: Widths | None = Field(
        None, description="null (the value network takes net_arch's widths) or its own hidden layer widths"
    )
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

    _init_exists = init_validator()

    _partners = mapping_validator(
        "partners", f"a mapping of partners ('{TEACHER}' or an agent spec such as 'variety') to weights", _partner
    )

    @model_validator(mode="before")
    @classmethod
    def _replaced(cls, data: Any) -> Any:
        for key, what in REPLACED.items():
            if isinstance(data, dict) and key in data:
                raise ConfigError(f"config key {key!r} {what}")
        return data
