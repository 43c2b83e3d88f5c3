"""The single-agent Gymnasium adapter: API checks, rewards seen by the learner, seats, seeding."""

from __future__ import annotations

import numpy as np
import pytest
from stable_baselines3.common.env_checker import check_env

import agents
from draw_env.draw_dominoes import ILLEGAL_PENALTY
from draw_env.features import encode_observation, feature_size
from draw_env.observation import OBSERVATION_SIZE
from draw_env.single_agent import DrawSingleAgentEnv
from draw_env.tiles import tile_id

SCALE = 0.02


def random_learner_action(env: DrawSingleAgentEnv, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(env.action_masks())))


def play_episode(
    env: DrawSingleAgentEnv, rng: np.random.Generator, seed: int | None = None
) -> tuple[float, dict]:
    """Play one episode with random legal learner moves; return the total reward and the last info."""
    env.reset(seed=seed)
    total = 0.0
    while True:
        _, reward, terminated, truncated, info = env.step(random_learner_action(env, rng))
        total += reward
        if terminated or truncated:
            return total, info


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("features", ["scaled", "extended"])
def test_passes_sb3_check_env(num_players: int, features: str) -> None:
    check_env(DrawSingleAgentEnv(num_players=num_players, features=features, seed=3))


def _deal_where_opponent_goes_out() -> dict:
    """Seat 0 (the learner) opens [0|0]; seat 1 holds only [0|1] and goes out on its first move."""
    learner = ["[0|0]", "[6|6]", "[5|6]", "[5|5]", "[4|6]", "[4|5]", "[4|4]"]
    opponent = ["[0|1]"]
    used = {tile_id(t) for t in learner + opponent}
    boneyard = [t for t in range(28) if t not in used]
    return {"hands": [learner, opponent], "boneyard": boneyard, "opener": 0, "learner_seat": 0}


def test_lost_hand_gives_the_learner_its_negative_reward() -> None:
    env = DrawSingleAgentEnv(num_players=2, reward_scale=SCALE, seed=0)
    env.reset(options=_deal_where_opponent_goes_out())
    _, reward, terminated, _, info = env.step(2 * tile_id("[0|0]"))
    # The opponent went out inside step(): the learner is left with 12+11+10+10+9+8 = 60 pips,
    # all of which the opponent scores; zero-sum, the learner's reward is -60 points.
    assert terminated
    assert info["hand_pips"] == 60
    assert reward == pytest.approx(-60 * SCALE)


def test_won_hand_gives_the_learner_a_positive_reward() -> None:
    env = DrawSingleAgentEnv(num_players=2, reward_scale=SCALE, reward="points", seed=0)
    learner = ["[0|0]"]
    opponent = ["[6|6]", "[5|6]"]
    used = {tile_id(t) for t in learner + opponent}
    boneyard = [t for t in range(28) if t not in used]
    env.reset(options={"hands": [opponent, learner], "boneyard": boneyard, "opener": 1, "learner_seat": 1})
    _, reward, terminated, _, info = env.step(2 * tile_id("[0|0]"))
    assert terminated
    assert info["hand_points"] == 23
    assert reward == pytest.approx(23 * SCALE)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_learner_reward_is_its_zero_sum_hand_result(num_players: int) -> None:
    """Whoever ends the hand, the learner's total reward is its points minus the others' mean."""
    env = DrawSingleAgentEnv(num_players=num_players, reward_scale=SCALE, seed=11)
    rng = np.random.default_rng(0)
    signs = set()
    for _ in range(40):
        total, _ = play_episode(env, rng)
        points = [
            env.unwrapped._aec.infos[agent]["hand_points"] for agent in env.unwrapped._aec.possible_agents
        ]
        seat = env.unwrapped._aec.possible_agents.index(env.learner)
        others = (sum(points) - points[seat]) / (num_players - 1)
        assert total == pytest.approx((points[seat] - others) * SCALE)
        signs.add(np.sign(total))
    assert {-1.0, 1.0} <= signs  # random play both wins and loses hands


def test_learner_seat_changes_between_episodes_and_is_seeded() -> None:
    def seats(seed: int) -> list[int]:
        env = DrawSingleAgentEnv(num_players=4, seed=seed)
        return [env.reset()[1]["learner_seat"] for _ in range(40)]

    first = seats(5)
    assert set(first) == {0, 1, 2, 3}
    assert first == seats(5)
    assert first != seats(6)


def test_same_seed_same_episode() -> None:
    def trajectory(seed: int) -> list[tuple]:
        env = DrawSingleAgentEnv(num_players=3, seed=seed)
        rng = np.random.default_rng(1)
        observation, _ = env.reset()
        steps = [tuple(observation)]
        for _ in range(3):
            done = False
            while not done:
                observation, reward, done, _, _ = env.step(random_learner_action(env, rng))
                steps.append((tuple(observation), reward))
            observation, _ = env.reset()
        return steps

    assert trajectory(7) == trajectory(7)
    assert trajectory(7) != trajectory(8)


def test_action_masks_are_the_learners_legal_actions() -> None:
    env = DrawSingleAgentEnv(num_players=2, seed=2)
    rng = np.random.default_rng(2)
    env.reset()
    for _ in range(20):
        state = env.unwrapped._aec.state_ref
        mask = env.action_masks()
        assert mask.dtype == bool and mask.shape == (58,)
        assert state.current == env.unwrapped._aec.possible_agents.index(env.learner)
        assert np.flatnonzero(mask).tolist() == state.legal_actions()
        _, _, done, _, _ = env.step(random_learner_action(env, rng))
        if done:
            env.reset()


def test_opponent_policies_are_sampled_reset_and_only_shown_their_own_turns() -> None:
    class CountingAgent:
        def __init__(self) -> None:
            self.resets = 0
            self.moves = 0

        def reset(self) -> None:
            self.resets += 1

        def act(self, observation: dict) -> int:
            assert observation["action_mask"].any()
            self.moves += 1
            return int(np.flatnonzero(observation["action_mask"])[0])

    chosen, ignored = CountingAgent(), CountingAgent()
    env = DrawSingleAgentEnv(num_players=2, opponents=[chosen, ignored], opponent_weights=[1.0, 0.0], seed=4)
    rng = np.random.default_rng(4)
    for _ in range(5):
        play_episode(env, rng)
    assert chosen.resets == 5 and chosen.moves > 0
    assert ignored.resets == 0 and ignored.moves == 0

    seen_masks: list[np.ndarray] = []

    def first_legal(observation: dict) -> int:  # a plain function works as an opponent too
        seen_masks.append(observation["action_mask"].copy())
        return int(np.flatnonzero(observation["action_mask"])[0])

    play_episode(DrawSingleAgentEnv(num_players=2, opponents=first_legal, seed=4), rng)
    assert seen_masks and all(mask.any() for mask in seen_masks)


def test_skip_forced_leaves_the_learner_only_real_choices() -> None:
    env = DrawSingleAgentEnv(num_players=3, reward_scale=SCALE, skip_forced=True, seed=12)
    rng = np.random.default_rng(12)
    for _ in range(30):
        env.reset()
        done = False
        total = 0.0
        while not done:
            assert env.action_masks().sum() >= 2
            _, reward, done, _, _ = env.step(random_learner_action(env, rng))
            total += reward
        points = [
            env.unwrapped._aec.infos[agent]["hand_points"] for agent in env.unwrapped._aec.possible_agents
        ]
        seat = env.unwrapped._aec.possible_agents.index(env.learner)
        assert total == pytest.approx((points[seat] - (sum(points) - points[seat]) / 2) * SCALE)


def test_illegal_learner_action_ends_the_episode_with_the_penalty() -> None:
    env = DrawSingleAgentEnv(num_players=2, reward_scale=SCALE, seed=0)
    env.reset()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and info["illegal_action"] == 1
    assert reward == pytest.approx(ILLEGAL_PENALTY["zero_sum"] * SCALE)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_observations_are_scaled_into_the_unit_box() -> None:
    env = DrawSingleAgentEnv(num_players=4, episode="match", seed=9)
    rng = np.random.default_rng(9)
    observation, _ = env.reset()
    for _ in range(200):
        assert env.observation_space.contains(observation)
        observation, _, done, _, _ = env.step(random_learner_action(env, rng))
        if done:
            observation, _ = env.reset()
    raw = {"observation": np.zeros(OBSERVATION_SIZE, np.float32), "action_mask": np.zeros(58, np.int8)}
    assert encode_observation(raw, "scaled").shape == (feature_size("scaled"),) == (OBSERVATION_SIZE,)
    assert encode_observation(raw, "extended").shape == (feature_size("extended"),)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"num_players": 5}, "num_players"),
        ({"features": "raw"}, "features"),
        ({"reward_scale": 0}, "reward_scale"),
        ({"reward": "win_loss"}, "reward"),
        ({"skip_forced": 1}, "skip_forced"),
        ({"opponents": [object()]}, "opponents"),
        ({"opponents": [lambda obs: 56], "opponent_weights": [0.0]}, "opponent_weights"),
    ],
)
def test_bad_arguments_name_themselves(kwargs: dict, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        DrawSingleAgentEnv(**kwargs)


def test_bad_learner_seat_option_is_rejected() -> None:
    env = DrawSingleAgentEnv(num_players=3)
    with pytest.raises(ValueError, match="learner_seat"):
        env.reset(options={"learner_seat": 3})


def test_numpy_integer_seeds_work_like_python_ones() -> None:
    numpy_seeded = DrawSingleAgentEnv(num_players=3, seed=np.int64(4))
    python_seeded = DrawSingleAgentEnv(num_players=3)
    assert np.array_equal(numpy_seeded.reset()[0], python_seeded.reset(seed=4)[0])
    assert np.array_equal(numpy_seeded.reset(seed=np.uint16(9))[0], python_seeded.reset(seed=9)[0])


@pytest.mark.parametrize(
    "failing",
    [
        {"seed": 5, "options": {"learner_seat": 3}},
        {"seed": 5, "options": {"opener": 9}},
        {"options": {"hands": [[0]], "boneyard": []}},
        {"seed": -1},
    ],
    ids=repr,
)
def test_a_reset_that_raises_leaves_the_rngs_and_the_episode_as_they_were(failing: dict) -> None:
    tried, untouched = DrawSingleAgentEnv(num_players=3, seed=1), DrawSingleAgentEnv(num_players=3, seed=1)
    for env in (tried, untouched):
        env.reset()
    with pytest.raises(ValueError):
        tried.reset(**failing)
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    for _ in range(60):  # the episode in play, then unseeded episodes: seats, opponents' moves, deals
        a = tried.step(random_learner_action(tried, rng_a))
        b = untouched.step(random_learner_action(untouched, rng_b))
        assert np.array_equal(a[0], b[0]) and a[1:] == b[1:]
        if a[2]:
            assert np.array_equal(tried.reset()[0], untouched.reset()[0])


def _record_aec_steps(env: DrawSingleAgentEnv) -> list[tuple[bool, int, float, bool]]:
    """Spy on the AEC steps the adapter takes: (the learner moved, its legal actions, learner reward, over)."""
    aec = env.unwrapped._aec
    played: list[tuple[bool, int, float, bool]] = []
    step = aec.step

    def recording_step(action: int) -> None:
        by_learner, legal = aec.agent_selection == env.learner, len(aec.state_ref.legal_actions())
        step(action)
        played.append((by_learner, legal, aec.rewards[env.learner], aec.terminations[env.learner]))

    aec.step = recording_step  # the instance attribute shadows the method
    return played


@pytest.mark.parametrize(("episode", "seed", "resets"), [("hand", 70, 35), ("match", 162, 86)])
def test_skip_forced_replaces_an_episode_that_ends_before_the_learners_first_decision(
    episode: str, seed: int, resets: int
) -> None:
    """With 4 players a hand, or even a match (a hand of 61+ points), can end with every learner
    move forced. Such an episode has no step to end with: reset replaces it and reports it, where it
    used to raise "options give a deal that ends before the learner's first turn" in training. The
    seeds are ones where this happens at the last of ``resets`` resets."""
    opponents = [agents.make(name, seed=seed) for name in ("heaviest", "variety", "random")]
    env = DrawSingleAgentEnv(
        num_players=4, opponents=opponents, episode=episode, reward_scale=SCALE, skip_forced=True, seed=seed
    )
    played = _record_aec_steps(env)
    earlier = [env.reset()[1] for _ in range(resets - 1)]
    played.clear()
    _, info = env.reset()  # raised ValueError before the fix
    assert info["skipped_episodes"] == 1 and all(e["skipped_episodes"] == 0 for e in earlier)
    ended = [over for *_, over in played].index(True)  # then a new episode was dealt
    assert all(legal == 1 for by_learner, legal, *_ in played[: ended + 1] if by_learner)  # only forced moves
    assert any(by_learner for by_learner, *_ in played[: ended + 1])
    learner_rewards = sum(reward for _, _, reward, _ in played)
    assert learner_rewards != 0 and info["reset_reward"] == pytest.approx(learner_rewards * SCALE)
    # The replacement episode is the learner's, from a real decision on to its end.
    assert info["learner_seat"] == env.unwrapped._aec.possible_agents.index(env.learner)
    rng = np.random.default_rng(seed)
    done = False
    while not done:
        assert env.unwrapped._aec.agent_selection == env.learner and env.action_masks().sum() >= 2
        _, _, done, _, _ = env.step(random_learner_action(env, rng))


def _deal_where_opponent_goes_out_first() -> dict:
    """Seat 0 opens with its only tile, [0|1] (if it places rather than draws), and goes out; the
    learner (seat 1) keeps 69 pips."""
    learner = ["[6|6]", "[5|6]", "[5|5]", "[4|6]", "[4|5]", "[4|4]", "[3|6]"]
    used = {tile_id(t) for t in learner + ["[0|1]"]}
    boneyard = [t for t in range(28) if t not in used]
    return {"hands": [["[0|1]"], learner], "boneyard": boneyard, "opener": 0, "learner_seat": 1}


def _first_placement(observation: dict) -> int:
    return int(np.flatnonzero(observation["action_mask"][:56])[0])


def test_a_set_up_deal_that_ends_the_episode_before_the_learners_turn_is_rejected() -> None:
    env = DrawSingleAgentEnv(num_players=2, opponents=_first_placement, reward_scale=SCALE, seed=0)
    with pytest.raises(ValueError, match=r"options\['hands'\].*before the learner's first decision"):
        env.reset(options=_deal_where_opponent_goes_out_first())
    assert env.reset()[1]["skipped_episodes"] == 0  # a dealt episode follows normally
    match = DrawSingleAgentEnv(num_players=2, opponents=_first_placement, episode="match", reward_scale=SCALE, seed=0)
    with pytest.raises(ValueError, match=r"options\['hands'\]"):  # its 69 points end the match
        match.reset(options={**_deal_where_opponent_goes_out_first(), "scores": [31, 0]})


def test_a_match_set_up_hand_that_ends_before_the_learners_turn_goes_on_to_the_next() -> None:
    env = DrawSingleAgentEnv(num_players=2, opponents=_first_placement, episode="match", reward_scale=SCALE, seed=0)
    _, info = env.reset(options=_deal_where_opponent_goes_out_first())
    # The set-up hand is over (the opponent scored the learner's 69 pips); the match goes on.
    assert info["skipped_episodes"] == 0 and info["reset_reward"] == pytest.approx(-69 * SCALE)
    assert list(env.unwrapped._aec.state_ref.scores) == [69, 0]
    assert env.unwrapped._aec.agent_selection == env.learner == "player_1"
