"""The game of Draw as pure JAX functions, in pgx's ``Env`` style, for ``jax.jit`` and ``jax.vmap``.

Needs the ``jax`` extra (``pip install "draw-dominoes[jax]"``); ``import draw_env`` never imports
JAX. The rules are those of :mod:`draw_env.rules` (the reference), for every variant
(:class:`draw_env.rules.DrawGame`); observations, masks, rewards and infos are the AEC
environment's, checked step by step by ``tests/test_jax.py``, ``tests/test_jax_variants.py`` and,
over thousands of games, by ``benchmarks/jax_differential.py``.

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
are avoided (slow on CPU): picking a seat's value is a one-hot sum. Tile masks are int32 words
(:class:`_Masks`): one word while the set has at most 32 tiles (double-six and smaller), two for
the larger sets; the observation is read from the facts of :data:`draw_env.observation.FACTS`
through the variant's declared table (:meth:`draw_env.observation.Layout.fact_table`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np

from draw_env.checks import check_choice
from draw_env.observation import (
    EVENT_KINDS,
    FACTS,
    OBS_TYPES,
    READS,
    SEATS,
    check_history_room,
    information_layout,
    layout,
)
from draw_env.rules import (
    DEFAULT_MAX_PIP,
    EPISODES,
    PROTECTED_BONEYARD,
    REWARDS,
    check_reward_episode,
    illegal_move_penalty,
    next_opener,
    variant_game,
)

#: Bits in a mask word (int32: JAX's default integer with 64-bit types off).
_WORD_BITS = 32
_BIT, _VALUE, _ONE_HOT = (READS.index(read) for read in ("bit", "value", "one_hot"))


def _signed(word: int) -> int:
    """A 32-bit word as the int32 with the same bits."""
    return word - (1 << _WORD_BITS) if word >= 1 << (_WORD_BITS - 1) else word


class _Masks:
    """Tile masks of a set of ``num_tiles`` tiles as int32 words, tile ``t`` at bit ``t % 32`` of
    word ``t // 32``: a mask is one int32 ``()`` up to 32 tiles (the default game's 28, whose code
    is then the single-word code), else int32 ``(words,)`` (two words up to the double-nine's 55).

    Every method takes masks with any leading axes (the trailing word axis, if any, last).
    """

    def __init__(self, num_tiles: int) -> None:
        self.words = -(-num_tiles // _WORD_BITS)
        self.single = self.words == 1
        tile = np.arange(num_tiles)
        self._tile_word = (tile // _WORD_BITS).astype(np.int32)
        self._tile_bit = np.array([_signed(1 << (t % _WORD_BITS)) for t in tile], np.int32)

    def const(self, mask: int) -> np.ndarray:
        """A Python int mask as a constant."""
        words = [_signed((mask >> (_WORD_BITS * w)) & 0xFFFFFFFF) for w in range(self.words)]
        return np.array(words[0] if self.single else words, np.int32)

    def rows(self, condition: jax.Array) -> jax.Array:
        """A condition on masks' leading axes, broadcastable against the masks."""
        return condition if self.single else condition[..., None]

    def bit(self, tile: jax.Array) -> jax.Array:
        """The mask of the one tile ``tile`` (an int32 array of ids)."""
        if self.single:
            return jnp.int32(1) << tile
        word = jnp.arange(self.words, dtype=jnp.int32)
        return jnp.where(word == (tile >> 5)[..., None], jnp.int32(1) << (tile & 31)[..., None], 0)

    def test(self, mask: jax.Array, tile: jax.Array | int) -> jax.Array:
        """int32 1 where ``tile`` (an int, or ids broadcast against the masks' leading axes) is in ``mask``."""
        if self.single:
            return (mask >> tile) & 1
        if isinstance(tile, int):
            return (mask[..., tile // _WORD_BITS] >> (tile % _WORD_BITS)) & 1
        word = mask[..., 0]
        for index in range(1, self.words):
            word = jnp.where((tile >> 5) == index, mask[..., index], word)
        return (word >> (tile & 31)) & 1

    def empty(self, mask: jax.Array) -> jax.Array:
        """bool: ``mask`` holds no tile."""
        return mask == 0 if self.single else jnp.all(mask == 0, axis=-1)

    def count(self, mask: jax.Array) -> jax.Array:
        """int32: tiles in ``mask``."""
        counts = jax.lax.population_count(mask)
        return counts if self.single else jnp.sum(counts, axis=-1)

    def of_tiles(self, held: jax.Array) -> jax.Array:
        """The masks of bool ``(..., num_tiles)`` membership rows (a sum of distinct bits, which
        wraps into the sign bit as the word's top bit)."""
        bits = jnp.where(held, jnp.asarray(self._tile_bit), 0)
        if self.single:
            return jnp.sum(bits, axis=-1, dtype=jnp.int32)
        words = [jnp.sum(jnp.where(self._tile_word == w, bits, 0), axis=-1, dtype=jnp.int32) for w in range(self.words)]
        return jnp.stack(words, axis=-1)


_T = TypeVar("_T")


def _pytree(cls: type[_T]) -> type[_T]:
    """Register a frozen dataclass of arrays as a JAX pytree, every field a data field."""
    fields = dataclasses.fields(cast(Any, cls))
    jax.tree_util.register_dataclass(cls, data_fields=[field.name for field in fields], meta_fields=[])
    return cls


_P = TypeVar("_P", bound="_Pytree")


class _Pytree:
    """What the pytrees below share: :meth:`replace`."""

    def replace(self: _P, **changes: Any) -> _P:
        """A copy with ``changes`` (pgx's ``State.replace``)."""
        return cast(_P, dataclasses.replace(cast(Any, self), **changes))


@_pytree
@dataclasses.dataclass(frozen=True)
class State(_Pytree):
    """One game (a batch under ``vmap``: every field gains a leading batch axis). ``n`` = players,
    ``T`` = tiles of the set (28 for double-six), ``M`` = a mask: int32 ``()`` for ``T <= 32``,
    else int32 ``(2,)`` (tile ``t`` at bit ``t % 32`` of word ``t // 32``).

    The first six attributes are pgx's fields, the next four the AEC environment's infos, and the
    rest the position (hidden information included: show agents ``observation`` only).

    Attributes:
        current_player: int32 ``()``, absolute seat to act (after the episode, the last mover).
        observation: float32 ``(size,)``, ``current_player``'s observation (the AEC layout; 258
            entries for double-six).
        legal_action_mask: bool ``(2T + 2,)``, its legal actions (all False once the episode is over).
        rewards: float32 ``(n,)`` by absolute seat, what the AEC environment gives at this step.
        terminated: bool ``()``, the episode (hand or match) is over.
        truncated: bool ``()``, always False (every hand ends).
        hand_points: int32 ``(n,)``, points each seat scored in a hand that ended at this step, else 0.
        hand_pips: int32 ``(n,)``, pips in each hand; at the step a hand ends, the pips left.
        blocked: bool ``()``, a blocked hand ended at this step.
        scores: int32 ``(n,)``, match totals, the finished hand included (info ``score``).
        hands: ``(n,) + M``, each seat's tiles as a mask.
        deck_position: int32 ``(T,)``, per tile id its place in the deal (-1 for the hand tiles
            of a fixed deal): the boneyard is the tiles with ``bone_pos <= deck_position <
            bone_end``, drawn in that order.
        bone_pos, bone_end: int32 ``()``, tiles left to draw = ``bone_end - bone_pos``.
        left, right: int32 ``()``, the open values, -1 on an empty line.
        placed: ``(n,) + M``, per seat the mask of the tiles it placed on the line.
        order: int32 ``(T,)``, per tile id ``k`` if it was the k-th tile placed, else 0.
        line_count: int32 ``()``, tiles placed.
        passes: int32 ``()``, passes since the last placement.
        voids: int32 ``(n,)``, per seat a mask of the values it showed it lacks by passing.
        opener: int32 ``()``, this hand's opener.
        hand_number: int32 ``()``, hands dealt before this one in the match.
        key: uint32 ``(2,)``, the key later hands of a match are dealt from.

    The hand's history, for ``obs_type="information_state"`` (with ``"observation"`` each of
    these is an empty int32 ``(0,)``; ``E`` = ``DrawGame.max_hand_actions``):

    Attributes:
        drawn: int32 ``(T,)``, per tile ``k | seat << 9`` if the hand's k-th action was ``seat``
            drawing it, else 0.
        events: int32 ``(E,)``, each action so far as its code with absolute seats,
            :func:`draw_env.observation.event_code` of ``(seat, kind)``; 0 past the last.
        event_count: int32 ``()``, the hand's actions so far.
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
    drawn: jax.Array
    events: jax.Array
    event_count: jax.Array


#: Where a seat starts in ``State.drawn`` (past the event index, up to 256).
_SEAT_SHIFT = 9
#: The kinds of :data:`draw_env.observation.EVENT_KINDS` (a placement's is its end).
_KINDS = len(EVENT_KINDS)
_KIND_DRAW, _KIND_PASS = EVENT_KINDS.index("draw"), EVENT_KINDS.index("pass")


@_pytree
@dataclasses.dataclass(frozen=True)
class DealPool(_Pytree):
    """Dealt hands waiting to replace finished games (:meth:`DrawDominoes.fast_step`); ``K`` deals.

    Attributes:
        hands: ``(K, n) + M``, each deal's hands.
        deck_position: int32 ``(K, T)``, each tile's place in the deal.
        opener: int32 ``(K,)``, each deal's opener.
        next_key: uint32 ``(K, 2)``, each deal's key of a match's later hands.
        head: int32 ``()``, the next deal handed out (a position modulo ``K``).
        key: uint32 ``(2,)``, where the next refills are dealt from.
    """

    hands: jax.Array
    deck_position: jax.Array
    opener: jax.Array
    next_key: jax.Array
    head: jax.Array
    key: jax.Array


def _where(condition: jax.Array, then: State, otherwise: State) -> State:
    """``then`` where the scalar ``condition`` holds, else ``otherwise``, field by field."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(condition, a, b), then, otherwise)


def _pick(values: jax.Array, index: jax.Array) -> jax.Array:
    """``values[index]`` for a scalar ``index`` along the first axis, as a one-hot sum (batched
    gathers are slow on CPU)."""
    hit = jnp.arange(values.shape[0]) == index
    hit = hit.reshape(hit.shape + (1,) * (values.ndim - 1))
    if values.dtype == jnp.bool_:
        return jnp.any(hit & values, axis=0)
    return jnp.sum(jnp.where(hit, values, 0), axis=0, dtype=values.dtype)


def _raw_key(key: jax.Array) -> jax.Array:
    """The uint32 ``(2,)`` words of a threefry key (typed ``jax.random.key`` keys too), which
    ``jnp.where`` can pick between."""
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    if key.shape[-1:] != (2,) or key.dtype != jnp.uint32:
        raise ValueError(f"key must be a threefry key (jax.random.key or PRNGKey), got {key.dtype}{list(key.shape)}")
    return key


def _deck_positions(words: jax.Array) -> jax.Array:
    """A uniformly shuffled deck from ``T`` random words: int32 ``(T,)``, each tile id's place in it.

    A tile's place is the rank of its word among the ``T``, with the tile id in the word's low
    bits (5 up to 32 tiles, 6 beyond) so that no two words tie (a tie of the other bits,
    probability below 3e-6 per double-six deal, is broken by tile id). Ranks, not a sort:
    comparisons that vectorise well under ``vmap``.
    """
    num_tiles = words.shape[0]
    low_bits = max(5, (num_tiles - 1).bit_length())
    keep = jnp.uint32((0xFFFFFFFF >> low_bits) << low_bits)
    keyed = (words & keep) | jnp.arange(num_tiles, dtype=jnp.uint32)
    return jnp.sum(keyed[None, :] < keyed[:, None], axis=1, dtype=jnp.int32)


# One threefry call per deal (threefry is costly to compile and to run under vmap): two words,
# stretched to T + 4 by the lowbias32 integer hash; T shuffle, one draws the opener (modulo n: a
# bias below 1e-9) and the last two are the key of the next deal (32 words for double-six).
_EXTRA_WORDS = 4


def _random_words(key: jax.Array, count: int) -> jax.Array:
    """uint32 ``(count,)`` random words from a key (typed or raw)."""
    seed = jax.random.bits(key, (2,), jnp.uint32)
    x = (seed[0] ^ (jnp.arange(count, dtype=jnp.uint32) * jnp.uint32(0x9E3779B9))) + seed[1]
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


def _action_index(action: Any, num_actions: int) -> jax.Array:
    """``action`` as int32, an integer outside ``0..num_actions - 1`` of any width as -1 (illegal):
    the step never plays a wrapped or truncated number as another action."""
    host = _integer_dtype("action", action)
    if host is None:
        return _narrowed(action, num_actions)
    in_range = (host >= 0) & (host < num_actions)
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
        max_pip, hand_size, protected: the variant (:class:`draw_env.rules.DrawGame`): the
            double-``max_pip`` set, tiles dealt to each player (None: 7 with 2 or 3 players, 6
            with 4) and boneyard tiles never drawn.
        obs_type: ``"observation"`` (the default) or ``"information_state"``: what
            ``state.observation`` and :meth:`observe` give, as the AEC environment's argument of
            that name (the observation, then the player's deal and the hand's actions in order;
            the state then keeps the hand's history).
        variant: a named variant of :data:`draw_env.rules.VARIANTS` (``"micro"``, ``"mini"``,
            ``"midi"``, ``"draw"``) instead of the three numbers; a number left at its default
            takes the variant's, any other must be the variant's own (else ``ValueError``).

    Raises:
        ValueError: for a bad argument, naming it and the allowed values.
    """

    id = "draw_dominoes"
    version = "v0"

    def __init__(
        self,
        num_players: int = 2,
        episode: str = "hand",
        reward: str = "zero_sum",
        max_pip: int = DEFAULT_MAX_PIP,
        hand_size: int | None = None,
        protected: int = PROTECTED_BONEYARD,
        obs_type: str = "observation",
        *,
        variant: str | None = None,
    ) -> None:
        self.num_players = check_choice("num_players", num_players, (2, 3, 4))
        self.obs_type = check_choice("obs_type", obs_type, OBS_TYPES)
        self.episode = check_choice("episode", episode, EPISODES)
        self.reward = check_choice("reward", reward, REWARDS)
        check_reward_episode(self.reward, self.episode)
        game = variant_game(self.num_players, variant, max_pip, hand_size, protected)
        self.game = game
        self.hand_size = game.hand_size
        self.target = game.target
        self.num_actions = game.num_actions
        observed = layout(game)
        self._information = self.obs_type == "information_state"
        self._info = information_layout(game)
        self.observation_shape = (self._info.size if self._information else observed.size,)
        #: The shape of :meth:`full_state`: every seat's hand, then the boneyard in drawing order.
        self.full_state_shape = ((self.num_players + 1) * game.num_tiles,)
        self._match = self.episode == "match"
        self._penalty = illegal_move_penalty(self.reward, game)
        self._num_tiles = game.num_tiles
        self._num_values = game.tiles.num_values
        self._draw, self._pass, self._protected = game.draw_action, game.pass_action, game.protected
        self._masks = _Masks(game.num_tiles)
        self._low = np.array(game.tiles.low, np.int32)
        self._high = np.array(game.tiles.high, np.int32)
        self._holding = np.stack([self._masks.const(mask) for mask in game.tiles.holding])
        self._doubles = [game.tiles.tile_id((value, value)) for value in range(self._num_values)]
        # per value v >= 1, the mask of the tiles whose low (high) half is v: a tile's half is read
        # as a sum of bit tests, elementwise across a batch (a pick from a per-tile table is a
        # reduction along the tile axis under vmap, slower on CPU)
        self._low_masks = [self._masks.const(self._mask_of(self._low == value)) for value in range(1, self._num_values)]
        self._high_masks = [self._masks.const(self._mask_of(self._high == value)) for value in range(1, self._num_values)]
        self._facts = _FactTable(observed, self._masks.words, self._info if self._information else None)
        # zero_sum rewards by numerator n * points - total, from -max_points to (n - 1) * max_points
        others = self.num_players - 1
        points = game.max_hand_points
        self._max_points = points
        self._zero_sum = np.array([x / others for x in range(-points, others * points + 1)], np.float32)

    def __repr__(self) -> str:
        variant = "" if self.game.is_default else "".join(f", {k}={v}" for k, v in self.game.variant.items())
        return f"DrawDominoes(num_players={self.num_players}, episode={self.episode!r}, reward={self.reward!r}{variant})"

    # ------------------------------------------------------------------ dealing

    def init(self, key: jax.Array) -> State:
        """A new episode dealt from ``key`` (a ``jax.random.key`` or ``PRNGKey``): shuffle, deal,
        draw the opener by lottery, zero scores. The same key gives the same game."""
        words = _random_words(key, self._num_tiles + _EXTRA_WORDS)
        opener = (words[self._num_tiles] % self.num_players).astype(jnp.int32)
        hands, deck, start = self._deal(words)
        scores = jnp.zeros(self.num_players, jnp.int32)
        return self._finish(
            self._new_hand(hands, deck, start, jnp.int32(self._num_tiles), opener, scores, 0, words[-2:])
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
            hands: int32 ``(num_players, k)``, each seat's tile ids padded with -1, for any ``k``
                from the longest hand to ``T`` (hands may differ in size for set-up positions).
            boneyard: int32 ``(m,)``, ``m <= T``: tile ids in drawing order (``boneyard[0]``
                first), then -1 padding; at least ``protected`` tiles (``(0,)``, empty, when
                ``protected`` is 0 and the hands hold every tile). Hands and boneyard hold each
                tile once.
            opener: int32, the seat that leads.
            scores: int32 ``(num_players,)``, starting match scores below the target
                (``episode="match"`` only); default zeros.
            key: the key later hands of a match are dealt from; default ``jax.random.key(0)``.

        With concrete arrays the deal is checked as the AEC environment checks its options (a
        ``ValueError`` says what is wrong); under ``jit``/``vmap`` only the shapes are checked,
        and an invalid deal gives an undefined game.
        """
        n, num_tiles = self.num_players, self._num_tiles
        hands = jnp.asarray(hands, jnp.int32)
        boneyard = jnp.asarray(boneyard, jnp.int32)
        if hands.ndim != 2 or hands.shape[0] != n or not 1 <= hands.shape[1] <= num_tiles:
            raise ValueError(f"hands must be an int32 array ({n}, k) of tile ids padded with -1, got shape {hands.shape}")
        fewest = self._protected
        if boneyard.ndim != 1 or not fewest <= boneyard.shape[0] <= num_tiles:
            raise ValueError(
                f"boneyard must be an int32 array (m,) with {fewest} <= m <= {num_tiles}, got shape {boneyard.shape}"
            )
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
        tile_ids = jnp.arange(num_tiles, dtype=jnp.int32)
        masks = self._masks.of_tiles(jnp.any(hands[:, :, None] == tile_ids, axis=1))
        order = jnp.arange(boneyard.shape[0], dtype=jnp.int32)
        in_boneyard = boneyard[None, :] == tile_ids[:, None]
        deck = jnp.max(jnp.where(in_boneyard, order[None, :], -1), axis=1, initial=-1)  # initial: m may be 0
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
            if np.any((ids < -1) | (ids >= self._num_tiles)):
                raise ValueError(
                    f"{name} must hold tile ids 0..{self._num_tiles - 1} and -1 padding, got {ids.tolist()}"
                )
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
            if self._information:
                check_history_room(self.game, int(tiles_first.sum()))
        except ValueError as error:
            raise ValueError(f"init_deal: {error}") from None

    def _deal(self, words: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        """Shuffle (from ``words[:T]``) and cut as ``DrawGame.deal`` cuts its deck: hand masks
        ``(n,) + M``, each tile's deck position ``(T,)`` and where the boneyard starts."""
        position = _deck_positions(words[: self._num_tiles])
        seats = jnp.arange(self.num_players, dtype=jnp.int32)
        held = (position // self.hand_size)[None, :] == seats[:, None]
        return self._masks.of_tiles(held), position, jnp.int32(self.num_players * self.hand_size)

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
            current_player=opener, observation=jnp.zeros(self.observation_shape, jnp.float32),
            legal_action_mask=jnp.zeros(self.num_actions, jnp.bool_), rewards=jnp.zeros(n, jnp.float32),
            terminated=jnp.bool_(False), truncated=jnp.bool_(False),
            hand_points=zeros, hand_pips=self._pips(hands), blocked=jnp.bool_(False), scores=scores,
            hands=hands, deck_position=deck, bone_pos=bone_pos, bone_end=bone_end,
            left=jnp.int32(-1), right=jnp.int32(-1), placed=jnp.zeros_like(hands),
            order=jnp.zeros(self._num_tiles, jnp.int32), line_count=jnp.int32(0), passes=jnp.int32(0),
            voids=zeros, opener=opener, hand_number=jnp.asarray(hand_number, jnp.int32), key=key,
            **self._fresh_history(hands),
        )

    def _fresh_history(self, hands: jax.Array) -> dict[str, jax.Array]:
        """The history fields of a freshly dealt hand (empty arrays without information states)."""
        if not self._information:
            return dict.fromkeys(("drawn", "events", "event_count"), jnp.zeros(0, jnp.int32))
        return {"drawn": jnp.zeros(self._num_tiles, jnp.int32),
                "events": jnp.zeros(self._info.max_events, jnp.int32), "event_count": jnp.int32(0)}

    @staticmethod
    def _mask_of(held: np.ndarray) -> int:
        """The Python int mask of the tiles where ``held`` (bool per tile id) holds."""
        return sum(1 << int(tile) for tile in np.flatnonzero(held))

    def _half(self, masks: list[np.ndarray], tile: jax.Array) -> jax.Array:
        """int32: the value of ``tile``'s half whose masks per value 1, 2, ... are ``masks``."""
        value = jnp.int32(0)
        for number, mask in enumerate(masks, start=1):
            value = value + number * self._masks.test(jnp.asarray(mask), tile)
        return value

    def _pips(self, masks: jax.Array) -> jax.Array:
        """int32 pip totals of tile masks ``(...) + M``.

        A tile ``[a|b]`` holds ``a`` and ``b``: counting ``v`` for each held tile that shows value ``v``
        counts every tile's pips, doubles once, so each held double ``[v|v]`` adds ``v`` again.
        """
        total = jnp.zeros(masks.shape[: masks.ndim - (0 if self._masks.single else 1)], jnp.int32)
        for value in range(1, self._num_values):
            shown = self._masks.count(masks & self._holding[value]) + self._masks.test(masks, self._doubles[value])
            total = total + value * shown
        return total

    # ------------------------------------------------------------------ stepping

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """The state after ``current_player`` plays ``action`` (an integer ``()``, int32 under ``jit``).

        ``key`` is accepted for pgx's signature and not used: later hands of a match are dealt
        from the key kept in the state. An ended episode is returned unchanged with zero rewards;
        an illegal action (one not in the mask, or an integer outside ``0..2T+1``, whatever its
        width) ends the episode with :func:`draw_env.rules.illegal_move_penalty` for the acting player.

        Raises:
            ValueError: for an action that is not an integer (a float or bool value or dtype), at
                trace time under ``jit``: it is never rounded to an action.
        """
        del key
        return self._finish(self._advance(state, action))

    def _advance(self, state: State, action: Any) -> State:
        """:meth:`step` without the new observation and mask."""
        action = _action_index(action, self.num_actions)
        clipped = jnp.clip(action, 0, self.num_actions - 1)
        legal = (action == clipped) & _pick(state.legal_action_mask, clipped)
        zero = jnp.zeros(self.num_players, jnp.float32)
        penalty = jnp.where(jnp.arange(self.num_players) == state.current_player, jnp.float32(self._penalty), zero)
        illegal = state.replace(rewards=penalty, terminated=jnp.bool_(True))
        after = _where(legal, self._play(state, clipped), illegal)
        return _where(state.terminated, state.replace(rewards=zero), after)

    def _play(self, state: State, action: jax.Array) -> State:
        """Apply a legal ``action``: draw, pass or place; score a hand that ends, deal on in a match."""
        n, masks, num_tiles = self.num_players, self._masks, self._num_tiles
        seat = state.current_player
        is_draw = action == self._draw
        is_pass = action == self._pass
        is_place = action < self._draw
        tile = jnp.minimum(action >> 1, num_tiles - 1)
        end = action & 1
        hand = _pick(state.hands, seat)
        tile_ids = jnp.arange(num_tiles, dtype=jnp.int32)
        drawn = jnp.sum(jnp.where(state.deck_position == state.bone_pos, tile_ids, 0))
        hand = jnp.where(is_draw, hand | masks.bit(drawn), jnp.where(is_place, hand & ~masks.bit(tile), hand))
        seats = jnp.arange(n, dtype=jnp.int32)
        hands = jnp.where(masks.rows(seats == seat), hand, state.hands)

        # Placement: the opening tile [a|b] leaves a on the left and b on the right; otherwise the
        # matching half joins the chosen end and the other half becomes its open value.
        low, high = self._half(self._low_masks, tile), self._half(self._high_masks, tile)
        left, right = state.left, state.right
        empty = left < 0
        new_left = jnp.where(empty, low, jnp.where((end == 0), jnp.where(low == left, high, low), left))
        new_right = jnp.where(empty, high, jnp.where((end == 1), jnp.where(low == right, high, low), right))
        placed_here = is_place & (tile_ids == tile)

        # A pass at the protected boneyard shows the passer holds neither open value.
        shown = (jnp.int32(1) << jnp.maximum(left, 0)) | (jnp.int32(1) << jnp.maximum(right, 0))
        voids = jnp.where(is_pass & (seats == seat), state.voids | shown, state.voids)
        passes = jnp.where(is_place, 0, state.passes + is_pass.astype(jnp.int32))

        domino = is_place & masks.empty(hand)
        blocked = is_pass & (passes == n)
        hand_over = domino | blocked

        # Scoring: a domino scores every pip left in the opponents' hands; a block scores only for
        # a single lowest total, the opponents' totals minus its own.
        pips = self._pips(hands)
        total = jnp.sum(pips)
        lowest = jnp.min(pips)
        single_lowest = jnp.sum(pips == lowest) == 1
        block_points = jnp.where((pips == lowest) & single_lowest, total - 2 * lowest, 0)
        points = jnp.where(domino, jnp.where(seats == seat, total, 0), jnp.where(blocked, block_points, 0))
        scores = state.scores + points
        match_over = jnp.max(scores) >= self.target
        episode_over = hand_over & (match_over if self._match else jnp.bool_(True))

        placer = masks.rows(is_place & (seats == seat))
        played = state.replace(
            current_player=jnp.where(hand_over | is_draw, seat, (seat + 1) % n),
            rewards=jnp.where(hand_over, self._rewards(points, scores, episode_over), 0.0).astype(jnp.float32),
            terminated=episode_over, hand_points=points, hand_pips=pips, blocked=blocked, scores=scores,
            hands=hands, bone_pos=state.bone_pos + is_draw.astype(jnp.int32),
            left=jnp.where(is_place, new_left, left), right=jnp.where(is_place, new_right, right),
            placed=jnp.where(placer, state.placed | masks.bit(tile), state.placed),
            order=jnp.where(placed_here, state.line_count + 1, state.order),
            line_count=state.line_count + is_place.astype(jnp.int32), passes=passes, voids=voids,
        )
        if self._information:
            index = state.event_count
            slot = jnp.arange(self._info.max_events, dtype=jnp.int32) == index
            kind = jnp.where(is_place, end, jnp.where(is_draw, _KIND_DRAW, _KIND_PASS))
            played = played.replace(
                drawn=jnp.where(is_draw & (tile_ids == drawn), (index + 1) | seat << _SEAT_SHIFT, state.drawn),
                events=jnp.where(slot, 1 + _KINDS * seat + kind, state.events),
                event_count=index + 1,
            )
        if not self._match:
            return played
        # A match deals the next hand in the step that ends one; the infos stay the ended hand's.
        words = _random_words(state.key, num_tiles + _EXTRA_WORDS)
        new_hands, deck, start = self._deal(words)
        # rules.next_opener is plain arithmetic, which holds for a traced seat too.
        opener = cast(jax.Array, next_opener(cast(int, state.opener), n))
        following = self._new_hand(
            new_hands, deck, start, jnp.int32(num_tiles), opener, scores,
            state.hand_number + 1, words[-2:],
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
            index = jnp.clip(numerator + self._max_points, 0, self._zero_sum.shape[0] - 1)
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
        """bool ``(2T + 2,)``: placements of held tiles that fit the chosen end, draw, pass."""
        masks = self._masks
        hand = _pick(state.hands, state.current_player)
        empty = state.left < 0
        # On an empty line any tile opens, with action 2 * tile + LEFT.
        fits_left = jnp.where(empty, hand, hand & _pick(jnp.asarray(self._holding), state.left))
        fits_right = jnp.where(empty, 0, hand & _pick(jnp.asarray(self._holding), state.right))
        can_draw = state.bone_end - state.bone_pos > self._protected
        can_pass = ~can_draw & masks.empty(fits_left | fits_right)
        # Each entry from its action id (placement 2 * tile + end, then draw, pass): elementwise,
        # no concatenation, which XLA's CPU backend lowers to a branch per entry.
        action = jnp.arange(self.num_actions, dtype=jnp.int32)
        fits = jnp.where(masks.rows((action & 1) == 1), fits_right, fits_left)
        tile = jnp.minimum(action >> 1, self._num_tiles - 1)
        places = (action < self._draw) & (masks.test(fits, tile) == 1)
        mask = places | ((action == self._draw) & can_draw) | ((action == self._pass) & can_pass)
        return mask & ~state.terminated

    # ------------------------------------------------------------------ the fast training loop

    def deal_pool(self, key: jax.Array, size: int) -> DealPool:
        """``size`` fresh deals for :meth:`fast_step` (``size`` at least its ``refill``; the batch
        size is a good choice)."""
        keys = jax.random.split(key, size + 1)
        hands, deck, opener, next_key = jax.vmap(self._fresh_deal)(keys[1:])
        return DealPool(hands, deck, opener, next_key, jnp.int32(0), _raw_key(keys[0]))

    def _fresh_deal(self, key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
        """What :meth:`init` deals from ``key``: hands, deck positions, opener, next key."""
        words = _random_words(key, self._num_tiles + _EXTRA_WORDS)
        hands, deck, _ = self._deal(words)
        return hands, deck, (words[self._num_tiles] % self.num_players).astype(jnp.int32), words[-2:]

    def fast_step(self, state: State, action: jax.Array, pool: DealPool, refill: int) -> tuple[State, DealPool]:
        """A whole batch's step with auto-reset (``state`` and ``action`` with a leading batch axis;
        not for ``vmap``): the training loop's fast alternative to ``pgx.experimental.auto_reset``.

        As pgx's ``auto_reset``: a game whose episode ends at this step comes back as a new
        episode, with ``terminated`` True and the ending step's ``rewards`` (cleared at the next
        call). Unlike it, the new episode is not dealt here for every game (under ``vmap`` both
        branches run): finished games take the pool's next deals in batch order, the pool deals
        ``refill`` new ones per step in their place, and the observation and mask are built once,
        after the choice. A deal is played twice only if more than ``refill`` games end in one
        step (the pool's positions a step skips keep their older deals); an episode lasts tens
        of steps, so ``refill`` of a tenth of the batch leaves that rare.

        Returns:
            The next states and the pool.
        """
        size = pool.opener.shape[0]
        live = state.replace(
            terminated=jnp.zeros_like(state.terminated),
            rewards=jnp.where(state.terminated[:, None], 0.0, state.rewards).astype(jnp.float32),
        )
        stepped = jax.vmap(self._advance)(live, action)
        done = stepped.terminated
        index = (pool.head + jnp.cumsum(done, dtype=jnp.int32) - 1) % size
        opener = jnp.take(pool.opener, index, axis=0)
        fresh = jax.vmap(self._new_hand, in_axes=(0, 0, None, None, 0, None, None, 0))(
            jnp.take(pool.hands, index, axis=0), jnp.take(pool.deck_position, index, axis=0),
            jnp.int32(self.num_players * self.hand_size), jnp.int32(self._num_tiles), opener, jnp.zeros(self.num_players, jnp.int32), 0,
            jnp.take(pool.next_key, index, axis=0),
        ).replace(rewards=stepped.rewards)
        merged = jax.tree_util.tree_map(
            lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b), fresh, stepped
        )
        keys = jax.random.split(pool.key, refill + 1)
        hands, deck, openers, next_keys = jax.vmap(self._fresh_deal)(keys[1:])
        slots = (pool.head + jnp.arange(refill, dtype=jnp.int32)) % size
        pool = DealPool(
            pool.hands.at[slots].set(hands), pool.deck_position.at[slots].set(deck),
            pool.opener.at[slots].set(openers), pool.next_key.at[slots].set(next_keys),
            (pool.head + jnp.sum(done, dtype=jnp.int32)) % size, _raw_key(keys[0]),
        )
        # The mask and observation of a new episode are those of a live game: terminated is set after.
        return jax.vmap(self._finish)(merged).replace(terminated=done), pool

    # ------------------------------------------------------------------ observing

    def observe(self, state: State, player: jax.Array | int | None = None) -> jax.Array:
        """float32 ``observation_shape``: absolute seat ``player``'s observation (default the player
        to act), the AEC environment's layout (:func:`draw_env.observation.layout`, seats relative
        to ``player``).

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

    def full_state(self, state: State, player: jax.Array | int) -> jax.Array:
        """float32 ``full_state_shape``: the hidden information of ``state`` seen from absolute seat
        ``player``'s side, as numbers in ``[0, 1]`` ready for a network (a critic trained on the full
        state; agents play from :meth:`observe`). ``(n + 1) * T`` entries, ``T`` the set's tiles:

        * ``hands``, ``n`` rows of ``T``: row ``r`` is seat ``(player + r) % n``'s hand (row 0 the
          player's own, then the seats in turn order, as the observation's relative seats), 1 per
          tile held, else 0;
        * ``boneyard``, ``T``: per tile in the boneyard ``(T + 1 - k) / T`` where it is the ``k``-th
          to be drawn (1 the next draw; the protected tiles last), 0 for a tile not in it.

        A seat outside ``0..num_players - 1`` given as an array gives all zeros, as :meth:`observe`.

        Raises:
            ValueError: for a Python or NumPy seat outside ``0..num_players - 1``, or a seat that is
                not an integer (checked at trace time under ``jit``).
        """
        n, num_tiles = self.num_players, self._num_tiles
        seat = _seat_index(player, n)
        tiles = jnp.arange(num_tiles, dtype=jnp.int32)
        held = self._masks.test(state.hands[:, None], tiles)  # (n, T), by absolute seat
        seats = jnp.arange(n, dtype=jnp.int32)
        # rows[r, s]: absolute seat s is relative seat r (a one-hot sum, not a gather: see _pick)
        rows = seats[None, :] == (seat + seats[:, None]) % n
        hands = jnp.sum(jnp.where(rows[:, :, None], held[None], 0), axis=1)
        place = state.deck_position - state.bone_pos  # 0 for the next tile drawn
        in_boneyard = (place >= 0) & (state.deck_position < state.bone_end)
        boneyard = jnp.where(in_boneyard, (num_tiles - place) / np.float32(num_tiles), 0.0)
        full = jnp.concatenate([hands.reshape(-1).astype(jnp.float32), boneyard.astype(jnp.float32)])
        return jnp.where((seat >= 0) & (seat < n), full, jnp.float32(0))

    def _observation(self, state: State, player: jax.Array) -> jax.Array:
        """:meth:`observe` of a seat in range (the step's own call: no check on its hot path).

        The facts of :data:`draw_env.observation.FACTS` are computed (masks, counts, the placement
        order; per-seat facts in relative seats) and each entry of the vector reads one of them
        through the variant's table (:class:`_FactTable`): one fused pass writes the vector.
        """
        n = self.num_players
        relative = jnp.arange(SEATS, dtype=jnp.int32)
        seats = jnp.arange(n, dtype=jnp.int32)
        # by_relative[r, s]: absolute seat s sits at relative seat r (one-hot sums, not gathers:
        # batched gathers are slow on CPU)
        by_relative = (seats[None, :] == (player + relative[:, None]) % n) & (relative < n)[:, None]

        def relative_of(per_seat: jax.Array) -> jax.Array:
            hit = by_relative.reshape(by_relative.shape + (1,) * (per_seat.ndim - 1))
            return jnp.sum(jnp.where(hit, per_seat[None], 0), axis=1, dtype=jnp.int32)

        bones = state.bone_end - state.bone_pos
        zeros = jnp.zeros(SEATS, jnp.int32)
        per_seat = {"hand": state.hands, "placed": state.placed, "sizes": self._masks.count(state.hands),
                    "voids": state.voids}
        # A per-seat fact the table reads for the observer alone is stored as that one row.
        facts = {name: _pick(values, player) if self._facts.observer_only[name] else relative_of(values)
                 for name, values in per_seat.items()}
        facts.update({
            # the seat to act, found in relative seats directly (cheaper than rotating a per-seat row)
            "to_act": (relative == (state.current_player - player) % n) & (relative < n) & ~state.terminated,
            "line": jnp.sum(state.placed, axis=0, dtype=jnp.int32),  # the seats' placed masks are disjoint
            "left": state.left, "right": state.right, "order": state.order, "bones": bones,
            "can_draw": (bones > self._protected).astype(jnp.int32), "passes": state.passes,
            "in_play": jnp.asarray((np.arange(SEATS) < n).astype(np.int32)),
            "scores": relative_of(state.scores) if self._match else zeros,
            "target": jnp.int32(self.target if self._match else 0),
        })
        if self._information:
            # The history's facts (draw_env.observation.HISTORY_FACTS): the event indices of the
            # observer's own draws, and each action's code with its seat turned relative to the
            # observer (1 + 4 * seat + kind becomes 1 + 4 * relative + kind).
            seat = (state.events - 1) >> 2
            turned = state.events + _KINDS * (n * (seat < player) - player)
            drawer = state.drawn >> _SEAT_SHIFT
            facts.update({
                "drawn_at": jnp.where((state.drawn != 0) & (drawer == player), state.drawn & ((1 << _SEAT_SHIFT) - 1), 0),
                "events": jnp.where(state.events != 0, turned, 0),
            })
        return self._facts.read(facts)


class _FactTable:
    """The variant's observation as reads of a facts vector: the declared table
    (:meth:`draw_env.observation.Layout.fact_table`) with each tile-mask fact widened to its
    int32 words (a ``"bit"`` read of tile ``t`` reads bit ``t % 32`` of word ``t // 32``).

    With an :class:`draw_env.observation.InformationLayout` the table reads the information
    state: the observation's entries, then the history blocks' from the facts of
    :data:`draw_env.observation.HISTORY_FACTS` (one value per tile of ``drawn_at`` and per
    action of ``events``), all in the same one pass.

    Attributes:
        observer_only: per per-seat fact, whether the table reads only the observer's row (then
            the facts vector holds that row alone).
    """

    def __init__(self, observed: Any, words: int, information: Any = None) -> None:
        declared_offsets, source, kind, argument = observed.fact_table()
        sizes = observed.fact_sizes()
        widths = {name: 1 for name in FACTS}
        for block in observed.blocks:
            if block.read == "bit":
                widths[block.fact] = max(widths[block.fact], -(-block.width // _WORD_BITS))
        assert max(widths.values()) <= words
        fact_of = np.empty(len(source), object)
        rows = np.zeros(len(source), np.int64)
        for name, start in declared_offsets.items():
            inside = (source >= start) & (source < start + sizes[name])
            fact_of[inside] = name
            rows[inside] = source[inside] - start
        read_rows = {name: set(rows[fact_of == name].tolist()) for name in FACTS}
        self.observer_only = {name: read_rows[name] <= {0} and sizes[name] == SEATS for name in FACTS}
        stored = {name: 1 if self.observer_only[name] else sizes[name] for name in FACTS}
        self._lengths = {name: stored[name] * widths[name] for name in FACTS}
        offsets = dict(zip(FACTS, np.cumsum([0, *self._lengths.values()])[:-1].tolist()))
        is_bit = kind == _BIT
        widened = np.array([offsets[name] + row * widths[name] for name, row in zip(fact_of, rows)], np.int64)
        source = widened + np.where(is_bit, argument // _WORD_BITS, 0)
        argument = np.where(is_bit, argument % _WORD_BITS, argument)
        self._names = list(FACTS)
        if information is not None:
            source, kind, argument = self._history(information, source, kind, argument)
        self._source = source.astype(np.int32)
        self._kind = kind.astype(np.int32)
        self._argument = argument.astype(np.int32)

    def _history(self, information: Any, source: np.ndarray, kind: np.ndarray,
                 argument: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The reads of the history blocks, appended to the observation's: one gather writes the
        whole vector. Both blocks read their facts as values, one entry each."""
        tiles, events = information.num_tiles, information.max_events
        self._lengths.update({"drawn_at": tiles, "events": events})
        start = int(sum(self._lengths[name] for name in self._names))
        self._names += ["drawn_at", "events"]
        assert [block.name for block in information.blocks] == self._names[-2:]
        history = np.arange(start, start + tiles + events)
        return (np.concatenate([source, history]), np.concatenate([kind, np.full(history.size, _VALUE)]),
                np.concatenate([argument, np.zeros(history.size, np.int64)]))

    def read(self, facts: dict[str, jax.Array]) -> jax.Array:
        """float32: the vector from every fact (int32, in relative seats), each fact's words last."""
        parts = []
        for name in self._names:
            part = jnp.asarray(facts[name], jnp.int32).reshape(-1)
            assert part.shape == (self._lengths[name],), (name, part.shape)
            parts.append(part)
        values = jnp.concatenate(parts)
        read = values[self._source]
        entry = jnp.where(self._kind == _BIT, (read >> self._argument) & 1,
                          jnp.where(self._kind == _VALUE, read, read == self._argument))
        return entry.astype(jnp.float32)

