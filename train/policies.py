"""What a learner's ``train`` returns: a trained policy, of one of two kinds (a network, a table).

A policy answers batches of observations with action distributions (what the benchmark measures
and ``on_checkpoint`` receives) and saves itself in a project format, returning the agent spec
that ``draw-eval`` and ``draw-exploit`` play. A network policy plays its softmax over the legal actions (sampling), the distribution the
benchmark measures; its spec says so (``deterministic=false``), so that ``draw-eval`` and
``draw-exploit`` play the saved file as it was measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agents.policy_file import PolicyWeights
from agents.policy_network import NumpyPolicy
from agents.tabular import save_table
from draw_env.rules import DrawGame


class Game(Protocol):
    """The game a policy is saved for (a benchmark game, :class:`train.bench.protocol.BenchGame`):
    its rules, and whether it is small enough for a table over its whole tree."""

    @property
    def rules(self) -> DrawGame: ...

    @property
    def exact(self) -> bool: ...


@runtime_checkable
class Policy(Protocol):
    """A trained policy.

    A policy trained in another interpreter may also carry ``trained_versions`` (a mapping of
    library names to versions), which a benchmark cell's record keeps instead of this interpreter's.
    """

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Action distributions: observations float32 ``(k, L)`` and masks int8 ``(k, A)`` of the
        game's observation layout (``draw_env.observation.layout(game.rules)``; a policy whose
        ``obs_type`` attribute is ``"information_state"``: its information states) give float64
        ``(k, A)``, each row a distribution over its mask's legal actions."""
        ...

    def save(self, path_stem: Path, game: Game) -> str:
        """Write the policy in a project format beside ``path_stem`` (a network policy file, or on
        an exact game a table through :func:`agents.tabular.save_table`, ``path_stem`` + its
        suffix) and return the agent spec that ``draw-eval`` and ``draw-exploit`` take to play it
        (``tabular:path=...``, ``policy:path=...``)."""
        ...


class NetworkPolicy:
    """A policy network (:class:`agents.policy_network.NumpyPolicy`) playing its softmax."""

    def __init__(self, weights: PolicyWeights) -> None:
        self.network = NumpyPolicy(weights, deterministic=False)
        #: What the network reads (its weights'): what it is measured with.
        self.obs_type = weights.obs_type
        #: The library versions of the interpreter that trained it, where that is not this one
        #: (the cell's record keeps them instead of this interpreter's).
        self.trained_versions: dict[str, str | None] | None = None

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float64 ``(k, A)``: the softmax of the legal actions' logits of each row."""
        return self.network.probabilities_batch(observations, masks, deterministic=False)

    def save(self, path_stem: Path, game: Game) -> str:
        """``path_stem.npz`` and its ``.json`` record (a policy file); the ``network`` spec that
        samples from it."""
        self.network.check_game(game.rules)
        path = self.network.save(Path(path_stem).with_suffix(".npz"))
        return f"network:path={path},deterministic=false"


class TablePolicy:
    """A table from observations or information states (uint8 rows, ``obs_type``) to
    distributions: the exact solver's policy."""

    def __init__(
        self, observations: np.ndarray, probabilities: np.ndarray, about: dict[str, Any], obs_type: str = "observation"
    ) -> None:
        self.observations = observations.astype(np.uint8)
        self.probabilities = probabilities
        self.about = about
        self.obs_type = obs_type
        self._index = {row.tobytes(): i for i, row in enumerate(self.observations)}

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float64 ``(k, A)``: each row's distribution in the table.

        Raises:
            ValueError: for an observation that is not in the table.
        """
        rows = []
        for observation in np.asarray(observations).astype(np.uint8):
            row = self._index.get(observation.tobytes())
            if row is None:
                raise ValueError("an observation the table does not hold (another variant, or a match)")
            rows.append(row)
        return np.asarray(self.probabilities[rows], np.float64)

    def save(self, path_stem: Path, game: Game) -> str:
        """``path_stem.npz`` and its ``.json`` record (:func:`agents.tabular.save_table`); the
        ``tabular`` spec that plays it."""
        path = save_table(Path(path_stem).with_suffix(".npz"), game.rules, self.observations, self.probabilities,
                          self.about, self.obs_type)
        return f"tabular:path={path}"
