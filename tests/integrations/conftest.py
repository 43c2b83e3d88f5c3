"""Shared by the integration tests: the example scripts of ``examples/`` (not a package) as modules."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Tianshou JIT-compiles its return computations with numba on first use: 10 s on an idle 2-core
# machine, far more under load, against well under a second of plain Python for the few hundred
# steps the tests run. Read by numba on import, so set before any test imports Tianshou.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")


def load_script(relative_path: str) -> ModuleType:
    """The Python file at ``ROOT / relative_path`` imported as a module named after it."""
    path = ROOT / relative_path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def script() -> Callable[[str], ModuleType]:
    """``script("examples/torchrl_rollouts.py")`` -> the example as a module."""
    return load_script
