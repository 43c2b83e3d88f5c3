"""Each learner's one loop, ``train(config, budget, on_checkpoint, points) -> policy``, on a tiny
budget: it returns a policy and calls ``on_checkpoint`` exactly at the points asked; the meter
they share; the exact tree built once per process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from train.config import build
from train.meter import Budget, Meter, cpu_seconds
from train.policies import NetworkPolicy, Policy, TablePolicy

MICRO = {"max_pip": 2, "hand_size": 1, "protected": 2}


def _recorder() -> tuple[list[tuple[int, float, Any]], Any]:
    calls: list[tuple[int, float, Any]] = []
    return calls, lambda steps, seconds, policy: calls.append((steps, seconds, policy))


def _check(calls: list[tuple[int, float, Any]], final: Policy, points: int, budget: int) -> None:
    assert isinstance(final, Policy)
    assert len(calls) == points and calls[-1][2] is final
    steps = [step for step, _, _ in calls]
    assert steps == sorted(steps) and steps[-1] >= budget and steps[0] >= budget // points
    assert all(seconds >= 0 for _, seconds, _ in calls)


def test_the_meter_calls_each_point_once_the_rest_with_the_final_policy() -> None:
    calls, record = _recorder()
    meter = Meter(Budget(env_steps=100), 4, record)
    meter.reached(10, lambda: "early")  # no point reached
    meter.reached(30, lambda: "first")
    assert meter.next_steps(30) == 50
    meter.reached(60, lambda: "second")
    meter.reached(100, lambda: "spent")  # the budget's end: the final policy takes the points left
    assert meter.finish(100, "final") == "final"
    assert [(steps, policy) for steps, _, policy in calls] == [(30, "first"), (60, "second"), (100, "final"), (100, "final")]
    with pytest.raises(ValueError, match="positive integer"):
        Meter(Budget(env_steps=1), 0)


def test_the_meter_counts_neither_measuring_nor_what_runs_outside_its_spans() -> None:
    def busy(seconds: float) -> None:
        end = cpu_seconds() + seconds
        while cpu_seconds() < end:
            pass

    meter = Meter(Budget(cpu_seconds=100.0), 2, lambda *_: busy(0.2))
    busy(0.2)  # before start: not training
    meter.start()
    busy(0.05)
    meter.stop()
    meter.reached(0, lambda: None)
    assert meter.done == 0 and 0.04 <= meter.seconds < 0.15
    meter.start()
    meter.reached(0, lambda: None)
    meter.stop()
    assert meter.seconds < 0.15


def test_the_exact_tree_is_built_once_per_game() -> None:
    from arena.exploitability import tree_for
    from draw_env.rules import DrawGame

    game = DrawGame(2, **MICRO)
    tree = tree_for(game)
    assert tree_for(DrawGame(2, **MICRO)) is tree  # an equal game: the same tree
    with pytest.raises(ValueError, match="GiB allowed"):
        tree_for(game, max_bytes=1)  # a caller's bound holds, built or not


def test_cfr_plus(tmp_path: Path) -> None:
    from arena.exploitability import tree_for
    from train.cfr.config import CfrConfig
    from train.cfr.learner import train

    config = build(CfrConfig, {**MICRO, "output_dir": str(tmp_path / "cfr")})
    steps = 2 * tree_for(config.game()).num_nodes * 10  # ten iterations
    calls, record = _recorder()
    final = train(config, Budget(env_steps=steps), record, points=3, provenance={"by": "a test"})
    assert isinstance(final, TablePolicy) and final.about["by"] == "a test" and final.about["iterations"] == 10
    _check(calls, final, 3, steps)
    assert calls[0][2].about["iterations"] == 4  # whole iterations up to the first point (a third)


def test_self_play_ppo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from train.selfplay.config import TrainConfig

    # sb3's learn() left a folder SB3-<date> in the temporary directory on every call
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    from train.selfplay.learner import train

    config = build(TrainConfig, {
        **MICRO, "num_players": 2, "episode": "hand", "n_envs": 16, "opponents": {"self": 1.0},
        "ppo": {"num_steps": 8, "minibatch_size": 64, "update_epochs": 1, "net_arch": [16]}, "eval": {"every": 0},
        "tensorboard": False, "progress_bar": False, "output_dir": str(tmp_path / "selfplay"),
    })
    calls, record = _recorder()
    final = train(config, Budget(env_steps=256), record, points=2)
    assert isinstance(final, NetworkPolicy) and final.network.weights.provenance["timesteps"] == 256
    _check(calls, final, 2, 256)
    assert calls[0][0] == 128  # a rollout of 16 games x 8 steps: the first point's
    assert not (tmp_path / "selfplay").exists()  # a learner writes no run folder
    assert not list(temporary.glob("SB3-*"))


def test_ppo_in_jax(tmp_path: Path) -> None:
    pytest.importorskip("jax")
    pytest.importorskip("flax")
    pytest.importorskip("optax")
    from train.jax_ppo.config import JaxPPOConfig
    from train.jax_ppo.learner import train

    config = build(JaxPPOConfig, {
        **MICRO, "num_envs": 8, "num_steps": 8, "chunk": 2, "update_epochs": 1, "num_minibatches": 2, "hidden": [8],
        "opponents": ["self"], "fast_compile": True, "progress_bar": False, "output_dir": str(tmp_path / "jax"),
    })
    calls, record = _recorder()
    final = train(config, Budget(env_steps=256), record, points=2)  # 4 updates of 64 actions, 2 chunks
    assert isinstance(final, NetworkPolicy)
    _check(calls, final, 2, 256)
    assert [step for step, _, _ in calls] == [128, 256]
    probabilities = final.action_probabilities_batch(*_micro_rows())
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="give the budget env_steps"):
        train(config, Budget(cpu_seconds=1.0))


def _micro_rows() -> tuple[np.ndarray, np.ndarray]:
    from arena.exploitability import tree_for
    from draw_env.rules import DrawGame

    tree = tree_for(DrawGame(2, **MICRO))
    return tree.observations[0][:4].astype(np.float32), tree.action_mask(0)[:4]
