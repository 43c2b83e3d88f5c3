"""Named variants (``draw_env.rules.VARIANTS``): one name for a variant's three numbers everywhere.

Each door takes a name as well as the numbers and gives the same game: the environments (same
seed, same deal), the OpenSpiel game, the commands' ``--variant``, the pipelines' ``variant:``,
draw-web's set-up and the benchmark's games. A name with numbers that disagree is refused naming
both; an unknown name names the known ones. Exactness is read from the tree's size, not the name.
"""

from __future__ import annotations

import argparse
import re

import numpy as np
import pytest

import draw_env
from arena import cli as eval_cli
from arena import exploit_cli, play
from arena.options import RunOptions, variant_of
from draw_env.rules import DEFAULT_GAME, VARIANTS, DrawGame, variant_game
from draw_env.vector import DrawVectorEnv
from train.config import ConfigError, build
from train.learner_config import VariantSettings
from train.pipelines import load_run

#: Every name, as messages list them.
KNOWN = ", ".join(VARIANTS)
NUMBERS = {
    "micro": {"max_pip": 2, "hand_size": 1, "protected": 2},
    "mini": {"max_pip": 3, "hand_size": 3, "protected": 3},
    "midi": {"max_pip": 3, "hand_size": 3, "protected": 2},
    "draw": {"max_pip": 6, "hand_size": None, "protected": 2},
}


# ---------------------------------------------------------------------------- the presets


def test_the_presets_are_the_documented_numbers() -> None:
    assert {name: VARIANTS[name]._asdict() for name in NUMBERS} == NUMBERS
    assert DrawGame.named("mini") == DrawGame(2, 3, 3, 3)
    assert DrawGame.named("midi") == DrawGame(2, 3, 3, 2)
    # draw is the seeds' game for every table size: 7 tiles each, 6 with 4 players.
    assert [DrawGame.named("draw", n) for n in (2, 3, 4)] == [DrawGame(n) for n in (2, 3, 4)]
    assert DrawGame.named("draw") == DEFAULT_GAME and DrawGame.named("draw", 4).hand_size == 6


@pytest.mark.parametrize("name", ["nosuch", "Mini", "", None, 3, ["mini"]])
def test_an_unknown_name_is_refused_naming_the_known_ones(name: object) -> None:
    with pytest.raises(ValueError, match=re.escape(f"must be a named variant ({KNOWN})")):
        DrawGame.named(name)  # type: ignore[arg-type]


def test_a_long_unknown_name_is_shown_short() -> None:
    with pytest.raises(ValueError) as error:
        variant_game(2, "x" * 100_000)
    assert len(str(error.value)) < 200


def test_a_preset_whose_deal_does_not_fit_the_table_is_refused() -> None:
    with pytest.raises(ValueError, match="needs 12 tiles"):
        DrawGame.named("mini", 3)


def test_a_name_with_its_own_numbers_or_defaults_is_the_name_and_others_are_refused() -> None:
    assert variant_game(2, "mini", max_pip=3, protected=3) == DrawGame.named("mini")
    assert variant_game(2, "micro", protected=2) == DrawGame.named("micro")
    with pytest.raises(ValueError, match="variant is 'mini', whose max_pip is 3, but max_pip is 4"):
        variant_game(2, "mini", max_pip=4)
    with pytest.raises(ValueError, match="variant is 'micro', whose hand_size is 1, but hand_size is 2"):
        variant_game(2, "micro", hand_size=2)
    # Integers of any type are the same number; a bool or a float is no number of a variant.
    assert variant_game(2, "mini", max_pip=np.int64(3)) == DrawGame.named("mini")
    for value in (True, 1.0):
        with pytest.raises(ValueError, match="whose hand_size is 1, but hand_size is"):
            variant_game(2, "micro", hand_size=value)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- the environments


def _deal(env: draw_env.raw_env) -> np.ndarray:
    return env.state()  # every hand and the boneyard


@pytest.mark.parametrize("name", ["micro", "mini", "midi"])
def test_the_aec_environment_by_name_is_the_environment_by_numbers(name: str) -> None:
    by_name = draw_env.raw_env(variant=name)
    by_numbers = draw_env.raw_env(**NUMBERS[name])
    assert by_name.game == by_numbers.game == DrawGame.named(name)
    by_name.reset(seed=7)
    by_numbers.reset(seed=7)
    assert np.array_equal(_deal(by_name), _deal(by_numbers))
    assert np.array_equal(by_name.observe("player_0")["observation"], by_numbers.observe("player_0")["observation"])
    assert draw_env.env(variant=name).unwrapped.game == by_name.game


@pytest.mark.parametrize("make", [draw_env.env, draw_env.raw_env], ids=["env", "raw_env"])
def test_the_aec_environment_refuses_a_name_and_other_numbers(make) -> None:
    with pytest.raises(ValueError, match="'mini', whose protected is 3, but protected is 0"):
        make(variant="mini", protected=0)
    with pytest.raises(ValueError, match="named variant"):
        make(variant="nosuch")


def test_the_vector_environment_by_name_is_the_environment_by_numbers() -> None:
    by_name = DrawVectorEnv(4, variant="mini")
    by_numbers = DrawVectorEnv(4, **NUMBERS["mini"])
    assert by_name.game == by_numbers.game == DrawGame.named("mini")
    first, second = by_name.reset(seed=3), by_numbers.reset(seed=3)
    assert np.array_equal(first.observation, second.observation) and np.array_equal(first.action_mask, second.action_mask)
    with pytest.raises(ValueError, match="whose max_pip is 3, but max_pip is 5"):
        DrawVectorEnv(2, variant="mini", max_pip=5)


def test_the_jax_environment_by_name_is_the_environment_by_numbers() -> None:
    pytest.importorskip("jax")
    from draw_env.jax import DrawDominoes

    # Everything the environment holds comes from its game (a compiled deal would take 20 s here).
    by_name, by_numbers = DrawDominoes(variant="micro"), DrawDominoes(**NUMBERS["micro"])
    assert by_name.game == by_numbers.game == DrawGame.named("micro")
    assert (by_name.observation_shape, by_name.num_actions) == (by_numbers.observation_shape, by_numbers.num_actions)
    with pytest.raises(ValueError, match="whose hand_size is 1, but hand_size is 2"):
        DrawDominoes(variant="micro", hand_size=2)


def test_the_openspiel_game_by_name_is_the_game_by_numbers() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    import draw_env.openspiel  # noqa: F401  (registers the game)

    by_name = pyspiel.load_game("python_draw_dominoes(variant=mini)")
    by_numbers = pyspiel.load_game("python_draw_dominoes(max_pip=3,hand_size=3,protected=3)")
    assert str(by_name) == str(by_numbers) and by_name.rules == DrawGame.named("mini")
    assert pyspiel.load_game("python_draw_dominoes(players=4,variant=draw)").rules == DrawGame(4)
    with pytest.raises(ValueError, match="whose max_pip is 3, but max_pip is 4"):
        pyspiel.load_game("python_draw_dominoes(variant=mini,max_pip=4)")
    with pytest.raises(ValueError, match="named variant"):
        pyspiel.load_game("python_draw_dominoes(variant=nosuch)")


# ---------------------------------------------------------------------------- the commands


@pytest.mark.parametrize("module", [eval_cli, play, exploit_cli], ids=["draw-eval", "draw-play", "draw-exploit"])
def test_each_command_reads_variant_as_the_numbers(module) -> None:
    parser: argparse.ArgumentParser = module.build_parser()
    agents = [] if module is play else ["random"]
    by_name = parser.parse_args([*agents, "--variant", "mini"])
    by_numbers = parser.parse_args([*agents, "--max-pip", "3", "--hand-size", "3", "--protected", "3"])
    assert variant_of(by_name, 2) == variant_of(by_numbers, 2) == DrawGame.named("mini")
    assert variant_of(parser.parse_args([*agents, "--variant", "mini", "--protected", "3"]), 2) == DrawGame.named("mini")


def _one_error_line(capsys: pytest.CaptureFixture[str], command: str) -> str:
    error = capsys.readouterr().err
    assert "Traceback" not in error
    [line] = [line for line in error.splitlines() if line.startswith(f"{command}: error: ")]
    return line


BAD_VARIANTS = [
    (["--variant", "nosuch"], f"--variant must be a named variant ({KNOWN}), got 'nosuch'"),
    (["--variant", "mini", "--max-pip", "4"], "--variant is 'mini', whose max_pip is 3, but --max-pip is 4"),
]


@pytest.mark.parametrize(("flags", "message"), BAD_VARIANTS)
def test_draw_eval_refuses_a_bad_variant_in_one_line(flags: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        eval_cli.main(["random", "heaviest", *flags])
    assert exit_info.value.code == 2 and message in _one_error_line(capsys, "draw-eval")


@pytest.mark.parametrize(
    ("flags", "message"), [*BAD_VARIANTS, (["--variant", "mini", "--players", "3"], "--variant mini: a deal of hand_size=3 to 3 players")]
)
def test_draw_play_refuses_a_bad_variant_in_one_line(flags: list[str], message: str, capsys, tmp_path) -> None:
    import io

    record = tmp_path / "game.json"
    with pytest.raises(SystemExit) as exit_info:
        play.main([*flags, "--record", str(record)], stdin=io.StringIO("1\n"), stdout=io.StringIO())
    assert exit_info.value.code == 2 and message in _one_error_line(capsys, "draw-play")
    assert not record.exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [*BAD_VARIANTS, ([], "give the variant: --variant NAME, or --max-pip and --hand-size"),
     (["--max-pip", "3"], "give the variant")],
)
def test_draw_exploit_refuses_a_bad_or_missing_variant_in_one_line(flags: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        exploit_cli.main(["random", *flags])
    assert exit_info.value.code == 2 and message in _one_error_line(capsys, "draw-exploit")


def test_draw_exploit_measures_a_named_variant(capsys) -> None:
    assert exploit_cli.main(["random", "--variant", "micro", "--quiet"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert '"max_pip": 2, "hand_size": 1, "protected": 2' in line


# ---------------------------------------------------------------------------- configs


@pytest.mark.parametrize("name", ["micro", "mini", "midi"])
def test_a_config_takes_a_variant_name_for_the_numbers(name: str) -> None:
    settings = build(VariantSettings, {"variant": name})
    assert settings.game() == DrawGame.named(name) and settings.max_pip == NUMBERS[name]["max_pip"]
    assert settings.game() is settings.game()  # built once, when the keys are checked
    assert build(VariantSettings, {"variant": name, **NUMBERS[name]}).game() == DrawGame.named(name)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"variant": "nosuch"}, f"config key 'variant' must be a named variant ({KNOWN}), got 'nosuch'"),
        ({"variant": 3}, "config key 'variant' must be a named variant"),
        ({"variant": "mini", "protected": 2}, "config key 'variant' is 'mini', whose protected is 3, but config key 'protected' is 2"),
        ({"variant": "mini", "num_players": 3}, "needs 12 tiles"),
        ({"variant": "mini", "max_pip": 3.0}, "config key 'variant' is 'mini', whose max_pip is 3, but config key 'max_pip' is 3.0"),
    ],
)
def test_a_config_refuses_a_bad_variant_in_one_line(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        build(VariantSettings, data)
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("config", "name"),
    [("cfr_micro", "micro"), ("cfr_mini", "mini"), ("exit_micro", "micro"), ("exit_mini", "mini"),
     ("selfplay_micro", "micro"), ("selfplay_mini", "mini"), ("inference_mini", "mini")],
)
def test_the_shipped_configs_name_their_variant(config: str, name: str) -> None:
    _, loaded = load_run(f"configs/{config}.yaml", [])
    assert loaded.variant == name and loaded.game() == DrawGame.named(name)


def test_draw_train_overrides_the_variant_by_name() -> None:
    _, loaded = load_run("configs/cfr_mini.yaml", ["variant=micro"])
    assert loaded.game() == DrawGame.named("micro")
    with pytest.raises(ConfigError, match="whose max_pip is 3, but config key 'max_pip' is 4"):
        load_run("configs/selfplay_mini.yaml", ["max_pip=4"])


def test_run_options_build_their_game_once() -> None:
    options = RunOptions(2, 4, max_pip=3, hand_size=3, protected=3)
    assert options.game is options.game and options.game == DrawGame.named("mini")
    assert options.variant == NUMBERS["mini"] and RunOptions(3, 4).variant is None


# ---------------------------------------------------------------------------- draw-web


def test_draw_web_takes_a_variant_field_and_refuses_a_bad_one() -> None:
    pytest.importorskip("starlette")
    from arena.web.games import parse_setup

    seats = ["person", "heaviest"]
    assert parse_setup({"seats": seats, "variant": "mini"}).game == DrawGame.named("mini")
    assert parse_setup({"seats": seats, "variant": "mini", "max_pip": 3}).game == DrawGame.named("mini")
    assert parse_setup({"seats": seats, "variant": ""}).game == DrawGame(2)
    for variant, message in [("nosuch", "must be a named variant"), (["mini"], "must be a named variant"),
                             ("x" * 100_000, "must be a named variant")]:
        with pytest.raises(ValueError, match=message) as error:
            parse_setup({"seats": seats, "variant": variant})
        assert len(str(error.value)) < 200
    with pytest.raises(ValueError, match="whose hand_size is 3, but hand_size is 2"):
        parse_setup({"seats": seats, "variant": "mini", "hand_size": 2})


# ---------------------------------------------------------------------------- the benchmark and exactness


def test_the_benchmark_games_are_named_variants_with_players_and_episodes() -> None:
    from train.bench.protocol import GAMES

    # The records' game fields, as every record so far holds them.
    assert {name: game.to_dict() for name, game in GAMES.items()} == {
        "micro": {"name": "micro", "num_players": 2, "max_pip": 2, "hand_size": 1, "protected": 2, "episode": "hand"},
        "mini": {"name": "mini", "num_players": 2, "max_pip": 3, "hand_size": 3, "protected": 3, "episode": "hand"},
        "draw2": {"name": "draw2", "num_players": 2, "max_pip": 6, "hand_size": 7, "protected": 2, "episode": "match"},
        "draw3": {"name": "draw3", "num_players": 3, "max_pip": 6, "hand_size": 7, "protected": 2, "episode": "match"},
        "draw4": {"name": "draw4", "num_players": 4, "max_pip": 6, "hand_size": 6, "protected": 2, "episode": "match"},
    }
    assert [name for name, game in GAMES.items() if game.exact] == ["micro", "mini"]


def test_exactness_is_the_trees_size_not_the_name() -> None:
    from draw_env.exact.game_tree import exactly_measurable
    from train.bench.protocol import BenchGame

    assert exactly_measurable(DrawGame.named("micro")) and exactly_measurable(DrawGame.named("mini"))
    assert not exactly_measurable(DrawGame.named("midi"))  # about 94 GiB
    assert not exactly_measurable(DrawGame(2)) and not exactly_measurable(DrawGame(3, 2, 1, 2))
    assert not exactly_measurable(DrawGame.named("micro"), max_bytes=1024)
    # Any name: a game of another name but micro's numbers is exact, a match of micro is not.
    assert BenchGame.of_variant("tiny", "micro", 2, "hand").exact
    assert not BenchGame.of_variant("micro", "micro", 2, "match").exact
    assert not BenchGame.of_variant("mini", "midi", 2, "hand").exact


def test_draw_web_offers_the_named_variants_to_its_page(tmp_path) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from arena.web import server
    from arena.web.decisions import decide
    from arena.web.games import GameStore, RecordsFolder

    client = TestClient(server.create_app(GameStore(records=RecordsFolder(tmp_path), decide=decide), ["testserver"]))
    offered = client.get("/api/options").json()["variants"]
    assert offered == {name: numbers._asdict() for name, numbers in VARIANTS.items()} and offered["mini"] == NUMBERS["mini"]
    answer = client.post("/api/games", json={"seats": ["person", "heaviest"], "episode": "hand", "seed": 1, "variant": "micro"})
    assert answer.status_code == 201 and answer.json()["variant"] == NUMBERS["micro"]
    refused = client.post("/api/games", json={"seats": ["person", "heaviest"], "variant": "micro", "protected": 0})
    assert refused.status_code == 400 and "whose protected is 2, but protected is 0" in refused.json()["error"]


def test_the_reports_curves_read_exactness_from_the_records(tmp_path, monkeypatch) -> None:
    pytest.importorskip("matplotlib")
    from types import SimpleNamespace

    import matplotlib.axes

    from train.bench import report

    labels: list[str] = []
    monkeypatch.setattr(matplotlib.axes.Axes, "set_ylabel", lambda axis, text, *a, **k: labels.append(text))
    point = SimpleNamespace(cpu_seconds=1.0, score=-0.5)

    def record(game: str, metric: str) -> SimpleNamespace:
        return SimpleNamespace(game={"name": game, "num_players": 2}, curve=[point], algorithm="cfr", seed=0,
                               final=SimpleNamespace(metric=metric))

    # A game of any name measured exactly, then the seeds' game: each axis says its own measure.
    report._curves([record("tiny", "exploitability"), record("draw2", "panel_score")], tmp_path)
    assert labels == ["-exploitability", "zero-sum points/hand vs panel"]
