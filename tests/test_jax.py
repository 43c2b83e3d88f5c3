"""The JAX environment (``draw_env.jax``) against the AEC environment, under ``jit`` + ``vmap``.

Compilation dominates the cost here, so each configuration compiles one function
(``benchmarks.jax_differential.make_driver``: step, ``init_deal``, ``init`` and every seat's
observation, vmapped over a batch of fixed size) and every test of that configuration reuses it.
The long run is ``benchmarks/jax_differential.py`` (every configuration, thousands of games).
"""

from __future__ import annotations

import functools
import random
import re
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import draw_env  # noqa: E402
from benchmarks.jax_differential import (  # noqa: E402
    DEAL,
    HAND_WIDTH,
    KEY,
    STEP,
    State,
    boneyard_of,
    compare,
    empty_batch,
    make_driver,
)
from draw_env import tiles  # noqa: E402
from draw_env.draw_dominoes import ILLEGAL_PENALTY  # noqa: E402
from draw_env.jax import DrawDominoes  # noqa: E402
from draw_env.rules import DrawGame, HandResult  # noqa: E402

BATCH = 12
#: Every player count, both episode kinds and every reward scheme, in three compilations
#: (``benchmarks/jax_differential.py`` runs all 15 combinations); 4 players' zero_sum rewards are
#: thirds, whose float32 rounding the comparison checks.
CONFIGS = [(4, "hand", "zero_sum"), (3, "match", "points"), (2, "match", "win_loss")]


@functools.cache
def setup(players: int, episode: str, reward: str) -> tuple[DrawDominoes, object]:
    env = DrawDominoes(players, episode, reward)
    return env, make_driver(env, quick_compile=True)


def call(env: DrawDominoes, driver, state: State, kind, *, action=None, keys=None, deals=None):  # type: ignore[no-untyped-def]
    """One driver call on the batch; ``deals[i]`` is ``(hands, boneyard, opener, scores)`` for DEAL games."""
    n = env.num_players
    hands = np.full((BATCH, n, HAND_WIDTH), -1, np.int32)
    boneyard = np.full((BATCH, tiles.NUM_TILES), -1, np.int32)
    opener = np.zeros(BATCH, np.int32)
    scores = np.zeros((BATCH, n), np.int32)
    for i, deal in (deals or {}).items():
        for seat, hand in enumerate(deal[0]):
            hands[i, seat, : len(hand)] = hand
        boneyard[i, : len(deal[1])] = deal[1]
        opener[i] = deal[2]
        scores[i] = deal[3] if deal[3] is not None else 0
    action = np.zeros(BATCH, np.int32) if action is None else np.asarray(action, np.int32)
    keys = np.zeros((BATCH, 2), np.uint32) if keys is None else np.asarray(keys, np.uint32)
    state, views = driver(state, action, np.broadcast_to(np.asarray(kind, np.int32), (BATCH,)), keys, hands,
                          boneyard, opener, scores)
    return state, jax.device_get(state), np.asarray(views)


def first_legal(host, i: int) -> int:  # type: ignore[no-untyped-def]
    return int(np.flatnonzero(host.legal_action_mask[i])[0])


# ---------------------------------------------------------------------- differential


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c)))
def test_every_step_agrees_with_the_aec_environment(config: tuple[int, str, str]) -> None:
    env, driver = setup(*config)
    report = compare(env, driver, batch=BATCH, decisions=250 if config[1] == "hand" else 500, seed=3)
    assert report.disagreements == 0, "\n".join(report.examples)
    assert report.decisions >= 250 and report.games >= BATCH
    assert report.outcomes == {"domino", "blocked"}
    assert report.dead_steps >= BATCH  # every finished game was stepped once more, unchanged
    if config[1] == "match":
        assert report.hands > report.games  # matches of several hands: later deals compared too


def test_the_comparison_sees_a_wrong_reward(monkeypatch: pytest.MonkeyPatch) -> None:
    """The differential check can fail: a planted error in the reference's rewards is reported."""
    env, driver = setup(4, "hand", "zero_sum")
    monkeypatch.setattr(HandResult, "zero_sum", property(lambda result: tuple(float(p) for p in result.points)))
    report = compare(env, driver, batch=BATCH, decisions=60, seed=1)
    assert report.disagreements > 0 and "reward" in report.examples[0]


# ---------------------------------------------------------------------- API rules


def test_same_key_same_game_and_later_hands_from_the_state_key() -> None:
    env, driver = setup(3, "match", "points")
    keys = np.zeros((BATCH, 2), np.uint32)
    keys[:, 1] = np.arange(BATCH)
    keys[1] = keys[0]  # games 0 and 1 share a key
    state, host, _ = call(env, driver, empty_batch(env, BATCH), KEY, keys=keys)
    assert not np.array_equal(host.hands[0], host.hands[2])
    hands_seen = 0
    for _ in range(400):
        for name in State.__dataclass_fields__:
            assert np.array_equal(getattr(host, name)[0], getattr(host, name)[1]), name
        if host.terminated[0]:
            break
        hands_seen = max(hands_seen, int(host.hand_number[0]))
        actions = [first_legal(host, i) if host.legal_action_mask[i].any() else 0 for i in range(BATCH)]
        actions[1] = actions[0]
        state, host, _ = call(env, driver, state, STEP, action=actions)
    assert hands_seen >= 1  # a later hand was dealt, the same in both games


def test_init_deals_a_deal_with_a_fair_opener() -> None:
    env, driver = setup(4, "hand", "zero_sum")
    game, openers = DrawGame(4), np.zeros(4, int)
    state = empty_batch(env, BATCH)
    rng = np.random.default_rng(0)
    for _ in range(10):
        state, host, _ = call(env, driver, state, KEY, keys=rng.integers(0, 2**32, (BATCH, 2), dtype=np.uint32))
        for i in range(BATCH):
            hands = [list(tiles.tiles_in(int(mask))) for mask in host.hands[i]]
            assert [len(hand) for hand in hands] == [game.hand_size] * 4
            bones = boneyard_of(host, i)
            assert sorted(sum(hands, []) + bones) == list(range(28))
            openers[host.opener[i]] += 1
    assert openers.min() >= 15  # 120 deals, about 30 each


@pytest.mark.parametrize("config", [(4, "hand", "zero_sum"), (2, "match", "win_loss")], ids=str)
def test_illegal_action_ends_the_episode_with_the_penalty(config: tuple[int, str, str]) -> None:
    env, driver = setup(*config)
    rng = np.random.default_rng(1)
    state, before, _ = call(env, driver, empty_batch(env, BATCH), KEY, keys=rng.integers(0, 2**32, (BATCH, 2), dtype=np.uint32))
    illegal = [int(np.flatnonzero(~before.legal_action_mask[i])[0]) for i in range(BATCH)]
    illegal[0], illegal[1] = -1, 58  # outside Discrete(58)
    state, after, _ = call(env, driver, state, STEP, action=illegal)
    penalty = ILLEGAL_PENALTY[env.reward]
    for i in range(BATCH):
        seat = before.current_player[i]
        assert after.terminated[i] and not after.legal_action_mask[i].any()
        expected = np.zeros(env.num_players, np.float32)
        expected[seat] = penalty
        assert after.rewards[i].tolist() == expected.tolist()
        assert after.current_player[i] == seat
        for name in ("hands", "deck_position", "bone_pos", "left", "right", "order", "scores", "passes", "voids"):
            assert np.array_equal(getattr(after, name)[i], getattr(before, name)[i]), name
    # An ended game stays ended: nothing changes, rewards zero, whatever the action.
    state, again, _ = call(env, driver, state, STEP, action=[first_legal(before, i) for i in range(BATCH)])
    for name in State.__dataclass_fields__:
        if name != "rewards":
            assert np.array_equal(getattr(again, name), getattr(after, name)), name
    assert not again.rewards.any()


@functools.cache
def one_game() -> tuple[DrawDominoes, State, int]:
    """A 2-player hand from key 0 and its first legal action."""
    env = DrawDominoes(2)
    state = jax.jit(env.init)(jax.random.key(0))
    return env, state, int(np.flatnonzero(np.asarray(state.legal_action_mask))[0])


def test_an_integer_out_of_range_of_any_width_is_illegal_not_wrapped_to_another_action() -> None:
    """2**32 + a is not action a, whether the step sees it as a host value (checked whole before any
    conversion) or as a wide traced one (64-bit types on: with them off, JAX itself casts a jitted
    argument to int32 at the call). One compilation: the host values are constants of the trace."""
    env, state, legal = one_game()
    hosts = (np.int32(legal), np.int64(2**32 + legal), 2**70 + legal)
    with jax.enable_x64(True):
        traced = jnp.asarray([legal, 2**32 + legal, -(2**32) + legal], jnp.int64)
        hosted, batch = jax.jit(lambda s, actions: ([env.step(s, a) for a in hosts],
                                                    jax.vmap(env.step, in_axes=(None, 0))(s, actions)))(state, traced)
    assert [bool(after.terminated) for after in hosted] == [False, True, True], "only the action itself is played"
    assert np.asarray(batch.terminated).tolist() == [False, True, True]
    seat = int(state.current_player)
    for line_count, rewards in [(h.line_count, h.rewards) for h in hosted[1:]] + [(batch.line_count[1], batch.rewards[1])]:
        assert int(line_count) == 0 and float(rewards[seat]) == ILLEGAL_PENALTY[env.reward]


@pytest.mark.parametrize("action", [2.7, 2.0, np.float32(2.0), True], ids=repr)
def test_an_action_that_is_not_an_integer_is_refused_not_rounded(action: object) -> None:
    env, state, _ = one_game()
    with pytest.raises(ValueError, match="action must be an integer"):
        env.step(state, action)
    with pytest.raises(ValueError, match="action must be an integer"):  # at trace time: the dtype is static
        jax.jit(env.step)(state, action)
    with pytest.raises(ValueError, match="action must be an integer"):
        jax.vmap(env.step)(jax.tree_util.tree_map(lambda x: x[None], state), jnp.asarray([action]))


def test_observe_refuses_a_seat_it_can_see_and_gives_zeros_for_one_it_cannot() -> None:
    env, state, _ = one_game()
    for seat in (2, -1, np.int64(5), 2**70):
        with pytest.raises(ValueError, match=r"player must be a seat in 0\.\.1"):
            env.observe(state, seat)
    with pytest.raises(ValueError, match="player must be an integer"):
        env.observe(state, 1.0)
    # A seat as an array (under jit its value is not known): the observation of no seat; with
    # 64-bit types on, 2**32 + 1 is not seat 1.
    with jax.enable_x64(True):
        seats = (jnp.int32(1), jnp.int32(2), jnp.int32(-1), jnp.asarray(2**32 + 1, jnp.int64))
        seen = jax.jit(lambda s, seats: [env.observe(s, seat) for seat in (np.int64(1), *seats)])(state, seats)
    assert [bool(np.asarray(view).any()) for view in seen] == [True, True, False, False, False]
    assert np.array_equal(seen[0], seen[1]), "a NumPy seat is the seat"


def test_match_scores_target_and_next_opener() -> None:
    """A match from set scores: a hand's points add up, the next hand opens one seat clockwise,
    and the match ends at the target (61 with 3 players) with the scores the rules give."""
    env, driver = setup(3, "match", "points")
    rng = random.Random(3)
    game = DrawGame(3)
    deals = {}
    for i in range(BATCH):
        hands, boneyard = game.deal(rng)
        deals[i] = (hands, boneyard, i % 3, [60, 0, 30] if i % 2 else [0, 10, 20])
    state, host, views = call(env, driver, empty_batch(env, BATCH), DEAL, deals=deals)
    assert host.scores.tolist() == [deals[i][3] for i in range(BATCH)]
    assert views[1, 0, -5:].tolist() == [60, 0, 30, 0, 61]  # scores by relative seat, then the target
    ended = np.zeros(BATCH, bool)
    next_hands = 0
    for _ in range(600):
        if ended.all():
            break
        previous = host
        state, host, _ = call(env, driver, state, STEP, action=[
            first_legal(host, i) if host.legal_action_mask[i].any() else 0 for i in range(BATCH)])
        for i in range(BATCH):
            if ended[i]:
                continue
            points = host.hand_points[i]
            if points.any() or host.hand_number[i] != previous.hand_number[i] or host.terminated[i]:
                assert host.scores[i].tolist() == (previous.scores[i] + points).tolist()
                assert host.rewards[i].tolist() == points.astype(np.float32).tolist()
            if host.hand_number[i] != previous.hand_number[i]:
                next_hands += 1
                assert host.opener[i] == (previous.opener[i] + 1) % 3 == host.current_player[i]
                assert host.scores[i].max() < 61 and not host.terminated[i]
            if host.terminated[i]:
                ended[i] = True
                assert host.scores[i].max() >= 61
    assert ended.all() and next_hands > 0


# ---------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"num_players": 5}, "num_players"),
        ({"num_players": 2.0}, "num_players"),
        ({"episode": "game"}, "episode"),
        ({"reward": "score"}, "reward"),
        ({"reward": "win_loss"}, "win_loss"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        DrawDominoes(**kwargs)


def test_init_deal_rejects_bad_deals() -> None:
    env = DrawDominoes(2)
    game = DrawGame(2)
    hands, boneyard = game.deal(random.Random(0))
    good_hands = np.array(hands, np.int32)
    with pytest.raises(ValueError, match="hands must be"):
        env.init_deal(good_hands[:1], np.array(boneyard), 0)
    with pytest.raises(ValueError, match="boneyard must be"):
        env.init_deal(good_hands, np.array([boneyard]), 0)
    twice = good_hands.copy()
    twice[1, 0] = twice[0, 0]
    with pytest.raises(ValueError, match="more than once"):
        env.init_deal(twice, np.array(boneyard), 0)
    with pytest.raises(ValueError, match="opener"):
        env.init_deal(good_hands, np.array(boneyard), 2)
    with pytest.raises(ValueError, match="padding"):
        env.init_deal(good_hands, np.array([-1, *boneyard]), 0)
    with pytest.raises(ValueError, match="tile ids"):
        env.init_deal(np.where(good_hands == good_hands[0, 0], 99, good_hands), np.array(boneyard), 0)
    with pytest.raises(ValueError, match="scores needs episode='match'"):
        env.init_deal(good_hands, np.array(boneyard), 0, scores=np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="below the target"):
        DrawDominoes(2, "match").init_deal(good_hands, np.array(boneyard), 0, scores=np.array([100, 0]))
    with pytest.raises(ValueError, match="threefry key"):
        env.init_deal(good_hands, np.array(boneyard), 0, key=np.zeros(3, np.uint32))


# ---------------------------------------------------------------------- docs


def test_docs_jax_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    """Every ```python block of docs/jax.md runs and prints its result."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "jax.md").read_text(encoding="utf-8")
    examples = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert examples
    for example in examples:
        exec(compile(example, "docs/jax.md", "exec"), {"__name__": "docs_example"})
        assert capsys.readouterr().out.strip(), "the example prints its result"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_zero_sum_table_holds_the_aec_rewards(players: int) -> None:
    """Every (own points, hand total) pair: the table the JAX rewards read gives the float32 of the
    AEC environment's float64 reward (the differential tests meet only some of the pairs)."""
    table = DrawDominoes(players)._zero_sum
    others = players - 1
    for total in range(169):
        for points in range(total + 1):
            assert table[players * points - total + 168] == np.float32(points - (total - points) / others)


# ---------------------------------------------------------------------- the fast loop


@pytest.mark.parametrize("obs_type", ["observation", "information_state"])
def test_fast_step_is_step_then_a_fresh_deal_from_the_pool(obs_type: str) -> None:
    """``fast_step`` against ``step``: a game that goes on is exactly ``step``'s; a game that ends
    comes back terminated with its rewards, as a new deal whose observation and mask are the AEC
    environment's for that deal; every deal handed out is a new one (the pool wraps round)."""
    env, batch, refill = DrawDominoes(2, obs_type=obs_type), 16, 8
    options = {"xla_backend_optimization_level": 0}
    fast = jax.jit(env.fast_step, static_argnums=3, compiler_options=options)
    step = jax.jit(jax.vmap(env.step), compiler_options=options)
    state = jax.vmap(env.init)(jax.random.split(jax.random.key(3), batch))
    pool = env.deal_pool(jax.random.key(4), 2 * refill)
    aec = draw_env.raw_env(num_players=2, obs_type=obs_type)
    rng = np.random.default_rng(0)
    deals: set[tuple] = set()
    handed = 0
    for _ in range(80):
        host = jax.device_get(state)
        action = np.array([rng.choice(np.flatnonzero(mask)) for mask in host.legal_action_mask], np.int32)
        live = state.replace(terminated=jnp.zeros(batch, bool),
                             rewards=jnp.where(state.terminated[:, None], 0.0, state.rewards))
        expected = jax.device_get(step(live, action))
        state, pool = fast(state, action, pool, refill)
        got = jax.device_get(state)
        for i in range(batch):
            if not expected.terminated[i]:
                for name in State.__dataclass_fields__:
                    assert np.array_equal(getattr(got, name)[i], getattr(expected, name)[i]), name
                continue
            assert got.terminated[i] and np.array_equal(got.rewards[i], expected.rewards[i])
            assert got.line_count[i] == 0 and got.hand_number[i] == 0
            deal = {"hands": [list(tiles.tiles_in(int(mask))) for mask in got.hands[i]],
                    "boneyard": boneyard_of(got, i), "opener": int(got.opener[i])}
            deals.add(tuple(map(tuple, deal["hands"])) + (tuple(deal["boneyard"]),))
            handed += 1
            aec.reset(options=deal)
            seen = aec.observe(aec.agent_selection)
            assert np.array_equal(got.observation[i], seen["observation"])
            assert np.array_equal(got.legal_action_mask[i], seen["action_mask"].astype(bool))
    assert len(deals) == handed > 2 * refill  # the pool wrapped round, and no deal came twice
