"""PPO in JAX: ``draw-train --config configs/jax_ppo_quick.yaml`` (a config with ``pipeline: jax_ppo``).

Rollouts and updates in one jitted function on :class:`draw_env.jax.DrawDominoes`
(:mod:`~train.jax_ppo.trainer`), the network, features and JAX opponents
(:mod:`~train.jax_ppo.policy`), the config (:mod:`~train.jax_ppo.config`, no JAX needed) and the
run with its folder and evaluations (:mod:`~train.jax_ppo.run`); see ``docs/jax_training.md``.
"""
