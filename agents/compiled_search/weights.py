"""The weights of the weighted determinizations: a model of where the hidden tiles lie, asked
once per decision, as the table of log placements :func:`agents.compiled_search.deals.weighted_determinize`
reads; and the model's file, loaded with an error that names it.
"""

from __future__ import annotations

import os
import random
from typing import Protocol

import numpy as np

from agents.base import Observation
from agents.compiled_search.deals import BONEYARD_ROW
from draw_env import engine as E
from draw_env.observation import SEATS, observe_state
from draw_env.rules import DrawGame, PlayerView

#: Candidate deals drawn per determinization when a hidden-tile model weights them.
DEFAULT_CANDIDATES = 8
#: The most candidates: each is a state held at once while they are weighed.
MAX_CANDIDATES = 4096


class LocationModel(Protocol):
    """A model of where the hidden tiles lie (:func:`agents.hidden_tiles.load_hidden_tile_model` loads one)."""

    def location_probabilities(self, observation: np.ndarray) -> np.ndarray:
        """float64 ``(P + 1, T)`` from the observer's observation vector float32 ``(L,)``: row 0
        the observer's hand, row ``i`` the seat ``i`` places after it, row ``P`` the boneyard;
        columns in the set's tile order, each summing to 1."""
        ...


def load_location_model(path: str | os.PathLike[str], game: DrawGame | None = None) -> LocationModel:
    """The hidden-tile model in the file ``path`` (for ``game``, if given: a model recorded for
    another game is refused, naming its record and the field).

    Raises:
        ValueError: naming the file, if it cannot be read, is not such a model or is of another game.
    """
    # Imported on use: a search without a model never loads the model's code.
    from agents.hidden_tiles import load_hidden_tile_model

    try:
        return load_hidden_tile_model(path, game)
    except (OSError, ValueError) as error:
        raise ValueError(f"inference={os.fspath(path)}: {error}") from None


def observation_vector(source: PlayerView | Observation) -> np.ndarray:
    """The searcher's observation vector float32 ``(L,)``: an observation dict's, or the one a view's
    player has (of any deal the view allows: the vector shows nothing hidden)."""
    if isinstance(source, PlayerView):
        return observe_state(source.sample_state(random.Random(0)), source.player)
    return np.asarray(source["observation"], np.float32)


def log_placements(model: LocationModel, source: PlayerView | Observation, base: np.ndarray,
                   searcher: int) -> np.ndarray:
    """The log of ``model``'s probability of each place of each tile, float64 ``(SEATS + 1, MAX_TILES)``:
    row ``s`` is the absolute seat ``s`` of the search's state ``base`` (the model's rows are seats
    relative to ``searcher``), row :data:`~agents.compiled_search.deals.BONEYARD_ROW` the boneyard; a probability 0 is ``-inf``.

    Raises:
        ValueError: if the model is of another table size or set than ``base`` (a model that says
            its game), or its answer is not ``(P + 1, T)`` of finite probabilities.
    """
    n, num_tiles = int(base[E.S_NUM_PLAYERS]), int(base[E.S_NUM_TILES])
    game = getattr(model, "game", None)
    if isinstance(game, DrawGame) and (game.num_players, game.num_tiles) != (n, num_tiles):
        raise ValueError(f"the model is of {game.num_players} players and the double-{game.max_pip} set, "
                         f"this decision of {n} players and the double-{int(base[E.S_MAX_PIP])} set")
    probabilities = np.asarray(model.location_probabilities(observation_vector(source)), np.float64)
    if probabilities.shape != (n + 1, num_tiles) or not np.all(np.isfinite(probabilities) & (probabilities >= 0)):
        raise ValueError(f"a hidden-tile model must give ({n + 1}, {num_tiles}) probabilities (finite, >= 0) "
                         f"for this observation, got shape {probabilities.shape}")
    table = np.zeros((SEATS + 1, E.MAX_TILES), np.float64)
    with np.errstate(divide="ignore"):
        logs = np.log(probabilities)
    for relative in range(n):
        table[(searcher + relative) % n, :num_tiles] = logs[relative]
    table[BONEYARD_ROW, :num_tiles] = logs[n]
    return table


def weighting(model: LocationModel | None, candidates: int, source: PlayerView | Observation, base: np.ndarray,
              searcher: int, model_file: str | os.PathLike[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~agents.compiled_search.deals.weighted_determinize`'s ``(log_place, candidates)`` for one decision: without a model
    or with one candidate, a single row of candidates (the uniform sampler, the model not asked).

    Raises:
        ValueError: as :func:`log_placements`, naming ``model_file`` (``inference=PATH: ...``) if given.
    """
    if model is None or candidates <= 1:
        return np.zeros((SEATS + 1, E.MAX_TILES), np.float64), np.zeros((1, base.shape[0]), np.int64)
    try:
        log_place = log_placements(model, source, base, searcher)
    except ValueError as error:
        if model_file is None:
            raise
        raise ValueError(f"inference={os.fspath(model_file)}: {error}") from None
    return log_place, np.zeros((candidates, base.shape[0]), np.int64)
