"""The config of the exact solver (``draw-train`` with ``pipeline: cfr``); see ``docs/exploitability.md``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from agents.inputs import OBS_TYPES
from draw_env.rules import DrawGame
from draw_env.tiles import MAX_PIP, MIN_PIP
from train.config import integer, number, output_dir
from train.learner_config import VariantSettings

#: The default variant, ``mini`` (the numbers given, ``variant: NAME``, choose another).
_MINI = DrawGame.named("mini")
if TYPE_CHECKING:
    from train.cfr.solver import Rule


class CfrConfig(VariantSettings):
    """A CFR variant (``algorithm``: :data:`train.cfr.solver.ALGORITHMS`; DCFR's discounts
    ``dcfr_alpha``, ``dcfr_beta``, ``dcfr_gamma``) on one hand of a small 2-player variant (the
    defaults: ``mini``, double-three, three tiles each, three protected), for a budget of CPU time or iterations; :meth:`game` is the
    variant solved. ``obs_type``: what the table it writes is keyed by; with
    ``"information_state"`` the solution is the seats' strategies mixed into one policy
    (:func:`train.cfr.solver.symmetric_strategies`), which the table plays exactly."""

    pipeline: Literal["cfr"] = "cfr"
    num_players: Literal[2] = 2
    max_pip: int = integer(_MINI.max_pip, MIN_PIP, MAX_PIP)
    hand_size: int = integer(_MINI.hand_size, 1, 55)
    protected: int = integer(_MINI.protected, 0, 55)
    # The names of train.cfr.solver.ALGORITHMS, written out: a config is read without numba. DCFR
    # reaches a given exploitability first on mini (docs/exploitability.md, benchmarks/cfr_algorithms.py).
    algorithm: Literal["cfr_plus", "pcfr_plus", "dcfr"] = "dcfr"
    # tree: the stored game tree (train.cfr.solver); streaming: the information states only, the
    # histories walked again each iteration (train.cfr.streaming_solver), for a tree too large.
    method: Literal["tree", "streaming"] = "tree"
    dcfr_alpha: float = number(1.5, 0.0, 100.0)
    dcfr_beta: float = number(0.0, -100.0, 100.0)
    dcfr_gamma: float = number(2.0, 0.0, 100.0)
    iterations: int = integer(100_000, 1, 10**9)
    cpu_minutes: float = number(30.0, 0.0, 100_000.0, low_open=True)
    target: float = number(0.0, 0.0, 1_000.0)
    checkpoint_minutes: float = number(2.0, 0.0, 10_000.0, low_open=True)
    max_memory_gib: float = number(4.0, 0.0, 1024.0, low_open=True)
    obs_type: Literal[OBS_TYPES] = "observation"  # type: ignore[valid-type]
    output_dir: str = output_dir("runs/cfr_mini")
    progress_bar: bool = True

    def rule(self) -> Rule:
        """The solver's update rule."""
        from train.cfr.solver import Rule

        return Rule(self.algorithm, self.dcfr_alpha, self.dcfr_beta, self.dcfr_gamma)
