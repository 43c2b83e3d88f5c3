"""The README tells the truth: its observation table is the code's, and its examples run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from draw_env.observation import BLOCKS, OFFSETS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# The integration snippets are these files, run by tests/integrations (RLlib in its own venv).
QUICKSTARTS = {path.stem: path.read_text(encoding="utf-8") for path in (ROOT / "examples" / "quickstart").glob("*.py")}


def test_observation_table_lists_every_block_at_its_offset() -> None:
    rows = re.findall(r"^\| (\d+)\.\.(\d+) \| `(\w+)` \| (\d+) \| 0\.\.(\d+) \|", README, re.MULTILINE)
    expected = [
        (str(OFFSETS[block.name]), str(OFFSETS[block.name] + block.size - 1), block.name, str(block.size), f"{block.high:g}")
        for block in BLOCKS
    ]
    assert rows == expected


def _python_examples() -> list[str]:
    """Every ```python block of the README that is a whole program, but the integration snippets."""
    blocks = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    return [
        block
        for block in blocks
        if block.lstrip().startswith(("import", "from")) and block not in QUICKSTARTS.values()
    ]


@pytest.mark.parametrize("example", _python_examples(), ids=lambda text: text.splitlines()[0][:40])
def test_readme_example_runs(example: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(example, "README.md", "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out.strip(), "the example prints its result"


def test_quick_start_names_the_two_commands() -> None:
    quick_start = README.split("## Quick start", 1)[1].split("##", 1)[0]
    assert "make test" in quick_start and "make train" in quick_start


@pytest.mark.parametrize("name", sorted(QUICKSTARTS))
def test_readme_shows_each_integration_snippet_verbatim(name: str) -> None:
    assert f"```python\n{QUICKSTARTS[name]}```" in README
