"""The hidden-tile model's data: games on the batched environment, one policy at every seat.

Every decision is recorded as the acting seat's observation (the AEC vector,
:func:`draw_env.observation.layout`) and the true place of every tile, read from the engine
state, in the rows of :mod:`agents.hidden_tiles` relative to that seat: 0 its own hand, ``i``
the seat ``i`` places after it, ``P`` the boneyard, and -1 for a tile on the line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.batched import BatchActor, batch_actor
from arena.specs import parse_agent_spec, seed_sequence_int
from draw_env import engine
from draw_env.rules import DrawGame
from draw_env.vector import DrawVectorEnv
from train.inference.config import InferenceConfig

#: The place of a tile on the line in :attr:`Decisions.places`.
ON_THE_LINE = -1


@dataclass
class Decisions:
    """Recorded decisions, one row each.

    Attributes:
        observations: int16 ``(n, L)``, the acting seat's observation (its entries are small integers).
        places: int8 ``(n, T)``, each tile's row relative to the acting seat, :data:`ON_THE_LINE` on the line.
        games: int32 ``(n,)``, the game (hand) each decision belongs to, ``0..games-1``.
    """

    observations: np.ndarray
    places: np.ndarray
    games: np.ndarray

    def __len__(self) -> int:
        return len(self.games)

    def select(self, rows: np.ndarray) -> Decisions:
        return Decisions(self.observations[rows], self.places[rows], self.games[rows])


def true_places(game: DrawGame, states: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """int8 ``(k, T)``: where each tile lies in the engine ``states`` ``(k, S)``, in rows relative
    to ``seats`` ``(k,)`` (:class:`Decisions`)."""
    players, tiles = game.num_players, game.num_tiles
    bits = np.arange(tiles, dtype=np.int64)
    hands = (states[:, engine.S_HANDS : engine.S_HANDS + players, None] >> bits) & 1  # (k, P, T)
    line = (states[:, engine.S_LINE_MASK, None] >> bits) & 1
    relative = (np.arange(players)[None, :] - seats[:, None]) % players  # (k, P): row of each absolute seat
    places = np.full((len(states), tiles), players, np.int8)
    held = hands.any(axis=1)
    holder = hands.argmax(axis=1)
    places[held] = np.take_along_axis(relative, holder, axis=1)[held]
    places[line.astype(bool)] = ON_THE_LINE
    return places


def collect(config: InferenceConfig) -> Decisions:
    """Play ``config.games`` hands, ``n_envs`` at a time, ``config.policy`` at every seat: every
    decision of every hand. Seeded by ``config.seed`` alone."""
    from tqdm import tqdm

    game = config.game()
    name, kwargs = parse_agent_spec(config.policy)
    actor = batch_actor(name, kwargs, game.num_players, seed=seed_sequence_int(config.seed, 1))
    parts: list[Decisions] = []
    with tqdm(total=config.games, desc="play", unit="hand", disable=not config.progress_bar,
              dynamic_ncols=True) as bar:
        for first in range(0, config.games, config.n_envs):
            count = min(config.n_envs, config.games - first)
            parts.extend(_play(game, actor, count, first, seed_sequence_int(config.seed, 0, first)))
            bar.update(count)
    fields = ("observations", "places", "games")
    return Decisions(*(np.concatenate([getattr(part, field) for part in parts]) for field in fields))


def _play(game: DrawGame, actor: BatchActor, count: int, first: int, seed: int) -> list[Decisions]:
    """The decisions of ``count`` hands (games ``first..``) played in lockstep, step by step."""
    env = DrawVectorEnv(count, game.num_players, "hand", autoreset=False, max_pip=game.max_pip,
                        hand_size=game.hand_size, protected=game.protected)
    out = env.reset(seed=seed)
    finished = np.zeros(count, bool)
    steps: list[Decisions] = []
    while not finished.all():
        live = np.flatnonzero(~finished)
        seats = out.current_player[live].astype(np.int64)
        steps.append(Decisions(
            out.observation[live].astype(np.int16),
            true_places(game, env.states[live], seats),
            (first + live).astype(np.int32),
        ))
        actions = np.zeros(count, np.int64)
        actions[live] = actor.act_batch(out.observation[live], out.action_mask[live])
        out = env.step(actions)
        finished |= out.terminated
    return steps
