"""The programs of ``examples/quickstart/`` run, and ``docs/integrations.md`` shows them verbatim."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"


PRINTED = {
    "registries": "to act; learner observation (340,)",
    "tianshou_collect": "in 10 hands; zero-sum returns:",
    "torchrl_rollout": "steps, all legal: True info keys: ['blocked', 'hand_pips', 'hand_points', 'score']",
}


@pytest.mark.parametrize("name", PRINTED)
def test_quickstart_runs_in_the_main_venv(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(QUICKSTART / f"{name}.py"), run_name="__main__")
    assert PRINTED[name] in capsys.readouterr().out


@pytest.mark.parametrize("path", sorted(QUICKSTART.glob("*.py")), ids=lambda path: path.stem)
def test_docs_show_each_quickstart_verbatim(path: Path) -> None:
    docs = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    assert f"```python\n{path.read_text(encoding='utf-8')}```" in docs
