"""Train a masked DQN on Draw dominoes with Tianshou: ``PettingZooEnv`` and a multi-agent algorithm.

Tianshou's ``PettingZooEnv`` turns the AEC env's ``{"observation", "action_mask"}`` into
``{"agent_id", "obs", "mask"}``; its DQN policy (``DiscreteQLearningPolicy``) reads ``obs.mask``,
so it never picks an illegal action, in training as in exploration. The learner sits in one seat
(``player_0``) against uniformly random legal play (Tianshou's masked random algorithm) in the
others; ``MultiAgentOffPolicyAlgorithm`` hands each seat its own transitions.

Run (prints the learner's mean hand reward against random before and after, and the speed)::

    .venv/bin/python examples/tianshou_masked_dqn.py --epochs 4 --steps-per-epoch 10000
"""

from __future__ import annotations

import argparse
import logging
import time
from dataclasses import dataclass

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, InfoStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import draw_env
from draw_env.observation import HIGH, OBSERVATION_SIZE
from draw_env.rules import NUM_ACTIONS

LEARNER_SEAT = 0
# Tianshou warns on every collect that multi-agent returns (episodes x seats) are not 1-D.
logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)


def make_env(num_players: int = 2) -> PettingZooEnv:
    """One hand per episode; Tianshou reports every seat's ``zero_sum`` reward each step."""
    return PettingZooEnv(draw_env.env(num_players=num_players))


class ScaledNet(Net):
    """Tianshou's MLP, fed the observation (batch, 258) divided by ``HIGH`` (values in [0, 1])."""

    def __init__(self, hidden_sizes: tuple[int, ...]) -> None:
        super().__init__(state_shape=OBSERVATION_SIZE, action_shape=NUM_ACTIONS, hidden_sizes=hidden_sizes)
        self.register_buffer("high", torch.as_tensor(HIGH))

    def forward(self, obs, state=None, info=None):  # noqa: ANN001, ANN201  (Tianshou's signature)
        return super().forward(torch.as_tensor(obs, dtype=torch.float32) / self.high, state, info)


def build_algorithm(env: PettingZooEnv, lr: float = 1e-3, hidden: int = 128) -> MultiAgentOffPolicyAlgorithm:
    """Masked DQN in :data:`LEARNER_SEAT`, masked random play in every other seat."""
    policy = DiscreteQLearningPolicy(
        model=ScaledNet((hidden, hidden)),
        action_space=env.action_space,
        eps_training=0.2,
        eps_inference=0.0,
    )
    learner = DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=lr),
        gamma=1.0,  # one reward at the end of the hand: nothing to discount
        # Longer than any hand, so every target is the learner's own end-of-hand reward, even when
        # an opponent made the last move (a 1-step target would only see the hands it ended itself).
        n_step_return_horizon=100,
        target_update_freq=200,
        huber_loss_delta=10.0,  # rewards are hand points, up to +-168: keep outliers' gradients bounded
    )
    seats = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space) for _ in env.agents]
    seats[LEARNER_SEAT] = learner
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)


@dataclass
class RunStats:
    """The learner's mean ``zero_sum`` hand reward against random before and after training, over
    ``test_hands`` hands each; Tianshou's own account of the training (``training``: the env steps
    collected, the gradient steps, their times) and this process's CPU time in it."""

    reward_before: float
    reward_after: float
    test_hands: int
    training: InfoStats
    train_cpu_seconds: float

    @property
    def env_steps(self) -> int:
        return self.training.train_step

    @property
    def steps_per_second(self) -> float:
        """Env steps collected per second of the training's wall-clock time, updates included."""
        return self.training.train_step / self.training.timing.total_time


def _learner_reward(
    algorithm: MultiAgentOffPolicyAlgorithm, hands: int, num_players: int, seed: int
) -> float:
    """Mean learner reward per hand, greedy (``eps_inference=0``), on ``hands`` seeded hands."""
    envs = DummyVectorEnv([lambda: make_env(num_players) for _ in range(2)])
    envs.seed(seed)
    collector = Collector[CollectStats](algorithm, envs)
    stats = collector.collect(n_episode=hands, reset_before_collect=True)
    envs.close()
    return float(np.mean(stats.returns[:, LEARNER_SEAT]))


def train(
    num_players: int = 2, epochs: int = 2, steps_per_epoch: int = 5000, test_hands: int = 200, seed: int = 0
) -> RunStats:
    """A short masked-DQN run with Tianshou's off-policy trainer; returns :class:`RunStats`."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    algorithm = build_algorithm(make_env(num_players))
    before = _learner_reward(algorithm, test_hands, num_players, seed + 1)
    train_envs = DummyVectorEnv([lambda: make_env(num_players) for _ in range(4)])
    train_envs.seed(seed)
    train_collector = Collector[CollectStats](
        algorithm, train_envs, VectorReplayBuffer(20_000, len(train_envs)), exploration_noise=True
    )
    start_cpu = time.process_time()
    training = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            test_collector=None,
            max_epochs=epochs,
            epoch_num_steps=steps_per_epoch,
            collection_step_num_env_steps=40,
            update_step_num_gradient_steps_per_sample=0.25,
            batch_size=64,
            multi_agent_return_reduction=lambda returns: returns[:, LEARNER_SEAT],
            show_progress=True,
            test_in_training=False,
        )
    )
    cpu_seconds = time.process_time() - start_cpu
    train_envs.close()
    after = _learner_reward(algorithm, test_hands, num_players, seed + 1)
    return RunStats(before, after, test_hands, training, cpu_seconds)


def main(argv: list[str] | None = None) -> RunStats:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps-per-epoch", type=int, default=5000, help="env steps collected per epoch")
    parser.add_argument("--test-hands", type=int, default=200, help="hands to measure the learner on")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # a small MLP: more threads only contend for the cores
    stats = train(args.num_players, args.epochs, args.steps_per_epoch, args.test_hands, args.seed)
    print(
        f"Tianshou masked DQN, {args.num_players} players: {stats.env_steps} env steps in "
        f"{stats.training.timing.total_time:.1f} s ({stats.steps_per_second:,.0f} env steps/s, "
        f"{stats.env_steps / stats.train_cpu_seconds:,.0f} per CPU-second, updates included)\n"
        f"learner zero_sum reward per hand vs random over {stats.test_hands} hands: "
        f"{stats.reward_before:+.2f} before, {stats.reward_after:+.2f} after"
    )
    return stats


if __name__ == "__main__":
    main()
