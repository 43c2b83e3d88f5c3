"""Every sentence ``draw-play`` says, in each language of ``--lang``.

The sentences are data: ``arena/play_messages.json`` maps a language, then a key, to a sentence
whose ``{fields}`` :func:`message` fills in. Tile names stay ``[a|b]``; the game's own words (the
ends, draw, pass, tiles) are the rules' :data:`draw_env.rules.WORDS`, which :mod:`arena.play`
uses for moves.
"""

from __future__ import annotations

import json
from importlib import resources

#: Language -> message key -> sentence (``str.format`` fields in braces).
MESSAGES: dict[str, dict[str, str]] = json.loads(
    resources.files("arena").joinpath("play_messages.json").read_text(encoding="utf-8")
)


def message(lang: str, key: str, **fields: object) -> str:
    """The sentence ``key`` in ``lang``, its ``{fields}`` filled in."""
    return MESSAGES[lang][key].format(**fields)
