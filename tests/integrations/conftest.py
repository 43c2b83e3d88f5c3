"""Shared by the integration tests: the example scripts of ``examples/`` (not a package) as modules."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _import_tianshou_uncompiled() -> None:
    """Import Tianshou's numba functions as plain Python.

    Tianshou JIT-compiles its return computations with numba on first use: 10 s on an idle 2-core
    machine, far more under load, against well under a second of plain Python for the few hundred
    steps the tests run. numba reads ``DISABLE_JIT`` when it decorates a function, so only the
    functions defined during this import stay uncompiled; ``draw_env.engine`` (compiled and
    cached) keeps its machine code. Setting ``NUMBA_DISABLE_JIT`` for the whole process instead
    would run the engine as pure Python in every test.
    """
    try:
        import numba
    except ImportError:
        return
    previous = numba.config.DISABLE_JIT
    numba.config.DISABLE_JIT = True
    try:
        import tianshou.algorithm.algorithm_base  # noqa: F401
        import tianshou.data.buffer.manager  # noqa: F401
        import tianshou.data.utils.segtree  # noqa: F401
    except ImportError:
        pass
    finally:
        numba.config.DISABLE_JIT = previous


_import_tianshou_uncompiled()


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
