"""Draw dominoes as an OpenSpiel game: ``pyspiel.load_game("python_draw_dominoes")``.

Importing this package (it needs the ``openspiel`` extra) registers the game with pyspiel, and
routes ``pyspiel.serialize_game_and_state`` and ``pyspiel.deserialize_game_and_state`` through
:mod:`draw_env.openspiel.serialization`, so that this game's strings are read as histories and
never unpickled (other games' strings still go to OpenSpiel). The game and its states are in
:mod:`draw_env.openspiel.game`, what a seat observes in :mod:`draw_env.openspiel.observer`;
``docs/integrations.md`` (OpenSpiel) describes them.
"""

from __future__ import annotations

import pyspiel

from draw_env.openspiel.game import (
    MAX_MATCH_HANDS,
    PARAMETERS,
    SHORT_NAME,
    DrawDominoesGame,
    DrawDominoesState,
    deal_actions,
    game_type,
    max_hand_length,
)
from draw_env.openspiel.observer import DrawDominoesObserver
from draw_env.openspiel.serialization import deserialize_game_and_state, serialize_game_and_state

__all__ = [
    "MAX_MATCH_HANDS",
    "PARAMETERS",
    "SHORT_NAME",
    "DrawDominoesGame",
    "DrawDominoesObserver",
    "DrawDominoesState",
    "deal_actions",
    "deserialize_game_and_state",
    "max_hand_length",
    "serialize_game_and_state",
]

pyspiel.register_game(game_type(PARAMETERS["reward"], PARAMETERS["episode"]), DrawDominoesGame)
pyspiel.serialize_game_and_state = serialize_game_and_state
pyspiel.deserialize_game_and_state = deserialize_game_and_state
