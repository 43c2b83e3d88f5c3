"""draw-web's server (arena/web): the API through Starlette's TestClient, hostile requests included.

Every refused request must leave the game as it was: the tests compare the game's view and its
record before and after. The agents decide in this process here (``decisions.decide``), except in
the tests of the worker pool; tests/test_web_load.py runs the server itself under load, and the
browser test is tests/test_web_browser.py.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

import agents  # noqa: E402
import draw_env  # noqa: E402
from agents.base import BaseAgent  # noqa: E402
from arena.web import budgets, decisions, server  # noqa: E402
from arena.web.decisions import DecisionPool, PoolClosed, Task, decide  # noqa: E402
from arena.web.games import GameStore, RecordsFolder, WebGame, parse_setup  # noqa: E402
from draw_env.io.records import read_record, replay_record  # noqa: E402


class Clock:
    """A settable clock for the store's idle ages."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_client(tmp_path: Path, **store_options: Any) -> tuple[TestClient, GameStore]:
    store_options.setdefault("records", RecordsFolder(tmp_path))
    store_options.setdefault("decide", decide)
    store = GameStore(**store_options)
    return TestClient(server.create_app(store, ["testserver"])), store


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return make_client(tmp_path)[0]


def new_game(client: TestClient, **setup: Any) -> dict[str, Any]:
    body = {"seats": ["person", "network"], "episode": "hand", "seed": 3} | setup
    answer = client.post("/api/games", json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()


def snapshot(client: TestClient, game_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    view = client.get(f"/api/games/{game_id}")
    record = client.get(f"/api/games/{game_id}/record")
    assert view.status_code == 200 and record.status_code == 200
    return view.json(), record.json()


def play_out(client: TestClient, view: dict[str, Any]) -> dict[str, Any]:
    """Play the person's lowest legal action until the game ends; the final view."""
    while not view["finished"]:
        answer = client.post(f"/api/games/{view['id']}/move", json={"action": view["legal"][0], "step": view["step"]})
        assert answer.status_code == 200, answer.text
        view = answer.json()
    return view


def test_the_page_and_its_files_come_with_a_strict_policy(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert '<script src="/play.js" defer></script>' in page.text and "<script>" not in page.text
    script = client.get("/play.js")
    assert script.headers["content-type"].startswith("text/javascript")
    # The script never builds markup from data.
    assert "innerHTML" not in script.text and "insertAdjacentHTML" not in script.text and "eval(" not in script.text
    # No path from the client reaches a file: only the three fixed names are served.
    for path in ("/index.html", "/static/play.js", "/../pyproject.toml", "/%2e%2e/pyproject.toml", "/play.js/../../pyproject.toml"):
        assert client.get(path).status_code == 404, path


def test_a_game_starts_with_the_person_to_move_and_only_their_tiles_shown(client: TestClient) -> None:
    view = new_game(client, episode="match", seed=11)
    assert view["players"] == ["person", "network"] and view["toMove"] == 0 and view["you"] == 0
    assert view["step"] >= 0 and not view["finished"]
    text = json.dumps(view)
    # Only the person's own 7 (or more) tiles and the opponent's count are in the view.
    assert len(view["hand"]) == view["counts"][0] and "hands" not in view
    assert view["results"] is None and "player_1" in view["texts"]["sizes"]
    assert all(entry["actions"] == [a for a in view["legal"] if a // 2 == entry["tile"] and a < 56] for entry in view["hand"])
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", view["id"]) and text.count(view["id"]) == 1


def test_the_opponents_hidden_tiles_never_reach_the_view(tmp_path: Path) -> None:
    client, store = make_client(tmp_path)
    view = new_game(client, episode="match", seed=5)
    game = store.get(view["id"])
    opponent_tiles = {tuple(game.game.tiles.tiles[t]) for t in game.state.hand_tiles(1)}
    shown = {tuple(entry["faces"]) for entry in view["hand"]} | {tuple(sorted(pair)) for pair in view["line"]}
    assert not opponent_tiles & shown


def test_a_legal_move_is_answered_by_the_network_and_a_whole_hand_is_recorded(tmp_path: Path) -> None:
    client, store = make_client(tmp_path)
    view = new_game(client)
    answer = client.post(f"/api/games/{view['id']}/move", json={"action": view["legal"][0], "step": view["step"]})
    assert answer.status_code == 200
    after = answer.json()
    assert after["step"] >= view["step"] + 1 and after["recent"]  # the network said what it did
    final = play_out(client, after)
    assert final["finished"] and final["outcome"] and final["record"]
    saved = read_record(tmp_path / final["record"])
    assert saved == client.get(f"/api/games/{view['id']}/record").json()
    assert saved["players"] == ["person", "network"] and saved["seed"] == 3 and saved["finished"]
    replay_record(saved)  # the rules agree with every field
    points = [entry["points"] for entry in final["results"]["revealed"]]
    assert points == saved["hands"][-1]["points"]
    # A finished game takes no move, and its record is written once.
    refused = client.post(f"/api/games/{view['id']}/move", json={"action": 56, "step": final["step"]})
    assert refused.status_code == 400 and "over" in refused.json()["error"]
    assert [path.name for path in tmp_path.iterdir()] == [final["record"]]


FORGED_MOVES = [
    ({"action": "56"}, 400),
    ({"action": True}, 400),
    ({"action": 2.0}, 400),
    ({"action": -1}, 400),
    ({"action": 58}, 400),
    ({"action": 10**30}, 400),
    ({"action": None}, 400),
    ({"action": [56]}, 400),
    ({"step": "0"}, 409),
    ({"step": 10**6}, 409),
    ({"step": -1}, 409),
    ({"seat": 1}, 400),
    ({"path": "/etc/passwd"}, 400),
]


@pytest.mark.parametrize(("change", "status"), FORGED_MOVES, ids=[json.dumps(c) for c, _ in FORGED_MOVES])
def test_a_forged_move_is_refused_and_changes_nothing(client: TestClient, change: dict[str, Any], status: int) -> None:
    view = new_game(client)
    before = snapshot(client, view["id"])
    body = {"action": view["legal"][0], "step": view["step"]} | change
    answer = client.post(f"/api/games/{view['id']}/move", json=body)
    assert answer.status_code == status and answer.json()["error"]
    assert snapshot(client, view["id"]) == before


def test_an_illegal_move_is_refused_in_the_games_language_and_changes_nothing(client: TestClient) -> None:
    view = new_game(client, lang="it")
    illegal = next(a for a in range(58) if a not in view["legal"])
    before = snapshot(client, view["id"])
    answer = client.post(f"/api/games/{view['id']}/move", json={"action": illegal, "step": view["step"]})
    assert answer.status_code == 400 and "non è" in answer.json()["error"]
    assert snapshot(client, view["id"]) == before
    # A replayed (stale) legal move is refused too: the step moved on.
    moved = client.post(f"/api/games/{view['id']}/move", json={"action": view["legal"][0], "step": view["step"]}).json()
    again = client.post(f"/api/games/{view['id']}/move", json={"action": view["legal"][0], "step": view["step"]})
    assert again.status_code == 409 and client.get(f"/api/games/{view['id']}").json() == moved


HOSTILE_BODIES = [
    (b"[" * 2000, "application/json", 400),
    (b"{" + b'"a":1,' * 2000 + b'"b":2}', "application/json", 413),
    (b'{"seats": ["person", "network"]', "application/json", 400),
    (b'{"seats": ["caf\xe9", "network"]}', "application/json", 400),
    (b'{"seats": ["person", "network"], "seats": ["person", "random"]}', "application/json", 400),
    (b'{"seed": NaN}', "application/json", 400),
    (b'{"seats": ["person", "network"]}', "text/plain", 415),
    (b'{"seats": ["person", "network"]}', "application/x-www-form-urlencoded", 415),
    (b"[]", "application/json", 400),
]


@pytest.mark.parametrize(("body", "kind", "status"), HOSTILE_BODIES, ids=range(len(HOSTILE_BODIES)))
def test_hostile_bodies_are_refused_with_a_short_error(tmp_path: Path, body: bytes, kind: str, status: int) -> None:
    client, store = make_client(tmp_path)
    answer = client.post("/api/games", content=body, headers={"content-type": kind})
    assert answer.status_code == status
    assert 0 < len(answer.json()["error"]) < 400
    assert len(store) == 0


HOSTILE_SETUPS = [
    ({"seats": ["person", "network:path=/etc/passwd"]}, "may not name a file"),
    ({"seats": ["person", "tabular:path=../../secret.npz"]}, "may not name a file"),
    ({"hint": "network:path=/etc/shadow"}, "may not name a file"),
    ({"seats": ["person", "nosuchagent"]}, "agent must be one of"),
    ({"seats": ["network", "random"]}, "at least one person"),
    ({"seats": ["person"]}, "2 to 4 seats"),
    ({"seats": ["person"] * 5}, "2 to 4 seats"),
    ({"seats": "person,network"}, "2 to 4 seats"),
    ({"seats": ["person", "x" * 201]}, "1 to 200 characters"),
    ({"seats": ["person", "<img src=x onerror=alert(1)>"]}, "agent must be one of"),
    ({"seats": ["person", "ismcts:simulations=-1"]}, "simulations"),
    ({"episode": "forever"}, "episode must be"),
    ({"lang": "../en"}, "lang must be"),
    ({"seed": -1}, "seed must be"),
    ({"seed": True}, "seed must be"),
    ({"max_pip": 12}, "max_pip must be"),
    ({"max_pip": 2, "hand_size": 7}, "max_pip, hand_size, protected"),
    ({"max_pip": 4, "hand_size": 4}, "plays only the seeds' game"),
    ({"colour": "red"}, "unknown set-up field"),
]


@pytest.mark.parametrize(("change", "message"), HOSTILE_SETUPS, ids=[json.dumps(c)[:40] for c, _ in HOSTILE_SETUPS])
def test_a_bad_set_up_is_refused_naming_its_field(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    client, store = make_client(tmp_path)
    answer = client.post("/api/games", json={"seats": ["person", "network"]} | change)
    assert answer.status_code == 400 and message in answer.json()["error"], answer.text
    assert len(store) == 0


def test_unknown_or_malformed_game_ids_are_not_found(client: TestClient) -> None:
    new_game(client)
    for game_id in ("A" * 22, "short", "../../etc/passwd", "%2e%2e", "x" * 5000, "A" * 21 + "!"):
        for path in ("", "/hint", "/record", "/replay"):
            assert client.get(f"/api/games/{game_id}{path}").status_code == 404, (game_id, path)
        assert client.post(f"/api/games/{game_id}/move", json={"action": 56, "step": 0}).status_code == 404


def test_another_host_name_is_refused(client: TestClient) -> None:
    """A page on another site that rebinds its name to 127.0.0.1 still sends its own Host."""
    assert client.get("/", headers={"host": "evil.example"}).status_code == 400
    assert client.post("/api/games", json={}, headers={"host": "evil.example:8765"}).status_code == 400


def host_client(tmp_path: Path, hosts: list[str]) -> TestClient:
    return TestClient(server.create_app(GameStore(records=RecordsFolder(tmp_path), decide=decide), hosts))


def test_the_host_check_holds_for_every_listening_address(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "_own_addresses", lambda: {"myhost", "192.0.2.7"})  # no name lookups in tests
    # A loopback address answers its own printed URL, and the loopback names.
    assert server.allowed_hosts("127.0.0.2") == ["127.0.0.1", "127.0.0.2", "[::1]", "localhost"]
    client = host_client(tmp_path, server.allowed_hosts("127.0.0.2"))
    assert client.get("/", headers={"host": "127.0.0.2:8765"}).status_code == 200
    assert client.get("/", headers={"host": "evil.example:8765"}).status_code == 400
    # Every address (0.0.0.0, ::): this machine's names and addresses, never a wildcard.
    for bind in ("0.0.0.0", "::", ""):
        hosts = server.allowed_hosts(bind, ["games.lan", "[fe80::0:1]"])
        assert "*" not in hosts and {"localhost", "127.0.0.1", "[::1]", "myhost", "192.0.2.7", "games.lan", "[fe80::1]"} == set(hosts)
    client = host_client(tmp_path, server.allowed_hosts("0.0.0.0", ["games.lan"]))
    for host, status in [("192.0.2.7:8765", 200), ("games.lan", 200), ("localhost:8765", 200), ("evil.example", 400), ("192.0.2.8", 400)]:
        assert client.get("/api/options", headers={"host": host}).status_code == status, host
    # A LAN address: itself and this machine's names.
    assert {"192.0.2.7", "myhost", "localhost"} <= set(server.allowed_hosts("192.0.2.7"))
    for bad in ("*", "*.example.com", "host:80", "a/b", ""):
        with pytest.raises(ValueError, match="never a wildcard"):
            server.allowed_hosts("0.0.0.0", [bad])
    with pytest.raises(ValueError, match="never a wildcard"):
        server.create_app(GameStore(decide=decide), ["*"])


def test_the_store_keeps_a_bounded_number_of_games_for_a_bounded_time(tmp_path: Path) -> None:
    clock = Clock()
    client, store = make_client(tmp_path, max_games=2, max_age=60.0, clock=clock)
    first, second = new_game(client), new_game(client)
    clock.now += 10
    assert client.get(f"/api/games/{first['id']}").status_code == 200  # first is now the most recent
    third = new_game(client)
    assert len(store) == 2
    assert client.get(f"/api/games/{second['id']}").status_code == 404  # the one idle longest went
    assert client.get(f"/api/games/{first['id']}").status_code == 200
    clock.now += 61
    assert client.get(f"/api/games/{third['id']}").status_code == 404 and len(store) == 0


def test_the_hint_gives_the_networks_probabilities_and_value(client: TestClient) -> None:
    view = new_game(client, episode="match", seed=4)
    hint = client.get(f"/api/games/{view['id']}/hint").json()
    assert hint["agent"] == "network:deterministic=false" and isinstance(hint["value"], float)
    assert sorted(move["action"] for move in hint["moves"]) == view["legal"]
    assert abs(sum(move["probability"] for move in hint["moves"]) - 1) < 1e-3
    assert [m["probability"] for m in hint["moves"]] == sorted((m["probability"] for m in hint["moves"]), reverse=True)


def test_a_search_hint_gives_each_moves_value_in_points_searched_once_a_position(tmp_path: Path) -> None:
    searches: list[Task] = []

    def counted(task: Task) -> Any:
        searches.append(task)
        return decide(task)

    client, _ = make_client(tmp_path, decide=counted)
    view = new_game(client, hint="ismcts:simulations=40", seed=4)
    hint = client.get(f"/api/games/{view['id']}/hint").json()
    assert all(-200 <= move["value"] <= 200 for move in hint["moves"]) and len(hint["moves"]) == len(view["legal"])
    assert client.get(f"/api/games/{view['id']}/hint").json() == hint and len(searches) == 1


def test_three_seats_with_a_variant_and_two_agents(tmp_path: Path) -> None:
    client, _ = make_client(tmp_path)
    view = new_game(client, seats=["variety", "person", "random:seed=2"], max_pip=4, hand_size=4, protected=1, lang="ja")
    assert view["you"] == 1 and view["variant"] == {"max_pip": 4, "hand_size": 4, "protected": 1}
    assert "ボーンヤード" in view["texts"]["boneyard"] or view["texts"]["boneyard"]
    final = play_out(client, view)
    record = read_record(tmp_path / final["record"])
    assert record["max_pip"] == 4 and record["players"] == ["variety", "person", "random:seed=2"]
    replay_record(record)


def test_the_replay_page_is_served_under_its_own_script_hash(client: TestClient) -> None:
    view = play_out(client, new_game(client))
    page = client.get(f"/api/games/{view['id']}/replay")
    policy = page.headers["content-security-policy"]
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'", policy) and "frame-ancestors 'none'" in policy
    assert "Hand over" in page.text
    download = client.get(f"/api/games/{view['id']}/record")
    assert download.headers["content-disposition"] == f'attachment; filename="{view["record"]}"'


def test_the_records_folder_never_writes_over_a_file(tmp_path: Path) -> None:
    folder = RecordsFolder(tmp_path)
    client = make_client(tmp_path / "other")[0]
    record = client.get(f"/api/games/{play_out(client, new_game(client))['id']}/record").json()
    first = folder.save(record, "A" * 22)
    first.write_text("someone else's file")
    second = folder.save(record, "A" * 22)
    assert first != second and first.read_text() == "someone else's file"
    assert read_record(second) == record
    # A record that does not validate leaves no file behind (the name it claimed is freed).
    with pytest.raises(ValueError, match="record field"):
        folder.save({"format": "draw-dominoes-record"}, "C" * 22)
    assert sorted(tmp_path.glob("*.json")) == sorted([first, second])


def test_a_set_up_names_server_side_agents_by_name_only() -> None:
    named = server.parse_named_agents(["quick=ismcts:simulations=20"])
    setup = parse_setup({"seats": ["person", "quick"], "seed": 1}, named)
    game = WebGame.start("B" * 22, setup, decide, named)
    assert game.labels == ["person", "quick"] and game.seat_specs[1] == ("ismcts", {"simulations": 20})
    for bad in (["quick"], ["person=ismcts"], ["network=random"], ["x=nosuch"], ["a b=random"]):
        with pytest.raises(ValueError, match="--agent"):
            server.parse_named_agents(bad)


def test_draw_web_refuses_bad_options_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "file"
    afile.write_text("")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        cases = [
            (["--records", str(afile)], "must be a folder"),
            (["--port", str(busy.getsockname()[1]), "--records", str(tmp_path / "r")], "cannot listen on 127.0.0.1"),
            (["--port", "70000"], "--port must be"),
            (["--agent", "solver=tabular"], "--agent solver"),
            (["--allowed-host", "*"], "never a wildcard"),
            (["--agent", f"solver=tabular:path={afile}"], "agent 'tabular'"),
            (["--workers", "0"], "--workers must be"),
            (["--max-connections", "0"], "--max-connections must be"),
        ]
        for argv, message in cases:
            assert server.main([*argv, "--no-browser"]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and err.startswith("draw-web: error: ") and message in err, err
    finally:
        busy.close()


def refusing(task: Task) -> Any:
    """Decisions where ``heaviest`` and the hint agent cannot read any position (as a solver's
    table outside its variant)."""
    if task.name == "heaviest" or task.kind == "hint":
        raise ValueError("no entry for this observation")
    return decide(task)


def test_an_agent_that_cannot_play_stops_the_game_with_its_reason(tmp_path: Path) -> None:
    client, store = make_client(tmp_path, decide=refusing)
    view = new_game(client, seats=["person", "heaviest"], seed=1)
    hint = client.get(f"/api/games/{view['id']}/hint")
    assert hint.status_code == 409 and "the hint agent network:deterministic=false cannot read this position: no entry" in hint.json()["error"]
    placements = [a for entry in view["hand"] for a in entry["actions"]]
    answer = client.post(f"/api/games/{view['id']}/move", json={"action": placements[0], "step": view["step"]})
    assert answer.status_code == 200
    stopped = answer.json()
    assert stopped["failure"] == "heaviest (player_1) cannot play this position: no entry for this observation"
    assert stopped["toMove"] is None and stopped["legal"] == [] and not stopped["finished"]
    before = snapshot(client, view["id"])
    refused = client.post(f"/api/games/{view['id']}/move", json={"action": 56, "step": stopped["step"]})
    assert refused.status_code == 400 and "cannot play this position" in refused.json()["error"]
    assert snapshot(client, view["id"]) == before and not list(tmp_path.glob("*.json"))


def test_a_finished_hand_is_shown_face_up_until_the_person_acts_in_the_next(client: TestClient) -> None:
    view = new_game(client, episode="match", seed=8)
    while view["handNumber"] == 0:
        view = client.post(f"/api/games/{view['id']}/move", json={"action": view["legal"][0], "step": view["step"]}).json()
    results = view["results"]
    assert results["hand"] == 0 and results["text"].startswith("Hand 1 over")
    assert sum(entry["points"] for entry in results["revealed"]) > 0 or "nobody scores" in results["text"]
    assert results["scores"] == view["scores"] and results["text"] in view["recent"]
    after = client.post(f"/api/games/{view['id']}/move", json={"action": view["legal"][0], "step": view["step"]}).json()
    assert after["handNumber"] == 1 and after["results"] is None  # seed 8: hand 2 goes on


def test_the_page_has_its_words_in_every_language_of_the_game(client: TestClient) -> None:
    from draw_env.rules import LANGUAGES

    script = client.get("/play.js").text
    table = re.search(r"const LABELS = \{\n(.*?)\n\};", script, re.DOTALL)
    assert table is not None
    blocks = dict(re.findall(r"^  (\w+): \{\n(.*?)\n  \},", table.group(1), re.DOTALL | re.MULTILINE))
    assert sorted(blocks) == sorted(LANGUAGES)
    keys = {lang: set(re.findall(r"(?:^|, )\s*(\w+): \"", body, re.MULTILINE)) for lang, body in blocks.items()}
    assert keys["en"] and all(found == keys["en"] for found in keys.values()), keys


# ---------------------------------------------------------------------------- what a page may ask


HUGE_BUDGETS = [
    ({"seats": ["person", "ismcts:simulations=1000000"]}, "simulations must be at most 20000"),
    ({"seats": ["person", "pimc:worlds=1000000000"]}, "worlds must be at most 256"),
    ({"seats": ["person", "pimc:depth=160"]}, "depth must be at most 4"),
    ({"seats": ["person", "pimc:exact_tiles=28"]}, "exact_tiles must be at most 10"),
    ({"seats": ["person", "ismcts:seconds=3600"]}, "seconds must be at most 5"),
    ({"seats": ["person", "ismcts:simulations=none"]}, "simulations must be at most 20000"),
    ({"seats": ["person", "ismcts:candidates=4096"]}, "the page may set only"),
    ({"seats": ["person", "ismcts_python:simulations=300000"]}, "simulations must be at most 2000"),
    ({"hint": "ismcts:simulations=1000000"}, "hint: agent 'ismcts': simulations must be at most"),
    ({"hint": "ppo_search:simulations=1000000"}, "simulations must be at most 5000"),
    ({"seats": ["person", "openspiel-mcts:simulations=1000000"]}, "simulations must be at most 400"),
    ({"seats": ["person", "openspiel-mcts:determinizations=1000"]}, "determinizations must be at most 10"),
    # Beyond what the agent itself takes: refused by the agent's own check, before draw-web's.
    ({"seats": ["person", "ismcts:simulations=100000000"]}, "simulations must be an integer in [1, 1000000]"),
]


@pytest.mark.parametrize(("change", "message"), HUGE_BUDGETS, ids=[json.dumps(c)[:50] for c, _ in HUGE_BUDGETS])
def test_a_page_cannot_ask_for_a_budget_beyond_draw_webs_maximum(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    if "openspiel" in json.dumps(change):
        pytest.importorskip("pyspiel")
    client, store = make_client(tmp_path)
    answer = client.post("/api/games", json={"seats": ["person", "network"], "seed": 1} | change)
    assert answer.status_code == 400 and message in answer.json()["error"], answer.text
    assert len(store) == 0


def test_a_pages_search_always_runs_with_a_count_and_a_time_budget(tmp_path: Path) -> None:
    client, store = make_client(tmp_path)
    seats = ["person", "ismcts:simulations=400", "ismcts:seconds=2", "pimc"]
    game = store.get(new_game(client, seats=seats, hint="ismcts")["id"])
    assert game.seat_specs == {
        1: ("ismcts", {"simulations": 400, "seconds": budgets.SEARCH_SECONDS}),
        2: ("ismcts", {"seconds": 2, "simulations": 20_000}),  # a time budget alone: the most simulations too
        3: ("pimc", {"seconds": budgets.SEARCH_SECONDS}),
    }
    assert game.hint_spec == ("ismcts", {"simulations": 5000, "seconds": budgets.SEARCH_SECONDS})  # its default count
    # The operator's agents are theirs: a named agent runs as given.
    named = server.parse_named_agents(["deep=ismcts:simulations=300000"])
    assert WebGame.start("C" * 22, parse_setup({"seats": ["person", "deep"], "seed": 3}, named), decide, named).seat_specs == {
        1: ("ismcts", {"simulations": 300_000})
    }


def test_each_offered_agents_own_defaults_are_within_draw_webs_maxima() -> None:
    for name in budgets.page_agents():
        built = agents.make(name)
        for key, maximum in budgets.PAGE_AGENTS[name].items():
            value = getattr(built, key, None)
            if maximum is not None and isinstance(value, (int, float)):
                assert value <= maximum, (name, key, value)


def test_the_options_offer_only_what_a_page_may_name(client: TestClient) -> None:
    options = client.get("/api/options").json()
    assert "tabular" not in options["agents"] and "network" in options["agents"] and "ismcts" in options["agents"]
    assert options["budgets"]["ismcts"] == {"simulations": 20_000, "seconds": budgets.SEARCH_SECONDS}
    assert set(options["variantAgents"]) <= set(options["agents"])


# ---------------------------------------------------------------------------- decisions in workers


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB (Linux's /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def play_as_person(store: GameStore, game: WebGame) -> None:
    while not game.over:
        store.move(game, game.state.legal_actions()[0], game.step)


SLOW = "slow=ismcts_python:simulations=1000000,seconds=60"


def test_a_decision_past_the_time_limit_stops_its_game_and_the_server_plays_on() -> None:
    pool = DecisionPool(workers=1, seconds=1.5)
    try:
        named = server.parse_named_agents([SLOW])
        store = GameStore(named=named, decide=pool.decide)
        game = store.create(parse_setup({"seats": ["person", "slow"], "seed": 3, "episode": "hand"}, named))
        started = time.monotonic()
        view = store.move(game, game.state.legal_actions()[0], game.step)
        assert time.monotonic() - started < 20
        assert view["failure"] == "slow (player_1) did not decide within 1.5 s (the server's limit for one decision)"
        assert view["toMove"] is None and not view["finished"]
        # Its worker was killed; the next decision gets a new one.
        other = store.create(parse_setup({"seats": ["person", "network"], "seed": 3, "episode": "hand"}))
        play_as_person(store, other)
        assert other.finished and other.failure is None
    finally:
        pool.close()


def test_closing_the_pool_stops_a_search_at_once() -> None:
    """What a stop signal does (draw-web's server closes the pool in its signal handler)."""
    pool = DecisionPool(workers=1, seconds=300)
    env = draw_env.env(num_players=2, episode="hand", reward="points")
    env.reset(seed=3)
    task = Task("act", "ismcts_python", {"simulations": 10**6, "seconds": 300}, (1, 2, 3), env.observe("player_0"), 2)
    outcome: list[BaseException] = []

    def search() -> None:
        try:
            pool.decide(task)
        except BaseException as error:  # noqa: BLE001 - the test looks at it
            outcome.append(error)

    thread = threading.Thread(target=search)
    thread.start()
    time.sleep(1.0)
    assert thread.is_alive()  # searching
    started = time.monotonic()
    pool.close()
    thread.join(timeout=20)
    assert not thread.is_alive() and time.monotonic() - started < 10
    assert len(outcome) == 1 and isinstance(outcome[0], PoolClosed)
    with pytest.raises(PoolClosed):
        pool.decide(task)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads memory from Linux's /proc")
def test_games_at_the_largest_budget_keep_no_search_and_memory_stays_bounded() -> None:
    """A game holds its agents' specs, never an agent: the search trees of the largest budget a
    page may ask (about 15 MB each, kept by an agent that lives with its game) are freed after
    each decision, in the worker and in the server."""
    pool = DecisionPool(workers=1, seconds=60)
    try:
        store = GameStore(decide=pool.decide)
        tracemalloc.start()
        sizes = []
        for seed in range(4):
            setup = parse_setup({"seats": ["person", "ismcts:simulations=20000"], "seed": seed, "episode": "hand"})
            game = store.create(setup)
            play_as_person(store, game)
            assert game.finished and game.failure is None
            sizes.append((tracemalloc.get_traced_memory()[0] / 1e6, rss_mb(pool.pids()[0])))
        tracemalloc.stop()
        assert len(store) == 4
        assert sizes[-1][0] - sizes[0][0] < 4, sizes  # the server: the games' records and logs only
        assert sizes[-1][1] - sizes[0][1] < 30, sizes  # the worker: no tree kept from game to game
        assert not any(isinstance(value, BaseAgent) for value in vars(game).values())
    finally:
        pool.close()


# ---------------------------------------------------------------------------- records


def test_mid_game_the_record_and_replay_hold_only_what_the_person_may_see(tmp_path: Path) -> None:
    client, store = make_client(tmp_path)
    view = new_game(client, episode="match", seed=8)
    game = store.get(view["id"])
    assert view["seed"] is None  # the seed deals every hand: not before the end
    record = client.get(f"/api/games/{view['id']}/record")
    partial = record.json()
    assert partial["format"] == "draw-dominoes-partial-record" and partial["viewer"] == 0 and not partial["finished"]
    assert "-partial" in record.headers["content-disposition"] and "seed" not in partial
    hand = partial["hands"][-1]
    assert hand["hands"][0] == [entry["tile"] for entry in view["hand"]] and hand["hands"][1] is None
    assert "boneyard" not in hand and hand["actions"] == [list(action) for action in game.env.record["hands"][-1]["actions"]]
    assert client.get(f"/api/games/{view['id']}/replay").status_code == 409  # no hand is over yet
    while view["handNumber"] == 0:
        view = client.post(f"/api/games/{view['id']}/move", json={"action": view["legal"][0], "step": view["step"]}).json()
    # Seed 8: the first hand is over, the second goes on. The replay shows the hand that is over.
    shown = game.replay_record()
    assert shown is not None and len(shown["hands"]) == 1 and "seed" not in shown
    assert shown["hands"][0] == game.env.record["hands"][0]
    replay = client.get(f"/api/games/{view['id']}/replay")
    assert replay.status_code == 200 and "Hand over" in replay.text
    partial = client.get(f"/api/games/{view['id']}/record").json()
    assert partial["hands"][0] == game.env.record["hands"][0] and partial["hands"][1]["hands"][1] is None
    # Over: the whole record, the seed with it.
    final = play_out(client, view)
    assert final["seed"] == 8
    assert client.get(f"/api/games/{view['id']}/record").json() == read_record(tmp_path / final["record"])


def test_a_record_that_cannot_be_written_is_kept_shown_and_written_later(tmp_path: Path) -> None:
    blocker = tmp_path / "records"
    blocker.write_text("a file where the records folder should be")
    client, store = make_client(tmp_path, records=RecordsFolder(blocker))
    final = play_out(client, new_game(client))
    assert final["finished"] and final["record"] is None
    assert "could not be written to the records folder" in final["recordError"]
    kept = client.get(f"/api/games/{final['id']}/record")
    assert kept.status_code == 200 and kept.json()["finished"]  # downloadable meanwhile
    assert store.unsaved() == 1
    blocker.unlink()  # the folder works again: the next write writes both records
    second = play_out(client, new_game(client, seed=4))
    first = client.get(f"/api/games/{final['id']}").json()
    assert first["record"] and first["recordError"] is None and second["record"] and store.unsaved() == 0
    assert read_record(blocker / first["record"]) == kept.json()
    assert sorted(path.name for path in blocker.iterdir()) == sorted([first["record"], second["record"]])


def test_a_table_is_read_once_and_shared_by_every_game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver's table (hundreds of MB for a larger variant) is read once per worker, not per game."""
    from agents import tabular
    from draw_env.rules import DrawGame

    env = draw_env.env(num_players=2, episode="hand", reward="points")
    env.reset(seed=3)
    observation = env.observe("player_0")
    mask = np.asarray(observation["action_mask"], np.float64)
    path = tabular.save_table(
        tmp_path / "table.npz", DrawGame(2), np.asarray(observation["observation"])[None], (mask / mask.sum())[None], {}
    )
    reads: list[str] = []
    real = tabular.load_table

    def counted(where: Any) -> Any:
        reads.append(str(where))
        return real(where)

    monkeypatch.setattr(tabular, "load_table", counted)
    decisions.shared_table_agent.cache_clear()
    named = server.parse_named_agents([f"solver=tabular:path={path}"])
    client, store = make_client(tmp_path / "records", named=named)
    hints = [client.get(f"/api/games/{new_game(client, hint='solver')['id']}/hint").json() for _ in range(3)]
    assert all(hint["agent"] == "solver" and len(hint["moves"]) == int(mask.sum()) for hint in hints)
    assert len(reads) == 1
