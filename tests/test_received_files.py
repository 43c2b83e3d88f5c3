"""Files a user receives, at the edges the readers did not see before.

* A path that is not a regular file (a FIFO, a device, a directory) is refused before it is opened
  by every reader of received files: ``draw_env.io.untrusted.read_bytes`` and everything built on it
  (policy files, tables, hidden-tile models, game records, configs), whose refusal names the file.
  A FIFO would otherwise make the reader wait for a writer forever.
* A ``tabular`` table is sized from its archive's headers before any array is read: one that would
  take more than ``MAX_TABLE_MEMORY`` to load is refused first; its rows must be distinct; a
  Fortran-order table loads as its C-order twin.
* A hidden-tile model (``inference=PATH``) of another game is refused before any game, naming the
  file and the field; met at a decision (agents used directly), the error names the file.
* ``draw-exploit`` with an agent that plays only the seeds' game says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import agents
import agents.tabular as tabular
import draw_env
from agents.hidden_tiles import HiddenTileModel, save_hidden_tile_model
from agents.tabular import TabularAgent, load_table, record_path, save_table, table_memory
from draw_env.io.records import read_record
from draw_env.io.untrusted import UntrustedInputError, read_bytes, read_json, read_npz, read_text, read_yaml
from draw_env.observation import layout
from draw_env.rules import DrawGame

ROOT = Path(__file__).resolve().parents[1]
SMALL = DrawGame(2, max_pip=2, hand_size=2, protected=1)


def without_waiting(fifo: Path, call: Callable[[], object]) -> BaseException | None:
    """What ``call`` raises (``None``: nothing); if it still waits after 10 seconds (a reader blocked
    opening ``fifo``), the FIFO is opened for writing to release it and the test fails."""
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        try:
            call()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # the reader sees the end of the file
        thread.join(10)
        pytest.fail(f"reading {fifo} waited for a writer")
    return outcome.get("error")


def small_table(tmp_path: Path, rows: int = 4, order: str = "C") -> Path:
    width, actions = layout(SMALL).size, SMALL.num_actions
    observations = np.zeros((rows, width), np.uint8)
    observations[:, :8] = np.unpackbits(np.arange(rows, dtype=np.uint8)[:, None], axis=1)  # distinct rows
    probabilities = np.zeros((rows, actions), np.float32)
    probabilities[:, -1] = 1.0
    return save_table(tmp_path / "table.npz", SMALL, np.asarray(observations, order=order),
                      np.asarray(probabilities, order=order), {"made": "by the test"})


# ---------------------------------------------------------------------- not a regular file


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("reader", [read_bytes, read_text, read_json, read_yaml, read_npz], ids=lambda f: f.__name__)
def test_a_fifo_is_refused_before_it_is_opened(reader: Callable[[Path], object], tmp_path: Path) -> None:
    fifo = tmp_path / "received"
    os.mkfifo(fifo)
    error = without_waiting(fifo, lambda: reader(fifo))
    assert isinstance(error, UntrustedInputError)
    assert str(error) == f"{fifo}: is a FIFO (named pipe), not a regular file: only regular files are read"


@pytest.mark.parametrize(("path", "kind"), [("/dev/null", "a character device"), ("/dev/zero", "a character device")])
def test_a_device_or_a_directory_is_refused(path: str, kind: str, tmp_path: Path) -> None:
    if not os.path.exists(path):
        pytest.skip(f"no {path} here")
    with pytest.raises(UntrustedInputError, match=f"^{path}: is {kind}, not a regular file"):
        read_bytes(path)
    with pytest.raises(UntrustedInputError, match="is a directory, not a regular file"):
        read_json(tmp_path)
    # A link to a regular file is read as that file.
    (tmp_path / "real.json").write_text('{"a": 1}')
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    assert read_json(tmp_path / "link.json") == {"a": 1}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("which", ["table", "table record", "model", "model record", "policy record", "game record"])
def test_every_reader_of_received_files_refuses_a_fifo_naming_it(which: str, tmp_path: Path) -> None:
    table = small_table(tmp_path)
    model = save_hidden_tile_model(tmp_path / "model.npz", HiddenTileModel(
        ((np.zeros(((SMALL.num_players + 1) * SMALL.num_tiles, layout(SMALL).size), np.float32),
          np.zeros((SMALL.num_players + 1) * SMALL.num_tiles, np.float32)),), SMALL))
    policy = tmp_path / "policy.npz"
    shutil.copy(ROOT / "agents" / "policies" / "ppo_2p.npz", policy)
    fifo, call = {
        "table": (table, lambda: TabularAgent(table)),
        "table record": (record_path(table), lambda: TabularAgent(table)),
        "model": (model, lambda: agents.make("ismcts", inference=model)),
        "model record": (model.with_suffix(".json"), lambda: agents.make("pimc", inference=model)),
        "policy record": (policy.with_suffix(".json"), lambda: agents.make("network", path=policy)),
        "game record": (tmp_path / "game.json", lambda: read_record(tmp_path / "game.json")),
    }[which]
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    error = without_waiting(fifo, call)
    assert isinstance(error, ValueError) and f"{fifo.name}: is a FIFO (named pipe), not a regular file" in str(error)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_draw_eval_with_a_fifo_for_a_table_stops_in_one_line(tmp_path: Path) -> None:
    table = small_table(tmp_path)
    table.unlink()
    os.mkfifo(table)
    completed = subprocess.run(
        [sys.executable, "-m", "arena.cli", f"tabular:path={table}", "heaviest", "--max-pip", "2", "--hand-size", "2",
         "--protected", "1", "--games", "2", "--quiet"],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert completed.returncode == 2 and completed.stdout == ""
    assert completed.stderr == (f"draw-eval: error: agent 'tabular': {table}: is a FIFO (named pipe), not a regular "
                                "file: only regular files are read\n")


# ---------------------------------------------------------------------- tables


def test_a_fortran_order_table_loads_as_its_c_order_twin(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "f").mkdir()
    c_game, _, c_observations, c_probabilities = load_table(small_table(tmp_path / "c"))
    fortran = small_table(tmp_path / "f", order="F")
    with np.load(fortran) as stored:  # the project's own writer keeps the order it is given
        assert np.isfortran(stored["observations"])
    game, _, observations, probabilities = load_table(fortran)
    assert game == c_game and np.array_equal(observations, c_observations)
    assert np.array_equal(probabilities, c_probabilities)
    mask = np.zeros(SMALL.num_actions, np.int8)
    mask[-1] = 1
    asked = {"observation": c_observations[1].astype(np.float32), "action_mask": mask}
    assert np.array_equal(TabularAgent(fortran).action_probabilities(asked), c_probabilities[1])


def test_a_table_too_large_to_load_is_refused_from_its_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The 3.4 MB file of 14 million zero rows of double-two would take about 4.9 GiB.
    assert table_memory(14_000_000, layout(SMALL).size, SMALL.num_actions) > tabular.MAX_TABLE_MEMORY
    path = small_table(tmp_path, rows=20_000)
    needed = table_memory(20_000, layout(SMALL).size, SMALL.num_actions, 8)  # save_table writes float64
    monkeypatch.setattr(tabular, "MAX_TABLE_MEMORY", needed - 1)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"observations: 20,000 rows take about 8 MiB once loaded, more than the "
                                             r"8 MiB a table may take \(at most 19,999 rows in this variant\)$"):
            TabularAgent(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < needed / 2  # refused before the arrays were read
    monkeypatch.setattr(tabular, "MAX_TABLE_MEMORY", needed)
    assert len(load_table(path)[2]) == 20_000


def test_a_table_of_repeated_rows_is_refused(tmp_path: Path) -> None:
    path = small_table(tmp_path)
    with np.load(path) as stored:
        arrays = {name: stored[name].copy() for name in stored.files}
    arrays["observations"][:] = 0
    np.savez_compressed(path, **arrays)
    record = json.loads(record_path(path).read_text())
    record["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()  # a record that describes them
    record_path(path).write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"table.npz: observations must be distinct rows, but 3 repeat an earlier one"):
        TabularAgent(path)


# ---------------------------------------------------------------------- hidden-tile models, variants


def model_of(tmp_path: Path, game: DrawGame) -> Path:
    outputs = (game.num_players + 1) * game.num_tiles
    layer = (np.zeros((outputs, layout(game).size), np.float32), np.zeros(outputs, np.float32))
    return save_hidden_tile_model(tmp_path / f"model_{game.num_players}p_{game.max_pip}.npz", HiddenTileModel((layer,), game))


@pytest.mark.parametrize(
    ("game", "field", "played"),
    [(DrawGame(3), "'num_players' is 3", "num_players=2"), (DrawGame(2, 3, 3, 3), "'max_pip' is 3", "max_pip=6")],
)
@pytest.mark.parametrize("name", ["ismcts", "pimc"])
def test_a_model_of_another_game_is_refused_before_the_first_game_naming_the_file_and_the_field(
    game: DrawGame, field: str, played: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.cli import main as draw_eval

    model = model_of(tmp_path, game)
    with pytest.raises(SystemExit) as stopped:
        draw_eval([f"{name}:inference={model},simulations=2" if name == "ismcts" else f"{name}:inference={model},worlds=1",
                   "heaviest", "--games", "2", "--quiet", "--json", str(tmp_path / "out.json")])
    error = capsys.readouterr().err
    assert stopped.value.code == 2
    assert error.startswith(f"draw-eval: error: agent {name!r}: inference={model}: {model.with_suffix('.json')}: {field}, "
                            f"but the game played has {played}")
    assert error.count("\n") == 1 and not (tmp_path / "out.json").exists()


def test_a_model_of_another_game_met_at_a_decision_names_the_file(tmp_path: Path) -> None:
    model = model_of(tmp_path, DrawGame(3))
    env = draw_env.env()
    env.reset(seed=0)
    for name in ("ismcts", "pimc"):
        agent = agents.make(name, inference=model, seed=0)
        with pytest.raises(ValueError, match=rf"^inference={model}: the model is of 3 players and the double-6 set, "
                                             rf"this decision of 2 players and the double-6 set$"):
            agent.act(env.last()[0])


def test_draw_exploit_and_draw_play_say_which_agents_play_the_variant(capsys: pytest.CaptureFixture[str]) -> None:
    from arena.exploit_cli import main as draw_exploit

    with pytest.raises(SystemExit) as stopped:
        draw_exploit(["ismcts_python", "--max-pip", "2", "--hand-size", "1", "--quiet"])
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and error.startswith(
        "draw-exploit: error: agent 'ismcts_python' plays only the seeds' game (max_pip=6, hand_size=7 or 6 with 4 "
        "players, protected=2), not max_pip=2, hand_size=1, protected=2; agents that play every variant: ")
    # Used directly, the pure-Python search says what it plays instead of misreading the observation.
    env = draw_env.env(max_pip=2, hand_size=1)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"^ismcts_python plays only the seeds' game \(the double-six set\): this "
                                         r"observation of length \d+ with 14 actions is of another set"):
        agents.make("ismcts_python").act(env.last()[0])
