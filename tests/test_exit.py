"""Expert iteration (train/exit/, draw-train with pipeline: exit) and the search agent on the network."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.policy_file import load_policy_file
from draw_env.draw_dominoes import raw_env
from train import cli
from train.config import ConfigError, load
from train.exit.collect import ExitData
from train.exit.config import ExitConfig
from train.exit.run import run_exit

ROOT = Path(__file__).resolve().parents[1]
TINY = [
    "matches=2",
    "lockstep=2",
    "simulations=6",
    "plain_simulations=6",
    "epochs=1",
    "workers=1",
    "net_arch=[32]",
    "eval.matches=2",
    "eval.opponents=[heaviest]",
    "eval.workers=1",
    "tensorboard=false",
    "progress_bar=false",
]


def tiny(output_dir: Path, *extra: str):
    return load(ExitConfig, None, [*TINY, f"output_dir={output_dir}", *extra])


def arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def same_run(a: Path, b: Path) -> None:
    """Two runs made the same data, the same networks and the same evaluations."""
    for k in (1, 2):
        left, right = arrays(a / f"iter_{k:03d}" / "data.npz"), arrays(b / f"iter_{k:03d}" / "data.npz")
        left.pop("seconds"), right.pop("seconds")
        for key in left:
            np.testing.assert_array_equal(left[key], right[key], err_msg=key)
    left, right = arrays(a / "final.npz"), arrays(b / "final.npz")
    assert left.keys() == right.keys()
    for key in left:
        np.testing.assert_array_equal(left[key], right[key], err_msg=key)
    strip = ("train_seconds",)
    rows = [
        [{k: v for k, v in row.items() if k not in strip} for row in run["eval"]]
        for run in (_summary(a), _summary(b))
    ]
    assert rows[0] == rows[1]


def _summary(path: Path) -> dict:
    return json.loads((path / "summary.json").read_text())


@pytest.fixture(scope="module")
def two_iterations(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted two-iteration run from a fresh network."""
    output = tmp_path_factory.mktemp("exit") / "straight"
    run_exit(tiny(output, "iterations=2"))
    return output


def test_smoke_run_writes_an_evaluated_policy_with_a_value_head(two_iterations: Path) -> None:
    summary = _summary(two_iterations)
    assert [row["opponent"] for row in summary["eval"]] == ["heaviest", "previous"] * 2
    assert [row["iteration"] for row in summary["eval"]] == [1, 1, 2, 2]
    for name in ("eval.csv", "strength.png", "state.json", "final.json"):
        assert (two_iterations / name).is_file(), name
    weights = load_policy_file(two_iterations / "final.npz")
    assert weights.value is not None and weights.num_players == 2
    data = ExitData.load(two_iterations / "iter_001" / "data.npz")
    assert len(data) > 0 and np.isfinite(data.outcomes).all()
    assert (data.masks.sum(axis=1) > 1).all()
    # Every legal action has a search value, no illegal one does.
    np.testing.assert_array_equal(np.isfinite(data.values), data.masks)
    # Zero-sum outcomes of two players: each hand's two seats' outcomes cancel, so they are not all one sign.
    assert (data.outcomes > 0).any() and (data.outcomes < 0).any()
    player = agents.make("ppo", path=summary["policy"])
    env = raw_env(num_players=2)
    env.reset(seed=3)
    observation = env.observe(env.agent_selection)
    assert observation["action_mask"][player.act(observation)] == 1


def test_every_file_of_a_run_is_one_its_pipeline_writes(two_iterations: Path) -> None:
    from train.run_dir import run_files
    from train.runs import RUNS

    files = run_files(two_iterations, RUNS["exit"]).files
    assert len(files) == sum(path.is_file() for path in two_iterations.rglob("*")) > 10


def test_rerunning_a_finished_run_says_it_is_complete(two_iterations: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _summary(two_iterations)
    summary = run_exit(tiny(two_iterations, "iterations=2"))
    out = capsys.readouterr().out
    assert out.startswith(f"{two_iterations} is complete (2 iterations); its summary: {two_iterations / 'summary.json'}")
    assert "[iteration" not in out  # nothing collected, fitted or evaluated again
    assert summary == before


def test_a_finished_run_reruns_without_its_iterations_data(two_iterations: Path, tmp_path: Path) -> None:
    """A finished run reads no iteration's data (their ``data.npz`` may have been removed to save room)."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(two_iterations, copy)
    for data in copy.glob("iter_*/data.npz"):
        data.unlink()
    assert run_exit(tiny(copy, "iterations=2"))["decisions"] == _summary(two_iterations)["decisions"]


def test_resume_continues_to_the_same_result(
    two_iterations: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from train.exit import fit as fit_module

    output = tmp_path / "resumed"
    run_exit(tiny(output, "iterations=1"))

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    # Ctrl-C in iteration 2's fit: its data is on disk, its policy is not, one iteration completed.
    with monkeypatch.context() as patch:
        patch.setattr(fit_module, "fit", interrupted)
        with pytest.raises(KeyboardInterrupt):
            run_exit(tiny(output, "iterations=2"))
    assert (output / "iter_002" / "data.npz").is_file()
    assert not (output / "iter_002" / "policy.npz").exists()
    assert json.loads((output / "state.json").read_text())["completed"] == 1
    run_exit(tiny(output, "iterations=2"))
    assert f"Resuming {output} after iteration 1: 1 to go" in capsys.readouterr().out
    same_run(output, two_iterations)
    with pytest.raises(ConfigError, match="simulations"):
        run_exit(tiny(output, "iterations=3", "simulations=7"))


def test_seeded_run_repeats_and_seed_matters(two_iterations: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    run_exit(tiny(again, "iterations=2"))
    same_run(again, two_iterations)
    other = tmp_path / "other"
    run_exit(tiny(other, "iterations=1", "seed=1"))
    left = arrays(two_iterations / "iter_001" / "data.npz")
    right = arrays(other / "iter_001" / "data.npz")
    assert left["observations"].shape != right["observations"].shape or not np.array_equal(
        left["observations"], right["observations"]
    )


def test_make_train_pipeline_ends_with_the_policy_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    output = tmp_path / "quick"
    status = cli.main(
        [
            "--config",
            str(ROOT / "configs" / "exit_quick.yaml"),
            *TINY[:5],
            "workers=1",
            "eval.matches=2",
            "eval.workers=1",
            "progress_bar=false",
            "tensorboard=false",
            f"output_dir={output}",
        ]
    )
    assert status == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "heaviest" in "\n".join(lines) and "variety" in "\n".join(lines)
    prefix = "policy written to "
    assert lines[-1].startswith(prefix)
    path = lines[-1][len(prefix) :]
    assert agents.make("ppo", path=path).policy_for(2).has_value
    assert json.loads(Path(path).with_suffix(".json").read_text())["value_unit"] == 40.0  # the searches' unit
    # A fresh network of the config's widths, fitted: not the iteration-0 weights.
    fresh, trained = arrays(output / "iter_000" / "policy.npz"), arrays(Path(path))
    assert trained["policy/0/weight"].shape == (512, 340)
    assert not np.array_equal(fresh["policy/0/weight"], trained["policy/0/weight"])


def test_cli_refuses_resume_and_address_where_they_do_not_apply(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        cli.main(["pipeline=exit", f"output_dir={tmp_path}", "--resume", "x.zip"])
    with pytest.raises(SystemExit):
        cli.main(["--config", str(ROOT / "configs" / "quick.yaml"), "--address", "127.0.0.1:1"])
    with pytest.raises(ConfigError, match="eval.opponents"):
        load(ExitConfig, None, ["eval.opponents=[nobody]"])


@pytest.mark.parametrize("path", [None, "value"])
def test_search_agent_plays_legal_moves(path: str | None, two_iterations: Path) -> None:
    policy = None if path is None else str(two_iterations / "final.npz")
    player = agents.make("ppo_search", path=policy, simulations=8, seed=0)
    env = raw_env(num_players=2)
    env.reset(seed=11)
    moves = 0
    while not all(env.terminations.values()) and moves < 60:
        observation = env.observe(env.agent_selection)
        action = player.act(observation)
        assert observation["action_mask"][action] == 1
        env.step(action)
        moves += 1
    assert moves > 5
    with pytest.raises(ValueError, match="simulations"):
        agents.make("ppo_search", simulations=0)


@pytest.mark.ray
def test_ray_collection_matches_the_local_one(two_iterations: Path, tmp_path: Path) -> None:
    """``--address``: the shards run on the actors of a ``ray start --head`` cluster; same results."""
    ray_cli = Path(sys.executable).with_name("ray")
    if not ray_cli.exists():
        pytest.skip("ray is not installed (the train extra)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Token authentication is the head's default and Ray reads the driver's mode once per process
    # (an earlier test may have imported it): a loopback head for a test opts out instead.
    head = subprocess.Popen(
        [str(ray_cli), "start", "--head", "--block", f"--port={port}", "--num-cpus=1",
         "--include-dashboard=false", "--disable-usage-stats"],
        env={**os.environ, "RAY_AUTH_MODE": "disabled"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert head.stdout is not None
        for line in head.stdout:
            if "Ray runtime started" in line:
                break
        else:
            pytest.fail(f"ray start --head exited with {head.wait()}")
        output = tmp_path / "ray_run"
        run_exit(tiny(output, "iterations=2"), address=f"127.0.0.1:{port}")
        same_run(output, two_iterations)
    finally:
        head.send_signal(signal.SIGTERM)  # --block: SIGTERM stops the node's processes
        head.wait(timeout=60)


def test_iterations_before_guided_from_search_without_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before ``guided_from`` the plain compiled search at ``plain_simulations`` collects: no network call."""
    from agents.policy_network import NumpyPolicy
    from train.exit.collect import ShardTask, play_shard
    from train.exit.fit import initial_weights

    calls: list[int] = []
    real = NumpyPolicy.logits_batch

    def counted(self: NumpyPolicy, inputs: np.ndarray) -> np.ndarray:
        calls.append(len(inputs))
        return real(self, inputs)

    monkeypatch.setattr(NumpyPolicy, "logits_batch", counted)

    def shard(iteration: int, *extra: str) -> ExitData:
        config = tiny(tmp_path / "unused", "guided_from=2", "plain_simulations=12", *extra)
        weights = initial_weights(config)
        return play_shard(ShardTask(config, weights, iteration, 0, 2))

    plain = shard(1)
    assert not calls and len(plain) > 0
    # The plain budget is plain_simulations; the guided budget does not enter.
    np.testing.assert_array_equal(plain.values, shard(1, "simulations=7").values)
    assert not np.array_equal(np.nan_to_num(plain.values[:20]), np.nan_to_num(shard(1, "plain_simulations=30").values[:20]))
    assert not calls
    shard(2)
    assert calls, "from guided_from on, the search calls the network"
    tree_calls = len(calls)
    calls.clear()
    root = shard(2, "guide=root", "simulations=12")
    # guide: root calls the network once a step for all games, not once a simulation.
    assert 0 < len(calls) < tree_calls
    assert not np.array_equal(np.nan_to_num(root.values[:20]), np.nan_to_num(plain.values[:20]))


def test_guided_settings_may_change_until_a_guided_iteration_ran(tmp_path: Path) -> None:
    output = tmp_path / "run"
    run_exit(tiny(output, "iterations=1", "guided_from=2"))
    # Iteration 1 searched alone: the guided search's settings shaped nothing yet.
    run_exit(tiny(output, "iterations=2", "guided_from=2", "guide=root", "simulations=9", "prior_visits=50"))
    with pytest.raises(ConfigError, match="prior_visits"):
        run_exit(tiny(output, "iterations=3", "guided_from=2", "guide=root", "simulations=9", "prior_visits=60"))
    with pytest.raises(ConfigError, match="plain_simulations"):
        run_exit(tiny(output, "iterations=3", "guided_from=2", "guide=root", "simulations=9",
                      "prior_visits=50", "plain_simulations=7"))


def test_root_values_shrink_the_search_means_toward_the_network() -> None:
    from agents.network_search import root_values

    actions = np.array([3, 7, 9])
    visits = np.array([10.0, 10.0, 10.0])
    totals = np.array([5.0, 0.0, -5.0])  # means 0.5, 0.0, -0.5
    logits = np.zeros(58)
    logits[[3, 7, 9]] = [-10.0, 0.0, 10.0]  # the network ranks them the other way round
    alone = root_values(actions, visits, totals, logits, 0.1, 0.0)
    assert alone == pytest.approx({3: 0.5, 7: 0.0, 9: -0.5})
    even = root_values(actions, visits, totals, logits, 0.1, 10.0)
    # Equal weights: the average of the search's mean and the network's estimate (centred on
    # the search's mean, here 0): (0.5 - 1) / 2, (0 + 0) / 2, (-0.5 + 1) / 2.
    assert even == pytest.approx({3: -0.25, 7: 0.0, 9: 0.25})
    trusting = root_values(actions, visits, totals, logits, 0.1, 1e6)
    assert max(trusting, key=trusting.__getitem__) == 9


def test_value_arch_sets_a_fresh_value_network_and_defaults_to_net_arch(tmp_path: Path) -> None:
    """``value_arch`` gives the value network its own hidden widths; null keeps ``net_arch``'s."""
    from train.exit.fit import initial_weights

    def hidden_widths(layers: tuple) -> list[int]:
        return [len(layer[1]) for layer in layers[:-1]]  # each layer is (weight, bias)

    same = initial_weights(tiny(tmp_path, "net_arch=[24, 16]"))
    assert hidden_widths(same.policy) == [24, 16] and hidden_widths(same.value) == [24, 16]
    own = initial_weights(tiny(tmp_path, "net_arch=[24, 16]", "value_arch=[8]"))
    assert hidden_widths(own.policy) == [24, 16] and hidden_widths(own.value) == [8]


#: Bytes of one decision in a data shard: its observation (int16), mask (bool), action values and outcome (float32).
SHARD_ROW_BYTES = 258 * 2 + 58 + 58 * 4 + 4


def test_a_shard_larger_than_a_received_files_bound_is_read_back(tmp_path: Path) -> None:
    """An iteration of the shipped 2-player recipe holds about a million decisions (0.8 GB of
    arrays): a run reads its own shards back under their own bound, not a received file's."""
    from draw_env.io.untrusted import MAX_ARRAY_BYTES

    rows = MAX_ARRAY_BYTES // SHARD_ROW_BYTES + 1000
    data = ExitData(np.zeros((rows, 258), np.int16), np.zeros((rows, 58), bool), np.zeros((rows, 58), np.float32),
                    np.zeros(rows, np.float32), seconds=1.0)
    path = tmp_path / "data.npz"
    data.save(path)
    assert sum(a.nbytes for a in (data.observations, data.masks, data.values, data.outcomes)) == rows * SHARD_ROW_BYTES
    assert rows * SHARD_ROW_BYTES > MAX_ARRAY_BYTES
    assert len(ExitData.load(path)) == rows


@pytest.mark.parametrize("name", ["exit_2p", "exit_3p", "exit_4p"])
def test_a_shipped_recipes_iteration_fits_the_shard_bound(name: str) -> None:
    """At 300 decisions a match (the 2-player recipe averages 210), one iteration's shard stays under the bound."""
    from train.run_dir import MAX_SHARD_BYTES

    config = load(ExitConfig, ROOT / "configs" / f"{name}.yaml")
    assert config.matches * 300 * SHARD_ROW_BYTES < MAX_SHARD_BYTES


def test_the_learner_runs_the_pipelines_iterations_in_memory(two_iterations: Path, tmp_path: Path) -> None:
    """train.exit.learner.train with the run's decisions as its budget: the same two iterations
    (the same network as the run's final.npz), one checkpoint at the end, no run folder."""
    from agents.policy_file import load_policy_file
    from train.exit.learner import train
    from train.meter import Budget
    from train.policies import NetworkPolicy

    decisions = json.loads((two_iterations / "state.json").read_text())["decisions"]
    calls: list[tuple[int, NetworkPolicy]] = []
    final = train(tiny(tmp_path / "learner", "iterations=2"), Budget(env_steps=decisions),
                  lambda steps, seconds, policy: calls.append((steps, policy)), provenance={"by": "a test"})
    assert calls == [(decisions, final)] and final.network.weights.provenance == {"by": "a test", "decisions": decisions}
    run = load_policy_file(two_iterations / "final.npz")
    for ours, theirs in zip((*final.network.weights.policy, *final.network.weights.value),
                            (*run.policy, *run.value), strict=True):
        for left, right in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(left, right)
    assert not (tmp_path / "learner").exists()


def test_the_pipeline_runs_the_learners_loop(two_iterations: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run_exit's iterations are train.exit.learner.learn's: called once, over the iterations to
    run, and the network it returns is the run's final.npz."""
    from train.exit import learner
    from train.exit import run as exit_module

    calls = []

    def spy(*args: object, **kwargs: object) -> object:
        calls.append((kwargs["iterations"], learner.learn(*args, **kwargs)))  # type: ignore[arg-type]
        return calls[-1][1]

    monkeypatch.setattr(exit_module, "learn", spy)
    output = tmp_path / "spied"
    run_exit(tiny(output, "iterations=2"))
    assert len(calls) == 1 and calls[0][0] == range(1, 3)
    ours, theirs = calls[0][1].network.weights, load_policy_file(output / "final.npz")
    for left, right in zip((*ours.policy, *ours.value), (*theirs.policy, *theirs.value), strict=True):
        for a, b in zip(left, right, strict=True):
            np.testing.assert_array_equal(a, b)
    same_run(output, two_iterations)
