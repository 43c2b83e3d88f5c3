"""The game tree's information-state vectors (:meth:`GameTree.information_states`): the AEC
environment's information state at every node checked along random paths, one vector for all the
nodes of one information state (nothing the seat cannot see enters it), and distinct vectors for
distinct information states (perfect recall), for both seats."""

from __future__ import annotations

import random

import numpy as np
import pytest

from draw_env.exact import game_tree
from draw_env.observation import information_layout, information_state
from draw_env.rules import DrawGame
from tests.information import game_of

#: micro, and a game small enough with drawing, passing and blocked hands.
GAMES = {"micro": game_of("micro"), "small": DrawGame(2, max_pip=2, hand_size=2, protected=1)}


@pytest.fixture(scope="module", params=list(GAMES))
def tree(request: pytest.FixtureRequest) -> game_tree.GameTree:
    return game_tree.build_tree(GAMES[request.param])


def _assert_one_per_information_state(tree: game_tree.GameTree) -> None:
    for seat in (0, 1):
        vectors = tree.information_states(seat)
        assert vectors.dtype == np.uint8 and vectors.shape == (tree.num_infosets(seat), information_layout(tree.game).size)
        distinct, _, _ = game_tree.distinct_rows(vectors)
        assert len(distinct) == tree.num_infosets(seat)


def test_distinct_information_states_have_distinct_vectors(tree: game_tree.GameTree) -> None:
    _assert_one_per_information_state(tree)


def test_every_node_of_an_information_state_gives_its_vector(tree: game_tree.GameTree) -> None:
    for seat in (0, 1):
        nodes = np.flatnonzero(tree.player == seat)
        np.testing.assert_array_equal(tree.information_states_at(seat, nodes),
                                      tree.information_states(seat)[tree.infoset[nodes]])
        some = np.arange(0, tree.num_infosets(seat), 7)
        np.testing.assert_array_equal(tree.information_states(seat, some), tree.information_states(seat)[some])


def test_random_paths_give_the_environments_information_state(tree: game_tree.GameTree) -> None:
    game = tree.game
    listed = game_tree.deals(game)
    rng = random.Random(0)
    for root in rng.sample(range(tree.num_deals), 150):
        opener, first, second = (int(x) for x in listed[root][:3])
        hands = [[t for t in range(game.num_tiles) if mask >> t & 1] for mask in (first, second)]
        drawable = [int(t) for t in listed[root][3:]]
        protected = [t for t in range(game.num_tiles) if not (first | second) >> t & 1 and t not in drawable]
        state = game.state_from_deal(hands, drawable + protected, opener)
        node = root
        while tree.player[node] >= 0:
            seat = int(tree.player[node])
            vector = tree.information_states_at(seat, np.array([node]))[0]
            np.testing.assert_array_equal(vector.astype(np.float32), information_state(state, seat))
            index = tree.infoset[node]
            actions = tree.actions[seat][tree.action_start[seat][index] : tree.action_start[seat][index + 1]]
            k = rng.randrange(len(actions))
            state.apply_action(int(actions[k]))
            node = tree.first_child[node] + k


def test_bad_rows_and_nodes_are_refused(tree: game_tree.GameTree) -> None:
    with pytest.raises(ValueError, match="rows must be information states of seat 0"):
        tree.information_states(0, [tree.num_infosets(0)])
    with pytest.raises(ValueError, match="nodes must be nodes where seat 1 acts"):
        tree.information_states_at(1, np.flatnonzero(tree.player == 0)[:3])


@pytest.mark.exhaustive  # builds mini's tree of 22 million nodes (about half a minute)
def test_distinct_information_states_of_mini_have_distinct_vectors() -> None:
    _assert_one_per_information_state(game_tree.build_tree(game_of("mini")))
