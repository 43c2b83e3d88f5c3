"""The config of self-play MaskablePPO (``draw-train`` without ``pipeline``); see ``docs/training_selfplay.md``."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import field_validator, model_validator

from train.config import (
    ConfigError,
    EvaluatedLearner,
    fail,
    integer,
    opponent_weights,
    opponents_validator,
    output_dir,
)
from train.learner_config import (
    OPPONENT_NAMES,
    SELF,
    SNAPSHOTS,
    LearnerSettings,
    check_exploitability_every,
    exploitability_every_field,
)


class TrainConfig(LearnerSettings, EvaluatedLearner):
    """Everything one self-play run needs; see ``docs/training_selfplay.md`` for each key."""

    total_timesteps: int = integer(200_000, 1)
    vec_env: Literal["batched"] = "batched"
    opponents: dict[Any, Any] = opponent_weights(
        OPPONENT_NAMES, {SELF: 0.4, SNAPSHOTS: 0.2, "heaviest": 0.2, "variety": 0.2}
    )
    snapshot_every: int = integer(50_000, 1)
    snapshot_pool: int = integer(8, 1)
    checkpoint_every: int = integer(100_000, 1)
    output_dir: str = output_dir("runs/selfplay_2p")
    tensorboard: bool = True
    progress_bar: bool = True
    exploitability_every: int = exploitability_every_field()

    evaluations: ClassVar[dict[str, dict[str, Any]]] = {
        "eval": {"every": 50_000, "matches": 200, "opponents": ["heaviest", "variety"]},
        "final_eval": {"matches": 500, "opponents": ["heaviest", "variety", "random"]},
    }
    no_previous: ClassVar[str] = "self-play has no previous iteration"

    _opponents = opponents_validator(OPPONENT_NAMES)

    @model_validator(mode="after")
    def _whole_rollouts(self) -> TrainConfig:
        """The budget and the intervals at least one rollout: training runs whole rollouts of
        ``n_envs * ppo.num_steps`` steps, and the policy changes only between them."""
        rollout = self.n_envs * self.ppo.num_steps
        budgets = {
            "total_timesteps": (self.total_timesteps, "training runs whole rollouts"),
            "snapshot_every": (self.snapshot_every, "the policy changes once a rollout"),
            "checkpoint_every": (self.checkpoint_every, "the policy changes once a rollout"),
            "eval.every": (self.eval.every, "the policy changes once a rollout; 0 turns it off"),
            "exploitability_every": (self.exploitability_every, "the policy changes once a rollout; 0 turns it off"),
        }
        for key, (steps, why) in budgets.items():
            if 0 < steps < rollout:  # 0 only for eval.every and exploitability_every, which it turns off
                raise fail(key, f"at least one rollout, n_envs * ppo.num_steps = {rollout:,} steps ({why})", steps)
        if not float(self.eval.every).is_integer():
            raise fail("eval.every", "a whole number of timesteps (0 turns it off)", self.eval.every)
        return self

    @model_validator(mode="after")
    def _agents_play_the_variant(self) -> TrainConfig:
        """The opponents, in training and in evaluations, play the learner's variant."""
        self.check_variant_agents("opponents", [name for name in self.opponents if name not in (SELF, SNAPSHOTS)],
                                  self.obs_type)
        self.check_variant_agents("eval.opponents", self.eval.opponents)
        self.check_variant_agents("final_eval.opponents", self.final_eval.opponents)
        return self

    @model_validator(mode="after")
    def _exact_exploitability(self) -> TrainConfig:
        check_exploitability_every(self.exploitability_every, self.game(), self.episode)
        return self

    @field_validator("vec_env", mode="before")
    @classmethod
    def _removed(cls, value: object) -> object:
        if value in ("subproc", "dummy"):
            raise ConfigError(f"vec_env: {value} was removed; vec_env: batched (the default) replaces it")
        return value
