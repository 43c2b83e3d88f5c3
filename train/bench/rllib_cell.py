"""RLlib PPO as a benchmark algorithm: a cell trained in the interpreter that has RLlib.

RLlib pins gymnasium 1.2.x, so it lives in its own virtual environment (``make integrations-env``:
``.venv-rllib``). :func:`run_in_rllib_interpreter` (main interpreter) writes the cell as a request
file in the work folder and runs ``python -m train.bench.rllib_cell REQUEST`` there; that process
(:func:`train_cell`) builds the pipeline's ``PPOConfig`` (:func:`train.rllib.run.build_algorithm_config`,
the config checked by :class:`train.rllib.config.RLlibConfig`), trains one RLlib iteration after
another on a local Ray instance until the budget is spent, and at each curve point exports the
learner's networks as a project policy file (the ``scaled`` features: RLlib's module divides the
observation by the game's upper bounds, as they do), recording the game's variant. The cell's game,
variant and episode (``hand`` for micro and mini, ``match`` for draw2/3/4) replace the settings'
``env`` keys. Back in the main interpreter, the curve's policy files are measured like any other
network's.

Environment steps are RLlib's ``num_env_steps_sampled_lifetime`` (every seat's actions). CPU
seconds are the training process's own: with ``env_runners.num_env_runners: 0`` (the benchmark's
settings) sampling and learning both run there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import Field

from draw_env.files import write_json_atomic, write_text_atomic
from draw_env.rules import DrawGame
from train.bench.protocol import Budget, Cell, Checkpoint, Policy
from train.run_dir import RunFile, read_run_file

#: The repository root (the RLlib interpreter runs there, the project installed in it too).
ROOT = Path(__file__).resolve().parents[2]


class _Point(RunFile):
    env_steps: int = Field(ge=0)
    cpu_seconds: float = Field(ge=0)
    path: str


class _Result(RunFile):
    """``result.json`` of the RLlib process: the curve's policy files, the final one last."""

    points: list[_Point] = Field(min_length=1, max_length=100_000)
    versions: dict[str, str | None]


def run_in_rllib_interpreter(
    cell: Cell, work: Path, checkpoint: Checkpoint, python: str, settings: dict[str, Any]
) -> Policy:
    """Train ``cell`` with RLlib in the interpreter ``python`` (relative to the repository root),
    then call ``checkpoint`` with each curve point's policy; return the final one.

    Raises:
        ValueError: the interpreter is missing, or the process failed.
    """
    from agents.policy_file import load_policy_file
    from train.bench.policies import NetworkPolicy

    interpreter = Path(python) if Path(python).is_absolute() else ROOT / python
    if not interpreter.is_file():
        raise ValueError(f"algorithm 'rllib_ppo' needs the RLlib interpreter {str(interpreter)!r} (make integrations-env)")
    request = {"num_players": cell.game.num_players, "variant": cell.game.variant, "episode": cell.game.episode,
               "seed": cell.seed, "budget": cell.budget.to_dict(), "curve_points": cell.curve_points,
               "settings": settings, "work": str(work.resolve())}
    write_json_atomic(work / "request.json", request, indent=1)
    finished = subprocess.run([str(interpreter), "-m", "train.bench.rllib_cell", str(work / "request.json")],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env={**os.environ, "OMP_NUM_THREADS": "1"}, check=False)
    write_text_atomic(work / "rllib.log", finished.stdout.decode("utf-8", "replace"))
    if finished.returncode != 0:
        raise ValueError(f"the RLlib process of cell {cell.key} ended with status {finished.returncode}: "
                         f"see {work / 'rllib.log'}")
    result: _Result = read_run_file(work / "result.json", _Result)
    policies = [NetworkPolicy(load_policy_file(point.path)) for point in result.points]
    policies[-1].trained_versions = result.versions
    for point, policy in zip(result.points, policies):
        checkpoint(point.env_steps, point.cpu_seconds, policy)
    return policies[-1]


def export(module: Any, activation: str, game: DrawGame, path: Path, provenance: dict[str, Any],
           value_unit: float | None = None) -> Path:
    """The learner module's actor (encoder then ``pi``) and critic (encoder then ``vf``) as the
    policy file ``path`` of ``game`` (its table and variant recorded, and ``value_unit``: zero-sum
    hand points per unit of the critic's output), inputs the ``scaled`` features.

    Raises:
        ValueError: for a module whose networks are not these MLPs (``vf_share_layers: true``).
    """
    from agents.policy_file import PolicyWeights, save_policy_file

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

    weights = PolicyWeights(
        policy=layers("encoder.actor_encoder.net.mlp.", "pi.net.mlp."),
        value=layers("encoder.critic_encoder.net.mlp.", "vf.net.mlp."),
        activation=activation, features="scaled", num_players=game.num_players, provenance=provenance,
        variant=game.variant, value_unit=value_unit,
    )
    return save_policy_file(weights, path)


def train_cell(request_path: Path) -> None:
    """The RLlib process: train the request's cell, write ``result.json`` beside it."""
    import ray

    from train.bench.policies import CurveSchedule, TrainingClock
    from train.config import build
    from train.rllib.config import RLlibConfig
    from train.rllib.run import build_algorithm_config

    request = json.loads(request_path.read_text())
    work = Path(request["work"])
    settings = dict(request["settings"])
    env = {**settings.get("env", {}), "num_players": request["num_players"], **request["variant"],
           "episode": request["episode"]}
    data = {**settings, "seed": request["seed"], "output_dir": str(work / "rllib"), "env": env}
    checked = build(RLlibConfig, data)
    game, config = checked.env.game(), checked.to_dict()
    budget = Budget(**request["budget"])
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    algorithm = build_algorithm_config(config).build_algo()
    clock, schedule = TrainingClock(), CurveSchedule(budget, request["curve_points"])
    points: list[dict[str, Any]] = []
    steps = 0

    def save() -> None:
        path = work / "curve" / f"rllib_{len(points)}.npz"
        export(algorithm.get_module("learner"), config["model"]["fcnet_activation"], game, path,
               {"trained_by": "draw-bench (rllib_ppo)", "env_steps": steps}, checked.env.value_unit)
        points.append({"env_steps": steps, "cpu_seconds": round(clock.seconds, 3), "path": str(path)})

    try:
        while not budget.spent(steps, clock.seconds):
            clock.start()
            result = algorithm.train()
            clock.stop()
            steps = int(result.get("num_env_steps_sampled_lifetime", 0))
            if schedule.due(steps, clock.seconds) and not budget.spent(steps, clock.seconds):
                while schedule.due(steps, clock.seconds):
                    schedule.taken()
                save()
        save()
    finally:
        algorithm.stop()
        ray.shutdown()
    from train.bench.records import versions

    write_json_atomic(work / "result.json", {"points": points, "versions": versions("rllib_ppo")}, indent=1)


if __name__ == "__main__":
    train_cell(Path(sys.argv[1]))
