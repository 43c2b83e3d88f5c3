"""The benchmark's measures of a policy: exact exploitability on the small games, a rating against a
fixed reference panel on the full ones.

* Exact games (``micro``, ``mini``): :func:`arena.exploitability.exploitability` of the policy on
  the game's tree (:func:`arena.exploitability.tree_for`, built once per game and process), in
  zero-sum points per hand; lower is better, 0 is a Nash equilibrium.
* Full games (``draw2``, ``draw3``, ``draw4``): the policy saved, then played with its spec against
  each member of the panel (one table per member: the policy in one seat, the member in the
  others), duplicate deals, ``matches`` games a member with a fixed seed. The score is the mean
  over members of the policy's zero-sum points per hand; the rating is openskill's Plackett-Luce
  ``mu`` of the policy with the panel's ratings held fixed at those of the panel's own league
  (played once per game and stored in the benchmark folder, :func:`panel_ratings`). Where the
  suite asks for it, the exploiter's win rate against the final policy (:func:`exploiter_measure`):
  the approximate exploitability at a fixed CPU budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from draw_env.exact.game_tree import GameTree
from train.bench.config import ExploiterSettings
from train.bench.protocol import BenchGame, Policy

#: The largest tree a measurement builds (mini's takes about 1.7 GB).
MAX_TREE_BYTES = 4 * 1024**3


def game_tree(game: BenchGame) -> GameTree:
    """The game tree of an exact game, built once per process (:func:`arena.exploitability.tree_for`:
    the cell's solver trained on the same one)."""
    from arena.exploitability import tree_for

    return tree_for(game.rules, max_bytes=MAX_TREE_BYTES)


def exact_measure(policy: Policy, game: BenchGame) -> dict[str, Any]:
    """``{"exploitability", "nash_conv", "best_response", ...}`` of ``policy`` on ``game``'s tree
    (:meth:`arena.exploitability.Exploitability.to_dict`), asked with the vectors it reads (its
    ``obs_type``)."""
    from agents.base import obs_type_of
    from arena.exploitability import exploitability

    return exploitability(game_tree(game), policy.action_probabilities_batch, obs_type=obs_type_of(policy)).to_dict()


def panel_ratings(
    panel: Sequence[str], game: BenchGame, matches: int, seed: int, workers: int = 1
) -> dict[str, tuple[float, float]]:
    """The panel's own league on ``game`` (:func:`arena.league.league`): ``spec -> (mu, sigma)``."""
    from arena.league import league

    result = league(list(panel), game.num_players, matches, seed=seed, duplicate=True, workers=workers,
                    episode=game.episode, max_pip=game.max_pip, hand_size=game.hand_size, protected=game.protected,
                    progress=False)
    labels = {label: spec for label, spec in zip(result.labels, panel)}
    return {labels[rating.label]: (rating.mu, rating.sigma) for rating in result.ratings}


def panel_measure(
    spec: str, game: BenchGame, panel: Mapping[str, tuple[float, float]], matches: int, seed: int, workers: int = 1
) -> dict[str, Any]:
    """The policy ``spec`` against each panel member (duplicate deals, ``matches`` games each).

    Returns:
        ``score`` (mean zero-sum points per hand over the members), ``rating`` (its openskill
        ``mu`` with the panel's ratings ``panel`` fixed) and ``rating_sigma``, and per member its
        ``win_rate`` with Wilson bounds and ``zero_sum_per_hand``.
    """
    from openskill.models import PlackettLuce

    from arena.evaluation import evaluate
    from arena.specs import normalise_spec

    model = PlackettLuce(tau=0.0)
    rating = model.rating(name="policy")
    rows: list[dict[str, Any]] = []
    for member, (mu, sigma) in panel.items():
        result = evaluate([normalise_spec(spec)] + [member] * (game.num_players - 1), num_games=matches,
                          seed=seed, duplicate=True, workers=workers, episode=game.episode, max_pip=game.max_pip,
                          hand_size=game.hand_size, protected=game.protected, progress=False)
        learner = result.participants[0]
        for outcome in result.games:
            # The panel is the fixed scale: only the policy's rating moves.
            teams = [[rating]] + [[model.rating(mu=mu, sigma=sigma)] for _ in range(game.num_players - 1)]
            rating = model.rate(teams, scores=[float(score) for score in outcome.scores])[0][0]
        rows.append({"member": member, "games": learner.games, "win_rate": learner.win_rate,
                     "win_low": learner.win_low, "win_high": learner.win_high,
                     "zero_sum_per_hand": learner.zero_sum_per_hand})
    score = sum(float(row["zero_sum_per_hand"]) for row in rows) / len(rows)
    return {"score": score, "rating": rating.mu,
            "rating_sigma": rating.sigma, "panel": rows}


def exploiter_measure(spec: str, game: BenchGame, seed: int, folder: Path, settings: ExploiterSettings) -> dict[str, Any]:
    """The approximate exploitability of the policy ``spec`` on a full game: the exploiter
    (:func:`train.exploit.run.run_exploit`) trained against it in every other seat for
    ``settings.cpu_minutes`` CPU-minutes in ``folder``, then its duplicate matches against it.

    Returns:
        The exploiter's ``win_rate`` with its Wilson bounds, ``zero_sum_per_hand``, ``matches``,
        ``cpu_seconds`` and ``timesteps``.
    """
    from train.config import ConfigError, build
    from train.exploit.config import ExploitConfig
    from train.exploit.run import run_exploit

    data = {**settings.settings, "target": spec, "num_players": game.num_players, **game.variant,
            "episode": game.episode, "seed": seed, "cpu_minutes": settings.cpu_minutes,
            "eval": {"every": 0, "matches": 20}, "final_eval": {"matches": settings.matches},
            "output_dir": str(folder), "progress_bar": False}
    try:
        config = build(ExploitConfig, data)
    except ConfigError as error:
        raise ConfigError(f"config key 'exploiter': {error}") from None
    summary = run_exploit(config)
    row = summary["final_eval"]
    return {key: row[key] for key in ("win_rate", "win_low", "win_high", "zero_sum_per_hand", "matches")} | {
        "cpu_seconds": summary["cpu_seconds"], "timesteps": summary["timesteps"]}
