"""Tests of the evaluation (arena.evaluation and its parts), the league and sweep (arena.league)
and draw-eval (arena.cli).

Cheap agents only (baselines, and ISMCTS at a handful of simulations), so the file runs in a few
seconds; the one multi-process test spawns two workers.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena import cli, evaluation
from arena.charts import plot_league
from arena.cli import main
from arena.deals import deal_options
from arena.evaluation import evaluate
from arena.league import league, parse_sweep, sweep
from arena.options import RunOptions, seatings_for
from arena.results import GameOutcome
from arena.specs import parse_agent_spec, seed_sequence_int
from arena.stats import shared_first, wilson_interval
from draw_env import tiles
from draw_env.io.records import read_record, replay_record

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------- statistics


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        (50, 100, 0.4038, 0.5962),
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I,
        # method 3 (Wilson score interval without continuity correction).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval_matches_published_values(
    successes: int, trials: int, low: float, high: float
) -> None:
    got_low, got_high = wilson_interval(successes, trials)
    assert got_low == pytest.approx(low, abs=5e-5)
    assert got_high == pytest.approx(high, abs=5e-5)


def test_wilson_interval_is_symmetric_and_takes_half_wins() -> None:
    low, high = wilson_interval(3, 10)
    mirror_low, mirror_high = wilson_interval(7, 10)
    assert (low, high) == pytest.approx((1 - mirror_high, 1 - mirror_low))
    half_low, half_high = wilson_interval(5.5, 10)
    assert wilson_interval(5, 10)[0] < half_low < wilson_interval(6, 10)[0]
    assert wilson_interval(5, 10)[1] < half_high < wilson_interval(6, 10)[1]


def test_wilson_interval_holds_the_proportion_exactly_at_the_edges() -> None:
    # Charts draw rate - low as an error bar: rounding must never make it negative.
    for trials in range(1, 400):
        assert wilson_interval(0, trials)[0] == 0.0
        assert wilson_interval(trials, trials)[1] == 1.0
        for successes in (1, trials // 3, trials - 1):
            low, high = wilson_interval(successes, trials)
            assert low <= successes / trials <= high


@pytest.mark.parametrize(("successes", "trials"), [(1, 0), (-1, 10), (11, 10)])
def test_wilson_interval_rejects_impossible_counts(successes: float, trials: int) -> None:
    with pytest.raises(ValueError, match="trials|successes"):
        wilson_interval(successes, trials)


def testshared_first_splits_a_tied_lead() -> None:
    assert shared_first([104, 60]) == (1.0, 0.0)
    assert shared_first([70, 70, 12]) == (0.5, 0.5, 0.0)
    assert shared_first([0, 0, 0, 0]) == (0.25, 0.25, 0.25, 0.25)


# ---------------------------------------------------------------------------- agent specs


def test_parse_agent_spec_reads_keywords() -> None:
    assert parse_agent_spec("variety") == ("variety", {})
    assert parse_agent_spec("ismcts:simulations=200,seed=1,exploration=0.5") == (
        "ismcts",
        {"simulations": 200, "seed": 1, "exploration": 0.5},
    )
    assert parse_agent_spec("ppo:path=policies/x.zip,deterministic=false") == (
        "ppo",
        {"path": "policies/x.zip", "deterministic": False},
    )


@pytest.mark.parametrize(
    ("text", "message"), [("chess", "agent must be one of"), ("ismcts:200", "key=value")]
)
def test_parse_agent_spec_rejects_bad_text(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_agent_spec(text)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"players": ["random"]}, "players"),
        ({"players": "random"}, "players"),
        ({"players": ["random", "variety"], "num_games": 0}, "num_games"),
        ({"players": ["random", "variety"], "episode": "set"}, "episode"),
        ({"players": ["random", "variety"], "workers": 0}, "workers"),
        ({"players": ["random", "variety"], "seatings": "shuffled"}, "seatings"),
        ({"players": [("ismcts", {"simulations": 0}), "variety"]}, "simulations"),
        ({"players": [("random", {"speed": 3}), "variety"]}, "speed"),
    ],
)
def test_evaluate_rejects_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(**{"num_games": 2, "progress": False, **kwargs})


# ---------------------------------------------------------------------------- duplicate format


def _by_deal(records: list[GameOutcome]) -> dict[int, list[GameOutcome]]:
    groups: dict[int, list[GameOutcome]] = defaultdict(list)
    for record in records:
        groups[record.deal].append(record)
    return groups


@pytest.mark.parametrize(("players", "seatings"), [(2, "rotations"), (3, "rotations"), (4, "permutations")])
def test_duplicate_replays_deal_the_same_tiles_to_the_same_seats(players: int, seatings: str) -> None:
    specs = ["random_forced", "heaviest", "variety", "random_forced"][:players]
    replays = len(seatings_for(players, seatings))
    result = evaluate(
        specs, num_games=3 * replays, episode="match", seed=11, progress=False, seatings=seatings
    )
    groups = _by_deal(result.games)
    assert len(groups) == 3 and all(len(group) == replays for group in groups.values())
    later_hands_compared = 0
    for deal, group in groups.items():
        # Every participant sits in every seat the same number of times over the replays.
        for seat in range(players):
            counts = [sum(record.seating[seat] == p for record in group) for p in range(players)]
            assert len(set(counts)) == 1
        # The first hand is the deal fixed through the reset options...
        options = deal_options(players, seed_sequence_int(11, deal, 0))
        opener, boneyard, *hands = group[0].deals_seen[0]
        assert (opener, list(boneyard), [list(tiles.tiles_in(hand)) for hand in hands]) == (
            options["opener"],
            options["boneyard"],
            options["hands"],
        )
        # ...and every hand that all replays reach is the same deal, seat by seat, in all of them.
        common = min(len(record.deals_seen) for record in group)
        for hand in range(common):
            assert len({record.deals_seen[hand] for record in group}) == 1
        later_hands_compared += common - 1
        # Hands of a match are fresh deals, not repeats of the first one.
        assert len(set(group[0].deals_seen)) == len(group[0].deals_seen)
    assert later_hands_compared > 0  # matches lasted several hands, so the env RNG was exercised
    first_deals = {group[0].deals_seen[0] for group in groups.values()}
    assert len(first_deals) == 3


def test_independent_deals_rotate_the_seats() -> None:
    result = evaluate(
        ["random_forced", "heaviest", "variety"],
        num_games=6,
        episode="hand",
        duplicate=False,
        seed=2,
        progress=False,
    )
    assert [record.seating for record in result.games] == seatings_for(3, "rotations") * 2
    assert len({record.deals_seen[0] for record in result.games}) == 6


def test_num_games_is_rounded_up_to_whole_deals() -> None:
    result = evaluate(
        ["random_forced", "heaviest", "variety"], num_games=7, episode="hand", seed=0, progress=False
    )
    assert (result.num_games, result.num_deals) == (9, 3)


# ---------------------------------------------------------------------------- results


def _without_timing(data: dict) -> dict:
    data = json.loads(json.dumps(data))
    del data["seconds"]
    for participant in data["participants"]:
        del participant["decisions_per_second"]
    for game in data.get("games", []):
        del game["think_seconds"]
    return data


def test_same_seed_same_results_on_any_number_of_workers() -> None:
    specs = ["random", ("ismcts", {"simulations": 4}), "random_forced"]
    one = evaluate(specs, num_games=6, episode="match", seed=5, workers=1, progress=False)
    two = evaluate(specs, num_games=6, episode="match", seed=5, workers=2, progress=False)
    other = evaluate(specs, num_games=6, episode="match", seed=6, workers=1, progress=False)
    assert _without_timing(one.to_dict(include_games=True)) == _without_timing(
        two.to_dict(include_games=True)
    )
    assert [g.deals_seen for g in one.games] == [g.deals_seen for g in two.games]
    assert [g.deals_seen for g in one.games] != [g.deals_seen for g in other.games]


def test_statistics_add_up() -> None:
    result = evaluate(
        ["random_forced", "heaviest", "variety", "variety"],
        num_games=40,
        episode="hand",
        seed=1,
        progress=False,
    )
    stats = result.participants
    assert [p.label for p in stats] == ["random_forced", "heaviest", "variety#1", "variety#2"]
    assert sum(p.win_rate for p in stats) == pytest.approx(1.0)
    assert sum(p.zero_sum_per_hand for p in stats) == pytest.approx(0.0, abs=1e-9)
    for record in result.games:
        assert sum(record.win_credit) == pytest.approx(1.0)
        assert record.hands == 1 and record.scores == record.points
    hands = result.num_games
    blocked = sum(r.blocked_hands for r in result.games)
    for p, participant in enumerate(stats):
        assert participant.hands == hands
        assert participant.points_per_hand == pytest.approx(sum(r.points[p] for r in result.games) / hands)
        assert participant.block_rate == pytest.approx(blocked / hands)
        assert participant.win_low <= participant.win_rate <= participant.win_high
        assert participant.wins + participant.draws <= participant.games
        # A hand has at least the placements that empty one hand of six tiles.
        assert participant.actions_per_hand >= 6


def test_match_winner_reached_the_target() -> None:
    result = evaluate(["random_forced", "heaviest"], num_games=10, episode="match", seed=4, progress=False)
    for record in result.games:
        best = max(record.scores)
        assert best >= 100 and record.hands >= 1
        assert record.win_credit == shared_first(list(record.scores))


def test_heaviest_beats_random() -> None:
    """A gap so large (random draws at will) that 40 duplicate matches settle it."""
    result = evaluate(["random", "heaviest"], num_games=40, episode="match", seed=0, progress=False)
    random_stats, heaviest_stats = result.participants
    assert heaviest_stats.win_low > 0.5 > random_stats.win_high


def test_summary_and_json() -> None:
    result = evaluate(["random_forced", "variety"], num_games=4, episode="hand", seed=0, progress=False)
    text = result.summary()
    assert "random_forced" in text and "variety" in text and "95% interval" in text
    data = json.loads(result.to_json())
    assert data["num_games"] == 4 and "games" not in data
    assert {"win_rate", "win_low", "win_high", "points_per_hand", "block_rate", "actions_per_hand"} <= set(
        data["participants"][0]
    )


# ---------------------------------------------------------------------------- league and sweep


def test_two_player_league(tmp_path) -> None:
    result = league(["random", "heaviest", "variety"], 2, 10, episode="match", seed=0, progress=False)
    plot_league(result, tmp_path / "league.png")
    assert (tmp_path / "league.png").read_bytes()[:8] == PNG_MAGIC
    assert len(result.tables) == 3
    assert result.ratings[-1].label == "random"
    assert [r.ordinal for r in result.ratings] == sorted((r.ordinal for r in result.ratings), reverse=True)
    matrix = result.win_matrix()
    for i in range(3):
        assert math.isnan(matrix[i, i])
        for j in range(3):
            if i != j:
                assert matrix[i, j] + matrix[j, i] == pytest.approx(1.0)
    assert all(r.games == 20 for r in result.ratings)
    data = json.loads(result.to_json())
    assert data["games_per_table"] == 10 and len(data["ratings"]) == 3


def test_three_player_league_tables_are_all_combinations() -> None:
    result = league(
        ["random_forced", "heaviest", "variety", "random"], 3, 3, episode="hand", seed=0, progress=False
    )
    assert sorted(table.labels for table in result.tables) == sorted(
        [
            ("random_forced", "heaviest", "variety"),
            ("random_forced", "heaviest", "random"),
            ("random_forced", "variety", "random"),
            ("heaviest", "variety", "random"),
        ]
    )
    assert all(r.games == 9 for r in result.ratings)
    with pytest.raises(ValueError, match="win_matrix"):
        result.win_matrix()


@pytest.mark.parametrize(
    ("specs", "players", "message"),
    [
        (["random", "random"], 2, "distinct"),
        (["random", "heaviest"], 3, "a sequence of 3 to 16 agent specs"),
        (["random", "heaviest"], 5, "num_players"),
        ([("ismcts", {"simulations": 0}), "heaviest"], 2, "simulations"),
    ],
)
def test_league_rejects_bad_arguments(specs: list[str], players: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        league(specs, players, 2, progress=False)


def test_sweep_over_ismcts_budget() -> None:
    result = sweep("ismcts", ["variety"], "simulations", [2, 8], 4, episode="hand", seed=0, progress=False)
    assert [p.agent for p in result.points] == ["ismcts", "ismcts"]
    assert [p.kwargs["simulations"] for p in result.points] == [2, 8]
    assert all(p.games == 4 and p.decisions_per_second > 0 for p in result.points)
    assert "simulations" in result.summary()
    assert parse_sweep("simulations=25, 50,100") == ("simulations", [25, 50, 100])
    with pytest.raises(ValueError, match="key=v1"):
        parse_sweep("simulations")


# ---------------------------------------------------------------------------- command line


def test_cli_run_writes_json_and_png(tmp_path, capsys) -> None:
    out_json, out_png = tmp_path / "out.json", tmp_path / "out.png"
    code = main(
        [
            "random_forced",
            "heaviest",
            "--games",
            "6",
            "--episode",
            "hand",
            "--quiet",
            "--json",
            str(out_json),
            "--png",
            str(out_png),
        ]
    )
    assert code == 0
    assert "random_forced" in capsys.readouterr().out
    assert json.loads(out_json.read_text())["num_games"] == 6
    assert out_png.read_bytes()[:8] == PNG_MAGIC


def test_cli_league_and_sweep(tmp_path, capsys) -> None:
    main(
        [
            "--league",
            "random",
            "heaviest",
            "variety",
            "--players",
            "3",
            "--games",
            "3",
            "--episode",
            "hand",
            "--quiet",
            "--png",
            str(tmp_path / "l.png"),
        ]
    )
    assert "League: 3 players" in capsys.readouterr().out
    assert (tmp_path / "l.png").read_bytes()[:8] == PNG_MAGIC
    main(
        [
            "ismcts",
            "variety",
            "--sweep",
            "simulations=2,4",
            "--games",
            "2",
            "--episode",
            "hand",
            "--quiet",
            "--png",
            str(tmp_path / "s.png"),
        ]
    )
    assert "simulations" in capsys.readouterr().out
    assert (tmp_path / "s.png").read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["random"], "2 to 4"),
        (["random", "heaviest", "--players", "3"], "--players is 3"),
        (["--league", "random", "heaviest", "variety"], "--league needs --players"),
        (["chess", "heaviest"], "agent must be one of"),
        (["ismcts:simulations=0", "heaviest"], "simulations"),
        (["random", "heaviest", "--games", "0"], "--games must be an integer in [1, 100000], got 0"),
        (["random", "heaviest", "--workers", "0"], "--workers must be an integer in [1, 256], got 0"),
        (["random", "heaviest", "--seed", "-1"], "--seed must be an integer in [0, 18446744073709551615]"),
        (["random", "heaviest", "--max-pip", "10"], "--max-pip must be an integer in [2, 9], got 10"),
        (["random", "heaviest", "--max-pip", "1"], "--max-pip must be an integer in [2, 9], got 1"),
        (["random", "heaviest", "--hand-size", "0"], "--hand-size must be an integer >= 1, got 0"),
        (["random", "heaviest", "--protected", "-1"], "--protected must be an integer >= 0, got -1"),
        (["random", "heaviest", "--max-pip", "2", "--hand-size", "3"], "needs 8 tiles; the double-2 set"),
        (["random", "heaviest", "--max-pip", "x"], "invalid int value"),
        (["ismcts_python", "heaviest", "--max-pip", "5"], "agent 'ismcts_python' plays only the seeds' game"),
        (["--league", "random", "heaviest", "network", "--players", "2", "--protected", "0"], "agent 'network'"),
        (["random", "heaviest", "--episode", "set"], "invalid choice"),
        (["random", "heaviest", "--sweep", "simulations"], "key=v1"),
    ],
)
def test_cli_rejects_bad_arguments(argv: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    [line] = [line for line in error.splitlines() if line.startswith("draw-eval: error: ")]
    assert message in line and "Traceback" not in error


# ---------------------------------------------------------------------------- run options


def test_run_options_round_games_up_to_whole_deals() -> None:
    assert RunOptions(3, 50).games_per_table == 51
    assert (RunOptions(3, 50).num_deals, RunOptions(3, 50).replays_per_deal) == (17, 3)
    assert RunOptions(4, 50, seatings="permutations").games_per_table == 72
    assert RunOptions(2, 7).games_per_table == 8
    assert RunOptions(3, 50, duplicate=False).games_per_table == 50


def test_run_options_keep_plain_values() -> None:
    options = RunOptions(np.int64(3), np.int64(9), seed=np.int64(4), records="out")
    assert (type(options.num_players), type(options.num_games), type(options.seed)) == (int, int, int)
    assert options.duplicate is True and options.records == Path("out")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_players": 5}, "num_players must be one of 2, 3, 4, got 5"),
        ({"num_players": True}, "num_players must be one of 2, 3, 4, got True"),
        ({"num_games": 0}, "num_games must be an integer in [1, 100000], got 0"),
        ({"num_games": 2.0}, "num_games must be an integer in [1, 100000], got 2.0"),
        ({"episode": "set"}, "episode must be one of"),
        ({"duplicate": "yes"}, "duplicate must be True or False, got 'yes'"),
        ({"seatings": "shuffled"}, "seatings must be one of 'rotations', 'permutations'"),
        ({"seed": -1}, "seed must be an integer in [0, 18446744073709551615], got -1"),
        ({"seed": 2**64}, "seed must be an integer in [0, 18446744073709551615], got 18446744073709551616"),
        ({"workers": 0}, "workers must be an integer in [1, 256], got 0"),
        ({"progress": 1}, "progress must be True or False, got 1"),
        ({"records": 3}, "records must be a directory path"),
    ],
)
def test_run_options_reject_bad_values(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        RunOptions(**{"num_players": 2, "num_games": 4, **kwargs})


# ---------------------------------------------------------------------------- draw-eval, newcomer friction


def test_help_shows_real_paths_and_no_doubled_percent(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "%%" not in text and "95% interval" in text
    paths = re.findall(r"path=(\S+?)[\s,)]", text)
    assert paths, "the help gives an example ppo path"
    for path in paths:
        assert (REPO / path).is_file(), f"--help names {path}, which is not in the repository"
    assert "--records DIR" in text and "rounded up to whole" in text


@pytest.mark.parametrize("target", ["directory", "under_a_file"])
def test_json_path_is_checked_before_any_game(target: str, tmp_path, monkeypatch, capsys) -> None:
    def no_games(*args, **kwargs):
        raise AssertionError("the evaluation started before --json was checked")

    monkeypatch.setattr(cli, "evaluate", no_games)
    (tmp_path / "file.txt").write_text("x")
    path = tmp_path if target == "directory" else tmp_path / "file.txt" / "out.json"
    with pytest.raises(SystemExit) as exit_info:
        main(["heaviest", "variety", "--games", "100000", "--quiet", "--json", str(path)])
    assert exit_info.value.code == 2
    assert "--json" in capsys.readouterr().err


def test_json_parents_are_created(tmp_path) -> None:
    path = tmp_path / "new" / "dir" / "out.json"
    assert main(["heaviest", "variety", "--games", "2", "--episode", "hand", "--quiet", "--json", str(path)]) == 0
    assert json.loads(path.read_text())["num_games"] == 2
    assert [p.name for p in path.parent.iterdir()] == ["out.json"]  # no probe or temporary file left


def test_league_says_why_it_plays_more_games_than_asked(capsys) -> None:
    argv = ["--league", "random", "heaviest", "variety", "--players", "3", "--episode", "hand", "--quiet"]
    main([*argv, "--games", "4"])
    out = capsys.readouterr().out
    assert "--games 4 is rounded up to 6 hands per table: 2 deals, each played under all 3 seatings" in out
    assert "1 table x 6 hands" in out
    main([*argv, "--games", "6"])
    assert "rounded up" not in capsys.readouterr().out


# ---------------------------------------------------------------------------- game records


def test_records_replay_exactly(tmp_path, capsys) -> None:
    main(["heaviest", "random_forced", "--games", "4", "--episode", "match", "--seed", "3", "--quiet",
          "--records", str(tmp_path)])  # fmt: skip
    main(["--league", "random_forced", "heaviest", "variety", "random", "--players", "3", "--games", "3",
          "--episode", "match", "--quiet", "--records", str(tmp_path)])  # fmt: skip
    main(["random_forced", "heaviest", "variety", "random", "--games", "4", "--episode", "hand",
          "--no-duplicate", "--quiet", "--records", str(tmp_path)])  # fmt: skip
    assert "Game records written under" in capsys.readouterr().out
    tables = sorted(path.name for path in tmp_path.iterdir())
    assert tables == [
        "2p_heaviest_vs_random_forced",
        "3p_heaviest_vs_variety_vs_random",
        "3p_random_forced_vs_heaviest_vs_random",
        "3p_random_forced_vs_heaviest_vs_variety",
        "3p_random_forced_vs_variety_vs_random",
        "4p_random_forced_vs_heaviest_vs_variety_vs_random",
    ]
    two = sorted(path.name for path in (tmp_path / tables[0]).iterdir())
    assert two == [f"deal-0000{d}_seating-{s}.json" for d in (0, 1) for s in ("0-1", "1-0")]
    four = sorted(path.name for path in (tmp_path / tables[-1]).iterdir())
    assert four == ["deal-00000_seating-0-1-2-3.json", "deal-00001_seating-1-2-3-0.json",
                    "deal-00002_seating-2-3-0-1.json", "deal-00003_seating-3-0-1-2.json"]  # fmt: skip
    replayed = 0
    for path in sorted(tmp_path.rglob("*.json")):
        record = read_record(path)
        assert replay_record(record) == record["scores"]
        labels = path.parent.name.split("_", 1)[1].split("_vs_")
        seating = [int(p) for p in path.stem.split("seating-")[1].split("-")]
        assert record["players"] == [labels[p] for p in seating]
        assert record["num_players"] == len(labels) and record["finished"]
        replayed += 1
    assert replayed == 4 + 4 * 3 + 4
    # The records are the games evaluate() counted: same deals, same final scores.
    result = evaluate(["heaviest", "random_forced"], num_games=4, episode="match", seed=3, progress=False)
    for game in result.games:
        record = read_record(tmp_path / tables[0] / f"deal-{game.deal:05d}_seating-{game.seating[0]}-{game.seating[1]}.json")
        assert [record["scores"][game.seating.index(p)] for p in range(2)] == list(game.scores)
        assert len(record["hands"]) == game.hands


def test_records_directory_is_checked_first(tmp_path, capsys) -> None:
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(SystemExit) as exit_info:
        main(["heaviest", "variety", "--quiet", "--records", str(tmp_path / "file.txt")])
    assert exit_info.value.code == 2
    assert "--records must be a directory" in capsys.readouterr().err


def test_tables_are_played_by_the_backend_chosen_for_them(monkeypatch) -> None:
    """The seam a batched backend plugs into: per table, backend_for picks who plays its deal tasks."""
    calls: list[list[tuple[str, ...]]] = []

    def counting(tasks, options, advance):
        calls.append([task.labels for task in tasks])
        return evaluation.play_step_by_step(tasks, options, advance)

    def choose(specs, *context):
        return counting if "heaviest" in [name for name, _ in specs] else evaluation.play_step_by_step

    # Seeded random agents at every table: the reference plays every table step by step.
    names = ["random", "heaviest", "random_forced"]
    reference = league(names, 2, 4, episode="hand", seed=1, progress=False)
    monkeypatch.setattr(evaluation, "backend_for", choose)
    chosen = league(names, 2, 4, episode="hand", seed=1, progress=False)
    # Both heaviest tables went to the chosen backend in one call, two deals of 2 replays each.
    assert calls == [[("random", "heaviest")] * 2 + [("heaviest", "random_forced")] * 2]
    assert _without_timing_league(chosen) == _without_timing_league(reference)


def _without_timing_league(result) -> dict:
    data = json.loads(result.to_json())
    del data["seconds"]
    for table in data["tables"]:
        for participant in table["participants"]:
            del participant["decisions_per_second"]
    return data


# ---------------------------------------------------------------------------- variants

VARIANT: dict[str, Any] = {"max_pip": 3, "hand_size": 3, "protected": 1}


def test_a_variant_evaluation_deals_its_set_and_records_its_games(tmp_path) -> None:
    result = evaluate(
        ["heaviest", "random"], num_games=4, episode="match", seed=5, progress=False, records=tmp_path, **VARIANT
    )
    assert result.variant == VARIANT and result.num_games == 4
    assert "Variant: double-3 set, 3 tiles each, 1 protected" in result.summary()
    assert json.loads(result.to_json())["variant"] == VARIANT
    paths = sorted(tmp_path.rglob("*.json"))
    assert len(paths) == 4
    for path in paths:
        record = read_record(path)
        assert {key: record[key] for key in VARIANT} == VARIANT
        assert replay_record(record) == record["scores"]
        for hand in record["hands"]:
            assert sorted(sum(hand["hands"], []) + hand["boneyard"]) == list(range(10))  # the double-3 set
    # Every replay of a deal saw the same deals: the duplicate audit holds in a variant too.
    by_deal = defaultdict(set)
    for game in result.games:
        by_deal[game.deal].add(game.deals_seen[0])
    assert all(len(seen) == 1 for seen in by_deal.values())


def test_leagues_and_sweeps_play_and_report_the_variant() -> None:
    table = league(["heaviest", "variety", "random"], 2, 2, episode="hand", progress=False, max_pip=4, hand_size=6)
    assert table.variant == {"max_pip": 4, "hand_size": 6, "protected": 2}
    assert "Variant: double-4 set, 6 tiles each, 2 protected" in table.summary()
    curve = sweep("random", ["heaviest"], "seed", [1, 2], 2, episode="hand", progress=False, protected=0)
    assert curve.to_dict()["variant"] == {"max_pip": 6, "hand_size": 7, "protected": 0}
    assert "variant" not in league(["heaviest", "variety"], 2, 2, episode="hand", progress=False).to_dict()


def test_the_seeds_game_results_keep_their_fields() -> None:
    result = evaluate(["heaviest", "variety"], num_games=2, episode="hand", progress=False)
    assert result.variant is None and "variant" not in json.loads(result.to_json())
    assert "Variant" not in result.summary()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_duplicate_deals_deal_the_variants_set(players: int) -> None:
    game = RunOptions(players, 4, max_pip=5, hand_size=4, protected=0).game
    options = deal_options(players, 17, game)
    assert [len(hand) for hand in options["hands"]] == [4] * players
    assert sorted(sum(options["hands"], []) + options["boneyard"]) == list(range(21))
    assert deal_options(players, 17) == deal_options(players, 17, RunOptions(players, 4).game)


def test_variant_tables_are_played_step_by_step(monkeypatch) -> None:
    assert evaluation.backend_for([("heaviest", {}), ("variety", {})], RunOptions(2, 4)) is evaluation.play_batched
    options = RunOptions(2, 4, max_pip=9)
    assert evaluation.backend_for([("heaviest", {}), ("variety", {})], options) is evaluation.play_step_by_step


def test_an_agent_that_cannot_play_the_variant_is_refused_before_anything_is_written(tmp_path) -> None:
    records = tmp_path / "records"
    with pytest.raises(ValueError, match="agent 'ismcts_python' plays only the seeds' game") as raised:
        evaluate(["ismcts_python", "heaviest"], num_games=2, progress=False, records=records, max_pip=5)
    assert "random, random_forced, heaviest, variety" in str(raised.value)
    assert not records.exists()
    with pytest.raises(ValueError, match="agent 'ismcts_python'"):
        league(["ismcts_python", "heaviest", "variety"], 2, 2, progress=False, protected=0)
    with pytest.raises(ValueError, match="agent 'network'"):
        sweep("heaviest", ["network"], "seed", [1], 2, progress=False, hand_size=5)


def test_draw_eval_plays_a_variant(tmp_path, capsys) -> None:
    path = tmp_path / "out.json"
    argv = ["heaviest", "variety", "random", "--games", "3", "--episode", "hand", "--quiet", "--json", str(path)]
    assert main([*argv, "--max-pip", "9", "--protected", "0"]) == 0
    assert "Variant: double-9 set, 7 tiles each, 0 protected" in capsys.readouterr().out
    assert json.loads(path.read_text())["variant"] == {"max_pip": 9, "hand_size": 7, "protected": 0}
