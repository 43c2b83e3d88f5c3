"""The policies OpenSpiel's algorithms hand to the benchmark, and how they are measured and saved.

Every policy here acts on the project's observation vector (``draw_env.observation.layout``), the
same vector ``python_draw_dominoes``'s ``observation_tensor`` gives (both are written from one
declaration), so that ``arena.exploitability`` can ask it on the enumerated tree's observations:

- :class:`NfspPolicy`: NFSP's average network (ReLU layers on the ``"scaled"`` features, the
  observation over its bounds) as a :class:`train.policies.NetworkPolicy`, the softmax of
  its legal logits. On an exact game it saves as a table over the tree's observations
  (``tabular:path=...``), elsewhere as a policy file (``network:path=...,deterministic=false``).
- :class:`train.policies.TablePolicy`: distinct observations (uint8 rows) and their
  distributions, built by :class:`FlatTree` from a policy over OpenSpiel's perfect-recall
  information states (MMD, MCCFR).

An observation forgets part of the history (when the other seat drew, at which end a tile went),
and in a 2-player hand both seats share the same observations (the seat is not observed: the
opener is drawn at random). A policy over information states therefore becomes one table for
both seats: each observation's row averages the information states that show it, weighted by
how often the hand reaches them when both seats play the policy (the plain mean where none is
reached), as the exact solver's ``observation_table`` does.

:class:`SpielPolicy` turns any of them back into an OpenSpiel policy (asked with the state's
observation tensor), so that OpenSpiel's own ``exploitability`` measures the same function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

import draw_env.openspiel  # noqa: F401  (registers python_draw_dominoes)
from agents.policy_file import PolicyWeights
from agents.tabular import save_table
from draw_env.exact import game_tree
from draw_env.features import encode_batch
from draw_env.openspiel import SHORT_NAME
from draw_env.rules import DrawGame
from train.bench.protocol import BenchGame
from train.policies import Game, NetworkPolicy, TablePolicy

__all__ = ["FlatTree", "NfspPolicy", "SpielPolicy", "TablePolicy", "flat_tree", "load_spiel_game"]

#: ``(weight (out, in), bias (out,))`` float32, as a policy file holds them.
Layer = tuple[np.ndarray, np.ndarray]
#: Nodes of OpenSpiel's tree (chance nodes included) a :class:`FlatTree` may hold: micro's has
#: about 19 thousand; mini's about 23 million, beyond what Python objects per node allow.
MAX_FLAT_NODES = 300_000


def load_spiel_game(game: BenchGame) -> pyspiel.Game:
    """``python_draw_dominoes`` with ``game``'s players, episode and variant."""
    return pyspiel.load_game(SHORT_NAME, {"players": game.num_players, "episode": game.episode, **game.variant})


def feature_game(rules: DrawGame) -> DrawGame | None:
    """The ``game`` argument :func:`draw_env.features.encode_batch` takes (``None``: the seeds' set)."""
    return None if rules.is_default else rules


def scaled_features(observations: np.ndarray, rules: DrawGame) -> np.ndarray:
    """float32 ``(k, L)``: the networks' input, each entry of the observation over its bound."""
    masks = np.zeros((len(observations), rules.num_actions), np.int8)
    return encode_batch(np.asarray(observations, np.float32), masks, "scaled", feature_game(rules))


def exact_tree(rules: DrawGame) -> game_tree.GameTree:
    """The enumerated tree of a small 2-player variant (:func:`arena.exploitability.tree_for`:
    kept, saves and curves reuse it)."""
    from arena.exploitability import tree_for

    return tree_for(rules)


def tree_observations(rules: DrawGame) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct observation of the tree, both seats together, with its action mask:
    uint8 ``(K, L)`` and int8 ``(K, A)``."""
    tree = exact_tree(rules)
    merged = np.concatenate(tree.observations)
    masks = np.concatenate([tree.action_mask(0), tree.action_mask(1)])
    rows, first, _ = game_tree.distinct_rows(merged)
    return rows, masks[first]


def save_exact_table(policy: Any, path_stem: Path, game: Game, about: dict[str, Any]) -> str:
    """Write ``policy`` as a table over the tree's observations; the agent spec that plays it."""
    rows, masks = tree_observations(game.rules)
    probabilities = policy.action_probabilities_batch(rows.astype(np.float32), masks)
    path = save_table(path_stem.with_suffix(".npz"), game.rules, rows, probabilities, about)
    return f"tabular:path={path}"


class NfspPolicy(NetworkPolicy):
    """NFSP's average network as the benchmark's network policy (its softmax, sampling); on an
    exact game it saves as a table over the tree's observations, which ``draw-exploit`` measures
    exactly as the benchmark did."""

    def __init__(self, weights: PolicyWeights) -> None:
        super().__init__(weights)
        self.about = dict(weights.provenance)

    def save(self, path_stem: Path, game: Game) -> str:
        if game.exact:
            return save_exact_table(self, path_stem, game, self.about)
        return super().save(path_stem, game)


class SpielPolicy(policy_lib.Policy):
    """A benchmark policy as an OpenSpiel policy: asked with the state's observation tensor."""

    def __init__(self, game: pyspiel.Game, policy: Any) -> None:
        super().__init__(game, list(range(game.num_players())))
        self.policy = policy
        self.num_actions = game.num_distinct_actions()

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
        """The wrapped policy's probability of each legal action of ``player_id`` (default: the
        player to act) at ``state``, read from the state's observation tensor."""
        player = state.current_player() if player_id is None else player_id
        legal = state.legal_actions(player)
        mask = np.zeros((1, self.num_actions), np.int8)
        mask[0, legal] = 1
        observation = np.asarray(state.observation_tensor(player), np.float32)[None]
        row = self.policy.action_probabilities_batch(observation, mask)[0]
        return {int(action): float(row[action]) for action in legal}


#: ``(player, information state string, legal actions) -> probabilities`` (one per legal action).
InfostateFn = Callable[[int, str, list[int]], np.ndarray]


class FlatTree:
    """OpenSpiel's whole tree of a small game, flattened once: per node its parent, the action or
    chance probability that leads there, the seat to act, its information state string and the
    index of its observation among the tree's distinct observations.

    Raises:
        ValueError: if the tree has more than ``max_nodes`` nodes (named with the game).
    """

    def __init__(self, game: pyspiel.Game, max_nodes: int = MAX_FLAT_NODES) -> None:
        self.parent: list[int] = []
        self.edge: list[float] = []  # chance probability into the node (1 after a decision)
        self.action: list[int] = []  # the action into the node (-1 at the root)
        self.player: list[int] = []  # seat to act, -1 at chance and terminal nodes
        self.infostate: list[str] = []
        self.observation: list[int] = []
        self.legal: list[list[int]] = []
        rows: dict[bytes, int] = {}
        vectors: list[np.ndarray] = []
        masks: list[np.ndarray] = []
        stack: list[tuple[pyspiel.State, int, float, int]] = [(game.new_initial_state(), -1, 1.0, -1)]
        while stack:
            state, parent, edge, action = stack.pop()
            node = len(self.parent)
            if node >= max_nodes:
                raise ValueError(f"{game}: OpenSpiel's tree has more than {max_nodes} nodes, too many to enumerate here")
            self.parent.append(parent)
            self.edge.append(edge)
            self.action.append(action)
            if state.is_terminal():
                self._leaf()
            elif state.is_chance_node():
                self._leaf()
                for outcome, probability in state.chance_outcomes():
                    stack.append((state.child(outcome), node, probability, outcome))
            else:
                seat = state.current_player()
                legal = state.legal_actions()
                vector = np.asarray(state.observation_tensor(seat), np.float32)
                key = vector.astype(np.uint8).tobytes()
                if key not in rows:
                    rows[key] = len(vectors)
                    vectors.append(vector.astype(np.uint8))
                    mask = np.zeros(game.num_distinct_actions(), np.int8)
                    mask[legal] = 1
                    masks.append(mask)
                self.player.append(seat)
                self.infostate.append(state.information_state_string(seat))
                self.observation.append(rows[key])
                self.legal.append(legal)
                for move in legal:
                    stack.append((state.child(move), node, 1.0, move))
        self.observations = np.array(vectors, np.uint8)
        self.masks = np.array(masks, np.int8)
        self.transitions = len(self.parent) - 1

    def _leaf(self) -> None:
        self.player.append(-1)
        self.infostate.append("")
        self.observation.append(-1)
        self.legal.append([])

    def observation_table(self, probabilities: InfostateFn) -> tuple[np.ndarray, np.ndarray]:
        """``probabilities`` (a policy over information states, both seats) as one table over
        observations: uint8 ``(K, L)`` rows and float64 ``(K, A)`` distributions (the module
        docstring says how information states sharing an observation are merged)."""
        count, width = len(self.observations), self.masks.shape[1]
        weighted = np.zeros((count, width))
        totals = np.zeros(count)
        plain = np.zeros((count, width))
        plain_counts = np.zeros(count)
        seen: set[tuple[int, str]] = set()
        reach = [0.0] * len(self.parent)
        asked: dict[tuple[int, str], np.ndarray] = {}
        for node in range(len(self.parent)):
            above = self.parent[node]
            if above < 0:
                reach[node] = 1.0
            elif self.player[above] < 0:
                reach[node] = reach[above] * self.edge[node]
            else:
                seat, key = self.player[above], self.infostate[above]
                position = self.legal[above].index(self.action[node])
                reach[node] = reach[above] * asked[(seat, key)][position]
            seat = self.player[node]
            if seat < 0:
                continue
            key = self.infostate[node]
            if (seat, key) not in asked:
                row = np.asarray(probabilities(seat, key, self.legal[node]), np.float64)
                asked[(seat, key)] = row
            row = asked[(seat, key)]
            index = self.observation[node]
            weighted[index, self.legal[node]] += reach[node] * row
            totals[index] += reach[node]
            if (seat, key) not in seen:
                seen.add((seat, key))
                plain[index, self.legal[node]] += row
                plain_counts[index] += 1
        unreached = totals <= 0
        table = np.where(unreached[:, None], plain / plain_counts[:, None], weighted / np.where(unreached, 1.0, totals)[:, None])
        return self.observations, table / table.sum(axis=1, keepdims=True)


@functools.cache
def flat_tree(game: BenchGame) -> FlatTree:
    """:class:`FlatTree` of ``game`` (kept: every curve point of a cell reuses it).

    Raises:
        ValueError: if ``game`` is not an exact game, or its tree is too large.
    """
    if not game.exact:
        raise ValueError(f"game {game.name!r} is not one of the exact games (one hand of two players whose tree fits the memory bound): no whole tree to walk")
    # Refused before the walk: the project's tree has about as many histories as OpenSpiel's.
    estimate = game_tree.estimate_nodes(game.rules)
    if estimate > MAX_FLAT_NODES:
        raise ValueError(
            f"game {game.name!r}: its tree has about {estimate} histories, more than the {MAX_FLAT_NODES} "
            "that OpenSpiel's full-tree algorithms walk here in Python (they run on micro)"
        )
    return FlatTree(load_spiel_game(game))
