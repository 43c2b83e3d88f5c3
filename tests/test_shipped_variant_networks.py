"""The shipped networks of the exact variants, ``agents/policies/{micro,mini}_2p.npz``: each
record says what trained it (variant, ``obs_type``, the config of ``configs/VARIANT_2p.yaml``, the
clean commit), each plays its variant through the environment's information states, and
(exhaustive) each exact exploitability is the one the variant's page gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

import agents
import draw_env
from tests.positions import assert_plays_legally

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("micro", "mini")


def shipped(variant: str) -> Path:
    return ROOT / "agents" / "policies" / f"{variant}_2p.npz"


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_record_names_the_variant_the_config_and_the_commit(variant: str) -> None:
    from draw_env.rules import DrawGame

    record = json.loads(shipped(variant).with_suffix(".json").read_text(encoding="utf-8"))
    game = DrawGame.named(variant)
    assert (record["num_players"], record["max_pip"], record["hand_size"], record["protected"]) == (
        2, game.max_pip, game.hand_size, game.protected)
    assert record["obs_type"] == "information_state"
    provenance = record["provenance"]
    assert provenance["trained_by"] == "draw-train (pipeline: jax_ppo)"
    config = yaml.safe_load((ROOT / "configs" / f"{variant}_2p.yaml").read_text(encoding="utf-8"))
    for key, value in config.items():
        if key in ("eval", "final_eval", "progress_bar"):
            continue
        assert provenance["config"][key] == value, key
    assert provenance["env_steps"] == config["updates"] * config["num_envs"] * config["num_steps"]
    assert re.fullmatch(r"[0-9a-f]{40}", provenance["source"]["commit"]) and provenance["source"]["dirty"] is False


@pytest.mark.parametrize("variant", VARIANTS)
def test_it_plays_its_variant_through_information_states(variant: str) -> None:
    player = agents.make("network", path=str(shipped(variant)))
    assert_plays_legally(player, draw_env.env(variant=variant, obs_type="information_state", episode="hand"), range(5))


@pytest.mark.exhaustive  # a streaming best response on mini: about 30 CPU-seconds
@pytest.mark.parametrize("variant", VARIANTS)
def test_its_exact_exploitability_is_the_documented_one(variant: str) -> None:
    from arena.exploitability import agent_probabilities, streaming_exploitability
    from draw_env.exact import streaming
    from draw_env.rules import DrawGame

    halves = streaming.enumerate_states(DrawGame.named(variant), ("information_state",))
    sampling = agents.make("network", path=str(shipped(variant)), deterministic=False)
    measured = streaming_exploitability(halves, agent_probabilities(sampling), obs_type="information_state")
    page = (ROOT / "docs" / f"variant_{variant}.md").read_text(encoding="utf-8")
    documented = re.search(rf"\| `{variant}_2p\.npz` \| sampling its policy \| ([0-9.e-]+) \|", page)
    assert documented is not None
    assert measured.exploitability == pytest.approx(float(documented.group(1)), rel=5e-3)  # the page rounds
