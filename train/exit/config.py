"""The config of expert iteration (``draw-train`` with ``pipeline: exit``); see ``docs/training_exit.md``."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from draw_env.features import FEATURES, feature_size
from draw_env.observation import OBSERVATION_SIZE
from draw_env.rules import NUM_ACTIONS
from train.config import (
    MAX_INT,
    ConfigError,
    EvalSettings,
    Evaluated,
    Widths,
    agent_spec,
    check_memory,
    config_keys,
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


#: Decisions the teacher labels in a match, a little above those measured with the shipped
#: configs (about 210 with 2 players, 76 with 3, 66 with 4), for the memory estimate.
DECISIONS_PER_MATCH = {2: 220, 3: 80, 4: 70}
#: Nodes the compiled search reserves a simulation (``agents.ismcts_compiled``), and bytes a
#: node takes (int32 children and float32 priors of every action, three counters, a flag).
SEARCH_NODES_PER_SIMULATION = 3
SEARCH_NODE_BYTES = 8 * NUM_ACTIONS + 3 * 8 + 1


def decision_bytes(features: str) -> int:
    """Bytes a decision takes while an iteration is fitted: its row (int16 observation, mask,
    float32 action values and outcome) twice (the window's parts and their concatenation), and
    the fit's float32 features and targets."""
    row = 2 * OBSERVATION_SIZE + NUM_ACTIONS + 4 * NUM_ACTIONS + 4
    return 2 * row + 4 * feature_size(features) + 4 * NUM_ACTIONS


def search_nodes(simulations: int, trees: int) -> int:
    """The nodes ``trees`` searches of ``simulations`` reserve at once."""
    return SEARCH_NODES_PER_SIMULATION * (simulations + NUM_ACTIONS) * trees + 1


def _partner(spec: object) -> None:
    if spec != TEACHER:
        try:
            agent_spec(spec, policy_must_exist=True)
        except ValueError as error:
            raise ValueError(str(error).replace("must name agent specs", f"must name partners ('{TEACHER}' or agent specs)")) from None


class ExitConfig(Evaluated):
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
    eval: EvalSettings = Field(default_factory=EvalSettings)

    evaluations: ClassVar[dict[str, dict[str, Any]]] = {
        "eval": {"matches": 100, "opponents": ["heaviest", "variety"], "previous": True},
    }
    not_applying: ClassVar[dict[str, dict[str, str]]] = {
        "eval": {"every": "expert iteration evaluates after every iteration"},
    }

    _init_exists = init_validator()

    _partners = mapping_validator(
        "partners", f"a mapping of partners ('{TEACHER}' or an agent spec such as 'variety') to weights", _partner
    )

    @model_validator(mode="after")
    def _sizes(self) -> ExitConfig:
        """Searches the search can number (int32 node numbers), and an iteration's searches and
        data within this machine's memory (:func:`train.config.check_memory`)."""
        trees = self.lockstep if self.guide == "tree" else 1  # guide: tree searches a shard's games at once
        searches = {
            ("simulations", "lockstep") if trees > 1 else ("simulations",): search_nodes(self.simulations, trees),
            ("plain_simulations",): search_nodes(self.plain_simulations, 1),
        }
        keys, nodes = max(searches.items(), key=lambda item: item[1])
        if nodes > MAX_INT:
            raise ConfigError(
                f"{config_keys(keys)} ask{'s' * (len(keys) == 1)} for a search of {nodes:,} nodes "
                f"({SEARCH_NODES_PER_SIMULATION} a simulation and {SEARCH_NODES_PER_SIMULATION * NUM_ACTIONS} more"
                f"{', for each game of a shard' * (trees > 1 and len(keys) > 1)}); the search numbers at most "
                f"{MAX_INT:,}: lower {' or '.join(keys)}"
            )
        check_memory(
            (*keys, "workers"),
            self.workers * nodes * SEARCH_NODE_BYTES,
            f"{self.workers} worker{'s' * (self.workers > 1)}, each with a search of {nodes:,} nodes of "
            f"{SEARCH_NODE_BYTES} bytes",
        )
        per_match = DECISIONS_PER_MATCH[self.num_players]
        decisions = self.window * self.matches * per_match
        check_memory(
            ("matches", "window"),
            decisions * decision_bytes(self.features),
            f"window * matches * about {per_match} decisions a match = {decisions:,} decisions fitted at once, "
            f"{decision_bytes(self.features):,} bytes each",
        )
        return self

    @model_validator(mode="before")
    @classmethod
    def _replaced(cls, data: Any) -> Any:
        for key, what in REPLACED.items():
            if isinstance(data, dict) and key in data:
                raise ConfigError(f"config key {key!r} {what}")
        return data
