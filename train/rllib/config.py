"""The config of ``train/rllib_selfplay.py`` (the key names are RLlib's); see ``configs/rllib_selfplay.yaml``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from agents.inputs import OBS_TYPES
from draw_env.rules import reward_fits_episode
from train.config import (
    MAX_INT,
    Baselines,
    Section,
    Widths,
    baselines,
    fail,
    integer,
    layer_widths,
    number,
    opponent_weights,
    opponents_validator,
    output_dir,
    seed_field,
)
from train.learner_config import VariantSettings

#: Opponents of the RLlib script: the baselines ``integrations.rllib`` runs as RLlib modules.
RLLIB_OPPONENTS = ("self", "random", "random_forced", "heaviest", "variety")


class RLlibEnv(VariantSettings):
    """The env's table and variant (``num_players``, ``max_pip``, ``hand_size``, ``protected``:
    :class:`train.learner_config.VariantSettings`'), its episode and rewards."""

    episode: Literal["hand", "match"] = "hand"
    reward: Literal["zero_sum", "points", "win_loss"] = "zero_sum"
    reward_scale: float = number(0.02, 0.0, 100.0, low_open=True)
    obs_type: Literal[OBS_TYPES] = "observation"  # type: ignore[valid-type]


class RLlibEnvRunners(Section):
    num_env_runners: int = integer(1, 0)
    num_envs_per_env_runner: int = integer(4, 1)
    num_cpus_per_env_runner: int = integer(1, 1)


class RLlibPPO(Section):
    lr: float = number(3e-4, 0.0, 1.0, low_open=True)
    train_batch_size_per_learner: int = integer(4000, 1)
    gamma: float = number(1.0, 0.0, 1.0)
    lambda_: float = number(0.95, 0.0, 1.0)
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
    opponents: Baselines = baselines(["random", "heaviest", "variety"])
    num_games: int = Field(200, ge=0, le=MAX_INT, description="an integer >= 0 (0 skips the evaluation)")
    episode: Literal["hand", "match"] = "match"


class RLlibConfig(Section):
    """Everything one ``train/rllib_selfplay.py`` run needs; see ``configs/rllib_selfplay.yaml``."""

    seed: int = seed_field()
    iterations: int = integer(20, 1)
    env: RLlibEnv = Field(default_factory=RLlibEnv)
    learner_seats: int = integer(1, 1)
    opponents: dict[Any, Any] = opponent_weights(
        RLLIB_OPPONENTS, {"self": 0.4, "heaviest": 0.3, "variety": 0.2, "random": 0.1}
    )
    env_runners: RLlibEnvRunners = Field(default_factory=RLlibEnvRunners)
    ppo: RLlibPPO = Field(default_factory=RLlibPPO)
    model: RLlibModel = Field(default_factory=RLlibModel)
    evaluation: RLlibEvaluation = Field(default_factory=RLlibEvaluation)
    output_dir: str = output_dir("runs/rllib_selfplay")

    _opponents = opponents_validator(RLLIB_OPPONENTS)

    @model_validator(mode="after")
    def _consistent(self) -> RLlibConfig:
        if not reward_fits_episode(self.env.reward, self.env.episode):
            raise fail("env.reward", "'zero_sum' or 'points' with env.episode 'hand'", self.env.reward)
        if self.learner_seats > self.env.num_players:
            raise fail(
                "learner_seats", f"at most env.num_players ({self.env.num_players})", self.learner_seats
            )
        # The training opponents (RLLIB_OPPONENTS) play every variant; the evaluation's may not.
        self.env.check_variant_agents("evaluation.opponents", self.evaluation.opponents)
        return self
