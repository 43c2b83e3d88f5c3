"""The batched evaluation backend plays the same games as the step-by-step one where it can."""

from __future__ import annotations

import dataclasses

import pytest

from arena.batched_play import batchable
from arena.evaluation import evaluate


def _games(result):  # the outcomes without their timings
    return [dataclasses.replace(game, think_seconds=(0.0,) * len(game.think_seconds)) for game in result.games]


@pytest.mark.parametrize(("players", "duplicate"), [(["heaviest", "variety"], True), (["variety", "heaviest", "variety"], True), (["heaviest", "variety", "heaviest", "variety"], False)])
def test_hands_are_played_exactly_as_step_by_step(players: list[str], duplicate: bool) -> None:
    common = {"num_games": 48, "episode": "hand", "duplicate": duplicate, "seed": 4, "progress": False}
    batched = evaluate(players, batched=True, **common)
    reference = evaluate(players, batched=False, **common)
    assert _games(batched) == _games(reference)
    assert batched.to_dict()["participants"] == reference.to_dict()["participants"] or all(
        a["win_rate"] == b["win_rate"] for a, b in zip(batched.to_dict()["participants"], reference.to_dict()["participants"])
    )


def test_matches_keep_the_duplicate_format() -> None:
    result = evaluate(["ppo", "heaviest"], num_games=40, episode="match", seed=1, progress=False)
    by_deal: dict[int, list] = {}
    for game in result.games:
        by_deal.setdefault(game.deal, []).append(game)
    for replays in by_deal.values():
        assert sorted(game.seating for game in replays) == [(0, 1), (1, 0)]
        # every replay of a deal opens with the same hand, and shared hands stay the same
        first, second = (game.deals_seen for game in replays)
        shared = min(len(first), len(second))
        assert first[:shared] == second[:shared]
    assert all(game.hands >= 1 and max(game.scores) >= 100 for game in result.games)
    ppo = result.participants[0]
    assert ppo.win_rate > 0.75  # the shipped policy beats heaviest (96% over 2,000 matches)


def test_network_policies_play_as_alone_up_to_rounding() -> None:
    common = {"num_games": 60, "episode": "hand", "seed": 2, "progress": False}
    batched = evaluate(["ppo", "variety"], batched=True, **common)
    reference = evaluate(["ppo", "variety"], batched=False, **common)
    same = sum(a == b for a, b in zip(_games(batched), _games(reference)))
    assert same >= 57  # a near-tie of two logits may break the other way after a batched product


def test_only_agents_that_play_alike_in_a_batch_are_batched() -> None:
    assert batchable([("heaviest", {}), ("ppo", {}), ("variety", {})])
    assert not batchable([("heaviest", {}), ("random", {})])  # its games would differ
    assert not batchable([("ppo", {"deterministic": False}), ("heaviest", {})])
    assert not batchable([("ismcts", {}), ("heaviest", {})])
