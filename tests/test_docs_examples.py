"""The README and the documentation pages tell the truth: their Python examples run and print,
the observation table is the code's, the README's links resolve, and no page cites work notes.

A ```python block is run unless the line before it is ``<!-- no-test: REASON -->`` (an optional
install or a long run; the test is then skipped with that reason). Blocks that are files of
``examples/quickstart/`` run with their real libraries in tests/integrations, and docs/jax.md's
blocks in tests/test_jax.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from draw_env.observation import BLOCKS, OFFSETS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
#: Pages whose examples another test runs, with that test.
RUN_ELSEWHERE = {"jax.md": "tests/test_jax.py (needs JAX)"}
QUICKSTARTS = {
    path.read_text(encoding="utf-8"): path.name for path in (ROOT / "examples" / "quickstart").glob("*.py")
}
BLOCK = re.compile(r"(?:<!-- no-test: (?P<reason>[^\n]*?) -->\n)?```python\n(?P<code>.*?)```", re.DOTALL)
#: README.md may hold at most this many bytes.
README_LIMIT = 15 * 1024


def _examples() -> list[pytest.param]:
    params = []
    for page in PAGES:
        if page.name in RUN_ELSEWHERE:
            continue
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            code, reason = match["code"], match["reason"]
            if code in QUICKSTARTS:
                reason = f"examples/quickstart/{QUICKSTARTS[code]}, run by tests/integrations"
            line = text.count("\n", 0, match.start("code")) + 1
            marks = [pytest.mark.skip(reason=reason)] if reason else []
            params.append(pytest.param(page, line, code, marks=marks, id=f"{page.relative_to(ROOT)}:{line}"))
    return params


@pytest.mark.parametrize(("page", "line", "code"), _examples())
def test_example_runs_and_prints(
    page: Path,
    line: int,
    code: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # examples may write files (game.json)
    source = "\n" * (line - 1) + code  # tracebacks point at the page's own line numbers
    exec(compile(source, str(page.relative_to(ROOT)), "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out.strip(), f"the example at {page.name}:{line} prints its result"


def test_few_examples_are_skipped() -> None:
    """The no-test marker is rare: most examples run."""
    skipped = [
        param for param in _examples() if param.marks and "quickstart" not in param.marks[0].kwargs["reason"]
    ]
    assert len(skipped) <= 3, [param.id for param in skipped]


def test_observation_table_lists_every_block_at_its_offset() -> None:
    text = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+)\.\.(\d+) \| `(\w+)` \| (\d+) \| 0\.\.(\d+) \|", text, re.MULTILINE)
    expected = [
        (
            str(OFFSETS[block.name]),
            str(OFFSETS[block.name] + block.size - 1),
            block.name,
            str(block.size),
            f"{block.high:g}",
        )
        for block in BLOCKS
    ]
    assert rows == expected


def test_readme_is_short_and_names_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= README_LIMIT
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "make test" in quick_start and "make train" in quick_start


def test_readme_links_resolve() -> None:
    """The site's build checks the pages' links; the README is not part of the site."""
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [target for target in targets if not re.match(r"[a-z]+://", target)]
    assert local
    missing = [target for target in local if not (ROOT / target).exists()]
    assert not missing


@pytest.mark.parametrize(
    "page", [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_pages_cite_no_work_notes(page: Path) -> None:
    """Pages describe the project for its users: no contract file outside the repository, no work items."""
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"\bSPEC\b|\.\./shared|\b[Ss]essions?\b|\b[Ii]ssues?\b|\bsection \d", text)
    assert not found
