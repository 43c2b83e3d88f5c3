"""Fuzzing the record readers: random and mutated records give a clean ValueError, or a replay.

Each example starts from a real recorded game (hand and match, 2-4 players), mutates its JSON
values, truncates or nests its text, or inserts odd Unicode, and feeds the result to
:func:`read_record`, :func:`replay_record` and the HTML page. Whatever the record holds, the only
exception is a ``ValueError``; a record that replays gives a page whose data block holds no
markup.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import draw_env
from draw_env.io.records import RecordingWrapper, read_record, replay_record
from draw_env.io.replay import html_page

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ODD_TEXT = ["\u2028", "\u2029", "\ufeff", "\u202e", "\x00", "</script>", "__RECORD__", "<img src=x onerror=1>", "\U0001f600", "\udcff"]


@functools.cache
def real_records() -> tuple[str, ...]:
    """Recorded games, as JSON text: one hand of 2 players, a 3-player match, a 4-player hand, and
    variants: a double-3 hand and a double-9 match."""
    records = []
    games: list[tuple[int, str, int, dict[str, int]]] = [(2, "hand", 1, {}), (3, "match", 2, {}), (4, "hand", 3, {})]
    games += [(2, "hand", 4, {"max_pip": 3, "hand_size": 3, "protected": 1}), (2, "match", 5, {"max_pip": 9, "protected": 0})]
    for players, episode, seed, variant in games:
        env = RecordingWrapper(draw_env.env(num_players=players, episode=episode, **variant))
        env.reset(seed=seed)
        rng = random.Random(seed)
        for _agent in env.agent_iter():
            observation, _reward, terminated, truncated, _info = env.last()
            env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        records.append(json.dumps(env.record))
    return tuple(records)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8) | st.sampled_from(ODD_TEXT),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indices) to a value inside ``value``, the root included."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


#: Values a hostile record may give a variant field: out of range, of another kind, other sets.
VARIANT_VALUES = st.sampled_from([-1, 0, 1, 2, 3, 5, 6, 7, 9, 10, 55, 2**63, True, None, 3.0, "6", [6]]) | JSON_VALUES


def mutate(record: dict, choose: st.DataObject) -> Any:
    """One random change to a value somewhere in ``record``, or to one of its variant fields."""
    path = choose.draw(st.sampled_from(paths(record)))
    kind = choose.draw(st.sampled_from(["replace", "delete", "nest", "bump", "odd_text", "variant"]))
    if kind == "variant" and isinstance(record, dict):
        record[choose.draw(st.sampled_from(["max_pip", "hand_size", "protected"]))] = choose.draw(VARIANT_VALUES)
        return record
    if not path:
        return choose.draw(JSON_VALUES)
    parent = record
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if kind == "replace":
        parent[key] = choose.draw(JSON_VALUES)
    elif kind == "delete":
        del parent[key]
    elif kind == "nest":
        parent[key] = [parent[key]]
    elif kind == "bump" and isinstance(parent[key], int) and not isinstance(parent[key], bool):
        parent[key] += choose.draw(st.sampled_from([-1, 1, 28, 2**63]))
    elif kind == "odd_text":
        parent[key] = f"{parent[key]}{choose.draw(st.sampled_from(ODD_TEXT))}" if isinstance(parent[key], str) else choose.draw(st.sampled_from(ODD_TEXT))
    return record


def check_record(record: Any) -> None:
    """Replay it; if it replays, its seed is one the project takes and its page carries it as inert data."""
    try:
        replay_record(record)
    except ValueError:
        return
    seed = record.get("seed")  # what a record may hold is what the project takes and reads back
    assert seed is None or (type(seed) is int and 0 <= seed < 2**64)
    page = html_page(record)
    data = re.search(r'<script type="application/json" id="game-data">(.*?)</script>', page, re.DOTALL)
    assert data is not None and not re.search(r"[<>&\u2028\u2029]", data.group(1))
    assert json.loads(data.group(1))["record"]["players"] == record["players"]


@FUZZ
@given(st.data())
def test_mutated_records_replay_or_raise_value_error(choose: st.DataObject) -> None:
    record = json.loads(choose.draw(st.sampled_from(real_records())))
    for _ in range(choose.draw(st.integers(1, 3))):
        record = mutate(record, choose) if isinstance(record, dict) else record
    check_record(copy.deepcopy(record))


@FUZZ
@given(st.data())
def test_mutated_record_files_read_or_raise_value_error_naming_the_file(choose: st.DataObject) -> None:
    text = choose.draw(st.sampled_from(real_records())).encode()
    kind = choose.draw(st.sampled_from(["truncate", "insert", "nest", "flip", "random"]))
    where = choose.draw(st.integers(0, len(text)))
    if kind == "truncate":
        text = text[:where]
    elif kind == "insert":
        text = text[:where] + choose.draw(st.sampled_from([s.encode("utf-8", "surrogatepass") for s in ODD_TEXT] + [b"\xff", b"\xc3", b'"\\ud800"'])) + text[where:]
    elif kind == "nest":
        depth = choose.draw(st.integers(1, 200))
        text = b"[" * depth + text + b"]" * depth
    elif kind == "flip" and text:
        index = where % len(text)
        text = text[:index] + bytes([choose.draw(st.integers(0, 255))]) + text[index + 1 :]
    else:
        text = choose.draw(st.binary(max_size=64))
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "fuzzed.json"
        path.write_bytes(text)
        try:
            record = read_record(path)
        except ValueError as error:
            assert str(error).startswith(str(path)) and "\n" not in str(error)
            return
    check_record(record)
