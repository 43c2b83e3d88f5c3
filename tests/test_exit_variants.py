"""Expert iteration (``pipeline: exit``) on a variant: its keys checked, its data, network and evaluation of the variant."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.policy_file import load_policy_file
from draw_env.observation import layout
from draw_env.rules import DrawGame
from draw_env.vector import DrawVectorEnv
from train.config import ConfigError, load
from train.exit.collect import ExitData
from train.exit.config import ExitConfig, decision_bytes, search_nodes
from train.exit.run import run_exit

ROOT = Path(__file__).resolve().parents[1]
#: The micro variant: the double-two set (6 tiles), two tiles each, one protected.
MICRO = ["max_pip=2", "hand_size=2", "protected=1"]
TINY = [
    *MICRO,
    "episode=hand",
    "matches=6",
    "lockstep=3",
    "simulations=8",
    "plain_simulations=8",
    "epochs=1",
    "batch_size=8",
    "workers=1",
    "net_arch=[16]",
    "eval.matches=4",
    "eval.opponents=[heaviest]",
    "eval.workers=1",
    "tensorboard=false",
    "progress_bar=false",
]


def tiny(output_dir: Path, *extra: str) -> ExitConfig:
    return load(ExitConfig, None, [*TINY, f"output_dir={output_dir}", *extra])


def test_a_run_on_a_variant_trains_evaluates_and_records_it(tmp_path: Path) -> None:
    """Two iterations (the plain search, then the guided one in the tree) with a heuristic partner."""
    game = DrawGame(2, max_pip=2, hand_size=2, protected=1)
    output = tmp_path / "micro"
    summary = run_exit(tiny(output, "iterations=2", "guided_from=2", "partners={teacher: 1, heaviest: 1}"))
    weights = load_policy_file(output / "final.npz")
    assert weights.variant == game.variant and weights.num_players == 2
    assert weights.value is not None and weights.policy[-1][0].shape[0] == game.num_actions
    record = json.loads((output / "final.json").read_text())
    assert {key: record[key] for key in game.variant} == game.variant
    for iteration in (1, 2):
        data = ExitData.load(output / f"iter_{iteration:03d}" / "data.npz")
        assert data.observations.shape[1:] == (layout(game).size,) and data.masks.shape[1:] == (game.num_actions,)
        assert len(data) > 0 and (data.masks.sum(axis=1) > 1).all()
        np.testing.assert_array_equal(np.isfinite(data.values), data.masks)
        assert np.isfinite(data.outcomes).all()
    # The evaluation played the variant, one hand a game: the network's file would refuse another.
    assert [row["opponent"] for row in summary["eval"]] == ["heaviest", "previous"] * 2
    assert all(row["matches"] == 4 for row in summary["eval"])
    player = agents.make("network", path=str(output / "final.npz"))
    env = DrawVectorEnv(1, 2, max_pip=2, hand_size=2, protected=1)
    out = env.reset(seed=1)
    view = {"observation": out.observation[0], "action_mask": out.action_mask[0]}
    assert out.action_mask[0][player.act(view)] == 1
    seeds = DrawVectorEnv(1, 2).reset(seed=1)  # the seeds' game: refused, naming the variant trained for
    with pytest.raises(ValueError, match="max_pip=2, hand_size=2, protected=1"):
        player.act({"observation": seeds.observation[0], "action_mask": seeds.action_mask[0]})


@pytest.mark.parametrize(
    ("override", "key"),
    [
        (["max_pip=2", "hand_size=3"], "config keys max_pip, hand_size, protected"),
        (["max_pip=1"], "max_pip"),
        (["protected=-1"], "protected"),
        (["hand_size=0"], "hand_size"),
        (["episode=set"], "episode"),
        ([*MICRO, "partners={teacher: 1, ismcts_python: 1}"], "config key 'partners'"),
        ([*MICRO, "eval.opponents=[ismcts_python]"], "config key 'eval.opponents'"),
    ],
)
def test_bad_variant_keys_are_one_line_naming_the_key(override: list[str], key: str) -> None:
    with pytest.raises(ConfigError) as error:
        load(ExitConfig, None, override)
    message = str(error.value)
    assert "\n" not in message and key in message, message


def test_an_init_of_another_variant_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    output = tmp_path / "refused"
    config = tiny(output, f"init={ROOT / 'agents' / 'policies' / 'ppo_2p.npz'}")
    with pytest.raises(ConfigError, match="config key 'init' must be a policy of the config's game"):
        run_exit(config)
    assert not output.exists()


def test_defaults_stay_the_seeds_match_and_sizes_follow_the_variant() -> None:
    config = load(ExitConfig, None)
    assert config.episode == "match" and config.game().is_default
    mini = load(ExitConfig, ROOT / "configs" / "exit_mini.yaml")
    assert mini.game() == DrawGame(2, max_pip=3, hand_size=3, protected=3) and mini.episode == "hand"
    assert decision_bytes("extended", mini.game()) < decision_bytes("extended")
    assert search_nodes(100, 1, mini.game()) < search_nodes(100, 1)


def test_the_memory_estimate_counts_the_compiled_searchs_nodes_per_simulation() -> None:
    # The config keeps its own copy so that it loads without numba.
    from agents.compiled_search.tree import NODES_PER_SIMULATION
    from train.exit.config import SEARCH_NODES_PER_SIMULATION

    assert SEARCH_NODES_PER_SIMULATION == NODES_PER_SIMULATION
