"""``import draw_env`` never imports JAX: the JAX environment is an extra, loaded only on request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHECK = """
import sys
import draw_env, draw_env.vector, draw_env.engine
print(sorted(name for name in sys.modules if name == "jax" or name.startswith(("jax.", "jaxlib"))))
"""


def test_import_draw_env_does_not_import_jax() -> None:
    output = subprocess.run(
        [sys.executable, "-c", _CHECK], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert output.strip().splitlines()[-1] == "[]"
