"""How good are each policy's decisions, judged by a long search?

Positions come from fresh collection matches of a distillation config (shard numbers after the
ones it trains on, so no policy has seen them; each shard one match). Each is searched once by a long ``ismcts``
(``--reference`` simulations) as the judge; every policy then picks its action, and its *regret*
is the judge's value of the best action minus that of the policy's choice, in hand points. The
200-simulation search the distillation learns from (the compiled ``ismcts``) is the reference row: the ratio column is
each policy's regret over it.

    .venv/bin/python benchmarks/decision_quality.py --positions 600 --reference 1600

The breakdown by boneyard size and the share of voluntary draws show where the policies differ.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.ismcts import REWARD_SCALE, ISMCTSAgent
from agents.policy_network import NetworkAgent
from draw_env.observation import OFFSETS, view_from_observation
from draw_env.rules import DRAW
from train.config import load
from train.exit.collect import ShardTask, play_shard
from train.exit.config import ExitConfig
from train.exit.fit import initial_weights

POLICIES = {
    "distilled (agents/policies/ppo_2p.npz)": "agents/policies/ppo_2p.npz",
    "self-play (agents/policies/ppo_2p_selfplay.npz)": "agents/policies/ppo_2p_selfplay.npz",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/distill_2p.yaml", help="the distillation config")
    parser.add_argument("--positions", type=int, default=600, help="positions to judge")
    parser.add_argument("--reference", type=int, default=1600, help="the judge's simulations")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    config = load(ExitConfig, args.config, ["plain_simulations=200", "guided_from=2"])
    weights = initial_weights(config)  # iteration 1 searches without the network
    rng = np.random.default_rng(args.seed)

    observations, masks, teacher_values = [], [], []
    shard = config.matches + 10_000 * (args.seed + 1)
    while len(observations) < args.positions:
        decisions = play_shard(ShardTask(config, weights, 1, shard, 1))
        shard += 1
        # A few positions per match, spread over the match, so no single match dominates.
        for row in rng.choice(len(decisions), size=min(8, len(decisions)), replace=False):
            observations.append(decisions.observations[row])
            masks.append(decisions.masks[row])
            teacher_values.append(decisions.values[row])
    observations, masks = observations[: args.positions], masks[: args.positions]

    judged = []
    for index, vector in enumerate(observations):
        judge = ISMCTSAgent(simulations=args.reference, seed=args.seed * 1_000_003 + index)
        values = judge.action_values(view_from_observation(vector.astype(np.float32), config.num_players))
        judged.append({action: value * REWARD_SCALE for action, value in values.items()})

    choosers = {"ismcts, 200 simulations (the teacher)": None}
    choosers.update({label: NetworkAgent(path=path) for label, path in POLICIES.items()})
    boneyard = np.array([vector[OFFSETS["boneyard_size"]] for vector in observations])
    groups = {
        "all": boneyard >= 0,
        "boneyard >= 7": boneyard >= 7,
        "boneyard 3-6": (boneyard >= 3) & (boneyard <= 6),
        "boneyard <= 2": boneyard <= 2,
    }
    results = {}
    for label, agent in choosers.items():
        regrets, draws = [], []
        for index, (vector, mask) in enumerate(zip(observations, masks)):
            legal = np.flatnonzero(mask)
            if agent is None:
                action = int(legal[np.argmax(teacher_values[index][legal])])
            else:
                action = agent.act(
                    {"observation": vector.astype(np.float32), "action_mask": mask.astype(np.int8)}
                )
            values = judged[index]
            regrets.append(max(values.values()) - values[action])
            draws.append(action == DRAW if mask[DRAW] else np.nan)
        results[label] = (np.array(regrets), np.array(draws, float))

    reference = results["ismcts, 200 simulations (the teacher)"][0].mean()
    print(
        f"{len(observations)} positions from fresh matches, judged by ismcts with {args.reference} simulations"
    )
    header = (
        f"{'policy':<50} {'regret (points)':>16} {'ratio':>6} "
        + " ".join(f"{name:>14}" for name in list(groups)[1:])
        + f" {'draws':>7}"
    )
    print(header)
    print("-" * len(header))
    for label, (regrets, draws) in results.items():
        by_group = " ".join(f"{regrets[selection].mean():>14.2f}" for selection in list(groups.values())[1:])
        print(
            f"{label:<50} {regrets.mean():>16.2f} {regrets.mean() / reference:>6.2f} {by_group} {np.nanmean(draws):>7.1%}"
        )
    print(
        "Groups: mean regret by boneyard size (counts: "
        + ", ".join(f"{name} {int(selection.sum())}" for name, selection in list(groups.items())[1:])
        + ")."
    )
    print("draws: share of the decisions where drawing was allowed in which the policy drew.")


if __name__ == "__main__":
    main()
