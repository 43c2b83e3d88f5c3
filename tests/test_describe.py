"""Line descriptions: every example of the source documents comes out exactly.

The expected strings are read from the seed documents themselves (``tests/data/seeds``): every
``牌: ...`` line of the Japanese one and every ``Tessere: ...`` line of the Italian one. Each
position is set up by playing its tiles, in the listed order, through the environment with
``render_mode="ansi"``; the description must be one line of ``render()``'s text.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

import draw_env
from draw_env.describe import describe_line
from draw_env.rules import LEFT, place_action
from draw_env.tiles import tile_id
from tests.positions import ITALIAN_SEED, JAPANESE_SEED

#: The heading that starts a description, per language.
HEADINGS = {"en": "Tiles: ", "ja": "牌: ", "it": "Tessere: "}

#: The documented examples: (lang, tiles placed in order, the description).
DOCUMENTED_EXAMPLES = [
    (
        "ja",
        "牌: [1|4], [1|1]. 接続: [1|4] (小さい目の端) – [1|1] (直線側A). "
        "合法な接続位置: [1|1] (直線側B, 1); [1|4] (大きい目の端, 4).",
    ),
    (
        "it",
        "Tessere: [2|2]. Collegamenti: nessuno. "
        "Punti di collegamento disponibili: [2|2] (lato lineare A, 2); [2|2] (lato lineare B, 2).",
    ),
    (
        "en",
        "Tiles: [1|4]. Connections: none. "
        "Legal connection positions: [1|4] (high end, 4); [1|4] (low end, 1).",
    ),
]

#: The Japanese words of a description and their English counterparts.
JAPANESE_TO_ENGLISH = {
    "牌: ": "Tiles: ",
    "接続: ": "Connections: ",
    "合法な接続位置: ": "Legal connection positions: ",
    "なし": "none",
    "大きい目の端": "high end",
    "小さい目の端": "low end",
    "直線側A": "linear side A",
    "直線側B": "linear side B",
}


def seed_descriptions(path: Path, heading: str) -> list[str]:
    """Every description in a seed document: from ``heading`` to the end of its line."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        start = line.find(heading)
        if start >= 0:
            found.append(line[start:].strip())
    return found


JAPANESE = seed_descriptions(JAPANESE_SEED, HEADINGS["ja"])
ITALIAN = seed_descriptions(ITALIAN_SEED, HEADINGS["it"])
SEED_CASES = [("ja", text) for text in JAPANESE] + [("it", text) for text in ITALIAN]


def placed_tiles(description: str) -> list[int]:
    """The tiles a description lists first, in placement order."""
    tile_list = description.split(". ")[0]
    return [tile_id(pair) for pair in re.findall(r"\[\d\|\d\]", tile_list)]


def rendered_descriptions(line_tiles: list[int], lang: str) -> dict[tuple[int, ...], str]:
    """Play ``line_tiles`` in order in every legal way (choice of ends) and describe each line.

    Two players alternate, each holding its tiles of the line and some more, so nobody goes
    out. Returns, per sequence of ends played, the line of ``render()`` that starts with the
    description heading.
    """
    others = [tile for tile in range(28) if tile not in line_tiles]
    options = {
        "hands": [line_tiles[0::2] + others[2:3], line_tiles[1::2] + others[3:]],
        "boneyard": others[:2],
        "opener": 0,
    }
    env = draw_env.raw_env(render_mode="ansi", lang=lang)
    found = {}
    for ends in itertools.product((0, 1), repeat=len(line_tiles) - 1):
        env.reset(options=options)
        actions = [place_action(line_tiles[0], LEFT)] + [
            place_action(tile, end) for tile, end in zip(line_tiles[1:], ends, strict=True)
        ]
        for action in actions:
            if not env.observe(env.agent_selection)["action_mask"][action]:
                break  # this tile does not fit that end
            env.step(action)
        else:
            [description] = [line for line in env.render().splitlines() if line.startswith(HEADINGS[lang])]
            found[ends] = description
    return found


def test_the_seed_documents_hold_the_expected_examples() -> None:
    # Seven illustrated positions in each document; the parse must not silently find fewer.
    assert len(JAPANESE) == 7 and len(ITALIAN) == 7
    assert {placed_tiles(text)[-1] for text in JAPANESE} == {placed_tiles(text)[-1] for text in ITALIAN}


@pytest.mark.parametrize(
    ("lang", "expected"), SEED_CASES, ids=[f"{lang}-{i}" for i, (lang, _) in enumerate(SEED_CASES)]
)
def test_every_seed_description_comes_out_exactly(lang: str, expected: str) -> None:
    rendered = rendered_descriptions(placed_tiles(expected), lang)
    assert expected in rendered.values(), rendered


@pytest.mark.parametrize(("lang", "expected"), DOCUMENTED_EXAMPLES, ids=[lang for lang, _ in DOCUMENTED_EXAMPLES])
def test_the_spec_examples_come_out_exactly(lang: str, expected: str) -> None:
    rendered = rendered_descriptions(placed_tiles(expected), lang)
    assert expected in rendered.values(), rendered


@pytest.mark.parametrize("expected", JAPANESE, ids=[f"en-{i}" for i in range(len(JAPANESE))])
def test_english_descriptions_say_the_same_as_the_japanese_ones(expected: str) -> None:
    english = expected
    for japanese_word, english_word in JAPANESE_TO_ENGLISH.items():
        english = english.replace(japanese_word, english_word)
    rendered = rendered_descriptions(placed_tiles(expected), "en")
    assert english in rendered.values(), rendered


def test_each_way_of_playing_the_same_tiles_is_described_differently() -> None:
    # [2|2] opens; [2|5] may join either 2: the two lines differ only in the side joined.
    rendered = rendered_descriptions([tile_id("[2|2]"), tile_id("[2|5]")], "en")
    assert rendered == {
        (0,): "Tiles: [2|2], [2|5]. Connections: [2|2] (linear side A) – [2|5] (low end). "
        "Legal connection positions: [2|2] (linear side B, 2); [2|5] (high end, 5).",
        (1,): "Tiles: [2|2], [2|5]. Connections: [2|2] (linear side B) – [2|5] (low end). "
        "Legal connection positions: [2|2] (linear side A, 2); [2|5] (high end, 5).",
    }


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "Tiles: none. Connections: none. Legal connection positions: none."),
        ("ja", "牌: なし. 接続: なし. 合法な接続位置: なし."),
        ("it", "Tessere: nessuna. Collegamenti: nessuno. Punti di collegamento disponibili: nessuno."),
    ],
)
def test_an_empty_line_is_described_as_empty(lang: str, expected: str) -> None:
    env = draw_env.env(render_mode="ansi", lang=lang)
    env.reset(seed=0)
    assert expected in env.render().splitlines()


def test_human_render_prints_the_same_text(capsys: pytest.CaptureFixture[str]) -> None:
    ansi = draw_env.env(render_mode="ansi")
    human = draw_env.env(render_mode="human")
    ansi.reset(seed=3)
    human.reset(seed=3)
    assert human.render() is None
    assert capsys.readouterr().out == ansi.render() + "\n"


@pytest.mark.parametrize("lang", ["fr", "EN", None, 0])
def test_an_unknown_language_names_itself_and_the_allowed_ones(lang: object) -> None:
    with pytest.raises(ValueError, match="lang must be one of 'en', 'ja', 'it'"):
        describe_line([], lang)  # type: ignore[arg-type]
