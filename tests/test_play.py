"""draw-play driven through standard input: piped play, move names, hints, bad input, records."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

import agents
from arena.play import main, parse_move, split_specs
from arena.play_messages import MESSAGES, summarise_turns
from draw_env.io.records import read_record, replay_record
from draw_env.rules import DRAW, LANGUAGES, PASS, DrawGame
from draw_env.tiles import NAMES

# The pure-Python search where it is registered apart (the hint only needs action_values).
HINT = "ismcts_python" if "ismcts_python" in agents.available() else "ismcts"


def play(argv: list[str], lines: str) -> str:
    out = io.StringIO()
    assert main(argv, stdin=io.StringIO(lines), stdout=out) == 0
    return out.getvalue()


def test_piped_first_moves_play_a_hand_to_its_result(tmp_path: Path) -> None:
    record = tmp_path / "hand.json"
    text = play(["--opponents", "heaviest", "--seed", "0", "--episode", "hand", "--record", str(record)], "1\n" * 200)
    turns = text.count("your turn")
    assert turns > 3 and text.count("You played ") == turns
    assert "Your hand (" in text and "Your moves:" in text and "  1) " in text and "Open ends: left " in text
    assert "Boneyard: " in text and "Tiles in hand: you (player_0) " in text
    [result] = re.findall(r"=== Hand 1 over, (.*) ===", text)
    assert result.startswith(("domino", "blocked"))
    # Every hand is revealed with its pips and points.
    assert len(re.findall(r"^  (?:you \(player_0\)|player_1): .*\(\d+ pips, \d+ points\)$", text, re.MULTILINE)) == 2
    saved = read_record(record)
    assert saved["players"] == ["human", "heaviest"] and saved["finished"]
    assert replay_record(saved) == saved["scores"]


def test_a_three_player_match_names_the_winner_and_reports_opponents_moves(tmp_path: Path) -> None:
    record = tmp_path / "match.json"
    argv = ["--players", "3", "--opponents", "heaviest,variety", "--episode", "match", "--seed", "7"]
    text = play([*argv, "--record", str(record)], "1\n" * 2000)
    assert "Since your last turn: player_1 " in text and "; player_2 " in text
    assert "Scores: you (player_0) 0, player_1 0, player_2 0 (target 61)" in text
    assert re.search(r"=== Match over: (you win|player_\d wins|drawn)", text)
    saved = read_record(record)
    assert saved["players"] == ["human", "heaviest", "variety"] and len(saved["hands"]) >= 2
    assert replay_record(saved) == saved["scores"]
    # The same game in Japanese: the messages and the line description, the same moves.
    japanese = play([*argv, "--lang", "ja"], "1\n" * 2000)
    assert "前の番から: player_1" in japanese and "牌: " in japanese and "あなたの手牌 (" in japanese
    assert re.search(r"=== 試合終了: ", japanese)
    assert japanese.count("--- ハンド") == text.count("--- Hand ")
    italian = play([*argv, "--lang", "it"], "pesca\n" + "1\n" * 2000)
    assert "Le tue mosse:" in italian and "Tessere: " in italian and "=== Partita finita: " in italian


def test_move_names_bad_input_hint_and_end_of_input(tmp_path: Path) -> None:
    record = tmp_path / "partial.json"
    text = play(
        ["--opponents", "heaviest", "--seed", "3", "--episode", "hand", "--hint-agent", f"{HINT}:simulations=40", "--record", str(record)],
        "hint\nbanana\n99\n[9|9] left\n",
    )
    assert f"{HINT} would play " in text and "Its value of each move" in text
    assert "'banana' is not a move" in text and "99 is not a move number" in text and "'[9|9] left' is not a move" in text
    assert "Game ended early (input ended)." in text
    saved = read_record(record)
    assert not saved["finished"]
    replay_record(saved)


def _own_draws(record: dict, seat: int) -> list[str]:
    """The tiles ``seat`` drew, in order, from a record: each hand's k-th draw takes ``boneyard[k]``."""
    drawn = []
    for hand in record["hands"]:
        draws = 0
        for who, action in hand["actions"]:
            if action == DRAW:
                if who == seat:
                    drawn.append(NAMES[hand["boneyard"][draws]])
                draws += 1
    return drawn


def test_your_draws_name_the_tile_and_the_opponents_stay_hidden(tmp_path: Path) -> None:
    record = tmp_path / "match.json"
    argv = ["--opponents", "heaviest", "--seed", "5", "--episode", "match", "--record", str(record)]
    text = play(argv, "draw\ndraw\n" + "1\n" * 3000)
    named = re.findall(r"^You played draw\. You drew (\[\d\|\d\])\.$", text, re.MULTILINE)
    assert len(named) >= 2 and named == _own_draws(read_record(record), 0)
    opponent_draws = re.findall(r"player_1 drew \d+ tiles?([^;\n]*)", text)
    assert opponent_draws and all(rest in ("", ",") or rest.startswith(", then placed") for rest in opponent_draws)
    # The same game in Italian names the same tiles.
    italian = play([*argv[:-2], "--lang", "it"], "pesca\npesca\n" + "1\n" * 3000)
    assert re.findall(r"Hai pescato (\[\d\|\d\])\.", italian) == named


@pytest.mark.parametrize(
    ("lang", "episode", "expected"),
    [
        ("en", "match", ["Rules:", "Drawing keeps your turn", "pass ('pass') only when no tile fits", "never drawn",
                         "domino:", "blocked:", "nobody scores", "reaches 100 points"]),
        ("en", "hand", ["Rules:", "you must\n  when none fits", "blocked:"]),
        ("ja", "match", ["ルール:", "'引く'", "'パス'", "引いても番は続きます", "100点"]),
        ("it", "match", ["Regole:", "'pesca'", "'passo'", "Pescare non chiude il turno", "100 punti"]),
    ],
)
def test_help_explains_the_rules_in_the_players_language(lang: str, episode: str, expected: list[str]) -> None:
    text = play(["--opponents", "heaviest", "--seed", "0", "--episode", episode, "--lang", lang], "help\nquit\n")
    for phrase in expected:
        assert phrase in text
    assert ("reaches 100 points" in text) == (lang == "en" and episode == "match")


def test_every_language_says_every_message() -> None:
    assert set(MESSAGES) == set(LANGUAGES)
    for lang in LANGUAGES:
        assert MESSAGES[lang].keys() == MESSAGES["en"].keys(), lang


def test_help_cites_no_outside_document(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    assert "--record" in shown and "'help'" in shown
    assert not re.search(r"SPEC|section \d|docs/|\.md\b", shown)


def test_parse_move() -> None:
    legal = [2 * 10 + 0, 2 * 10 + 1, 2 * 13 + 1, DRAW]  # [1|4] left/right, [2|2] right, draw
    assert parse_move("1", legal) == 20 and parse_move(" 4 ", legal) == DRAW
    assert parse_move("[1|4] left", legal) == 20 and parse_move("4|1 r", legal) == 21
    assert parse_move("[2|2]", legal) == 27 and parse_move("draw", legal) == DRAW
    with pytest.raises(ValueError, match="fits both ends"):
        parse_move("[1|4]", legal)
    with pytest.raises(ValueError, match="cannot pass"):
        parse_move("pass", legal)
    with pytest.raises(ValueError, match="not legal now"):
        parse_move("[2|2] left", legal)
    with pytest.raises(ValueError, match="cannot draw"):
        parse_move("draw", [PASS])


def test_turn_summaries_and_agent_lists() -> None:
    assert summarise_turns([(1, DRAW), (1, DRAW), (1, 20), (2, PASS), (3, DRAW)]) == [
        "player_1 drew 2 tiles, then placed [1|4] at the left end",
        "player_2 passed",
        "player_3 drew 1 tile",
    ]
    assert split_specs("ppo,ismcts:simulations=100,seed=2,heaviest") == ["ppo", "ismcts:simulations=100,seed=2", "heaviest"]


def test_bad_arguments_exit_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--players", "3", "--opponents", "heaviest,variety,random"], stdin=io.StringIO(""), stdout=io.StringIO())
    assert "--opponents must name 1 agent" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--opponents", "chess"], stdin=io.StringIO(""), stdout=io.StringIO())
    assert "agent must be one of" in capsys.readouterr().err


def test_the_console_script_runs_piped() -> None:
    # The command of docs/getting_started.md: `yes 1 | draw-play --opponents heaviest --seed 0 --episode hand`.
    completed = subprocess.run(
        [sys.executable, "-m", "arena.play", "--opponents", "heaviest", "--seed", "0", "--episode", "hand"],
        input="1\n" * 200, capture_output=True, text=True, timeout=60, check=True,
    )
    assert "=== Hand 1 over, " in completed.stdout


# ---------------------------------------------------------------------------- variants


def test_a_variant_game_is_played_through_stdin_and_recorded(tmp_path: Path) -> None:
    record = tmp_path / "double3.json"
    argv = ["--max-pip", "3", "--hand-size", "3", "--protected", "1", "--seed", "2", "--record", str(record)]
    # A move by name, then help and a hint (variety by default in a variant), then the first move throughout.
    text = play([*argv, "--opponents", "heaviest", "--episode", "match"], "draw\nhelp\nhint\n" + "1\n" * 3000)
    assert "Variant: the double-3 set, 3 tiles each, the last 1 of the boneyard never drawn." in text
    assert "Once the boneyard is down to 1 tiles you pass" in text and "The last 1 tiles of" in text
    assert "  variety would play " in text
    assert re.search(r"=== Match over: ", text)
    assert not re.search(r"\[[4-9]\|", text)  # only the double-3 set's tiles
    saved = read_record(record)
    assert {key: saved[key] for key in ("max_pip", "hand_size", "protected")} == {"max_pip": 3, "hand_size": 3, "protected": 1}
    assert saved["players"] == ["human", "heaviest"] and saved["finished"]
    assert replay_record(saved) == saved["scores"]


def test_a_variants_opponents_default_to_one_that_plays_it() -> None:
    text = play(["--max-pip", "9", "--seed", "0", "--episode", "hand"], "1\n" * 500)
    assert "Opponents: player_1 variety." in text and "=== Hand 1 over, " in text


def test_variant_moves_are_named_with_the_variants_tiles() -> None:
    game = DrawGame(2, max_pip=9)  # 55 tiles: [9|9] is tile 54, draw is 110, pass 111
    legal = [2 * 54, 2 * 54 + 1, game.draw_action]
    assert parse_move("[9|9] right", legal, game=game) == 109 and parse_move("draw", legal, game=game) == 110
    with pytest.raises(ValueError, match="cannot pass"):
        parse_move("pass", legal, game=game)
    assert summarise_turns([(1, 110), (1, 108)], game=game) == ["player_1 drew 1 tile, then placed [9|9] at the left end"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-pip", "10"], "--max-pip must be an integer in [2, 9], got 10"),
        (["--hand-size", "0"], "--hand-size must be an integer >= 1, got 0"),
        (["--protected", "-3"], "--protected must be an integer >= 0, got -3"),
        (["--players", "4", "--hand-size", "7"], "needs 30 tiles; the double-6 set"),
        (["--max-pip", "9", "--opponents", "ismcts_python"], "--opponents agent 'ismcts_python' plays only the seeds' game"),
        (["--max-pip", "9", "--opponents", "heaviest", "--hint-agent", "ismcts_python"], "--hint-agent 'ismcts_python' plays only"),
    ],
)
def test_a_bad_variant_is_refused_in_one_line_before_anything_is_written(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "game.json"
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--record", str(record)], stdin=io.StringIO("1\n"), stdout=io.StringIO())
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    [line] = [line for line in error.splitlines() if line.startswith("draw-play: error: ")]
    assert message in line and "Traceback" not in error
    assert not record.exists()
