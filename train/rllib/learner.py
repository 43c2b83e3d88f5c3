"""RLlib PPO as a learner: :func:`train` trains the multi-agent PPO of :func:`build_algorithm_config`
on a local Ray instance until a budget and returns the learner's networks as a policy, converted
by :func:`policy_weights` (the one place an RLlib module becomes a project policy file). The loop
is :func:`learn`, which the RLlib command (:mod:`train.rllib.run`) runs for its iterations.

Runs in the interpreter that has RLlib (``.venv-rllib``). An environment step is RLlib's
``num_env_steps_sampled_lifetime`` (every seat's actions); the budget is checked after each RLlib
iteration, and a point falls at the first iteration that reaches it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agents.policy_file import PolicyWeights
from draw_env.rules import DrawGame
from train.meter import Budget, Checkpoint, Meter
from train.policies import NetworkPolicy
from train.rllib.config import RLlibConfig, RLlibPPO

#: A bound on the RLlib iterations of one run.
MAX_ITERATIONS = 1_000_000


def build_algorithm_config(config: Mapping[str, Any]) -> Any:
    """The RLlib ``PPOConfig`` for ``config`` (new API stack, multi-agent, masked)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from integrations.rllib import (
        LEARNER,
        BaselineRLModule,
        DrawMultiAgentEnv,
        MaskedPPOModule,
        SeatMapping,
        opponent_policies,
        spaces,
    )

    env_config = dict(config["env"])
    # Fail here, in the driver, on a bad env config; the modules take its variant's spaces.
    probe = DrawMultiAgentEnv(env_config)
    observation_space, action_space = spaces(probe.game, probe.obs_type)
    opponent_ids, weights = opponent_policies(config["opponents"])
    mapping = SeatMapping(env_config["num_players"], config["learner_seats"], opponent_ids, weights)
    baselines = sorted(
        {policy for policy, weight in zip(opponent_ids, weights) if policy != LEARNER and weight > 0}
    )
    specs = {
        LEARNER: RLModuleSpec(
            module_class=MaskedPPOModule,
            observation_space=observation_space,
            action_space=action_space,
            model_config=DefaultModelConfig(**config["model"]),
        )
    }
    for name in baselines:
        specs[name] = RLModuleSpec(
            module_class=BaselineRLModule,
            observation_space=observation_space,
            action_space=action_space,
            model_config={
                "agent": name,
                "kwargs": {"seed": config["seed"]} if name.startswith("random") else {},
            },
        )
    runners = config["env_runners"]
    return (
        PPOConfig()
        .environment(DrawMultiAgentEnv, env_config=env_config)
        .env_runners(
            num_env_runners=runners["num_env_runners"],
            num_envs_per_env_runner=runners["num_envs_per_env_runner"],
            num_cpus_per_env_runner=runners["num_cpus_per_env_runner"],
        )
        .multi_agent(
            policies={LEARNER, *baselines},
            policy_mapping_fn=mapping,
            policies_to_train=[LEARNER],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(**RLlibPPO.rllib_training(config["ppo"]))
        .debugging(seed=config["seed"])
    )


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

    settings, game = config.to_dict(), config.env.game()
    meter = Meter(budget, points, on_checkpoint)
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    try:
        algorithm = build_algorithm_config(settings).build_algo()

        def policy_of(steps: int) -> NetworkPolicy:
            return NetworkPolicy(policy_weights(algorithm.get_module("learner"), settings["model"]["fcnet_activation"],
                                                game, {**(provenance or {}), "env_steps": steps},
                                                config.env.value_unit))

        try:
            steps = learn(algorithm, meter, policy_of)
            return meter.finish(steps, policy_of(steps))
        finally:
            algorithm.stop()
    finally:
        ray.shutdown()


def learn(
    algorithm: Any,
    meter: Meter | None,
    policy: Callable[[int], NetworkPolicy] | None = None,
    *,
    iterations: int = MAX_ITERATIONS,
    on_iteration: Callable[[Mapping[str, Any]], None] | None = None,
) -> int:
    """The loop of :func:`train`: RLlib iterations (``algorithm.train()``) of the built
    ``algorithm``, at most ``iterations``, until ``meter``'s budget is spent (``None``: the
    iterations alone bound the run, and nothing is checkpointed: the RLlib command's run), each
    meter point with ``policy(env steps)``; ``on_iteration``: called with each iteration's result
    (outside the meter's clock). Returns the environment steps sampled (RLlib's
    ``num_env_steps_sampled_lifetime``); the caller ends the meter (:meth:`Meter.finish`)."""
    steps = 0

    def built() -> NetworkPolicy:
        if policy is None:
            raise ValueError("a meter's checkpoints need the policy of the steps")
        return policy(steps)

    for _ in range(iterations):
        if meter is not None:
            if meter.spent(steps):
                break
            meter.start()
        result = algorithm.train()
        steps = int(result.get("num_env_steps_sampled_lifetime", 0))
        if meter is not None:
            meter.stop()
            meter.reached(steps, built)
        if on_iteration is not None:
            on_iteration(result)
    return steps
