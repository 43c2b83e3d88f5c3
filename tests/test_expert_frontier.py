"""``benchmarks/expert_frontier.py`` continues a measured frontier: a rerun keeps the points in ``--json``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def frontier() -> Any:
    spec = importlib.util.spec_from_file_location("expert_frontier", ROOT / "benchmarks" / "expert_frontier.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def quick(path: Path, *budgets: str, games: int = 4) -> list[str]:
    return ["--reference", "heaviest", "--episode", "hand", "--games", str(games), "--quiet", "--json", str(path),
            "--budgets", *budgets]


def test_a_rerun_keeps_the_points_already_measured_and_measures_the_rest(
    frontier: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "frontier.json"
    frontier.main(quick(path, "random"))
    first = json.loads(path.read_text())
    assert [p["label"] for p in first["points"]] == ["random"] and first["games"] == 4

    measured: list[str] = []
    real = frontier.measure

    def counted(candidate: Any, reference: Any, args: Any) -> dict[str, Any]:
        measured.append(candidate[0])
        return real(candidate, reference, args)

    monkeypatch.setattr(frontier, "measure", counted)
    frontier.main(quick(path, "random", "variety"))
    assert measured == ["variety"], "the point of 'random' is kept, only 'variety' is played"
    second = json.loads(path.read_text())
    assert [p["label"] for p in second["points"]] == ["random", "variety"]
    assert second["points"][0]["win_rate"] == first["points"][0]["win_rate"]
    assert all(p["cpu_seconds"] > 0 for p in second["points"])
    assert second["cpu_seconds"] == pytest.approx(sum(p["cpu_seconds"] for p in second["points"])), \
        "the total counts the kept point's CPU time too, not only this run's"


def test_a_file_of_other_settings_or_a_malformed_point_is_one_error_line(
    frontier: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "frontier.json"
    frontier.main(quick(path, "random"))
    with pytest.raises(SystemExit) as stopped:
        frontier.main(quick(path, "random", games=6))
    assert stopped.value.code == 2
    assert "field 'games' is 4, this run's is 6" in capsys.readouterr().err

    data = json.loads(path.read_text())
    data["points"][0]["win_rate"] = "high"
    path.write_text(json.dumps(data))
    with pytest.raises(SystemExit) as stopped:
        frontier.main(quick(path, "random"))
    assert stopped.value.code == 2
    assert "field 'points[0].win_rate' must be a finite number" in capsys.readouterr().err
