"""The config of the hidden-tile model's training (``draw-train`` with ``pipeline: inference``);
see ``docs/inference.md``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from agents.hidden_tiles import DEFAULT_BALANCING, MAX_BALANCING
from draw_env.observation import layout
from draw_env.rules import DrawGame
from train.config import (
    ConfigError,
    Widths,
    agent_spec,
    check_memory,
    integer,
    layer_widths,
    number,
    output_dir,
    seed_field,
)
from train.learner_config import VariantSettings


def decisions_per_hand(game: DrawGame) -> int:
    """An upper bound of the decisions of a hand: every seat plays, draws or passes once per tile
    that can leave the boneyard or a hand."""
    return game.num_players * (game.num_tiles - game.protected + 1)


def decision_bytes(game: DrawGame) -> int:
    """Bytes a recorded decision takes: its int16 observation, int8 places and int32 game."""
    return 2 * layout(game).size + game.num_tiles + 4


class InferenceConfig(VariantSettings):
    """Everything one run of the hidden-tile model's training needs; see ``docs/inference.md``.

    The table and variant (``num_players``, ``max_pip``, ``hand_size``, ``protected``) are
    :class:`train.learner_config.VariantSettings`'.
    """

    pipeline: Literal["inference"] = "inference"
    seed: int = seed_field()
    policy: str = Field(
        "network", description="an agent spec that plays every seat, such as 'network' or 'ismcts:simulations=200'"
    )
    games: int = integer(20_000, 2)
    n_envs: int = integer(1_000, 1)
    validation: float = number(0.1, 0.0, 0.5, low_open=True)
    net_arch: Widths = layer_widths([256, 256])
    balancing: int = integer(DEFAULT_BALANCING, 0, MAX_BALANCING)
    epochs: int = integer(8, 1)
    batch_size: int = integer(512, 1)
    learning_rate: float = number(1e-3, 0.0, 1.0, low_open=True)
    weight_decay: float = number(0.01, 0.0, 1.0)
    output_dir: str = output_dir("runs/inference_2p")
    progress_bar: bool = True

    @field_validator("policy")
    @classmethod
    def _policy_spec(cls, value: str) -> str:
        agent_spec(value, policy_must_exist=True)
        return value

    @model_validator(mode="after")
    def _sizes(self) -> InferenceConfig:
        self.check_variant_agents("policy", [self.policy])
        if self.validation_games < 1 or self.validation_games >= self.games:
            raise ConfigError(
                f"config keys 'games' and 'validation' must hold out at least one game and train on at least "
                f"one, got games={self.games} and validation={self.validation} ({self.validation_games} held out)"
            )
        game = self.game()
        check_memory(("games",), self.games * decisions_per_hand(game) * decision_bytes(game),
                     f"at most {decisions_per_hand(game)} decisions a hand, {decision_bytes(game)} bytes each")
        return self

    @property
    def validation_games(self) -> int:
        """The games held out: the last ``validation`` share of them (rounded)."""
        return round(self.games * self.validation)
