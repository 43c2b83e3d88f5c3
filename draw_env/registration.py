"""Registry entries: the AEC environment in PettingZoo's registry, the single-agent view in Gymnasium's.

Importing :mod:`draw_env` runs this module, so after ``import draw_env``::

    pettingzoo.make("aec", "draw_env/draw_dominoes_v0", num_players=3)   # the AEC env (draw_env.env)
    gymnasium.make("DrawDominoes-v0", num_players=2)                    # one learner vs random opponents

Gymnasium also imports the module named before a colon, so ``gymnasium.make("draw_env:DrawDominoes-v0")``
needs no import at all. Both entry points are ``"module:attribute"`` strings, resolved only when an
environment is made: registering imports nothing but the two registries themselves.
"""

from __future__ import annotations

import gymnasium
import pettingzoo
from pettingzoo.env_registry.exceptions import PettingZooRegistryError

#: PettingZoo id (PettingZoo writes the version as ``-v0`` and accepts ``_v0``).
PETTINGZOO_ID = "draw_env/draw_dominoes_v0"
#: Gymnasium id of the single-agent adapter :class:`draw_env.single_agent.DrawSingleAgentEnv`.
GYMNASIUM_ID = "DrawDominoes-v0"

PETTINGZOO_ENTRY_POINT = "draw_env.draw_dominoes:env"
GYMNASIUM_ENTRY_POINT = "draw_env.single_agent:DrawSingleAgentEnv"


def register() -> None:
    """Add both entries; a second call changes nothing (no "overriding" warnings)."""
    if GYMNASIUM_ID not in gymnasium.registry:
        # No TimeLimit: a hand ends by the rules within at most a few hundred actions.
        gymnasium.register(id=GYMNASIUM_ID, entry_point=GYMNASIUM_ENTRY_POINT)
    try:
        pettingzoo.spec("aec", PETTINGZOO_ID)
    except PettingZooRegistryError:
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point=PETTINGZOO_ENTRY_POINT)


register()
