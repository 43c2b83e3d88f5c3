"""Magnetic mirror descent in both PPO learners, and the exact exploitability measured while training.

Everything runs on ``micro`` (``DrawGame(2, max_pip=2, hand_size=1, protected=2)``): its tree has
a few thousand nodes.
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
import jax.numpy as jnp
import torch

from agents.policy_network import NetworkAgent
from arena.exploitability import agent_probabilities, exploitability
from draw_env.exact.game_tree import build_tree
from draw_env.rules import DrawGame
from train import cli
from train.jax_ppo.config import JaxPPOConfig
from train.jax_ppo.policy import MASKED_LOGIT
from train.jax_ppo.trainer import Trainer, Transition, magnet_kl
from train.learner_config import magnet_weight
from train.run_dir import run_files
from train.runs import RUNS
from train.sb3_adapter import MagneticPPO, new_model
from train.selfplay.config import TrainConfig
from train.selfplay.run import build_vec_env

ROOT = Path(__file__).resolve().parents[1]
MICRO = {"max_pip": 2, "hand_size": 1, "protected": 2}
TINY = {"num_envs": 16, "num_steps": 16, "updates": 2, "chunk": 2, "update_epochs": 1, "num_minibatches": 2, "hidden": [16],
        "obs_type": "information_state", "opponents": ["self"], **MICRO}
MAGNET = {"magnet_coef": 0.3, "magnet": "moving_average", "magnet_schedule": "sqrt", "magnet_rate": 0.1}


def _log_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """NumPy's masked log-softmax (illegal actions -inf)."""
    logits = np.where(mask, logits.astype(np.float64), -np.inf)
    top = logits.max(-1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))


def _kl(log_p: np.ndarray, log_q: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """KL(p || q) per row over the legal actions."""
    return np.where(mask, np.exp(log_p) * (np.where(mask, log_p, 0) - np.where(mask, log_q, 0)), 0).sum(-1)


def _batch(trainer: Trainer, rows: int, seed: int) -> tuple[Transition, jax.Array, jax.Array]:
    """A random minibatch of ``rows``: random inputs, legal masks (some of one action), decisions."""
    rng = np.random.default_rng(seed)
    actions = trainer.game.num_actions
    mask = rng.random((rows, actions)) < 0.5
    mask[np.arange(rows), rng.integers(0, actions, rows)] = True
    mask[:3] = False
    mask[:3, 0] = True  # rows of one legal action
    action = np.array([rng.choice(np.flatnonzero(row)) for row in mask], np.int32)
    batch = Transition(
        inputs=jnp.asarray(rng.normal(size=(rows, _input_size(trainer))), jnp.float32),
        mask=jnp.asarray(mask),
        action=jnp.asarray(action),
        log_prob=jnp.asarray(-rng.random(rows), jnp.float32),
        value=jnp.asarray(rng.normal(size=rows), jnp.float32),
        reward=jnp.zeros(rows, jnp.float32),
        done=jnp.zeros(rows, bool),
        decision=jnp.asarray(rng.random(rows) < 0.7),
    )
    return batch, jnp.asarray(rng.normal(size=rows), jnp.float32), jnp.asarray(rng.normal(size=rows), jnp.float32)


def _input_size(trainer: Trainer) -> int:
    from agents.inputs import input_size

    return input_size("extended", trainer.game, trainer.config.obs_type)


# ---------------------------------------------------------------------------- PPO in JAX


def test_jax_magnet_off_is_ppos_update() -> None:
    """With ``magnet_coef: 0`` the other magnet keys change nothing: the traced update is PPO's,
    operation for operation, and a zero weight leaves the loss and its gradient as they were."""
    plain = Trainer(JaxPPOConfig(**TINY))
    off = Trainer(JaxPPOConfig(**TINY, **{**MAGNET, "magnet_coef": 0.0}))
    runner = plain.init(jax.random.key(1))
    assert off.init(jax.random.key(1)).magnet is None
    assert str(jax.make_jaxpr(plain.update)(runner)) == str(jax.make_jaxpr(off.update)(runner))
    batch, advantages, targets = _batch(plain, 32, 0)
    grad = jax.value_and_grad(plain._loss, has_aux=True)
    (loss, _), grads = grad(runner.params, batch, advantages, targets)
    (zero, parts), zero_grads = grad(runner.params, batch, advantages, targets, (0.0, runner.params))
    assert float(zero) == float(loss) and float(parts[3]) == pytest.approx(0.0, abs=1e-6)
    for a, b in zip(jax.tree.leaves(grads), jax.tree.leaves(zero_grads), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("magnet", ["uniform", "moving_average"])
def test_jax_magnet_adds_the_kl_term(magnet: str) -> None:
    """The loss with a magnet is PPO's plus ``weight * mean over decisions of KL(policy || magnet)``,
    the KL over the legal actions computed here in NumPy."""
    trainer = Trainer(JaxPPOConfig(**TINY, **{**MAGNET, "magnet": magnet}))
    start = trainer.init(jax.random.key(2)).params
    leaves, tree = jax.tree.flatten(start)
    keys = jax.random.split(jax.random.key(3), len(leaves))
    # The policy away from its start (a new network is nearly uniform), the start as the magnet.
    params = jax.tree.unflatten(tree, [x + 0.3 * jax.random.normal(k, x.shape) for x, k in zip(leaves, keys)])
    magnet_params = start if magnet == "moving_average" else None
    batch, advantages, targets = _batch(trainer, 40, 1)
    base, _ = trainer._loss(params, batch, advantages, targets)
    with_magnet, parts = trainer._loss(params, batch, advantages, targets, (0.3, magnet_params))
    mask = np.asarray(batch.mask)
    log_p = _log_softmax(np.asarray(trainer.apply(params, batch.inputs)[0]), mask)
    if magnet_params is None:
        log_q = np.where(mask, -np.log(mask.sum(-1, keepdims=True)), -np.inf)
    else:
        log_q = _log_softmax(np.asarray(trainer.apply(start, batch.inputs)[0]), mask)
    decision = np.asarray(batch.decision, np.float64)
    expected = (decision * _kl(log_p, log_q, mask)).sum() / decision.sum()
    assert expected > 1e-3
    assert float(parts[3]) == pytest.approx(expected, rel=1e-4)
    assert float(with_magnet) - float(base) == pytest.approx(0.3 * expected, rel=1e-3, abs=1e-6)


def test_the_uniform_magnet_is_over_the_legal_actions_only() -> None:
    """A policy uniform over its legal actions is at KL 0 from the uniform magnet, whatever its
    illegal actions' logits, in both learners; a magnet uniform over all actions would not be."""
    rng = np.random.default_rng(4)
    mask = rng.random((6, 8)) < 0.5
    mask[:, 2] = True
    logits = np.where(mask, 1.5, rng.normal(size=mask.shape) * 5).astype(np.float32)
    log_probs = jax.nn.log_softmax(jnp.where(mask, logits, MASKED_LOGIT))
    np.testing.assert_allclose(np.asarray(magnet_kl(log_probs, jnp.asarray(mask), None)), 0.0, atol=1e-6)
    over_all = np.log(mask.shape[1] / mask.sum(-1))  # KL from the uniform over all 8 actions
    assert np.all(over_all > 0.1)
    skewed = np.where(mask, rng.normal(size=mask.shape), 0).astype(np.float32)
    log_skewed = jax.nn.log_softmax(jnp.where(mask, skewed, MASKED_LOGIT))
    expected = _kl(_log_softmax(skewed, mask), np.where(mask, -np.log(mask.sum(-1, keepdims=True)), -np.inf), mask)
    np.testing.assert_allclose(np.asarray(magnet_kl(log_skewed, jnp.asarray(mask), None)), expected, rtol=1e-5)


def test_magnet_schedules() -> None:
    assert magnet_weight(0.2, "constant", 7, 10) == 0.2
    assert magnet_weight(0.2, "linear", 5, 10) == pytest.approx(0.1)
    assert magnet_weight(0.2, "sqrt", 3, 10) == pytest.approx(0.1)


def test_jax_moving_magnet_trails_the_policy() -> None:
    """A run with a moving magnet trains (finite loss, a KL logged) and the magnet ends between
    where it started (the first policy) and the policy."""
    config = JaxPPOConfig(**TINY, **MAGNET)
    trainer = Trainer(config)
    runner = trainer.init(jax.random.key(5))
    start = jax.tree.leaves(runner.magnet.params)[0].copy()
    compiled = jax.jit(trainer.update).lower(runner).compile({"xla_backend_optimization_level": 0})  # compiles faster
    runner, metrics = compiled(runner)
    assert int(runner.magnet.update) == 1 and np.isfinite(float(metrics.loss)) and float(metrics.magnet_kl) >= 0
    magnet, policy = jax.tree.leaves(runner.magnet.params)[0], jax.tree.leaves(runner.params)[0]
    np.testing.assert_allclose(np.asarray(magnet), 0.9 * np.asarray(start) + 0.1 * np.asarray(policy), rtol=1e-5,
                               atol=1e-7)


# ---------------------------------------------------------------------------- MaskablePPO


def _selfplay_config(**ppo: object) -> TrainConfig:
    return TrainConfig(**MICRO, n_envs=2, obs_type="information_state", total_timesteps=64,
                       snapshot_every=64, checkpoint_every=64, eval={"every": 0},
                       ppo={"num_steps": 32, "minibatch_size": 16, "update_epochs": 2, "net_arch": [16], **ppo})


def _learned(config: TrainConfig, magnet: TrainConfig | None = None) -> tuple[str, dict[str, torch.Tensor]]:
    """The model's class and its parameters after one update (with ``magnet``'s magnet settings)."""
    venv = build_vec_env(config)
    try:
        model = new_model(venv, list(config.ppo.net_arch), config.ppo.activation, config.seed, config.ppo)
        if magnet is not None:
            model.configure_magnet(magnet.ppo)
        model.learn(total_timesteps=config.n_envs * config.ppo.num_steps)
    finally:
        venv.close()
    return type(model).__name__, model.policy.state_dict()


def test_sb3_magnet_off_is_maskableppos_update() -> None:
    """``magnet_coef: 0`` builds sb3's MaskablePPO itself; a MagneticPPO at coefficient 0 updates
    its parameters bit for bit as MaskablePPO does."""
    off = _selfplay_config(magnet="moving_average", magnet_schedule="sqrt")
    kind, plain = _learned(off)
    assert kind == "MaskablePPO"
    kind, magnetic = _learned(_selfplay_config(magnet_coef=0.5, magnet="moving_average"), magnet=off)
    assert kind == "MagneticPPO"
    assert plain.keys() == magnetic.keys()
    for name, tensor in magnetic.items():
        assert torch.equal(tensor, plain[name]), name


@pytest.mark.parametrize("magnet", ["uniform", "moving_average"])
def test_sb3_magnet_adds_the_kl_term(magnet: str) -> None:
    """Inside MagneticPPO's update the entropy sb3's loss reads is ``ent_coef * H - weight * KL``,
    the KL over the legal actions equal to NumPy's; the moving magnet then trails the policy."""
    config = _selfplay_config(magnet_coef=0.3, magnet=magnet, magnet_rate=0.5)
    venv = build_vec_env(config)
    try:
        model = new_model(venv, [16], "relu", config.seed, config.ppo)
        assert isinstance(model, MagneticPPO)
        torch.manual_seed(0)
        with torch.no_grad():  # the policy away from its start (the magnet); a new network is nearly uniform
            for parameter in [*model.policy.mlp_extractor.policy_net.parameters(), *model.policy.action_net.parameters()]:
                parameter.add_(0.5 * torch.randn_like(parameter))
        rng = np.random.default_rng(6)
        size = venv.observation_space.shape[0]
        obs = torch.as_tensor(rng.random((12, size)), dtype=torch.float32)
        mask = rng.random((12, venv.action_space.n)) < 0.5
        mask[:, 1] = True
        actions = torch.as_tensor([rng.choice(np.flatnonzero(row)) for row in mask])
        masks = torch.as_tensor(mask)
        _, _, entropy = model.policy.evaluate_actions(obs, actions, action_masks=masks)
        kls: list[float] = []
        with model._regularised(0.3, kls):
            _, _, regularised = model.policy.evaluate_actions(obs, actions, action_masks=masks)
            assert model.ent_coef == 1.0
        assert model.ent_coef == config.ppo.ent_coef and "evaluate_actions" not in vars(model.policy)
        with torch.no_grad():
            logits = model.policy.get_distribution(obs).distribution.logits.numpy()
            if model._magnet is None:
                log_q = np.where(mask, -np.log(mask.sum(-1, keepdims=True)), -np.inf)
            else:
                latent = model._magnet["latent"](obs)
                log_q = _log_softmax(model._magnet["logits"](latent).numpy(), mask)
        expected = _kl(_log_softmax(logits, mask), log_q, mask)
        assert expected.mean() > 1e-3
        np.testing.assert_allclose(
            (config.ppo.ent_coef * entropy - regularised).detach().numpy(), 0.3 * expected, rtol=1e-4, atol=1e-6
        )
        assert kls == [pytest.approx(float(expected.mean()), rel=1e-4)]
        model.learn(total_timesteps=64)  # an update with the KL term runs
    finally:
        venv.close()


# ---------------------------------------------------------------------------- exploitability while training


def test_jax_run_writes_the_exploitability_curve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run with ``exploitability_every`` writes the curve; its last point is draw-exploit's figure
    for the run's policy file, played sampling."""
    run = tmp_path / "run"
    keys = [f"{key}={json.dumps(value)}" for key, value in {**TINY, **MAGNET}.items()]
    command = ["--config", str(ROOT / "configs" / "jax_ppo_quick.yaml"), *keys, "updates=4",
               "exploitability_every=512", "eval.every=0", "final_eval.matches=2", "final_eval.opponents=[random]",
               "progress_bar=false", f"output_dir={run}"]
    assert cli.main(command) == 0
    curve = json.loads((run / "exploitability.json").read_text())
    assert [point["steps"] for point in curve] == [512, 1024]
    assert all(set(point) == {"steps", "cpu_seconds", "exploitability", "nash_conv", "measure_cpu_seconds"}
               for point in curve)
    assert (run / "exploitability.png").stat().st_size > 0
    run_files(run, RUNS["jax_ppo"])
    agent = NetworkAgent(run / "final.npz", deterministic=False)
    exact = exploitability(build_tree(DrawGame(2, **MICRO)), agent_probabilities(agent), obs_type="information_state")
    assert abs(curve[-1]["exploitability"] - exact.exploitability) <= 1e-9
    summary = json.loads((run / "summary.json").read_text())["exploitability"]
    assert summary["exploitability"] == curve[-1]["exploitability"] and summary["measures"] == 2


def test_selfplay_run_writes_the_exploitability_curve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from train.selfplay.run import train

    config = _selfplay_config(magnet_coef=0.1).model_copy(
        update={"exploitability_every": 64, "output_dir": str(tmp_path / "run"), "progress_bar": False,
                "final_eval": _selfplay_config().final_eval.model_copy(update={"matches": 2})}
    )
    summary = train(config)
    curve = json.loads((tmp_path / "run" / "exploitability.json").read_text())
    assert [point["steps"] for point in curve] == [64]
    agent = NetworkAgent(tmp_path / "run" / "final.npz", deterministic=False)
    exact = exploitability(build_tree(DrawGame(2, **MICRO)), agent_probabilities(agent), obs_type="information_state")
    assert abs(curve[-1]["exploitability"] - exact.exploitability) <= 1e-9
    assert summary["exploitability"]["measures"] == 1
    assert list((tmp_path / "run" / "tensorboard").rglob("events.out.tfevents.*"))
    # Resumed, the run keeps its magnet (MagneticPPO, configured) and continues its curve.
    configured: list[float] = []
    original = MagneticPPO.configure_magnet

    def configure(model: MagneticPPO, settings: object) -> None:
        configured.append(settings.magnet_coef)
        original(model, settings)

    monkeypatch.setattr(MagneticPPO, "configure_magnet", configure)
    longer = config.model_copy(update={"total_timesteps": 128})
    train(longer, resume=tmp_path / "run" / "final.zip")
    assert configured == [0.1]
    again = json.loads((tmp_path / "run" / "exploitability.json").read_text())
    assert [point["steps"] for point in again] == [64, 128] and again[0] == curve[0]
    assert again[1]["cpu_seconds"] >= again[0]["cpu_seconds"]


def test_exploitability_every_on_a_game_without_a_tree_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="exploitability_every"):
        JaxPPOConfig(num_players=3, exploitability_every=100)
    with pytest.raises(ValueError, match="exploitability_every"):
        TrainConfig(**MICRO, episode="match", reward="win_loss", exploitability_every=2048)
    with pytest.raises(ValueError, match="exploitability_every"):  # self-play: at least one rollout
        TrainConfig(**MICRO, n_envs=2, ppo={"num_steps": 32, "minibatch_size": 16}, exploitability_every=32)
    with pytest.raises(SystemExit) as stopped:
        cli.main(["--config", str(ROOT / "configs" / "jax_ppo_quick.yaml"), "num_players=3",
                  "exploitability_every=512"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "exploitability_every" in err
