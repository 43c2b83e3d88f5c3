"""The agent protocol, the registry and the rule-based agents.

Positions come from random play with the rules core; each agent sees them through
:func:`agents.base.observe`, the same vector and mask the environment builds.
"""

from __future__ import annotations

import pickle
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import agents
import draw_env
from agents.base import Agent, hand_mask, num_players, observe, open_ends
from agents.baselines import variety_key
from draw_env.rules import DRAW, PASS, DrawGame, DrawState
from draw_env.tiles import PIPS
from tests.positions import random_positions

#: The agents this file checks; ``ppo`` needs a trained policy and is tested with it.
RULE_BASED = ("random", "random_forced", "heaviest", "variety")
DETERMINISTIC = ("heaviest", "variety")


@pytest.fixture(scope="module")
def positions() -> dict[int, list[DrawState]]:
    # 60 hands per player count give 1,500 to 2,000 positions each.
    return {n: random_positions(n, hands=60, seed=n) for n in (2, 3, 4)}


def test_registry_lists_the_agents() -> None:
    assert agents.available()[:5] == ["random", "random_forced", "heaviest", "variety", "ismcts"]
    assert "ppo" in agents.available()
    for name in RULE_BASED + ("ismcts",):
        agent = agents.make(name)
        assert isinstance(agent, Agent)
        assert agent.name == name
        agent.reset()


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("minimax", {}, "name must be one of random, random_forced, heaviest"),
        ("heaviest", {"depth": 3}, "unknown keyword(s) depth; it takes: seed"),
        ("random", {"seed": "seven"}, "seed must be a non-negative integer or None"),
        ("random", {"seed": True}, "seed must be a non-negative integer or None"),
        ("random_forced", {"seed": -1}, "seed must be a non-negative integer or None"),
        ("heaviest", {"seed": 2.0}, "seed must be a non-negative integer or None"),
        ("ismcts", {"simulations": 0}, "simulations must be an integer in [1, 1000000], got 0"),
        ("ismcts", {"simulations": 10**20}, "simulations must be an integer in [1, 1000000], got 100000000000000000000"),
        ("ismcts_python", {"simulations": 10**6 + 1}, "simulations must be an integer in [1, 1000000]"),
        ("ismcts_python", {"protected": 3}, "protected must be None or 2 (the seeds' game: this search plays no other)"),
        ("ismcts", {"protected": -1}, "protected must be an integer in [0, 55]"),
        ("ismcts", {"exploration": 10**400}, "exploration must be a finite number >= 0"),
        ("pimc", {"worlds": 10**20}, "worlds must be an integer in [1, 1000000000], got 100000000000000000000"),
        ("pimc", {"depth": 161}, "depth must be an integer in [1, 160], got 161"),
        ("pimc", {"exact_tiles": 29}, "exact_tiles must be an integer in [0, 28], got 29"),
        ("ppo_search", {"simulations": 10**20}, "simulations must be an integer in [1, 1000000]"),
        ("network", {"path": 123}, "path must be a file path (text), got 123"),
        ("ppo_search", {"path": 123}, "path must be a file path (text), got 123"),
        ("ismcts", {"seconds": -1.0}, "seconds must be a finite number in (0, 3600.0]"),
        ("ismcts", {"seconds": float("inf")}, "seconds must be a finite number in (0, 3600.0]"),
        ("ismcts", {"exploration": -0.1}, "exploration must be a finite number >= 0"),
        ("ismcts", {"exploration": float("nan")}, "exploration must be a finite number >= 0"),
        ("ismcts", {"simulations": True}, "simulations must be an integer in [1, 1000000], got True"),
        ("ismcts", {"rollout_randomness": 1.5}, "rollout_randomness must be a finite number in [0, 1]"),
        ("ismcts", {"budget": 10}, "it takes: simulations, seconds, exploration, rollout_randomness, seed"),
    ],
)
def test_make_rejects_bad_names_and_arguments(name: str, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        agents.make(name, **kwargs)


def test_importing_agents_leaves_torch_and_train_alone() -> None:
    code = (
        "import sys, agents, agents.baselines, agents.ismcts; "
        "agents.make('ismcts'); "
        "print(sorted(m for m in ('torch', 'train') if m in sys.modules))"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"
    sources = "\n".join(path.read_text() for path in Path(agents.__file__).parent.rglob("*.py"))
    assert "import train" not in sources and "from train" not in sources


@pytest.mark.parametrize("name", RULE_BASED)
def test_rule_based_agents_play_legal_actions_for_2_to_4_players(
    name: str, positions: dict[int, list[DrawState]]
) -> None:
    agent = agents.make(name, seed=0)
    checked = 0
    for n, states in positions.items():
        for state in states:
            action = agent.act(observe(state, state.current))
            assert type(action) is int
            assert state.is_legal(action), (n, state, action)
            checked += 1
    assert checked > 4500


def test_observation_helpers_read_the_contract_blocks(positions: dict[int, list[DrawState]]) -> None:
    for n, states in positions.items():
        for state in states[::7]:
            vector = observe(state, state.current)["observation"]
            assert hand_mask(vector) == state.hands[state.current]
            assert open_ends(vector) == state.ends
            assert num_players(vector) == n


def test_random_uses_every_legal_action_including_voluntary_draws() -> None:
    # Opening position with 7 tiles and a full boneyard: 7 placements and a draw are legal.
    state = DrawGame(2).new_state(random.Random(5))
    legal = state.legal_actions()
    assert DRAW in legal and len(legal) == 8
    agent = agents.make("random", seed=1)
    observation = observe(state, state.current)
    counts = Counter(agent.act(observation) for _ in range(8000))
    assert set(counts) == set(legal)
    assert all(800 < counts[action] < 1200 for action in legal), counts


def test_forced_drawers_place_whenever_they_can(positions: dict[int, list[DrawState]]) -> None:
    players = [agents.make(name, seed=3) for name in ("random_forced", "heaviest", "variety")]
    for state in positions[3]:
        legal = state.legal_actions()
        placements = [action for action in legal if action < DRAW]
        observation = observe(state, state.current)
        for agent in players:
            action = agent.act(observation)
            if placements:
                assert action in placements
            else:
                assert action == (DRAW if DRAW in legal else PASS)


def test_heaviest_places_the_heaviest_tile_with_lowest_id_ties(positions: dict[int, list[DrawState]]) -> None:
    agent = agents.make("heaviest")
    for state in positions[2]:
        placements = [action for action in state.legal_actions() if action < DRAW]
        if not placements:
            continue
        heaviest = max(PIPS[action >> 1] for action in placements)
        expected = min(action for action in placements if PIPS[action >> 1] == heaviest)
        assert agent.act(observe(state, state.current)) == expected


def test_variety_keeps_the_most_values_then_answerable_ends_then_weight() -> None:
    # Hand [0|1] [1|2] [5|6] on open ends (1, 1). Placing [0|1] leaves values {1, 2, 5, 6} and
    # ends (0, 1), one answerable; placing [1|2] leaves {0, 1, 5, 6} and ends (2, 1), one
    # answerable: the weight decides, for [1|2].
    hand = (1 << 1) | (1 << 8) | (1 << 26)
    assert variety_key(hand, (1, 1), 2 * 1 + 0) == (4, 1, 1, -2)
    assert variety_key(hand, (1, 1), 2 * 8 + 0) == (4, 1, 3, -16)
    # Hand [1|2] [2|2] [4|5] on ends (2, 6): [2|2] keeps four values and leaves the 2 open,
    # which [1|2] answers; [1|2] keeps three and opens a 1 that nothing answers.
    hand = (1 << 8) | (1 << 13) | (1 << 23)
    assert variety_key(hand, (2, 6), 2 * 13 + 0) == (4, 1, 4, -26)
    assert variety_key(hand, (2, 6), 2 * 8 + 0) == (3, 0, 3, -16)
    # The opening lead of [4|5] leaves 4 and 5 open.
    assert variety_key(hand, None, 2 * 23) == (2, 0, 9, -46)


def test_variety_agent_follows_its_key(positions: dict[int, list[DrawState]]) -> None:
    agent = agents.make("variety")
    for state in positions[4]:
        placements = [action for action in state.legal_actions() if action < DRAW]
        if not placements:
            continue
        hand = state.hands[state.current]
        expected = max(placements, key=lambda action: variety_key(hand, state.ends, action))
        assert agent.act(observe(state, state.current)) == expected


def test_actions_ignore_tiles_the_agent_cannot_see(positions: dict[int, list[DrawState]]) -> None:
    rng = random.Random(11)
    compared = 0
    for states in positions.values():
        for state in states[::5]:
            player = state.current
            # Redeal opponents' hands and the boneyard, keeping everything the player knows;
            # late in a hand the redeal may have to try a few times to move a tile.
            view = state.view(player)
            other = next(
                (
                    candidate
                    for candidate in (view.sample_state(rng) for _ in range(20))
                    if candidate.hands != state.hands or candidate.boneyard != state.boneyard
                ),
                None,
            )
            if other is None:
                continue
            seen, seen_other = observe(state, player), observe(other, player)
            assert np.array_equal(seen["observation"], seen_other["observation"])
            assert np.array_equal(seen["action_mask"], seen_other["action_mask"])
            for name in RULE_BASED:
                first = agents.make(name, seed=compared).act(seen)
                second = agents.make(name, seed=compared).act(seen_other)
                assert first == second, (name, state, other)
            compared += 1
    assert compared > 900


@pytest.mark.parametrize("name", RULE_BASED + ("ismcts",))
def test_agents_survive_pickling_mid_stream(name: str, positions: dict[int, list[DrawState]]) -> None:
    kwargs = {"seed": 4, "simulations": 20} if name == "ismcts" else {"seed": 4}
    agent = agents.make(name, **kwargs)
    observations = [observe(state, state.current) for state in positions[3][:40]]
    for observation in observations[:20]:
        agent.act(observation)
    copy = pickle.loads(pickle.dumps(agent))
    assert [agent.act(o) for o in observations[20:]] == [copy.act(o) for o in observations[20:]]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_agents_play_whole_hands_through_the_environment(num_players: int) -> None:
    names = ["random", "random_forced", "heaviest", "variety"]
    players = [agents.make(names[(seat + num_players) % 4], seed=seat) for seat in range(num_players)]
    players[0] = agents.make("ismcts", simulations=10, seed=0)
    env = draw_env.env(num_players=num_players, episode="match")
    env.reset(seed=num_players)
    for player in players:
        player.reset()
    steps = 0
    for agent_name in env.agent_iter():
        observation, _reward, termination, truncation, _info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        env.step(players[int(agent_name.rsplit("_", 1)[1])].act(observation))
        steps += 1
    # env() ends the episode at once on an illegal action; a finished match means none was made.
    assert env.unwrapped.state_ref.is_match_over
    assert steps > 50


# ---------------------------------------------------------------------- specs


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("pimc:worlds=100000000000000000000", "agent 'pimc': worlds must be an integer in [1, 1000000000], got 100000000000000000000"),
        ("ismcts:simulations=100000000000000000000", "agent 'ismcts': simulations must be an integer in [1, 1000000]"),
        ("pimc:depth=1000", "agent 'pimc': depth must be an integer in [1, 160], got 1000"),
        ("ismcts:exploration=" + "9" * 400, "agent 'ismcts': exploration must be a finite number >= 0"),
        ("random:seed=18446744073709551616", "agent 'random': seed must be a non-negative integer or None"),
        ("pimc:worlds=1,worlds=2", "agent keyword 'worlds' is given twice in 'pimc:worlds=1,worlds=2'"),
        ("network:path=", "agent 'network': path must be a file path (text), got ''"),
        ("heaviest:path=x", "agent 'heaviest' got unknown keyword(s) path; it takes: seed"),
    ],
)
def test_a_spec_is_checked_when_it_is_read_naming_the_agent_and_the_argument(spec: str, message: str) -> None:
    """Before anything is played or written: every value within what the agent's code holds."""
    from arena.specs import parse_agent_spec

    with pytest.raises(ValueError, match=re.escape(message)):
        parse_agent_spec(spec)


def test_a_spec_pair_may_not_repeat_a_keyword_and_a_path_is_text() -> None:
    from arena.specs import check_buildable, normalise_spec, parse_agent_spec

    with pytest.raises(ValueError, match="agent keyword 'worlds' is given twice"):
        normalise_spec(("pimc:worlds=1", {"worlds": 2}))
    assert normalise_spec(("pimc:worlds=1", {"depth": 2})) == ("pimc", {"worlds": 1, "depth": 2})
    # path=123 names the file "123", read (and refused, naming the agent) when the agent is built.
    assert parse_agent_spec("network:path=123") == ("network", {"path": "123"})
    with pytest.raises(ValueError, match="agent 'network': path must be an existing policy file .* got '123'"):
        check_buildable([parse_agent_spec("network:path=123")])


def test_draw_eval_refuses_a_spec_beyond_what_the_agent_holds_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.cli import main as draw_eval

    out = tmp_path / "out.json"
    named = {
        "pimc:worlds=100000000000000000000": "agent 'pimc': worlds must be",
        "pimc:worlds=1,worlds=2": "agent keyword 'worlds' is given twice",
        "network:path=123": "agent 'network': path must be an existing policy file",
    }
    for spec, message in named.items():
        with pytest.raises(SystemExit) as stopped:
            draw_eval([spec, "heaviest", "--games", "2", "--quiet", "--json", str(out)])
        error = capsys.readouterr().err
        assert stopped.value.code == 2 and len(error.strip().splitlines()) == 1 and "Traceback" not in error
        assert error.startswith(f"draw-eval: error: {message}")
    assert list(tmp_path.iterdir()) == []


def test_the_exploit_pipeline_refuses_a_target_beyond_what_it_holds_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train import cli as draw_train

    for target in ("pimc:worlds=100000000000000000000", "ismcts:simulations=100000000000000000000", "pimc:worlds=1,worlds=2"):
        with pytest.raises(SystemExit) as stopped:
            draw_train.main(["--config", "configs/exploit.yaml", f"target={target}", f"output_dir={tmp_path / 'run'}"])
        error = capsys.readouterr().err.strip().splitlines()
        assert stopped.value.code == 2 and len(error) == 1 and "config key 'target'" in error[0]
    assert list(tmp_path.iterdir()) == []
