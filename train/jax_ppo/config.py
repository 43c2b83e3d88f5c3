"""The config of PPO in JAX (``draw-train`` with ``pipeline: jax_ppo``); see ``docs/jax_training.md``.

It imports without JAX: a config is checked before the heavy imports.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from agents.inputs import OBS_TYPES
from agents.policy_file import describe_variant
from train.config import (
    PPO_RENAMED,
    EvaluatedLearner,
    PPOCoefficients,
    Widths,
    fail,
    init_validator,
    integer,
    layer_widths,
    number,
    output_dir,
    seed_field,
)
from train.learner_config import (
    MagnetSettings,
    VariantSettings,
    check_exploitability_every,
    exploitability_every_field,
)

#: The opponents a game slot may seat, in the order of the trainer's opponent kinds (:mod:`train.jax_ppo.trainer`).
OPPONENTS = ("heaviest", "random", "self", "past")
#: The encoding the networks read (:mod:`draw_env.features`): the project's policy files record it.
FEATURES = "extended"
#: What the value network reads: the player's own view, or that and the full state (training only).
CRITICS = ("own", "central")


class JaxPPOConfig(VariantSettings, EvaluatedLearner, MagnetSettings, PPOCoefficients):
    """Everything one run of PPO in JAX needs; see ``docs/jax_training.md`` for each key.

    The table and variant (``num_players``, ``max_pip``, ``hand_size``, ``protected``) are
    :class:`train.learner_config.VariantSettings`' (the defaults: the seeds' game).

    ``num_envs`` games run side by side; each update plays ``num_steps`` actions in each (every
    seat's actions count as environment steps), then runs ``update_epochs`` passes over the learner's
    decisions in ``num_minibatches`` minibatches; ``updates`` in all, ``chunk`` of them in each
    jitted call (a progress line, and the periodic evaluation's grain). The magnet's keys
    (magnetic mirror descent) are :class:`train.learner_config.MagnetSettings`'.

    ``critic``: what the value network reads while training, ``own`` (what the policy reads: the
    acting player's observation or information state) or ``central`` (that and the full state:
    every hand and the boneyard in drawing order, :meth:`draw_env.jax.DrawDominoes.full_state`).
    The policy reads the player's own view either way, and the policy file holds it alone then.
    ``critic_warmup``: the first updates train the value network alone (the policy held), for a
    fresh critic beside a policy from ``init``; fewer than ``updates``.

    ``opponents``' ``past`` seats a past self: the pool holds up to ``past_pool`` frozen copies
    of the policy, the initial one first, a copy taken every ``past_every`` updates (the oldest
    replaced once it is full); each hand of a ``past`` slot draws one of them, uniformly.
    """

    renamed: ClassVar[Mapping[str, str]] = PPO_RENAMED["jax"]

    pipeline: Literal["jax_ppo"] = "jax_ppo"
    seed: int = seed_field()
    num_envs: int = integer(512, 1, 1 << 20)
    num_steps: int = integer(32, 1, 1 << 16)
    updates: int = integer(240, 1)
    chunk: int = integer(10, 1)
    update_epochs: int = integer(2, 1, 1000)
    num_minibatches: int = integer(4, 1)
    learning_rate: float = number(1e-3, 0.0, 1.0, low_open=True)
    reward_scale: float = number(0.05, 0.0, 100.0, low_open=True)
    hidden: Widths = layer_widths([128, 128])
    activation: Literal["relu", "tanh"] = "relu"
    obs_type: Literal[OBS_TYPES] = "observation"  # type: ignore[valid-type]
    critic: Literal[CRITICS] = "own"  # type: ignore[valid-type]
    opponents: list[Literal[OPPONENTS]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: ["heaviest", "heaviest", "random", "self"],
        min_length=1,
        description=f"a non-empty list of opponents ({', '.join(OPPONENTS)}), one per game slot, round robin",
    )
    init: str | None = Field(
        None,
        description="null (a fresh network) or the path of a policy file whose policy network has the "
        "run's shapes, to start from",
    )
    critic_warmup: int = integer(0, 0)
    past_pool: int = integer(8, 1, 64)
    past_every: int = integer(50, 1)
    fast_compile: bool = False
    output_dir: str = output_dir("runs/jax_ppo")
    progress_bar: bool = True
    exploitability_every: int = exploitability_every_field()

    evaluations: ClassVar[dict[str, dict[str, Any]]] = {
        "eval": {"every": 0, "matches": 100, "opponents": ["heaviest", "random"]},
        "final_eval": {"matches": 500, "opponents": ["heaviest", "random", "variety"]},
    }
    no_previous: ClassVar[str] = "PPO in JAX has no previous iteration"

    #: The keys of the run around the training (its folder, its evaluations, its output), which
    #: the trainer does not read: :meth:`training` leaves them out.
    RUN_KEYS: ClassVar[tuple[str, ...]] = (
        "pipeline", "fast_compile", "output_dir", "progress_bar", "eval", "final_eval", "exploitability_every",
    )

    def training(self) -> dict[str, Any]:
        """The settings the trainer reads (:mod:`train.jax_ppo.trainer`): every key but :attr:`RUN_KEYS`."""
        return {key: value for key, value in self.to_dict().items() if key not in self.RUN_KEYS}

    def variant_text(self) -> str:
        """`` (max_pip=3, hand_size=3, protected=3)`` for a variant, nothing for the seeds' game (titles)."""
        game = self.game()
        return "" if game.is_default else f" ({describe_variant(game)})"

    @property
    def value_unit(self) -> float:
        """Zero-sum hand points per unit of the value network (the rewards are zero-sum hand
        points times ``reward_scale``); its policy files record it."""
        return 1 / self.reward_scale

    @property
    def env_steps_per_update(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def sample_rows(self) -> int:
        """Rows of learner decisions an update trains on, a multiple of ``num_minibatches``.

        The learner acts in about 1/n of the steps (less its forced moves); 1.2/n leaves room.
        """
        share = min(1.0, 1.2 / self.num_players)
        per_minibatch = math.ceil(self.env_steps_per_update * share / self.num_minibatches)
        return min(per_minibatch, self.env_steps_per_update // self.num_minibatches) * self.num_minibatches

    @model_validator(mode="after")
    def _whole_chunks(self) -> JaxPPOConfig:
        """Updates in whole jitted chunks, evaluations between chunks, updates left after the critic's
        warm-up, a minibatch of at least one row."""
        if self.updates % self.chunk:
            raise fail("updates", f"a multiple of chunk ({self.chunk})", self.updates)
        every = self.eval.every
        if every and (not float(every).is_integer() or int(every) % self.chunk):
            raise fail("eval.every", f"a multiple of chunk ({self.chunk}) updates, or 0 (no periodic evaluation)", every)
        if self.critic_warmup >= self.updates:
            raise fail("critic_warmup", f"fewer than updates ({self.updates})", self.critic_warmup)
        if self.num_envs * self.num_steps < self.num_minibatches:
            raise fail("num_minibatches", f"at most num_envs * num_steps = {self.num_envs * self.num_steps}",
                       self.num_minibatches)
        return self

    @model_validator(mode="after")
    def _evaluations_play_the_variant(self) -> JaxPPOConfig:
        """The evaluations' opponents play the variant (the training's opponents are the trainer's
        JAX functions, which play every variant)."""
        self.check_variant_agents("eval.opponents", self.eval.opponents)
        self.check_variant_agents("final_eval.opponents", self.final_eval.opponents)
        return self

    _init_exists = init_validator()

    @model_validator(mode="after")
    def _init_fits(self) -> JaxPPOConfig:
        """``init``'s policy network reads and answers what this run's does, with its widths."""
        if self.init is None:
            return self
        from agents.inputs import input_size
        from agents.policy_network import load_policy

        try:
            weights = load_policy(self.init).weights
        except ValueError as error:
            raise fail("init", "a policy file", f"{self.init!r} ({error})") from None
        game = self.game()
        widths = [input_size(FEATURES, game, self.obs_type), *self.hidden, game.num_actions]
        found = [weights.policy[0][0].shape[1], *(layer[0].shape[0] for layer in weights.policy)]
        checks = (
            ("its features", weights.features, FEATURES),
            ("what it reads", weights.obs_type, self.obs_type),
            ("its activation", weights.activation, self.activation),
            ("its table and variant", describe_variant(weights.game), describe_variant(game)),
            ("its layer widths", found, widths),
        )
        for what, got, want in checks:
            if got != want:
                raise fail("init", f"a policy file whose {what} are this run's ({want})",
                           f"{self.init!r} with {got}")
        return self

    @model_validator(mode="after")
    def _exact_exploitability(self) -> JaxPPOConfig:
        check_exploitability_every(self.exploitability_every, self.game())
        return self
