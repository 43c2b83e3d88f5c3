"""The house rules of imports: no cycles anywhere, and the layout.

* The import graph of ``draw_env``, ``agents``, ``arena``, ``train`` and ``integrations`` (every import
  statement, also those inside functions and ``if TYPE_CHECKING:`` blocks, which still tie two
  modules together) has no cycle.
* ``draw_env`` never imports ``agents``, ``arena`` or ``train``; ``agents`` never imports
  ``arena`` or ``train``; ``arena`` never imports ``train``.
* No library module imports a command module (the list in ``docs/layout.md``, which names every
  command of ``pyproject.toml``).
* Every module imports on its own in a fresh interpreter (each one first, with no project module
  loaded before it), apart from those that need Ray (the RLlib venv imports them).
"""

from __future__ import annotations

import ast
import graphlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("draw_env", "agents", "arena", "train", "integrations")
#: package -> packages it must never import.
FORBIDDEN = {"draw_env": ("agents", "arena", "train"), "agents": ("arena", "train"), "arena": ("train",)}
#: Modules that need Ray, which lives in another venv (``.venv-rllib``): the RLlib checks
#: (tests/integrations/rllib_checks.py) import them there; the graph tests cover them here.
NEEDS_OTHER_VENV = {"integrations.rllib", "train.rllib_selfplay"}


def project_modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> source file, for every ``.py`` file of ``packages`` under ``root``."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that module ``name`` (source ``path``) imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"), str(path))]
    while pending:
        node = pending.pop()
        pending.extend(ast.iter_child_nodes(node))
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        for target in targets:
            # "import a.b.c" loads a.b.c; keep the longest prefix that is a project module.
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    modules = project_modules(root, packages)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as ``[a, b, ..., a]``, or ``None`` if it is acyclic."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return list(error.args[1])
    return None


def test_the_cycle_finder_sees_lazy_relative_and_type_only_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import thing\n")
    (package / "b.py").write_text("def f():\n    from . import a\n    return a\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\nimport pkg.b.nothing\n"
    )
    graph = import_graph(tmp_path, ("pkg",))
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": {"pkg.a", "pkg.b"}}
    cycle = find_cycle(graph)
    assert cycle is not None and set(cycle) == {"pkg.a", "pkg.b"}
    (package / "b.py").write_text("thing = 1\n")
    assert find_cycle(import_graph(tmp_path, ("pkg",))) is None
    # A cycle through an import made for the type checker only is a cycle all the same.
    (package / "b.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    from pkg.c import x\n")
    cycle = find_cycle(import_graph(tmp_path, ("pkg",)))
    assert cycle is not None and {"pkg.b", "pkg.c"} <= set(cycle)


def test_the_project_has_no_import_cycle() -> None:
    graph = import_graph(ROOT, PACKAGES)
    assert {"draw_env.rules", "arena.evaluation", "arena.cli", "train.selfplay"} <= set(graph)
    assert "arena.specs" in graph["arena.evaluation"]  # the graph sees the real imports
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_layout_rules_hold() -> None:
    graph = import_graph(ROOT, PACKAGES)
    broken = [
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        for forbidden in FORBIDDEN.get(module.partition(".")[0], ())
        if target.partition(".")[0] == forbidden
    ]
    assert not broken, "; ".join(broken)


def command_modules() -> set[str]:
    """The command modules ``docs/layout.md`` lists (dotted names)."""
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    listed = re.search(r"Command modules\s*\(([^)]*)\)", text)
    assert listed is not None, "docs/layout.md lists no command modules"
    paths = re.findall(r"`([\w/]+)\.py`", listed[1])
    return {".".join(path.split("/")[:-1] if path.endswith("/__init__") else path.split("/")) for path in paths}


def test_library_modules_import_no_command_module() -> None:
    commands = command_modules()
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    unlisted = sorted({target.partition(":")[0] for target in scripts.values()} - commands)
    assert not unlisted, f"commands whose module docs/layout.md does not list: {unlisted}"
    graph = import_graph(ROOT, PACKAGES)
    assert commands <= set(graph)
    broken = [f"{module} imports {target}" for module, targets in graph.items() if module not in commands
              for target in sorted(targets & commands)]
    assert not broken, "; ".join(broken)


#: The command modules of ``draw-train``: only they import its registry of pipelines.
COMMAND_MODULES = {"train.cli": {"train.pipelines"}}
#: What sits above the registry: a tuning sweep loads any pipeline's config through it (and runs
#: draw-train in a child process, never importing the command).
COMMAND_MODULES |= {module: {"train.pipelines"} for module in ("train.sweep.config", "train.sweep.run")}
#: The registry of ``draw-train``'s pipelines and the run kinds it is built on: the modules that know
#: every pipeline, which no lower module imports.
REGISTRIES = ("train.pipelines", "train.cli")


def test_no_train_module_imports_the_command_or_its_registry_but_the_command() -> None:
    graph = import_graph(ROOT, PACKAGES)
    importers = {
        module: sorted(target for target in targets if target in REGISTRIES)
        for module, targets in graph.items()
        if module not in REGISTRIES
    }
    broken = {module: found for module, found in importers.items() if set(found) - COMMAND_MODULES.get(module, set())}
    assert not broken, broken
    assert "train.pipelines" in graph["train.cli"]  # the graph sees the command's lazy import


def test_the_run_protocol_imports_no_pipeline() -> None:
    """train/run_dir.py is given its pipeline's kind (files, config model) by its caller: it imports
    nothing of train but the config helpers, so no arrow goes back up from it to its users."""
    graph = import_graph(ROOT, PACKAGES)
    assert {target for target in graph["train.run_dir"] if target.startswith("train.")} == {"train.config"}


_IMPORT_EACH = """
import importlib, json, sys
names, packages = json.loads(sys.argv[1])
failures = {}
for name in names:
    for loaded in [m for m in sys.modules if m.partition(".")[0] in packages]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as error:
        failures[name] = repr(error)
print(json.dumps(failures))
"""


@pytest.mark.slow
def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    names = sorted(set(project_modules(ROOT, PACKAGES)) - NEEDS_OTHER_VENV)
    output = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, json.dumps([names, list(PACKAGES)])],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    assert json.loads(output.strip().splitlines()[-1]) == {}


def test_the_layout_page_names_every_module_and_subpackage() -> None:
    """docs/layout.md describes the house as it is: each package's modules and subpackages are
    named on it (a subpackage's own modules are described by its line)."""
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    unnamed = []
    for package in ("draw_env", "agents", "arena", "train"):
        for path in sorted((ROOT / package).iterdir()):
            if path.suffix == ".py" and path.name != "__init__.py":
                named = re.search(rf"(?<![\w]){re.escape(path.name)}", text)
            elif path.is_dir() and (path / "__init__.py").exists():
                named = re.search(rf"(?<![\w]){re.escape(path.name)}/", text)
            else:
                continue
            if not named:
                unnamed.append(str(path.relative_to(ROOT)))
    assert not unnamed, f"docs/layout.md names none of {unnamed}"
