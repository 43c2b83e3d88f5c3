"""OpenSpiel's PyTorch DQN learns Draw in ``python_draw_dominoes`` through ``rl_environment``.

One DQN seat (OpenSpiel's ``open_spiel.python.pytorch.dqn.DQN``, masked to the legal actions,
on the 286-entry information state tensor) trains against OpenSpiel's uniform random agent,
then plays greedily against ``random`` and ``heaviest`` (our agents, seated through
``agents.openspiel_bots.AgentBot``) on the same seeded hands before and after training. For
reference, ``heaviest`` itself plays the same hands against the same opponents.

    .venv/bin/python examples/openspiel_dqn.py --episodes 2000 --eval-hands 300

The figures in docs/integrations.md come from that command (the defaults train longer).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

import numpy as np
import pyspiel
import torch
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import random_agent
from open_spiel.python.pytorch import dqn
from tqdm import tqdm

import agents
from agents.openspiel_bots import AgentBot
from draw_env import openspiel as draw_openspiel

LEARNER = 0


def make_learner(env: rl_environment.Environment, episodes: int, seed: int) -> dqn.DQN:
    """A DQN for seat 0: 256-256 MLP, Adam, Huber loss, epsilon decaying over the first 40%."""
    return dqn.DQN(
        player_id=LEARNER,
        state_representation_size=env.observation_spec()["info_state"][0],
        num_actions=env.action_spec()["num_actions"],
        hidden_layers_sizes=[256, 256],
        replay_buffer_capacity=50_000,
        batch_size=64,
        learning_rate=1e-3,
        update_target_network_every=500,
        learn_every=4,
        min_buffer_size_to_learn=500,
        epsilon_start=1.0,
        epsilon_end=0.05,
        epsilon_decay_duration=max(1, int(episodes * 0.4 * 15)),  # about 15 learner steps a hand
        optimizer_str="adam",
        loss_str="huber",
        huber_loss_parameter=10.0,
        seed=seed,
    )


def train(env: rl_environment.Environment, learner: dqn.DQN, episodes: int, progress: bool = True) -> None:
    opponent = random_agent.RandomAgent(player_id=1 - LEARNER, num_actions=env.action_spec()["num_actions"])
    seats = {LEARNER: learner, 1 - LEARNER: opponent}
    for _ in tqdm(range(episodes), desc="DQN vs random", disable=not progress, mininterval=2):
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = env.step([seats[player].step(time_step).action])
        learner.step(time_step)  # the final time step: the learner sees the hand's reward


def evaluate(
    game: pyspiel.Game, choose: Callable[[pyspiel.State], int], opponent: str, hands: int, seed: int
) -> tuple[float, float]:
    """Zero-sum points per hand of seat 0 played by ``choose``, and the share of hands it won."""
    bot = AgentBot(agents.make(opponent, seed=seed) if opponent == "random" else agents.make(opponent))
    points = []
    for hand in range(hands):
        chance = np.random.RandomState([seed, hand])  # hand k is dealt alike for every row
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes())
                state.apply_action(int(chance.choice(outcomes, p=probabilities)))
            elif state.current_player() == LEARNER:
                state.apply_action(choose(state))
            else:
                state.apply_action(bot.step(state))
        points.append(state.returns()[LEARNER])
    return float(np.mean(points)), float(np.mean(np.asarray(points) > 0))


def greedy(learner: dqn.DQN) -> Callable[[pyspiel.State], int]:
    """The learner's greedy action in a pyspiel state (``step(..., is_evaluation=True)``)."""

    def choose(state: pyspiel.State) -> int:
        observations = {
            "info_state": [state.information_state_tensor(seat) for seat in range(state.num_players())],
            "legal_actions": [state.legal_actions(seat) for seat in range(state.num_players())],
            "current_player": state.current_player(),
        }
        time_step = rl_environment.TimeStep(observations, None, None, rl_environment.StepType.MID)
        return int(learner.step(time_step, is_evaluation=True).action)

    return choose


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, tuple[float, float]]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20_000, help="training hands against random")
    parser.add_argument("--eval-hands", type=int, default=1000, help="evaluation hands per opponent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # a small MLP: more threads only wait for each other
    game = pyspiel.load_game(draw_openspiel.SHORT_NAME, {"players": 2})
    env = rl_environment.Environment(game, chance_event_sampler=rl_environment.ChanceEventSampler(args.seed))
    learner = make_learner(env, args.episodes, args.seed)
    heaviest = AgentBot(agents.make("heaviest"))
    results: dict[str, dict[str, tuple[float, float]]] = {}
    opponents = ("random", "heaviest")
    results["untrained DQN"] = {o: evaluate(game, greedy(learner), o, args.eval_hands, args.seed + 1) for o in opponents}
    start = time.perf_counter()
    train(env, learner, args.episodes, progress=not args.quiet)
    minutes = (time.perf_counter() - start) / 60
    results["trained DQN"] = {o: evaluate(game, greedy(learner), o, args.eval_hands, args.seed + 1) for o in opponents}
    results["heaviest (reference)"] = {o: evaluate(game, heaviest.step, o, args.eval_hands, args.seed + 1) for o in opponents}
    print(f"{args.episodes} training hands in {minutes:.1f} min; {args.eval_hands} evaluation hands per cell")
    print(f"{'seat 0':<22}" + "".join(f"{'vs ' + o + ' (pts/hand, won)':>32}" for o in opponents))
    for row, cells in results.items():
        print(f"{row:<22}" + "".join(f"{points:>+22.2f} {won:>8.1%}" for points, won in cells.values()))
    return results


if __name__ == "__main__":
    main()
