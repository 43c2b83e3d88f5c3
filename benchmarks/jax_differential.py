"""The JAX environment (``draw_env.jax``) against the AEC environment, step by step, under jit + vmap.

A batch of games runs in lockstep: the JAX side is one jitted, vmapped call per step for the whole
batch; the reference side is one ``draw_env.raw_env`` per game, played by the same actions, which
are drawn uniformly from the AEC environment's legal actions. After every step each game compares
the legal-action mask, the observation of the player to act and of every seat, the player to act,
each seat's reward, the termination and the infos (``hand_points``, ``hand_pips``, ``score``,
``blocked``). Every game starts from a fixed deal through ``init_deal`` (normal deals, and set-up
deals with uneven hands and short boneyards, where blocks are common) or from a key through
``init`` (the AEC environment is then given that deal); a match's later hands are dealt by the JAX
environment from the key in its state and handed to the AEC environment's shuffle, whose own
rules pick the next opener. A finished game is stepped once more (it must come back unchanged
with zero rewards) and then dealt anew in the same batch.

Usage::

    python benchmarks/jax_differential.py [--decisions 150000] [--batch 64] [--seed 0]
        [--max-pip 6] [--hand-size N] [--protected 2] [--obs-type observation|information_state]

(the variant options apply to every configuration; a player count the variant cannot deal to is
skipped)

prints, per configuration (players, episode, reward), the games finished, the decisions compared
and the disagreements, and exits 1 if any disagreement was found. ``tests/test_jax.py`` runs the
same comparison at a size that fits the test suite.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import draw_env
from draw_env import tiles
from draw_env.jax import DrawDominoes, State
from draw_env.rules import DrawGame
from tests.positions import DeckRng

#: (players, episode, reward): every combination the environment accepts.
CONFIGS = [
    (players, episode, reward)
    for players in (2, 3, 4)
    for episode in ("hand", "match")
    for reward in ("zero_sum", "points", "win_loss")
    if not (reward == "win_loss" and episode == "hand")
]

# What each game is told to do at a call of the driver.
STEP, DEAL, KEY = 0, 1, 2
HAND_WIDTH = 26  # padded width of init_deal's hands in the default game: set-up deals hold up to 25 tiles


def hand_width(game: DrawGame) -> int:
    """The padded width of ``init_deal``'s hands here: a set-up deal's hand holds at most all tiles
    but one per other seat."""
    return HAND_WIDTH if game.is_default else game.num_tiles - game.num_players + 1


def mask_tiles(mask: Any) -> list[int]:
    """The tile ids in a JAX mask read on the host: one int32, or int32 words (tile ``t`` at bit
    ``t % 32`` of word ``t // 32``)."""
    words = np.atleast_1d(np.asarray(mask)).astype(np.int64) & 0xFFFFFFFF
    return list(tiles.tiles_in(sum(int(word) << (32 * index) for index, word in enumerate(words))))


def make_driver(env: DrawDominoes, quick_compile: bool = False) -> Callable[..., tuple[State, jax.Array]]:
    """One compiled function for everything the comparison calls, per game of the batch.

    ``driver(state, action, kind, key, hands, boneyard, opener, scores)`` returns the game's next
    state (``kind`` STEP: ``env.step(state, action)``; DEAL: ``env.init_deal(hands, boneyard,
    opener, scores, key)``; KEY: ``env.init(key)``) and every seat's observation of it
    ``(num_players, observation size)``. One compilation per configuration keeps the test suite fast;
    ``quick_compile`` halves its time (XLA's backend optimisations off: slower code, same results).
    """
    match = env.episode == "match"

    def one(state, action, kind, key, hands, boneyard, opener, scores):  # type: ignore[no-untyped-def]
        stepped = env.step(state, action)
        dealt = env.init_deal(hands, boneyard, opener, scores if match else None, key=key)
        drawn = env.init(key)
        pick = jnp.where(kind == STEP, 0, jnp.where(kind == DEAL, 1, 2))
        out = jax.tree_util.tree_map(lambda a, b, c: jnp.select([pick == 0, pick == 1], [a, b], c), stepped, dealt, drawn)
        seats = jnp.arange(env.num_players, dtype=jnp.int32)
        return out, jax.vmap(lambda seat: env.observe(out, seat))(seats)

    options = {"xla_backend_optimization_level": 0} if quick_compile else None
    return jax.jit(jax.vmap(one), compiler_options=options)


def empty_batch(env: DrawDominoes, size: int) -> State:
    """A batch of all-zero states of the right shapes (replaced by deals at the first call)."""
    shapes = jax.eval_shape(jax.vmap(env.init), jax.ShapeDtypeStruct((size, 2), jnp.uint32))
    return jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)


def random_deal(
    rng: random.Random, game: DrawGame, odd: bool, information: bool = False
) -> tuple[list[list[int]], list[int], int]:
    """A normal deal, or (``odd``) a set-up deal: a boneyard of ``protected`` to ``protected + 4``
    tiles (2 to 6 in the default game) and uneven hands; for ``information`` states, a boneyard
    no longer than a normal deal's (``draw_env.observation.check_history_room``)."""
    players, num_tiles = game.num_players, game.num_tiles
    if not odd:
        hands, boneyard = game.deal(rng)
        return hands, boneyard, rng.randrange(players)
    deck = list(range(num_tiles))
    rng.shuffle(deck)
    longest = min(game.protected + 4, num_tiles - players)
    if information:
        longest = min(longest, num_tiles - players * game.hand_size)
    bones = rng.randint(game.protected, longest)
    cuts = sorted(rng.sample(range(1, num_tiles - bones), players - 1))
    bounds = [0, *cuts, num_tiles - bones]
    hands = [deck[bounds[s] : bounds[s + 1]] for s in range(players)]
    return hands, deck[num_tiles - bones :], rng.randrange(players)



@dataclass
class Report:
    """What a comparison found: counts and the first disagreements, described."""

    decisions: int = 0
    games: int = 0
    hands: int = 0
    disagreements: int = 0
    dead_steps: int = 0  # steps given to games already over
    examples: list[str] = field(default_factory=list)
    outcomes: set[str] = field(default_factory=set)

    def disagree(self, text: str) -> None:
        self.disagreements += 1
        if len(self.examples) < 10:
            self.examples.append(text)


def _deal_of(host: Any, i: int, num_players: int) -> dict[str, Any]:
    """The deal of game ``i``'s current hand, read from a fresh JAX state on the host."""
    hands = [mask_tiles(host.hands[i][seat]) for seat in range(num_players)]
    return {"hands": hands, "boneyard": boneyard_of(host, i), "opener": int(host.opener[i])}


def boneyard_of(host: Any, i: int) -> list[int]:
    """Game ``i``'s boneyard in drawing order, read from its tiles' deck positions."""
    position = host.deck_position[i]
    left = (position >= host.bone_pos[i]) & (position < host.bone_end[i])
    return [int(t) for t in sorted(np.flatnonzero(left), key=lambda t: position[t])]


def compare(
    env: DrawDominoes,
    driver: Callable[..., tuple[State, jax.Array]],
    *,
    batch: int,
    decisions: int,
    seed: int,
) -> Report:
    """Play random legal games in both environments until ``decisions`` decisions were compared."""
    n, match = env.num_players, env.episode == "match"
    game = env.game
    width = hand_width(game)
    rng = random.Random(seed)
    report = Report()
    information = env.obs_type == "information_state"
    aecs = [draw_env.raw_env(num_players=n, episode=env.episode, reward=env.reward, obs_type=env.obs_type,
                             **game.variant) for _ in range(batch)]
    agents = aecs[0].possible_agents
    state = empty_batch(env, batch)
    fresh = np.ones(batch, bool)  # deal this game anew at the next call
    ended = np.zeros(batch, bool)  # its episode ended at the last call: step it once, dead
    keys = np.zeros((batch, 2), np.uint32)  # raw threefry keys: any two 32-bit words
    previous: Any = None
    while report.decisions < decisions or not fresh.all():
        stop = report.decisions >= decisions
        kind = np.full(batch, STEP, np.int32)
        action = np.zeros(batch, np.int32)
        hands = np.full((batch, n, width), -1, np.int32)
        boneyard = np.full((batch, game.num_tiles), -1, np.int32)
        opener = np.zeros(batch, np.int32)
        scores = np.zeros((batch, n), np.int32)
        fixed: dict[int, dict[str, Any]] = {}
        for i in range(batch):
            if fresh[i] and not stop:
                keys[i] = rng.getrandbits(32), rng.getrandbits(32)
                start = [rng.randrange(max(0, game.target - 40), game.target) for _ in range(n)] if match else None
                if rng.random() < 0.5:
                    kind[i] = KEY
                    fixed[i] = {"scores": None}
                else:
                    kind[i] = DEAL
                    deal_hands, deal_boneyard, deal_opener = random_deal(rng, game, rng.random() < 0.5, information)
                    for seat, hand in enumerate(deal_hands):
                        hands[i, seat, : len(hand)] = hand
                    boneyard[i, : len(deal_boneyard)] = deal_boneyard
                    opener[i] = deal_opener
                    if start is not None:
                        scores[i] = start
                    fixed[i] = {"hands": deal_hands, "boneyard": deal_boneyard, "opener": deal_opener, "scores": start}
            elif ended[i]:
                action[i] = rng.randrange(-2, game.num_actions + 2)  # anything: an ended game ignores it
            elif not fresh[i]:
                aec = aecs[i]
                mask = aec.observe(aec.agent_selection)["action_mask"]
                action[i] = rng.choice(np.flatnonzero(mask).tolist())
        state, seen = driver(state, jnp.asarray(action), jnp.asarray(kind), jnp.asarray(keys), jnp.asarray(hands),
                             jnp.asarray(boneyard), jnp.asarray(opener), jnp.asarray(scores))
        host = jax.device_get(state)
        views = np.asarray(seen)
        for i in range(batch):
            aec = aecs[i]
            if kind[i] != STEP:
                options = fixed[i]
                if kind[i] == KEY:
                    options = {**_deal_of(host, i, n), "scores": None}
                if not match:
                    options = {key: value for key, value in options.items() if key != "scores"}
                elif options["scores"] is None:
                    del options["scores"]
                aec.reset(seed=rng.randrange(2**31), options=options)
                fresh[i] = False
                _check(report, env, aec, agents, host, views, i, "deal")
                continue
            if fresh[i]:
                continue
            if ended[i]:
                _check_unchanged(report, previous, host, i)
                report.dead_steps += 1
                ended[i] = False
                fresh[i] = True
                continue
            seat = agents.index(aec.agent_selection)
            if match and host.hand_number[i] != previous.hand_number[i] and not host.terminated[i]:
                # The JAX environment dealt the next hand of the match: the AEC environment deals it too.
                aec.unwrapped._rng = DeckRng([int(t) for t in np.argsort(host.deck_position[i])])
                if host.opener[i] != (previous.opener[i] + 1) % n:
                    report.disagree(f"game {i}: next opener {host.opener[i]} after {previous.opener[i]}")
            aec.step(int(action[i]))
            report.decisions += 1
            what = f"seat {seat} played {int(action[i])}"
            _check(report, env, aec, agents, host, views, i, what)
            done = all(aec.terminations.values())
            if done or aec.unwrapped._finished_hand is not None:  # a hand ended at this step
                report.hands += 1
                report.outcomes.add("blocked" if aec.infos[agents[0]]["blocked"] else "domino")
            if done:
                report.games += 1
                ended[i] = True
        previous = host
    return report


def _check(report: Report, env: DrawDominoes, aec: Any, agents: list[str], host: Any, views: np.ndarray, i: int,
           what: str) -> None:
    """Compare game ``i`` of the JAX batch with its AEC environment; record any difference."""
    problems = []
    done = all(aec.terminations.values())
    acting = aec.agent_selection
    seat = agents.index(acting)
    if bool(host.terminated[i]) != done:
        problems.append(f"terminated {host.terminated[i]} vs {done}")
    if int(host.current_player[i]) != seat:
        problems.append(f"current_player {host.current_player[i]} vs {seat}")
    reference = aec.observe(acting)
    if not np.array_equal(host.legal_action_mask[i], reference["action_mask"].astype(bool)):
        problems.append(
            f"mask {np.flatnonzero(host.legal_action_mask[i]).tolist()} vs {np.flatnonzero(reference['action_mask']).tolist()}"
        )
    if not np.array_equal(host.observation[i], reference["observation"]):
        problems.append(f"observation differs at {np.flatnonzero(host.observation[i] != reference['observation']).tolist()}")
    for s, agent in enumerate(agents):
        if not np.array_equal(views[i, s], aec.observe(agent)["observation"]):
            problems.append(f"seat {s}'s observation differs")
        if np.float32(aec.rewards[agent]) != host.rewards[i, s]:
            problems.append(f"seat {s}'s reward {host.rewards[i, s]!r} vs {aec.rewards[agent]!r}")
        info = aec.infos[agent]
        mine = {"hand_points": int(host.hand_points[i, s]), "hand_pips": int(host.hand_pips[i, s]),
                "score": int(host.scores[i, s]), "blocked": int(host.blocked[i])}
        if mine != info:
            problems.append(f"seat {s}'s infos {mine} vs {info}")
    if problems:
        report.disagree(f"game {i} ({env!r}), after {what}: " + "; ".join(problems))


def _check_unchanged(report: Report, before: Any, after: Any, i: int) -> None:
    """An ended game stepped again: every field the same, rewards zero."""
    for name in State.__dataclass_fields__:
        old, new = getattr(before, name)[i], getattr(after, name)[i]
        if name == "rewards":
            if np.any(new != 0):
                report.disagree(f"game {i}: an ended game gave rewards {new.tolist()}")
        elif not np.array_equal(old, new):
            report.disagree(f"game {i}: an ended game changed its {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=150_000,
                        help="decisions to compare in all (default 150,000); games under way are finished")
    parser.add_argument("--batch", type=int, default=64, help="games in lockstep (default 64)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-pip", type=int, default=6, help="the set, double-N (default 6)")
    parser.add_argument("--hand-size", type=int, default=None, help="tiles dealt to each player (default the rules')")
    parser.add_argument("--protected", type=int, default=2, help="boneyard tiles never drawn (default 2)")
    parser.add_argument("--obs-type", choices=("observation", "information_state"), default="observation",
                        help="what the observations compared are (default observation)")
    args = parser.parse_args(argv)
    if args.decisions < 1 or args.batch < 1:
        parser.error("--decisions and --batch must be >= 1")
    variant = {"max_pip": args.max_pip, "hand_size": args.hand_size, "protected": args.protected}
    try:
        DrawGame(2, **variant)
    except ValueError as error:
        parser.error(str(error))
    per_config = -(-args.decisions // len(CONFIGS))
    total = Report()
    print(f"{'players':>7} {'episode':>7} {'reward':>8} {'games':>7} {'hands':>7} {'decisions':>10} {'disagree':>9} {'seconds':>8}")
    for index, (players, episode, reward) in enumerate(CONFIGS):
        try:
            env = DrawDominoes(players, episode, reward, **variant, obs_type=args.obs_type)
        except ValueError as error:
            print(f"{players:>7} {episode:>7} {reward:>8} skipped: {error}")
            continue
        start = time.perf_counter()
        report = compare(env, make_driver(env), batch=args.batch, decisions=per_config, seed=args.seed + index)
        print(f"{players:>7} {episode:>7} {reward:>8} {report.games:>7,} {report.hands:>7,} {report.decisions:>10,} "
              f"{report.disagreements:>9} {time.perf_counter() - start:>8.1f}")
        for example in report.examples:
            print("   ", example)
        total.decisions += report.decisions
        total.games += report.games
        total.hands += report.hands
        total.disagreements += report.disagreements
    print(f"total: {total.games:,} games, {total.hands:,} hands, {total.decisions:,} decisions compared, "
          f"{total.disagreements} disagreements")
    return 1 if total.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
