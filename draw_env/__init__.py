"""Draw dominoes (double-six, 2 to 4 players) as a PettingZoo AEC environment.

``draw_env.env()`` is the environment with PettingZoo's standard protections; ``raw_env`` is
the bare one. The rules are in :mod:`draw_env.rules`, observations in
:mod:`draw_env.observation`, line descriptions in :mod:`draw_env.describe`.
"""

from draw_env import registration  # noqa: F401  (registers the PettingZoo and Gymnasium ids)
from draw_env.draw_dominoes import GuardedEnv, env, raw_env
from draw_env.rules import DRAW, NUM_ACTIONS, PASS, DrawGame, DrawState, IllegalActionError, PlayerView

__all__ = [
    "DRAW",
    "NUM_ACTIONS",
    "PASS",
    "DrawGame",
    "DrawState",
    "GuardedEnv",
    "IllegalActionError",
    "PlayerView",
    "env",
    "raw_env",
]
__version__ = "0.1.0"
