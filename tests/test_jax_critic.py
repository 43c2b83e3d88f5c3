"""PPO in JAX with a central critic (``critic: central``): the value network reads the full state
(:meth:`draw_env.jax.DrawDominoes.full_state`) while the policy reads the acting player's own view,
and the policy file holds the policy alone.

Only one test compiles a training run (micro, 2 updates of 8 games x 8 actions, XLA's quick
compilation); the others run the networks eagerly on a handful of positions.
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
from flax import nnx

import agents
import draw_env
from agents.policy_file import PolicyWeights, load_policy_file, save_policy_file
from draw_env.jax import DrawDominoes
from draw_env.rules import DrawGame
from train import cli
from train.config import ConfigError, build, load
from train.exploitability_curve import ExploitabilityCurve
from train.jax_ppo.config import JaxPPOConfig
from train.jax_ppo.policy import MASKED_LOGIT, encode, policy_weights
from train.jax_ppo.trainer import Trainer
from train.run_dir import MARKER

ROOT = Path(__file__).resolve().parents[1]
#: Tables of each size, named variants and the seeds' game, both kinds of input.
TABLES = [
    {"num_players": 2, "variant": "mini"},
    {"num_players": 3, "obs_type": "information_state"},
    {"num_players": 4, "variant": "micro"},
]
TABLE_IDS = ["mini", "three-seeds-information", "four-micro"]
SMALL = {"num_envs": 4, "num_steps": 4, "updates": 1, "chunk": 1, "num_minibatches": 1, "hidden": [16]}


def _deal(game: DrawGame, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random deal of ``game``: hands ``(n, hand_size)`` and the boneyard in drawing order."""
    tiles = np.random.default_rng(seed).permutation(game.num_tiles).astype(np.int32)
    cut = game.num_players * game.hand_size
    return tiles[:cut].reshape(game.num_players, game.hand_size), tiles[cut:]


def _hidden_twin(hands: np.ndarray, boneyard: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same deal as seat 0 sees it: another seat's tile swapped with a boneyard tile, and the
    boneyard drawn in reverse order."""
    hands, boneyard = hands.copy(), boneyard.copy()
    hands[-1, 0], boneyard[0] = boneyard[0], hands[-1, 0]
    return hands, boneyard[::-1].copy()


def _parameters(trainer: Trainer) -> nnx.State:
    """A fresh network of ``trainer``'s (what :meth:`Trainer.init` draws, without its games and optimizer)."""
    return nnx.split(trainer._network(nnx.Rngs(0)))[1]


def _start(env: DrawDominoes, deals: list[tuple[np.ndarray, np.ndarray]]):
    """The deals as one batch of states, seat 0 to lead."""
    states = [env.init_deal(hands, boneyard, 0) for hands, boneyard in deals]
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


# ---------------------------------------------------------------------------- the full state


@pytest.mark.parametrize("table", [*TABLES, {"num_players": 4, "max_pip": 7, "hand_size": 5, "protected": 1}],
                         ids=[*TABLE_IDS, "four-double-seven"])  # the last: masks of two words
def test_the_full_state_is_every_hand_then_the_boneyard_in_drawing_order(table: dict) -> None:
    env = DrawDominoes(**{key: value for key, value in table.items() if key != "obs_type"})
    game, n = env.game, env.num_players
    T = game.num_tiles
    hands, boneyard = _deal(game, 5)
    state = env.init_deal(hands, boneyard, 0)
    assert env.full_state_shape == ((n + 1) * T,)
    for seat in range(n):
        full = np.asarray(env.full_state(state, seat))
        expected = np.zeros((n + 1, T), np.float32)
        for row in range(n):
            expected[row, hands[(seat + row) % n]] = 1  # the seat's own hand first, then in turn order
        expected[n, boneyard] = (T - np.arange(len(boneyard))) / T  # 1: the next tile drawn
        np.testing.assert_allclose(full, expected.reshape(-1), rtol=1e-6)
    # A seat that is no seat: a ValueError for a host value, all zeros for a JAX array.
    with pytest.raises(ValueError, match="player must be a seat"):
        env.full_state(state, n)
    assert not np.asarray(env.full_state(state, jnp.int32(n))).any()


def test_a_draw_moves_the_tile_from_the_boneyard_to_the_hand() -> None:
    env = DrawDominoes(2, variant="mini")
    T = env.game.num_tiles
    # Seat 0 holds nothing that fits the 3-3 seat 1 leads with: it must draw.
    hands = np.array([[0, 1, 2], [9, 4, 5]], np.int32)  # mini's tiles: 0-0, 0-1, 0-2, ..., 3-3 is 9
    boneyard = np.array([3, 6, 7, 8], np.int32)
    state = env.step(env.init_deal(hands, boneyard, 1), 2 * 9)
    assert bool(state.legal_action_mask[env.game.draw_action])
    state = env.step(state, env.game.draw_action)
    full = np.asarray(env.full_state(state, 0)).reshape(3, T)
    assert full[0, 3] == 1 and full[2, 3] == 0
    np.testing.assert_allclose(full[2, [6, 7, 8]], [1, (T - 1) / T, (T - 2) / T], rtol=1e-6)


# ---------------------------------------------------------------------------- the policy's inputs


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
def test_the_policy_never_reads_hidden_tiles(table: dict) -> None:
    """Two deals that differ only in another seat's hand and the boneyard's order: the policy's
    inputs and action probabilities are the same, the central critic's inputs and values are not."""
    trainer = Trainer(JaxPPOConfig(**table, **SMALL, critic="central"))
    params = _parameters(trainer)
    deal = _deal(trainer.game, 1)
    games = _start(trainer.env, [deal, _hidden_twin(*deal)])
    inputs, state = trainer.views(games, games.observation, games.legal_action_mask, games.current_player)
    np.testing.assert_array_equal(np.asarray(inputs[0]), np.asarray(inputs[1]))
    assert state is not None and state.shape == (2, trainer.state_size)
    assert not np.array_equal(np.asarray(state[0]), np.asarray(state[1]))
    logits, values = trainer.apply(params, inputs, state)
    probabilities = jax.nn.softmax(jnp.where(games.legal_action_mask, logits, MASKED_LOGIT))
    np.testing.assert_array_equal(np.asarray(probabilities[0]), np.asarray(probabilities[1]))
    assert float(values[0]) != float(values[1])
    # With the player's own critic there is no full state, and the value cannot tell them apart either.
    own = Trainer(JaxPPOConfig(**table, **SMALL))
    inputs, state = own.views(games, games.observation, games.legal_action_mask, games.current_player)
    assert state is None
    values = own.apply(_parameters(own), inputs)[1]
    assert float(values[0]) == float(values[1])


# ---------------------------------------------------------------------------- the config


def test_the_critic_key_round_trips_and_is_checked() -> None:
    config = load(JaxPPOConfig, None, ["critic=central", "variant=mini", "magnet_coef=0.1", "clip_coef=0.1"])
    assert (config.critic, config.training()["critic"]) == ("central", "central")
    assert build(JaxPPOConfig, json.loads(json.dumps(config.to_dict()))) == config
    assert JaxPPOConfig().critic == "own"
    with pytest.raises(ConfigError, match="^config key 'critic'"):
        load(JaxPPOConfig, None, ["critic=perfect"])


# ---------------------------------------------------------------------------- the policy file


@pytest.mark.parametrize("table", TABLES[:2], ids=TABLE_IDS[:2])
def test_the_policy_file_holds_the_policy_alone_with_the_same_shapes(table: dict, tmp_path: Path) -> None:
    central = Trainer(JaxPPOConfig(**table, **SMALL, critic="central"))
    own = Trainer(JaxPPOConfig(**table, **SMALL))
    game, obs_type = central.game, central.config.obs_type
    params = _parameters(central)
    written = policy_weights(central.graphdef, params, "relu", game, {}, obs_type, central.config.value_unit)
    usual = policy_weights(own.graphdef, _parameters(own), "relu", game, {}, obs_type, 20.0)
    assert written.value is None and written.value_unit is None and usual.value is not None
    assert [tuple(a.shape for a in layer) for layer in written.policy] == [
        tuple(a.shape for a in layer) for layer in usual.policy
    ]
    # The same key draws the same policy network with either critic: both start from the same play.
    for ours, theirs in zip(written.policy, usual.policy, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))
    path = save_policy_file(written, tmp_path / "central.npz")
    record = json.loads(path.with_suffix(".json").read_text())
    assert set(record["networks"]) == {"policy"}
    assert load_policy_file(path).value is None
    # It plays through the usual agent path, as the trained policy network: the same logits.
    player = agents.make("ppo", path=str(path))
    env = draw_env.env(num_players=game.num_players, obs_type=obs_type, **game.variant)
    env.reset(seed=0)
    observation = env.last()[0]
    mask = observation["action_mask"] != 0
    inputs = encode(jnp.asarray(observation["observation"])[None], jnp.asarray(mask)[None], game, obs_type)
    no_state = jnp.zeros((1, central.state_size), jnp.float32)  # the logits never read it
    logits = np.asarray(central.apply(params, inputs, no_state)[0])
    policy = player.policy_for(game.num_players)
    np.testing.assert_allclose(policy.logits_batch(np.asarray(inputs)), logits, rtol=1e-4, atol=1e-5)
    action = player.act(observation)
    assert mask[action] and action == int(np.argmax(np.where(mask, logits[0], -np.inf)))


# ---------------------------------------------------------------------------- a run


def test_draw_train_with_a_central_critic_runs_checkpoints_and_reruns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    measured: list[int] = []
    measure = ExploitabilityCurve.measure

    def counted(self: ExploitabilityCurve, weights: PolicyWeights, steps: int) -> object:
        assert weights.value is None  # the policy alone is measured
        measured.append(steps)
        return measure(self, weights, steps)

    monkeypatch.setattr(ExploitabilityCurve, "measure", counted)
    run = tmp_path / "run"
    command = [
        "--config", str(ROOT / "configs" / "jax_ppo_quick.yaml"), "variant=micro", "critic=central",
        "num_envs=8", "num_steps=8", "updates=2", "chunk=1", "hidden=[8]", "opponents=[self, heaviest]",
        "magnet_coef=0.1", "magnet=moving_average", "eval.every=1", "eval.matches=2", "final_eval.matches=2",
        "final_eval.opponents=[random]", "exploitability_every=64", "progress_bar=false", f"output_dir={run}",
    ]  # fmt: skip
    assert cli.main(command) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"policy written to {run / 'final.npz'}"
    assert json.loads((run / "config.json").read_text())["critic"] == "central"
    summary = json.loads((run / "summary.json").read_text())
    assert [row["timesteps"] for row in summary["eval"]] == [64, 128]
    assert measured == [64, 128]  # each point measured once, the last one too
    assert summary["exploitability"]["measures"] == 2
    own = Trainer(JaxPPOConfig(**{**SMALL, "hidden": [8]}, variant="micro"))  # the same network, its own critic
    usual = policy_weights(own.graphdef, _parameters(own), "relu", own.game, {})
    for name in ("checkpoints/update_000001.npz", "checkpoints/update_000002.npz", "final.npz"):
        weights = load_policy_file(run / name)
        assert weights.value is None and weights.variant == DrawGame(2, 2, 1, 2).variant, name
        assert [layer[0].shape for layer in weights.policy] == [layer[0].shape for layer in usual.policy]
    # The finished run is recognised when rerun; the same folder with the other critic is another run.
    assert cli.main(command) == 0
    assert f"{run} is complete" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        cli.main([*command, "critic=own"])
    assert stopped.value.code == 2 and "critic" in capsys.readouterr().err
    assert json.loads((run / MARKER).read_text())["pipeline"] == "jax_ppo"
