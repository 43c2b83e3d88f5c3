from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType

import draw_env

env = PettingZooWrapper(
    draw_env.env(num_players=3),
    use_mask=True,  # AEC: one seat acts per step, ("agents", "mask") says which
    group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,  # one group "agents" holding every seat
    seed=0,
)
rollout = env.rollout(200, break_when_any_done=False)  # random actions drawn within each mask
acting = rollout["agents", "mask"]
legal = rollout["agents", "action_mask"][acting].gather(-1, rollout["agents", "action"][acting][:, None])
info_keys = sorted(rollout["agents", "info"].keys())
print(rollout.batch_size, "steps, all legal:", bool(legal.all()), "info keys:", info_keys)
