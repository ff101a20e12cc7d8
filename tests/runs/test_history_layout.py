"""The history charts' text never overprints: series-break labels take free rows, dates are thinned to fit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.runs.history_layout import BREAK_TEXT, CHAR_WIDTH, DATE_SPACING, break_label_lanes, shown_dates
from tests.runs.compare_factories import edit_json, synthetic_run


def test_a_break_label_takes_the_first_row_it_clears() -> None:
    assert break_label_lanes([100, 110, 300], lanes=4) == [0, 1, 0]
    assert break_label_lanes([100, 110, 120, 130], lanes=2) == [0, 1, None, None]  # no free row: marker and tooltip only
    far = len(BREAK_TEXT) * CHAR_WIDTH + 4
    assert break_label_lanes([0, far], lanes=3) == [0, 0]
    assert break_label_lanes([0, far - 1], lanes=3) == [0, 1]


def test_dates_are_thinned_to_the_spacing_one_date_needs() -> None:
    assert shown_dates(5, 160.0) == [0, 1, 2, 3, 4]
    assert shown_dates(40, 640 / 39) == list(range(0, 40, 2))
    assert shown_dates(200, 640 / 199) == list(range(0, 200, 9))
    assert shown_dates(1, 0.0) == [0] and shown_dates(0, 1.0) == []


def close_runs(root: Path, count: int) -> Path:
    """``count`` runs a minute apart, each with another seed: a series break before every run but the first."""
    for n in range(count):
        run = synthetic_run(root / f"run-{n:02d}", recall_right=5 + n % 3)
        edit_json(run / "summary.json", lambda s, n=n: (s["run"].update(started_at=f"2026-03-01T02:{n:02d}:00Z", seed=n)))
    return root


def _boxes(svg: str) -> tuple[list[tuple[float, float, float, float]], list[float]]:
    """Break labels as (x0, x1, y0, y1), estimated from their text; the x of each date label."""
    labels = [(float(x), float(x) + len(BREAK_TEXT) * CHAR_WIDTH, float(y) - 11, float(y))
              for x, y in re.findall(r'<text class="tick" x="([\d.]+)" y="([\d.]+)">series break</text>', svg)]
    dates = [float(x) for x in re.findall(r'<text class="lbl" transform="translate\(([\d.]+),', svg)]
    return labels, dates


@pytest.mark.parametrize("count", [6, 24])
def test_the_history_svg_has_no_overlapping_break_labels_or_dates(count: int, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Runs close together put every "series break" at one height, drawn over each other; now rows keep them apart."""
    out = tmp_path / "h.html"
    assert main(["history", str(close_runs(tmp_path / "reports", count)), "--out", str(out)]) == 0
    capsys.readouterr()
    charts = re.findall(r"<svg .*?</svg>", out.read_text(encoding="utf-8"), re.S)
    assert len(charts) == 3  # the two paired differences and continuity per arm
    for svg in charts:
        assert svg.count('<g class="brk">') == count - 1  # every break keeps its marker and tooltip
        labels, dates = _boxes(svg)
        assert labels, "no break label drawn"
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                assert a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2], f"{a} overprints {b}"
        assert all(later - earlier >= DATE_SPACING for earlier, later in zip(dates, dates[1:]))
        assert dates[0] == min(dates) and len(dates) >= min(count, 640 // (2 * DATE_SPACING))  # thinned, not emptied
