from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.data import Collector, CollectStats
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv

import draw_env

env = PettingZooEnv(draw_env.env(num_players=3))  # observations become {"agent_id", "obs", "mask"}
seats = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space) for _ in env.agents]
players = MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)  # one (masked) policy per seat
envs = DummyVectorEnv([lambda: PettingZooEnv(draw_env.env(num_players=3)) for _ in range(2)])
envs.seed(0)
stats = Collector[CollectStats](players, envs).collect(n_episode=10, reset_before_collect=True)
print(
    stats.n_collected_steps,
    "steps in",
    stats.n_collected_episodes,
    "hands; zero-sum returns:",
    stats.returns[0],
)
