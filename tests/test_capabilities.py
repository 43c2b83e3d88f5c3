"""What the agent registry declares of each agent is true of it, and the one hint built on it.

The registry (:class:`agents.AgentEntry`) says whether an agent answers probabilities in batches,
which values it gives and in which unit; ``draw-exploit`` (batches), ``draw-play`` and
``draw-web`` (the hint, :mod:`arena.hints`) act on these facts instead of probing the agent.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import draw_env
from agents.ismcts import REWARD_SCALE
from agents.policy_file import record_path
from agents.policy_network import shipped_policy
from arena.hints import DEFAULT_HINT, read_hint
from arena.play import main as play_main
from arena.specs import parse_agent_spec


def _registered() -> list[tuple[str, type]]:
    found = []
    for name in agents.available():
        try:
            found.append((name, agents.agent_class(name)))
        except ImportError:  # an optional extra (OpenSpiel's bots) that is not installed
            continue
    return found


REGISTERED = _registered()


@pytest.mark.parametrize(("name", "cls"), REGISTERED, ids=[name for name, _ in REGISTERED])
def test_each_agents_declared_capabilities_are_the_methods_it_has(name: str, cls: type) -> None:
    facts = agents.entry(name)
    assert callable(getattr(cls, "action_probabilities", None))  # every agent answers one at a time
    assert callable(getattr(cls, "action_probabilities_batch", None)) == facts.batch_probabilities
    assert callable(getattr(cls, "action_values", None)) == (facts.values == "actions")
    assert callable(getattr(cls, "policy_for", None)) == (facts.values == "position")
    if facts.values == "actions":
        assert facts.value_unit == REWARD_SCALE  # the searches' values: zero-sum points / 40
    else:
        assert facts.value_unit is None  # none, or the policy file's own


def _observations(count: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Observations of the player to move along a game of random moves."""
    env = draw_env.env(num_players=2, episode="hand")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    found = []
    for _agent in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated or len(found) == count:
            break
        found.append(observation)
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return found


def test_an_agent_declared_batched_answers_batches_as_it_answers_one_by_one() -> None:
    agent = agents.make("network", deterministic=False)
    assert agents.entry_of(agent).batch_probabilities
    observations = _observations(6)
    vectors = np.stack([o["observation"] for o in observations])
    masks = np.stack([o["action_mask"] for o in observations])
    batch = agent.action_probabilities_batch(vectors, masks)  # type: ignore[attr-defined]
    one_by_one = np.stack([agent.action_probabilities(o) for o in observations])
    np.testing.assert_allclose(batch, one_by_one, atol=1e-6)


def test_an_agent_declared_with_values_gives_them() -> None:
    observation = _observations(1, seed=3)[0]
    search = agents.make("ismcts_python", simulations=30, seed=1)
    assert agents.entry_of(search).values == "actions"
    values = search.action_values(observation)  # type: ignore[attr-defined]
    legal = np.flatnonzero(observation["action_mask"]).tolist()
    assert sorted(values) == legal and all(np.isfinite(v) for v in values.values())
    network = agents.make("network")
    assert agents.entry_of(network).values == "position"
    assert network.policy_for(2).has_value  # type: ignore[attr-defined]


def test_an_unregistered_class_declares_nothing() -> None:
    class Outside:
        name = "outside"

    assert agents.entry_of(Outside()) == agents.UNREGISTERED
    assert not agents.UNREGISTERED.batch_probabilities and agents.UNREGISTERED.values is None


# ---------------------------------------------------------------------------------------------
# The hint


def test_a_networks_hint_shows_its_value_in_its_files_unit_and_none_without_one(tmp_path: Path) -> None:
    observation = _observations(1, seed=5)[0]
    shipped = agents.make("network", deterministic=False)
    hint = read_hint(shipped, observation, 2)
    policy = shipped.policy_for(2)  # type: ignore[attr-defined]
    raw = float(policy.values_batch(policy.encode(observation)[None])[0])
    assert hint.value == pytest.approx(raw * 40.0)  # ppo_2p: expert iteration, the searches' unit
    # The same file without its unit (as written before the field): no value, the rest the same.
    source = shipped_policy(2)
    copy = tmp_path / "old.npz"
    copy.write_bytes(source.read_bytes())
    record = json.loads(record_path(source).read_text())
    del record["value_unit"]
    record_path(copy).write_text(json.dumps(record))
    old = read_hint(agents.make("network", path=str(copy), deterministic=False), observation, 2)
    assert old.value is None and old.probabilities == hint.probabilities and old.choice == hint.choice


_MOVE_LINE = re.compile(r"^\s+(\d+)\) (.+?)\s+([+-]?\d+\.\d)%?$")


def _play_hint(spec: str, seed: int) -> tuple[str, dict[str, float], float | None]:
    """``draw-play``'s hint at the first position of player_0 against heaviest: the move it would
    play, each move's shown number (value or probability, %) and the position's value."""
    out = io.StringIO()
    argv = ["--players", "2", "--seat", "0", "--opponents", "heaviest", "--seed", str(seed), "--episode", "hand",
            "--hint-agent", spec]
    play_main(argv, stdin=io.StringIO("hint\nquit\n"), stdout=out)
    text = out.getvalue()
    choice = re.search(r"would play (.+) \(\d+\)\.", text)
    assert choice is not None, text
    shown = {match[2]: float(match[3]) for match in map(_MOVE_LINE.match, text.splitlines()) if match}
    position = re.search(r"value of the position: ([+-]\d+\.\d)", text)
    return choice[1], shown, None if position is None else float(position[1])


@pytest.mark.parametrize("spec", [DEFAULT_HINT, "ismcts:simulations=30", "heaviest"])
def test_draw_play_and_draw_web_give_the_same_hint_for_the_same_position(tmp_path: Path, spec: str) -> None:
    from tests.test_web import make_client, new_game

    seed = 11
    name, kwargs = parse_agent_spec(spec)
    if agents.entry(name).values == "actions":
        # Compiled before the page's search runs: it gets a time budget too (arena.web.budgets), and
        # the same hint holds while the count budget binds first.
        agents.make(name, simulations=2, seed=0).action_values(_observations(1)[0])  # type: ignore[attr-defined]
    client, _store = make_client(tmp_path)
    view = new_game(client, seats=["person", "heaviest"], episode="hand", seed=seed, hint=spec)
    web: dict[str, Any] = client.get(f"/api/games/{view['id']}/hint").json()
    choice, shown, position = _play_hint(spec, seed)
    names = {move["action"]: move["name"] for move in web["moves"]}
    assert choice == names[web["choice"]] and len(shown) == len(web["moves"])
    if any("value" in move for move in web["moves"]):  # a search: each move's value in points
        assert shown == pytest.approx({move["name"]: move["value"] for move in web["moves"]}, abs=0.051)
    else:
        assert shown == pytest.approx({move["name"]: 100 * move["probability"] for move in web["moves"]}, abs=0.051)
    assert (position is None) == ("value" not in web) == (spec != DEFAULT_HINT)
    if position is not None:
        assert position == pytest.approx(web["value"], abs=0.051)
