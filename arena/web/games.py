"""The games ``draw-web`` holds: set-up checking, play, views, hints, records (no HTTP here).

A :class:`WebGame` is one hand or match at a table of 2 to 4 seats, each a person or an agent.
The server keeps every game (:class:`GameStore`, bounded in number and idle age) and the client
only ever names a game by its id and sends an action id with the step it answers; everything
else is decided here from the rules (:mod:`draw_env.rules`): a move that is not the current
person's, not legal, or not for the current step is refused and changes nothing.

The agents decide elsewhere: a game holds each agent seat's spec and asks a ``decide`` callable
(a :class:`arena.web.decisions.DecisionPool`'s, which runs them in worker processes within a time
limit) for each move and hint, so a game keeps no agent, and no search tree, between requests.
A spec that a client names is held to :mod:`arena.web.budgets`.

Shapes: a *view* (:meth:`WebGame.view`) is a JSON-ready dict of what the seat to move may see
(its own tiles, the line, counts and scores; the other hands only once a hand is over); a *hint*
(:meth:`WebGame.hint`) lists the hint agent's probability (and value, when it has one) of each
legal move; :meth:`WebGame.visible_record` is the game's record as the viewer may see it.
"""

from __future__ import annotations

import copy
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import draw_env
from arena.hints import DEFAULT_HINT, HINT_STREAM, Hint, default_hint
from arena.options import check_plays_variant, table_obs_type
from arena.play_messages import message, result_text, summarise_turns
from arena.specs import FILE_ARGUMENTS, Spec, parse_agent_spec
from arena.web.budgets import page_kwargs
from arena.web.decisions import DecisionFailed, PoolClosed, Task
from draw_env import describe
from draw_env.checks import MAX_SEED
from draw_env.io.records import RecordingWrapper, write_record
from draw_env.render import oriented_line
from draw_env.rules import (
    DEFAULT_VARIANT,
    EPISODES,
    LANGUAGES,
    PLAYER_COUNTS,
    WORDS,
    DrawGame,
    DrawState,
    action_name,
    variant_numbers,
)
from draw_env.tiles import MAX_PIP, MIN_PIP, tiles_in

#: The seat text that means a person plays it (the page's own word, in any case).
PERSON = "person"
#: The default table: a person against the shipped 2-player network, one match.
DEFAULT_SEATS = (PERSON, "network")
#: The longest seat or hint text the server reads: agent specs are short.
MAX_SPEC_CHARS = 200
#: A game id: 128 random bits, URL-safe base64.
GAME_ID = re.compile(r"[A-Za-z0-9_-]{22}")
#: The ``format`` of a record asked for before the game is over: it holds what the viewer may see
#: (their own tiles, every action), so it is not a game record and cannot be replayed.
PARTIAL_FORMAT = "draw-dominoes-partial-record"
#: What a decision callable is: a task in, the agent's answer out (:func:`arena.web.decisions.decide`).
Decide = Callable[[Task], Any]


class MoveRefused(ValueError):
    """A move the game does not take (not your turn, stale, illegal); the game is unchanged."""


class StaleMove(MoveRefused):
    """A move sent for another step than the game's current one (a double click, an old page)."""


# ---------------------------------------------------------------------------- set-up


@dataclass(frozen=True)
class Setup:
    """A checked table: ``seats[i]`` is :data:`PERSON` or an agent spec (name, keyword arguments)."""

    seats: tuple[str, ...]
    episode: str = "match"
    max_pip: int = 6
    hand_size: int | None = None
    protected: int = 2
    seed: int = 0
    lang: str = "en"
    hint: str = DEFAULT_HINT

    @property
    def game(self) -> DrawGame:
        return DrawGame(len(self.seats), self.max_pip, self.hand_size, self.protected)


def _field_int(data: Mapping[str, Any], key: str, default: int | None, low: int, high: int) -> int | None:
    value = data.get(key, default)
    if value is None or value == "":
        return default
    if type(value) is not int or not low <= value <= high:  # bool is not an int here
        raise ValueError(f"{key} must be an integer in {low}..{high}, got {_short(value)}")
    return value


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


def _spec_text(key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_SPEC_CHARS:
        raise ValueError(f"{key} must be a person or an agent spec of 1 to {MAX_SPEC_CHARS} characters, got {_short(value)}")
    return value.strip()


def parse_setup(data: object, named: Mapping[str, str] | None = None) -> Setup:
    """The :class:`Setup` a client's JSON object asks for, every field checked.

    Fields: ``seats`` (2 to 4 strings: ``"person"``, an agent spec as ``draw-eval`` takes it, or
    a name the server was started with, ``--agent NAME=AGENT``), ``episode``, ``variant`` (a name
    of :data:`draw_env.rules.VARIANTS`) or ``max_pip``, ``hand_size``, ``protected``, ``seed``
    (absent: random), ``lang``, ``hint``. An agent spec
    from the client may not name a file (``path=``): files are named only on the command line;
    and its agent and budget must be among those a page may ask for (:mod:`arena.web.budgets`).

    Raises:
        ValueError: naming the field and what is wrong with it.
    """
    named = named or {}
    if not isinstance(data, Mapping):
        raise ValueError("the set-up must be a JSON object")  # noqa: TRY004
    unknown = sorted(set(data) - {"seats", "episode", "variant", "max_pip", "hand_size", "protected", "seed", "lang", "hint"})
    if unknown:
        raise ValueError(f"unknown set-up field {_short(unknown[0])}")
    seats = data.get("seats", list(DEFAULT_SEATS))
    if not isinstance(seats, list) or len(seats) not in PLAYER_COUNTS:
        raise ValueError(f"seats must be a list of 2 to 4 seats, got {_short(seats)}")
    texts = [_spec_text(f"seats[{index}]", seat) for index, seat in enumerate(seats)]
    texts = [PERSON if text.lower() == PERSON else text for text in texts]
    if PERSON not in texts:
        raise ValueError("seats must hold at least one person")
    episode = data.get("episode", "match")
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {', '.join(EPISODES)}, got {_short(episode)}")
    lang = data.get("lang", "en")
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {_short(lang)}")
    given = {
        key: value for key, value in (
            ("max_pip", _field_int(data, "max_pip", None, MIN_PIP, MAX_PIP)),
            ("hand_size", _field_int(data, "hand_size", None, 1, 55)),
            ("protected", _field_int(data, "protected", None, 0, 55)),
        ) if value is not None
    }
    variant = data.get("variant")
    # A named variant (one of draw_env.rules.VARIANTS, nothing else) or the numbers given.
    numbers = {**DEFAULT_VARIANT, **given} if variant in (None, "") else variant_numbers(variant, given)
    seed = _field_int(data, "seed", None, 0, MAX_SEED)
    if seed is None:
        seed = secrets.randbelow(2**31)
    try:
        game = DrawGame(len(texts), **numbers)
    except ValueError as error:
        raise ValueError(f"max_pip, hand_size, protected: {error}") from None
    hint = data.get("hint")
    hint_text = default_hint(game) if hint in (None, "") else _spec_text("hint", hint)
    for key, text in [*((f"seats[{i}]", t) for i, t in enumerate(texts) if t != PERSON), ("hint", hint_text)]:
        _check_spec(key, text, game, named)
    return Setup(tuple(texts), episode, game.max_pip, game.hand_size, game.protected, seed, lang, hint_text)


def _check_spec(key: str, text: str, game: DrawGame, named: Mapping[str, str]) -> None:
    if text in named:
        return  # checked when the server started
    try:
        name, kwargs = parse_agent_spec(text)
    except (ValueError, ImportError) as error:
        raise ValueError(f"{key}: {error}") from None
    files = sorted(set(kwargs) & set(FILE_ARGUMENTS))
    if files:
        raise ValueError(f"{key}: the page may not name a file ({files[0]}=); start draw-web with --agent NAME=AGENT")
    try:
        page_kwargs(name, kwargs)
    except ValueError as error:
        raise ValueError(f"{key}: {error}") from None
    try:
        check_plays_variant([name], game, key)
    except ValueError as error:
        raise ValueError(str(error)) from None


def resolve_spec(text: str, named: Mapping[str, str]) -> Spec:
    """The spec a seat or hint text runs: a name the server was started with, as its operator
    gave it; else the page's spec within :mod:`arena.web.budgets` (with its time budget)."""
    if text in named:
        return parse_agent_spec(named[text])
    name, kwargs = parse_agent_spec(text)
    return name, page_kwargs(name, kwargs)


# ---------------------------------------------------------------------------- one game


@dataclass
class HandSummary:
    """A finished hand as the page shows it: every hand face up, the points, the result."""

    hand: int
    text: str
    line: list[list[int]]
    revealed: list[dict[str, Any]]
    scores: list[int]


@dataclass
class WebGame:
    """One game: the environment, its agents' specs, the log of actions, and a lock for its requests.

    ``decide`` answers the agents' decisions (:class:`arena.web.decisions.Task`); the agent seat
    ``s`` plays at step ``k`` seeded from ``(seed, s, k)``, the hint agent from ``(seed, 100, k)``.
    """

    game_id: str
    setup: Setup
    labels: list[str]
    seat_specs: dict[int, Spec]
    hint_spec: Spec
    env: RecordingWrapper
    decide: Decide
    step: int = 0
    #: Every action: (hand index, seat, action).
    log: list[tuple[int, int, int]] = field(default_factory=list)
    #: The tile each person's latest draw brought, by seat (only they see it).
    drawn: dict[int, int] = field(default_factory=dict)
    summaries: list[HandSummary] = field(default_factory=list)
    record_path: Path | None = None
    #: Why the finished game's record is not in the records folder yet (it is kept until it is), or None.
    record_error: str | None = None
    #: Why the game cannot go on (an agent that refused the position or ran out of time), or None.
    failure: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    used: float = field(default_factory=time.monotonic)
    #: The last hint and its step: asked again for the same position, it is not searched again.
    _hint: tuple[int, dict[str, Any]] | None = None

    @classmethod
    def start(
        cls, game_id: str, setup: Setup, decide: Decide, named: Mapping[str, str] | None = None,
        obs_type: str | None = None,
    ) -> WebGame:
        """Deal and let the agents play up to the first person's turn; the environment gives
        ``obs_type`` (``None``: what the agents and the hint agent read,
        :func:`arena.options.table_obs_type`)."""
        named = dict(named or {})
        game = setup.game
        players = len(setup.seats)
        specs = {seat: resolve_spec(text, named) for seat, text in enumerate(setup.seats) if text != PERSON}
        hint = resolve_spec(setup.hint, named)
        labels = [PERSON if text == PERSON else text for text in setup.seats]
        env = RecordingWrapper(
            draw_env.env(num_players=players, episode=setup.episode, reward="points", lang=setup.lang,
                         obs_type=table_obs_type([*specs.values(), hint], obs_type), **game.variant),
            players=labels,
        )
        env.reset(seed=setup.seed)
        web_game = cls(game_id, setup, labels, specs, hint, env, decide)
        web_game.advance()
        return web_game

    # -- state

    @property
    def state(self) -> DrawState:
        return self.env.unwrapped.state_ref

    @property
    def game(self) -> DrawGame:
        return self.env.unwrapped.game

    @property
    def finished(self) -> bool:
        base = self.env.unwrapped
        return not base.agents or all(base.terminations.values()) or all(base.truncations.values())

    def person_to_move(self) -> int | None:
        """The seat of the person to move, or None (the game is over)."""
        if self.finished or self.failure is not None:
            return None
        seat = self.state.current
        return seat if seat not in self.seat_specs else None

    # -- play

    def _apply(self, action: int) -> None:
        """Play ``action`` (legal, checked by the caller) for the seat to move."""
        state = self.state
        seat = state.current
        probe = state.clone()
        probe.apply_action(action)  # the rules on a copy: the drawn tile, and how the hand ends
        if seat not in self.seat_specs:
            new = list(tiles_in(probe.hands[seat] & ~state.hands[seat]))
            if new:
                self.drawn[seat] = new[0]
            else:
                self.drawn.pop(seat, None)
        self.log.append((state.hand_number, seat, action))
        self.env.step(action)
        self.step += 1
        if probe.result is not None:
            self.summaries.append(self._summary(probe))

    def _summary(self, finished: DrawState) -> HandSummary:
        result = finished.result
        assert result is not None
        names = self.game.tiles.names
        revealed = [
            {
                "seat": seat,
                "tiles": [list(self.game.tiles.tiles[t]) for t in finished.hand_tiles(seat)],
                "text": message(
                    self.setup.lang,
                    "revealed",
                    who=f"player_{seat}",
                    tiles=" ".join(names[t] for t in finished.hand_tiles(seat)) or message(self.setup.lang, "no_tiles"),
                    pips=result.pips[seat],
                    points=result.points[seat],
                ).strip(),
                "pips": result.pips[seat],
                "points": result.points[seat],
            }
            for seat in range(finished.num_players)
        ]
        text = message(self.setup.lang, "hand_over", hand=finished.hand_number + 1, result=result_text(finished, self.setup.lang))
        return HandSummary(
            finished.hand_number, text.strip("= "), [list(pair) for pair in oriented_line(finished)], revealed, list(finished.scores)
        )

    def _task(self, kind: Literal["act", "hint"], spec: Spec, stream: int) -> Task:
        """The decision of ``spec`` at this step, for the player to move, seeded from ``stream``."""
        seat = self.state.current
        name, kwargs = spec
        coordinates = (self.setup.seed, stream, self.step)
        return Task(kind, name, kwargs, coordinates, self.env.observe(f"player_{seat}"), self.state.num_players)

    def advance(self) -> None:
        """Let the agents play until a person is to move or the game is over.

        Raises:
            PoolClosed: the server is stopping.
        """
        while not self.finished and self.failure is None and self.state.current in self.seat_specs:
            seat = self.state.current
            try:
                action = int(self.decide(self._task("act", self.seat_specs[seat], seat)))
            except ValueError as error:  # e.g. a solver's table for one hand, asked in a match
                self.failure = f"{self.labels[seat]} (player_{seat}) cannot play this position: {error}"
                return
            except PoolClosed:
                raise
            except DecisionFailed as error:  # the time limit, or a worker that ended
                self.failure = f"{self.labels[seat]} (player_{seat}) {error}"
                return
            if not self.state.is_legal(action):  # an agent's bug must not pass for a move
                self.failure = f"{self.labels[seat]} (player_{seat}) chose the illegal action {action}"
                return
            self._apply(action)

    def move(self, action: object, step: object) -> None:
        """The person to move plays ``action`` at ``step``; then the agents answer.

        Raises:
            StaleMove: ``step`` is not the game's current step (nothing changes).
            MoveRefused: the game is over, or ``action`` is not a legal action id (nothing changes).
        """
        lang = self.setup.lang
        if self.finished:
            raise MoveRefused("the game is over")
        if self.failure is not None:
            raise MoveRefused(self.failure)
        if type(step) is not int or step != self.step:
            raise StaleMove(f"this move answers step {_short(step)}, but the game is at step {self.step}: reload the game")
        seat = self.person_to_move()
        if seat is None:  # cannot happen between requests: agents always play on at once
            raise MoveRefused("it is not a person's turn")
        if type(action) is not int or not 0 <= action < self.game.num_actions:
            raise MoveRefused(f"action must be an integer in 0..{self.game.num_actions - 1}, got {_short(action)}")
        if not self.state.is_legal(action):
            raise MoveRefused(message(lang, "not_legal", move=action_name(action, lang, self.game)))
        self._apply(action)
        self.advance()

    # -- what the page shows

    def viewer(self) -> int:
        """The person whose view the page shows: the one to move, else the first person seat."""
        seat = self.person_to_move()
        if seat is not None:
            return seat
        return min(seat for seat in range(len(self.labels)) if seat not in self.seat_specs)

    def recent(self, seat: int) -> list[str]:
        """What happened since ``seat``'s last action, a sentence a turn (and a line a hand's end)."""
        lang = self.setup.lang
        start = max((i + 1 for i, (_, who, _) in enumerate(self.log) if who == seat), default=0)
        lines: list[str] = []
        hand: int | None = None
        events: list[tuple[int, int]] = []
        for number, who, action in self.log[start:]:
            if hand is not None and number != hand:  # a hand ended in between: its result line
                lines += summarise_turns(events, lang, self.game)
                lines.append(self.summaries[hand].text)
                events = []
            hand = number
            events.append((who, action))
        lines += summarise_turns(events, lang, self.game)
        if hand is not None and hand < len(self.summaries):  # summaries[i] is hand i's
            lines.append(self.summaries[hand].text)
        return lines

    def view(self) -> dict[str, Any]:
        """The page's view (JSON-ready) for :meth:`viewer`; see the module docstring."""
        lang = self.setup.lang
        state, game = self.state, self.game
        seat = self.viewer()
        to_move = self.person_to_move()
        legal = state.legal_actions() if to_move is not None else []
        players = state.num_players
        names = game.tiles.names
        hand = [
            {
                "tile": tile,
                "faces": list(game.tiles.tiles[tile]),
                "name": names[tile],
                "actions": [action for action in legal if action < game.draw_action and action >> 1 == tile],
            }
            for tile in state.hand_tiles(seat)
        ]
        drawing = message(lang, "may_draw" if state.can_draw else "no_draw", protected=game.protected)
        seat_names = [message(lang, "you", seat=s) if s == seat else f"player_{s}" for s in range(players)]
        texts = {
            "boneyard": message(lang, "boneyard", count=len(state.boneyard), drawing=drawing),
            "sizes": message(lang, "sizes", sizes=", ".join(f"{seat_names[s]} {state.hand_count(s)}" for s in range(players))),
            "hand": message(lang, "hand", pips=state.hand_pips(seat), tiles=" ".join(names[t] for t in state.hand_tiles(seat))),
            "ends": "" if state.ends is None else message(lang, "ends", left=state.left, right=state.right),
            "scores": message(lang, "scores", scores=", ".join(f"{seat_names[s]} {state.scores[s]}" for s in range(players)), target=game.target),
            "turn": message(lang, "turn", hand=state.hand_number + 1, you=seat),
        }
        view: dict[str, Any] = {
            "id": self.game_id,
            "step": self.step,
            "finished": self.finished,
            "lang": lang,
            "episode": self.setup.episode,
            "variant": game.variant,
            # The seed deals every hand: shown once the game is over, not before.
            "seed": self.setup.seed if self.over else None,
            "players": self.labels,
            "you": seat,
            "toMove": to_move,
            "hand": hand,
            "handNumber": state.hand_number,
            "line": [list(pair) for pair in oriented_line(state)],
            "ends": None if state.ends is None else list(state.ends),
            "draw": game.draw_action if game.draw_action in legal else None,
            "pass": game.pass_action if game.pass_action in legal else None,
            "legal": legal,
            "words": {"left": WORDS[lang]["left"], "right": WORDS[lang]["right"], "draw": WORDS[lang]["draw"], "pass": WORDS[lang]["pass"]},
            "boneyard": len(state.boneyard),
            "counts": [state.hand_count(s) for s in range(players)],
            "scores": list(state.scores),
            "target": game.target,
            "texts": texts,
            "description": describe.describe_line(state.line, lang, game.tiles),
            "recent": self.recent(seat),
            "drew": None if seat not in self.drawn else message(lang, "you_drew", tile=names[self.drawn[seat]]),
            "results": self._results(seat),
            "outcome": self._outcome() if self.finished else None,
            "failure": self.failure,
            "record": None if self.record_path is None else self.record_path.name,
            "recordError": self.record_error,
        }
        return view

    def _results(self, seat: int) -> dict[str, Any] | None:
        """The last finished hand, face up, until ``seat`` has acted in the hand after it."""
        if not self.summaries:
            return None
        last = self.summaries[-1]
        acted = any(hand > last.hand and who == seat for hand, who, _ in self.log)
        return None if acted else _summary_json(last)

    def record_name(self) -> str:
        """The record's file name: the one written in the records folder, else one from the id
        (``-partial`` while the game goes on)."""
        if self.record_path is not None:
            return self.record_path.name
        return f"game-{self.game_id[:8]}{'' if self.over else '-partial'}.json"

    def _outcome(self) -> str:
        lang = self.setup.lang
        state = self.state
        record = self.env.record
        if record.get("illegal_action") is not None:
            return "The game ended on an illegal action."
        if self.setup.episode == "hand":
            return self.summaries[-1].text if self.summaries else ""
        winner = state.match_winner
        if winner is None:
            return message(lang, "match_drawn", points=max(state.scores)).strip("= ")
        return message(lang, "match_win", who=f"player_{winner}", points=state.scores[winner]).strip("= ")

    def hint(self) -> dict[str, Any]:
        """The hint agent's reading of the position of the person to move.

        Returns ``{"agent": spec, "moves": [{"action", "name", "probability", "value"?}], "value"?}``,
        moves by falling probability; ``value`` (expected zero-sum hand points of the person to
        move) where the agent gives one: a search's per-move values, a network's value head.

        Raises:
            MoveRefused: no person is to move, or the hint agent cannot read the position.
        """
        seat = self.person_to_move()
        if seat is None:
            raise MoveRefused("no person is to move")
        if self._hint is not None and self._hint[0] == self.step:
            return self._hint[1]
        try:
            reading = self.decide(self._task("hint", self.hint_spec, HINT_STREAM))
        except ValueError as error:
            raise MoveRefused(f"the hint agent {self.setup.hint} cannot read this position: {error}") from None
        except PoolClosed:
            raise
        except DecisionFailed as error:
            raise MoveRefused(f"the hint agent {self.setup.hint} {error}") from None
        hint = Hint.from_dict(reading)
        lang = self.setup.lang
        moves: list[dict[str, Any]] = [
            {"action": a, "name": action_name(a, lang, self.game), "probability": round(p, 4)}
            | ({"value": round(hint.values[a], 2)} if a in hint.values else {})
            for a, p in hint.probabilities.items()
        ]
        moves.sort(key=lambda move: (-move["probability"], move["action"]))
        answer: dict[str, Any] = {"agent": self.setup.hint, "step": self.step, "choice": hint.choice, "moves": moves}
        if hint.value is not None:
            answer["value"] = round(hint.value, 2)
        self._hint = (self.step, answer)
        return answer

    # -- the record

    @property
    def over(self) -> bool:
        """Whether the game has ended: finished, or stopped by an agent that cannot go on."""
        return self.finished or self.failure is not None

    def visible_record(self) -> dict[str, Any]:
        """The game's record as the viewer (:meth:`viewer`) may see it.

        Once the game is over, the whole record. Before, a :data:`PARTIAL_FORMAT` copy: the hands
        already over as recorded, and the hand in play with only the viewer's dealt tiles (the
        other seats' ``null``), no boneyard, and every action (the draws name no tile); without
        the seed, which deals every hand.
        """
        record = copy.deepcopy(self.env.record)
        if self.over:
            return record
        seat = self.viewer()
        current = record["hands"][-1]
        current["hands"] = [tiles if other == seat else None for other, tiles in enumerate(current["hands"])]
        del current["boneyard"]
        record.pop("seed", None)
        return {"format": PARTIAL_FORMAT, "viewer": seat} | {key: value for key, value in record.items() if key != "format"}

    def replay_record(self) -> dict[str, Any] | None:
        """A record the replay page may show: the whole record once the game is over; before, the
        hands already over (without the seed), or None before the first hand ends."""
        record = copy.deepcopy(self.env.record)
        if self.over:
            return record
        if len(record["hands"]) < 2:
            return None
        record["hands"] = record["hands"][:-1]
        record.pop("seed", None)
        return record


def _summary_json(summary: HandSummary) -> dict[str, Any]:
    return {"hand": summary.hand, "text": summary.text, "line": summary.line, "revealed": summary.revealed, "scores": summary.scores}


# ---------------------------------------------------------------------------- records


class RecordsFolder:
    """Where finished games are written: one new file a game, never over an existing file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def save(self, record: Mapping[str, Any], game_id: str) -> Path:
        """Write ``record`` to a new ``game-<UTC time>-<id>.json``; returns its path."""
        self.path.mkdir(parents=True, exist_ok=True)  # again: it may have been removed meanwhile
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        for attempt in range(100):
            suffix = "" if attempt == 0 else f"-{attempt}"
            target = self.path / f"game-{stamp}-{game_id[:8]}{suffix}.json"
            try:
                # Claim the name first: the atomic write then replaces only this file of ours.
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            except FileExistsError:
                continue
            try:
                return write_record(record, target)
            except BaseException:
                target.unlink(missing_ok=True)  # the empty file claimed above, ours
                raise
        raise OSError(f"no free record name in {self.path} for game {game_id[:8]}")


# ---------------------------------------------------------------------------- the store


class GameStore:
    """The server's games by id, at most ``max_games``, each dropped after ``max_age`` idle seconds.

    A new game beyond the bound drops the game idle longest. Finished games are written to
    ``records`` (if given) as soon as they end; a record that cannot be written (a full disk, a
    folder made read-only) is kept, its game's view says why, and it is written at the next try:
    whenever a later move or new game writes (at most ``max_games`` such records are kept, the
    oldest given up first). ``decide`` makes the agents' decisions
    (:meth:`arena.web.decisions.DecisionPool.decide`, or :func:`arena.web.decisions.decide` in
    this process).
    """

    def __init__(
        self,
        max_games: int = 32,
        max_age: float = 6 * 3600.0,
        records: RecordsFolder | None = None,
        named: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        *,
        decide: Decide,
        obs_type: str | None = None,
    ) -> None:
        if max_games < 1 or max_age <= 0:
            raise ValueError(f"max_games must be >= 1 and max_age > 0, got {max_games} and {max_age}")
        self.max_games = max_games
        self.max_age = max_age
        self.records = records
        self.named = dict(named or {})
        self.clock = clock
        self.decide = decide
        self.obs_type = obs_type
        self._games: OrderedDict[str, WebGame] = OrderedDict()
        self._lock = threading.Lock()
        #: Finished games whose record is not written yet, oldest first (held or dropped).
        self._unsaved: OrderedDict[str, WebGame] = OrderedDict()
        self._records_lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def _expire(self) -> None:
        now = self.clock()
        for game_id in [key for key, game in self._games.items() if now - game.used > self.max_age]:
            del self._games[game_id]

    def create(self, setup: Setup) -> WebGame:
        """Start a game of ``setup`` under a new id (the agents' first moves included).

        Raises:
            PoolClosed: the server is stopping.
        """
        game_id = secrets.token_urlsafe(16)
        game = WebGame.start(game_id, setup, self.decide, self.named, self.obs_type)
        game.used = self.clock()
        self._maybe_save(game)
        with self._lock:
            self._expire()
            while len(self._games) >= self.max_games:
                self._games.popitem(last=False)  # the game idle longest
            self._games[game_id] = game
        return game

    def get(self, game_id: str) -> WebGame:
        """The game ``game_id``, marked as used now.

        Raises:
            KeyError: no such game (never made, dropped for age or number, or not an id at all).
        """
        with self._lock:
            self._expire()
            if not GAME_ID.fullmatch(game_id) or game_id not in self._games:
                raise KeyError(game_id)
            game = self._games[game_id]
            self._games.move_to_end(game_id)
            game.used = self.clock()
            return game

    def unsaved(self) -> int:
        """How many finished games' records wait to be written."""
        return len(self._unsaved)

    def _maybe_save(self, game: WebGame) -> None:
        """Write ``game``'s record if it has just finished, and every record still waiting."""
        if self.records is None:
            return
        with self._records_lock:
            if game.finished and game.record_path is None and game.game_id not in self._unsaved:
                self._unsaved[game.game_id] = game
                while len(self._unsaved) > self.max_games:
                    self._unsaved.popitem(last=False)
            for waiting in list(self._unsaved.values()):
                try:
                    waiting.record_path = self.records.save(waiting.env.record, waiting.game_id)
                except OSError as error:
                    reason = error.strerror or "no free file name"
                    waiting.record_error = (
                        f"the record could not be written to the records folder ({reason}); the server keeps it and "
                        "tries again at the next move or new game; download it here meanwhile"
                    )
                    break  # the folder fails: the others would too
                waiting.record_error = None
                del self._unsaved[waiting.game_id]

    def move(self, game: WebGame, action: object, step: object) -> dict[str, Any]:
        """:meth:`WebGame.move` under the game's lock, then its record if it ended; the new view.

        Raises:
            MoveRefused: as :meth:`WebGame.move`.
            PoolClosed: the server is stopping.
        """
        with game.lock:
            game.move(action, step)
            self._maybe_save(game)
            return game.view()
