"""PPO in JAX (train/jax_ppo/): trains end to end, exports a policy file that plays, repeats by seed;
``examples/jax_ppo.py`` runs it from flags, ``draw-train`` as the pipeline ``jax_ppo``.

One tiny training run (16 games x 16 actions, 2 updates) is compiled once for the module and
reused: compiling the engine and the update is most of this file's time.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")

import jax

import agents
import draw_env
from agents.baselines import HeaviestAgent
from agents.policy_file import load_policy_file
from agents.policy_network import NumpyPolicy
from draw_env.features import encode_batch, feature_size
from draw_env.rules import DrawGame
from tests.scripts import load_script
from train import cli
from train.jax_ppo import trainer as jax_trainer
from train.provenance import source
from train.run_dir import MARKER, run_files
from train.runs import RUNS

ROOT = Path(__file__).resolve().parents[1]
#: Compiles several times faster than XLA's default level, runs slower: right for 2 updates.
FAST_COMPILE = {"xla_backend_optimization_level": 0}
TINY = [
    "--num-envs", "16", "--num-steps", "16", "--updates", "2", "--chunk", "2", "--update-epochs", "1",
    "--num-minibatches", "2", "--hidden", "16", "--seed", "3",
]  # fmt: skip


def _example():
    return load_script("examples/jax_ppo.py", "jax_ppo_example")


@pytest.fixture(scope="module")
def example():
    return _example()


@pytest.fixture(scope="module")
def trained(example, tmp_path_factory: pytest.TempPathFactory):
    """The command run end to end (progress, summary, export), and the path it exported to."""
    path = tmp_path_factory.mktemp("jax_ppo") / "policy.npz"
    result = example.main([*TINY, "--output", str(path)], compiler_options=FAST_COMPILE)
    return result, path


#: The benchmark's small variants (micro, mini) and a set of two mask words, 0 protected tiles.
VARIANTS = [DrawGame(2, 2, 1, 2), DrawGame(2, 3, 3, 3), DrawGame(3, 8, 4, 0)]


def _random_observations(num_players: int, hands: int, seed: int, game: DrawGame | None = None) -> list[dict[str, np.ndarray]]:
    """Every acting player's observation in ``hands`` hands of uniformly random legal play (of ``game``'s variant)."""
    rng = np.random.default_rng(seed)
    env = draw_env.env(num_players=num_players, **({} if game is None else game.variant))
    observations = []
    for hand in range(hands):
        env.reset(seed=seed + hand)
        for _ in env.agent_iter():
            observation, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            observations.append(observation)
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return observations


@pytest.mark.parametrize("num_players", [2, 4])
def test_jax_features_are_the_extended_encoding(example, num_players: int) -> None:
    observations = _random_observations(num_players, hands=3, seed=num_players)
    obs = np.stack([o["observation"] for o in observations])
    masks = np.stack([o["action_mask"] for o in observations])
    expected = encode_batch(obs, masks, "extended")
    got = np.asarray(example.encode(jax.numpy.asarray(obs), jax.numpy.asarray(masks != 0)))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("game", VARIANTS, ids=["micro", "mini", "double-eight"])
def test_jax_features_and_heaviest_follow_the_variant(example, game: DrawGame) -> None:
    observations = _random_observations(game.num_players, hands=4, seed=7, game=game)
    obs = np.stack([o["observation"] for o in observations])
    masks = np.stack([o["action_mask"] != 0 for o in observations])
    expected = encode_batch(obs, masks, "extended", game)
    got = np.asarray(example.encode(jax.numpy.asarray(obs), jax.numpy.asarray(masks), game))
    assert got.shape == expected.shape == (len(obs), feature_size("extended", game))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    heaviest = HeaviestAgent()
    assert np.asarray(example.heaviest_action(masks, game)).tolist() == [heaviest.act(o) for o in observations]


def test_jax_opponents_choose_as_the_agents(example) -> None:
    observations = _random_observations(2, hands=4, seed=11)
    masks = np.stack([o["action_mask"] != 0 for o in observations])
    heaviest = HeaviestAgent()
    assert np.asarray(example.heaviest_action(masks)).tolist() == [heaviest.act(o) for o in observations]
    draws = np.asarray(
        jax.vmap(example.random_action)(jax.random.split(jax.random.key(0), len(masks)), masks)
    )
    assert masks[np.arange(len(masks)), draws].all()
    several = masks.sum(1) > 1
    assert len(set(draws[several].tolist())) > 5  # it does choose, not always the first legal action


def test_training_runs_end_to_end_and_reports(example, trained) -> None:
    result, path = trained
    assert result.env_steps == 2 * 16 * 16
    assert result.metrics.loss.shape == (2,)
    for name in ("loss", "policy_loss", "value_loss", "entropy"):
        assert np.isfinite(getattr(result.metrics, name)).all(), name
    assert result.metrics.decisions.sum() > 0
    assert result.metrics.hands.sum() > 0  # 32 actions in each game end some hands
    assert result.steps_per_second > 0 and result.cpu_seconds > 0
    assert path.is_file() and path.with_suffix(".json").is_file()
    text = example.summary(result, path)
    for line in ("environment steps   512", "steps per second", "CPU time", "wall time"):
        assert line in text
    assert f'draw-eval "ppo:path={path}" heaviest --games 1000 --seed 0' in text


def test_export_matches_the_network_and_plays_legal_moves(example, trained) -> None:
    result, path = trained
    weights = load_policy_file(path)
    assert (weights.features, weights.num_players, weights.activation) == ("extended", 2, "relu")
    assert weights.provenance["env_steps"] == result.env_steps
    inputs = np.random.default_rng(0).random((5, 340), np.float32)
    logits, values = result.trainer.apply(result.params, jax.numpy.asarray(inputs))
    policy = NumpyPolicy(weights)
    np.testing.assert_allclose(policy.logits_batch(inputs), np.asarray(logits), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(policy.values_batch(inputs), np.asarray(values), rtol=1e-4, atol=1e-5)

    players = [agents.make("ppo", path=str(path)), agents.make("random", seed=0)]
    env = draw_env.env(num_players=2)
    moves = 0
    for hand in range(3):
        env.reset(seed=hand)
        for agent_name in env.agent_iter():
            observation, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            seat = int(agent_name.rsplit("_", 1)[1])
            action = players[seat].act(observation)
            assert observation["action_mask"][action] == 1
            moves += seat == 0
            env.step(action)
    assert moves > 5


def test_the_same_seed_gives_the_same_parameters(example, trained) -> None:
    result, _ = trained
    config = result.trainer.config
    again = example.train(config, progress=False, trainer=result.trainer)
    other = example.train(config.model_copy(update={"seed": 4}), progress=False, trainer=result.trainer)

    def leaves(run) -> list[np.ndarray]:
        return [np.asarray(leaf) for leaf in jax.tree.leaves(run.params)]

    assert all(np.array_equal(a, b) for a, b in zip(leaves(result), leaves(again), strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(leaves(result), leaves(other), strict=True))
    assert np.array_equal(result.metrics.loss, again.metrics.loss)
    assert math.isfinite(float(other.metrics.loss.sum()))


def test_bad_settings_are_refused(example) -> None:
    with pytest.raises(ValueError, match="opponents"):
        example.JaxPPOConfig(opponents=["ismcts"])
    with pytest.raises(ValueError, match="multiple of chunk"):
        example.JaxPPOConfig(updates=5, chunk=2)
    # The variant keys are the other pipelines' (train.learner_config.VariantSettings): a deal larger
    # than the set, and an evaluation opponent that plays only the seeds' game, are refused.
    with pytest.raises(ValueError, match="max_pip, hand_size, protected"):
        example.JaxPPOConfig(max_pip=2, hand_size=3)
    mini = {"max_pip": 3, "hand_size": 3, "protected": 3}
    with pytest.raises(ValueError, match="config key 'final_eval.opponents': agent 'ismcts_python' plays only"):
        example.JaxPPOConfig(**mini, final_eval={"opponents": ["heaviest", "ismcts_python"]})
    assert example.JaxPPOConfig(**mini).game() == DrawGame(2, 3, 3, 3)
    assert example.JaxPPOConfig(final_eval={"opponents": ["ismcts_python"]}).game().is_default
    with pytest.raises(SystemExit):
        example.main(["--output", "policy.zip"])


#: The pipeline's config of the same run as TINY (the settings the example's flags leave at their defaults too).
PIPELINE_TINY = [
    "num_envs=16", "num_steps=16", "updates=2", "chunk=2", "update_epochs=1", "num_minibatches=2", "hidden=[16]", "seed=3",
    "opponents=[heaviest, heaviest, random, self]", "learning_rate=0.001", "fast_compile=true",
    "eval.every=2", "eval.matches=2", "eval.opponents=[heaviest]",
    "final_eval.matches=2", "final_eval.opponents=[random]", "progress_bar=false",
]  # fmt: skip


def test_draw_train_runs_the_jax_ppo_pipeline_into_its_run_folder(
    example, trained, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result, exported = trained

    def compiled_already(settings: object) -> object:
        assert settings.training() == result.trainer.config.training()  # the same run: the example's trainer serves
        return result.trainer

    monkeypatch.setattr(jax_trainer, "Trainer", compiled_already)
    run = tmp_path / "run"
    command = ["--config", str(ROOT / "configs" / "jax_ppo_quick.yaml"), *PIPELINE_TINY, f"output_dir={run}"]
    assert cli.main(command) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"policy written to {run / 'final.npz'}"
    assert json.loads((run / MARKER).read_text())["pipeline"] == "jax_ppo"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["env_steps"] == 2 * 16 * 16 and [row["opponent"] for row in summary["final_eval"]] == ["random"]
    assert [row["timesteps"] for row in summary["eval"]] == [512]
    assert (run / "eval.csv").is_file() and (run / "checkpoints" / "update_000002.npz").is_file()
    run_files(run, RUNS["jax_ppo"])  # every file is one the pipeline writes (--overwrite removes them)
    final, same = load_policy_file(run / "final.npz"), load_policy_file(exported)
    assert final.provenance["trained_by"] == "draw-train (pipeline: jax_ppo)"
    assert final.provenance["source"] == source()  # the code that trained it: version, commit
    assert final.value_unit == 1 / 0.05 == same.value_unit  # zero-sum points per unit at reward_scale 0.05
    for ours, theirs in zip(final.policy + final.value, same.policy + same.value, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))  # the example's run, exactly
    # A finished run says so when rerun; another setting or --resume is one error line.
    assert cli.main(command) == 0
    assert f"{run} is complete" in capsys.readouterr().out
    for extra in (["seed=4"], ["--resume", "x.zip"]):
        with pytest.raises(SystemExit) as stopped:
            cli.main([*command, *extra])
        assert stopped.value.code == 2
        assert capsys.readouterr().err.strip().startswith("draw-train: error: ")
