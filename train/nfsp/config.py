"""The config of NFSP (``draw-train`` with ``pipeline: nfsp``); see ``docs/training_nfsp.md``.

:class:`NfspSettings` holds NFSP's own keys (OpenSpiel's ``NFSP`` and its inner DQN's arguments)
and their defaults, defined once: the pipeline's config extends it, and the benchmark's NFSP
cells (:mod:`train.bench.openspiel_algorithms`) check their settings against it. It imports
without torch or OpenSpiel: a config is checked before the heavy imports.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import model_validator

from agents.inputs import input_size
from train.config import (
    EvaluatedLearner,
    Section,
    Widths,
    check_memory,
    fail,
    integer,
    layer_widths,
    number,
    output_dir,
    seed_field,
)
from train.learner_config import VariantSettings, check_exploitability_every, exploitability_every_field

#: The most transitions either buffer holds (each is preallocated as arrays when first filled).
MAX_BUFFER = 100_000_000


class NfspSettings(Section):
    """NFSP's keys (OpenSpiel's ``open_spiel.python.pytorch.nfsp.NFSP``; the defaults are
    OpenSpiel's Leduc poker values): the average network learns by cross-entropy from the
    reservoir of the best response's actions; the best response is a DQN over the replay buffer."""

    hidden_layers: Widths = layer_widths([128])
    reservoir_buffer_capacity: int = integer(200_000, 1, MAX_BUFFER)
    replay_buffer_capacity: int = integer(200_000, 1, MAX_BUFFER)
    anticipatory_param: float = number(0.1, 0.0, 1.0)
    batch_size: int = integer(128, 1, 1 << 20)
    rl_learning_rate: float = number(0.01, 0.0, 10.0, low_open=True)
    sl_learning_rate: float = number(0.01, 0.0, 10.0, low_open=True)
    min_buffer_size_to_learn: int = integer(1000, 0, MAX_BUFFER)
    learn_every: int = integer(64, 1)
    update_target_network_every: int = integer(1000, 1)
    epsilon_start: float = number(0.06, 0.0, 1.0)
    epsilon_end: float = number(0.001, 0.0, 1.0)
    epsilon_decay_duration: int = integer(1_000_000, 1)
    optimizer: Literal["sgd", "adam"] = "sgd"

    def nfsp_settings(self) -> dict[str, Any]:
        """This class's keys (what OpenSpiel's NFSP is given) and their values: the settings of
        :class:`train.bench.openspiel_algorithms.SpielConfig`."""
        return {key: getattr(self, key) for key in NfspSettings.model_fields}


def buffer_bytes(settings: NfspSettings, inputs: int, actions: int) -> int:
    """Bytes of the two buffers full: the reservoir holds an input vector (float32), the action's
    distribution and the legal mask; the replay buffer two input vectors, the mask and scalars."""
    reservoir = 4 * inputs + 16 * actions + 8
    replay = 8 * inputs + 8 * actions + 32
    return settings.reservoir_buffer_capacity * reservoir + settings.replay_buffer_capacity * replay


class NfspConfig(VariantSettings, EvaluatedLearner, NfspSettings):
    """Everything one NFSP run needs; see ``docs/training_nfsp.md`` for each key.

    The table and variant (``num_players``, ``variant`` or ``max_pip``, ``hand_size``,
    ``protected``) are :class:`train.learner_config.VariantSettings`'; ``episode`` is one hand
    or a match. The budget is ``env_steps``: decisions, the players' actions (the deal's and the
    draws' chance events are not counted). ``eval.every`` counts environment steps too.
    """

    pipeline: Literal["nfsp"] = "nfsp"
    seed: int = seed_field()
    episode: Literal["hand", "match"] = "hand"
    env_steps: int = integer(100_000, 1)
    exploitability_every: int = exploitability_every_field()
    output_dir: str = output_dir("runs/nfsp")
    progress_bar: bool = True

    evaluations: ClassVar[dict[str, dict[str, Any]]] = {
        "eval": {"every": 0, "matches": 100, "opponents": ["heaviest", "random"]},
        "final_eval": {"matches": 500, "opponents": ["heaviest", "random", "variety"]},
    }
    no_previous: ClassVar[str] = "NFSP has no previous iteration"

    @model_validator(mode="after")
    def _nfsp_run(self) -> NfspConfig:
        """Evaluations every whole number of decisions, of opponents that play the variant; an
        exact game for ``exploitability_every``; buffers that fit in this machine's memory."""
        game = self.game()
        if not float(self.eval.every).is_integer():
            raise fail("eval.every", "a whole number of decisions (0: no periodic evaluation)", self.eval.every)
        self.check_variant_agents("eval.opponents", self.eval.opponents)
        self.check_variant_agents("final_eval.opponents", self.final_eval.opponents)
        check_exploitability_every(self.exploitability_every, game, self.episode)
        inputs = input_size("scaled", game)
        check_memory(
            ("reservoir_buffer_capacity", "replay_buffer_capacity"),
            buffer_bytes(self, inputs, game.num_actions),
            f"transitions of {inputs} inputs and {game.num_actions} actions",
        )
        return self
