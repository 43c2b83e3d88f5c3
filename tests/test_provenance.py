"""What a trained file records of the code that made it (``train.provenance.source``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from train import provenance


def test_a_checkout_records_its_commit_and_whether_it_differs() -> None:
    provenance.source.cache_clear()
    found = provenance.source()
    head = subprocess.run(["git", "-C", str(provenance._ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("the tests do not run from a git checkout")
    assert found["commit"] == head.stdout.strip() and re.fullmatch(r"[0-9a-f]{40}", found["commit"])
    assert isinstance(found["dirty"], bool) and found["version"]


def test_code_outside_a_checkout_records_its_version_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provenance, "_ROOT", tmp_path)
    provenance.source.cache_clear()
    try:
        assert set(provenance.source()) == {"version"}
    finally:
        provenance.source.cache_clear()
