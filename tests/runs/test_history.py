"""`recall-eval history DIR...`: one page of many runs over time, intervals as bands, points linking to reports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.runs.history import find_runs, read_points, series_breaks
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


# ---------------------------------------------------------------- series: only like runs are joined


def _series(root: Path, *changes: object) -> Path:
    """Runs a day apart in ``root``; each change (None, or a callable editing that run's summary) makes one run."""
    for day, change in enumerate(changes, start=1):
        run = _dated(root / f"run-{day}", f"2026-03-{day:02d}T02:00:00Z", recall_right=9 - day)
        if callable(change):
            edit_json(run / "summary.json", change)
    return root


def _polylines(page: str) -> list[str]:
    return re.findall(r'<polyline class="trend [^"]+" points="([^"]+)"', page)


def test_a_suite_change_breaks_the_series_in_the_page_and_the_text(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "reports"
    for day, ids in enumerate([None, None, ["fact-00"], None, None], start=1):
        _dated(root / f"run-{day}", f"2026-03-{day:02d}T02:00:00Z", ids=ids)
    out = tmp_path / "h.html"
    assert main(["history", str(root), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "series break before run-3 (2026-03-03T02:00:00Z): suite: " in text and "(10 scenarios) -> " in text
    assert "(1 scenarios)" in text and "series break before run-4" in text
    assert "history of 5 run(s) in 3 series" in text
    page = out.read_text(encoding="utf-8")
    # per chart line (1 + 1 + 2 arms) a line through runs 1-2 and one through runs 4-5; run 3 stands alone
    lines = _polylines(page)
    assert len(lines) == 2 * 4 and all(len(line.split()) == 2 for line in lines)
    assert page.count('<g class="brk"><title>series break: suite: ') == 2 * 3  # two breaks in each of 3 charts
    assert page.count('<tr class="brk">') == 2 and "5 run(s) in 3 series" in page


@pytest.mark.parametrize(("change", "shown"), [
    (lambda s: s["run"].update(models=["openai/gpt-4o-mini"]), "models: offline/reference -> openai/gpt-4o-mini"),
    (lambda s: s["run"].update(arms=["history_only", "recall", "full_history"]), "arms: history_only, recall -> "),
    (lambda s: s.update(judge={"model": "openai/judge", "calls": 1}), "judge: none -> openai/judge"),
    (lambda s: s["run"]["parameters"].update(temperature=0.7), "temperature: 0.0 -> 0.7"),
    (lambda s: s["run"]["parameters"].update(max_tool_rounds=2), "max tool rounds: 4 -> 2"),
    (lambda s: s["run"].update(epochs=3), "epochs: 1 -> 3"),
    (lambda s: s["run"].update(seed=7), "seed: 0 -> 7"),
    (lambda s: s["run"].update(suite_hash="f" * 64), "suite: "),
    (lambda s: s["run"].update(excluded_scenarios=["fact-01"]), "excluded scenarios: none -> fact-01"),
])
def test_models_arms_judge_and_parameters_break_a_series(tmp_path: Path, change, shown) -> None:
    points, _ = read_points(find_runs([_series(tmp_path / "r", None, change)]))
    breaks = series_breaks(points)
    assert len(breaks) == 1 and breaks[0][0] == 1 and any(line.startswith(shown) for line in breaks[0][1]), breaks


def test_settings_that_do_not_change_answers_keep_one_series(tmp_path: Path) -> None:
    def quiet(s: dict) -> None:
        s["run"]["parameters"].update(cache=False, workers=4, timeout_s=30.0, cache_dir="/elsewhere")

    points, _ = read_points(find_runs([_series(tmp_path / "r", None, quiet, None)]))
    assert series_breaks(points) == []


def _as_shard(run: Path, index: int, count: int) -> Path:
    edit_json(run / "run.json", lambda m: m.update(shard={"index": index, "count": count, "suite_hash": "x" * 64,
                                                         "scenario_count": 20, "sample_count": 40}))
    return run


def test_shard_folders_are_left_out_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _series(tmp_path / "reports", None, None, None)
    _as_shard(root / "run-1", 1, 2)
    _as_shard(root / "run-2", 2, 2)
    points, warnings = read_points(find_runs([root]))
    assert [p.path.name for p in points] == ["run-3"]
    assert warnings == [f"2 shard folder(s) left out (their merged run is the point; --include-shards shows them): "
                        f"{root / 'run-1'}, {root / 'run-2'}"]
    out = tmp_path / "h.html"
    assert main(["history", str(root), "--out", str(out), "--include-shards"]) == 0
    assert "history of 3 run(s)" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert "(shard 1/2)" in page and "(shard 2/2)" in page


def test_the_runs_table_shows_suite_and_sample_count(nightly: Path, tmp_path: Path) -> None:
    out = tmp_path / "h.html"
    assert main(["history", str(nightly), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    table = page[page.index('id="runs"'):]
    assert '<th scope="col">suite</th>' in table and '<th scope="col">samples (errors)</th>' in table
    suite = read_points(find_runs([nightly]))[0][0].summary["run"]["suite_hash"][:12]
    names = re.findall(rf"<td>([^<]*) · 10 scenarios · {suite}</td>", table)
    assert sorted(names) == ["nightly-a-suite", "nightly-b-suite", "nightly-c-suite"] and table.count("<td>20 (0)</td>") == 3
