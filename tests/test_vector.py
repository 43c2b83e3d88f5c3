"""The batched environment (:mod:`draw_env.vector`) against the AEC environment, game by game.

Each game of a :class:`DrawVectorEnv` is shadowed by a ``draw_env.raw_env`` dealt the same (through
reset options; later hands of a match are handed the vector game's deal at the AEC environment's
shuffle) and given the same actions; after every step the observation, mask, player to act,
rewards, termination and infos must be equal. Then the contract's edges: illegal actions, ended
games, seeding, ``observe(seat)`` and bad input.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import draw_env
from draw_env import engine as E
from draw_env import observation, tiles
from draw_env.rules import DrawState, IllegalActionError
from draw_env.vector import DrawVectorEnv, VectorStep
from tests.positions import DeckRng


def deck(deal: dict) -> list[int]:
    return [tile for hand in deal["hands"] for tile in hand] + deal["boneyard"]


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask], np.int64)


def shadow(venv: DrawVectorEnv, i: int, scores: list[int] | None = None) -> draw_env.raw_env:
    aec = draw_env.raw_env(
        num_players=venv.num_players, episode=venv.episode, reward=venv.reward, obs_type=venv.obs_type,
        **venv.game.variant,
    )
    options = venv.deals()[i]
    if scores is not None:
        options["scores"] = scores
    aec.reset(options=options)
    return aec


def assert_game_equal(
    out: VectorStep, i: int, aec: draw_env.raw_env, check_rewards: bool = True, check_infos: bool = True
) -> None:
    agent = aec.agent_selection
    seat = aec.possible_agents.index(agent)
    assert out.current_player[i] == seat
    observed = aec.observe(agent)
    np.testing.assert_array_equal(out.observation[i], observed["observation"])
    np.testing.assert_array_equal(out.action_mask[i], observed["action_mask"])
    assert out.hand_number[i] == aec.state_ref.hand_number
    for s, name in enumerate(aec.possible_agents):
        if not check_infos:
            break
        info = aec.infos[name]
        assert out.hand_points[i, s] == info["hand_points"]
        assert out.hand_pips[i, s] == info["hand_pips"]
        assert out.score[i, s] == info["score"]
        assert out.blocked[i] == bool(info["blocked"])
        if check_rewards:
            assert out.rewards[i, s] == np.float32(aec.rewards[name])


def assert_deal_equal(out: VectorStep, i: int, deal: dict) -> None:
    """Game ``i``'s deal fields of ``out`` hold ``deal`` (reset options, as ``deals()`` gives them)."""
    assert out.deal_hands[i].tolist() == [tiles.mask_of(hand) for hand in deal["hands"]]
    boneyard = out.deal_boneyard[i].tolist()
    assert boneyard == deal["boneyard"] + [-1] * (len(boneyard) - len(deal["boneyard"]))
    assert out.deal_opener[i] == deal["opener"]


def winner_of(state: DrawState) -> int:
    return -1 if state.result is None or state.result.winner is None else state.result.winner


def play_against_aec(venv: DrawVectorEnv, seed: int, steps: int) -> tuple[int, int]:
    """Random legal play of every game of ``venv`` and of a shadowing AEC environment each, compared
    at every step; returns the episodes ended and the hands that ended within a match."""
    num_envs, players, game = venv.num_envs, venv.num_players, venv.game
    rng = np.random.default_rng(seed)
    options = None
    if venv.episode == "match":
        start = [None] + [[int(rng.integers(0, 61)) for _ in range(players)] for _ in range(num_envs - 1)]
        options = {"scores": start}
    out = venv.reset(seed=seed, options=options)
    information = venv.obs_type == "information_state"
    size = (observation.information_layout(game) if information else observation.layout(game)).size
    assert out.observation.dtype == np.float32 and out.observation.shape == (num_envs, size)
    assert out.action_mask.dtype == np.int8 and out.action_mask.shape == (num_envs, game.num_actions)
    assert out.rewards.shape == (num_envs, players)
    assert not out.terminated.any() and not out.rewards.any() and not out.hand_ended.any()
    assert (out.winner == -1).all()
    starts = options["scores"] if options else [None] * num_envs
    shadows = [shadow(venv, i, starts[i]) for i in range(num_envs)]
    for i, aec in enumerate(shadows):
        assert_game_equal(out, i, aec)
        assert_deal_equal(out, i, venv.deals()[i])
    ended = hands_ended_in_play = 0
    for _step in range(steps):
        actions = random_actions(out.action_mask, rng)
        before = [aec.agents and not any(aec.terminations.values()) for aec in shadows]
        hand_numbers = [aec.state_ref.hand_number for aec in shadows]
        out = venv.step(actions)
        assert out.hand_ended.dtype == np.bool_ and out.hand_ended.shape == (num_envs,)
        assert out.terminated.dtype == np.bool_ and not out.truncated.any()
        deals = venv.deals()
        for i, aec in enumerate(shadows):
            assert_deal_equal(out, i, deals[i])
            if not before[i]:  # an ended game without auto-reset: nothing happens
                assert out.terminated[i] and not out.rewards[i].any() and not out.action_mask[i].any()
                assert not out.hand_ended[i] and out.winner[i] == winner_of(aec.state_ref)
                assert_game_equal(out, i, aec, check_rewards=False)
                continue
            aec._rng = DeckRng(deck(deals[i]))  # the next hand of a match: the vector game's deal
            aec.step(int(actions[i]))
            done = all(aec.terminations.values())
            assert out.terminated[i] == done
            # A hand ended: the episode did, or the match dealt its next hand.
            assert out.hand_ended[i] == (done or aec.state_ref.hand_number != hand_numbers[i])
            hands_ended_in_play += bool(out.hand_ended[i] and not done)
            ended_hand = aec.state_ref if done else aec._finished_hand
            assert out.winner[i] == (winner_of(ended_hand) if out.hand_ended[i] else -1)
            if done and venv.autoreset:
                for s, name in enumerate(aec.possible_agents):
                    assert out.rewards[i, s] == np.float32(aec.rewards[name])
                    assert out.hand_points[i, s] == aec.infos[name]["hand_points"]
                    assert out.hand_pips[i, s] == aec.infos[name]["hand_pips"]
                    assert out.score[i, s] == aec.infos[name]["score"]
                    assert out.blocked[i] == bool(aec.infos[name]["blocked"])
                # The step's infos and rewards are the ended episode's, the rest the new one's.
                shadows[i] = aec = shadow(venv, i)
                assert_game_equal(out, i, aec, check_rewards=False, check_infos=False)
            else:
                assert_game_equal(out, i, aec)
            ended += done
    return ended, hands_ended_in_play


SETTINGS = [
    (2, "hand", "zero_sum"),
    (3, "hand", "points"),
    (4, "hand", "zero_sum"),
    (2, "match", "win_loss"),
    (3, "match", "zero_sum"),
    (4, "match", "points"),
]


@pytest.mark.parametrize("autoreset", [True, False], ids=["autoreset", "no_autoreset"])
@pytest.mark.parametrize(("players", "episode", "reward"), SETTINGS)
def test_every_game_matches_the_aec_environment(players: int, episode: str, reward: str, autoreset: bool) -> None:
    venv = DrawVectorEnv(6, players, episode, reward, autoreset=autoreset)
    ended, hands_ended_in_play = play_against_aec(venv, players, 260 if episode == "match" else 90)
    assert ended > 0  # episodes did end, and the steps that ended them were compared
    assert (hands_ended_in_play > 0) == (episode == "match")  # hands ended within matches too


#: (players, max_pip, hand_size, protected, episode, reward, autoreset): every set, the corners of
#: the variant ranges and a few between, each with other episode settings.
VARIANT_SETTINGS = [
    (2, 2, 1, 0, "hand", "zero_sum", True),
    (2, 2, 2, 2, "match", "points", False),
    (3, 3, 2, 0, "hand", "points", False),
    (4, 3, 1, 3, "match", "zero_sum", True),
    (2, 4, 5, 1, "match", "win_loss", True),
    (3, 5, 4, 3, "hand", "zero_sum", True),
    (4, 5, 3, 2, "match", "points", False),
    (2, 6, 9, 0, "hand", "points", True),
    (3, 6, 7, 3, "match", "zero_sum", True),
    (3, 7, None, 1, "match", "win_loss", False),
    (4, 7, 8, 3, "hand", "zero_sum", False),
    (2, 8, 12, 2, "match", "zero_sum", True),
    (3, 9, None, 0, "hand", "zero_sum", True),
    (4, 9, 12, 3, "match", "win_loss", True),
    (2, 9, 20, 2, "hand", "points", False),
]


@pytest.mark.parametrize(("players", "max_pip", "hand_size", "protected", "episode", "reward", "autoreset"),
                         VARIANT_SETTINGS)
def test_variants_match_the_aec_environment(
    players: int, max_pip: int, hand_size: int | None, protected: int, episode: str, reward: str, autoreset: bool
) -> None:
    venv = DrawVectorEnv(5, players, episode, reward, autoreset, max_pip, hand_size, protected)
    game = venv.game
    assert venv.single_action_space.n == game.num_actions == 2 * game.num_tiles + 2
    assert venv.single_observation_space.shape == (observation.layout(game).size,)
    # Hands of a large set last longer, matches of a small one (a hand scores little) too.
    steps = max(300, 6 * game.num_tiles) if episode == "match" else max(60, 3 * game.num_tiles)
    ended, hands_ended_in_play = play_against_aec(venv, max_pip * 10 + players, steps)
    assert ended > 0
    assert (hands_ended_in_play > 0) == (episode == "match")


def test_a_steps_deal_stays_that_of_its_hand() -> None:
    venv = DrawVectorEnv(1, 2, "match")
    first = out = venv.reset(seed=2)
    dealt = venv.deals()[0]
    rng = np.random.default_rng(2)
    while not out.hand_ended[0]:
        out = venv.step(random_actions(out.action_mask, rng))
    assert out.hand_number[0] == 1 and first.hand_number[0] == 0  # the next hand was dealt
    assert_deal_equal(out, 0, venv.deals()[0])
    assert_deal_equal(first, 0, dealt)  # the environment never writes a step's arrays again
    assert venv.deals()[0] != dealt


def test_illegal_action_names_the_games_and_changes_nothing() -> None:
    venv = DrawVectorEnv(8, 3)
    out = venv.reset(seed=1)
    states = venv.states.copy()
    actions = random_actions(out.action_mask, np.random.default_rng(0))
    illegal = actions.copy()
    for i in (2, 5):
        illegal[i] = int(np.flatnonzero(out.action_mask[i] == 0)[0])
    with pytest.raises(IllegalActionError, match=r"games \[2, 5\]") as caught:
        venv.step(illegal)
    assert "game 2: action" in str(caught.value) and "legal actions:" in str(caught.value)
    assert isinstance(caught.value, ValueError)
    np.testing.assert_array_equal(venv.states, states)
    np.testing.assert_array_equal(venv.action_mask, out.action_mask)
    for bad in (np.full(8, 58), np.full(8, -1)):
        with pytest.raises(ValueError, match="0..57"):
            venv.step(bad)
    for bad in (actions[:7], actions.astype(float), actions.astype(bool), "draw"):
        with pytest.raises(ValueError, match="integer array of shape"):
            venv.step(bad)
    np.testing.assert_array_equal(venv.states, states)
    venv.step(actions)  # the legal actions still play


def test_without_autoreset_ended_games_stay_ended_until_reset() -> None:
    venv = DrawVectorEnv(16, 2, autoreset=False)
    rng = np.random.default_rng(3)
    out = venv.reset(seed=3)
    for _ in range(400):
        if out.terminated.all():
            break
        previous = out
        out = venv.step(random_actions(out.action_mask, rng))
        stayed = previous.terminated
        assert out.terminated[stayed].all() and not out.rewards[stayed].any()
        np.testing.assert_array_equal(out.observation[stayed], previous.observation[stayed])
        np.testing.assert_array_equal(out.hand_points[stayed], previous.hand_points[stayed])
    assert out.terminated.all() and not out.action_mask.any()
    out = venv.step(np.full(16, 99))  # ended games ignore their actions, whatever they are
    assert out.terminated.all()
    out = venv.reset()
    assert not out.terminated.any() and out.action_mask.any(axis=1).all()


def test_same_seed_same_games_and_reset_continues_the_streams() -> None:
    def trajectory(seed: int | None, venv: DrawVectorEnv | None = None) -> list[np.ndarray]:
        venv = venv or DrawVectorEnv(32, 3, "match")
        out = venv.reset(seed=seed)
        seen = [out.observation]
        words = np.arange(32, dtype=np.int64)
        for _ in range(60):
            actions = np.zeros(32, np.int64)
            E.random_actions(words, out.action_mask, actions)
            out = venv.step(actions)
            seen += [out.observation, out.rewards, out.action_mask]
        return seen

    first, again, other = trajectory(7), trajectory(7), trajectory(8)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[0], other[0])
    venv = DrawVectorEnv(32, 3, "match")
    seeded = trajectory(7, venv)
    continued = trajectory(None, venv)
    assert not np.array_equal(seeded[0], continued[0])
    # Games of one batch are dealt differently from each other.
    assert len({tuple(map(tuple, deal["hands"])) for deal in venv.deals()}) == 32


def test_a_seed_deals_the_seeds_game_as_it_always_has() -> None:
    """The same seed gives the same games across versions (recorded deals, duplicate evaluations)."""
    venv = DrawVectorEnv(2, 3)
    venv.reset(seed=0)
    assert venv.deals() == [
        {
            "hands": [[3, 5, 10, 14, 15, 16, 25], [0, 2, 4, 8, 18, 26, 27], [1, 7, 9, 12, 19, 21, 22]],
            "boneyard": [24, 20, 13, 17, 23, 6, 11],
            "opener": 0,
        },
        {
            "hands": [[10, 14, 18, 20, 21, 22, 26], [3, 6, 11, 16, 19, 24, 27], [0, 4, 8, 12, 13, 15, 25]],
            "boneyard": [2, 9, 17, 23, 7, 5, 1],
            "opener": 0,
        },
    ]


@pytest.mark.parametrize("variant", [{}, {"max_pip": 3, "hand_size": 2, "protected": 1}, {"max_pip": 9}])
@pytest.mark.parametrize("episode", ["hand", "match"])
def test_observe_any_seat_matches_the_aec_environment(episode: str, variant: dict) -> None:
    venv = DrawVectorEnv(5, 4, episode, autoreset=False, **variant)
    out = venv.reset(seed=11)
    shadows = [shadow(venv, i) for i in range(5)]
    rng = np.random.default_rng(11)
    for step in range(12):
        for seat in range(4):
            observed = venv.observe(seat)
            for i, aec in enumerate(shadows):
                np.testing.assert_array_equal(observed[i], aec.observe(f"player_{seat}")["observation"])
        np.testing.assert_array_equal(venv.observe_seats(out.current_player), out.observation)
        np.testing.assert_array_equal(venv.observe_seats(np.full(5, step % 4)), venv.observe(step % 4))
        actions = random_actions(out.action_mask, rng)
        out = venv.step(actions)
        for i, aec in enumerate(shadows):
            if aec.agents and not any(aec.terminations.values()):
                aec._rng = DeckRng(deck(venv.deals()[i]))
                aec.step(int(actions[i]))
    with pytest.raises(ValueError, match="seat"):
        venv.observe(4)
    with pytest.raises(ValueError, match="seats"):
        venv.observe_seats(np.full(5, 4))


def test_fixed_deals_and_scores_through_options() -> None:
    hands = [["[0|0]", (0, 1), 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12, 13]]
    boneyard = list(range(14, 28))
    venv = DrawVectorEnv(3, 2, "match")
    deal = {"hands": hands, "boneyard": boneyard, "opener": 1}
    out = venv.reset(seed=0, options={"deals": [None, deal, dict(deal, opener=None)], "scores": [None, [10, 20], None]})
    deals = venv.deals()
    assert deals[1] == {"hands": [list(range(7)), list(range(7, 14))], "boneyard": boneyard, "opener": 1}
    assert deals[2]["hands"] == deals[1]["hands"] and deals[2]["opener"] in (0, 1)
    assert out.current_player[1] == 1 and out.score[1].tolist() == [10, 20] and out.score[0].tolist() == [0, 0]
    aec = draw_env.raw_env(num_players=2, episode="match")
    aec.reset(options={"hands": hands, "boneyard": boneyard, "opener": 1, "scores": [10, 20]})
    np.testing.assert_array_equal(out.observation[1], aec.observe("player_1")["observation"])


def test_a_variants_deal_and_actions_through_options() -> None:
    venv = DrawVectorEnv(2, 2, max_pip=9, hand_size=2, protected=0)
    names = tiles.tile_set(9).names
    hands = [["[9|9]", "[8|9]"], ["[0|0]", (7, 9)]]
    held = {"[9|9]", "[8|9]", "[0|0]", "[7|9]"}
    deal = {"hands": hands, "boneyard": [name for name in names if name not in held], "opener": 0}
    out = venv.reset(seed=0, options={"deals": [deal, None]})
    assert venv.deals()[0]["hands"] == [[53, 54], [0, 51]]
    assert_deal_equal(out, 0, venv.deals()[0])
    assert out.action_mask.shape == (2, 112)
    assert np.flatnonzero(out.action_mask[0]).tolist() == [106, 108, 110]  # [8|9], [9|9] open; 110 draws
    other = int(np.flatnonzero(out.action_mask[1])[0])
    with pytest.raises(ValueError, match=r"0\.\.111 \(Discrete\(112\)\)"):
        venv.step(np.array([112, other]))
    with pytest.raises(IllegalActionError, match=r"game 0: action 0 \(\[0\|0\] left\).*106 \(\[8\|9\] left\)"):
        venv.step(np.array([0, other]))
    with pytest.raises(ValueError, match="all 55 tiles"):
        venv.reset(options={"deals": [dict(deal, boneyard=["[0|1]"]), None]})
    out = venv.step(np.array([110, other]))  # a draw keeps the turn
    assert out.current_player[0] == 0 and out.observation[0, : 55].sum() == 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"deals": [None]}, r"options\['deals'\] must be a list of 2"),
        ({"deals": [None, {"hands": [[0]]}]}, r"options\['deals'\]\[1\] must hold 'hands' and 'boneyard'"),
        ({"deals": [None, {"hands": [[0], [1]], "boneyard": [2, 3]}]}, r"options\['deals'\]\[1\]: .*all 28 tiles"),
        ({"deals": [None, {"hands": [[0], [1]], "boneyard": list(range(2, 28)), "opener": 2}]}, "opener"),
        ({"deals": [None, 5]}, r"must be None or a dict"),
        ({"scores": [None, [1, 2]]}, "needs episode='match'"),
        ([1, 2], "options must be a dict"),
    ],
)
def test_malformed_options_are_rejected_and_change_nothing(options: object, message: str) -> None:
    venv = DrawVectorEnv(2, 2)
    venv.reset(seed=0)
    states = venv.states.copy()
    with pytest.raises(ValueError, match=message):
        venv.reset(seed=5, options=options)  # type: ignore[arg-type]
    np.testing.assert_array_equal(venv.states, states)


def test_bad_match_scores_and_unknown_options() -> None:
    venv = DrawVectorEnv(2, 3, "match")
    with pytest.raises(ValueError, match=r"options\['scores'\]\[0\] must be 3 integers in 0..60"):
        venv.reset(options={"scores": [[61, 0, 0], None]})
    with pytest.warns(UserWarning, match="not known"):
        venv.reset(options={"bogus": 1})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_envs": 0}, "num_envs"),
        ({"num_envs": 2.0}, "num_envs"),
        ({"num_envs": 2, "num_players": 5}, "num_players"),
        ({"num_envs": 2, "episode": "game"}, "episode"),
        ({"num_envs": 2, "reward": "win_loss"}, "win_loss"),
        ({"num_envs": 2, "autoreset": 1}, "autoreset"),
        ({"num_envs": 2, "parallel": "yes"}, "parallel"),
        ({"num_envs": 2, "max_pip": 10}, "max_pip"),
        ({"num_envs": 2, "max_pip": "6"}, "max_pip"),
        ({"num_envs": 2, "hand_size": 0}, "hand_size"),
        ({"num_envs": 2, "hand_size": 2.5}, "hand_size"),
        ({"num_envs": 2, "protected": -1}, "protected"),
        ({"num_envs": 2, "max_pip": 2, "hand_size": 3, "protected": 1}, "hand_size=3 to 2 players with protected=1"),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DrawVectorEnv(**kwargs)


def test_calls_before_reset_raise() -> None:
    venv = DrawVectorEnv(2)
    with pytest.raises(RuntimeError):
        venv.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError):
        venv.observe(0)


def test_parallel_steps_equal_serial_steps() -> None:
    outs = []
    for parallel in (False, True):
        venv = DrawVectorEnv(64, 4, "match", parallel=parallel)
        out = venv.reset(seed=21)
        rng = np.random.default_rng(21)
        seen = []
        for _ in range(40):
            out = venv.step(random_actions(out.action_mask, rng))
            seen.append(out)
        outs.append(seen)
    for a, b in zip(*outs):
        for field_a, field_b in zip(a, b):
            np.testing.assert_array_equal(field_a, field_b)


def test_random_legal_play_keeps_masks_legal() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        venv = DrawVectorEnv(128, 2, "match", "zero_sum")
        out = venv.reset(seed=4)
        actions = np.zeros(128, np.int64)
        words = np.random.SeedSequence(4).generate_state(128, np.uint64).view(np.int64)
        for _ in range(300):
            E.random_actions(words, out.action_mask, actions)
            assert out.action_mask[np.arange(128), actions].all()
            out = venv.step(actions)
            assert (out.action_mask.sum(axis=1) >= 1).all()
            # zero-sum rewards sum to zero in every game (up to float32 rounding)
            assert np.allclose(out.rewards.sum(axis=1), 0, atol=1e-3)
