"""Sphinx configuration of the documentation site (``make docs``; strict: warnings are errors).

The pages are MyST Markdown; the API reference is generated from the docstrings (Google style,
read by napoleon) of every module by autosummary.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

project = "draw-dominoes"
author = "the draw-dominoes authors"
copyright = "2026, the draw-dominoes authors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "figures/*.md"]

# Markdown headings up to ### get anchors, so that links such as agents.md#the-trained-policies
# are checked by the build (a missing anchor is a warning, and warnings fail the build).
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
# Libraries that only some extras install: the reference is built without them.
autodoc_mock_imports = ["ray", "tianshou", "torchrl", "jax", "jaxlib", "flax", "optax", "pgx"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# "Attributes:" sections become fields of their class, so that autodoc's own entries for the
# same attributes (named tuples, dataclasses) are not described twice.
napoleon_use_ivar = True
# Names re-exported by a package (draw_env.DrawGame is draw_env.rules.DrawGame) make some type
# references ambiguous; the page still links to one of them.
suppress_warnings = ["ref.python"]

html_theme = "furo"
html_title = "draw-dominoes"
html_static_path: list[str] = []


def _markdown_docstring_as_text(app, what, name, obj, options, lines):  # noqa: ANN001, ARG001
    """Show a module docstring written in Markdown (PettingZoo's table convention) as source text.

    reStructuredText would read its ``| a | b |`` table rows as line blocks.
    """
    if what == "module" and lines and lines[0].startswith("# "):
        lines[:] = [".. code-block:: markdown", ""] + [f"   {line}" for line in lines]


def setup(app):  # noqa: ANN001, ANN201
    app.connect("autodoc-process-docstring", _markdown_docstring_as_text)
