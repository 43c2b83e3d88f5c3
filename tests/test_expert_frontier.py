"""``benchmarks/expert_frontier.py`` continues a measured frontier: a rerun keeps the points in ``--json``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.scripts import load_script


@pytest.fixture(scope="module")
def frontier() -> Any:
    return load_script("benchmarks/expert_frontier.py", "expert_frontier")


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


def a_point(**changes: Any) -> dict[str, Any]:
    """A well-formed point of the file ``quick(path, "random")`` writes."""
    point = {"agent": "random", "kwargs": {}, "label": "random", "games": 4, "win_rate": 0.25, "win_low": 0.05,
             "win_high": 0.7, "zero_sum_per_hand": -3.5, "decisions_per_second": 2000.0, "cpu_ms_per_decision": 0.5,
             "reference_cpu_ms_per_decision": None, "cpu_seconds": 1.5, "frontier": True}
    point.update(changes)
    return point


@pytest.mark.parametrize(
    ("points", "fields"),
    [
        ([{"label": "random", "kwargs": {}}],
         [f"points[0].{key}' is missing" for key in a_point() if key not in ("label", "kwargs", "frontier")]),
        ([a_point(agent=["random"])], ["agent' must be one of the agent names, got ['random']"]),
        ([a_point(games=-5)], ["games' must be an integer >= 1, got -5"]),
        ([a_point(cpu_seconds=None)], ["cpu_seconds' must be a finite number >= 0, got None"]),
        ([a_point(win_low=0.3)], ["win_rate' must lie in its interval [win_low, win_high], got [0.3, 0.25, 0.7]"]),
        ([a_point(games=True, win_rate=2, colour="red")],
         ["colour' is not a field of a point", "games' must be an integer >= 1, got True",
          "win_rate' must be a finite number in [0, 1], got 2"]),
        ([a_point(), a_point(win_rate=0.5)], ["points[1].label' repeats an earlier point's, 'random'"]),
        (["random"], ["points[0]' must be an object, got 'random'"]),
    ],
    ids=["label-and-kwargs-only", "agent-list", "negative-games", "null-cpu-seconds", "outside-interval", "several",
         "repeated-label", "not-an-object"],
)
def test_each_bad_field_of_a_kept_point_is_one_line_naming_the_file_and_field(
    frontier: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], points: list[Any], fields: list[str]
) -> None:
    """Before anything is measured or written: exit 2, one line a field, the file and the plot untouched."""
    path, png = tmp_path / "frontier.json", tmp_path / "frontier.png"
    text = json.dumps({"reference": "heaviest", "num_players": 2, "episode": "hand", "games": 4, "seed": 0,
                       "cpu_seconds": 1.5, "points": points})
    path.write_text(text)
    with pytest.raises(SystemExit) as stopped:
        frontier.main([*quick(path, "random"), "--png", str(png)])
    assert stopped.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == len(fields) and all(line.startswith(f"expert_frontier.py: error: {path}: field '") for line in lines)
    for field in fields:
        assert any(field in line for line in lines), (field, lines)
    assert path.read_text() == text and not png.exists()


def test_the_file_holds_only_numbers_json_has(frontier: Any, tmp_path: Path) -> None:
    """A CPU time that is infinite is written as null and read back as such; a number JSON has no
    spelling for (NaN, infinity elsewhere) is refused before the file is replaced."""
    path = tmp_path / "frontier.json"
    args = frontier.parse_args(quick(path, "random"))
    frontier.write_points(args, "heaviest", [a_point(reference_cpu_ms_per_decision=math.inf)])
    assert json.loads(path.read_text())["points"][0]["reference_cpu_ms_per_decision"] is None
    assert frontier.earlier_points(args, "heaviest")["random"]["reference_cpu_ms_per_decision"] == math.inf
    before = path.read_text()
    for bad in (math.nan, -math.inf):
        with pytest.raises(ValueError, match="not JSON compliant"):
            frontier.write_points(args, "heaviest", [a_point(cpu_seconds=bad)])
    assert path.read_text() == before
