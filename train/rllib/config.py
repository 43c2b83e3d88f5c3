"""The config of ``train/rllib_selfplay.py``; see ``configs/rllib_selfplay.yaml``.

The ``ppo`` section takes the project's PPO names (:data:`train.config.PPO_RENAMED`);
:meth:`RLlibPPO.rllib_training` gives them to RLlib under its own. The other sections keep RLlib's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from agents.inputs import OBS_TYPES
from draw_env.rules import reward_fits_episode
from train.config import (
    MAX_INT,
    PPO_RENAMED,
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
    ppo_coefficient,
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

    @property
    def value_unit(self) -> float | None:
        """Zero-sum hand points per unit of the learner's value network: ``1 / reward_scale`` with
        ``zero_sum`` rewards, ``None`` otherwise (as :attr:`train.learner_config.LearnerSettings.value_unit`)."""
        return 1 / self.reward_scale if self.reward == "zero_sum" else None


class RLlibEnvRunners(Section):
    num_env_runners: int = integer(1, 0)
    num_envs_per_env_runner: int = integer(4, 1)
    num_cpus_per_env_runner: int = integer(1, 1)


class RLlibPPO(Section):
    """RLlib's PPO, under the project's PPO names; ``batch_size``: the env steps of one update."""

    renamed: ClassVar[Mapping[str, str]] = PPO_RENAMED["rllib"]

    learning_rate: float = number(3e-4, 0.0, 1.0, low_open=True)
    batch_size: int = integer(4000, 1)
    gamma: float = ppo_coefficient("gamma")
    gae_lambda: float = ppo_coefficient("gae_lambda")
    minibatch_size: int = integer(256, 1)
    update_epochs: int = integer(6, 1)
    ent_coef: float = ppo_coefficient("ent_coef")
    vf_coef: float = ppo_coefficient("vf_coef")
    clip_coef: float = ppo_coefficient("clip_coef")

    #: RLlib's name of each key (``PPOConfig.training``'s arguments).
    RLLIB_NAMES: ClassVar[Mapping[str, str]] = {new: old for old, new in PPO_RENAMED["rllib"].items()}

    @classmethod
    def rllib_training(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments of RLlib's ``PPOConfig.training`` for the ``ppo`` section ``settings``
        (a :meth:`to_dict`, as the RLlib run passes its config)."""
        return {cls.RLLIB_NAMES.get(key, key): value for key, value in settings.items()}


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
