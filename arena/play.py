"""``draw-play``: a person plays Draw dominoes against agents, in plain text.

Example::

    draw-play --players 3 --opponents ppo,ismcts --episode match --seed 7
    yes 1 | draw-play --opponents heaviest --seed 0 --episode hand

At each of your turns the program shows the game as you see it and your legal moves numbered;
answer with one line: the number shown, a move's name (``[1|4] left``, ``draw``, ``pass``; a tile
alone when it fits only one end), ``hint``, ``help`` or ``quit``. Bad input asks again; the end of
input ends the game cleanly. ``--record FILE`` saves the game as a record
(:mod:`draw_env.io.records`). The command as users see it: the docs page "Getting started" (play a
game).
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from typing import IO

import numpy as np

import agents
import draw_env
from agents.base import observation_for
from arena.hints import DEFAULT_HINT, DEFAULT_VARIANT_HINT, HINT_STREAM, default_hint, read_hint
from arena.inputs import agent_files
from arena.options import (
    add_obs_type_argument,
    add_variant_arguments,
    check_plays_variant,
    check_specs_play_variant,
    table_obs_type,
    variant_of,
)
from arena.play_messages import message, result_text, summarise_turns
from arena.specs import build_agent, parse_agent_spec
from draw_env import describe
from draw_env.checks import MAX_SEED
from draw_env.commands import check_extras, reported_errors
from draw_env.io.files import check_distinct, check_writable
from draw_env.io.records import RecordingWrapper, write_record
from draw_env.render import oriented_line
from draw_env.rules import (
    DEFAULT_GAME,
    LANGUAGES,
    LEFT,
    PLAYER_COUNTS,
    RIGHT,
    WORDS,
    DrawGame,
    DrawState,
    action_name,
    end_name,
)
from draw_env.tiles import tiles_in

DEFAULT_OPPONENT = "ismcts"
#: The default opponent of a variant.
DEFAULT_VARIANT_AGENT = "variety"

# Input words, in every language at once (numbers are the same everywhere).
_ENDS = {"l": LEFT, "r": RIGHT} | {WORDS[lang][name]: end for lang in LANGUAGES for end, name in ((LEFT, "left"), (RIGHT, "right"))}
_DRAW_WORDS = {WORDS[lang]["draw"] for lang in LANGUAGES}
_PASS_WORDS = {WORDS[lang]["pass"] for lang in LANGUAGES}
_HINT_WORDS = {"hint", "ヒント", "suggerimento"}
_HELP_WORDS = {"help", "?", "ヘルプ", "aiuto"}
#: What a byte that is not UTF-8 reads as: standard input is decoded with errors="replace".
_UNDECODABLE = "\ufffd"
_QUIT_WORDS = {"quit", "q", "exit", "終了", "esci"}


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


def parse_move(text: str, legal: Sequence[int], lang: str = "en", game: DrawGame = DEFAULT_GAME) -> int:
    """The action a line of input names, among ``legal`` (ascending action ids of ``game``).

    Accepts the number shown (1-based), ``draw``, ``pass``, ``[a|b] left``/``right`` (also
    ``a|b l``, either half first; the words of any ``--lang``) and a tile alone when exactly one
    of its placements is legal.

    Raises:
        ValueError: saying, in ``lang``, what was wrong.
    """
    words = text.strip().lower().split()
    if not words:
        raise ValueError(message(lang, "type_move"))
    if len(words) == 1 and words[0].isdigit():
        number = int(words[0])
        if not 1 <= number <= len(legal):
            raise ValueError(message(lang, "bad_number", number=number, count=len(legal)))
        return legal[number - 1]
    if len(words) == 1 and words[0] in _DRAW_WORDS:
        if game.draw_action not in legal:
            raise ValueError(message(lang, "cannot_draw"))
        return game.draw_action
    if len(words) == 1 and words[0] in _PASS_WORDS:
        if game.pass_action not in legal:
            raise ValueError(message(lang, "cannot_pass"))
        return game.pass_action
    try:
        tile = game.tiles.tile_id(f"[{words[0].strip('[]')}]")  # brackets optional: "1|4" too
    except ValueError:
        raise ValueError(message(lang, "not_a_move", text=text.strip())) from None
    name = game.tiles.names[tile]
    left, right = end_name(LEFT, lang), end_name(RIGHT, lang)
    placements = [action for action in legal if action < game.draw_action and action >> 1 == tile]
    if len(words) == 1:
        if len(placements) == 1:
            return placements[0]
        if not placements:
            raise ValueError(message(lang, "cannot_place", tile=name))
        raise ValueError(message(lang, "both_ends", tile=name, left=left, right=right))
    if len(words) != 2 or words[1] not in _ENDS:
        raise ValueError(message(lang, "name_end", text=text.strip(), tile=name, left=left))
    action = 2 * tile + _ENDS[words[1]]
    if action not in legal:
        raise ValueError(message(lang, "not_legal", move=action_name(action, lang, game)))
    return action


class Game:
    """One game of ``draw-play``: the environment, the opponents, the console."""

    def __init__(self, args: argparse.Namespace, stdin: IO[str], stdout: IO[str]) -> None:
        self.args = args
        self.lang = args.lang
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
        self.game = game = variant_of(args, players)
        check_specs_play_variant(parsed, game, "--opponents agent")
        self.hint_spec = parse_agent_spec(args.hint_agent)
        check_specs_play_variant([self.hint_spec], game, "--hint-agent")
        self.opponents: dict[int, agents.Agent] = {}
        others = [seat for seat in range(players) if seat != self.you]
        for seat, (name, kwargs) in zip(others, parsed):
            self.opponents[seat] = build_agent(name, kwargs, args.seed, seat)
        labels = ["human" if seat == self.you else specs[others.index(seat)] for seat in range(players)]
        #: Actions played so far (the hint agent's seed comes from it, as in draw-web).
        self.step = 0
        obs_type = table_obs_type([*parsed, self.hint_spec], args.obs_type)
        self.env = RecordingWrapper(
            draw_env.env(num_players=players, episode=args.episode, reward="points", lang=args.lang,
                         obs_type=obs_type, **game.variant),
            players=labels,
        )
        self.events: list[tuple[int, int]] = []  # actions since your last turn

    # -- output

    def say(self, text: str = "") -> None:
        print(text, file=self.stdout)

    def text(self, key: str, **fields: object) -> str:
        return message(self.lang, key, **fields)

    def name(self, seat: int) -> str:
        return self.text("you", seat=seat) if seat == self.you else f"player_{seat}"

    def show_events(self) -> None:
        if self.events:
            self.say(self.text("since") + "; ".join(summarise_turns(self.events, self.lang, self.game)))
            self.events = []

    def show_turn(self, state: DrawState, legal: list[int]) -> None:
        players = state.num_players
        self.say()
        self.say(self.text("turn", hand=state.hand_number + 1, you=self.you))
        self.show_events()
        line = "".join(f"[{a}|{b}]" for a, b in oriented_line(state))
        self.say(self.text("line", line=line or self.text("empty_line")))
        if state.ends is not None:
            self.say(self.text("ends", left=state.left, right=state.right))
        if self.args.describe:
            self.say(describe.describe_line(state.line, self.lang, self.game.tiles))
        drawing = self.text("may_draw" if state.can_draw else "no_draw", protected=self.game.protected)
        self.say(self.text("boneyard", count=len(state.boneyard), drawing=drawing))
        self.say(self.text("sizes", sizes=", ".join(f"{self.name(s)} {state.hand_count(s)}" for s in range(players))))
        if self.args.episode == "match":
            scores = ", ".join(f"{self.name(s)} {state.scores[s]}" for s in range(players))
            self.say(self.text("scores", scores=scores, target=state.game.target))
        held = " ".join(self.game.tiles.names[t] for t in state.hand_tiles(self.you))
        self.say(self.text("hand", pips=state.hand_pips(self.you), tiles=held))
        self.say(self.text("moves"))
        for number, action in enumerate(legal, 1):
            self.say(f"  {number}) {action_name(action, self.lang, self.game)}")

    def show_hand_end(self, finished: DrawState) -> None:
        self.show_events()
        result = finished.result
        assert result is not None
        self.say()
        self.say(self.text("hand_over", hand=finished.hand_number + 1, result=result_text(finished, self.lang)))
        self.say(self.text("line", line="".join(f"[{a}|{b}]" for a, b in oriented_line(finished))))
        for seat in range(finished.num_players):
            held = " ".join(self.game.tiles.names[t] for t in finished.hand_tiles(seat)) or self.text("no_tiles")
            self.say(self.text("revealed", who=self.name(seat), tiles=held, pips=result.pips[seat], points=result.points[seat]))
        if self.args.episode == "match":
            scores = ", ".join(f"{self.name(s)} {score}" for s, score in enumerate(finished.scores))
            self.say(self.text("scores", scores=scores, target=finished.game.target))
            if finished.is_match_over:
                winner = finished.match_winner
                if winner is None:
                    self.say(self.text("match_drawn", points=max(finished.scores)))
                elif winner == self.you:
                    self.say(self.text("match_you", points=finished.scores[winner]))
                else:
                    self.say(self.text("match_win", who=f"player_{winner}", points=finished.scores[winner]))

    # -- input

    def ask(self, observation: dict[str, np.ndarray], legal: list[int]) -> int:
        moves = ", ".join(f"{n}) {action_name(a, self.lang, self.game)}" for n, a in enumerate(legal, 1))
        while True:
            self.stdout.write(self.text("prompt"))
            self.stdout.flush()
            line = self.stdin.readline()
            if not line:
                self.say()
                raise Quit(self.text("input_ended"))
            text = line.strip()
            if not self.stdin.isatty():
                self.say(text)  # piped input: echo it, so that the transcript reads as a dialogue
            if _UNDECODABLE in text:  # a byte that is not UTF-8 (see main): a bad line, not a crash
                self.say(f"  {self.text('not_utf8')} -- {self.text('moves_list')}{moves}")
                continue
            command = text.lower()
            if command in _QUIT_WORDS:
                raise Quit(self.text("you_quit"))
            if command in _HELP_WORDS:
                self.show_help()
                continue
            if command in _HINT_WORDS:
                self.hint(observation, legal)
                continue
            try:
                return parse_move(text, legal, self.lang, self.game)
            except ValueError as error:
                self.say(f"  {error} -- {self.text('moves_list')}{moves}")

    def show_help(self) -> None:
        """The commands, then the rules a player needs, in the player's language."""
        words = WORDS[self.lang]
        self.say(self.text("help"))
        protected = self.game.protected
        self.say(self.text("rules", draw=words["draw"], pass_word=words["pass"], protected=protected, more=protected + 1))
        if self.args.episode == "match":
            self.say(self.text("rules_match", target=self.env.unwrapped.game.target))

    def hint(self, observation: dict[str, np.ndarray], legal: list[int]) -> None:
        """The hint agent's reading (:func:`arena.hints.read_hint`, as ``draw-web``'s): its move,
        then each move's value or probability, and the position's value where it gives one."""
        name, kwargs = self.hint_spec
        # Seeded as draw-web seeds its hint agent, so that both give the same hint at the same position.
        hinter = build_agent(name, kwargs, self.args.seed, HINT_STREAM, self.step)
        hint = read_hint(hinter, observation, self.game.num_players)
        choice = hint.choice
        self.say(self.text("hint_choice", agent=name, move=action_name(choice, self.lang, self.game), number=legal.index(choice) + 1))
        if hint.values:
            self.say(self.text("hint_values"))
            for number, action in enumerate(legal, 1):
                if action in hint.values:
                    self.say(f"    {number}) {action_name(action, self.lang, self.game):<14} {hint.values[action]:+7.1f}")
            return
        self.say(self.text("hint_probabilities"))
        for number, action in enumerate(legal, 1):
            self.say(f"    {number}) {action_name(action, self.lang, self.game):<14} {hint.probabilities[action]:7.1%}")
        if hint.value is not None:
            self.say(self.text("hint_position", value=hint.value))

    # -- the game

    def play(self) -> int:
        env = self.env
        base = env.unwrapped
        env.reset(seed=self.args.seed)
        for agent in self.opponents.values():
            agent.reset()
        episode = self.text("one_hand") if self.args.episode == "hand" else self.text("a_match", target=base.game.target)
        opponents = ", ".join(f"player_{seat} {env.players[seat]}" for seat in sorted(self.opponents))
        self.say(self.text("intro", players=base.game.num_players, episode=episode, you=self.you, opponents=opponents, seed=self.args.seed))
        if not self.game.is_default:
            self.say(self.text("variant", **self.game.variant))
        try:
            for _agent in env.agent_iter():
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
                else:
                    opponent = self.opponents[seat]
                    action = int(opponent.act(observation_for(opponent, observation)))
                # The rules, on a copy, say whether this action ends the hand (a match deals on at once)
                # and which tile a draw brings.
                probe = state.clone()
                probe.apply_action(action)
                drawn = list(tiles_in(probe.hands[seat] & ~state.hands[seat]))
                env.step(action)
                self.step += 1
                if seat == self.you:
                    played = self.text("played", move=action_name(action, self.lang, self.game))
                    if drawn:  # only your own draws are named: the others' tiles stay hidden
                        played += " " + self.text("you_drew", tile=self.game.tiles.names[drawn[0]])
                    self.say(played)
                else:
                    self.events.append((seat, action))
                if probe.result is not None:
                    self.show_hand_end(probe)
        except Quit as reason:
            self.say(self.text("ended", reason=str(reason)))
        if self.args.record:
            path = write_record(env.record, self.args.record)
            self.say(self.text("saved", path=path))
        return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draw-play",
        description="Play Draw dominoes against agents in the terminal, one move per line on standard input "
        "(type 'help' during the game for the commands and the rules).",
        epilog="Agents: " + ", ".join(agents.available()) + ". Example: draw-play --players 3 --opponents ppo,ismcts --episode match --seed 7",
    )
    parser.add_argument("--players", type=int, choices=PLAYER_COUNTS, default=2, help="players at the table (default 2)")
    parser.add_argument(
        "--opponents",
        default=None,
        help=f"comma-separated agent specs, one per opponent or one for all (default {DEFAULT_OPPONENT}, "
        f"{DEFAULT_VARIANT_AGENT} in a variant); "
        "keywords as in draw-eval, e.g. ismcts:simulations=400",
    )
    parser.add_argument("--episode", choices=("hand", "match"), default="match", help="one hand or a whole match (default)")
    parser.add_argument("--seed", type=int, default=None, help="seeds the deal and the agents (default: random)")
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0..players-1 (default 0)")
    parser.add_argument(
        "--lang",
        choices=describe.LANGUAGES,
        default="en",
        help="language of the messages and of the line description (en, ja, it); ja or it also turn on --describe",
    )
    parser.add_argument("--describe", action="store_true", help="also show the line description at each turn")
    parser.add_argument(
        "--hint-agent",
        default=None,
        help=f"the agent 'hint' asks (default {DEFAULT_HINT}, {DEFAULT_VARIANT_HINT} in a variant; as draw-web's)",
    )
    parser.add_argument("--record", help="save the game as a JSON game record here, to be replayed with draw-replay FILE")
    add_variant_arguments(parser)
    add_obs_type_argument(parser)
    return parser


def main(argv: Sequence[str] | None = None, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Run ``draw-play``; ``stdin``/``stdout`` default to the console (tests pass their own)."""
    check_extras("draw-play")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 <= args.seat < args.players:
        parser.error(f"--seat must be a seat in 0..{args.players - 1}, got {args.seat}")
    args.describe = args.describe or args.lang != "en"
    if args.seed is None:
        args.seed = int(np.random.SeedSequence().entropy % 2**31)  # type: ignore[operator]
    elif not 0 <= args.seed <= MAX_SEED:  # the bound of every seed: a record of the game holds it
        parser.error(f"--seed must be an integer in 0..{MAX_SEED} (below 2**64), got {args.seed}")
    if stdin is None:
        stdin = sys.stdin
        if isinstance(stdin, io.TextIOWrapper):
            stdin.reconfigure(errors="replace")  # a bad byte becomes a bad line, answered in ask()
    with reported_errors(parser):
        game = variant_of(args, args.players)  # before any file is touched; Game checks its agents
        if args.opponents is None:
            args.opponents = DEFAULT_OPPONENT if game.is_default else DEFAULT_VARIANT_AGENT
        if args.hint_agent is None:
            args.hint_agent = default_hint(game)
        check_plays_variant([parse_agent_spec(text)[0] for text in split_specs(args.opponents)], game, "--opponents agent")
        check_plays_variant([parse_agent_spec(args.hint_agent)[0]], game, "--hint-agent")
        if args.record is not None:  # checked before the game, not after it
            played = [parse_agent_spec(text) for text in [*split_specs(args.opponents), args.hint_agent]]
            check_distinct([("--record", args.record)], agent_files(played))
            check_writable("--record", args.record)
        session = Game(args, stdin, stdout or sys.stdout)
        try:
            return session.play()
        except KeyboardInterrupt:
            print("\nInterrupted.", file=stdout or sys.stdout)
            return 130
        except BrokenPipeError:  # e.g. piped into `head`: the reader left, nothing more to say
            return 0


if __name__ == "__main__":
    raise SystemExit(main())
