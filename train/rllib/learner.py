"""RLlib PPO as a learner: :func:`train` trains the multi-agent PPO of :mod:`train.rllib.run` on a
local Ray instance until a budget and returns the learner's networks as a policy, converted by
:func:`policy_weights` (the one place an RLlib module becomes a project policy file).

Runs in the interpreter that has RLlib (``.venv-rllib``). An environment step is RLlib's
``num_env_steps_sampled_lifetime`` (every seat's actions); the budget is checked after each RLlib
iteration, and a point falls at the first iteration that reaches it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.policy_file import PolicyWeights
from draw_env.rules import DrawGame
from train.meter import Budget, Checkpoint, Meter
from train.policies import NetworkPolicy
from train.rllib.config import RLlibConfig


def policy_weights(module: Any, activation: str, game: DrawGame, provenance: dict[str, Any],
                   value_unit: float | None = None) -> PolicyWeights:
    """The learner module's actor (encoder then ``pi``) and critic (encoder then ``vf``) as the
    weights of a policy file of ``game`` (its table and variant recorded, and ``value_unit``:
    zero-sum hand points per unit of the critic's output), inputs the ``scaled`` features (RLlib's
    module divides the observation by the game's upper bounds, as they do).

    Raises:
        ValueError: for a module whose networks are not these MLPs (``vf_share_layers: true``).
    """
    state = {name: value.detach().cpu().numpy() for name, value in module.state_dict().items()}

    def layers(*prefixes: str) -> tuple[tuple[Any, Any], ...]:
        found = []
        for prefix in prefixes:
            indices = sorted({int(name[len(prefix):].split(".")[0]) for name in state
                              if name.startswith(prefix) and name.endswith(".weight")})
            if not indices:
                raise ValueError(f"the RLlib module has no layers {prefix}* (vf_share_layers must be false)")
            found += [(state[f"{prefix}{i}.weight"], state[f"{prefix}{i}.bias"]) for i in indices]
        return tuple(found)

    return PolicyWeights(
        policy=layers("encoder.actor_encoder.net.mlp.", "pi.net.mlp."),
        value=layers("encoder.critic_encoder.net.mlp.", "vf.net.mlp."),
        activation=activation, features="scaled", num_players=game.num_players, provenance=provenance,
        variant=game.variant, value_unit=value_unit,
    )


def train(
    config: RLlibConfig,
    budget: Budget,
    on_checkpoint: Checkpoint | None = None,
    *,
    points: int = 1,
    provenance: Mapping[str, Any] | None = None,
) -> NetworkPolicy:
    """RLlib PPO with ``config`` (its ``iterations`` do not bound the run, ``budget`` does) on a new
    local Ray instance, shut down at the end; ``on_checkpoint`` at ``points`` evenly over the budget.
    ``provenance``: added to each policy's weights (with the environment steps)."""
    import ray

    from train.rllib.run import build_algorithm_config

    settings, game = config.to_dict(), config.env.game()
    meter = Meter(budget, points, on_checkpoint)
    steps = 0
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    try:
        algorithm = build_algorithm_config(settings).build_algo()

        def policy() -> NetworkPolicy:
            return NetworkPolicy(policy_weights(algorithm.get_module("learner"), settings["model"]["fcnet_activation"],
                                                game, {**(provenance or {}), "env_steps": steps},
                                                config.env.value_unit))

        try:
            while not meter.spent(steps):
                meter.start()
                result = algorithm.train()
                meter.stop()
                steps = int(result.get("num_env_steps_sampled_lifetime", 0))
                meter.reached(steps, policy)
            return meter.finish(steps, policy())
        finally:
            algorithm.stop()
    finally:
        ray.shutdown()
