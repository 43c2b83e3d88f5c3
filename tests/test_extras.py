"""The install: what each command needs is declared, checked when it starts, and installable.

* Each of the eight commands of ``[project.scripts]``, run where the modules of its extra cannot be
  imported, ends with one line naming the extra to install and exit code 2
  (:func:`draw_env.commands.check_extras`); with every *other* extra missing it starts (``--help``),
  so it needs no module outside its declared extra as it loads.
* :data:`draw_env.commands.EXTRA_MODULES` holds modules that the extra of ``pyproject.toml``
  installs, and every third-party module the project's packages import comes from the base
  dependencies or one of the extras; the README's and the Getting started page's table of
  extras lists every extra once and each command in the row of its extra.
* Each extra, resolved alone from the package index, gives releases that work: where it picks a
  release series other than the suite's environment holds, those releases laid over it still let
  every module of the extra import (``make check-extras``: it resolves from PyPI, 7 to 35
  seconds an extra, so it runs only with ``DRAW_CHECK_EXTRAS=1``).

The commands run in fresh interpreters where a finder placed first on ``sys.meta_path`` refuses the
blocked modules, as an interpreter without them installed would.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from draw_env.commands import COMMAND_EXTRAS, EXTRA_MODULES

tomllib = pytest.importorskip("tomllib")  # Python 3.11+: the suite reads pyproject.toml

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SCRIPTS: dict[str, str] = PYPROJECT["project"]["scripts"]
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
PROJECT = canonicalize_name(PYPROJECT["project"]["name"])
#: Every module an extra brings that a command imports.
ALL_EXTRA_MODULES = sorted({module for modules in EXTRA_MODULES.values() for module in modules})

#: Runs ``ENTRY`` (``module:function``) as its console script does, with ``BLOCKED`` (comma-separated
#: top-level modules) unimportable: python -c RUNNER BLOCKED ENTRY COMMAND ARGS...
RUNNER = """
import importlib, sys
blocked = set(filter(None, sys.argv[1].split(",")))
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Blocked())
module, _, function = sys.argv[2].partition(":")
sys.argv = sys.argv[3:]
sys.exit(getattr(importlib.import_module(module), function)())
"""


def run_command(command: str, blocked: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-c", RUNNER, ",".join(blocked), SCRIPTS[command], command, *args],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=environment,
    )


def test_every_command_declares_the_extra_it_needs() -> None:
    assert set(COMMAND_EXTRAS) == set(SCRIPTS)
    for command, extra in COMMAND_EXTRAS.items():
        assert extra is None or (extra in EXTRAS and extra in EXTRA_MODULES), command


@pytest.mark.parametrize("command", [command for command, extra in COMMAND_EXTRAS.items() if extra is not None])
def test_a_command_without_its_extra_names_it_in_one_line(command: str) -> None:
    extra = COMMAND_EXTRAS[command]
    assert extra is not None
    blocked = list(EXTRA_MODULES[extra])
    completed = run_command(command, blocked, "--help")
    assert completed.returncode == 2, completed.stderr
    assert completed.stdout == ""
    assert completed.stderr == (
        f"{command} needs the {extra!r} extra (not installed: {', '.join(blocked)}): "
        f"pip install 'draw-dominoes[{extra}]'\n"
    )
    # One module of the extra missing is enough, and the line names it.
    completed = run_command(command, blocked[-1:])
    assert completed.returncode == 2 and completed.stderr.count("\n") == 1
    assert f"(not installed: {blocked[-1]})" in completed.stderr and "Traceback" not in completed.stderr


@pytest.mark.parametrize("command", sorted(SCRIPTS))
def test_a_command_starts_with_its_own_extra_alone(command: str) -> None:
    extra = COMMAND_EXTRAS[command]
    own = set(EXTRA_MODULES.get(extra or "", ()))
    completed = run_command(command, [module for module in ALL_EXTRA_MODULES if module not in own], "--help")
    assert "Traceback" not in completed.stderr, completed.stderr
    if command == "draw-distill":  # it only names the command that replaced it
        assert completed.returncode == 2 and "draw-train --config" in completed.stderr
    else:
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout.startswith("usage: ")


def test_the_base_install_plays_and_evaluates_with_only_the_eval_extra(tmp_path: Path) -> None:
    """Beyond ``--help``: draw-play needs no extra, draw-exploit only ``eval``."""
    others = [module for module in ALL_EXTRA_MODULES if module not in EXTRA_MODULES["eval"]]
    completed = subprocess.run(
        [sys.executable, "-c", RUNNER, ",".join(ALL_EXTRA_MODULES), SCRIPTS["draw-play"], "draw-play",
         "--opponents", "heaviest", "--seed", "0", "--episode", "hand", "--max-pip", "2", "--hand-size", "3",
         "--protected", "0"],
        input="1\n" * 50, capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert completed.returncode == 0 and "=== Hand 1 over" in completed.stdout, completed.stderr
    completed = run_command("draw-exploit", others, "heaviest", "--max-pip", "2", "--hand-size", "1", "--quiet")
    assert completed.returncode == 0 and '"exploitability"' in completed.stdout, completed.stderr


# ---------------------------------------------------------------------- pyproject.toml's declarations


@cache
def distributions_of(extra: str | None) -> frozenset[str]:
    """The distributions ``extra`` (``None``: the base dependencies) requires, with the extras of
    the project it names, canonical names."""
    names: set[str] = set()
    for text in PYPROJECT["project"]["dependencies"] if extra is None else EXTRAS[extra]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name == PROJECT:
            for included in requirement.extras:
                names |= distributions_of(included)
        else:
            names.add(name)
    return frozenset(names)


@cache
def installed_modules() -> dict[str, list[str]]:
    """Top-level module -> the installed distributions that provide it (a scan of them all, once)."""
    return dict(importlib.metadata.packages_distributions())


def providers(module: str) -> set[str]:
    """The installed distributions that provide the top-level ``module``, canonical names."""
    return {canonicalize_name(name) for name in installed_modules().get(module, [])}


@pytest.mark.parametrize("extra", sorted(EXTRA_MODULES))
def test_the_modules_checked_for_an_extra_are_what_it_installs(extra: str) -> None:
    for module in EXTRA_MODULES[extra]:
        found = providers(module)
        if not found:
            pytest.skip(f"{module} is not installed here")
        assert found & distributions_of(extra), f"{module} (from {sorted(found)}) is not installed by [{extra}]"


def third_party_imports(path: Path) -> set[str]:
    """The top-level modules outside the project and the standard library that ``path`` imports,
    at run time (not under ``if TYPE_CHECKING:``)."""
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.partition(".")[0])
    ours = {"draw_env", "agents", "arena", "train", "integrations", "__future__"}
    return {name for name in found if name not in ours and name not in sys.stdlib_module_names}


def test_every_module_the_packages_import_is_declared() -> None:
    declared = distributions_of(None).union(*(distributions_of(extra) for extra in EXTRAS))
    undeclared = {}
    for package in ("draw_env", "agents", "arena", "train", "integrations"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for module in third_party_imports(path):
                found = providers(module)
                if found and not found & declared:
                    undeclared[f"{path.relative_to(ROOT)}: {module}"] = sorted(found)
    assert not undeclared, undeclared


#: The header of the table of extras in the README and on the Getting started page.
EXTRAS_TABLE = "| extra | enables (and installs) |"


@pytest.mark.parametrize("page", ["README.md", "docs/getting_started.md"])
def test_the_pages_table_of_extras_is_pyprojects(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert text.count(EXTRAS_TABLE) == 1
    lines = text.split(EXTRAS_TABLE)[1].split("\n\n")[0].strip().splitlines()[1:]
    rows = {cells[1].strip().strip("`"): cells[2] for cells in (line.split("|") for line in lines)}
    assert set(rows) == set(EXTRAS) | {"none"}
    for command, extra in COMMAND_EXTRAS.items():
        if command == "draw-distill":  # retired: it names its replacement
            continue
        assert [name for name, cell in rows.items() if f"`{command}`" in cell] == [extra or "none"], command


# ---------------------------------------------------------------------- resolution (make check-extras)


def release_series(version: str) -> tuple[int, ...]:
    """The release components up to the first non-zero one: 2.3.3 -> (2,), 0.14.1 -> (0, 14)."""
    release = Version(version).release
    for index, number in enumerate(release):
        if number:
            return release[: index + 1]
    return release


def test_release_series() -> None:
    assert release_series("2.3.3") == (2,) and release_series("3.0.0rc1") == (3,)
    assert release_series("0.14.1") == (0, 14) and release_series("2.13.0+cpu") == (2,)


#: Imports each module named in argv[1:]; prints {module: its error} for those that fail.
IMPORT_EACH = """
import importlib, json, sys
failures = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as error:
        failures[name] = f"{type(error).__name__}: {error}"
print(json.dumps(failures))
"""


@pytest.mark.skipif(os.environ.get("DRAW_CHECK_EXTRAS") != "1",
                    reason="resolves each extra from the package index: make check-extras")
@pytest.mark.parametrize("extra", sorted(set(EXTRAS) - {"rllib"}))  # .venv-rllib is [rllib] alone
def test_each_extra_alone_resolves_to_releases_that_import(extra: str, tmp_path: Path) -> None:
    """pip resolves ``.[extra]`` alone (a dry run); where it picks a release series other than the
    suite's environment holds (pandas 3 where the suite runs pandas 2), those releases are
    installed into a folder laid over this environment, and there every module must import of the
    extra's distributions, of those releases and of the distributions that require them."""
    report = tmp_path / "report.json"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    completed = subprocess.run([*pip, "--dry-run", "--ignore-installed", "--report", str(report), f".[{extra}]"],
                               capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert completed.returncode == 0, completed.stderr[-2000:]
    items = [item["metadata"] for item in json.loads(report.read_text(encoding="utf-8"))["install"]]
    resolved = {canonicalize_name(item["name"]): item["version"] for item in items}
    assert PROJECT in resolved
    other = {}
    for name, version in sorted(resolved.items()):
        try:
            tested = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # not in the suite's environment (torch's CUDA libraries, for one)
        if name != PROJECT and release_series(version) != release_series(tested):
            other[name] = version
    overlay = tmp_path / "overlay"
    if other:
        completed = subprocess.run([*pip, "--no-deps", "--target", str(overlay),
                                    *(f"{name}=={version}" for name, version in other.items())],
                                   capture_output=True, text=True, timeout=900)
        assert completed.returncode == 0, completed.stderr[-2000:]
    # What must import: the extra's own distributions, the releases laid over, and every resolved
    # distribution that requires one of those (arch, which requires pandas).
    users = {canonicalize_name(item["name"]) for item in items
             if any(canonicalize_name(requirement.name) in other
                    for requirement in map(Requirement, item.get("requires_dist") or [])
                    if requirement.marker is None or requirement.marker.evaluate({"extra": ""}))}
    checked = distributions_of(extra) | set(other) | users
    modules = sorted(module for module, names in installed_modules().items()
                     if module.isidentifier() and not module.startswith("_")
                     and {canonicalize_name(name) for name in names} & checked
                     and importlib.util.find_spec(module) is not None)  # not a folder a RECORD lists (build/)
    assert modules
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(overlay), str(ROOT)])}
    completed = subprocess.run([sys.executable, "-c", IMPORT_EACH, *modules], capture_output=True, text=True,
                               timeout=900, cwd=tmp_path, env=environment)
    failures = json.loads(completed.stdout.strip().splitlines()[-1])
    assert not failures, (
        f"[{extra}] alone installs {other} (other release series than the suite runs), and "
        f"then {failures}: bound them in pyproject.toml's [{extra}]"
    )


def test_check_extras_runs_in_ci() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^check-extras:.*\n\tDRAW_CHECK_EXTRAS=1 .*tests/test_extras\.py", makefile, re.MULTILINE)
    assert "make check-extras" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
