"""render(): the ansi text (last action, finished hands, the winner, spectators) and rgb_array frames."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import render_test

import draw_env
from draw_env import describe
from draw_env.render import FRAME_SHAPE, INK, Scene, render_rgb, render_text, text_patch, tile_sprite
from draw_env.rules import DRAW, PASS
from draw_env.tiles import NAMES


def random_step(env, rng: random.Random) -> None:
    agent = env.agent_selection
    if env.terminations[agent] or env.truncations[agent]:
        env.step(None)
        return
    env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))


def test_the_text_names_the_last_action_and_who_made_it() -> None:
    env = draw_env.env(render_mode="ansi")
    env.reset(seed=0)
    assert "Last action: none" in env.render().splitlines()
    opener = env.unwrapped.state_ref.current
    first = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
    env.step(first)
    assert f"Last action: player_{opener} placed {NAMES[first >> 1]} at the left end" in env.render().splitlines()
    seat = env.unwrapped.state_ref.current
    env.step(DRAW)
    assert f"Last action: player_{seat} drew a tile" in env.render().splitlines()
    assert render_text(Scene(env.unwrapped.state_ref, last=(2, PASS))).count("player_2 passed") == 1


def test_a_match_step_that_ends_a_hand_shows_its_result_before_the_next_deal() -> None:
    env = draw_env.env(num_players=3, episode="match", render_mode="ansi")
    env.reset(seed=4)
    rng = random.Random(0)
    seen_hand_end = False
    while env.agents and not all(env.terminations.values()):
        hand = env.unwrapped.state_ref.hand_number
        random_step(env, rng)
        state = env.unwrapped.state_ref
        text = env.render()
        lines = text.splitlines()
        if state.hand_number != hand:
            seen_hand_end = True
            # The finished hand comes first: its result, then every hand revealed with pips and points...
            assert lines[0].startswith(f"Hand {hand + 1} over, ")
            for seat, agent in enumerate(env.possible_agents):
                info = env.infos[agent]
                [row] = [line for line in lines if line.startswith(f"  player_{seat}: ")]
                assert row.endswith(f"({info['hand_pips']} pips, {info['hand_points']} points)")
            # ...then the new deal, whose line is empty.
            assert f"Hand {hand + 2} dealt: player_{state.opener} opens" in lines
            assert "Line: (empty)" in lines
        else:
            assert "over, " not in lines[0]
        # The description line stays one line of its own, about the current line.
        assert describe.describe_line(state.line, "en") in lines
    assert seen_hand_end
    winner = env.unwrapped.state_ref.match_winner
    scores = env.unwrapped.state_ref.scores
    expected = (
        f"Match over: player_{winner} wins with {scores[winner]} points"
        if winner is not None
        else f"Match over: drawn, the leaders are tied at {max(scores)} points"
    )
    assert expected in env.render().splitlines()


def test_spectators_see_every_hand_and_players_do_not() -> None:
    hidden = draw_env.env(render_mode="ansi")
    shown = draw_env.env(render_mode="ansi", reveal_hands=True)
    for env in (hidden, shown):
        env.reset(seed=8)
    state = shown.unwrapped.state_ref
    hand = " ".join(NAMES[t] for t in state.hand_tiles(1))
    assert f"player_1 {hand}" in shown.render()
    assert hand not in hidden.render()
    # Only the hands differ: the rest of the text is the same.
    hidden_lines = set(hidden.render().splitlines())
    assert hidden_lines <= set(shown.render().splitlines())
    with pytest.raises(ValueError, match="reveal_hands must be True or False"):
        draw_env.env(reveal_hands=1)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_rgb_frames_have_one_shape_and_change_with_the_game(num_players: int) -> None:
    env = draw_env.env(num_players=num_players, episode="match", render_mode="rgb_array")
    env.reset(seed=num_players)
    rng = random.Random(num_players)
    frames = [env.render()]
    for _ in range(12):
        random_step(env, rng)
        frames.append(env.render())
    for frame in frames:
        assert frame.shape == FRAME_SHAPE and frame.dtype == np.uint8
    assert all(not np.array_equal(a, b) for a, b in itertools.pairwise(frames))
    # A frame is a new array: keeping one (as a video recorder does) is safe.
    assert frames[0] is not frames[1] and not np.shares_memory(frames[0], frames[1])


def test_rgb_frames_show_hands_only_to_spectators_and_at_the_end() -> None:
    hidden = draw_env.env(render_mode="rgb_array")
    shown = draw_env.env(render_mode="rgb_array", reveal_hands=True)
    for env in (hidden, shown):
        env.reset(seed=5)
    assert not np.array_equal(hidden.render(), shown.render())
    rng = random.Random(1)
    while not all(hidden.terminations.values()):
        agent = hidden.agent_selection
        action = int(rng.choice(np.flatnonzero(hidden.observe(agent)["action_mask"])))
        hidden.step(action)
        shown.step(action)
    # Once the hand is over every hand is face up for everyone.
    assert np.array_equal(hidden.render(), shown.render())


def test_sprites_show_the_pips() -> None:
    # A tile's inked pixels grow with its pips; a double-blank is a blank face with a border.
    inked = [int((tile_sprite(v, v, False, 22) == INK).all(axis=2).sum()) for v in range(7)]
    assert inked == sorted(inked) and len(set(inked)) == 7
    vertical = tile_sprite(2, 5, True, 12)
    assert vertical.shape[0] > vertical.shape[1]
    assert not np.array_equal(text_patch("P0 SCORE 12", (255, 255, 255), (0, 0, 0)), text_patch("P0 SCORE 13", (255, 255, 255), (0, 0, 0)))


def test_pettingzoo_render_test() -> None:
    render_test(lambda render_mode: draw_env.env(render_mode=render_mode))
    render_test(lambda render_mode: draw_env.env(num_players=4, episode="match", render_mode=render_mode))


def test_record_video_on_the_single_agent_adapter(tmp_path: Path) -> None:
    pytest.importorskip("moviepy", reason="gymnasium's RecordVideo needs moviepy (the dev extra installs it)")
    from gymnasium.wrappers import RecordVideo

    from draw_env.single_agent import DrawSingleAgentEnv

    env = RecordVideo(
        DrawSingleAgentEnv(render_mode="rgb_array", seed=0),
        video_folder=str(tmp_path / "videos"),
        episode_trigger=lambda episode: True,
        disable_logger=True,
    )
    env.reset(seed=0)
    steps, done = 0, False
    while not done:
        mask = env.unwrapped.action_masks()
        _obs, _reward, terminated, truncated, _info = env.step(int(np.flatnonzero(mask)[0]))
        steps += 1
        done = terminated or truncated
    frames = list(env.recorded_frames)
    assert len(frames) == steps + 1 and all(frame.shape == FRAME_SHAPE for frame in frames)
    env.close()
    [video] = (tmp_path / "videos").glob("*.mp4")
    assert video.stat().st_size > 1000


def test_render_rgb_of_a_finished_match_hand_shows_that_hand() -> None:
    env = draw_env.raw_env(num_players=2, episode="match", render_mode="rgb_array")
    env.reset(seed=2)
    rng = random.Random(2)
    while env.unwrapped.state_ref.hand_number == 0:
        random_step(env, rng)
    finished = env._finished_hand
    assert finished is not None and finished.result is not None
    frame = env.render()
    assert np.array_equal(frame, render_rgb(Scene(env.state_ref, "match", env._last_action, finished)))
    # Without the finished hand the frame would show the new, empty deal instead.
    assert not np.array_equal(frame, render_rgb(Scene(env.state_ref, "match", env._last_action)))
