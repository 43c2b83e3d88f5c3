"""``docs/make_figures.py`` (``make figures``): the hand's animation, and charts that agree with their data.

The script is not in a package (it draws the docs' pictures), so it is loaded from its path.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def figures():
    yield load_script("docs/make_figures.py", "make_figures")
    del sys.modules["make_figures"]


def test_the_hand_is_seeded_and_animated(figures, tmp_path: Path) -> None:
    frames = figures.hand_frames()
    assert len(frames) >= 10  # the deal, then a frame per action of a whole hand
    assert all(frame.shape == (480, 800, 3) and frame.dtype == np.uint8 for frame in frames)
    assert not np.array_equal(frames[0], frames[-1])
    again = figures.hand_frames()
    assert len(again) == len(frames) and all(np.array_equal(a, b) for a, b in zip(frames, again))

    path = tmp_path / "hand.gif"
    figures.write_gif(frames[:6], path, scale=0.2)
    with Image.open(path) as gif:
        assert gif.format == "GIF" and gif.size == (160, 96)
        assert gif.n_frames == 6
        assert gif.info["loop"] == 0


def test_the_committed_animation_is_small() -> None:
    with Image.open(ROOT / "docs" / "figures" / "hand.gif") as gif:
        assert gif.n_frames >= 10
    assert (ROOT / "docs" / "figures" / "hand.gif").stat().st_size < 400_000


def test_the_ladder_agrees_with_the_policy_records(figures) -> None:
    rows = figures.read_ladder()
    figures.check_ladder(rows)  # raises on a disagreement
    checked = [row for row in rows if row["agent"] in figures.RECORDED_AS]
    assert len(checked) == 9  # three shipped 2-player policies against three opponents

    moved = [dict(row) for row in rows]
    moved[rows.index(checked[0])]["win_rate"] += 0.01
    with pytest.raises(ValueError, match="records"):
        figures.check_ladder(moved)
    unknown = [dict(row) for row in rows]
    unknown[rows.index(checked[0])]["opponent"] = "random"
    with pytest.raises(ValueError, match="no result"):
        figures.check_ladder(unknown)


def test_the_long_runs_are_gathered_from_their_summaries_and_drawn(figures, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    rows = [{"timesteps": steps, "opponent": "heaviest", "win_rate": rate, "win_low": rate - 0.1, "win_high": rate + 0.1}
            for steps, rate in ((100, 0.5), (200, 0.6))]
    (runs / "jax_ppo_3p_long").mkdir(parents=True)
    (runs / "jax_ppo_3p_long" / "summary.json").write_text(json.dumps({"env_steps": 200, "eval": rows}))
    data = tmp_path / "long.json"
    figures.gather_long_runs(runs, data)
    gathered = json.loads(data.read_text())
    assert list(gathered) == ["3"] and gathered["3"]["eval"] == rows
    assert gathered["3"]["config"] == "configs/jax_ppo_3p_long.yaml"
    figures.plot_long_runs(gathered, tmp_path / "long.png")
    with Image.open(tmp_path / "long.png") as image:
        assert image.format == "PNG"


def test_the_charts_draw_from_the_committed_data(figures, tmp_path: Path) -> None:
    figures.main(["--out", str(tmp_path), "--only", "ladder", "throughput", "long_runs"])
    for name in ("ladder_2p.png", "throughput_batch_2p.png", "long_runs.png"):
        with Image.open(tmp_path / name) as image:
            assert image.format == "PNG" and image.size[0] > 600
    with pytest.raises(SystemExit):
        figures.main(["--out", str(tmp_path), "--gif-scale", "0"])
