"""Searches that weight their deals by a model of where the hidden tiles lie (``inference``,
``candidates`` of ``ismcts`` and ``pimc``): the plain search without one, the uniform sampler's
worlds under the uniform model, a sure tile always placed, and the options of a spec."""

from __future__ import annotations

import itertools
import math
import sys
import types
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.base import observe
from agents.hidden_tiles import HiddenTileModel, UniformHiddenTiles, save_hidden_tile_model
from agents.ismcts_compiled import (
    MAX_CANDIDATES,
    determinize,
    information_set,
    observation_vector,
    weighted_determinize,
    weighting,
)
from arena.specs import parse_agent_spec
from draw_env import engine as E
from draw_env.observation import layout
from draw_env.rules import DrawGame, PlayerView
from draw_env.tiles import NUM_TILES
from tests.positions import random_positions


class FixedModel:
    """A hidden-tile model that answers every observation with one table; counts its calls."""

    def __init__(self, probabilities: np.ndarray) -> None:
        self.probabilities = probabilities
        self.calls = 0

    def location_probabilities(self, observation: np.ndarray) -> np.ndarray:
        self.calls += 1
        return self.probabilities


def random_model(num_players: int, seed: int) -> FixedModel:
    """Columns drawn from a Dirichlet: a model that disagrees with the uniform deals everywhere."""
    return FixedModel(np.random.default_rng(seed).dirichlet(np.ones(num_players + 1), NUM_TILES).T)


def consistent_deals(view: PlayerView) -> list[tuple[int, ...]]:
    """Every opponent's hand (absolute seats after the viewer, in turn) of every deal the view allows."""
    n = view.game.num_players
    opponents = [(view.player + i) % n for i in range(1, n)]
    found = []

    def deal(level: int, free: int, hands: tuple[int, ...]) -> None:
        if level == len(opponents):
            found.append(hands)
            return
        seat = opponents[level]
        allowed = [t for t in range(NUM_TILES) if (free & view.allowed(seat)) >> t & 1]
        for chosen in itertools.combinations(allowed, view.hand_counts[seat]):
            mask = sum(1 << t for t in chosen)
            deal(level + 1, free & ~mask, (*hands, mask))

    deal(0, view.unseen, ())
    return found


def chi_square(observed: list[int]) -> float:
    """Pearson's statistic of ``observed`` counts against equal expected counts."""
    expected = sum(observed) / len(observed)
    return sum((count - expected) ** 2 / expected for count in observed)


def chi_square_quantile(df: int, z: float) -> float:
    """The chi-square distribution's quantile at the standard normal's quantile ``z`` (Wilson and Hilferty)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def opponents_hands(world: np.ndarray, view: PlayerView) -> tuple[int, ...]:
    n = view.game.num_players
    return tuple(int(world[E.S_HANDS + (view.player + i) % n]) for i in range(1, n))


def sample_hands(view: PlayerView, model: object, candidates: int, samples: int, seed: int) -> Counter:
    """How often each deal of opponents' hands comes out of ``samples`` weighted determinizations."""
    base, counts, searcher, _ = information_set(view)
    log_place, pool = weighting(model, candidates, view, base, searcher)  # type: ignore[arg-type]
    words = np.array([seed, 0], np.int64)
    world = np.empty_like(base)
    seen: Counter = Counter()
    for _ in range(samples):
        assert weighted_determinize(base, counts, searcher, words, world, log_place, pool)
        seen[opponents_hands(world, view)] += 1
    return seen


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_one_candidate_or_no_model_searches_exactly_as_the_plain_search(num_players: int) -> None:
    states = random_positions(num_players, hands=3, seed=60 + num_players, min_legal=2)[::9][:4]
    model = random_model(num_players, seed=num_players)
    plain = agents.make("ismcts", simulations=90, seed=7)
    one = agents.make("ismcts", simulations=90, seed=7, candidates=1)
    one.model = model  # type: ignore[attr-defined]
    unmodelled = agents.make("ismcts", simulations=90, seed=7, candidates=8)
    pimcs = [agents.make("pimc", worlds=3, seed=7), agents.make("pimc", worlds=3, seed=7, candidates=1),
             agents.make("pimc", worlds=3, seed=7, candidates=8)]
    pimcs[1].model = model  # type: ignore[attr-defined]
    for state in states:
        observation = observe(state, state.current)
        plain_result = plain.search(observation)  # type: ignore[attr-defined]
        for agent in (one, unmodelled):
            result = agent.search(observation)  # type: ignore[attr-defined]
            assert np.array_equal(result.visits, plain_result.visits)
            assert np.array_equal(result.totals, plain_result.totals)
        values = [agent.action_values(observation) for agent in pimcs]  # type: ignore[attr-defined]
        assert values[1] == values[0] and values[2] == values[0]
    many = [agent.action_values_many([observe(s, s.current) for s in states])  # type: ignore[attr-defined]
            for agent in (plain, one, unmodelled)]
    assert many[1] == many[0] and many[2] == many[0]
    assert model.calls == 0  # one candidate: the model is not even asked


def test_the_uniform_model_keeps_the_uniform_samplers_worlds() -> None:
    """On a 3-player position with shown voids, 8 candidates weighted by the uniform model deal
    every consistent deal equally often, as the plain sampler does (chi-square, fixed seeds)."""
    views = (state.view(state.current) for state in random_positions(3, hands=6, seed=0, min_legal=2))
    view = next(v for v in views if v.unseen.bit_count() <= 7 and any(v.voids[s] for s in range(3) if s != v.player)
                and 10 <= len(consistent_deals(v)) <= 40)
    deals = consistent_deals(view)
    model = UniformHiddenTiles(DrawGame(3))
    samples = 200 * len(deals)
    for candidates in (1, 8):
        seen = sample_hands(view, model, candidates, samples, seed=candidates)
        assert set(seen) == set(deals)
        observed = [seen[deal] for deal in deals]
        assert chi_square(observed) < chi_square_quantile(len(deals) - 1, 3.09), (candidates, observed)  # p > 0.001
    # The same test sees a model that leans: one tile three times likelier with the first opponent.
    leaning = model.location_probabilities(observation_vector(view))
    tile = next(t for t in range(NUM_TILES) if view.allowed((view.player + 1) % 3) >> t & 1)
    leaning[1, tile] *= 3
    leaning[:, tile] /= leaning[:, tile].sum()
    seen = sample_hands(view, FixedModel(leaning), 8, samples, seed=8)
    assert chi_square([seen[deal] for deal in deals]) > chi_square_quantile(len(deals) - 1, 4.75)  # p < 1e-6


@pytest.mark.parametrize(("num_players", "observer"), [(2, 0), (3, 1), (4, 3)])
def test_a_tile_surely_in_one_hand_is_there_in_every_world(num_players: int, observer: int) -> None:
    """Rows are relative to the observer: row 1 is the next seat, whether the search reads an
    observation (seats relative) or a view (seats absolute). Early in a hand, where the plain
    sampler puts the tile there in about 1 world in 2 to 4."""
    state = next(s for s in random_positions(num_players, hands=1, seed=observer) if s.current == observer)
    view = state.view(observer)
    nxt = (observer + 1) % num_players
    tile = next(t for t in range(NUM_TILES) if view.allowed(nxt) >> t & 1)
    probabilities = np.full((num_players + 1, NUM_TILES), 1.0 / (num_players + 1))
    probabilities[:, tile] = 0.0
    probabilities[1, tile] = 1.0
    for source in (view, observe(state, observer)):
        base, counts, searcher, _ = information_set(source)
        log_place, pool = weighting(FixedModel(probabilities), 64, source, base, searcher)
        words = np.array([observer, 0], np.int64)
        world = np.empty_like(base)
        next_seat = (searcher + 1) % num_players
        for _ in range(100):
            assert weighted_determinize(base, counts, searcher, words, world, log_place, pool)
            assert world[E.S_HANDS + next_seat] >> tile & 1
        there = 0
        for _ in range(100):
            assert determinize(base, counts, searcher, words, world)
            there += int(world[E.S_HANDS + next_seat] >> tile & 1)
        assert there < 75


def test_lockstep_and_plain_searches_weight_alike_and_the_model_is_asked_once_a_decision() -> None:
    state = random_positions(3, hands=1, seed=5, min_legal=2)[2]
    observation = observe(state, state.current)
    results = []
    for lockstep in (False, True):
        agent = agents.make("ismcts", simulations=60, seed=3, candidates=4)
        agent.model = model = random_model(3, seed=1)  # type: ignore[attr-defined]
        values = (agent.action_values_many([observation]) if lockstep  # type: ignore[attr-defined]
                  else [agent.action_values(observation)])  # type: ignore[attr-defined]
        results.append(values[0])
        assert model.calls == 1
    assert results[0] == results[1]
    assert results[0] != agents.make("ismcts", simulations=60, seed=3).action_values(observation)  # type: ignore[attr-defined]


def _zero_model_file(tmp_path: Path, num_players: int) -> Path:
    game = DrawGame(num_players)
    outputs = (num_players + 1) * NUM_TILES
    layer = (np.zeros((outputs, layout(game).size), np.float32), np.zeros(outputs, np.float32))
    return save_hidden_tile_model(tmp_path / "model.npz", HiddenTileModel((layer,), game))


def test_specs_take_a_model_file_and_candidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_agent_spec("ismcts:inference=123,candidates=4") == ("ismcts", {"inference": "123", "candidates": 4})
    assert parse_agent_spec("pimc:inference=m.npz")[1] == {"inference": "m.npz"}
    for name in ("ismcts", "pimc"):
        with pytest.raises(ValueError, match=f"agent '{name}': candidates must be an integer in \\[1, {MAX_CANDIDATES}\\]"):
            parse_agent_spec(f"{name}:candidates=0")
        with pytest.raises(ValueError, match="inference=.*missing.npz"):
            agents.make(name, inference=str(tmp_path / "missing.npz"))
        (tmp_path / "bad.npz").write_bytes(b"not a model")
        with pytest.raises(ValueError, match="bad.npz"):
            agents.make(name, inference=tmp_path / "bad.npz")
    path = _zero_model_file(tmp_path, 2)
    agent = agents.make("pimc", inference=str(path), worlds=2, seed=1)
    assert isinstance(agent.model, HiddenTileModel)  # type: ignore[attr-defined]
    state = random_positions(2, hands=1, seed=1, min_legal=2)[0]
    assert state.is_legal(agent.act(observe(state, state.current)))
    state = random_positions(3, hands=1, seed=1, min_legal=2)[0]
    # A model of another table size, met at a decision: the file and both games are named.
    with pytest.raises(ValueError, match=r"^inference=.*model.npz: the model is of 2 players and the double-6 set, "
                                         r"this decision of 3 players and the double-6 set$"):
        agent.act(observe(state, state.current))
    # A loader that cannot read the file is a ValueError naming it too.
    def unreadable(path: object, game: object = None) -> None:
        raise PermissionError("permission denied")
    monkeypatch.setitem(sys.modules, "agents.hidden_tiles", types.SimpleNamespace(load_hidden_tile_model=unreadable))
    with pytest.raises(ValueError, match="inference=.*model.npz: permission denied"):
        agents.make("ismcts", inference=path)

