"""The rules of Draw dominoes (double-six, 2 to 4 players, each for themselves).

This module is the rulebook; it imports nothing from gymnasium or pettingzoo. It is the one
module over 600 lines that is long on purpose: every game fact lives here once, so that each
faster twin is checked against a single reference. Read it top to bottom:

* :class:`DrawGame` holds the parameters: players, and the variant (the set, the hand size, the
  protected boneyard tiles); from them the match target and the action ids. The named variants
  (:data:`VARIANTS`: ``micro``, ``mini``, ``midi``, ``draw``) are presets of the three numbers,
  which :meth:`DrawGame.named` and :func:`variant_game` read.
* :class:`DrawState` is one position: the hand in play and the match around it. It offers
  ``legal_actions``, ``apply_action``, the hand's :class:`HandResult` and the match scores.
* :class:`PlayerView` is what one player knows. ``PlayerView.sample_state`` deals the hidden
  tiles in a way consistent with that knowledge, for search agents.
* :func:`ends_after` gives the open ends after a placement, for the state and for agents that
  look one move ahead.
* The episodes and reward schemes every interface offers: :data:`EPISODES`, :data:`REWARDS`,
  :func:`check_reward_episode`, :func:`hand_rewards`, :data:`MAX_HAND_POINTS`.
* The words of the game in each of :data:`LANGUAGES` (:data:`WORDS`, and :data:`LINE_WORDS` for
  line descriptions) and the text of a move, :func:`action_name`.

Actions (the environment's ``Discrete(58)``): ``2 * tile + end`` places ``tile`` at ``end``
(0 = left, 1 = right), :data:`DRAW` = 56, :data:`PASS` = 57. A variant of ``T`` tiles has
``2T + 2`` actions: ``2T`` draws and ``2T + 1`` passes (:attr:`DrawGame.draw_action`).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from draw_env import tiles
from draw_env.checks import check_choice, check_int, is_integer
from draw_env.tiles import DEFAULT_MAX_PIP, TileLike, TileSet

LEFT = 0
RIGHT = 1
#: The seeds' game's action ids (:attr:`DrawGame.draw_action` and friends give a variant's).
DRAW = 56
PASS = 57
NUM_ACTIONS = 58

#: In the seeds' game the last two boneyard tiles are never drawn (:attr:`DrawGame.protected`).
PROTECTED_BONEYARD = 2

MIN_PLAYERS = 2
MAX_PLAYERS = 4
#: The numbers of players a game may seat: 2, 3 or 4.
PLAYER_COUNTS = tuple(range(MIN_PLAYERS, MAX_PLAYERS + 1))
_NO_VALUE = -1

#: Most points one hand of the seeds' game can give or cost a seat: every pip of the set (168;
#: :attr:`DrawGame.max_hand_points` for a variant).
MAX_HAND_POINTS = tiles.DOUBLE_SIX.total_pips

#: What an episode is: one hand, or hands until someone reaches the match target.
EPISODES = ("hand", "match")
#: Reward schemes, paid to every seat at the step a hand ends (see :func:`hand_rewards`).
REWARDS = ("zero_sum", "points", "win_loss")

#: Languages of the game's words and descriptions.
LANGUAGES = ("en", "ja", "it")
#: The game's words per language: the ends, drawing, passing, and a count of tiles (one, many).
WORDS: dict[str, dict[str, str]] = {
    "en": {"left": "left", "right": "right", "draw": "draw", "pass": "pass", "tile_one": "tile", "tile_many": "tiles"},
    "ja": {"left": "左", "right": "右", "draw": "引く", "pass": "パス", "tile_one": "枚", "tile_many": "枚"},
    "it": {
        "left": "sinistra",
        "right": "destra",
        "draw": "pesca",
        "pass": "passo",
        "tile_one": "tessera",
        "tile_many": "tessere",
    },
}
#: The words of a line description (:func:`draw_env.describe.describe_line`) per language: the
#: headings, "none" for an empty list, and the four sides of a tile in the order positions are listed.
LINE_WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "tiles": "Tiles",
        "connections": "Connections",
        "positions": "Legal connection positions",
        "none_tiles": "none",
        "none_connections": "none",
        "none_positions": "none",
        "sides": ("high end", "low end", "linear side A", "linear side B"),
    },
    "ja": {
        "tiles": "牌",
        "connections": "接続",
        "positions": "合法な接続位置",
        "none_tiles": "なし",
        "none_connections": "なし",
        "none_positions": "なし",
        "sides": ("大きい目の端", "小さい目の端", "直線側A", "直線側B"),
    },
    "it": {
        "tiles": "Tessere",
        "connections": "Collegamenti",
        "positions": "Punti di collegamento disponibili",
        "none_tiles": "nessuna",
        "none_connections": "nessuno",
        "none_positions": "nessuno",
        "sides": (
            "estremità di valore maggiore",
            "estremità di valore minore",
            "lato lineare A",
            "lato lineare B",
        ),
    },
}


def place_action(tile: int, end: int) -> int:
    """The action id that places ``tile`` at ``end`` (:data:`LEFT` or :data:`RIGHT`)."""
    return 2 * tile + end


def end_name(end: int, lang: str = "en") -> str:
    """The word for ``end`` (:data:`LEFT` or :data:`RIGHT`) in ``lang``."""
    return WORDS[lang]["left" if end == LEFT else "right"]


def action_name(action: int, lang: str = "en", game: DrawGame | None = None) -> str:
    """A readable name such as ``"[1|4] left"``, ``"draw"`` or ``"pass"``, in ``lang`` (tile names
    stay ``[a|b]``), for ``game``'s action ids (default: the seeds' game)."""
    game = game or DEFAULT_GAME
    if action == game.draw_action:
        return WORDS[lang]["draw"]
    if action == game.pass_action:
        return WORDS[lang]["pass"]
    return f"{game.tiles.names[action >> 1]} {end_name(action & 1, lang)}"


def reward_fits_episode(reward: str, episode: str) -> bool:
    """``win_loss`` scores the match, so it needs ``episode="match"``; the others fit both."""
    return reward != "win_loss" or episode == "match"


def check_reward_episode(reward: str, episode: str) -> None:
    """Raise ``ValueError`` unless :func:`reward_fits_episode`."""
    if not reward_fits_episode(reward, episode):
        raise ValueError("reward='win_loss' needs episode='match'; with episode='hand' use 'zero_sum' or 'points'")


def next_opener(opener: int, num_players: int) -> int:
    """The next hand's opener in a match: one seat clockwise of this hand's."""
    return (opener + 1) % num_players


def ends_after(
    ends: tuple[int, int] | None, action: int, tile_set: TileSet = tiles.DOUBLE_SIX
) -> tuple[int, int]:
    """The open values ``(left, right)`` once placement ``action`` is made on a line with open ``ends``.

    Args:
        ends: ``(left, right)``, or ``None`` for the empty line, where the opening tile ``[a|b]``
            (a <= b) leaves ``a`` open on the left and ``b`` on the right.
        action: a placement ``2 * tile + end`` that fits ``ends`` (not checked).
        tile_set: the set the tile ids index (the game's :attr:`DrawGame.tiles`).
    """
    low, high = tile_set.tiles[action >> 1]
    if ends is None:
        return low, high
    left, right = ends
    if action & 1 == LEFT:
        return (high if low == left else low), right
    return left, (high if low == right else low)


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this position; the state is unchanged."""


@dataclass(frozen=True, init=False)
class DrawGame:
    """The parameters of a game of Draw: the players and the variant.

    The defaults are the seeds' game: the double-six set, 7 tiles each with 2 or 3 players (6 with
    4), the last two boneyard tiles never drawn. A variant reads every rule with "2" as
    ``protected``: a player may draw while the boneyard holds more than ``protected`` tiles,
    passes only when it holds exactly ``protected`` and no tile fits, and the hand blocks when it
    holds ``protected`` and every player passes in turn. Scoring and match targets are unchanged.

    Args:
        num_players: 2, 3 or 4 seats, each for themselves.
        max_pip: the set, double-``max_pip`` (2 to 9): ``T = (max_pip+1)(max_pip+2)/2`` tiles.
        hand_size: tiles dealt to each player, at least 1; ``None`` (stored resolved) means the
            seeds' deal: 7 with 2 or 3 players, 6 with 4.
        protected: boneyard tiles that are never drawn, 0 or more.

    Raises:
        ValueError: naming the argument; a deal that leaves fewer than ``protected`` tiles in the
            boneyard (``num_players * hand_size + protected > T``) names all three numbers.
    """

    num_players: int
    max_pip: int
    hand_size: int
    protected: int
    # Derived once (the state reads them at every action).
    tiles: TileSet = field(init=False, repr=False, compare=False)
    holding: tuple[int, ...] = field(init=False, repr=False, compare=False)
    draw_action: int = field(init=False, repr=False, compare=False)
    pass_action: int = field(init=False, repr=False, compare=False)
    num_actions: int = field(init=False, repr=False, compare=False)
    #: The pip total of a mask of this set's tiles (the double-six one reads four table cells).
    pips: Callable[[int], int] = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        num_players: int = 2,
        max_pip: int = DEFAULT_MAX_PIP,
        hand_size: int | None = None,
        protected: int = PROTECTED_BONEYARD,
    ) -> None:
        # Stored as plain ints: np.int64(3) is a valid count, and range() and hashing then agree.
        players = check_choice("num_players", num_players, PLAYER_COUNTS)
        tile_set = tiles.tile_set(max_pip)
        if hand_size is None:
            hand_size = 7 if players < 4 else 6
        else:
            hand_size = check_int("hand_size", hand_size, minimum=1)
        protected = check_int("protected", protected, minimum=0)
        if players * hand_size + protected > tile_set.num_tiles:
            raise ValueError(
                f"a deal of hand_size={hand_size} to {players} players with protected={protected} needs "
                f"{players * hand_size + protected} tiles; the double-{tile_set.max_pip} set (max_pip="
                f"{tile_set.max_pip}) holds {tile_set.num_tiles}"
            )
        fields = {
            "num_players": players,
            "max_pip": tile_set.max_pip,
            "hand_size": hand_size,
            "protected": protected,
            "tiles": tile_set,
            "holding": tile_set.holding,
            "draw_action": 2 * tile_set.num_tiles,
            "pass_action": 2 * tile_set.num_tiles + 1,
            "num_actions": 2 * tile_set.num_tiles + 2,
            "pips": tiles.pips if tile_set.max_pip == DEFAULT_MAX_PIP else tile_set.mask_pips,
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @classmethod
    def named(cls, variant: str, num_players: int = 2) -> DrawGame:
        """The named variant ``variant`` of :data:`VARIANTS` for ``num_players`` seats.

        Raises:
            ValueError: naming an unknown variant and the known ones, or a deal that does not fit.
        """
        return cls(num_players, **variant_numbers(variant, {}))

    @property
    def num_tiles(self) -> int:
        """T, the tiles of the set."""
        return self.tiles.num_tiles

    @property
    def max_hand_points(self) -> int:
        """Most points one hand can give or cost a seat: every pip of the set."""
        return self.tiles.total_pips

    @property
    def is_default(self) -> bool:
        """The seeds' variant: double-six, the seeds' deal, two protected tiles."""
        return self == DrawGame(self.num_players)

    @property
    def variant(self) -> dict[str, int]:
        """``max_pip``, ``hand_size`` and ``protected``, as the environments take them."""
        return {"max_pip": self.max_pip, "hand_size": self.hand_size, "protected": self.protected}

    @property
    def max_hand_actions(self) -> int:
        """The most actions (placements, draws and passes, by all seats) one hand can take:
        ``n(T - protected - n) + (T - n * hand_size - protected) + 1`` (61 in the seeds' game with
        2 players, 91 with 4), for any deal whose hands hold at least ``n * hand_size`` tiles.

        Proof. Draws: the boneyard starts with at most ``T - n * hand_size`` tiles and is never
        drawn below ``protected``, so ``D <= T - n * hand_size - protected``. Placements: tiles
        come from the hands, never from the protected tiles, and when the hand ends every seat
        but the one that went out still holds a tile (every seat does after a block), so
        ``P <= T - protected - (n - 1)`` after a domino and ``P <= T - protected - n`` after a
        block. Passes: the opener's first turn ends with a placement (any tile fits the empty
        line), a pass ends a turn, and ``n`` passes in a row block the hand, so at most ``n - 1``
        passes follow each placement but the last, which a domino ends with none and a block
        with ``n``. A domino takes ``P + D + (n - 1)(P - 1)`` actions at most and a block
        ``P + D + (n - 1)(P - 1) + n``: with the bounds on ``P``, both come to
        ``n(T - protected - n) + D + 1``.
        """
        n, free = self.num_players, self.num_tiles - self.protected
        return n * (free - n) + (free - n * self.hand_size) + 1

    @property
    def target(self) -> int:
        """Match target: 100 points with 2 players, 61 with 3 or 4."""
        return 100 if self.num_players == 2 else 61

    def new_state(
        self,
        rng: random.Random,
        opener: int | None = None,
        scores: Sequence[int] | None = None,
    ) -> DrawState:
        """Shuffle and deal the first hand of a match.

        Args:
            rng: the source of the shuffle and of the opener lottery.
            opener: the first hand's opener; ``None`` draws it by a fair lottery.
            scores: starting match scores, one per seat (default all zero).
        """
        if opener is None:
            opener = rng.randrange(self.num_players)
        hands, boneyard = self.deal(rng)
        return DrawState(self, hands, boneyard, opener, scores)

    def deal(self, rng: random.Random) -> tuple[list[list[int]], list[int]]:
        """Shuffle the set and deal it: one list of :attr:`hand_size` tile ids per seat, then the
        boneyard (``boneyard[0]`` is drawn first)."""
        deck = list(range(self.num_tiles))
        rng.shuffle(deck)
        size = self.hand_size
        hands = [deck[seat * size : (seat + 1) * size] for seat in range(self.num_players)]
        return hands, deck[self.num_players * size :]

    def state_from_deal(
        self,
        hands: Sequence[Sequence[TileLike]],
        boneyard: Sequence[TileLike],
        opener: int,
        scores: Sequence[int] | None = None,
    ) -> DrawState:
        """A state with a fixed deal, for set-up positions (see :meth:`DrawState.__init__`)."""
        return DrawState(self, hands, boneyard, opener, scores)


#: The seeds' game with two players.
DEFAULT_GAME = DrawGame()


class Variant(NamedTuple):
    """A named variant's three numbers, :class:`DrawGame`'s arguments of the same names."""

    max_pip: int
    hand_size: int | None
    protected: int


#: The named variants: a name stands for these three numbers wherever a variant is taken
#: (``variant="mini"``, ``--variant mini``, ``variant: mini``); the players are given apart.
#: ``draw`` is the seeds' game (``hand_size`` None: 7 tiles each with 2 or 3 players, 6 with 4);
#: ``micro`` and ``mini`` are small enough for exact measures, ``midi`` is ``mini`` with the
#: seeds' two protected tiles. A new named variant is one line here.
VARIANTS: dict[str, Variant] = {
    "micro": Variant(max_pip=2, hand_size=1, protected=2),
    "mini": Variant(max_pip=3, hand_size=3, protected=3),
    "midi": Variant(max_pip=3, hand_size=3, protected=2),
    "draw": Variant(max_pip=DEFAULT_MAX_PIP, hand_size=None, protected=PROTECTED_BONEYARD),
}
#: The numbers a variant takes when neither they nor a name are given: the seeds' game.
DEFAULT_VARIANT: dict[str, int | None] = VARIANTS["draw"]._asdict()


def check_variant(name: object, label: str = "variant") -> str:
    """``name`` if it is one of :data:`VARIANTS`.

    Raises:
        ValueError: naming ``label``, ``name`` and the known variants.
    """
    if not isinstance(name, str) or name not in VARIANTS:
        shown = repr(name) if len(repr(name)) <= 60 else repr(name)[:60] + "..."  # a client's text may be long
        raise ValueError(f"{label} must be a named variant ({', '.join(VARIANTS)}), got {shown}")
    return name


def variant_numbers(variant: object, given: Mapping[str, Any], names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The three numbers of the named ``variant``, where ``given`` holds the numbers also given
    (only those the caller was given: a number left at its default is not given). A given number
    must be the variant's own.

    Args:
        variant: a name of :data:`VARIANTS`.
        given: some of ``max_pip``, ``hand_size``, ``protected``.
        names: how the caller spells ``variant`` and each number in messages (a flag, a config
            key); default the argument names.

    Raises:
        ValueError: for an unknown name (naming the known ones), or a given number that is not the
            variant's (naming both).
    """
    names = names or {}
    numbers = VARIANTS[check_variant(variant, names.get("variant", "variant"))]._asdict()
    for key, value in given.items():
        # The same number, of an integer type (np.int64(3) is 3; True and 3.0 are not).
        if not (value is None if numbers[key] is None else is_integer(value) and value == numbers[key]):
            raise ValueError(
                f"{names.get('variant', 'variant')} is {variant!r}, whose {key} is {numbers[key]!r}, but "
                f"{names.get(key, key)} is {value!r}: give the name or the numbers"
            )
    return numbers


def variant_game(
    num_players: int = 2,
    variant: str | None = None,
    max_pip: int = DEFAULT_MAX_PIP,
    hand_size: int | None = None,
    protected: int = PROTECTED_BONEYARD,
) -> DrawGame:
    """The game of an environment's arguments: the named ``variant`` or the three numbers (the
    defaults: the seeds' game). With a name, a number left at its default takes the variant's and
    any other must be the variant's own.

    Raises:
        ValueError: naming the argument; a name and a number that disagree name both.
    """
    if variant is None:
        return DrawGame(num_players, max_pip, hand_size, protected)
    numbers = {"max_pip": max_pip, "hand_size": hand_size, "protected": protected}
    given = {key: value for key, value in numbers.items() if value != DEFAULT_VARIANT[key]}
    return DrawGame(num_players, **variant_numbers(variant, given))


@dataclass(frozen=True)
class HandResult:
    """How a hand ended.

    Attributes:
        kind: ``"domino"`` (a player went out) or ``"blocked"``.
        winner: the seat that scored, or ``None`` for a block with a shared lowest total.
        points: points scored in this hand, one entry per seat.
        pips: pips each seat was left holding.
    """

    kind: str
    winner: int | None
    points: tuple[int, ...]
    pips: tuple[int, ...]

    @property
    def zero_sum(self) -> tuple[float, ...]:
        """Each seat's points minus the mean of the other seats' points (the ``"zero_sum"`` reward)."""
        return zero_sum_points(self.points)


def zero_sum_points(points: Sequence[int]) -> tuple[float, ...]:
    """Each seat's hand points minus the mean of the other seats' (the ``"zero_sum"`` reward)."""
    total = sum(points)
    others = len(points) - 1
    return tuple(p - (total - p) / others for p in points)


def hand_rewards(reward: str, state: DrawState, episode_over: bool) -> list[float]:
    """Every seat's reward at the step the hand of ``state`` ended, by seat.

    ``zero_sum``: the seat's hand points minus the mean of the other seats'; ``points``: its own
    hand points; ``win_loss``: once the episode (a match) is over, +1 to the match winner and
    -1/(n-1) to each other seat, else (and on a drawn match) 0. No scaling.

    Args:
        reward: one of :data:`REWARDS`.
        state: a state whose hand is over (``state.result`` set), before the next hand is dealt.
        episode_over: this hand ends the episode.
    """
    result = state.result
    assert result is not None, "hand_rewards needs a finished hand"
    if reward == "win_loss":
        players = state.num_players
        winner = state.match_winner if episode_over else None
        if winner is None:
            return [0.0] * players
        return [1.0 if seat == winner else -1.0 / (players - 1) for seat in range(players)]
    if reward == "points":
        return [float(points) for points in result.points]
    return list(result.zero_sum)


def worst_reward(reward: str, game: DrawGame | None = None) -> float:
    """The lowest reward a seat can get at one step under ``reward``: a hand's full
    :attr:`DrawGame.max_hand_points` lost (168 in the seeds' game), or the lost match of ``win_loss``."""
    points = (game or DEFAULT_GAME).max_hand_points
    return -1.0 if reward == "win_loss" else -float(points)


def illegal_move_penalty(reward: str, game: DrawGame | None = None) -> float:
    """The illegal-move rule of every guarded interface (``env()``, the JAX engine): an illegal
    action ends the episode, the offender gets this (as bad as the worst outcome,
    :func:`worst_reward`) and every other seat 0."""
    return worst_reward(reward, game)


class DrawState:
    """One position of a match: the hand in play, the scores, whose turn it is.

    Hidden information lives here in full (every hand, the boneyard order); what a player may
    see is :meth:`view`. Copy with :meth:`clone`; it is cheap (a few short lists).
    """

    __slots__ = (
        "game",
        "hands",
        "boneyard",
        "left",
        "right",
        "line",
        "line_mask",
        "current",
        "passes_in_row",
        "voids",
        "scores",
        "opener",
        "hand_number",
        "result",
        "dealt",
        "history",
    )

    def __init__(
        self,
        game: DrawGame,
        hands: Sequence[Sequence[TileLike]],
        boneyard: Sequence[TileLike],
        opener: int,
        scores: Sequence[int] | None = None,
    ) -> None:
        """Start a hand from a deal.

        Args:
            game: the parameters.
            hands: one list of tiles per seat (ids, ``(a, b)`` pairs or ``"[a|b]"`` strings);
                every hand holds at least one tile.
            boneyard: the undealt tiles, ``boneyard[0]`` drawn first; at least two.
            opener: the seat that leads.
            scores: match scores before this hand, one per seat (default zeros).

        Raises:
            ValueError: if the deal does not hold each tile of the game's set exactly once, or any
                argument is out of range.
        """
        players = game.num_players
        tile_set = game.tiles
        if not isinstance(hands, (list, tuple)) or len(hands) != players:
            raise ValueError(f"hands must be a list of {players} lists of tiles, got {hands!r}")
        hand_masks = []
        seen = 0
        for seat, hand in enumerate(hands):
            if not isinstance(hand, (list, tuple)) or not hand:
                raise ValueError(
                    f"hands[{seat}] must be a non-empty list of tiles, got {hand!r}"
                )
            mask = 0
            for tile in hand:
                tile = tile_set.tile_id(tile)
                if (seen | mask) >> tile & 1:
                    raise ValueError(f"tile {tile_set.names[tile]} is dealt more than once")
                mask |= 1 << tile
            seen |= mask
            hand_masks.append(mask)
        if not isinstance(boneyard, (list, tuple)):
            raise ValueError(f"boneyard must be a list of tiles, got {boneyard!r}")
        boneyard_ids = []
        for tile in boneyard:
            tile = tile_set.tile_id(tile)
            if seen >> tile & 1:
                raise ValueError(f"tile {tile_set.names[tile]} is dealt more than once")
            seen |= 1 << tile
            boneyard_ids.append(tile)
        if seen != tile_set.all_mask:
            missing = ", ".join(tile_set.names[t] for t in tiles.tiles_in(tile_set.all_mask & ~seen))
            raise ValueError(f"hands and boneyard must hold all {tile_set.num_tiles} tiles; missing {missing}")
        if len(boneyard_ids) < game.protected:
            raise ValueError(
                f"boneyard must hold at least {game.protected} tiles, got {len(boneyard_ids)}"
            )
        opener = check_int("opener", opener, minimum=0, maximum=players - 1)
        if scores is None:
            scores = [0] * players
        elif (
            not isinstance(scores, (list, tuple))
            or len(scores) != players
            or not all(is_integer(s) and s >= 0 for s in scores)
        ):
            raise ValueError(
                f"scores must be a list of {players} non-negative integers, got {scores!r}"
            )
        self._start_hand(game, hand_masks, boneyard_ids, opener, [int(s) for s in scores], 0)

    def _start_hand(
        self,
        game: DrawGame,
        hands: list[int],
        boneyard: list[int],
        opener: int,
        scores: list[int],
        hand_number: int,
    ) -> None:
        """Set the fields for a freshly dealt hand: empty line, the opener to act, no passes."""
        voids = [0] * game.num_players
        self._set(
            game, hands, boneyard, _NO_VALUE, _NO_VALUE, [], 0, opener, 0, voids, scores, opener, hand_number,
            None, tuple(hands), [],
        )

    def _set(
        self,
        game: DrawGame,
        hands: list[int],
        boneyard: list[int],
        left: int,
        right: int,
        line: list[tuple[int, int, int]],
        line_mask: int,
        current: int,
        passes_in_row: int,
        voids: list[int],
        scores: list[int],
        opener: int,
        hand_number: int,
        result: HandResult | None,
        dealt: tuple[int, ...],
        history: list[tuple[int, int, int]],
    ) -> None:
        """The one place that sets every field (for a new hand, a clone and a sampled state)."""
        self.game = game
        #: Per seat, the bitmask of the tiles held.
        self.hands = hands
        #: Tile ids, ``boneyard[0]`` drawn next.
        self.boneyard = boneyard
        #: The open values, :data:`_NO_VALUE` while the line is empty.
        self.left = left
        self.right = right
        #: Placements in order: ``(tile, seat, end)``.
        self.line = line
        self.line_mask = line_mask
        self.current = current
        self.passes_in_row = passes_in_row
        #: Per seat, a mask of the values (bit ``v``) that seat showed it lacks by passing.
        self.voids = voids
        self.scores = scores
        self.opener = opener
        self.hand_number = hand_number
        self.result = result
        #: Per seat, the bitmask of the tiles it held when the hand started (as dealt).
        self.dealt = dealt
        #: The hand's actions in order: ``(seat, action, tile drawn or -1)`` (what an information
        #: state reads: :func:`draw_env.observation.information_state`).
        self.history = history

    # ------------------------------------------------------------------ reading the position

    @property
    def num_players(self) -> int:
        return self.game.num_players

    @property
    def ends(self) -> tuple[int, int] | None:
        """The open values ``(left, right)``, or ``None`` while the line is empty."""
        return None if self.left == _NO_VALUE else (self.left, self.right)

    @property
    def can_draw(self) -> bool:
        """Drawing is allowed while the boneyard holds more than the protected tiles (3 or more)."""
        return len(self.boneyard) > self.game.protected

    @property
    def is_hand_over(self) -> bool:
        return self.result is not None

    def hand_tiles(self, seat: int) -> list[int]:
        """The tile ids in ``seat``'s hand, ascending."""
        return list(tiles.tiles_in(self.hands[seat]))

    def hand_pips(self, seat: int) -> int:
        return self.game.pips(self.hands[seat])

    def hand_count(self, seat: int) -> int:
        return self.hands[seat].bit_count()

    def _fitting(self, hand: int) -> tuple[int, int]:
        """The masks of tiles in ``hand`` that fit the left and the right end."""
        if self.left == _NO_VALUE:
            return hand, 0  # the opening tile is laid with action 2 * tile + LEFT
        holding = self.game.holding
        return hand & holding[self.left], hand & holding[self.right]

    def legal_actions(self) -> list[int]:
        """The legal actions of the player to act, ascending; empty once the hand is over."""
        if self.result is not None:
            return []
        fits_left, fits_right = self._fitting(self.hands[self.current])
        actions = []
        either = fits_left | fits_right
        while either:
            lowest = either & -either
            tile = lowest.bit_length() - 1
            if fits_left & lowest:
                actions.append(2 * tile)
            if fits_right & lowest:
                actions.append(2 * tile + 1)
            either ^= lowest
        game = self.game
        if len(self.boneyard) > game.protected:
            actions.append(game.draw_action)
        elif not actions:
            actions.append(game.pass_action)
        return actions

    def is_legal(self, action: int) -> bool:
        game = self.game
        if self.result is not None or not 0 <= action < game.num_actions:
            return False
        if action == game.draw_action:
            return len(self.boneyard) > game.protected
        hand = self.hands[self.current]
        if action == game.pass_action:
            fits_left, fits_right = self._fitting(hand)
            return len(self.boneyard) == game.protected and not (fits_left | fits_right)
        tile = 1 << (action >> 1)
        if not hand & tile:
            return False
        if self.left == _NO_VALUE:
            return action & 1 == LEFT  # the opening tile is laid with action 2 * tile + LEFT
        return bool(game.holding[self.right if action & 1 else self.left] & tile)

    # ------------------------------------------------------------------ playing

    def apply_action(self, action: int) -> None:
        """Play ``action`` for the player to act.

        Raises:
            IllegalActionError: if the action is not legal here; the state is left unchanged.
        """
        if not self.is_legal(action):
            raise IllegalActionError(self._illegal_message(action))
        seat = self.current
        if action == self.game.draw_action:
            # The drawer keeps the turn and may draw again or place any playable tile.
            tile = self.boneyard.pop(0)
            self.hands[seat] |= 1 << tile
            self.history.append((seat, action, tile))
            return
        self.history.append((seat, action, -1))
        if action == self.game.pass_action:
            # A pass at the protected boneyard shows the passer holds neither open value,
            # and, with drawing over, never will again this hand.
            self.voids[seat] |= (1 << self.left) | (1 << self.right)
            self.passes_in_row += 1
            if self.passes_in_row == self.game.num_players:
                self._score_block()
            else:
                self.current = (seat + 1) % self.game.num_players
            return
        self._place(seat, action)

    def _place(self, seat: int, action: int) -> None:
        tile = action >> 1
        left = self.left
        self.left, self.right = ends_after(None if left == _NO_VALUE else (left, self.right), action, self.game.tiles)
        self.hands[seat] &= ~(1 << tile)
        self.line_mask |= 1 << tile
        self.line.append((tile, seat, action & 1))
        self.passes_in_row = 0
        if self.hands[seat]:
            self.current = (seat + 1) % self.game.num_players
        else:
            self._score_domino(seat)

    def _illegal_message(self, action: object) -> str:
        if self.result is not None:
            return "the hand is over: no action is legal"
        game = self.game
        legal = ", ".join(f"{a} ({action_name(a, game=game)})" for a in self.legal_actions())
        in_range = isinstance(action, int) and 0 <= action < game.num_actions
        described = action_name(action, game=game) if in_range else "out of range"  # type: ignore[arg-type]
        return (
            f"action {action!r} ({described}) is not legal for seat {self.current}; "
            f"legal actions: {legal}"
        )

    # ------------------------------------------------------------------ scoring

    def _score_domino(self, winner: int) -> None:
        """The player who went out scores every pip left in the opponents' hands."""
        pips = tuple(self.game.pips(hand) for hand in self.hands)
        points = [0] * self.game.num_players
        points[winner] = sum(pips)
        self._finish(HandResult("domino", winner, tuple(points), pips))

    def _score_block(self) -> None:
        """Only a single lowest total scores: the opponents' totals minus its own, once."""
        pips = tuple(self.game.pips(hand) for hand in self.hands)
        lowest = min(pips)
        points = [0] * self.game.num_players
        winner = None
        if pips.count(lowest) == 1:
            winner = pips.index(lowest)
            points[winner] = sum(pips) - 2 * lowest
        self._finish(HandResult("blocked", winner, tuple(points), pips))

    def _finish(self, result: HandResult) -> None:
        self.result = result
        for seat, points in enumerate(result.points):
            self.scores[seat] += points

    # ------------------------------------------------------------------ the match

    @property
    def is_match_over(self) -> bool:
        """The match ends once a fully scored hand leaves someone at or past the target."""
        return self.result is not None and max(self.scores) >= self.game.target

    @property
    def match_winner(self) -> int | None:
        """The seat that won the match, or ``None`` while it goes on or when it ended drawn."""
        if not self.is_match_over:
            return None
        best = max(self.scores)
        return self.scores.index(best) if self.scores.count(best) == 1 else None

    def next_hand(self, rng: random.Random) -> None:
        """Deal the next hand of the match; the opener moves one seat clockwise."""
        if self.result is None or self.is_match_over:
            raise ValueError("next_hand needs a finished hand in a match that goes on")
        hands, boneyard = self.game.deal(rng)
        self._start_hand(
            self.game,
            [tiles.mask_of(hand) for hand in hands],
            boneyard,
            next_opener(self.opener, self.game.num_players),
            self.scores,
            self.hand_number + 1,
        )

    # ------------------------------------------------------------------ copies and views

    def clone(self) -> DrawState:
        other = DrawState.__new__(DrawState)
        other._set(
            self.game,
            self.hands[:],
            self.boneyard[:],
            self.left,
            self.right,
            self.line[:],
            self.line_mask,
            self.current,
            self.passes_in_row,
            self.voids[:],
            self.scores[:],
            self.opener,
            self.hand_number,
            self.result,
            self.dealt,
            self.history[:],
        )
        return other

    def view(self, player: int) -> PlayerView:
        """What ``player`` knows of this position."""
        return PlayerView(
            game=self.game,
            player=player,
            hand=self.hands[player],
            line=tuple(self.line),
            line_mask=self.line_mask,
            ends=self.ends,
            hand_counts=tuple(hand.bit_count() for hand in self.hands),
            boneyard_count=len(self.boneyard),
            voids=tuple(self.voids),
            current=self.current,
            passes_in_row=self.passes_in_row,
            scores=tuple(self.scores),
            opener=self.opener,
        )

    def __repr__(self) -> str:
        hands = " ".join(
            f"{seat}:{''.join(self.game.tiles.names[t] for t in self.hand_tiles(seat))}"
            for seat in range(self.game.num_players)
        )
        return (
            f"DrawState(ends={self.ends}, to_act={self.current}, hands={hands}, "
            f"boneyard={len(self.boneyard)}, scores={self.scores}, result={self.result})"
        )


@dataclass(frozen=True)
class PlayerView:
    """Everything one player may know about a position (an information set).

    Seats here are absolute. ``line`` holds ``(tile, seat, end)`` placements in order; ``end``
    is -1 where the view was rebuilt from an observation, which does not record it.
    """

    game: DrawGame
    player: int
    hand: int
    line: tuple[tuple[int, int, int], ...]
    line_mask: int
    ends: tuple[int, int] | None
    hand_counts: tuple[int, ...]
    boneyard_count: int
    voids: tuple[int, ...]
    current: int
    passes_in_row: int
    scores: tuple[int, ...]
    opener: int

    @property
    def unseen(self) -> int:
        """The mask of tiles this player cannot see: opponents' hands and the boneyard."""
        return self.game.tiles.all_mask & ~self.hand & ~self.line_mask

    def allowed(self, seat: int) -> int:
        """The unseen tiles ``seat`` may hold, given the values it showed it lacks."""
        lacking = 0
        for value in range(self.game.tiles.num_values):
            if self.voids[seat] >> value & 1:
                lacking |= self.game.holding[value]
        return self.unseen & ~lacking

    def sample_state(self, rng: random.Random) -> DrawState:
        """A full state this player cannot tell apart from the real one.

        Hidden tiles are dealt uniformly among the deals that respect every opponent's hand
        size and shown voids (rejection sampling, with a constrained deal as fallback); the
        boneyard gets the rest in random order. The view holds no history: the sampled state's
        ``history`` starts empty and its ``dealt`` hands are the sampled ones.
        """
        opponents = [s for s in range(self.game.num_players) if s != self.player]
        unseen = list(tiles.tiles_in(self.unseen))
        hands = [0] * self.game.num_players
        hands[self.player] = self.hand
        allowed = {seat: self.allowed(seat) for seat in opponents}
        dealt = None
        for _ in range(32):
            rng.shuffle(unseen)
            position = 0
            candidate = {}
            for seat in opponents:
                mask = tiles.mask_of(unseen[position : position + self.hand_counts[seat]])
                if mask & ~allowed[seat]:
                    break
                candidate[seat] = mask
                position += self.hand_counts[seat]
            else:
                dealt = candidate
                break
        if dealt is None:
            dealt = self._constrained_deal(opponents, allowed, rng)
        taken = 0
        for seat, mask in dealt.items():
            hands[seat] = mask
            taken |= mask
        boneyard = list(tiles.tiles_in(self.unseen & ~taken))
        rng.shuffle(boneyard)
        left, right = self.ends if self.ends is not None else (_NO_VALUE, _NO_VALUE)
        state = DrawState.__new__(DrawState)
        state._set(
            self.game,
            hands,
            boneyard,
            left,
            right,
            list(self.line),
            self.line_mask,
            self.current,
            self.passes_in_row,
            list(self.voids),
            list(self.scores),
            self.opener,
            0,  # the view does not say which hand of the match this is
            None,
            tuple(hands),  # the view holds no history: the sampled state's starts here
            [],
        )
        return state

    def _constrained_deal(
        self, opponents: list[int], allowed: dict[int, int], rng: random.Random
    ) -> dict[int, int]:
        """Deal the most constrained opponents first, backtracking if a choice strands one."""
        order = sorted(opponents, key=lambda seat: allowed[seat].bit_count())

        def deal(index: int, free: int) -> dict[int, int] | None:
            if index == len(order):
                return {}
            seat = order[index]
            choices = list(tiles.tiles_in(allowed[seat] & free))
            need = self.hand_counts[seat]
            if len(choices) < need:
                return None
            for _ in range(16):
                rng.shuffle(choices)
                mask = tiles.mask_of(choices[:need])
                rest = deal(index + 1, free & ~mask)
                if rest is not None:
                    rest[seat] = mask
                    return rest
            # When the voids leave few deals, random picks can all strand a later seat: then try
            # every combination, so that a deal is found whenever one exists.
            for pick in itertools.combinations(choices, need):
                mask = tiles.mask_of(pick)
                rest = deal(index + 1, free & ~mask)
                if rest is not None:
                    rest[seat] = mask
                    return rest
            return None

        result = deal(0, self.unseen)
        if result is None:
            raise ValueError("no deal of the hidden tiles is consistent with this view")
        return result
