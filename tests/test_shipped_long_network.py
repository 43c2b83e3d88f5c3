"""The shipped networks of the 2-player long run, ``agents/policies/ppo_2p_long.npz`` and its
anchored second stage ``ppo_2p_anchored.npz``: each record says what trained it (the config of
``configs/jax_ppo_2p_long.yaml`` or ``jax_ppo_2p_anchored.yaml``, the network it started from, the
curve, the 2,000-match results), each holds the policy alone (its critic read every hand), and
each plays the seeds' game through the environment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import agents
import draw_env
from agents.policy_file import load_policy_file
from tests.positions import assert_plays_legally
from train.run_dir import FREE_KEYS

ROOT = Path(__file__).resolve().parent.parent
#: Each shipped network and the config that trained it.
SHIPPED = {"ppo_2p_long": "jax_ppo_2p_long", "ppo_2p_anchored": "jax_ppo_2p_anchored"}


@pytest.mark.parametrize(("name", "config_name"), SHIPPED.items())
def test_the_record_names_the_config_the_start_and_the_results(name: str, config_name: str) -> None:
    shipped = ROOT / "agents" / "policies" / f"{name}.npz"
    config_path = ROOT / "configs" / f"{config_name}.yaml"
    record = json.loads(shipped.with_suffix(".json").read_text(encoding="utf-8"))
    provenance = record["provenance"]
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    trained = provenance["trained_by_run"]
    assert trained["trained_by"] == "draw-train (pipeline: jax_ppo)"
    for key, value in config.items():
        if key not in ("eval", "final_eval", *FREE_KEYS):  # what it computes, not where it wrote
            assert trained["config"][key] == value, key
    assert trained["config"]["critic"] == "central" and provenance["init"] == config["init"]
    assert trained["env_steps"] == config["updates"] * config["num_envs"] * config["num_steps"]
    assert provenance["command"] == f"draw-train --config configs/{config_path.name}"
    steps = [row["timesteps"] for row in provenance["learning_curve"]]
    assert steps == sorted(steps) and steps[-1] == trained["env_steps"]
    for result in provenance["results"]:
        low, high = result["wilson_95"]
        assert result["matches"] == 2000 and low <= result["win_rate"] <= high
        assert result["command"].startswith(f'draw-eval "ppo:path=agents/policies/{name}.npz" ')


@pytest.mark.parametrize("name", SHIPPED)
def test_it_holds_the_policy_alone_and_plays_the_seeds_game(name: str) -> None:
    shipped = ROOT / "agents" / "policies" / f"{name}.npz"
    weights = load_policy_file(shipped)  # the record's sha256 and shapes checked
    assert weights.value is None and weights.value_unit is None  # a central critic is never shipped
    assert weights.num_players == 2 and weights.obs_type == "observation" and weights.game.is_default
    assert_plays_legally(agents.make("ppo", path=str(shipped)), draw_env.env(num_players=2, episode="hand"), range(3))
