"""`recall-eval history DIR...`: one page of many runs over time, intervals as bands, points linking to reports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.runs.history import find_runs, read_points
from tests.runs.compare_factories import edit_json, synthetic_run
from tests.score.scoring_factories import MODEL


def _dated(path: Path, started_at: str, **kwargs: object) -> Path:
    run = synthetic_run(path, **kwargs)
    edit_json(run / "summary.json", lambda s: s["run"].update(started_at=started_at))
    return run


@pytest.fixture(scope="module")
def nightly(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hist") / "reports"
    _dated(root / "nightly-b", "2026-03-03T02:00:00Z", recall_right=4)
    _dated(root / "nightly-c", "2026-03-01T02:00:00Z", recall_right=9)
    _dated(root / "nightly-a", "2026-03-02T02:00:00Z", recall_right=7)
    return root


def test_runs_are_ordered_by_start_time_not_by_name(nightly: Path) -> None:
    points, warnings = read_points(find_runs([nightly]))
    assert [p.path.name for p in points] == ["nightly-c", "nightly-a", "nightly-b"] and warnings == []


def test_the_page_links_each_point_to_its_report_and_draws_intervals_as_bands(nightly: Path, tmp_path: Path) -> None:
    out = tmp_path / "site" / "history.html"
    assert main(["history", str(nightly), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"]+)" class="pt">', page)
    # three charts per model, one series in the first two, two arms in the third: 3 + 3 + 6 points
    assert len(links) == 12
    assert [link.split("/")[-2] for link in links[:3]] == ["nightly-c", "nightly-a", "nightly-b"]
    assert all(not link.startswith("/") for link in links)
    assert all((out.parent / link).resolve().parent.parent == nightly.resolve() for link in links)
    bands = re.findall(r'<polygon class="band [^"]+" points="([^"]+)"', page)
    assert len(bands) == 4 and all(len(b.split()) == 6 for b in bands)  # upper and lower bound at 3 runs
    for band in bands:  # along the upper bounds, back along the lower ones: a band, not a bow tie
        xs = [float(p.split(",")[0]) for p in band.split()]
        assert xs[:3] == sorted(xs[:3]) and xs[3:] == sorted(xs[3:], reverse=True) and xs[0] == xs[-1]
    assert "<script" not in page and "http" not in page.replace("http-equiv", "")


def test_the_continuity_difference_falls_with_the_runs(nightly: Path) -> None:
    points, _ = read_points(find_runs([nightly]))
    diffs = [p.paired(MODEL, "continuity_accuracy")["diff"] for p in points]
    assert diffs == sorted(diffs, reverse=True) and diffs[0] > diffs[-1]


def test_a_run_without_a_summary_is_left_out_with_a_warning(nightly: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "run.json").write_text(json.dumps({"run_id": "bare"}))
    assert main(["history", str(nightly), str(bare), "--out", str(tmp_path / "h.html")]) == 0
    err = capsys.readouterr().err
    assert f"{bare}: no summary.json, left out; build it with `recall-eval report {bare}`" in err


def test_a_folder_that_holds_no_run_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", str(tmp_path), "--out", str(tmp_path / "h.html")]) == 2
    assert "neither a run folder" in capsys.readouterr().err
    assert main(["history", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err
