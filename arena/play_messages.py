"""Every sentence ``draw-play`` (and ``draw-web``) says, in each language of ``--lang``.

The sentences are data: ``arena/play_messages.json`` maps a language, then a key, to a sentence
whose ``{fields}`` :func:`message` fills in. Tile names stay ``[a|b]``; the game's own words (the
ends, draw, pass, tiles) are the rules' :data:`draw_env.rules.WORDS`, which :mod:`arena.play`
uses for moves.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources

from draw_env.rules import DEFAULT_GAME, WORDS, DrawGame, DrawState, end_name

#: Language -> message key -> sentence (``str.format`` fields in braces).
MESSAGES: dict[str, dict[str, str]] = json.loads(
    resources.files("arena").joinpath("play_messages.json").read_text(encoding="utf-8")
)


def message(lang: str, key: str, **fields: object) -> str:
    """The sentence ``key`` in ``lang``, its ``{fields}`` filled in."""
    return MESSAGES[lang][key].format(**fields)


def summarise_turns(events: Sequence[tuple[int, int]], lang: str = "en", game: DrawGame = DEFAULT_GAME) -> list[str]:
    """Readable turns from ``(seat, action)`` events: consecutive draws by one seat are counted."""
    turns: list[str] = []
    draws = 0
    for index, (seat, action) in enumerate(events):
        who = f"player_{seat}"
        if action == game.draw_action:
            draws += 1
            following = events[index + 1] if index + 1 < len(events) else None
            if following is not None and following[0] == seat:
                continue  # the same turn goes on
            turns.append(message(lang, "drew", who=who, count=draws, tiles=_tiles(draws, lang)))
            draws = 0
        elif action == game.pass_action:
            turns.append(message(lang, "passed", who=who))
        else:
            end = end_name(action & 1, lang)
            key = "drew_then" if draws else "placed"
            turns.append(
                message(lang, key, who=who, count=draws, tiles=_tiles(draws, lang), tile=game.tiles.names[action >> 1], end=end)
            )
            draws = 0
    return turns


def _tiles(count: int, lang: str) -> str:
    return WORDS[lang]["tile_one" if count == 1 else "tile_many"]


def result_text(state: DrawState, lang: str = "en") -> str:
    """How the finished hand ``state`` ended, in ``lang``."""
    result = state.result
    assert result is not None
    if result.winner is None:
        return message(lang, "blocked_shared")
    key = "domino" if result.kind == "domino" else "blocked"
    return message(lang, key, who=f"player_{result.winner}", points=result.points[result.winner])
