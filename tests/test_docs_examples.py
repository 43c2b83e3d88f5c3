"""The README and the documentation pages tell the truth: their Python examples run and print,
the observation table is the code's, the README's links resolve, their ``draw-eval`` commands
seat each policy at its own table size, they name no retired command, and no page cites work notes.

A ```python block is run unless the line before it is ``<!-- no-test: REASON -->`` (an optional
install or a long run; the test is then skipped with that reason). Blocks that are files of
``examples/quickstart/`` run with their real libraries in tests/integrations, and docs/jax.md's
blocks in tests/test_jax.py.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from draw_env.observation import BLOCKS, OFFSETS, information_layout
from draw_env.rules import DrawGame

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
#: Commands that only name their replacement now, with that replacement.
RETIRED_COMMANDS = {"draw-distill": "draw-train --config configs/distill_2p.yaml"}
#: The packages of the API reference (docs/api.md lists them, one a line).
PACKAGES = re.findall(r"^   (\w+)$", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.MULTILINE)
FENCE = re.compile(r"```[^\n]*\n.*?```", re.DOTALL)


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


def _block_rows(section: str) -> list[tuple[str, ...]]:
    """The rows ``| first..last | `name` | size | 0..high |`` of a section of docs/environment.md."""
    text = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| (\d+)\.\.(\d+) \| `(\w+)` \| (\d+) \| 0\.\.(\d+) \|", body, re.MULTILINE)


def _expected_rows(blocks: tuple, offsets: dict[str, int]) -> list[tuple[str, ...]]:
    return [
        (str(offsets[block.name]), str(offsets[block.name] + block.size - 1), block.name, str(block.size),
         f"{block.high:g}")
        for block in blocks
    ]


def test_observation_table_lists_every_block_at_its_offset() -> None:
    assert _block_rows("Observations") == _expected_rows(BLOCKS, OFFSETS)


def test_information_state_table_lists_every_history_block_at_its_offset() -> None:
    """The table is the 2-player seeds' game's; its text gives the other table sizes' lengths."""
    info = information_layout(DrawGame(2))
    assert _block_rows("Information states") == _expected_rows(info.blocks, info.offsets)
    text = " ".join((ROOT / "docs" / "environment.md").read_text(encoding="utf-8").split())
    for players in (2, 3, 4):
        game = DrawGame(players)
        assert f"`E` = {game.max_hand_actions} and the vector has {information_layout(game).size:,}" in text


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


def _eval_commands(text: str) -> list[str]:
    """The ``draw-eval`` commands of a page: lines of its fenced blocks, and inline code spans."""
    commands = []
    for block in FENCE.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith("draw-eval "):
                commands.append(line)
    for span in re.findall(r"`(draw-eval\s[^`]*)`", FENCE.sub("", text)):
        commands.append(" ".join(span.split()))
    return commands


def _players_of_run_directories() -> dict[str, int]:
    """``runs/NAME`` -> the table size of the config that trains into it."""
    found = {}
    for path in (ROOT / "configs").glob("*.yaml"):
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
        if "output_dir" in config and "num_players" in config:
            found[config["output_dir"]] = config["num_players"]
    return found


def _players_of_policy(path: str, runs: dict[str, int]) -> int | None:
    """The table size a policy file named in a page was trained for, where the project knows it."""
    if path.startswith("agents/policies/") and (ROOT / path).with_suffix(".json").is_file():
        return int(json.loads((ROOT / path).with_suffix(".json").read_text(encoding="utf-8"))["num_players"])
    return runs.get(str(Path(path).parent))


def test_eval_commands_seat_each_policy_at_its_table_size() -> None:
    """A policy trained for n players (a shipped one, or a run of a config) is evaluated at n-player
    tables: ``draw-eval`` seats one agent a seat, so three agents make a 3-player table."""
    from arena.cli import build_parser

    runs = _players_of_run_directories()
    checked, wrong = [], []
    for page in PAGES:
        for command in _eval_commands(page.read_text(encoding="utf-8")):
            paths = re.findall(r"path=([\w./-]+\.npz)", command)
            players = {_players_of_policy(path, runs) for path in paths} - {None}
            if not players:
                continue
            args = build_parser().parse_args(shlex.split(command, comments=True)[1:])
            table = args.players or len(args.agents)
            checked.append(command)
            if players != {table}:
                wrong.append(
                    f"{page.name}: {command!r} plays {sorted(players)}-player policies at {table}-player tables"
                )
    assert any("runs/" in command for command in checked), "the training guides' commands are checked"
    assert not wrong, wrong


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_name_no_retired_command(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    named = [f"{old} (now: {new})" for old, new in RETIRED_COMMANDS.items() if old in text]
    assert not named


def test_makefile_points_to_readme_sections_that_exist() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", README.read_text(encoding="utf-8"), re.MULTILINE)
    pointers = re.findall(r"README(?:'s|\.md)? (.+?) section", " ".join(makefile.split()))
    assert pointers
    assert [pointer for pointer in pointers if pointer not in headings] == []


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("module", _modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_each_module_says_what_it_holds(module: Path) -> None:
    """The API reference lists every package and module with the first line of its docstring."""
    assert PACKAGES
    docstring = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8")))
    assert docstring and docstring.strip()
