"""The config of expert iteration (``draw-train`` with ``pipeline: exit``); see ``docs/training_exit.md``."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from agents.inputs import OBS_TYPES, input_size, observed_layout
from draw_env.features import FEATURES
from draw_env.rules import DrawGame
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
from train.learner_config import VariantSettings

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


#: Decisions the teacher labels in a match of the seeds' game, a little above those measured with
#: the shipped configs (about 210 with 2 players, 76 with 3, 66 with 4), for the memory estimate.
DECISIONS_PER_MATCH = {2: 220, 3: 80, 4: 70}
#: Hands a match of a variant is counted as for the memory estimate (a variant's hands give
#: fewer points than the seeds' game's, so its matches last more hands).
VARIANT_MATCH_HANDS = 30
#: Nodes the compiled search reserves a simulation (``agents.compiled_search.tree.NODES_PER_SIMULATION``,
#: not imported here: the config loads without numba).
SEARCH_NODES_PER_SIMULATION = 3


def search_node_bytes(game: DrawGame) -> int:
    """Bytes a search node takes: int32 children and float32 priors of every action of ``game``,
    three counters, a flag."""
    return 8 * game.num_actions + 3 * 8 + 1


def decisions_per_episode(game: DrawGame, episode: str) -> int:
    """Decisions the teacher labels in an episode (``"hand"`` or ``"match"``), an upper estimate.

    A hand's decisions are bounded by every seat playing, drawing or passing once per tile that
    can leave the boneyard or a hand; the seeds' matches by the measured :data:`DECISIONS_PER_MATCH`.
    """
    hand = game.num_players * (game.num_tiles - game.protected + 1)
    if episode == "hand":
        return hand
    if game.is_default:
        return DECISIONS_PER_MATCH[game.num_players]
    return hand * VARIANT_MATCH_HANDS


def decision_bytes(features: str, game: DrawGame | None = None, obs_type: str = OBS_TYPES[0]) -> int:
    """Bytes a decision takes while an iteration is fitted: its row (int16 observation or
    information state, mask, float32 action values and outcome) twice (the window's parts and their
    concatenation), and the fit's float32 features and targets (``game``: the variant played,
    default the seeds')."""
    game = game or DrawGame(2)
    actions = game.num_actions
    row = 2 * observed_layout(game, obs_type).size + actions + 4 * actions + 4
    return 2 * row + 4 * input_size(features, game, obs_type) + 4 * actions


def search_nodes(simulations: int, trees: int, game: DrawGame | None = None) -> int:
    """The nodes ``trees`` searches of ``simulations`` reserve at once (in ``game``, default the seeds')."""
    actions = (game or DrawGame(2)).num_actions
    return SEARCH_NODES_PER_SIMULATION * (simulations + actions) * trees + 1


def _partner(spec: object) -> None:
    if spec != TEACHER:
        try:
            agent_spec(spec, policy_must_exist=True)
        except ValueError as error:
            raise ValueError(str(error).replace("must name agent specs", f"must name partners ('{TEACHER}' or agent specs)")) from None


class ExitConfig(VariantSettings, Evaluated):
    """Everything one expert-iteration run needs; see ``docs/training_exit.md`` for each key.

    The table and variant (``num_players``, ``max_pip``, ``hand_size``, ``protected``) are
    :class:`train.learner_config.VariantSettings`'.
    """

    pipeline: Literal["exit"] = "exit"
    episode: Literal["hand", "match"] = "match"
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
    obs_type: Literal[OBS_TYPES] = "observation"  # type: ignore[valid-type]
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
        game = self.game()
        node_bytes = search_node_bytes(game)
        trees = self.lockstep if self.guide == "tree" else 1  # guide: tree searches a shard's games at once
        searches = {
            ("simulations", "lockstep") if trees > 1 else ("simulations",): search_nodes(self.simulations, trees, game),
            ("plain_simulations",): search_nodes(self.plain_simulations, 1, game),
        }
        keys, nodes = max(searches.items(), key=lambda item: item[1])
        if nodes > MAX_INT:
            raise ConfigError(
                f"{config_keys(keys)} ask{'s' * (len(keys) == 1)} for a search of {nodes:,} nodes "
                f"({SEARCH_NODES_PER_SIMULATION} a simulation and {SEARCH_NODES_PER_SIMULATION * game.num_actions} more"
                f"{', for each game of a shard' * (trees > 1 and len(keys) > 1)}); the search numbers at most "
                f"{MAX_INT:,}: lower {' or '.join(keys)}"
            )
        check_memory(
            (*keys, "workers"),
            self.workers * nodes * node_bytes,
            f"{self.workers} worker{'s' * (self.workers > 1)}, each with a search of {nodes:,} nodes of "
            f"{node_bytes} bytes",
        )
        per_episode = decisions_per_episode(game, self.episode)
        decisions = self.window * self.matches * per_episode
        per_decision = decision_bytes(self.features, game, self.obs_type)
        check_memory(
            ("matches", "window"),
            decisions * per_decision,
            f"window * matches * about {per_episode} decisions a{'n' * (self.episode == 'hand')} {self.episode} "
            f"= {decisions:,} decisions fitted at once, {per_decision:,} bytes each",
        )
        return self

    @model_validator(mode="after")
    def _tree_guide_reads_observations(self) -> ExitConfig:
        """``guide: tree`` asks the network about positions inside the search, which are
        observations: a network of information states guides at the root only."""
        if self.obs_type == "information_state" and self.guide == "tree" and self.guided_from <= self.iterations:
            raise ConfigError(
                "config key 'guide' must be 'root' with obs_type: information_state (guide: tree asks the network "
                "about the search's positions, which are observations), got 'tree'"
            )
        return self

    @model_validator(mode="after")
    def _agents_play_the_variant(self) -> ExitConfig:
        """The partners and the evaluation's opponents play the variant."""
        self.check_variant_agents("partners", [name for name in self.partners if name != TEACHER], self.obs_type)
        self.check_variant_agents("eval.opponents", self.eval.opponents)
        return self

    @model_validator(mode="before")
    @classmethod
    def _replaced(cls, data: Any) -> Any:
        for key, what in REPLACED.items():
            if isinstance(data, dict) and key in data:
                raise ConfigError(f"config key {key!r} {what}")
        return data
