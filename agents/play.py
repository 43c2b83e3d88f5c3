"""``draw-play``: a person plays Draw dominoes against agents, in plain text.

Example::

    draw-play --players 3 --opponents ppo,ismcts --episode match --seed 7
    yes 1 | draw-play --opponents heaviest --seed 0 --episode hand

At each of your turns the program shows what each opponent did since your last turn, the line
with its open ends, the boneyard and hand sizes, the scores, your hand sorted and your legal moves
numbered. Answer with one line: the number shown, a move's name (``[1|4] left``, ``draw``,
``pass``; a tile alone when it fits only one end), ``hint`` (what an agent would play, with its
value of every move), ``help`` or ``quit``. Bad input asks again; the end of input ends the game
cleanly. At a hand's end every hand is revealed with its pips and points; at a match's end the
winner is named. ``--record FILE`` saves the game as a record (:mod:`draw_env.records`), to be
replayed with ``draw-replay FILE``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import IO

import numpy as np

import agents
import draw_env
from agents.specs import build_agent, parse_agent_spec
from draw_env import describe, tiles
from draw_env.observation import view_from_observation
from draw_env.records import RecordingWrapper, write_record
from draw_env.render import describe_action, match_line, oriented_line, result_line
from draw_env.rules import DRAW, NUM_ACTIONS, PASS, DrawState, action_name

DEFAULT_OPPONENT = "ismcts"
DEFAULT_HINT_AGENT = "ismcts"


class Quit(Exception):
    """The player typed ``quit`` or the input ended."""


def split_specs(text: str) -> list[str]:
    """``"ppo,ismcts:simulations=100,seed=2,heaviest"`` -> ``["ppo", "ismcts:simulations=100,seed=2", "heaviest"]``.

    A comma starts a new agent unless what follows is a ``key=value`` of the agent before.
    """
    specs: list[str] = []
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        if specs and "=" in part and ":" not in part and ":" in specs[-1]:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def parse_move(text: str, legal: Sequence[int]) -> int:
    """The action a line of input names, among ``legal`` (ascending action ids).

    Accepts the number shown (1-based), ``draw``, ``pass``, ``[a|b] left``/``right`` (also
    ``a|b l``, either half first) and a tile alone when exactly one of its placements is legal.

    Raises:
        ValueError: saying what was wrong and what is accepted.
    """
    words = text.strip().lower().split()
    if not words:
        raise ValueError("type a move")
    if len(words) == 1 and words[0].isdigit():
        number = int(words[0])
        if not 1 <= number <= len(legal):
            raise ValueError(f"{number} is not a move number: choose 1 to {len(legal)}")
        return legal[number - 1]
    if words == ["draw"] or words == ["d"]:
        if DRAW not in legal:
            raise ValueError("you cannot draw now: the boneyard is down to its last 2 tiles")
        return DRAW
    if words == ["pass"] or words == ["p"]:
        if PASS not in legal:
            raise ValueError("you cannot pass: you may pass only with 2 tiles left in the boneyard and no tile that fits")
        return PASS
    try:
        tile = tiles.tile_id(f"[{words[0].strip('[]')}]")  # brackets optional: "1|4" too
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a move") from None
    placements = [action for action in legal if action < DRAW and action >> 1 == tile]
    if len(words) == 1:
        if len(placements) == 1:
            return placements[0]
        if not placements:
            raise ValueError(f"{tiles.NAMES[tile]} cannot be placed now")
        raise ValueError(f"{tiles.NAMES[tile]} fits both ends: say '{tiles.NAMES[tile]} left' or '{tiles.NAMES[tile]} right'")
    ends = {"left": 0, "l": 0, "right": 1, "r": 1}
    if len(words) != 2 or words[1] not in ends:
        raise ValueError(f"{text.strip()!r} is not a move: name the end, e.g. '{tiles.NAMES[tile]} left'")
    action = 2 * tile + ends[words[1]]
    if action not in legal:
        raise ValueError(f"{action_name(action)} is not legal now")
    return action


def summarise_turns(events: Sequence[tuple[int, int]]) -> list[str]:
    """Readable turns from ``(seat, action)`` events: consecutive draws by one seat are counted."""
    turns: list[str] = []
    draws = 0
    for index, (seat, action) in enumerate(events):
        if action == DRAW:
            draws += 1
            following = events[index + 1] if index + 1 < len(events) else None
            if following is not None and following[0] == seat:
                continue  # the same turn goes on
            turns.append(f"player_{seat} drew {_tiles(draws)}")
            draws = 0
            continue
        sentence = describe_action(seat, action)
        if draws:
            sentence = f"player_{seat} drew {_tiles(draws)}, then {sentence.split(' ', 1)[1]}"
            draws = 0
        turns.append(sentence)
    return turns


def _tiles(count: int) -> str:
    return f"{count} tile{'s' if count != 1 else ''}"


def _seat_name(seat: int, you: int) -> str:
    return f"you (player_{seat})" if seat == you else f"player_{seat}"


class Game:
    """One game of ``draw-play``: the environment, the opponents, the console."""

    def __init__(self, args: argparse.Namespace, stdin: IO[str], stdout: IO[str]) -> None:
        self.args = args
        self.stdin = stdin
        self.stdout = stdout
        self.you = args.seat
        players = args.players
        specs = split_specs(args.opponents)
        if len(specs) == 1:
            specs = specs * (players - 1)
        if len(specs) != players - 1:
            raise ValueError(
                f"--opponents must name 1 agent (for every opponent) or {players - 1} agents, got {len(specs)}: {args.opponents!r}"
            )
        parsed = [parse_agent_spec(spec) for spec in specs]
        self.opponents: dict[int, agents.Agent] = {}
        labels = []
        others = [seat for seat in range(players) if seat != self.you]
        for seat, (name, kwargs) in zip(others, parsed):
            self.opponents[seat] = build_agent(name, kwargs, args.seed, seat)
        for seat in range(players):
            labels.append("human" if seat == self.you else specs[others.index(seat)])
        self.hint_spec = parse_agent_spec(args.hint_agent)
        self.hinter: agents.Agent | None = None
        self.env = RecordingWrapper(
            draw_env.env(num_players=players, episode=args.episode, reward="points", lang=args.lang),
            players=labels,
        )
        self.events: list[tuple[int, int]] = []  # actions since your last turn

    # -- output

    def say(self, text: str = "") -> None:
        print(text, file=self.stdout)

    def show_turn(self, state: DrawState, legal: list[int]) -> None:
        you, players = self.you, state.num_players
        self.say()
        self.say(f"--- Hand {state.hand_number + 1}, your turn (player_{you}) ---")
        if self.events:
            self.say("Since your last turn: " + "; ".join(summarise_turns(self.events)))
        line = oriented_line(state)
        self.say(f"Line: {''.join(f'[{a}|{b}]' for a, b in line) or '(empty: lead any tile)'}")
        if state.ends is not None:
            self.say(f"Open ends: left {state.left}, right {state.right}")
        if self.args.describe:
            self.say(describe.describe_line(state.line, self.args.lang))
        drawing = "you may draw" if state.can_draw else "no drawing: the last 2 stay"
        self.say(f"Boneyard: {len(state.boneyard)} tiles ({drawing})")
        sizes = ", ".join(f"{_seat_name(seat, you)} {state.hand_count(seat)}" for seat in range(players))
        self.say(f"Tiles in hand: {sizes}")
        if self.args.episode == "match":
            scores = ", ".join(f"{_seat_name(seat, you)} {state.scores[seat]}" for seat in range(players))
            self.say(f"Scores: {scores} (target {state.game.target})")
        hand = " ".join(tiles.NAMES[t] for t in state.hand_tiles(you))
        self.say(f"Your hand ({state.hand_pips(you)} pips): {hand}")
        self.say("Your moves:")
        for number, action in enumerate(legal, 1):
            self.say(f"  {number}) {action_name(action)}")

    def show_hand_end(self, finished: DrawState) -> None:
        if self.events:
            self.say("Since your last turn: " + "; ".join(summarise_turns(self.events)))
            self.events = []
        result = finished.result
        assert result is not None
        self.say()
        self.say(f"=== Hand {finished.hand_number + 1} over, {result_line(finished)} ===")
        self.say(f"Line: {''.join(f'[{a}|{b}]' for a, b in oriented_line(finished))}")
        for seat in range(finished.num_players):
            held = " ".join(tiles.NAMES[t] for t in finished.hand_tiles(seat)) or "no tiles"
            self.say(
                f"  {_seat_name(seat, self.you)}: {held} ({result.pips[seat]} pips, {result.points[seat]} points)"
            )
        if self.args.episode == "match":
            scores = ", ".join(f"{_seat_name(s, self.you)} {score}" for s, score in enumerate(finished.scores))
            self.say(f"Scores: {scores} (target {finished.game.target})")
            over = match_line(finished)
            if over is not None:
                self.say(f"=== {over.replace(f'player_{self.you} wins', 'you win')} ===")

    # -- input

    def ask(self, observation: dict[str, np.ndarray], legal: list[int]) -> int:
        while True:
            self.stdout.write("Your move (number, e.g. '[1|4] left', 'draw', 'pass', 'hint', 'help', 'quit'): ")
            self.stdout.flush()
            line = self.stdin.readline()
            if not line:
                self.say()
                raise Quit("input ended")
            text = line.strip()
            if not self.stdin.isatty():
                self.say(text)  # piped input: echo it, so that the transcript reads as a dialogue
            if text.lower() in ("quit", "q", "exit"):
                raise Quit("you quit")
            if text.lower() in ("help", "?"):
                self.say(__doc__.split("\n\n")[2] if __doc__ else "")
                continue
            if text.lower() == "hint":
                self.hint(observation, legal)
                continue
            try:
                return parse_move(text, legal)
            except ValueError as error:
                self.say(f"  {error}. Moves: " + ", ".join(f"{n}) {action_name(a)}" for n, a in enumerate(legal, 1)))

    def hint(self, observation: dict[str, np.ndarray], legal: list[int]) -> None:
        name, kwargs = self.hint_spec
        if self.hinter is None:
            self.hinter = build_agent(name, kwargs, self.args.seed, NUM_ACTIONS)
        values_of = getattr(self.hinter, "action_values", None)
        if values_of is None:
            choice = self.hinter.act(observation)
            self.say(f"  {name} would play {action_name(choice)} ({legal.index(choice) + 1}).")
            return
        values = values_of(view_from_observation(observation["observation"], self.env.unwrapped.game.num_players))
        # The search's own rule: the best mean value, ties to the lowest action id.
        choice = max(values, key=lambda action: (values[action], -action))
        self.say(f"  {name} would play {action_name(choice)} ({legal.index(choice) + 1}).")
        scale = float(getattr(sys.modules.get(type(self.hinter).__module__), "REWARD_SCALE", 1.0))
        self.say(f"  Its value of each move (search estimate of your zero-sum hand points, values x {scale:g}):")
        for number, action in enumerate(legal, 1):
            if action in values:
                self.say(f"    {number}) {action_name(action):<14} {values[action] * scale:+7.1f}")

    # -- the game

    def play(self) -> int:
        env = self.env
        base = env.unwrapped
        env.reset(seed=self.args.seed)
        for agent in self.opponents.values():
            agent.reset()
        self.say(
            f"Draw dominoes: {base.game.num_players} players, one {self.args.episode}; you are player_{self.you}. "
            f"Opponents: " + ", ".join(f"player_{seat} {env.players[seat]}" for seat in sorted(self.opponents))
            + f". Seed {self.args.seed}."
        )
        quit_reason = None
        try:
            for agent in env.agent_iter():
                observation, _reward, terminated, truncated, _info = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                state = base.state_ref
                seat = state.current
                legal = np.flatnonzero(observation["action_mask"]).tolist()
                if seat == self.you:
                    self.show_turn(state, legal)
                    action = self.ask(observation, legal)
                    self.events = []
                else:
                    action = int(self.opponents[seat].act(observation))
                # The rules, on a copy, say whether this action ends the hand (a match deals on at once).
                probe = state.clone()
                probe.apply_action(action)
                env.step(action)
                if seat == self.you:
                    self.say(f"You played {action_name(action)}.")
                else:
                    self.events.append((seat, action))
                if probe.result is not None:
                    self.show_hand_end(probe)
        except Quit as reason:
            quit_reason = str(reason)
            self.say(f"Game ended early ({quit_reason}).")
        if self.args.record:
            path = write_record(env.record, self.args.record)
            self.say(f"Record saved to {path} (replay it with: draw-replay {path})")
        return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-play",
        description="Play Draw dominoes against agents in the terminal (one move per line on standard input).",
        epilog="Agents: " + ", ".join(agents.available()) + ". Example: draw-play --players 3 --opponents ppo,ismcts --episode match --seed 7",
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="players at the table (default 2)")
    parser.add_argument(
        "--opponents",
        default=DEFAULT_OPPONENT,
        help=f"comma-separated agent specs, one per opponent or one for all (default {DEFAULT_OPPONENT}); "
        "keywords as in draw-eval, e.g. ismcts:simulations=400",
    )
    parser.add_argument("--episode", choices=("hand", "match"), default="match", help="one hand or a whole match (default)")
    parser.add_argument("--seed", type=int, default=None, help="seeds the deal and the agents (default: random)")
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0..players-1 (default 0)")
    parser.add_argument(
        "--lang",
        choices=describe.LANGUAGES,
        default="en",
        help="language of the line description (SPEC section 6); another language than en implies --describe",
    )
    parser.add_argument("--describe", action="store_true", help="also show the line description at each turn")
    parser.add_argument("--hint-agent", default=DEFAULT_HINT_AGENT, help=f"the agent 'hint' asks (default {DEFAULT_HINT_AGENT})")
    parser.add_argument("--record", help="save the game as a JSON record here (see docs/records.md)")
    return parser


def main(argv: Sequence[str] | None = None, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Run ``draw-play``; ``stdin``/``stdout`` default to the console (tests pass their own)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 <= args.seat < args.players:
        parser.error(f"--seat must be a seat in 0..{args.players - 1}, got {args.seat}")
    args.describe = args.describe or args.lang != "en"
    if args.seed is None:
        args.seed = int(np.random.SeedSequence().entropy % 2**31)  # type: ignore[operator]
    elif args.seed < 0:
        parser.error(f"--seed must be a non-negative integer, got {args.seed}")
    try:
        game = Game(args, stdin or sys.stdin, stdout or sys.stdout)
    except ValueError as error:
        parser.error(str(error))
    try:
        return game.play()
    except KeyboardInterrupt:
        print("\nInterrupted.", file=stdout or sys.stdout)
        return 130



if __name__ == "__main__":
    raise SystemExit(main())
