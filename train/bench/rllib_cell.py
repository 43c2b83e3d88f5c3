"""RLlib PPO as a benchmark algorithm: a cell trained in the interpreter that has RLlib.

RLlib pins gymnasium 1.2.x, so it lives in its own virtual environment (``make integrations-env``:
``.venv-rllib``). :func:`run_in_rllib_interpreter` (main interpreter) writes the cell as a request
file in the work folder and runs ``python -m train.bench.rllib_cell REQUEST`` there; that process
(:func:`train_cell`) maps the cell onto the RLlib pipeline's config (:class:`train.rllib.config.RLlibConfig`)
and calls the learner :func:`train.rllib.learner.train`, saving the policy of each curve point as a
project policy file (:func:`train.rllib.learner.policy_weights`: the ``scaled`` features, the
game's variant recorded). The cell's game,
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

from draw_env.io.files import write_json_atomic, write_text_atomic
from train.bench.protocol import Cell, Checkpoint, Policy
from train.meter import Budget
from train.policies import NetworkPolicy
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


def train_cell(request_path: Path) -> None:
    """The RLlib process: train the request's cell, write ``result.json`` beside it."""
    from train.config import build
    from train.rllib.config import RLlibConfig
    from train.rllib.learner import train

    request = json.loads(request_path.read_text())
    work = Path(request["work"])
    settings = dict(request["settings"])
    env = {**settings.get("env", {}), "num_players": request["num_players"], **request["variant"],
           "episode": request["episode"]}
    data = {**settings, "seed": request["seed"], "output_dir": str(work / "rllib"), "env": env}
    points: list[dict[str, Any]] = []

    def save(steps: int, seconds: float, policy: NetworkPolicy) -> None:
        path = policy.network.save(work / "curve" / f"rllib_{len(points)}.npz")
        points.append({"env_steps": steps, "cpu_seconds": round(seconds, 3), "path": str(path)})

    train(build(RLlibConfig, data), Budget(**request["budget"]), save, points=request["curve_points"],
          provenance={"trained_by": "draw-bench (rllib_ppo)"})
    from train.bench.records import versions

    write_json_atomic(work / "result.json", {"points": points, "versions": versions("rllib_ppo")}, indent=1)


if __name__ == "__main__":
    train_cell(Path(sys.argv[1]))
