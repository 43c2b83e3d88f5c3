"""The game of Draw as pure JAX functions, in pgx's ``Env`` style, for ``jax.jit`` and ``jax.vmap``.

Needs the ``jax`` extra (``pip install "draw-dominoes[jax]"``); ``import draw_env`` never imports
JAX. The rules are those of :mod:`draw_env.rules` (the reference); observations, masks, rewards
and infos are the AEC environment's, checked step by step by ``tests/test_jax.py`` and, over
thousands of games, by ``benchmarks/jax_differential.py``.

Example::

    import jax
    from draw_env.jax import DrawDominoes

    env = DrawDominoes(num_players=2)
    init, step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))
    state = init(jax.random.split(jax.random.key(0), 1024))  # 1024 games
    state = step(state, actions)  # actions: int32 (1024,), legal where state.legal_action_mask

The API's rules (ended episodes, illegal actions, matches, randomness), the state's fields and
why it does not subclass ``pgx.Env`` are on the docs page "The JAX environment" (``docs/jax.md``).
How it is written: every branch of the rules is computed and the outcome chosen with
``jnp.where`` (no Python control flow on traced values, no host callbacks), and batched gathers
are avoided (slow on CPU): picking a seat's value is a one-hot sum.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from draw_env import tiles
from draw_env.checks import check_choice
from draw_env.draw_dominoes import EPISODES, ILLEGAL_PENALTY, REWARDS
from draw_env.observation import BLOCKS, OBSERVATION_SIZE, SEATS
from draw_env.rules import DRAW, NUM_ACTIONS, PASS, PROTECTED_BONEYARD, DrawGame

NUM_TILES = tiles.NUM_TILES
NUM_VALUES = tiles.NUM_VALUES

# Tables as NumPy constants (JAX arrays at trace time: importing this module starts no backend).
_LOW = np.array(tiles.LOW, np.int32)
_HIGH = np.array(tiles.HIGH, np.int32)
_HOLDING = np.array(tiles.HOLDING, np.int32)
_DOUBLE = [tiles.tile_id((value, value)) for value in range(NUM_VALUES)]
#: Most points a hand can give: every pip of the set.
_MAX_POINTS = sum(tiles.PIPS)


@dataclasses.dataclass(frozen=True)
class State:
    """One game (a batch under ``vmap``: every field gains a leading batch axis). ``n`` = players.

    The first six attributes are pgx's fields, the next four the AEC environment's infos, and the
    rest the position (hidden information included: show agents ``observation`` only).

    Attributes:
        current_player: int32 ``()``, absolute seat to act (after the episode, the last mover).
        observation: float32 ``(258,)``, ``current_player``'s observation (the AEC layout).
        legal_action_mask: bool ``(58,)``, its legal actions (all False once the episode is over).
        rewards: float32 ``(n,)`` by absolute seat, what the AEC environment gives at this step.
        terminated: bool ``()``, the episode (hand or match) is over.
        truncated: bool ``()``, always False (every hand ends).
        hand_points: int32 ``(n,)``, points each seat scored in a hand that ended at this step, else 0.
        hand_pips: int32 ``(n,)``, pips in each hand; at the step a hand ends, the pips left.
        blocked: bool ``()``, a blocked hand ended at this step.
        scores: int32 ``(n,)``, match totals, the finished hand included (info ``score``).
        hands: int32 ``(n,)``, each seat's tiles as a bitmask (bit ``t`` = tile ``t``).
        deck_position: int32 ``(28,)``, per tile id its place in the deal (-1 for the hand tiles
            of a fixed deal): the boneyard is the tiles with ``bone_pos <= deck_position <
            bone_end``, drawn in that order.
        bone_pos, bone_end: int32 ``()``, tiles left to draw = ``bone_end - bone_pos``.
        left, right: int32 ``()``, the open values, -1 on an empty line.
        placed: int32 ``(n,)``, per seat the mask of the tiles it placed on the line.
        order: int32 ``(28,)``, per tile id ``k`` if it was the k-th tile placed, else 0.
        line_count: int32 ``()``, tiles placed.
        passes: int32 ``()``, passes since the last placement.
        voids: int32 ``(n,)``, per seat a 7-bit mask of the values it showed it lacks by passing.
        opener: int32 ``()``, this hand's opener.
        hand_number: int32 ``()``, hands dealt before this one in the match.
        key: uint32 ``(2,)``, the key later hands of a match are dealt from.
    """

    current_player: jax.Array
    observation: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    hand_points: jax.Array
    hand_pips: jax.Array
    blocked: jax.Array
    scores: jax.Array
    hands: jax.Array
    deck_position: jax.Array
    bone_pos: jax.Array
    bone_end: jax.Array
    left: jax.Array
    right: jax.Array
    placed: jax.Array
    order: jax.Array
    line_count: jax.Array
    passes: jax.Array
    voids: jax.Array
    opener: jax.Array
    hand_number: jax.Array
    key: jax.Array

    def replace(self, **changes: Any) -> State:
        """A copy with ``changes`` (pgx's ``State.replace``)."""
        return dataclasses.replace(self, **changes)


jax.tree_util.register_dataclass(
    State, data_fields=[field.name for field in dataclasses.fields(State)], meta_fields=[]
)


def _where(condition: jax.Array, then: State, otherwise: State) -> State:
    """``then`` where the scalar ``condition`` holds, else ``otherwise``, field by field."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(condition, a, b), then, otherwise)


def _pick(values: jax.Array, index: jax.Array) -> jax.Array:
    """``values[index]`` for a 1-D ``values`` and a scalar ``index``, as a one-hot sum (batched
    gathers are slow on CPU)."""
    hit = jnp.arange(values.shape[0]) == index
    if values.dtype == jnp.bool_:
        return jnp.any(hit & values)
    return jnp.sum(jnp.where(hit, values, 0), dtype=values.dtype)


def _pips(masks: jax.Array) -> jax.Array:
    """Pip totals of tile masks, shape ``masks.shape``.

    A tile ``[a|b]`` holds ``a`` and ``b``: counting ``v`` for each held tile that shows value ``v``
    counts every tile's pips, doubles once, so each held double ``[v|v]`` adds ``v`` again.
    """
    total = jnp.zeros(masks.shape, jnp.int32)
    for value in range(1, NUM_VALUES):
        shown = jax.lax.population_count(masks & int(_HOLDING[value])) + ((masks >> _DOUBLE[value]) & 1)
        total = total + value * shown
    return total


def _raw_key(key: jax.Array) -> jax.Array:
    """The uint32 ``(2,)`` words of a threefry key (typed ``jax.random.key`` keys too), which
    ``jnp.where`` can pick between."""
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    if key.shape[-1:] != (2,) or key.dtype != jnp.uint32:
        raise ValueError(f"key must be a threefry key (jax.random.key or PRNGKey), got {key.dtype}{list(key.shape)}")
    return key


def _deck_positions(words: jax.Array) -> jax.Array:
    """A uniformly shuffled deck from 28 random words: int32 ``(28,)``, each tile id's place in it.

    A tile's place is the rank of its word among the 28, with the tile id in the word's low 5 bits
    so that no two words tie (a tie of the other 27 bits, probability below 3e-6 per deal, is
    broken by tile id). Ranks, not a sort: comparisons that vectorise well under ``vmap``.
    """
    keyed = (words & jnp.uint32(0xFFFFFFE0)) | jnp.arange(NUM_TILES, dtype=jnp.uint32)
    return jnp.sum(keyed[None, :] < keyed[:, None], axis=1, dtype=jnp.int32)


# One threefry call per deal (threefry is costly to compile and to run under vmap): two words,
# stretched to 32 by the lowbias32 integer hash; 28 shuffle, one draws the opener (modulo n: a
# bias below 1e-9) and two are the key of the next deal.
_OPENER_WORD = NUM_TILES
_KEY_WORDS = slice(30, 32)


def _random_words(key: jax.Array) -> jax.Array:
    """uint32 ``(32,)`` random words from a key (typed or raw)."""
    seed = jax.random.bits(key, (2,), jnp.uint32)
    x = (seed[0] ^ (jnp.arange(32, dtype=jnp.uint32) * jnp.uint32(0x9E3779B9))) + seed[1]
    x = (x ^ (x >> 16)) * jnp.uint32(0x7FEB352D)
    x = (x ^ (x >> 15)) * jnp.uint32(0x846CA68B)
    return x ^ (x >> 16)


def _concrete(value: Any) -> np.ndarray | None:
    """``value`` as a NumPy array, or None while it is traced (under ``jit`` or ``vmap``)."""
    try:
        return np.asarray(value)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None


def _integer_dtype(name: str, value: Any) -> np.ndarray | None:
    """``value`` as a NumPy array if it is a host value (None for a JAX array, traced or not), after
    checking that its dtype is an integer one: a float or bool is refused, never rounded.

    A JAX array's dtype is static, so the check holds under ``jit`` (at trace time) at no cost.
    """
    host = None if isinstance(value, jax.Array) else np.asarray(value)
    dtype = value.dtype if host is None else host.dtype
    if host is not None and dtype == np.object_:
        # Python integers beyond int64 (NumPy keeps them as objects): integers all the same.
        if all(isinstance(item, int) and not isinstance(item, bool) for item in host.flat):
            return host
    elif np.issubdtype(dtype, np.integer):
        return host
    got = f"{host.item()!r} ({dtype})" if host is not None and host.size == 1 else f"an array of dtype {dtype}"
    raise ValueError(f"{name} must be an integer (int32 under jit), got {got}")


def _narrowed(array: jax.Array, limit: int) -> jax.Array:
    """An integer JAX ``array`` as int32, where an entry wider than int32 and outside ``0..limit - 1``
    becomes -1 rather than wrapping into range (int32 and narrower dtypes convert as they are)."""
    if array.dtype == jnp.int32 or jnp.iinfo(array.dtype).bits < 32:
        return array.astype(jnp.int32)
    return jnp.where((array >= 0) & (array < limit), array, -1).astype(jnp.int32)


def _action_index(action: Any) -> jax.Array:
    """``action`` as int32, an integer outside ``0..57`` of any width as -1 (illegal): the step
    never plays a wrapped or truncated number as another action."""
    host = _integer_dtype("action", action)
    if host is None:
        return _narrowed(action, NUM_ACTIONS)
    in_range = (host >= 0) & (host < NUM_ACTIONS)
    index = np.full(host.shape, -1, np.int32)
    index[in_range] = host[in_range]
    return jnp.asarray(index)


def _seat_index(player: Any, num_players: int) -> jax.Array:
    """``player`` as int32 for :meth:`DrawDominoes.observe`; a host value must be a seat."""
    host = _integer_dtype("player", player)
    if host is None:
        return _narrowed(player, num_players)
    if host.shape != () or not 0 <= host.item() < num_players:
        raise ValueError(f"player must be a seat in 0..{num_players - 1}, got {player!r}")
    return jnp.asarray(host.item(), jnp.int32)


class DrawDominoes:
    """Draw dominoes as pure JAX functions (pgx's ``Env`` API); see ``docs/jax.md``.

    Args:
        num_players: 2, 3 or 4.
        episode: ``"hand"`` (one hand) or ``"match"`` (hands until someone reaches 100 points
            with 2 players, 61 with 3 or 4).
        reward: ``"zero_sum"`` (own hand points minus the mean of the others'), ``"points"`` (own
            hand points) or, with ``episode="match"``, ``"win_loss"`` (+1 the match winner,
            -1/(n-1) each other seat, 0 all on a drawn match). No scaling.

    Raises:
        ValueError: for a bad argument, naming it and the allowed values.
    """

    id = "draw_dominoes"
    version = "v0"
    num_actions = NUM_ACTIONS
    observation_shape = (OBSERVATION_SIZE,)

    def __init__(self, num_players: int = 2, episode: str = "hand", reward: str = "zero_sum") -> None:
        self.num_players = check_choice("num_players", num_players, (2, 3, 4))
        self.episode = check_choice("episode", episode, EPISODES)
        self.reward = check_choice("reward", reward, REWARDS)
        if self.reward == "win_loss" and self.episode != "match":
            raise ValueError("reward='win_loss' needs episode='match'; with episode='hand' use 'zero_sum' or 'points'")
        game = DrawGame(self.num_players)
        self.game = game
        self.hand_size = game.hand_size
        self.target = game.target
        self._match = self.episode == "match"
        self._penalty = ILLEGAL_PENALTY[self.reward]
        self._table = _observation_table(self.num_players, self._match)
        # zero_sum rewards by numerator n * points - total, from -168 to (n - 1) * 168
        others = self.num_players - 1
        self._zero_sum = np.array([x / others for x in range(-_MAX_POINTS, others * _MAX_POINTS + 1)], np.float32)

    def __repr__(self) -> str:
        return f"DrawDominoes(num_players={self.num_players}, episode={self.episode!r}, reward={self.reward!r})"

    # ------------------------------------------------------------------ dealing

    def init(self, key: jax.Array) -> State:
        """A new episode dealt from ``key`` (a ``jax.random.key`` or ``PRNGKey``): shuffle, deal,
        draw the opener by lottery, zero scores. The same key gives the same game."""
        words = _random_words(key)
        opener = (words[_OPENER_WORD] % self.num_players).astype(jnp.int32)
        hands, deck, start = self._deal(words)
        scores = jnp.zeros(self.num_players, jnp.int32)
        return self._finish(
            self._new_hand(hands, deck, start, jnp.int32(NUM_TILES), opener, scores, 0, words[_KEY_WORDS])
        )

    def init_deal(
        self,
        hands: Any,
        boneyard: Any,
        opener: Any,
        scores: Any = None,
        key: Any = None,
    ) -> State:
        """A new episode from a fixed deal (the AEC environment's reset options).

        Args:
            hands: int32 ``(num_players, k)``, each seat's tile ids padded with -1 (``k`` = 7
                fits every normal deal; hands may differ in size for set-up positions).
            boneyard: int32 ``(m,)``, ``m <= 28``: tile ids in drawing order (``boneyard[0]``
                first), then -1 padding; at least 2 tiles. Hands and boneyard hold each tile once.
            opener: int32, the seat that leads.
            scores: int32 ``(num_players,)``, starting match scores below the target
                (``episode="match"`` only); default zeros.
            key: the key later hands of a match are dealt from; default ``jax.random.key(0)``.

        With concrete arrays the deal is checked as the AEC environment checks its options (a
        ``ValueError`` says what is wrong); under ``jit``/``vmap`` only the shapes are checked,
        and an invalid deal gives an undefined game.
        """
        n = self.num_players
        hands = jnp.asarray(hands, jnp.int32)
        boneyard = jnp.asarray(boneyard, jnp.int32)
        if hands.ndim != 2 or hands.shape[0] != n or not 1 <= hands.shape[1] <= NUM_TILES:
            raise ValueError(f"hands must be an int32 array ({n}, k) of tile ids padded with -1, got shape {hands.shape}")
        if boneyard.ndim != 1 or not PROTECTED_BONEYARD <= boneyard.shape[0] <= NUM_TILES:
            raise ValueError(f"boneyard must be an int32 array (m,) with 2 <= m <= 28, got shape {boneyard.shape}")
        if scores is not None and not self._match:
            raise ValueError("scores needs episode='match'")
        scores = jnp.zeros(n, jnp.int32) if scores is None else jnp.asarray(scores, jnp.int32)
        if scores.shape != (n,):
            raise ValueError(f"scores must be an int32 array ({n},), got shape {scores.shape}")
        opener = jnp.asarray(opener, jnp.int32)
        if opener.shape != ():
            raise ValueError(f"opener must be one seat (a scalar), got shape {opener.shape}")
        self._check_deal(hands, boneyard, opener, scores)
        key = jnp.zeros(2, jnp.uint32) if key is None else _raw_key(jnp.asarray(key))
        masks = jnp.sum(jnp.where(hands >= 0, jnp.int32(1) << jnp.clip(hands, 0, NUM_TILES - 1), 0), axis=1,
                        dtype=jnp.int32)
        order = jnp.arange(boneyard.shape[0], dtype=jnp.int32)
        in_boneyard = boneyard[None, :] == jnp.arange(NUM_TILES, dtype=jnp.int32)[:, None]
        deck = jnp.max(jnp.where(in_boneyard, order[None, :], -1), axis=1)
        bone_end = jnp.sum(boneyard >= 0, dtype=jnp.int32)
        return self._finish(self._new_hand(masks, deck, jnp.int32(0), bone_end, opener, scores, 0, key))

    def _check_deal(self, hands: jax.Array, boneyard: jax.Array, opener: jax.Array, scores: jax.Array) -> None:
        """Check concrete deal values with the rulebook's own checks (nothing while traced)."""
        values = [_concrete(x) for x in (hands, boneyard, opener, scores)]
        if any(value is None for value in values):
            return
        hand_ids, bone_ids, seat, start = values
        assert hand_ids is not None and bone_ids is not None and seat is not None and start is not None
        for name, ids in (("hands", hand_ids), ("boneyard", bone_ids)):
            if np.any((ids < -1) | (ids >= NUM_TILES)):
                raise ValueError(f"{name} must hold tile ids 0..27 and -1 padding, got {ids.tolist()}")
        tiles_first = bone_ids >= 0
        if not np.all(tiles_first[: int(tiles_first.sum())]):
            raise ValueError(f"boneyard: the -1 padding must come after the tiles, got {bone_ids.tolist()}")
        if np.any((start < 0) | (start >= self.target)):
            raise ValueError(f"scores must be {self.num_players} integers in 0..{self.target - 1} (below the target), "
                             f"got {start.tolist()}")
        try:
            self.game.state_from_deal(
                [[int(t) for t in row if t >= 0] for row in hand_ids],
                [int(t) for t in bone_ids if t >= 0],
                int(seat),
            )
        except ValueError as error:
            raise ValueError(f"init_deal: {error}") from None

    def _deal(self, words: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        """Shuffle (from ``words[:28]``) and cut as ``DrawGame.deal`` cuts its deck: hand masks
        ``(n,)``, each tile's deck position ``(28,)`` and where the boneyard starts."""
        position = _deck_positions(words[:NUM_TILES])
        seats = jnp.arange(self.num_players, dtype=jnp.int32)
        held = (position // self.hand_size)[None, :] == seats[:, None]
        hands = jnp.sum(jnp.where(held, jnp.int32(1) << jnp.arange(NUM_TILES, dtype=jnp.int32), 0), axis=1,
                        dtype=jnp.int32)
        return hands, position, jnp.int32(self.num_players * self.hand_size)

    def _new_hand(
        self,
        hands: jax.Array,
        deck: jax.Array,
        bone_pos: jax.Array,
        bone_end: jax.Array,
        opener: jax.Array,
        scores: jax.Array,
        hand_number: jax.Array | int,
        key: jax.Array,
    ) -> State:
        """A freshly dealt hand: empty line, the opener to act (observation and mask not yet set)."""
        n = self.num_players
        zeros = jnp.zeros(n, jnp.int32)
        return State(
            current_player=opener, observation=jnp.zeros(OBSERVATION_SIZE, jnp.float32),
            legal_action_mask=jnp.zeros(NUM_ACTIONS, jnp.bool_), rewards=jnp.zeros(n, jnp.float32),
            terminated=jnp.bool_(False), truncated=jnp.bool_(False),
            hand_points=zeros, hand_pips=_pips(hands), blocked=jnp.bool_(False), scores=scores,
            hands=hands, deck_position=deck, bone_pos=bone_pos, bone_end=bone_end,
            left=jnp.int32(-1), right=jnp.int32(-1), placed=zeros, order=jnp.zeros(NUM_TILES, jnp.int32),
            line_count=jnp.int32(0), passes=jnp.int32(0), voids=zeros,
            opener=opener, hand_number=jnp.asarray(hand_number, jnp.int32), key=key,
        )

    # ------------------------------------------------------------------ stepping

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """The state after ``current_player`` plays ``action`` (an integer ``()``, int32 under ``jit``).

        ``key`` is accepted for pgx's signature and not used: later hands of a match are dealt
        from the key kept in the state. An ended episode is returned unchanged with zero rewards;
        an illegal action (one not in the mask, or an integer outside ``0..57``, whatever its
        width) ends the episode with ``ILLEGAL_PENALTY[reward]`` for the acting player.

        Raises:
            ValueError: for an action that is not an integer (a float or bool value or dtype), at
                trace time under ``jit``: it is never rounded to an action.
        """
        del key
        action = _action_index(action)
        clipped = jnp.clip(action, 0, NUM_ACTIONS - 1)
        legal = (action == clipped) & _pick(state.legal_action_mask, clipped)
        zero = jnp.zeros(self.num_players, jnp.float32)
        penalty = jnp.where(jnp.arange(self.num_players) == state.current_player, jnp.float32(self._penalty), zero)
        illegal = state.replace(rewards=penalty, terminated=jnp.bool_(True))
        after = _where(legal, self._play(state, clipped), illegal)
        return self._finish(_where(state.terminated, state.replace(rewards=zero), after))

    def _play(self, state: State, action: jax.Array) -> State:
        """Apply a legal ``action``: draw, pass or place; score a hand that ends, deal on in a match."""
        n = self.num_players
        seat = state.current_player
        is_draw = action == DRAW
        is_pass = action == PASS
        is_place = action < DRAW
        tile = jnp.minimum(action >> 1, NUM_TILES - 1)
        end = action & 1
        hand = _pick(state.hands, seat)
        drawn = jnp.sum(jnp.where(state.deck_position == state.bone_pos, jnp.arange(NUM_TILES, dtype=jnp.int32), 0))
        hand = jnp.where(is_draw, hand | (jnp.int32(1) << drawn), jnp.where(is_place, hand & ~(jnp.int32(1) << tile), hand))
        seats = jnp.arange(n, dtype=jnp.int32)
        hands = jnp.where(seats == seat, hand, state.hands)

        # Placement: the opening tile [a|b] leaves a on the left and b on the right; otherwise the
        # matching half joins the chosen end and the other half becomes its open value.
        low, high = _pick(jnp.asarray(_LOW), tile), _pick(jnp.asarray(_HIGH), tile)
        left, right = state.left, state.right
        empty = left < 0
        new_left = jnp.where(empty, low, jnp.where((end == 0), jnp.where(low == left, high, low), left))
        new_right = jnp.where(empty, high, jnp.where((end == 1), jnp.where(low == right, high, low), right))
        placed_here = is_place & (jnp.arange(NUM_TILES, dtype=jnp.int32) == tile)

        # A pass at the protected boneyard shows the passer holds neither open value.
        shown = (jnp.int32(1) << jnp.maximum(left, 0)) | (jnp.int32(1) << jnp.maximum(right, 0))
        voids = jnp.where(is_pass & (seats == seat), state.voids | shown, state.voids)
        passes = jnp.where(is_place, 0, state.passes + is_pass.astype(jnp.int32))

        domino = is_place & (hand == 0)
        blocked = is_pass & (passes == n)
        hand_over = domino | blocked

        # Scoring: a domino scores every pip left in the opponents' hands; a block scores only for
        # a single lowest total, the opponents' totals minus its own.
        pips = _pips(hands)
        total = jnp.sum(pips)
        lowest = jnp.min(pips)
        single_lowest = jnp.sum(pips == lowest) == 1
        block_points = jnp.where((pips == lowest) & single_lowest, total - 2 * lowest, 0)
        points = jnp.where(domino, jnp.where(seats == seat, total, 0), jnp.where(blocked, block_points, 0))
        scores = state.scores + points
        match_over = jnp.max(scores) >= self.target
        episode_over = hand_over & (match_over if self._match else jnp.bool_(True))

        played = state.replace(
            current_player=jnp.where(hand_over | is_draw, seat, (seat + 1) % n),
            rewards=jnp.where(hand_over, self._rewards(points, scores, episode_over), 0.0).astype(jnp.float32),
            terminated=episode_over, hand_points=points, hand_pips=pips, blocked=blocked, scores=scores,
            hands=hands, bone_pos=state.bone_pos + is_draw.astype(jnp.int32),
            left=jnp.where(is_place, new_left, left), right=jnp.where(is_place, new_right, right),
            placed=jnp.where(is_place & (seats == seat), state.placed | (jnp.int32(1) << tile), state.placed),
            order=jnp.where(placed_here, state.line_count + 1, state.order),
            line_count=state.line_count + is_place.astype(jnp.int32), passes=passes, voids=voids,
        )
        if not self._match:
            return played
        # A match deals the next hand in the step that ends one; the infos stay the ended hand's.
        words = _random_words(state.key)
        new_hands, deck, start = self._deal(words)
        following = self._new_hand(
            new_hands, deck, start, jnp.int32(NUM_TILES), (state.opener + 1) % n, scores, state.hand_number + 1,
            words[_KEY_WORDS],
        ).replace(rewards=played.rewards, hand_points=points, hand_pips=pips, blocked=blocked)
        return _where(hand_over & ~episode_over, following, played)

    def _rewards(self, points: jax.Array, scores: jax.Array, episode_over: jax.Array) -> jax.Array:
        """float32 ``(n,)``: the rewards of the step that ends a hand, by the environment's scheme."""
        n = self.num_players
        if self.reward == "points":
            return points.astype(jnp.float32)
        if self.reward == "zero_sum":
            # Own points minus the others' mean is the integer n * points - total over n - 1, which
            # the AEC environment computes in float64 and gives as float32. Computed here in float32,
            # a third is one unit in the last place off now and then (XLA divides by a constant as
            # a product with its rounded reciprocal): read the quotient from a table NumPy made.
            numerator = n * points - jnp.sum(points)
            index = jnp.clip(numerator + _MAX_POINTS, 0, self._zero_sum.shape[0] - 1)
            return jnp.take(jnp.asarray(self._zero_sum), index)
        best = jnp.max(scores)
        winner = (scores == best) & (jnp.sum(scores == best) == 1) & episode_over
        loser = jnp.any(winner) & ~winner
        return jnp.where(winner, np.float32(1.0), np.float32(0.0)) + jnp.where(loser, np.float32(-1.0 / (n - 1)), np.float32(0.0))

    def _finish(self, state: State) -> State:
        """Fill in the acting player's legal-action mask and observation."""
        return state.replace(
            legal_action_mask=self._legal_mask(state), observation=self._observation(state, state.current_player)
        )

    def _legal_mask(self, state: State) -> jax.Array:
        """bool ``(58,)``: placements of held tiles that fit the chosen end, draw, pass."""
        hand = _pick(state.hands, state.current_player)
        empty = state.left < 0
        # On an empty line any tile opens, with action 2 * tile + LEFT.
        fits_left = jnp.where(empty, hand, hand & _pick(jnp.asarray(_HOLDING), state.left))
        fits_right = jnp.where(empty, 0, hand & _pick(jnp.asarray(_HOLDING), state.right))
        can_draw = state.bone_end - state.bone_pos > PROTECTED_BONEYARD
        can_pass = ~can_draw & ((fits_left | fits_right) == 0)
        # Each entry from its action id (placement 2 * tile + end, then draw, pass): elementwise,
        # no concatenation, which XLA's CPU backend lowers to a branch per entry.
        action = jnp.arange(NUM_ACTIONS, dtype=jnp.int32)
        fits = jnp.where((action & 1) == 1, fits_right, fits_left)
        places = (action < DRAW) & (((fits >> jnp.minimum(action >> 1, NUM_TILES - 1)) & 1) == 1)
        mask = places | ((action == DRAW) & can_draw) | ((action == PASS) & can_pass)
        return mask & ~state.terminated

    # ------------------------------------------------------------------ observing

    def observe(self, state: State, player: jax.Array | int | None = None) -> jax.Array:
        """float32 ``(258,)``: absolute seat ``player``'s observation (default the player to act),
        the AEC environment's layout (:data:`draw_env.observation.BLOCKS`, seats relative to ``player``).

        A seat outside ``0..num_players - 1`` given as an array (traced or not) gives all zeros, the
        observation of no seat.

        Raises:
            ValueError: for a Python or NumPy seat outside ``0..num_players - 1``, or a seat that is
                not an integer (checked at trace time under ``jit``).
        """
        if player is None:
            return self._observation(state, state.current_player)
        seat = _seat_index(player, self.num_players)
        in_range = (seat >= 0) & (seat < self.num_players)
        return jnp.where(in_range, self._observation(state, seat), jnp.float32(0))

    def _observation(self, state: State, player: jax.Array) -> jax.Array:
        """:meth:`observe` of a seat in range (the step's own call: no check on its hot path).

        A few dozen facts are computed (masks, counts, the placement order) and each entry of the
        vector reads one of them through a table fixed per environment (:func:`_observation_table`):
        one fused pass writes the 258 entries.
        """
        n = self.num_players
        relative = jnp.arange(SEATS, dtype=jnp.int32)
        seats = jnp.arange(n, dtype=jnp.int32)
        # by_relative[r, s]: absolute seat s sits at relative seat r (one-hot sums, not gathers:
        # batched gathers are slow on CPU)
        by_relative = (seats[None, :] == (player + relative[:, None]) % n) & (relative < n)[:, None]

        def relative_of(per_seat: jax.Array) -> jax.Array:
            return jnp.sum(jnp.where(by_relative, per_seat[None, :], 0), axis=1)

        bones = state.bone_end - state.bone_pos
        to_act = jnp.where(state.terminated, -1, (state.current_player - player) % n)
        facts = {
            "zero": jnp.zeros(1, jnp.int32),
            "one": jnp.ones(1, jnp.int32),
            "hand": _pick(state.hands, player)[None],
            "line": jnp.sum(state.placed)[None],  # the seats' placed masks are disjoint
            "left": state.left[None],
            "right": state.right[None],
            "placed": relative_of(state.placed),
            "order": state.order,
            "sizes": relative_of(jax.lax.population_count(state.hands)),
            "bones": bones[None],
            "can_draw": (bones > PROTECTED_BONEYARD).astype(jnp.int32)[None],
            "voids": relative_of(state.voids),
            "to_act": to_act[None],
            "passes": state.passes[None],
            "scores": relative_of(state.scores),
            "target": jnp.full(1, self.target, jnp.int32),
        }
        values = jnp.concatenate([facts[name].astype(jnp.int32) for name in _FACTS])
        source, kind, argument = self._table
        read = values[source]
        entry = jnp.where(kind == _BIT, (read >> argument) & 1, jnp.where(kind == _VALUE, read, read == argument))
        return entry.astype(jnp.float32)


# How an observation entry reads its fact: a bit of a mask, the value itself, or value == argument.
_BIT, _VALUE, _EQUALS = 0, 1, 2
#: The facts an observation is read from, with their sizes, in this order.
_FACTS = {
    "zero": 1, "one": 1, "hand": 1, "line": 1, "left": 1, "right": 1, "placed": SEATS, "order": NUM_TILES,
    "sizes": SEATS, "bones": 1, "can_draw": 1, "voids": SEATS, "to_act": 1, "passes": 1, "scores": SEATS,
    "target": 1,
}
_FACT_AT = dict(zip(_FACTS, np.cumsum([0, *_FACTS.values()])[:-1].tolist()))


def _observation_table(num_players: int, match: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per observation entry (in :data:`draw_env.observation.BLOCKS` order): which fact it reads,
    how (:data:`_BIT`, :data:`_VALUE`, :data:`_EQUALS`) and the bit or value it reads."""
    rows: list[tuple[str, int, int, int]] = []  # (fact, offset in the fact, kind, argument)
    for block in BLOCKS:
        name = block.name
        if name in ("hand", "line"):
            rows += [(name, 0, _BIT, t) for t in range(NUM_TILES)]
        elif name in ("left_end", "right_end"):
            rows += [(name.removesuffix("_end"), 0, _EQUALS, v) for v in range(NUM_VALUES)]
        elif name == "placed_by":
            rows += [("placed", r, _BIT, t) for r in range(SEATS) for t in range(NUM_TILES)]
        elif name == "placement_order":
            rows += [("order", t, _VALUE, 0) for t in range(NUM_TILES)]
        elif name == "hand_sizes":
            rows += [("sizes", r, _VALUE, 0) for r in range(SEATS)]
        elif name in ("boneyard_size", "can_draw", "passes_in_row"):
            rows.append(({"boneyard_size": "bones", "passes_in_row": "passes"}.get(name, name), 0, _VALUE, 0))
        elif name == "lacks":
            rows += [("voids", r, _BIT, v) for r in range(SEATS) for v in range(NUM_VALUES)]
        elif name == "to_act":
            rows += [("to_act", 0, _EQUALS, r) for r in range(SEATS)]
        elif name == "in_play":
            rows += [("one" if r < num_players else "zero", 0, _VALUE, 0) for r in range(SEATS)]
        elif name == "scores":
            rows += [("scores" if match else "zero", r if match else 0, _VALUE, 0) for r in range(SEATS)]
        elif name == "target":
            rows.append(("target" if match else "zero", 0, _VALUE, 0))
        else:  # pragma: no cover - a new block must be given a row here
            raise AssertionError(f"observation block {name} has no source")
    assert len(rows) == OBSERVATION_SIZE
    source = np.array([_FACT_AT[fact] + offset for fact, offset, _, _ in rows], np.int32)
    kind = np.array([row[2] for row in rows], np.int32)
    argument = np.array([row[3] for row in rows], np.int32)
    return source, kind, argument
