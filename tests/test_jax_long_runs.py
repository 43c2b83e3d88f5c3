"""Long runs of PPO in JAX: the pool of past selves (``opponents: [past]``), a run that continues
from its checkpoint as if never stopped, a start from an existing policy file (``init``), and a
critic that learns alone first (``critic_warmup``).

Each trainer here is tiny (micro, a few games, one hidden layer of 8) and compiled at XLA's quick
level: compiling is most of this file's time.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")

import jax
import optax

from agents.policy_file import load_policy_file
from train import cli
from train.config import ConfigError, build
from train.jax_ppo import trainer as jax_trainer
from train.jax_ppo.config import JaxPPOConfig

ROOT = Path(__file__).resolve().parents[1]
FAST_COMPILE = {"xla_backend_optimization_level": 0}
SMALL = {
    "variant": "micro", "num_envs": 8, "num_steps": 8, "updates": 4, "chunk": 1, "num_minibatches": 1,
    "update_epochs": 1, "hidden": [8], "seed": 5,
}  # fmt: skip


def _leaves(tree: object) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in jax.tree.leaves(tree)]


def test_the_past_pool_keeps_copies_of_the_policy_and_each_hand_draws_one() -> None:
    config = build(JaxPPOConfig, {**SMALL, "opponents": ["past", "self"], "past_pool": 2, "past_every": 1})
    trainer = jax_trainer.Trainer(config)
    runner = trainer.init(jax.random.key(0))
    assert int(runner.past.held) == 1 and int(runner.past.taken) == 1  # the initial policy, in every row
    for row in (0, 1):
        assert all(np.array_equal(pool[row], leaf) for pool, leaf in zip(_leaves(runner.past.params), _leaves(runner.params)))
    compiled = trainer.compile(runner, FAST_COMPILE)
    after = []
    for _ in range(3):
        runner, _metrics = compiled(runner)
        after.append(_leaves(runner.params))
    # One copy an update into row taken % 2: update 1 into row 1, 2 into row 0, 3 into row 1.
    assert int(runner.past.held) == 2 and int(runner.past.taken) == 4
    pool = _leaves(runner.past.params)
    assert all(np.array_equal(rows[1], leaf) for rows, leaf in zip(pool, after[2]))
    assert all(np.array_equal(rows[0], leaf) for rows, leaf in zip(pool, after[1]))
    choice = np.asarray(runner.past.choice)
    assert np.all((choice >= 0) & (choice < 2))
    assert trainer.past_slots.tolist() == [0, 2, 4, 6]  # round robin over [past, self]


def test_a_run_continued_from_its_checkpoint_ends_as_one_never_stopped(tmp_path: Path) -> None:
    config = build(JaxPPOConfig, {**SMALL, "opponents": ["past", "heaviest"], "past_every": 2, "critic": "central",
                                  "magnet_coef": 0.1})
    straight = jax_trainer.train(config, progress=False, compiler_options=FAST_COMPILE)
    path = tmp_path / "state.npz"

    last = tmp_path / "last.npz"

    def save_at_two(runner: object, progress: jax_trainer.Progress) -> None:
        if progress.updates == 2:
            jax_trainer.save_state(path, runner, progress)
        if progress.updates == config.updates:  # saved, then stopped before the run's end was written
            jax_trainer.save_state(last, runner, progress)

    jax_trainer.train(config, progress=False, compiler_options=FAST_COMPILE, trainer=straight.trainer, save=save_at_two)
    template = straight.trainer.init(jax.random.key(config.seed))
    runner, progress, _ = jax_trainer.load_state(path, template)
    assert progress.updates == 2 and progress.cpu_seconds > 0
    continued = jax_trainer.train(config, progress=False, trainer=straight.trainer, start=(runner, progress))
    assert all(np.array_equal(a, b) for a, b in zip(_leaves(continued.params), _leaves(straight.params)))
    assert len(continued.metrics.loss) == 2  # only the updates it ran
    assert continued.cpu_seconds >= progress.cpu_seconds
    # From a checkpoint of the last update nothing is left to run: the same parameters, no metrics.
    ended = jax_trainer.train(config, progress=False, trainer=straight.trainer, start=jax_trainer.load_state(last, template)[:2])
    assert all(np.array_equal(a, b) for a, b in zip(_leaves(ended.params), _leaves(straight.params)))
    assert len(ended.metrics.loss) == 0 and ended.metrics.hands.shape == (0, 4)


def _command(run: Path, *extra: str) -> list[str]:
    return [
        "--config", str(ROOT / "configs" / "jax_ppo_quick.yaml"), "variant=micro", "num_envs=8", "num_steps=8",
        "updates=4", "chunk=1", "hidden=[8]", "opponents=[past, self]", "past_every=1", "eval.every=1",
        "eval.matches=2", "eval.opponents=[heaviest]", "final_eval.matches=2", "final_eval.opponents=[random]",
        "progress_bar=false", f"output_dir={run}", *extra,
    ]  # fmt: skip


def test_draw_train_continues_an_interrupted_run_when_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    straight = tmp_path / "straight"
    assert cli.main(_command(straight)) == 0
    run = tmp_path / "run"
    save = jax_trainer.save_state
    saved = []

    def interrupted(path: Path, runner: object, progress: jax_trainer.Progress, extra: object = None) -> None:
        save(path, runner, progress, extra)  # type: ignore[arg-type]
        saved.append(progress.updates)
        if progress.updates == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(jax_trainer, "save_state", interrupted)
    assert cli.main(_command(run)) == 130
    assert saved == [1, 2] and not (run / "summary.json").exists()
    monkeypatch.setattr(jax_trainer, "save_state", save)
    assert cli.main(_command(run)) == 0
    assert "continuing" not in capsys.readouterr().out  # progress_bar: false prints no progress
    for name in ("final.npz", "checkpoints/update_000003.npz"):
        mine, theirs = load_policy_file(run / name), load_policy_file(straight / name)
        assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(mine.policy, theirs.policy))
    summary = json.loads((run / "summary.json").read_text())
    assert [row["timesteps"] for row in summary["eval"]] == [64, 128, 192, 256]  # each evaluation once
    other = json.loads((straight / "summary.json").read_text())

    def played(rows: list[dict]) -> list[dict]:  # the seconds differ from run to run, the games do not
        return [{key: value for key, value in row.items() if key != "train_seconds"} for row in rows]

    assert played(summary["eval"]) == played(other["eval"])
    assert played(summary["final_eval"]) == played(other["final_eval"])


@pytest.mark.parametrize(
    "damage, named",
    [
        (lambda path: path.write_bytes(b"not a zip"), "state.npz"),
        (lambda path: np.savez(path, leaf_0000=np.zeros(3)), "arrays must be the runner's"),
        (lambda path: path.write_bytes(path.read_bytes()[:200]), "state.npz"),
    ],
    ids=["garbage", "other-arrays", "cut-short"],
)
def test_a_damaged_checkpoint_is_refused_in_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], damage: object, named: str
) -> None:
    run = tmp_path / "run"
    save = jax_trainer.save_state

    def interrupted(path: Path, runner: object, progress: jax_trainer.Progress, extra: object = None) -> None:
        save(path, runner, progress, extra)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr(jax_trainer, "save_state", interrupted)
    assert cli.main(_command(run)) == 130
    monkeypatch.setattr(jax_trainer, "save_state", save)
    damage(run / "state.npz")  # type: ignore[operator]
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        cli.main(_command(run))
    err = capsys.readouterr().err.strip()
    assert stopped.value.code == 2 and named in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_init_starts_from_a_policy_files_network_and_refuses_one_of_other_shapes(tmp_path: Path) -> None:
    run = tmp_path / "first"
    assert cli.main(_command(run, "updates=1")) == 0
    start = run / "final.npz"
    config = build(JaxPPOConfig, {**SMALL, "init": str(start)})
    trainer = jax_trainer.Trainer(config)
    from train.jax_ppo.policy import policy_weights

    params = trainer.init(jax.random.key(1)).params
    weights = policy_weights(trainer.graphdef, params, "relu", trainer.game, {})
    written = load_policy_file(start)
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(weights.policy, written.policy))
    for change, named in (({"hidden": [16]}, "layer widths"), ({"variant": "mini"}, "table and variant"),
                          ({"obs_type": "information_state"}, "what it reads")):
        with pytest.raises(ConfigError, match=named):
            build(JaxPPOConfig, {**SMALL, "init": str(start), **change})
    with pytest.raises(ConfigError, match="init"):
        build(JaxPPOConfig, {**SMALL, "init": str(tmp_path / "missing.npz")})


def test_critic_warmup_holds_the_policy_while_the_value_network_learns_then_trains_both() -> None:
    config = build(JaxPPOConfig, {**SMALL, "critic": "central", "critic_warmup": 2, "magnet_coef": 0.1,
                                  "opponents": ["self"]})
    trainer = jax_trainer.Trainer(config)
    runner = trainer.init(jax.random.key(0))
    compiled = trainer.compile(runner, FAST_COMPILE)
    start = {part: _leaves(runner.params[part]) for part in ("policy", "value")}
    seen = []
    for _ in range(3):
        runner, _metrics = compiled(runner)
        seen.append({part: _leaves(runner.params[part]) for part in ("policy", "value")})

    def same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
        return all(np.array_equal(x, y) for x, y in zip(a, b))

    assert same(seen[0]["policy"], start["policy"]) and same(seen[1]["policy"], start["policy"])
    assert not same(seen[0]["value"], start["value"]) and not same(seen[1]["value"], seen[0]["value"])
    assert not same(seen[2]["policy"], start["policy"])  # the third update moves the policy
    # Adam starts again when the policy does (one step since), the learning rate's schedule does not.
    kinds = (optax.ScaleByAdamState, optax.ScaleByScheduleState)
    states = jax.tree.leaves(runner.opt_state, is_leaf=lambda node: isinstance(node, kinds))
    adam = [state for state in states if isinstance(state, optax.ScaleByAdamState)]
    schedule = [state for state in states if isinstance(state, optax.ScaleByScheduleState)]
    assert len(adam) == 1 and int(adam[0].count) == 1
    assert len(schedule) == 1 and int(schedule[0].count) == 3
    # So its first step is Adam's first step: no larger than the learning rate.
    largest = max(float(np.abs(a - b).max()) for a, b in zip(seen[2]["policy"], start["policy"]))
    assert largest <= config.learning_rate * 1.01


def test_critic_warmup_must_leave_updates_to_the_policy() -> None:
    with pytest.raises(ConfigError, match="critic_warmup"):
        build(JaxPPOConfig, {**SMALL, "critic_warmup": 4})
