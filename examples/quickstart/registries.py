import gymnasium
import numpy as np
import pettingzoo

import draw_env  # noqa: F401  (importing it registers both ids)

aec = pettingzoo.make("aec", "draw_env/draw_dominoes_v0", num_players=3)  # = draw_env.env(num_players=3)
aec.reset(seed=0)
single = gymnasium.make("DrawDominoes-v0", num_players=2)  # one learner vs random legal opponents
observation, info = single.reset(seed=0)
legal = single.get_wrapper_attr("action_masks")()  # bool (58,), for MaskablePPO
observation, reward, terminated, truncated, info = single.step(int(np.flatnonzero(legal)[0]))
# The learner sees the "extended" encoding of draw_env.features: 340 floats in [0, 1]
# (the 258-entry observation scaled, the mask, and 24 counts a player could compute).
print(aec.agent_selection, "to act;", "learner observation", observation.shape, "reward", reward)
