"""The JAX environment's variants (other sets, hand sizes, protected tiles) against the AEC
environment, under ``jit`` + ``vmap``: masks, observations, rewards, terminations and infos at
every step (``benchmarks.jax_differential.compare``), one compilation per variant."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from benchmarks.jax_differential import (  # noqa: E402
    KEY,
    STEP,
    compare,
    empty_batch,
    hand_width,
    make_driver,
    mask_tiles,
)
from draw_env.jax import DrawDominoes  # noqa: E402
from draw_env.observation import layout  # noqa: E402
from draw_env.rules import illegal_move_penalty  # noqa: E402

BATCH = 8
#: (players, episode, reward, max_pip, hand_size, protected): the smallest set, sets of 36 and 55
#: tiles (masks of two int32 words, the first one full), 0 to 3 protected tiles, matches.
VARIANTS = [
    (2, "hand", "zero_sum", 2, 2, 0),
    (3, "hand", "points", 9, 5, 3),
    (4, "match", "zero_sum", 7, 4, 1),
    (2, "match", "win_loss", 4, 3, 2),
]


@functools.cache
def setup(players: int, episode: str, reward: str, max_pip: int, hand_size: int, protected: int) -> tuple:
    env = DrawDominoes(players, episode, reward, max_pip=max_pip, hand_size=hand_size, protected=protected)
    return env, make_driver(env, quick_compile=True)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(map(str, v)))
def test_every_step_of_a_variant_agrees_with_the_aec_environment(variant: tuple) -> None:
    env, driver = setup(*variant)
    report = compare(env, driver, batch=BATCH, decisions=150, seed=5)
    assert report.disagreements == 0, "\n".join(report.examples)
    assert report.decisions >= 150 and report.games >= BATCH
    assert report.dead_steps >= BATCH


def test_the_variant_sets_the_sizes_and_the_penalty() -> None:
    env, driver = setup(*VARIANTS[1])  # double-nine, 5 tiles each, 3 protected
    game = env.game
    assert (game.num_tiles, game.hand_size, game.protected) == (55, 5, 3)
    assert env.num_actions == 112 and env.observation_shape == (layout(game).size,)

    def call(state, kind: int, action: int):  # type: ignore[no-untyped-def]
        keys = np.stack([np.zeros(BATCH), np.arange(BATCH)], axis=1).astype(np.uint32)
        return driver(state, np.full(BATCH, action, np.int32), np.full(BATCH, kind, np.int32), keys,
                      np.full((BATCH, 3, hand_width(game)), -1, np.int32), np.full((BATCH, 55), -1, np.int32),
                      np.zeros(BATCH, np.int32), np.zeros((BATCH, 3), np.int32))[0]

    state = call(empty_batch(env, BATCH), KEY, 0)
    host = jax.device_get(state)
    assert host.legal_action_mask.shape == (BATCH, 112) and host.observation.shape == (BATCH, *env.observation_shape)
    assert [[len(mask_tiles(hand)) for hand in hands] for hands in host.hands] == [[5, 5, 5]] * BATCH
    assert (host.bone_end - host.bone_pos).tolist() == [40] * BATCH
    illegal = jax.device_get(call(state, STEP, 111))  # a pass, with tiles to draw
    assert illegal.terminated.all()
    seats = np.arange(BATCH), host.current_player
    assert (illegal.rewards[seats] == illegal_move_penalty("points", game)).all() and game.max_hand_points == 495


def test_init_deal_takes_hands_of_any_width_and_the_variant_ids() -> None:
    env = DrawDominoes(2, max_pip=7, hand_size=3, protected=1)
    hands, boneyard = env.game.deal(random.Random(0))
    deal = jax.jit(env.init_deal, compiler_options={"xla_backend_optimization_level": 0})
    narrow = deal(np.array(hands), np.array(boneyard), 1)
    wide = np.full((2, hand_width(env.game)), -1)
    wide[:, :3] = hands
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(narrow), jax.tree.leaves(deal(wide, np.array(boneyard), 1))))
    assert [mask_tiles(hand) for hand in narrow.hands] == [sorted(hand) for hand in hands]
    with pytest.raises(ValueError, match=r"tile ids 0\.\.35"):
        env.init_deal(np.where(np.array(hands) == hands[0][0], 36, hands), np.array(boneyard), 1)
    with pytest.raises(ValueError, match=r"boneyard must be an int32 array \(m,\) with 1 <= m <= 36"):
        env.init_deal(np.array(hands), np.zeros(37, np.int32), 1)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"max_pip": 10}, "max_pip"),
        ({"max_pip": 1}, "max_pip"),
        ({"hand_size": 0}, "hand_size"),
        ({"hand_size": 2.5}, "hand_size"),
        ({"protected": -1}, "protected"),
        ({"max_pip": 2, "hand_size": 3, "protected": 1}, "hand_size=3"),
    ],
)
def test_bad_variant_arguments(kwargs: dict, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        DrawDominoes(2, **kwargs)


def test_an_empty_boneyard_plays_as_the_aec_environment_plays_it() -> None:
    """Double-two, three tiles each, none protected: every tile is dealt and the boneyard is empty.
    ``draw_env.env()`` takes that deal; ``init_deal`` takes it too, and plays it step for step as
    the AEC environment does (masks, observations, player to act, rewards)."""
    import draw_env
    from draw_env.rules import DrawGame

    game = DrawGame(2, max_pip=2, hand_size=3, protected=0)
    env = DrawDominoes(2, "hand", "zero_sum", max_pip=2, hand_size=3, protected=0)
    options = {"xla_backend_optimization_level": 0}
    deal, step = jax.jit(env.init_deal, compiler_options=options), jax.jit(env.step, compiler_options=options)
    for seed in range(3):
        hands, boneyard = game.deal(random.Random(seed))
        assert boneyard == []
        opener = seed % 2
        state = deal(np.array(hands, np.int32), np.zeros(0, np.int32), opener)
        aec = draw_env.raw_env(num_players=2, episode="hand", reward="zero_sum", max_pip=2, hand_size=3, protected=0)
        aec.reset(options={"hands": hands, "boneyard": [], "opener": opener})
        while True:
            seat = aec.possible_agents.index(aec.agent_selection)
            observed = aec.observe(aec.agent_selection)
            assert int(state.current_player) == seat
            assert np.array_equal(np.asarray(state.legal_action_mask), observed["action_mask"].astype(bool))
            assert np.array_equal(np.asarray(state.observation), observed["observation"])
            if aec.terminations[aec.agent_selection]:
                assert bool(state.terminated)
                break
            action = int(np.flatnonzero(observed["action_mask"])[0])
            aec.step(action)
            state = step(state, action)
            assert np.allclose(np.asarray(state.rewards), [aec.rewards[agent] for agent in aec.possible_agents])
