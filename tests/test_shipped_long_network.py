"""The shipped network of the 2-player long run, ``agents/policies/ppo_2p_long.npz``: its record
says what trained it (the config of ``configs/jax_ppo_2p_long.yaml``, the network it started
from, the curve, the 2,000-match results), it holds the policy alone (its critic read every hand),
and it plays the seeds' game through the environment."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

import agents
import draw_env
from agents.policy_file import load_policy_file
from tests.positions import assert_plays_legally

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "agents" / "policies" / "ppo_2p_long.npz"
CONFIG = ROOT / "configs" / "jax_ppo_2p_long.yaml"


def test_the_record_names_the_config_the_start_and_the_results() -> None:
    record = json.loads(SHIPPED.with_suffix(".json").read_text(encoding="utf-8"))
    provenance = record["provenance"]
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    trained = provenance["trained_by_run"]
    assert trained["trained_by"] == "draw-train (pipeline: jax_ppo)"
    for key, value in config.items():
        if key not in ("eval", "final_eval", "progress_bar"):
            assert trained["config"][key] == value, key
    assert trained["config"]["critic"] == "central" and provenance["init"] == config["init"]
    assert trained["env_steps"] == config["updates"] * config["num_envs"] * config["num_steps"]
    assert provenance["command"] == f"draw-train --config configs/{CONFIG.name}"
    steps = [row["timesteps"] for row in provenance["learning_curve"]]
    assert steps == sorted(steps) and steps[-1] == trained["env_steps"]
    for result in provenance["results"]:
        low, high = result["wilson_95"]
        assert result["matches"] == 2000 and low <= result["win_rate"] <= high
        assert result["command"].startswith('draw-eval "ppo:path=agents/policies/ppo_2p_long.npz" ')


def test_it_holds_the_policy_alone_and_plays_the_seeds_game() -> None:
    weights = load_policy_file(SHIPPED)  # the record's sha256 and shapes checked
    assert weights.value is None and weights.value_unit is None  # a central critic is never shipped
    assert weights.num_players == 2 and weights.obs_type == "observation" and weights.game.is_default
    assert_plays_legally(agents.make("ppo", path=str(SHIPPED)), draw_env.env(num_players=2, episode="hand"), range(3))
