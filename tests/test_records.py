"""Game records: recording through env(), validation, files, exact replays."""

from __future__ import annotations

import copy
import io
import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

import draw_env
from draw_env.io.records import (
    FORMAT,
    VERSION,
    RecordingWrapper,
    positions,
    read_record,
    replay_record,
    validate_record,
    write_record,
)
from draw_env.rules import DRAW, PASS


def play(env: RecordingWrapper, seed: int, options: dict | None = None) -> dict:
    """Play one episode with seeded random legal moves and return its record."""
    env.reset(seed=seed, options=options)
    rng = random.Random(seed)
    for _agent in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return env.record


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_match_records_replay_exactly(num_players: int, tmp_path: Path) -> None:
    env = RecordingWrapper(draw_env.env(num_players=num_players, episode="match"))
    for seed in range(3):
        record = play(env, seed)
        assert record["format"] == FORMAT and record["version"] == VERSION and record["finished"]
        assert record["num_players"] == num_players and record["episode"] == "match"
        assert record["players"] == [f"player_{seat}" for seat in range(num_players)]
        # Every action of the episode is in the record, draws included.
        assert sum(len(hand["actions"]) for hand in record["hands"]) > 0
        assert max(record["scores"]) >= draw_env.DrawGame(num_players).target
        totals = np.sum([hand["points"] for hand in record["hands"]], axis=0).tolist()
        assert record["scores"] == totals
        for hand in record["hands"]:
            assert sorted([t for held in hand["hands"] for t in held] + hand["boneyard"]) == list(range(28))
        assert replay_record(record) == record["scores"]
        path = write_record(record, tmp_path / f"{num_players}p" / f"game_{seed}.json")
        assert read_record(path) == record
        assert replay_record(read_record(path)) == record["scores"]


def test_the_record_holds_the_deals_the_env_dealt() -> None:
    env = RecordingWrapper(draw_env.env(num_players=3, episode="match"), players=["me", "heaviest", "ismcts"])
    env.reset(seed=11)
    state = env.unwrapped.state_ref
    first = env.record["hands"][0]
    assert first["hands"] == [state.hand_tiles(seat) for seat in range(3)]
    assert first["boneyard"] == state.boneyard and first["opener"] == state.opener
    record = play(env, 11)
    assert record["players"] == ["me", "heaviest", "ismcts"]
    for key in ("hands", "boneyard", "opener"):
        assert record["hands"][0][key] == first[key]
    # Draws and passes appear as actions, and openers rotate one seat per hand.
    actions = [action for hand in record["hands"] for _seat, action in hand["actions"]]
    assert DRAW in actions
    openers = [hand["opener"] for hand in record["hands"]]
    assert all(b == (a + 1) % 3 for a, b in itertools.pairwise(openers))
    # The last position of each hand is the hand's result.
    ends = {}
    for position in positions(record):
        ends[position.hand] = position.state
    for k, hand in enumerate(record["hands"]):
        assert list(ends[k].result.points) == hand["points"] and list(ends[k].result.pips) == hand["pips"]


def test_hand_records_and_blocked_hands() -> None:
    env = RecordingWrapper(draw_env.env(num_players=4, reward="points"))
    kinds = set()
    for seed in range(40):
        record = play(env, seed)
        [hand] = record["hands"]
        assert record["scores"] == hand["points"]
        assert record["winner"] == hand["winner"]
        kinds.add(hand["kind"])
        assert replay_record(record) == hand["points"]
    assert kinds == {"domino", "blocked"}


def test_start_scores_are_recorded_and_replayed() -> None:
    env = RecordingWrapper(draw_env.env(num_players=2, episode="match", reward="win_loss"))
    record = play(env, 5, options={"scores": [90, 95]})
    assert record["start_scores"] == [90, 95]
    points = np.sum([hand["points"] for hand in record["hands"]], axis=0)
    assert record["scores"] == (np.array([90, 95]) + points).tolist()
    assert replay_record(record) == record["scores"]
    without = copy.deepcopy(record)
    del without["start_scores"]
    with pytest.raises(ValueError, match="scores"):
        validate_record(without)


def test_an_unfinished_game_and_an_illegal_action() -> None:
    env = RecordingWrapper(draw_env.env(num_players=2))
    env.reset(seed=3)
    observation = env.observe(env.agent_selection)
    legal = int(np.flatnonzero(observation["action_mask"])[0])
    env.step(legal)
    record = env.record
    assert not record["finished"] and len(record["hands"][0]["actions"]) == 1 and "points" not in record["hands"][0]
    validate_record(record)
    replay_record(record)
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    env.step(illegal)  # env() ends the episode with a logged warning
    record = env.record
    assert record["illegal_action"] == [env.unwrapped.state_ref.current, illegal] and record["finished"]
    assert len(record["hands"][0]["actions"]) == 1
    replay_record(record)
    # Through raw_env an illegal action raises and is not recorded.
    raw = RecordingWrapper(draw_env.raw_env(num_players=2))
    raw.reset(seed=3)
    with pytest.raises(draw_env.IllegalActionError):
        raw.step(PASS)  # never legal with a full boneyard
    assert raw.record["hands"][0]["actions"] == [] and "illegal_action" not in raw.record


def finished_match() -> dict:
    return play(RecordingWrapper(draw_env.env(num_players=3, episode="match")), 2)


def test_replay_names_the_hand_and_step_of_a_mismatch() -> None:
    record = finished_match()
    assert len(record["hands"]) >= 2
    wrong_points = copy.deepcopy(record)
    wrong_points["hands"][1]["points"] = list(reversed(wrong_points["hands"][1]["points"]))
    wrong_points["scores"] = np.sum([h["points"] for h in wrong_points["hands"]], axis=0).tolist()
    if wrong_points["hands"][1]["points"] != record["hands"][1]["points"]:
        with pytest.raises(ValueError, match=r"hands\[1\]\.points must be the replay.s"):
            replay_record(wrong_points)
    wrong_pips = copy.deepcopy(record)
    wrong_pips["hands"][0]["pips"][0] += 1
    with pytest.raises(ValueError, match=r"hands\[0\]\.pips must be the replay.s"):
        replay_record(wrong_pips)
    wrong_seat = copy.deepcopy(record)
    seat, _action = wrong_seat["hands"][1]["actions"][3]
    wrong_seat["hands"][1]["actions"][3][0] = (seat + 1) % 3
    with pytest.raises(ValueError, match=r"hands\[1\]\.actions\[3\] says seat"):
        replay_record(wrong_seat)
    wrong_action = copy.deepcopy(record)
    actions = wrong_action["hands"][1]["actions"]
    step = next(i for i, (_s, a) in enumerate(actions) if a < DRAW and i > 0)
    actions[step][1] = PASS  # never legal with a playable tile
    with pytest.raises(ValueError, match=rf"hands\[1\]\.actions\[{step}\] plays 57 \(pass\)"):
        replay_record(wrong_action)
    short = copy.deepcopy(record)
    short["hands"][0]["actions"].pop()
    with pytest.raises(ValueError, match=r"hands\[0\]\.actions must end the hand"):
        replay_record(short)
    cut = copy.deepcopy(record)
    cut["hands"].pop()
    cut["scores"] = np.sum([h["points"] for h in cut["hands"]], axis=0).tolist()
    with pytest.raises(ValueError, match="finished must be false: the match goes on"):
        replay_record(cut)
    swapped = copy.deepcopy(record)
    swapped["hands"][1]["opener"] = (swapped["hands"][1]["opener"] + 1) % 3
    with pytest.raises(ValueError, match=r"hands\[1\]\.opener must be one seat clockwise"):
        replay_record(swapped)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r.pop("hands"), "hands is missing"),
        (lambda r: r.update(format="chess"), "format must be"),
        (lambda r: r.update(version=2), "version must be 1"),
        (lambda r: r.update(num_players=5), "num_players must be one of"),
        (lambda r: r.update(episode="game"), "episode must be one of"),
        (lambda r: r.update(players=["a"]), "players must be a list of 3 strings"),
        (lambda r: r["hands"][0]["hands"][0].append(r["hands"][0]["hands"][1][0]), r"hands\[0\].hands\[1\] deals tile"),
        (lambda r: r["hands"][0]["boneyard"].pop(), r"hands\[0\].hands/boneyard must hold all 28 tiles"),
        (lambda r: r["hands"][0].update(opener=3), r"hands\[0\].opener must be an integer in 0..2"),
        (lambda r: r["hands"][0]["actions"].append([0, 58]), r"hands\[0\].actions\[\d+\]\[1\] \(action\)"),
        (lambda r: r["hands"][0]["actions"].append([0]), r"hands\[0\].actions\[\d+\] must be a \[seat, action\] pair"),
        (lambda r: r["hands"][0].pop("points"), r"hands\[0\].points is missing"),
        (lambda r: r["hands"][0].update(pips=[1, True, 2]), r"hands\[0\].pips\[1\] must be an integer"),
        (lambda r: r["scores"].__setitem__(0, r["scores"][0] + 1), "scores must be the start scores plus"),
        (lambda r: r.update(start_scores=[0, 0, 70]), "start_scores must each be below the target 61"),
    ],
)
def test_validation_names_the_field(change, field: str) -> None:
    record = finished_match()
    validate_record(record)
    change(record)
    with pytest.raises(ValueError, match=field):
        validate_record(record)


def test_files_are_written_atomically_and_read_safely(tmp_path: Path) -> None:
    record = finished_match()
    path = tmp_path / "game.json"
    write_record(record, path)
    before = path.read_bytes()
    broken = copy.deepcopy(record)
    broken["scores"] = [0, 0, 0]
    with pytest.raises(ValueError, match="scores"):
        write_record(broken, path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["game.json"]
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: not valid JSON"):
        read_record(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({**record, "format": "x"}))
    with pytest.raises(ValueError, match="other.json: record field format"):
        read_record(tmp_path / "other.json")


def test_wrapper_arguments() -> None:
    with pytest.raises(ValueError, match="players must be 2 strings"):
        RecordingWrapper(draw_env.env(), players=["only one"])
    with pytest.raises(ValueError, match="env must be made by draw_env"):
        RecordingWrapper(object())  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="reset"):
        RecordingWrapper(draw_env.env()).record  # noqa: B018


@pytest.mark.parametrize(
    "convert", [int, np.int8, np.int64, np.uint8, np.array, lambda a: np.array([a])], ids=["int", "int8", "int64", "uint8", "array", "array1"]
)
def test_the_wrapper_records_every_action_the_env_accepts(convert) -> None:
    """NumPy integers and one-element arrays are actions of env(): recorded like Python ints."""
    plain = play(RecordingWrapper(draw_env.env(num_players=3, episode="match")), 4)
    env = RecordingWrapper(draw_env.env(num_players=3, episode="match"))
    env.reset(seed=4)
    rng = random.Random(4)
    for _agent in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        env.step(None if terminated or truncated else convert(int(rng.choice(np.flatnonzero(observation["action_mask"])))))
    assert env.record == plain
    assert "illegal_action" not in env.record and replay_record(env.record) == plain["scores"]
    # What env() refuses, the wrapper refuses with the same message, recording nothing.
    env.reset(seed=4)
    with pytest.raises(ValueError, match=r"action must be an integer in 0\.\.57"):
        env.step(np.array([1, 2]))
    assert env.record["hands"][0]["actions"] == [] and "illegal_action" not in env.record


def test_reading_a_hostile_file_names_the_file(tmp_path: Path) -> None:
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000)
    with pytest.raises(ValueError, match=r"nested\.json: nested deeper than"):
        read_record(nested)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"players": ["caf\xe9"]}')
    with pytest.raises(ValueError, match=r"latin\.json: not UTF-8"):
        read_record(latin)
    long_int = tmp_path / "long.json"
    long_int.write_text('{"num_players": ' + "9" * 5000 + "}")
    with pytest.raises(ValueError, match=r"long\.json: an integer of 5000 digits"):
        read_record(long_int)
    record = finished_match()
    record["hands"][0]["actions"][5] = [0]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"bad\.json: record field hands\[0\]\.actions\[5\] must be"):
        read_record(bad)
    surrogate = finished_match()
    surrogate["players"][1] = "\ud800"
    with pytest.raises(ValueError, match=r"players\[1\] must be Unicode text"):
        validate_record(surrogate)


def hand_record() -> dict:
    return play(RecordingWrapper(draw_env.env(num_players=2)), 6)


@pytest.mark.parametrize(
    ("make", "change", "message"),
    [
        (finished_match, lambda r: r.update(finished=False), "finished must be true: the game ended"),
        (hand_record, lambda r: r.update(finished=False), "finished must be true: the game ended"),
        (finished_match, lambda r: r.update(winner=(r["winner"] + 1) % 3), "winner must be the replay's"),
        (finished_match, lambda r: r.update(winner=None), "winner must be the replay's"),
        (hand_record, lambda r: r.update(winner=1 - r["hands"][0]["winner"]), "winner must be the replay's"),
        (
            finished_match,
            lambda r: r["hands"][0].update(kind={"domino": "blocked", "blocked": "domino"}[r["hands"][0]["kind"]]),
            r"hands\[0\]\.kind must be the replay's",
        ),
        (finished_match, lambda r: r["hands"][1].update(winner=None), r"hands\[1\]\.winner must be the replay's"),
        (hand_record, lambda r: r.update(illegal_action=[0, 57]), "illegal_action must be absent: the last hand of the record is complete"),
    ],
    ids=["match-finished", "hand-finished", "winner", "winner-null", "hand-winner", "kind", "hand-entry-winner", "illegal-after-end"],
)
def test_replay_refuses_a_record_that_contradicts_itself(make, change, message: str) -> None:
    record = make()
    replay_record(record)
    change(record)
    with pytest.raises(ValueError, match=message):
        replay_record(record)


def test_an_unfinished_record_cannot_claim_a_winner_or_an_unended_illegal_action() -> None:
    env = RecordingWrapper(draw_env.env(num_players=2))
    env.reset(seed=3)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    unfinished = env.record
    replay_record(unfinished)
    with pytest.raises(ValueError, match="winner must be the replay's None, got 0"):
        replay_record({**unfinished, "winner": 0})
    with pytest.raises(ValueError, match="finished must be true: an illegal_action ends the game"):
        replay_record({**unfinished, "illegal_action": [unfinished["hands"][0]["actions"][0][0] ^ 1, 57]})
    legal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
    with pytest.raises(ValueError, match="illegal_action must be an illegal action of the seat to act"):
        replay_record({**unfinished, "finished": True, "illegal_action": [env.unwrapped.state_ref.current, legal]})


# ---------------------------------------------------------------------- seeds


@pytest.mark.parametrize("seed", ["abc", 1.5, -1, True, 2**64, [7]], ids=repr)
def test_a_record_seed_is_an_integer_below_2_64_or_nothing(seed: object, tmp_path: Path) -> None:
    record = hand_record()
    for taken in (None, 0, 2**64 - 1):
        validate_record({**record, "seed": taken})
    path = tmp_path / "game.json"
    path.write_text(json.dumps({**record, "seed": seed}))
    with pytest.raises(ValueError, match=r"game\.json: record field seed must be an integer"):
        read_record(path)


def test_every_seed_the_wrapper_takes_is_read_back(tmp_path: Path) -> None:
    """The bound is where a seed is taken: a seed a record could not hold is refused at reset."""
    env = RecordingWrapper(draw_env.env())
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer or None, got 10{25} \(a seed is below 2\*\*64\)"):
        env.reset(seed=10**25)
    record = play(env, 2**64 - 1)
    assert read_record(write_record(record, tmp_path / "game.json"))["seed"] == 2**64 - 1


def test_draw_play_takes_only_a_seed_its_record_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from arena.play import main as draw_play
    from draw_env.io.replay import main as draw_replay

    record = tmp_path / "r.json"
    argv = ["--opponents", "heaviest", "--episode", "hand", "--record", str(record), "--seed"]
    with pytest.raises(SystemExit) as stopped:
        draw_play([*argv, str(10**20)], stdin=io.StringIO(""), stdout=io.StringIO())
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and "Traceback" not in error
    assert f"--seed must be an integer in 0..{2**64 - 1} (below 2**64), got {10**20}" in error
    assert not record.exists()
    assert draw_play([*argv, str(2**64 - 1)], stdin=io.StringIO("1\n" * 200), stdout=io.StringIO()) == 0
    assert draw_replay([str(record)], stdin=io.StringIO(""), stdout=io.StringIO()) == 0
    assert read_record(record)["seed"] == 2**64 - 1


# ---------------------------------------------------------------------------- variants

VARIANTS = [
    (2, "hand", {"max_pip": 3, "hand_size": 3, "protected": 1}),
    (3, "match", {"max_pip": 9, "hand_size": 7, "protected": 0}),
    (4, "match", {"max_pip": 7, "hand_size": 5, "protected": 3}),
    (2, "match", {"max_pip": 2, "hand_size": 2, "protected": 2}),
]


@pytest.mark.parametrize(("num_players", "episode", "variant"), VARIANTS, ids=[str(v) for *_, v in VARIANTS])
def test_a_variant_game_is_recorded_read_and_replayed(num_players: int, episode: str, variant: dict, tmp_path: Path) -> None:
    env = RecordingWrapper(draw_env.env(num_players=num_players, episode=episode, **variant))
    record = play(env, seed=11)
    assert {key: record[key] for key in variant} == variant and record["finished"]
    num_tiles = draw_env.DrawGame(num_players, **variant).num_tiles
    for hand in record["hands"]:
        assert sorted(sum(hand["hands"], []) + hand["boneyard"]) == list(range(num_tiles))
    path = write_record(record, tmp_path / "variant.json")
    assert read_record(path) == record
    assert replay_record(read_record(path)) == record["scores"]
    states = [position.state for position in positions(record)]
    assert all(state.game == draw_env.DrawGame(num_players, **variant) for state in states)


def test_records_of_the_seeds_game_hold_no_variant_fields(tmp_path: Path) -> None:
    record = play(RecordingWrapper(draw_env.env(num_players=4, episode="hand")), seed=2)
    assert not {"max_pip", "hand_size", "protected"} & set(record)
    # The seeds' values written out are the seeds' game too.
    explicit = {**record, "max_pip": 6, "hand_size": 6, "protected": 2}
    assert replay_record(explicit) == record["scores"]


def variant_record() -> dict:
    return play(RecordingWrapper(draw_env.env(num_players=2, episode="hand", max_pip=3, hand_size=3, protected=1)), seed=4)


HOSTILE_VARIANTS = [
    ({"max_pip": 1}, "max_pip must be an integer in 2..9, got 1"),
    ({"max_pip": 10}, "max_pip must be an integer in 2..9, got 10"),
    ({"max_pip": True}, "max_pip must be an integer, got True"),
    ({"max_pip": "3"}, "max_pip must be an integer, got '3'"),
    ({"max_pip": 3.0}, "max_pip must be an integer, got 3.0"),
    ({"max_pip": 2**63}, "max_pip must be an integer in 2..9"),
    ({"max_pip": [3]}, "max_pip must be an integer"),
    ({"hand_size": 0}, "hand_size must be an integer in 1..10, got 0"),
    ({"hand_size": 11}, "hand_size must be an integer in 1..10, got 11"),
    ({"hand_size": -(2**63)}, "hand_size must be an integer in 1..10"),
    ({"hand_size": 5}, "hand_size does not fit: a deal of hand_size=5 to 2 players with protected=1 needs 11 tiles"),
    ({"protected": -1}, "protected must be an integer in 0..10, got -1"),
    ({"protected": 2**63}, "protected must be an integer in 0..10"),
    ({"protected": {"a": 1}}, "protected must be an integer"),
    ({"protected": 5}, "hand_size does not fit"),
    # The deal is checked against the variant's set: a tile beyond it, or one missing.
    ({"max_pip": 2, "hand_size": 2, "protected": 0}, r"hands\[0\]\.(hands\[\d\]|boneyard) must be an integer in 0..5"),
    ({"max_pip": 4}, r"hands\[0\]\.hands/boneyard must hold all 15 tiles"),
]


@pytest.mark.parametrize(("change", "message"), HOSTILE_VARIANTS, ids=[repr(c) for c, _ in HOSTILE_VARIANTS])
def test_hostile_variant_fields_are_refused_naming_the_file_and_field(change: dict, message: str, tmp_path: Path) -> None:
    record = {**variant_record(), **change}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match=f"^{path}: record field {message}") as raised:
        read_record(path)
    assert "\n" not in str(raised.value)


def test_a_variant_record_read_as_the_seeds_game_is_refused() -> None:
    record = play(RecordingWrapper(draw_env.env(max_pip=9)), seed=1)
    del record["max_pip"]
    with pytest.raises(ValueError, match=r"must be an integer in 0..27"):
        validate_record(record)
    seeds = play(RecordingWrapper(draw_env.env()), seed=1)
    with pytest.raises(ValueError, match=r"must hold all 55 tiles"):
        validate_record({**seeds, "max_pip": 9})


def test_variant_actions_are_bounded_by_the_variants_action_count() -> None:
    record = variant_record()  # the double-3 set: 10 tiles, actions 0..21
    record["hands"][0]["actions"].append([0, 22])
    with pytest.raises(ValueError, match=r"actions\[\d+\]\[1\] \(action\) must be an integer in 0..21, got 22"):
        validate_record(record)
    record = variant_record()
    record.update(finished=True, illegal_action=[0, 22])
    with pytest.raises(ValueError, match=r"illegal_action\[1\] must be an integer in 0..21"):
        validate_record(record)
