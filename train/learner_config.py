"""Settings of the pipelines that train one learner with MaskablePPO on learner games.

Self-play (:class:`train.selfplay.config.TrainConfig`) and the exploiter
(:class:`train.exploit.config.ExploitConfig`) both train on the batched learner view of
:mod:`train.vector_learner`; :class:`LearnerSettings` holds what they share, defined once: the
table, the games, the rewards, the features and the MaskablePPO hyper-parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, model_validator

from agents.inputs import OBS_TYPES, input_size
from arena.options import check_specs_play_variant, table_obs_type
from arena.specs import parse_agent_spec
from draw_env.features import FEATURES
from draw_env.rules import VARIANTS, DrawGame, Variant, reward_fits_episode, variant_numbers
from draw_env.tiles import MAX_PIP, MIN_PIP
from train.config import (
    BASELINES,
    PPO_RENAMED,
    ConfigError,
    PPOCoefficients,
    Section,
    Widths,
    check_memory,
    fail,
    integer,
    layer_widths,
    number,
    seed_field,
)

#: Opponent names with a special meaning in ``opponents``; every other name is an ``agents.make`` name.
SELF = "self"
SNAPSHOTS = "snapshots"
OPPONENT_NAMES = (SELF, SNAPSHOTS, *BASELINES)

#: Bytes a learner game takes, its state and its opponents' (measured: about 12 kB after reset).
GAME_BYTES = 16 * 1024
#: Scalars the rollout buffer keeps a decision beside its observation and mask (action, reward,
#: return, episode start, value, log-probability, advantage).
_ROLLOUT_SCALARS = 7


def decision_bytes(features: str, game: DrawGame | None = None, obs_type: str = OBS_TYPES[0]) -> int:
    """Bytes a rollout decision takes: float32 in SB3's rollout buffer, and again in its flattened copy
    (``game``: the variant played, default the seeds' game; ``obs_type``: what the learner reads)."""
    game = game or DrawGame(2)
    return 2 * 4 * (input_size(features, game, obs_type) + game.num_actions + _ROLLOUT_SCALARS)


#: How the magnet's coefficient moves over training (:func:`magnet_weight`).
MAGNET_SCHEDULES = ("constant", "linear", "sqrt")
#: What the policy is pulled towards: the uniform distribution over the legal actions, or a copy
#: of the policy network whose parameters trail the policy's.
MAGNETS = ("uniform", "moving_average")


class MagnetSettings(Section):
    """Magnetic mirror descent (Sokota et al., ICLR 2023): PPO's loss plus ``magnet_coef`` times
    ``KL(policy || magnet)`` over the legal actions, the same keys in every PPO learner; see the
    docs page "Training" (``docs/training.md``) for the equation. ``magnet_coef: 0`` (the default)
    is PPO's update unchanged."""

    magnet_coef: float = number(0.0, 0.0, 10.0)
    magnet_schedule: Literal[MAGNET_SCHEDULES] = "constant"  # type: ignore[valid-type]
    magnet: Literal[MAGNETS] = "uniform"  # type: ignore[valid-type]
    magnet_rate: float = number(0.05, 0.0, 1.0, low_open=True)


def magnet_weight(coef: float, schedule: str, update: int, updates: int) -> float:
    """The KL's coefficient in update ``update`` (0-based) of ``updates``: ``coef`` throughout
    (``constant``), falling linearly to 0 at the end (``linear``), or ``coef / sqrt(update + 1)``
    (``sqrt``: the paper's annealed temperature)."""
    if schedule == "linear":
        return coef * (1.0 - update / updates)
    if schedule == "sqrt":
        return coef / (update + 1) ** 0.5
    return coef


def exploitability_every_field() -> Any:
    """``exploitability_every``: environment steps between exact measures of the policy (0: none)."""
    return integer(0, 0)


def check_exploitability_every(every: int, game: DrawGame, episode: str = "hand") -> None:
    """Refuse, as one line, ``exploitability_every`` on a game with no enumerated tree (the exact
    measure needs 2 players and one hand; the tree's size is checked when the run builds it)."""
    if not every:
        return
    if game.num_players != 2 or episode != "hand":
        raise ConfigError(
            "config key 'exploitability_every' needs an exact game: 2 players and episode 'hand' "
            f"(got {game.num_players} players, episode {episode!r}); set it to 0"
        )


class PPOSettings(MagnetSettings, PPOCoefficients):
    """MaskablePPO hyper-parameters, under the project's PPO names (:data:`train.config.PPO_RENAMED`;
    :func:`train.sb3_adapter.make_maskable_ppo` gives them to sb3 under its own), and the magnet's
    (:class:`MagnetSettings`)."""

    renamed: ClassVar[Mapping[str, str]] = PPO_RENAMED["sb3"]

    learning_rate: float = number(3e-4, 0.0, 1.0, low_open=True)
    lr_schedule: Literal["constant", "linear"] = "constant"
    num_steps: int = integer(1024, 2)
    minibatch_size: int = integer(256, 2)
    update_epochs: int = integer(5, 1)
    net_arch: Widths = layer_widths([256, 256])
    activation: Literal["relu", "tanh"] = "relu"


class VariantSettings(Section):
    """The table and the variant a pipeline plays (the defaults: the seeds' game), held once for
    every pipeline that trains on variants (the learner pipelines and expert iteration).

    ``variant`` names a variant of :data:`draw_env.rules.VARIANTS` (``variant: mini``) instead of
    the three numbers, which then take its values; a number also given must be the variant's own."""

    num_players: Literal[2, 3, 4] = 2
    variant: str | None = Field(None, description=f"a named variant ({', '.join(VARIANTS)}) or null (the numbers)")
    max_pip: int = integer(6, MIN_PIP, MAX_PIP)
    hand_size: int | None = Field(None, ge=1, le=55, description="an integer in [1, 55], or null (the seeds' deal)")
    protected: int = integer(2, 0, 55)
    #: The game of the keys, built once when they are checked.
    _game: DrawGame = PrivateAttr()

    @model_validator(mode="before")
    @classmethod
    def _named_variant(cls, data: Any) -> Any:
        """``variant: NAME`` gives the three numbers; a number also given that is not the
        variant's is refused in one line naming both keys."""
        if not isinstance(data, Mapping) or data.get("variant") is None:
            return data
        given = {key: data[key] for key in Variant._fields if key in data}
        try:
            numbers = variant_numbers(data["variant"], given, {key: f"config key {key!r}" for key in ("variant", *given)})
        except ValueError as error:
            raise ConfigError(str(error)) from None
        return {**data, **numbers}

    @model_validator(mode="after")
    def _a_game(self) -> VariantSettings:
        """The keys make a game, else one line naming them."""
        try:
            self._game = DrawGame(self.num_players, self.max_pip, self.hand_size, self.protected)
        except ValueError as error:
            raise ConfigError(f"config keys max_pip, hand_size, protected: {error}") from None
        return self

    def game(self) -> DrawGame:
        """The variant played (the defaults: the seeds' game)."""
        return self._game

    def check_variant_agents(self, key: str, specs: Iterable[str], obs_type: str | None = None) -> None:
        """Refuse, as one line naming ``key``, an agent of ``specs`` that cannot play the variant,
        or that reads information states where the games give observations (``obs_type``; ``None``:
        games that give what their agents read, as evaluations do)."""
        try:
            parsed = [parse_agent_spec(spec) for spec in specs]
            check_specs_play_variant(parsed, self.game())
            table_obs_type(parsed, obs_type)
        except ValueError as error:
            raise ConfigError(f"config key {key!r}: {error}") from None


class LearnerSettings(VariantSettings):
    """The learner's games and its MaskablePPO: ``n_envs`` games in lockstep, one learner seat each."""

    seed: int = seed_field()
    n_envs: int = integer(2, 1)
    episode: Literal["hand", "match"] = "hand"
    reward: Literal["zero_sum", "points", "win_loss"] = "zero_sum"
    reward_scale: float = number(0.02, 0.0, 100.0, low_open=True)
    features: Literal[FEATURES] = "extended"  # type: ignore[valid-type]
    obs_type: Literal[OBS_TYPES] = "observation"  # type: ignore[valid-type]
    skip_forced: bool = True
    ppo: PPOSettings = Field(default_factory=PPOSettings)

    @property
    def value_unit(self) -> float | None:
        """Zero-sum hand points per unit of the learner's value network (its policy files record
        it): ``1 / reward_scale`` with ``zero_sum`` rewards; ``None`` for the other rewards, whose
        values are not zero-sum points."""
        return 1 / self.reward_scale if self.reward == "zero_sum" else None

    @model_validator(mode="after")
    def _ppo_run(self) -> LearnerSettings:
        """``win_loss`` only in matches, minibatches no larger than one rollout, and a rollout
        that fits in this machine's memory (:func:`train.config.check_memory`)."""
        game = self.game()  # a game: checked by VariantSettings first
        if not reward_fits_episode(self.reward, self.episode):
            raise fail("reward", "'zero_sum' or 'points' with episode 'hand' ('win_loss' needs episode 'match')", self.reward)
        if self.ppo.minibatch_size > self.ppo.num_steps * self.n_envs:
            raise fail("ppo.minibatch_size", f"at most ppo.num_steps * n_envs = {self.ppo.num_steps * self.n_envs}",
                       self.ppo.minibatch_size)
        per_decision = decision_bytes(self.features, game, self.obs_type)
        check_memory(
            ("n_envs", "ppo.num_steps"),
            self.n_envs * (GAME_BYTES + self.ppo.num_steps * per_decision),
            f"{self.n_envs:,} games of {GAME_BYTES // 1024} kB and a rollout of n_envs * ppo.num_steps = "
            f"{self.n_envs * self.ppo.num_steps:,} decisions of {per_decision:,} bytes",
        )
        return self
