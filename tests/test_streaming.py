"""The streaming best response (:mod:`draw_env.exact.streaming`) against the stored tree's.

Both compute the same exact measures by different walks: the tree keeps every history
(:func:`draw_env.exact.game_tree.build_tree`), the streaming one only the information states, keyed its
own way. On small variants they must agree to 1e-9 for deterministic, stochastic and tabular
policies asked with either vector, and count the same information states, histories and
questions. OpenSpiel's cross-check is in ``tests/test_openspiel_exploitability.py``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import agents
from arena.exploitability import agent_probabilities, exploitability, streaming_exploitability
from draw_env.exact import game_tree, streaming
from draw_env.rules import DrawGame

MICRO = DrawGame(2, max_pip=2, hand_size=1)
#: Drawing, passing and blocked hands, and every information state asked with a choice.
SMALL = DrawGame(2, max_pip=2, hand_size=2, protected=1)
MINI = DrawGame(2, max_pip=3, hand_size=3, protected=3)


def tabular(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A table of stochastic policies: each vector's own distribution, drawn from its bytes."""
    out = np.zeros(masks.shape)
    for i, (row, mask) in enumerate(zip(observations, masks, strict=True)):
        weights = np.random.default_rng(list(row.astype(np.uint8))).random(mask.shape) * mask
        out[i] = weights / weights.sum()
    return out


def _probabilities(name: str):  # noqa: ANN202 - a ProbabilityFn
    return tabular if name == "tabular" else agent_probabilities(agents.make(name))


def _same(streamed, stored) -> None:  # noqa: ANN001
    for seat in (0, 1):
        assert streamed.best_response[seat] == pytest.approx(stored.best_response[seat], abs=1e-9)
    assert streamed.exploitability == pytest.approx(stored.exploitability, abs=1e-9)
    assert (streamed.info_states, streamed.nodes, streamed.deals, streamed.queries) == (
        stored.info_states, stored.nodes, stored.deals, stored.queries)


@pytest.mark.parametrize("game", [MICRO, SMALL], ids=["micro", "small"])
@pytest.mark.parametrize("obs_type", ["observation", "information_state"])
def test_the_streaming_best_response_equals_the_trees(game: DrawGame, obs_type: str) -> None:
    tree = game_tree.build_tree(game)
    halves = streaming.enumerate_states(game, (obs_type,))
    for name in ("random", "heaviest", "variety", "tabular"):
        stored = exploitability(tree, _probabilities(name), obs_type=obs_type)
        streamed = streaming_exploitability(halves, _probabilities(name), obs_type=obs_type)
        _same(streamed, stored)
        assert stored.nash_conv > 0.1 or name in ("heaviest", "variety")


def test_vectors_of_another_kind_are_written_by_one_more_walk() -> None:
    """States listed with observations answer for information states as if listed with them."""
    halves = streaming.enumerate_states(SMALL, ("observation",))
    listed = streaming.enumerate_states(SMALL, ("information_state",))
    streaming.shared_vectors(halves, "information_state")
    for half, other in zip(halves, listed, strict=True):
        added = half.add_vectors("information_state")
        assert np.array_equal(added.rows, other.vectors["information_state"].rows)
        for seat in (0, 1):
            assert np.array_equal(added.index[seat], other.vectors["information_state"].index[seat])
    # distinct information states have distinct vectors (but for the seats' mirrored ones)
    assert len(added.rows) > len(half.vectors["observation"].rows)


def test_the_states_estimate_is_exact_when_every_hand_is_walked() -> None:
    halves = streaming.enumerate_states(SMALL, ())
    exact = sum(half.num_states(seat) for half in halves for seat in (0, 1))
    assert streaming.estimate_states(SMALL, hands=10**6) == exact
    assert abs(streaming.estimate_states(SMALL) - exact) < 0.25 * exact


def test_a_game_beyond_the_memory_is_refused_with_its_estimate() -> None:
    with pytest.raises(ValueError, match=r"number about [\d.e+]+ and would take about .* GiB, more than"):
        streaming.check_memory(SMALL, max_bytes=1024)
    assert streaming.check_memory(SMALL, max_bytes=streaming.DEFAULT_MAX_BYTES) > 0
    with pytest.raises(ValueError, match="num_players must be 2"):
        streaming.check_memory(DrawGame(3, max_pip=3, hand_size=2), max_bytes=1024)
    with pytest.raises(ValueError, match="more than the"):
        streaming.enumerate_states(SMALL, max_bytes=1024)
    # the vectors of information states count beside the states
    states = streaming.estimate_states(SMALL) * streaming.STATE_BYTES
    assert streaming.check_memory(SMALL, max_bytes=states) > 0
    with pytest.raises(ValueError, match="more than the"):
        streaming.check_memory(SMALL, max_bytes=states, obs_types=("information_state",))


def test_policies_walked_together_are_measured_as_walked_alone() -> None:
    """One walk of K policies (what draw-exploit does for several agents) gives each its own
    values, whether the others prune where it does not (deterministic against random) or not."""
    halves = streaming.enumerate_states(SMALL, ("observation",))
    vectors = halves[0].vectors["observation"]
    answers = np.stack([
        np.asarray(_probabilities(name)(vectors.rows, vectors.masks), np.float64)
        for name in ("heaviest", "random", "tabular", "variety")
    ])
    together = streaming.best_responses(halves[0], vectors, answers)
    for policy, alone in zip(answers, together, strict=True):
        assert alone == pytest.approx(streaming.best_response_values(halves[0], vectors, policy), abs=1e-12)
    assert len({round(float(value), 9) for value in together[:, 0]}) == 4
    with pytest.raises(ValueError, match=r"answers must be \(K, "):
        streaming.best_responses(halves[0], vectors, answers[0])


def test_answers_of_the_wrong_shape_are_refused() -> None:
    half = streaming.enumerate_states(MICRO)[0]
    vectors = half.vectors["observation"]
    with pytest.raises(ValueError, match="answers must be"):
        streaming.best_response_values(half, vectors, np.zeros((len(vectors.rows) - 1, MICRO.num_actions)))
    with pytest.raises(ValueError, match="answers must be"):
        streaming.best_response_values(half, vectors, np.zeros((len(vectors.rows), 3)))


def test_draw_exploit_gives_the_same_lines_with_either_method(capsys: pytest.CaptureFixture[str]) -> None:
    from arena.exploit_cli import main

    flags = ["--max-pip", "2", "--hand-size", "2", "--protected", "1", "--quiet"]
    lines = {}
    for method in ("streaming", "tree"):
        assert main(["random", "heaviest", *flags, "--method", method]) == 0
        lines[method] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for streamed, stored in zip(lines["streaming"], lines["tree"], strict=True):
        assert streamed.keys() == stored.keys()
        for key in ("agent", "info_states", "nodes", "deals", "queries", "obs_type"):
            assert streamed[key] == stored[key]
        assert streamed["nash_conv"] == pytest.approx(stored["nash_conv"], abs=1e-9)
    with pytest.raises(SystemExit) as stop:
        main(["random", *flags, "--max-memory", "0.000001"])
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "information states" in error[0] and "GiB" in error[0]


@pytest.mark.exhaustive  # builds mini's tree of 22 million nodes beside the streaming walks (a minute or two of CPU)
def test_the_streaming_best_response_equals_the_trees_on_mini() -> None:
    tree = game_tree.build_tree(MINI)
    halves = streaming.enumerate_states(MINI)
    for name in ("random", "heaviest", "variety"):
        _same(streaming_exploitability(halves, _probabilities(name)), exploitability(tree, _probabilities(name)))


def test_both_tables_share_their_distinct_vectors() -> None:
    halves = streaming.enumerate_states(SMALL, ())
    alone = [half.add_vectors("observation") for half in halves]
    seen = [[(vectors.rows[vectors.index[seat]].copy(), vectors.masks[vectors.index[seat]].copy()) for seat in (0, 1)]
            for vectors in alone]
    shared = streaming.shared_vectors(halves, "observation")
    assert shared[0].rows is shared[1].rows and halves[1].vectors["observation"] is shared[1]
    assert len(np.unique(shared[0].rows, axis=0)) == len(shared[0].rows) < sum(len(v.rows) for v in alone)
    for vectors, states in zip(shared, seen, strict=True):
        for seat in (0, 1):  # every information state keeps its vector and its legal actions
            assert np.array_equal(vectors.rows[vectors.index[seat]], states[seat][0])
            assert np.array_equal(vectors.masks[vectors.index[seat]], states[seat][1])
