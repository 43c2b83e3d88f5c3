"""The batched baselines choose like their one-game versions, for every game of a batch, and give
the same probabilities, on every variant's set."""

from __future__ import annotations

import random

import numpy as np
import pytest

import agents
from agents.base import observe
from agents.batched import make_batched
from arena.exploitability import agent_probabilities
from draw_env.observation import information_state
from draw_env.rules import DrawGame, DrawState
from tests.positions import random_positions


def _batch(num_players: int, seed: int) -> tuple[list[dict[str, np.ndarray]], np.ndarray, np.ndarray]:
    observations = [observe(state, state.current) for state in random_positions(num_players, 30, seed)]
    vectors = np.stack([observation["observation"] for observation in observations])
    masks = np.stack([observation["action_mask"] for observation in observations])
    return observations, vectors, masks


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("name", ["heaviest", "variety"])
def test_deterministic_baselines_choose_exactly_as_one_game_agents(name: str, num_players: int) -> None:
    observations, vectors, masks = _batch(num_players, seed=num_players)
    single = agents.make(name)
    expected = [single.act(observation) for observation in observations]
    assert make_batched(name).act_batch(vectors, masks).tolist() == expected


@pytest.mark.parametrize("name", ["random", "random_forced"])
def test_random_baselines_pick_legal_actions_from_the_right_set(name: str) -> None:
    _, vectors, masks = _batch(3, seed=7)
    chosen = make_batched(name, seed=0).act_batch(vectors, masks)
    assert masks[np.arange(len(masks)), chosen].all()
    can_place = masks[:, :56].any(axis=1)
    voluntary_draws = (chosen == 56) & can_place
    if name == "random_forced":
        assert not voluntary_draws.any()
    else:
        assert voluntary_draws.any()  # the one-game random agent draws by choice too


def test_random_baseline_is_uniform_over_legal_actions() -> None:
    masks = np.zeros((20000, 58), np.int8)
    masks[:, [3, 10, 56]] = 1
    chosen = make_batched("random", seed=1).act_batch(np.zeros((20000, 258), np.float32), masks)
    counts = np.bincount(chosen, minlength=58)[[3, 10, 56]]
    assert counts.sum() == 20000 and np.all(np.abs(counts / 20000 - 1 / 3) < 0.02)


def test_same_seed_same_choices() -> None:
    _, vectors, masks = _batch(2, seed=3)
    first = make_batched("random", seed=5).act_batch(vectors, masks)
    assert np.array_equal(first, make_batched("random", seed=5).act_batch(vectors, masks))


def test_bad_input_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="name must be one of"):
        make_batched("ismcts")
    with pytest.raises(ValueError, match="masks allow no action in rows \\[1\\]"):
        masks = np.ones((2, 58), np.int8)
        masks[1] = 0
        make_batched("heaviest").act_batch(np.zeros((2, 258), np.float32), masks)
    with pytest.raises(ValueError, match="masks must have shape"):
        make_batched("variety").act_batch(np.zeros((2, 258), np.float32), np.ones((2, 57), np.int8))
    assert [name for name in agents.available() if agents.entry(name).batched is not None] == [
        "random", "random_forced", "heaviest", "variety", "network", "ppo"
    ]


# ---------------------------------------------------------------------------------------------
# Every variant's set, and the probabilities in batches

#: The seeds' game, every named variant, and the largest set (double-nine) with three seats.
GAMES = {
    "draw": DrawGame(2),
    **{name: DrawGame.named(name) for name in ("micro", "mini", "midi")},
    "double-nine": DrawGame(3, max_pip=9),
}


def _positions(game: DrawGame, rows: int, seed: int = 0) -> tuple[list[dict[str, np.ndarray]], list[DrawState]]:
    """The observations of the player to act along hands of random play, ``rows`` of them."""
    rng = random.Random(seed)
    observations: list[dict[str, np.ndarray]] = []
    states: list[DrawState] = []
    while len(observations) < rows:
        state = game.new_state(rng)
        while state.result is None and len(observations) < rows:
            observations.append(observe(state, state.current))
            states.append(state.clone())
            state.apply_action(rng.choice(state.legal_actions()))
    return observations, states


@pytest.mark.parametrize("variant", list(GAMES))
def test_batched_baselines_give_the_one_game_agents_probabilities_on_every_set(variant: str) -> None:
    observations, _ = _positions(GAMES[variant], 1500, seed=len(variant))
    vectors = np.stack([observation["observation"] for observation in observations])
    masks = np.stack([observation["action_mask"] for observation in observations])
    assert masks.shape[1] == GAMES[variant].num_actions and (masks.sum(axis=1) > 1).mean() > 0.3
    for name in ("random", "random_forced", "heaviest", "variety"):
        single = agents.make(name, seed=0)
        expected = np.stack([single.action_probabilities(observation) for observation in observations])
        batch = single.action_probabilities_batch(vectors, masks)  # type: ignore[attr-defined]
        assert batch.dtype == np.float64
        np.testing.assert_array_equal(batch, expected, err_msg=f"{name} on {variant}")
        chosen = make_batched(name, seed=0).act_batch(vectors, masks)
        assert expected[np.arange(len(chosen)), chosen].all(), f"{name} on {variant} chose outside its support"


def test_draw_exploits_probabilities_ask_the_batches_with_information_states(monkeypatch: pytest.MonkeyPatch) -> None:
    """``agent_probabilities`` asks the baselines in batches (never one observation at a time),
    handing them the observation an information state holds."""
    game = GAMES["micro"]
    observations, states = _positions(game, 400, seed=1)
    vectors = np.stack([information_state(state, state.current) for state in states]).astype(np.float32)
    masks = np.stack([observation["action_mask"] for observation in observations])
    assert vectors.shape[1] > observations[0]["observation"].shape[0]
    for name in ("random", "random_forced", "heaviest", "variety"):
        single = agents.make(name)
        assert agents.entry_of(single).batch_probabilities
        expected = np.stack([single.action_probabilities(observation) for observation in observations])
        monkeypatch.setattr(single, "action_probabilities", lambda observation: pytest.fail("asked one by one"))
        np.testing.assert_array_equal(agent_probabilities(single)(vectors, masks), expected, err_msg=name)


def test_bad_batches_of_a_variant_are_value_errors_naming_them() -> None:
    observations, _ = _positions(GAMES["mini"], 4)
    vectors = np.stack([observation["observation"] for observation in observations])
    masks = np.stack([observation["action_mask"] for observation in observations])
    with pytest.raises(ValueError, match=r"observations must have shape \(4, L\) with L at least"):
        make_batched("variety").act_batch(vectors[:, :-1], masks)
    with pytest.raises(ValueError, match=r"observations must have shape \(4, L\)"):
        make_batched("heaviest").action_probabilities_batch(vectors[:3], masks)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"masks must have shape \(N, A\) with A one of 14, 22, 32"):
        make_batched("random").act_batch(vectors, masks[:, :-1])


def test_an_agent_as_measured_plays_its_probabilities_and_asks_each_observation_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """:class:`agents.batched.AsMeasured`: a search plays the move of its search seeded from the
    observation (what its exact measure reads), asked once per observation; a sampling agent's
    moves follow its distribution."""
    from agents.batched import AsMeasured

    observations, vectors, masks = _batch(2, seed=11)
    search = agents.make("ismcts", simulations=20, seed=4)
    asked = []
    probabilities = search.action_probabilities
    monkeypatch.setattr(search, "action_probabilities", lambda observation: asked.append(1) or probabilities(observation))
    actor = AsMeasured(search, seed=0)
    first = actor.act_batch(vectors, masks)
    expected = [int(np.argmax(agents.make("ismcts", simulations=20, seed=4).action_probabilities(o))) for o in observations]
    assert first.tolist() == expected
    assert len(asked) == len(observations)
    assert actor.act_batch(vectors, masks).tolist() == expected and len(asked) == len(observations)  # remembered
    # Sampled: a uniformly random agent's moves over one position, many times, are its distribution.
    one = np.repeat(vectors[:1], 4000, axis=0), np.repeat(masks[:1], 4000, axis=0)
    chosen = AsMeasured(agents.make("random"), seed=1).act_batch(*one)
    legal = np.flatnonzero(masks[0])
    counts = np.bincount(chosen, minlength=masks.shape[1])
    assert set(np.flatnonzero(counts)) == set(legal.tolist())
    assert np.all(np.abs(counts[legal] / 4000 - 1 / len(legal)) < 0.05)
