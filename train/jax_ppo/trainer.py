"""PPO in JAX: one jitted function plays a batch of games and updates the network (:class:`Trainer`).

One jitted function plays a batch of games (``jax.vmap`` over :class:`draw_env.jax.DrawDominoes`)
for a fixed number of actions with ``jax.lax.scan``, then updates an actor-critic network with
PPO (epochs and minibatches are ``lax.scan`` loops too), as PureJaxRL does; nothing in it calls
the host, so the same code runs on CPU, GPU or TPU. :func:`train` runs it in chunks of updates,
printing progress between them (``on_chunk`` sees the parameters after each chunk).

The learner always sits in seat 0 (each hand's opener is a fair lottery, so it leads its share
of the hands); every other seat is its game's opponent, fixed per game slot by ``opponents``:
``heaviest`` (the placement of the highest-pip tile, draws only when it must: the rule-based
agent ``heaviest`` of ``agents/baselines.py``), ``random`` (uniform over the legal actions, as the
agent ``random``) or ``self`` (the policy being trained, sampling). Illegal actions are masked by
setting their logits to -1e9 before the softmax. The policy reads the acting player's observation
(or information state) alone; with ``critic: central`` the value network reads the full state too
(:meth:`Trainer.views`), which only the training sees: PerfectDou's "perfect-training,
imperfect-execution". The features, the network, the JAX opponents
and the export are :mod:`train.jax_ppo.policy`. Inside the jitted function the network is used
through Flax NNX's functional API (``nnx.split`` once, ``nnx.merge`` in the traced code):
parameters and optax state are plain pytrees.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from draw_env.jax import DrawDominoes
from draw_env.rules import DrawGame
from train.jax_ppo.config import OPPONENTS, JaxPPOConfig
from train.jax_ppo.policy import (
    MASKED_LOGIT,
    ActorCritic,
    encode,
    heaviest_action,
    random_action,
)
from train.learner_config import magnet_weight
from train.meter import cpu_seconds

LEARNER = 0  # the learner's seat

# ---------------------------------------------------------------------------- training


class Transition(NamedTuple):
    """One action in every game (arrays gain leading axes ``(num_steps, num_envs)`` in a rollout)."""

    inputs: jax.Array  # float32 (F,): features of the acting player's observation (340 in the seeds' game)
    mask: jax.Array  # bool (A,): legal actions (58 in the seeds' game, 2T + 2 in a variant)
    action: jax.Array  # int32
    log_prob: jax.Array  # float32, of the action under the acting policy
    value: jax.Array  # float32, the value network's estimate (learner's view when it acts)
    reward: jax.Array  # float32, the learner's reward from this step, scaled
    done: jax.Array  # bool, the episode ended at this step (the next step deals a new one)
    decision: jax.Array  # bool, the learner acted with 2+ legal actions: a training sample
    #: float32 (S,): the full state from the acting seat's side (DrawDominoes.full_state), the
    #: central critic's extra input; None with ``critic: own`` (no such input, nothing stored)
    state: jax.Array | None = None


class Magnet(NamedTuple):
    """What magnetic mirror descent carries from one update to the next (``magnet_coef > 0``)."""

    update: jax.Array  # int32, updates done (the coefficient's schedule reads it)
    params: nnx.State | None  # the magnet network (``magnet: moving_average``), None for the uniform magnet


class Past(NamedTuple):
    """The pool of past selves (an opponent ``past`` in ``opponents``)."""

    params: nnx.State  # every parameter stacked: (past_pool, ...), a frozen policy in each row
    held: jax.Array  # int32, rows holding a copy (the rest repeat the initial policy, never drawn)
    taken: jax.Array  # int32, copies taken so far (the next one replaces row taken % past_pool)
    choice: jax.Array  # int32 (num_envs,), the row each game's current hand plays


class Runner(NamedTuple):
    """Everything the training loop carries from one update to the next (a run's checkpoint
    holds it whole: :func:`save_state`)."""

    params: nnx.State
    opt_state: optax.OptState
    games: Any  # draw_env.jax.State, batched
    key: jax.Array
    update: jax.Array  # int32, updates done
    magnet: Magnet | None = None  # None: no magnet (``magnet_coef: 0``)
    past: Past | None = None  # None: no ``past`` opponent


class Metrics(NamedTuple):
    """Per update. Arrays over opponents are ordered as :data:`OPPONENTS`."""

    loss: jax.Array
    policy_loss: jax.Array
    value_loss: jax.Array
    entropy: jax.Array
    magnet_kl: jax.Array  # KL(policy || magnet) over the legal actions, 0 without a magnet
    decisions: jax.Array  # learner decisions in the rollout
    dropped: jax.Array  # decisions beyond JaxPPOConfig.sample_rows, left out of the update
    hands: jax.Array  # (4,) hands finished, per opponent kind
    wins: jax.Array  # (4,) hands where the learner's zero-sum reward was positive
    points: jax.Array  # (4,) learner's unscaled reward summed over finished hands


class Trainer:
    """Builds the pure functions of one configuration: :meth:`init` and :meth:`train_chunk`."""

    def __init__(self, config: JaxPPOConfig) -> None:
        self.config = config
        #: The table and variant played.
        self.game = config.game()
        self.env = DrawDominoes(config.num_players, episode="hand", reward="zero_sum", obs_type=config.obs_type,
                                **self.game.variant)
        #: Whether the value network is a central critic (it reads the full state).
        self.central = config.critic == "central"
        #: Numbers of the full state the value network reads beside the features (0: none).
        self.state_size = self.env.full_state_shape[0] if self.central else 0
        # The network's structure, without computing any weights (each run draws its own).
        abstract = nnx.eval_shape(lambda: self._network(nnx.Rngs(0)))
        self.graphdef = nnx.graphdef(abstract)
        schedule = optax.linear_schedule(
            config.learning_rate, 0.0, config.updates * config.update_epochs * config.num_minibatches
        )
        self.optimizer = optax.chain(
            optax.clip_by_global_norm(config.max_grad_norm), optax.adam(schedule, eps=1e-5)
        )
        #: Whether some game slots seat a past self (the runner then carries :class:`Past`).
        self.has_past = "past" in config.opponents
        kinds = np.resize([OPPONENTS.index(name) for name in config.opponents], config.num_envs)
        #: Opponent kind of each game slot, round robin over ``config.opponents``.
        self.opponent = jnp.asarray(kinds, jnp.int32)
        #: The game slots that seat a past self (fixed: only their rows go through the pool).
        self.past_slots = np.flatnonzero(kinds == OPPONENTS.index("past"))
        self._compiled: Any = None

    # -- pieces

    def _network(self, rngs: nnx.Rngs) -> ActorCritic:
        config = self.config
        return ActorCritic(config.hidden, config.activation, rngs, self.game, config.obs_type, self.state_size)

    def apply(
        self, params: nnx.State, inputs: jax.Array, state: jax.Array | None = None
    ) -> tuple[jax.Array, jax.Array]:
        """(logits, value) of the network ``params`` for ``inputs`` ``(..., F)``; a central
        critic's value reads ``state`` ``(..., S)`` too (:meth:`views`)."""
        return nnx.merge(self.graphdef, params)(inputs, state)

    def views(
        self, games: Any, observation: jax.Array, mask: jax.Array, player: jax.Array
    ) -> tuple[jax.Array, jax.Array | None]:
        """What the networks read of a batch of ``games`` from the seats ``player`` ``(n,)``:
        the policy's features, of ``observation`` and ``mask`` (that seat's own, nothing else),
        and the central critic's full state (:meth:`draw_env.jax.DrawDominoes.full_state`; None
        with ``critic: own``)."""
        inputs = encode(observation, mask, self.game, self.config.obs_type)
        state = jax.vmap(self.env.full_state)(games, player) if self.central else None
        return inputs, state

    def init(self, key: jax.Array) -> Runner:
        """Fresh network (from ``key``), optimizer state, and games marked ended.

        The games are zeros of the engine's state shapes, marked ``terminated``: the first step
        of the first rollout deals them, so the engine's ``init`` is compiled once, inside the
        training function, instead of a second time here.
        """
        net_key, key = jax.random.split(key)
        network = self._network(nnx.Rngs(net_key))
        if self.config.init is not None:
            _load_layers(network, self.config.init, self.central, self.config.value_unit)
        params = nnx.split(network)[1]
        shapes = jax.eval_shape(jax.vmap(self.env.init), jax.random.split(key, self.config.num_envs))
        games = jax.tree.map(lambda leaf: jnp.zeros(leaf.shape, leaf.dtype), shapes)
        games = games.replace(terminated=jnp.ones(self.config.num_envs, bool))
        magnet = None
        if self.config.magnet_coef > 0:
            # A copy, not the same buffers: the training function donates the runner's arrays.
            copy = jax.tree.map(jnp.copy, params) if self.config.magnet == "moving_average" else None
            magnet = Magnet(jnp.zeros((), jnp.int32), copy)
        past = None
        if self.has_past:
            size = self.config.past_pool
            stacked = jax.tree.map(lambda leaf: jnp.broadcast_to(leaf, (size, *leaf.shape)).copy(), params)
            # Separate buffers: the training function donates the runner's arrays.
            past = Past(stacked, jnp.ones((), jnp.int32), jnp.ones((), jnp.int32),
                        jnp.zeros(self.config.num_envs, jnp.int32))
        return Runner(params, self.optimizer.init(params), games, key, jnp.zeros((), jnp.int32), magnet, past)

    def _env_step(
        self, params: nnx.State, past: Past | None, games: Any, key: jax.Array
    ) -> tuple[tuple[Any, jax.Array | None], Transition]:
        """Games that ended are dealt anew (a ``past`` slot draws its past self for the hand),
        then every game takes one action (the learner's or an opponent's); returns the games and
        each game's past self with the step."""
        policy_key, random_key, reset_key, past_key = jax.random.split(key, 4)
        n = self.config.num_envs
        fresh = jax.vmap(self.env.init)(jax.random.split(reset_key, n))
        ended = games.terminated | games.truncated
        games = jax.tree.map(lambda new, old: jnp.where(_rows(ended, new), new, old), fresh, games)
        mask = games.legal_action_mask
        inputs, state = self.views(games, games.observation, mask, games.current_player)
        logits, value = self.apply(params, inputs, state)
        log_probs = jax.nn.log_softmax(jnp.where(mask, logits, MASKED_LOGIT))
        sampled = jax.random.categorical(policy_key, log_probs).astype(jnp.int32)
        choice = None
        by_past = sampled
        if past is not None:
            draw_key, play_key = jax.random.split(past_key)
            choice = jnp.where(ended, jax.random.randint(draw_key, (n,), 0, past.held), past.choice)
            # Every past self's logits for the past slots' games, then each game's own: a few
            # forward passes cost less than gathering a network per game.
            rows = self.past_slots
            every = jax.vmap(lambda weights: nnx.merge(self.graphdef, weights).policy(inputs[rows]))(past.params)
            past_logits = jnp.take_along_axis(every, choice[rows][None, :, None], axis=0)[0]
            past_logits = jnp.where(mask[rows], past_logits, MASKED_LOGIT)
            by_past = sampled.at[rows].set(jax.random.categorical(play_key, past_logits).astype(jnp.int32))
        by_kind = jnp.stack([heaviest_action(mask, self.game), random_action(random_key, mask), sampled, by_past])
        learner_turn = games.current_player == LEARNER
        action = jnp.where(learner_turn, sampled, by_kind[self.opponent, jnp.arange(n)])
        after = jax.vmap(self.env.step)(games, action)
        transition = Transition(
            inputs=inputs,
            mask=mask,
            action=action,
            log_prob=jnp.take_along_axis(log_probs, action[:, None], axis=1)[:, 0],
            value=value,
            reward=after.rewards[:, LEARNER] * self.config.reward_scale,
            done=after.terminated | after.truncated,
            decision=learner_turn & (mask.sum(-1) > 1),
            state=state,
        )
        return (after, choice), transition

    def _advantages(self, rollout: Transition, last_value: jax.Array) -> jax.Array:
        """GAE over the learner's decisions only, ``(num_steps, num_envs)`` (0 elsewhere).

        A decision's reward is the learner's reward from its own action up to its next decision
        (opponents' and forced moves fold into it); an episode ending in between cuts the
        bootstrap, and whatever follows the end belongs to the next episode.
        """
        gamma, lam = self.config.gamma, self.config.gae_lambda

        def backwards(
            carry: tuple[jax.Array, ...], step: Transition
        ) -> tuple[tuple[jax.Array, ...], jax.Array]:
            segment_reward, segment_done, next_value, next_advantage = carry
            segment_reward = jnp.where(step.done, step.reward, step.reward + segment_reward)
            segment_done = step.done | segment_done
            live = 1.0 - segment_done
            delta = segment_reward + gamma * next_value * live - step.value
            advantage = delta + gamma * lam * live * next_advantage
            zero = jnp.zeros_like(segment_reward)
            carry = (
                jnp.where(step.decision, zero, segment_reward),
                jnp.where(step.decision, False, segment_done),
                jnp.where(step.decision, step.value, next_value),
                jnp.where(step.decision, advantage, next_advantage),
            )
            return carry, jnp.where(step.decision, advantage, 0.0)

        zero = jnp.zeros_like(last_value)
        start = (zero, jnp.zeros(last_value.shape, bool), last_value, zero)
        return jax.lax.scan(backwards, start, rollout, reverse=True)[1]

    def _loss(
        self, params: nnx.State, batch: Transition, advantages: jax.Array, targets: jax.Array,
        magnet: tuple[jax.Array, nnx.State | None] | None = None, learning: jax.Array | float = 1.0,
    ) -> tuple[jax.Array, tuple[jax.Array, ...]]:
        """PPO's loss on a minibatch; with ``magnet`` ``(weight, magnet parameters or None for the
        uniform magnet)``, plus ``weight * KL(policy || magnet)`` (magnetic mirror descent).
        ``learning`` weighs every term that moves the policy (0 while ``critic_warmup`` holds it:
        the two networks share no parameter, so the policy's gradient is then exactly zero)."""
        config = self.config
        logits, value = self.apply(params, batch.inputs, batch.state)
        log_probs = jax.nn.log_softmax(jnp.where(batch.mask, logits, MASKED_LOGIT))
        log_prob = jnp.take_along_axis(log_probs, batch.action[:, None], axis=1)[:, 0]
        ratio = jnp.exp(log_prob - batch.log_prob)
        clipped = jnp.clip(ratio, 1 - config.clip_coef, 1 + config.clip_coef)
        policy_loss = -jnp.minimum(ratio * advantages, clipped * advantages)
        value_clipped = batch.value + jnp.clip(value - batch.value, -config.clip_coef, config.clip_coef)
        value_loss = 0.5 * jnp.maximum((value - targets) ** 2, (value_clipped - targets) ** 2)
        entropy = -(jnp.exp(log_probs) * log_probs).sum(-1)
        weight = batch.decision / jnp.maximum(batch.decision.sum(), 1)
        parts = tuple((weight * part).sum() for part in (policy_loss, value_loss, entropy))
        total = learning * (parts[0] - config.ent_coef * parts[2]) + config.vf_coef * parts[1]
        if magnet is None:
            return total, (*parts, jnp.zeros(()))
        coef, magnet_params = magnet
        magnet_log_probs = None
        if magnet_params is not None:
            magnet_logits = nnx.merge(self.graphdef, magnet_params).policy(batch.inputs)
            magnet_log_probs = jax.lax.stop_gradient(
                jax.nn.log_softmax(jnp.where(batch.mask, magnet_logits, MASKED_LOGIT))
            )
        kl = (weight * magnet_kl(log_probs, batch.mask, magnet_log_probs)).sum()
        return total + learning * coef * kl, (*parts, kl)

    # -- one update, and a chunk of them

    def update(self, runner: Runner, _: Any = None) -> tuple[Runner, Metrics]:
        """Roll out ``num_steps`` actions in every game, then the PPO epochs on the learner's decisions."""
        config = self.config
        key, rollout_key, select_key, shuffle_key = jax.random.split(runner.key, 4)

        past = runner.past

        def rollout_step(carry: tuple[Any, jax.Array | None], step_key: jax.Array) -> tuple[Any, Transition]:
            games, choice = carry
            playing = None if past is None else past._replace(choice=choice)
            return self._env_step(runner.params, playing, games, step_key)

        (games, choice), rollout = jax.lax.scan(
            rollout_step, (runner.games, None if past is None else past.choice),
            jax.random.split(rollout_key, config.num_steps),
        )
        # Bootstrap from the learner's own view of where each game stands (its mask is all zero
        # when another seat is to act, as in the AEC environment).
        own_mask = games.legal_action_mask & (games.current_player == LEARNER)[:, None]
        learner = jnp.full(config.num_envs, LEARNER, jnp.int32)
        own_view = jax.vmap(self.env.observe)(games, learner)
        last_value = self.apply(runner.params, *self.views(games, own_view, own_mask, learner))[1]
        advantages = self._advantages(rollout, last_value)
        targets = advantages + rollout.value
        decisions = rollout.decision
        count = jnp.maximum(decisions.sum(), 1)
        mean = (advantages * decisions).sum() / count
        std = jnp.sqrt((((advantages - mean) * decisions) ** 2).sum() / count)
        normalised = (advantages - mean) / (std + 1e-8)

        # Only the learner's decisions train: gather them (in random order) into a fixed number
        # of rows, so the epochs do not spend their work on opponents' and forced moves. Rows
        # left over are other steps, weighted 0 in the loss; decisions beyond the rows are dropped.
        rows = config.env_steps_per_update
        shuffled = jax.random.permutation(select_key, rows)
        chosen = shuffled[jnp.argsort(~decisions.reshape(-1)[shuffled], stable=True)[: config.sample_rows]]
        flat, flat_advantages, flat_targets = jax.tree.map(
            lambda x: x.reshape((rows,) + x.shape[2:])[chosen], (rollout, normalised, targets)
        )
        grad_fn = jax.value_and_grad(self._loss, has_aux=True)
        magnet = runner.magnet
        magnet_args = None
        if magnet is not None:
            weight = magnet_weight(config.magnet_coef, config.magnet_schedule, magnet.update, config.updates)
            magnet_args = (weight, magnet.params)

        learning = (runner.update >= config.critic_warmup).astype(jnp.float32)
        opt_state = runner.opt_state
        if config.critic_warmup:
            # Adam's moments start again when the policy starts learning: its step count ran on
            # through the warm-up with zero gradients, which would scale the first steps up.
            restarted = _restart_moments(opt_state, self.optimizer.init(runner.params))
            opt_state = jax.tree.map(lambda new, old: jnp.where(runner.update == config.critic_warmup, new, old),
                                     restarted, opt_state)

        def epoch(carry: tuple[nnx.State, optax.OptState], epoch_key: jax.Array) -> tuple[Any, Any]:
            order = jax.random.permutation(epoch_key, config.sample_rows)

            def split(x: jax.Array) -> jax.Array:
                return x[order].reshape((config.num_minibatches, -1) + x.shape[1:])

            batches = (jax.tree.map(split, flat), split(flat_advantages), split(flat_targets))

            def minibatch(carry: tuple[nnx.State, optax.OptState], batch: Any) -> tuple[Any, Any]:
                params, opt_state = carry
                (loss, parts), grads = grad_fn(params, *batch, magnet_args, learning)
                updates, opt_state = self.optimizer.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), (loss, *parts)

            return jax.lax.scan(minibatch, carry, batches)

        (params, opt_state), losses = jax.lax.scan(
            epoch, (runner.params, opt_state), jax.random.split(shuffle_key, config.update_epochs)
        )
        loss, policy_loss, value_loss, entropy, kl = (part.mean() for part in losses)
        if magnet is not None:
            magnet = Magnet(magnet.update + 1, _trail(magnet.params, params, config.magnet_rate))
        update = runner.update + 1
        if past is not None:
            past = _remember(past._replace(choice=choice), params, update % config.past_every == 0)
        kind = jax.nn.one_hot(self.opponent, len(OPPONENTS))  # (num_envs, 4)
        ended = rollout.done.astype(jnp.float32)
        points = rollout.reward / config.reward_scale * ended
        metrics = Metrics(
            loss=loss,
            policy_loss=policy_loss,
            value_loss=value_loss,
            entropy=entropy,
            magnet_kl=kl,
            decisions=decisions.sum(),
            dropped=jnp.maximum(decisions.sum() - config.sample_rows, 0),
            hands=ended.sum(0) @ kind,
            wins=(points > 0).astype(jnp.float32).sum(0) @ kind,
            points=points.sum(0) @ kind,
        )
        return Runner(params, opt_state, games, key, update, magnet, past), metrics

    def train_chunk(self, runner: Runner) -> tuple[Runner, Metrics]:
        """``config.chunk`` updates in one ``lax.scan`` (jit this), metrics stacked per update."""
        return jax.lax.scan(self.update, runner, None, length=self.config.chunk)

    def compile(self, runner: Runner, compiler_options: dict[str, Any] | None = None) -> Any:
        """:meth:`train_chunk` jitted and compiled for ``runner``'s shapes, once per trainer."""
        if self._compiled is None:
            jitted = jax.jit(self.train_chunk, donate_argnums=0)
            self._compiled = jitted.lower(runner).compile(compiler_options)
        return self._compiled


def _restart_moments(state: optax.OptState, fresh: optax.OptState) -> optax.OptState:
    """``state`` with every Adam state (moments and step count) taken from ``fresh``; the
    learning-rate schedule's count and the rest kept."""

    def is_adam(node: Any) -> bool:
        return isinstance(node, optax.ScaleByAdamState)

    return jax.tree.map(lambda old, new: new if is_adam(old) else old, state, fresh, is_leaf=is_adam)


def magnet_kl(log_probs: jax.Array, mask: jax.Array, magnet_log_probs: jax.Array | None) -> jax.Array:
    """``KL(policy || magnet)`` over the legal actions, per row: ``sum_a p(a) (log p(a) - log q(a))``
    with ``q`` the magnet's masked softmax, or uniform over the legal actions (``None``:
    ``log q(a) = -log(legal actions)``). ``log_probs`` are the policy's masked log-softmax."""
    if magnet_log_probs is None:
        magnet_log_probs = jnp.broadcast_to(-jnp.log(mask.sum(-1, keepdims=True)), log_probs.shape)
    terms = jnp.exp(log_probs) * (log_probs - magnet_log_probs)
    return jnp.where(mask, terms, 0.0).sum(-1)


def _trail(magnet: nnx.State | None, params: nnx.State, rate: float) -> nnx.State | None:
    """The moving magnet after an update: ``(1 - rate) magnet + rate params``, each parameter."""
    if magnet is None:
        return None
    return jax.tree.map(lambda old, new: (1 - rate) * old + rate * new, magnet, params)


def _load_layers(network: ActorCritic, path: str, central: bool, value_unit: float) -> None:
    """The policy network of the policy file ``path`` into ``network`` (its shapes checked by the
    config), and its value network too where it has one of the same shapes and unit (zero-sum
    points per unit: otherwise its numbers would mean other values) and the critic is the
    player's own; a central critic reads more and starts fresh."""
    from agents.policy_network import load_policy

    weights = load_policy(path).weights

    def fill(mlp: Any, layers: Any) -> None:
        for layer, (weight, bias) in zip(mlp.layers, layers, strict=True):
            layer.kernel[...] = jnp.asarray(weight.T)
            layer.bias[...] = jnp.asarray(bias)

    fill(network.policy, weights.policy)
    value = weights.value
    if central or value is None or weights.value_unit != value_unit:
        return
    if [weight.T.shape for weight, _ in value] == [layer.kernel[...].shape for layer in network.value.layers]:
        fill(network.value, value)


def _remember(past: Past, params: nnx.State, take: jax.Array) -> Past:
    """The pool after an update: where ``take``, ``params`` copied into row ``taken % past_pool``
    (the oldest copy once the pool is full)."""
    size = jax.tree.leaves(past.params)[0].shape[0]
    row = past.taken % size
    stacked = jax.tree.map(
        lambda pool, leaf: jnp.where(take, pool.at[row].set(leaf), pool), past.params, params
    )
    taken = past.taken + take.astype(jnp.int32)
    return past._replace(params=stacked, held=jnp.minimum(taken, size), taken=taken)


def _rows(condition: jax.Array, like: jax.Array) -> jax.Array:
    """``condition`` ``(n,)`` shaped to broadcast against ``like`` ``(n, ...)``."""
    return condition.reshape(condition.shape + (1,) * (like.ndim - 1))


# ---------------------------------------------------------------------------- a run


@dataclasses.dataclass
class Result:
    """What :func:`train` returns: the final parameters, every update's metrics and the timings."""

    trainer: Trainer
    params: nnx.State
    metrics: Metrics  # numpy arrays, one row per update
    env_steps: int
    compile_seconds: float
    train_seconds: float  # wall time of the updates, compilation excluded
    wall_seconds: float  # the whole run, compilation included
    cpu_seconds: float  # CPU time (all threads; train.meter.cpu_seconds), compilation included, a resumed run's earlier processes too

    @property
    def steps_per_second(self) -> float:
        return self.env_steps / self.train_seconds


@dataclasses.dataclass(frozen=True)
class Progress:
    """Where a run stands: what a checkpoint holds beside the runner."""

    updates: int  # updates done
    train_seconds: float  # wall seconds of the updates so far (compiling and on_chunk excluded)
    cpu_seconds: float  # CPU seconds of the processes so far (compiling included)


def save_state(path: Path, runner: Runner, progress: Progress, extra: dict[str, np.ndarray] | None = None) -> None:
    """The run's checkpoint ``path`` (one ``.npz``, written atomically): every array of ``runner``
    (``leaf_0000``, ...; the generator key as its raw words), ``progress``'s numbers, and ``extra``
    arrays of the caller's (names without the ``leaf_`` prefix)."""
    from draw_env.io.files import atomic_path

    arrays = {f"leaf_{i:04d}": np.asarray(leaf) for i, leaf in enumerate(_plain_leaves(runner))}
    arrays.update(
        updates=np.int64(progress.updates), train_seconds=np.float64(progress.train_seconds),
        cpu_seconds=np.float64(progress.cpu_seconds), **(extra or {}),
    )
    with atomic_path(path) as temporary:  # keeps the suffix: np.savez adds none to a .npz name
        np.savez(temporary, **arrays)


def load_state(
    path: Path, template: Runner, extra: dict[str, tuple[str, int]] | None = None
) -> tuple[Runner, Progress, dict[str, np.ndarray]]:
    """The checkpoint :func:`save_state` wrote, checked before use: exactly the arrays of
    ``template`` (a fresh runner of the same settings), each of its shape and dtype, and the
    ``extra`` arrays named ``{name: (dtype, max length)}`` (one-dimensional). Read without pickle,
    its size bounded by what those arrays take.

    Raises:
        ValueError: naming the file and the array, for anything else.
    """
    from draw_env.io.untrusted import read_npz

    leaves = _plain_leaves(template)
    expected = {f"leaf_{i:04d}": (leaf.shape, np.dtype(leaf.dtype)) for i, leaf in enumerate(leaves)}
    scalars = {"updates": np.dtype(np.int64), "train_seconds": np.dtype(np.float64), "cpu_seconds": np.dtype(np.float64)}
    extra = extra or {}

    def check(headers: dict[str, Any]) -> None:
        names = set(expected) | set(scalars) | set(extra)
        if set(headers) != names:
            missing, unknown = sorted(names - set(headers)), sorted(set(headers) - names)
            raise ValueError(f"arrays must be the runner's of these settings: missing {missing}, unknown {unknown}")
        for name, (shape, dtype) in expected.items():
            if tuple(headers[name].shape) != tuple(shape) or headers[name].dtype != dtype:
                raise ValueError(f"{name} must be {dtype} of shape {tuple(shape)} for these settings, got "
                                 f"{headers[name].dtype} {tuple(headers[name].shape)}")
        for name, dtype in scalars.items():
            if headers[name].shape != () or headers[name].dtype != dtype:
                raise ValueError(f"{name} must be a {dtype} number")
        for name, (dtype, longest) in extra.items():
            header = headers[name]
            if header.dtype != np.dtype(dtype) or len(header.shape) != 1 or header.shape[0] > longest:
                raise ValueError(f"{name} must be {dtype} of one dimension, at most {longest} long")

    limit = sum(int(np.prod(shape)) * dtype.itemsize for shape, dtype in expected.values())
    limit += sum(np.dtype(dtype).itemsize * longest for dtype, longest in extra.values()) + 1024 * 1024
    arrays = read_npz(path, check, max_bytes=limit)
    progress = Progress(int(arrays["updates"]), float(arrays["train_seconds"]), float(arrays["cpu_seconds"]))
    for name in ("train_seconds", "cpu_seconds"):
        if not (np.isfinite(arrays[name]) and arrays[name] >= 0):
            raise ValueError(f"{path}: {name} must be a finite number >= 0")
    if progress.updates < 0:
        raise ValueError(f"{path}: updates must be >= 0")
    restored = [jnp.asarray(arrays[f"leaf_{i:04d}"]) for i in range(len(leaves))]
    treedef = jax.tree.structure(template)
    key_slots = [i for i, leaf in enumerate(jax.tree.leaves(template)) if _is_key(leaf)]
    for i in key_slots:
        restored[i] = jax.random.wrap_key_data(restored[i])
    return jax.tree.unflatten(treedef, restored), progress, {name: arrays[name] for name in extra}


def check_progress(progress: Progress, config: JaxPPOConfig) -> None:
    """A checkpoint's progress that ``config``'s run can continue from: whole chunks, within its updates.

    Raises:
        ValueError: saying which.
    """
    if progress.updates % config.chunk or progress.updates > config.updates:
        raise ValueError(f"updates must be a multiple of chunk ({config.chunk}) at most {config.updates}, "
                         f"got {progress.updates}")


def _is_key(leaf: Any) -> bool:
    return jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)


def _plain_leaves(runner: Runner) -> list[Any]:
    """The runner's arrays, a generator key as its raw words (an ``.npz`` holds plain arrays)."""
    return [jax.random.key_data(leaf) if _is_key(leaf) else leaf for leaf in jax.tree.leaves(runner)]


def train(
    config: JaxPPOConfig,
    progress: bool = True,
    compiler_options: dict[str, Any] | None = None,
    trainer: Trainer | None = None,
    on_chunk: Callable[[int, float, nnx.State], None] | None = None,
    start: tuple[Runner, Progress] | None = None,
    save: Callable[[Runner, Progress], None] | None = None,
) -> Result:
    """Train with ``config``: compile once, run ``updates / chunk`` jitted chunks, print progress.

    Args:
        config: the settings.
        progress: print a line after each chunk.
        compiler_options: for XLA (e.g. ``{"xla_backend_optimization_level": 0}`` compiles
            faster and runs slower, for short runs).
        trainer: a trainer built for the same settings but perhaps another seed, whose compiled
            function is reused (``Result.trainer`` of an earlier run).
        on_chunk: called after each chunk with the updates done, the training seconds so far
            and the parameters (an evaluation); its time is not counted as training.
        start: a checkpoint's runner and progress to continue from (:func:`load_state`): the
            run goes on as if never stopped, its seconds added to those.
        save: called after each chunk (after ``on_chunk``) with the runner and the progress,
            to write a checkpoint (:func:`save_state`).
    """
    wall_start, cpu_start = time.perf_counter(), cpu_seconds()
    if trainer is None:
        trainer = Trainer(config)
    elif {**trainer.config.training(), "seed": config.seed} != config.training():
        raise ValueError("the trainer was built for other settings than config (the seed may differ)")
    chunks = config.updates // config.chunk
    runner, before = start if start is not None else (trainer.init(jax.random.key(config.seed)), Progress(0, 0.0, 0.0))
    check_progress(before, config)
    compiled = trainer.compile(runner, compiler_options)
    compile_seconds = time.perf_counter() - wall_start
    if progress:
        print(
            f"{config.num_players} players{config.variant_text()}, {config.num_envs} games x "
            f"{config.num_steps} actions a "
            f"update, {config.updates} updates, opponents {', '.join(config.opponents)}; "
            f"backend {jax.default_backend()}, compiled in {compile_seconds:.1f} s",
            flush=True,
        )
    history: list[Metrics] = []
    train_start = time.perf_counter() - before.train_seconds
    outside = 0.0  # seconds spent in on_chunk and save
    for index in range(before.updates // config.chunk, chunks):
        runner, metrics = compiled(runner)
        metrics = jax.device_get(metrics)
        history.append(metrics)
        if progress:
            done = (index + 1) * config.chunk
            seconds = time.perf_counter() - train_start - outside
            steps = done * config.env_steps_per_update
            magnet = f"  magnet KL {metrics.magnet_kl.mean():.3f}" if config.magnet_coef > 0 else ""
            print(
                f"update {done:>5}/{config.updates}  env steps {steps:>11,}  "
                f"{steps / seconds:>9,.0f}/s  loss {metrics.loss.mean():+.3f}  entropy "
                f"{metrics.entropy.mean():.2f}{magnet}  {_against(metrics)}",
                flush=True,
            )
        started = time.perf_counter()
        if on_chunk is not None:
            on_chunk((index + 1) * config.chunk, started - train_start - outside, runner.params)
        if save is not None:
            save(runner, Progress((index + 1) * config.chunk, started - train_start - outside,
                                  before.cpu_seconds + cpu_seconds() - cpu_start))
        outside += time.perf_counter() - started
    jax.block_until_ready(runner.params)
    end = time.perf_counter()
    if not history:  # a checkpoint of the last update: nothing left to run, no update's metrics
        shapes = jax.eval_shape(trainer.update, runner)[1]
        history.append(Metrics(*(np.zeros((0, *leaf.shape), leaf.dtype) for leaf in shapes)))
    stacked = Metrics(*(np.concatenate([getattr(m, name) for m in history]) for name in Metrics._fields))
    return Result(
        trainer=trainer,
        params=runner.params,
        metrics=stacked,
        env_steps=config.updates * config.env_steps_per_update,
        compile_seconds=compile_seconds,
        train_seconds=end - train_start - outside,
        wall_seconds=end - wall_start,
        cpu_seconds=before.cpu_seconds + cpu_seconds() - cpu_start,
    )


def _against(metrics: Metrics) -> str:
    """``vs heaviest 61% +3.2`` per opponent kind: hands won and mean zero-sum points a hand."""
    hands, wins, points = (np.asarray(x).sum(0) for x in (metrics.hands, metrics.wins, metrics.points))
    parts = [
        f"vs {name} {wins[i] / hands[i]:.0%} {points[i] / hands[i]:+.1f}"
        for i, name in enumerate(OPPONENTS)
        if hands[i]
    ]
    return "  ".join(parts) if parts else "no hand finished yet"


def _variant_flags(game: DrawGame) -> str:
    """``draw-eval``'s flags of a variant (`` --max-pip 3 ...``), nothing for the seeds' game."""
    return "" if game.is_default else "".join(
        f" --{key.replace('_', '-')} {value}" for key, value in game.variant.items()
    )


def summary(result: Result, output: Path | None) -> str:
    """The readable end-of-run report."""
    config, tail = result.trainer.config, max(1, len(result.metrics.loss) // 10)
    last = Metrics(*(np.asarray(x)[-tail:] for x in result.metrics))
    beyond = int(result.metrics.dropped.sum())
    dropped = f", {beyond:,} of them beyond the updates' rows and left out" if beyond else ""
    lines = [
        "",
        "Summary",
        f"  environment steps   {result.env_steps:,} (every seat's actions; "
        f"{int(result.metrics.decisions.sum()):,} learner decisions{dropped})",
        f"  steps per second    {result.steps_per_second:,.0f} (training only; backend {jax.default_backend()})",
        f"  wall time           {result.wall_seconds:.1f} s ({result.compile_seconds:.1f} s compiling)",
        f"  CPU time            {result.cpu_seconds:.1f} s (this process, all threads)",
        f"  last {tail} updates    {_against(last)} (hands won, mean zero-sum points; sampled play)",
    ]
    if output is not None:
        spec = f"ppo:path={output}"
        lines += [
            f"  policy file         {output} (+ {output.with_suffix('.json').name})",
            "  evaluate it in duplicate matches with:",
            *(
                f'    draw-eval "{spec}"{f" {name}" * (config.num_players - 1)}{_variant_flags(result.trainer.game)}'
                " --games 1000 --seed 0"
                for name in ("random", "heaviest")
            ),
        ]
    return "\n".join(lines)
