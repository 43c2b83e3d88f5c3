"""The shipped `mini` network, ``agents/policies/mini_2p.npz``: its record says what trained it
(variant, ``obs_type``, the config of ``configs/mini_2p.yaml``, the clean commit), it plays `mini`
through the environment's information states, and (exhaustive) its exact exploitability is the
one its pages give."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

import agents
import draw_env

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "agents" / "policies" / "mini_2p.npz"


def test_the_record_names_the_variant_the_config_and_the_commit() -> None:
    record = json.loads(POLICY.with_suffix(".json").read_text(encoding="utf-8"))
    assert (record["num_players"], record["max_pip"], record["hand_size"], record["protected"]) == (2, 3, 3, 3)
    assert record["obs_type"] == "information_state"
    provenance = record["provenance"]
    assert provenance["trained_by"] == "draw-train (pipeline: jax_ppo)"
    shipped = yaml.safe_load((ROOT / "configs" / "mini_2p.yaml").read_text(encoding="utf-8"))
    for key, value in shipped.items():
        if key in ("eval", "final_eval", "progress_bar"):
            continue
        assert provenance["config"][key] == value, key
    assert provenance["env_steps"] == shipped["updates"] * shipped["num_envs"] * shipped["num_steps"]
    assert re.fullmatch(r"[0-9a-f]{40}", provenance["source"]["commit"]) and provenance["source"]["dirty"] is False


def test_it_plays_mini_through_information_states() -> None:
    player = agents.make("network", path=str(POLICY))
    env = draw_env.env(variant="mini", obs_type="information_state", episode="hand")
    for seed in range(5):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            action = None if terminated or truncated else player.act(observation)
            if action is not None:
                assert observation["action_mask"][action] == 1
                probabilities = player.action_probabilities(observation)
                assert np.isclose(probabilities.sum(), 1.0) and np.all(probabilities[observation["action_mask"] == 0] == 0)
            env.step(action)


@pytest.mark.exhaustive  # a streaming best response on mini: about 30 CPU-seconds
def test_its_exact_exploitability_is_the_documented_one() -> None:
    from arena.exploitability import agent_probabilities, streaming_exploitability
    from draw_env.exact import streaming
    from draw_env.rules import DrawGame

    halves = streaming.enumerate_states(DrawGame.named("mini"), ("information_state",))
    sampling = agents.make("network", path=str(POLICY), deterministic=False)
    measured = streaming_exploitability(halves, agent_probabilities(sampling), obs_type="information_state")
    page = (ROOT / "docs" / "variant_mini.md").read_text(encoding="utf-8")
    documented = re.search(r"\| `mini_2p\.npz` \| sampling its policy \| ([0-9.]+) \|", page)
    assert documented is not None
    assert measured.exploitability == pytest.approx(float(documented.group(1)), abs=5e-5)
