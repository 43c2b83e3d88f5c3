"""Game records: write, read, validate and replay a played game as JSON (``docs/records.md``).

A record is a plain dict (JSON object)::

    {"format": "draw-dominoes-record", "version": 1,
     "num_players": 2, "episode": "match", "reward": "zero_sum",
     "players": ["ppo", "ismcts"],
     "hands": [{"hands": [[0, 7, ...], [1, 2, ...]], "boneyard": [3, 4, ...], "opener": 0,
                "actions": [[0, 54], [1, 53], [0, 56], ...],
                "points": [0, 23], "pips": [23, 0], "kind": "domino", "winner": 1}],
     "scores": [100, 42], "finished": true, "winner": 0}

Each field (those of the contract and those this module adds: ``kind``, ``winner``,
``finished``, ``illegal_action``, ``seed``, and the variant: ``max_pip``, ``hand_size``,
``protected``, written only for a game other than the seeds') is described on the docs page
"Game records".

:class:`RecordingWrapper` records any game played through ``draw_env.env()`` or ``raw_env()``;
:func:`replay_record` plays a record back through ``draw_env.env()`` and checks every hand's
points and the scores; :func:`positions` yields the rules state after every action (for viewers).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from pettingzoo.utils import BaseWrapper

from draw_env import draw_dominoes, rules
from draw_env.checks import MAX_SEED, is_integer
from draw_env.io.files import write_text_atomic
from draw_env.io.untrusted import read_json
from draw_env.rules import (
    PROTECTED_BONEYARD,
    DrawGame,
    DrawState,
    action_name,
    next_opener,
    reward_fits_episode,
)
from draw_env.tiles import DEFAULT_MAX_PIP, MAX_PIP, MIN_PIP, tile_set

FORMAT = "draw-dominoes-record"
VERSION = 1

_KINDS = ("domino", "blocked")

#: The variant's fields, written only for a game other than the seeds' (so that records of the
#: seeds' game stay as they were); an absent one means the seeds' value.
VARIANT_FIELDS = ("max_pip", "hand_size", "protected")


# ---------------------------------------------------------------------------- recording


class RecordingWrapper(BaseWrapper):
    """Records every hand of the episode played through the wrapped environment.

    Args:
        env: an environment made by ``draw_env.env()`` or ``draw_env.raw_env()`` (possibly wrapped).
        players: what sits in each seat (free text, e.g. agent names); default the agent names.

    ``record`` is the record dict of the episode being played or just finished (a fresh
    copy each time, safe to keep). Each ``reset`` starts a new record.

    Example::

        env = RecordingWrapper(draw_env.env(episode="match"), players=["me", "heaviest"])
        env.reset(seed=3)
        for agent in env.agent_iter():
            ...
        write_record(env.record, "game.json")
    """

    def __init__(self, env: Any, players: Sequence[str] | None = None) -> None:
        super().__init__(env)
        base = getattr(env, "unwrapped", None)
        if not isinstance(base, draw_dominoes.raw_env):
            raise ValueError(f"env must be made by draw_env.env() or draw_env.raw_env(), got {env!r}")  # noqa: TRY004
        count = base.game.num_players
        if players is None:
            players = list(base.possible_agents)
        elif (
            isinstance(players, (str, bytes))
            or not isinstance(players, Sequence)
            or len(players) != count
            or not all(isinstance(name, str) for name in players)
        ):
            raise ValueError(f"players must be {count} strings (one per seat), got {players!r}")
        self.players = list(players)
        self._record: dict[str, Any] | None = None

    @property
    def record(self) -> dict[str, Any]:
        """The record of the current (or just finished) episode, as a new dict."""
        if self._record is None:
            raise RuntimeError("call reset() before reading the record")
        return json.loads(json.dumps(self._record))

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        base = self.env.unwrapped
        state = base.state_ref
        record: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "num_players": base.game.num_players,
            "episode": base.episode,
            "reward": base.reward_scheme,
            **variant_fields(base.game),
            "players": list(self.players),
            "hands": [_deal_of(state)],
            "scores": list(state.scores),
            "finished": False,
            "winner": None,
        }
        if options is not None and options.get("scores") is not None:
            record["start_scores"] = list(state.scores)
        if seed is not None:
            record["seed"] = int(seed)
        self._record = record

    def step(self, action: Any) -> None:
        base = self.env.unwrapped
        record = self._record
        agent = base.agent_selection if record is not None and base.agents else None
        if record is None or agent is None or base.terminations[agent] or base.truncations[agent]:
            self.env.step(action)  # before reset, after the end, or a dead agent's step: nothing to record
            return
        # The environment's own reading of an action (NumPy integers and one-element arrays
        # included); what it refuses raises the environment's ValueError, and nothing changes.
        action = draw_dominoes.as_action(action, base.game.num_actions)
        state = base.state_ref
        seat = state.current
        legal = state.is_legal(action)
        # The rules, applied to a copy, say how the hand ends: in a match that goes on, the env
        # deals the next hand within the same step.
        probe = state.clone()
        if legal:
            probe.apply_action(action)
        self.env.step(action)  # raw_env raises on an illegal action: then nothing is recorded
        if not legal:
            # Through env(), an illegal action ends the episode and changes nothing else.
            if all(base.terminations.values()):
                record["illegal_action"] = [seat, action]
                record["finished"] = True
            return
        hand = record["hands"][-1]
        hand["actions"].append([seat, action])
        result = probe.result
        if result is None:
            return
        hand["points"] = list(result.points)
        hand["pips"] = list(result.pips)
        hand["kind"] = result.kind
        hand["winner"] = result.winner
        record["scores"] = list(probe.scores)
        if base.episode == "match" and not probe.is_match_over:
            record["hands"].append(_deal_of(base.state_ref))
            return
        record["finished"] = True
        record["winner"] = result.winner if base.episode == "hand" else probe.match_winner


def variant_fields(game: DrawGame) -> dict[str, int]:
    """The record fields of ``game``'s variant: none for the seeds' game, else all three."""
    return {} if game.is_default else dict(game.variant)


def variant_text(game: DrawGame) -> str:
    """The variant in words, e.g. ``double-9 set, 7 tiles each, 0 protected``."""
    return f"double-{game.max_pip} set, {game.hand_size} tiles each, {game.protected} protected"


def _deal_of(state: DrawState) -> dict[str, Any]:
    """A hand entry holding the deal of the hand ``state`` has just started."""
    return {
        "hands": [state.hand_tiles(seat) for seat in range(state.num_players)],
        "boneyard": list(state.boneyard),
        "opener": state.opener,
        "actions": [],
    }


# ---------------------------------------------------------------------------- validation


#: Longest description of a problem in a message: a record's values can be megabytes long.
_MAX_PROBLEM_CHARS = 300


def _fail(field: str, problem: str) -> NoReturn:
    if len(problem) > _MAX_PROBLEM_CHARS:
        problem = problem[:_MAX_PROBLEM_CHARS] + "..."
    raise ValueError(f"record field {field} {problem}")


def _check_int_field(field: str, value: object, minimum: int, maximum: int | None = None) -> int:
    if not is_integer(value):
        _fail(field, f"must be an integer, got {value!r}")
    number = int(value)  # type: ignore[call-overload]  # an Integral, checked above
    if number < minimum or (maximum is not None and number > maximum):
        bounds = f"in {minimum}..{maximum}" if maximum is not None else f">= {minimum}"
        _fail(field, f"must be an integer {bounds}, got {value!r}")
    return number


def _check_int_list(field: str, value: object, length: int, minimum: int = 0) -> list[int]:
    if not isinstance(value, list) or len(value) != length:
        _fail(field, f"must be a list of {length} integers, got {value!r}")
    return [_check_int_field(f"{field}[{i}]", item, minimum) for i, item in enumerate(value)]


def validate_record(record: object) -> None:
    """Check that ``record`` has a record's fields, with values of the right kinds.

    Checks the structure and what can be checked without playing: every deal holds each tile
    once, actions are ``[seat, action]`` pairs in range, ``scores`` are the start scores plus
    every hand's points. :func:`replay_record` checks the rest by playing.

    Raises:
        ValueError: naming the field and what is wrong with it.
    """
    if not isinstance(record, Mapping):
        raise ValueError(f"record must be a JSON object (dict), got {type(record).__name__}")  # noqa: TRY004
    for key in ("format", "version", "num_players", "episode", "reward", "players", "hands", "scores"):
        if key not in record:
            _fail(key, "is missing")
    if record["format"] != FORMAT:
        _fail("format", f"must be {FORMAT!r}, got {record['format']!r}")
    if not is_integer(record["version"]) or record["version"] != VERSION:
        _fail("version", f"must be {VERSION} (the only version this code reads), got {record['version']!r}")
    players = record["num_players"]
    if not is_integer(players) or players not in rules.PLAYER_COUNTS:
        _fail("num_players", f"must be one of 2, 3, 4, got {players!r}")
    if record["episode"] not in rules.EPISODES:
        _fail("episode", f"must be one of {', '.join(map(repr, rules.EPISODES))}, got {record['episode']!r}")
    if record["reward"] not in rules.REWARDS:
        _fail("reward", f"must be one of {', '.join(map(repr, rules.REWARDS))}, got {record['reward']!r}")
    if not reward_fits_episode(record["reward"], record["episode"]):
        _fail("reward", "'win_loss' needs episode 'match'")
    names = record["players"]
    if not isinstance(names, list) or len(names) != players or not all(isinstance(n, str) for n in names):
        _fail("players", f"must be a list of {players} strings, got {names!r}")
    for seat, name in enumerate(names):
        if not name.isprintable() and any(0xD800 <= ord(char) <= 0xDFFF for char in name):
            _fail(f"players[{seat}]", f"must be Unicode text, got a lone surrogate in {name!r}")
    finished = record.get("finished", True)
    if not isinstance(finished, bool):
        _fail("finished", f"must be true or false, got {finished!r}")
    game = _checked_game(record, int(players))
    start = [0] * players
    if "start_scores" in record:
        if record["episode"] != "match":
            _fail("start_scores", "needs episode 'match'")
        start = _check_int_list("start_scores", record["start_scores"], players)
        if max(start) >= game.target:
            _fail("start_scores", f"must each be below the target {game.target}, got {start}")
    hands = record["hands"]
    if not isinstance(hands, list) or not hands:
        _fail("hands", f"must be a non-empty list of hands, got {hands!r}")
    if record["episode"] == "hand" and len(hands) != 1:
        _fail("hands", f"must hold exactly one hand with episode 'hand', got {len(hands)}")
    incomplete = not finished or "illegal_action" in record
    totals = list(start)
    for k, hand in enumerate(hands):
        # Only the last hand of an unfinished game (or one ended by an illegal action) has no result.
        result_optional = incomplete and k == len(hands) - 1
        for seat, points in enumerate(_validate_hand(f"hands[{k}]", hand, game, result_optional)):
            totals[seat] += points
    scores = _check_int_list("scores", record["scores"], players)
    if scores != totals:
        _fail("scores", f"must be the start scores plus every hand's points, {totals}, got {scores}")
    if "illegal_action" in record:
        pair = record["illegal_action"]
        if not isinstance(pair, list) or len(pair) != 2:
            _fail("illegal_action", f"must be a [seat, action] pair, got {pair!r}")
        _check_int_field("illegal_action[0]", pair[0], 0, players - 1)
        _check_int_field("illegal_action[1]", pair[1], 0, game.num_actions - 1)
    winner = record.get("winner")
    if winner is not None:
        _check_int_field("winner", winner, 0, players - 1)
    seed = record.get("seed")
    if seed is not None:
        _check_int_field("seed", seed, 0, MAX_SEED)


def _checked_game(record: Mapping[str, Any], players: int) -> DrawGame:
    """The game of a record with ``players`` seats: its variant fields bounded, then combined."""
    max_pip = _check_int_field("max_pip", record.get("max_pip", DEFAULT_MAX_PIP), MIN_PIP, MAX_PIP)
    num_tiles = tile_set(max_pip).num_tiles
    hand_size = record.get("hand_size")
    if hand_size is not None:
        hand_size = _check_int_field("hand_size", hand_size, 1, num_tiles)
    protected = _check_int_field("protected", record.get("protected", PROTECTED_BONEYARD), 0, num_tiles)
    try:
        return DrawGame(players, max_pip, hand_size, protected)
    except ValueError as error:  # the deal does not fit the set: the message names all three numbers
        _fail("hand_size", f"does not fit: {error}")


def record_game(record: Mapping[str, Any]) -> DrawGame:
    """The game (players and variant) a validated record was played with."""
    return _checked_game(record, int(record["num_players"]))


def _check_dealt(field: str, dealt: list[object], seen: set[int], num_tiles: int) -> None:
    """Check that ``dealt`` holds tile ids, none of them in ``seen``; add them to ``seen``."""
    for tile in dealt:
        tile = _check_int_field(field, tile, 0, num_tiles - 1)
        if tile in seen:
            _fail(field, f"deals tile {tile} twice")
        seen.add(tile)


def _validate_hand(field: str, hand: object, game: DrawGame, result_optional: bool) -> list[int]:
    """Check one hand entry against ``game``'s set; return its points (zeros when it has no result)."""
    players, num_tiles = game.num_players, game.num_tiles
    if not isinstance(hand, Mapping):
        _fail(field, f"must be an object, got {hand!r}")
    for key in ("hands", "boneyard", "opener", "actions"):
        if key not in hand:
            _fail(f"{field}.{key}", "is missing")
    deal = hand["hands"]
    if not isinstance(deal, list) or len(deal) != players:
        _fail(f"{field}.hands", f"must be a list of {players} lists of tile ids, got {deal!r}")
    seen: set[int] = set()
    for seat, tiles_held in enumerate(deal):
        if not isinstance(tiles_held, list) or not tiles_held:
            _fail(f"{field}.hands[{seat}]", f"must be a non-empty list of tile ids, got {tiles_held!r}")
        _check_dealt(f"{field}.hands[{seat}]", tiles_held, seen, num_tiles)
    boneyard = hand["boneyard"]
    if not isinstance(boneyard, list) or len(boneyard) < game.protected:
        _fail(f"{field}.boneyard", f"must be a list of at least {game.protected} tile ids, got {boneyard!r}")
    _check_dealt(f"{field}.boneyard", boneyard, seen, num_tiles)
    if len(seen) != num_tiles:
        missing = sorted(set(range(num_tiles)) - seen)
        _fail(f"{field}.hands/boneyard", f"must hold all {num_tiles} tiles; missing {missing}")
    _check_int_field(f"{field}.opener", hand["opener"], 0, players - 1)
    actions = hand["actions"]
    if not isinstance(actions, list):
        _fail(f"{field}.actions", f"must be a list of [seat, action] pairs, got {actions!r}")
    for step, pair in enumerate(actions):
        if not isinstance(pair, list) or len(pair) != 2:
            _fail(f"{field}.actions[{step}]", f"must be a [seat, action] pair, got {pair!r}")
        _check_int_field(f"{field}.actions[{step}][0] (seat)", pair[0], 0, players - 1)
        _check_int_field(f"{field}.actions[{step}][1] (action)", pair[1], 0, game.num_actions - 1)
    has_result = "points" in hand or "pips" in hand
    if not has_result:
        if not result_optional:
            _fail(f"{field}.points", "is missing (only the last hand of an unfinished game may lack a result)")
        return [0] * players
    for key in ("points", "pips"):
        if key not in hand:
            _fail(f"{field}.{key}", "is missing")
    points = _check_int_list(f"{field}.points", hand["points"], players)
    _check_int_list(f"{field}.pips", hand["pips"], players)
    if "kind" in hand and hand["kind"] not in _KINDS:
        _fail(f"{field}.kind", f"must be one of {', '.join(map(repr, _KINDS))}, got {hand['kind']!r}")
    return points


# ---------------------------------------------------------------------------- files


def write_record(record: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Validate ``record`` and write it as JSON to ``path`` atomically (temp file, then rename).

    Returns:
        The path written. Parent directories are created.
    """
    validate_record(record)
    return write_text_atomic(path, json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a record written by :func:`write_record` (plain JSON: nothing runs).

    The file is read with :func:`draw_env.io.untrusted.read_json`: bounded in size and nesting,
    strict UTF-8, no repeated keys, no over-long numbers.

    Raises:
        ValueError: if the file is not JSON or not a valid record; one line that starts with the
            file's name and names the field, e.g. ``game.json: record field hands[2].actions[5]
            must be a [seat, action] pair, got [0]``.
    """
    record = read_json(path)
    try:
        validate_record(record)
    except ValueError as error:
        raise ValueError(f"{os.fspath(path)}: {error}") from None
    return record


# ---------------------------------------------------------------------------- replaying


def replay_record(record: Mapping[str, Any]) -> list[int]:
    """Play every hand of ``record`` through ``draw_env.env()`` and check it against the record.

    Each hand is dealt as recorded (reset options ``hands``, ``boneyard``, ``opener`` and, in a
    match, the scores so far), its actions are stepped in order, and the hand must end exactly
    at its last action with the recorded points and pips (and ``kind`` and ``winner``, when the
    record gives them); a match must go on after every hand but the last; each later hand's
    opener is one seat clockwise from the previous one's. Every field the replay can recompute
    must agree: ``finished`` (the game ended, by its rules or by the ``illegal_action``), the
    ``illegal_action`` (illegal for the seat to act where the record stops), ``winner``, ``scores``.

    Returns:
        The final scores.

    Raises:
        ValueError: on any mismatch, naming the field (e.g. ``hands[1].actions[3]``).
    """
    validate_record(record)
    game = record_game(record)
    players = game.num_players
    episode = record["episode"]
    env = draw_dominoes.env(num_players=players, episode=episode, reward=record["reward"], **game.variant)
    scores = list(record.get("start_scores", [0] * players))
    hands = record["hands"]
    finished = record.get("finished", True)
    illegal = record.get("illegal_action")
    if illegal is not None and not finished:
        _fail("finished", "must be true: an illegal_action ends the game")
    # What the replay says of the whole game: over by the rules, and who won.
    over = False
    winner: int | None = None
    for k, hand in enumerate(hands):
        field = f"hands[{k}]"
        last = k == len(hands) - 1
        if k > 0 and hand["opener"] != next_opener(hands[k - 1]["opener"], players):
            _fail(
                f"{field}.opener",
                f"must be one seat clockwise from hands[{k - 1}]'s opener {hands[k - 1]['opener']}, got {hand['opener']}",
            )
        options: dict[str, Any] = {"hands": hand["hands"], "boneyard": hand["boneyard"], "opener": hand["opener"]}
        if episode == "match":
            options["scores"] = scores
        env.reset(options=options)
        base = env.unwrapped
        actions = hand["actions"]
        state = base.state_ref
        probe = state
        for step, (seat, action) in enumerate(actions):
            where = f"{field}.actions[{step}]"
            state = base.state_ref
            if state.result is not None or state.hand_number != 0:
                _fail(where, f"follows the end of the hand ({action_name(action, game=game)})")
            if seat != state.current:
                _fail(where, f"says seat {seat} acts, but it is seat {state.current}'s turn")
            if not state.is_legal(action):
                _fail(
                    where,
                    f"plays {action} ({action_name(action, game=game)}) by seat {seat}, which is not legal; legal: "
                    + ", ".join(f"{a} ({action_name(a, game=game)})" for a in state.legal_actions()),
                )
            # The rules state after the action, kept: in a match the env deals on at a hand's end.
            probe = state.clone()
            probe.apply_action(action)
            env.step(action)
        result = probe.result
        if "points" not in hand:
            if result is not None:
                _fail(f"{field}.points", f"is missing, yet the hand ended at its action {len(actions) - 1}")
            if illegal is not None:
                seat, action = illegal
                if seat != probe.current or probe.is_legal(action):
                    _fail(
                        "illegal_action",
                        f"must be an illegal action of the seat to act ({probe.current}) where {field} stops, "
                        f"got {action} ({action_name(action, game=game)}) by seat {seat}",
                    )
            break
        if result is None:
            _fail(f"{field}.actions", f"must end the hand, but it goes on after its {len(actions)} actions")
        for key, replayed in (("points", list(result.points)), ("pips", list(result.pips))):
            if list(hand[key]) != replayed:
                _fail(f"{field}.{key}", f"must be the replay's {replayed}, got {hand[key]}")
        for key, value in (("kind", result.kind), ("winner", result.winner)):
            if key in hand and (hand[key] != value or type(hand[key]) is not type(value)):
                _fail(f"{field}.{key}", f"must be the replay's {value!r}, got {hand[key]!r}")
        scores = list(probe.scores)
        over = episode == "hand" or probe.is_match_over
        winner = result.winner if episode == "hand" else probe.match_winner
        if not last and over:
            _fail("hands", f"go on after the match ended in {field} (scores {scores})")
    else:
        if illegal is not None:
            _fail("illegal_action", "must be absent: the last hand of the record is complete, so the game ended by its rules")
        if over != finished:
            _fail(
                "finished",
                f"must be {'true' if over else 'false'}: the "
                + ("game ended" if over else f"match goes on after the last hand (scores {scores})"),
            )
    if list(record["scores"]) != scores:
        _fail("scores", f"must be the replay's {scores}, got {record['scores']}")
    if "winner" in record:
        expected = winner if over and illegal is None else None
        if record["winner"] != expected:
            _fail("winner", f"must be the replay's {expected!r}, got {record['winner']!r}")
    return scores


@dataclass(frozen=True)
class Position:
    """One moment of a recorded game, for viewers.

    Attributes:
        hand: index of the hand in the record.
        step: actions of that hand played so far (0 = just dealt).
        state: the rules state after those actions (a private copy).
        last: the ``(seat, action)`` just played, or ``None`` at a deal.
    """

    hand: int
    step: int
    state: DrawState
    last: tuple[int, int] | None


def positions(record: Mapping[str, Any]) -> Iterator[Position]:
    """Every position of a (validated) record: each hand's deal, then the state after each action.

    Uses the rules core directly (no environment), so it is cheap enough for viewers.

    Raises:
        ValueError: if an action is not legal where the record plays it.
    """
    validate_record(record)
    game = record_game(record)
    scores = list(record.get("start_scores", [0] * game.num_players))
    for k, hand in enumerate(record["hands"]):
        state = game.state_from_deal(hand["hands"], hand["boneyard"], hand["opener"], scores)
        yield Position(k, 0, state.clone(), None)
        for step, (seat, action) in enumerate(hand["actions"]):
            if seat != state.current or not state.is_legal(action):
                raise ValueError(f"hand {k}, step {step}: action {action} ({action_name(action, game=game)}) by seat {seat} is not legal")
            state.apply_action(action)
            yield Position(k, step + 1, state.clone(), (seat, action))
        scores = list(state.scores)
