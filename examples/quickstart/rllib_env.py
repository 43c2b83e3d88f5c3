# Needs RLlib: run with .venv-rllib/bin/python (make integrations-env).
import numpy as np

from integrations.rllib import DrawMultiAgentEnv

env = DrawMultiAgentEnv({"num_players": 3, "reward_scale": 0.02})  # RLlib's MultiAgentEnv API
observations, infos = env.reset(seed=0)  # only the seat to act: {"observations", "action_mask"}
rng, totals, done = np.random.default_rng(0), {}, False
while not done:
    ((agent, observation),) = observations.items()
    action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
    observations, rewards, terminateds, truncateds, infos = env.step({agent: action})
    totals = {name: totals.get(name, 0.0) + reward for name, reward in rewards.items()}
    done = terminateds["__all__"]
print("hand over; scaled zero-sum rewards:", {name: round(value, 2) for name, value in totals.items()})
