import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

import agents
from agents.openspiel_bots import AgentBot
from draw_env import openspiel  # noqa: F401  (importing it registers python_draw_dominoes)

game = pyspiel.load_game("python_draw_dominoes(players=3)")
bots = [
    ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(), uct_c=2.0, max_simulations=20),  # OpenSpiel's
    AgentBot(agents.make("heaviest")),  # ours, as a pyspiel.Bot
    AgentBot(agents.make("variety")),
]
state, rng = game.new_initial_state(), np.random.default_rng(0)
while not state.is_terminal():
    if state.is_chance_node():  # the opener lottery, the deal tile by tile, every draw
        outcomes, probabilities = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(outcomes, p=probabilities)))
    else:
        state.apply_action(int(bots[state.current_player()].step(state)))
print("zero-sum points of ISMCTSBot, heaviest, variety:", state.returns())
