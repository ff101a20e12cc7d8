"""Which runs the history page shows and joins: the folders found, the runs left out and why, what breaks a series.

In-process, from hand-made ``run.json`` and ``summary.json`` files (``tests.runs.history_factories``): a run
charted that should have been left out (a shard counted twice, a sensitive run shown), one left out silently, or two
unlike runs joined by one line are the history page's wrong answers.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from harness.runs.history import (
    HistoryError,
    cli_history,
    find_runs,
    is_sensitive_run,
    read_points,
    render_history,
    series_breaks,
    series_key,
)
from tests.runs.history_factories import point, run_folder, summary


def test_find_runs_takes_run_folders_and_folders_of_them_each_once(tmp_path: Path) -> None:
    b, a = run_folder(tmp_path / "all", "b"), run_folder(tmp_path / "all", "a")
    (tmp_path / "all" / "notes").mkdir()  # not a run: no run.json
    (tmp_path / "all" / "odd" / "run.json").mkdir(parents=True)  # a run.json that is no file
    other = run_folder(tmp_path, "other")
    assert find_runs([b, tmp_path / "all", str(other), other]) == [b, a, other]
    assert find_runs([tmp_path / "all"]) == [a, b]


def test_find_runs_names_a_missing_path_and_a_folder_without_runs(tmp_path: Path) -> None:
    with pytest.raises(HistoryError) as missing:
        find_runs([tmp_path / "nope"])
    assert str(missing.value) == (f"{tmp_path / 'nope'}: no such folder; pass run folders (or folders of them) "
                                  "written by `recall-eval run`")
    (tmp_path / "file").write_text("x")
    with pytest.raises(HistoryError, match="no such folder"):
        find_runs([tmp_path / "file"])
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(HistoryError) as empty:
        find_runs([tmp_path / "empty"])
    assert str(empty.value) == f"{tmp_path / 'empty'}: neither a run folder (no run.json) nor a folder of run folders"


def test_a_point_carries_its_suite_scenario_count_and_shard_from_run_json(tmp_path: Path) -> None:
    run = run_folder(tmp_path, "r", summary(), scenario_paths=["/s/starter", "/s/extra"],
                     scenario_ids=["a", "b", "c"], shard={"index": 2, "count": 4})
    [p], _ = read_points([run], include_shards=True)
    assert p.manifest == {"suite": "starter, extra", "scenarios": 3, "shard": "2/4", "sensitive": False}
    assert (p.scenario_count, p.shard) == (3, "2/4")
    assert p.suite_label() == f"starter, extra · 3 scenarios · {'a' * 12}"
    odd = run_folder(tmp_path, "odd", summary(), scenario_paths="/s/starter", scenario_ids="a", shard="2/4")
    [p], _ = read_points([odd])
    assert p.manifest == {"suite": "", "scenarios": None, "shard": None, "sensitive": False}
    assert p.suite_label() == "a" * 12
    none = run_folder(tmp_path, "none", summary(), scenario_ids=[])
    [p], _ = read_points([none])
    assert p.suite_label() == f"0 scenarios · {'a' * 12}"
    bare = summary()
    del bare["run"]["suite_hash"]
    assert point(bare).suite_label() == "—"


def test_a_run_json_that_is_not_an_object_gives_no_suite_facts(tmp_path: Path) -> None:
    run = run_folder(tmp_path, "r", summary())
    (run / "run.json").write_text("[1, 2]")
    [p], _ = read_points([run])
    assert p.manifest == {} and p.suite_label() == "a" * 12


def test_is_sensitive_run_reads_parameters_sensitive_and_doubts_an_unreadable_run_json(tmp_path: Path) -> None:
    assert is_sensitive_run(run_folder(tmp_path, "yes", parameters={"sensitive": True}))
    assert not is_sensitive_run(run_folder(tmp_path, "text", parameters={"sensitive": "true"}))
    assert not is_sensitive_run(run_folder(tmp_path, "plain", parameters={}))
    assert not is_sensitive_run(run_folder(tmp_path, "flat", parameters=["sensitive"]))
    gone = tmp_path / "gone"
    gone.mkdir()
    assert not is_sensitive_run(gone)  # no run.json: no run, nothing to hide
    broken = run_folder(tmp_path, "broken")
    (broken / "run.json").write_text("{not json")
    assert is_sensitive_run(broken) and not is_sensitive_run(broken, unreadable=False)
    (broken / "run.json").write_text("[true]")
    assert not is_sensitive_run(broken)


def test_sensitive_runs_and_runs_with_an_unreadable_run_json_are_left_out_unless_asked(tmp_path: Path) -> None:
    secret = run_folder(tmp_path, "secret", summary("secret"), parameters={"sensitive": True},
                        shard={"index": 1, "count": 2})
    broken = run_folder(tmp_path, "broken", summary("broken", "2026-03-02T00:00:00Z"))
    (broken / "run.json").write_text("{not json")
    plain = run_folder(tmp_path, "plain", summary("plain", "2026-03-03T00:00:00Z"))
    points, warnings = read_points([secret, broken, plain])
    assert [p.run_id for p in points] == ["plain"]
    # the sensitive shard counts once, as sensitive
    assert warnings == ["2 sensitive run folder(s) left out (they hold real user data; --include-sensitive shows them)"]
    points, warnings = read_points([secret, broken, plain], include_sensitive=True, include_shards=True)
    assert [p.run_id for p in points] == ["secret", "broken", "plain"] and warnings == []
    points, warnings = read_points([secret, broken, plain], include_sensitive=True)
    assert [p.run_id for p in points] == ["broken", "plain"] and warnings[0].startswith("1 shard folder(s) left out")


def test_shards_left_out_are_counted_and_the_first_three_named(tmp_path: Path) -> None:
    shards = [run_folder(tmp_path, f"s{n}", summary(f"s{n}"), shard={"index": n, "count": 4}) for n in range(1, 5)]
    points, warnings = read_points(shards)
    assert points == [] and warnings == [
        "4 shard folder(s) left out (their merged run is the point; --include-shards shows them): "
        f"{shards[0]}, {shards[1]}, {shards[2]} and 1 more"]
    _, warnings = read_points(shards[:3])
    assert warnings[0].endswith(f": {shards[0]}, {shards[1]}, {shards[2]}")


def test_a_run_without_a_readable_summary_is_left_out_with_the_reason_and_the_fix(tmp_path: Path) -> None:
    bare = run_folder(tmp_path, "bare")
    nan = run_folder(tmp_path, "nan")
    (nan / "summary.json").write_text('{"run": {"samples": NaN}}')
    folder = run_folder(tmp_path, "folder")
    (folder / "summary.json").mkdir()
    wrong = run_folder(tmp_path, "wrong", {"verdict": "pass"})
    points, warnings = read_points([bare, nan, folder, wrong])
    assert points == []
    assert warnings == [
        f"{bare}: no summary.json, left out; build it with `recall-eval report {bare}`",
        f"{nan / 'summary.json'}: unreadable (not valid JSON (NaN is not a JSON number)), left out; "
        f"rebuild it with `recall-eval report {nan}`",
        f"{folder / 'summary.json'}: unreadable (a folder, not a regular file; reading it could hang or never end. "
        f"Replace it with the file itself), left out; rebuild it with `recall-eval report {folder}`",
        f"{wrong / 'summary.json'}: unreadable (verdict is a string, not an object), left out; "
        f"rebuild it with `recall-eval report {wrong}`"]


def test_a_summary_without_its_run_block_falls_back_to_the_folder_and_the_default_arms(tmp_path: Path) -> None:
    run = run_folder(tmp_path, "nightly-7", {"generated_at": "2026-03-05T01:00:00Z"})
    [p], warnings = read_points([run])
    assert (p.path, p.run_id, p.started_at, p.verdict, p.treatment, p.baseline) == (
        run, "nightly-7", "2026-03-05T01:00:00Z", "none", "recall", "history_only") and warnings == []
    [p], _ = read_points([run_folder(tmp_path, "undated", {"verdict": {"status": "fail", "config": {}}})])
    assert (p.started_at, p.verdict) == ("", "fail")
    config = {"status": "pass", "config": {"treatment_arm": "recall_fts", "baseline_arm": "recall"}}
    [p], _ = read_points([run_folder(tmp_path, "lanes", {"verdict": config})])
    assert (p.treatment, p.baseline) == ("recall_fts", "recall")  # the arms the run's verdict compared


def test_runs_started_together_are_ordered_by_id(tmp_path: Path) -> None:
    first = run_folder(tmp_path, "x", summary("run-b", "2026-03-01T02:00:00Z"))
    second = run_folder(tmp_path, "y", summary("run-a", "2026-03-01T02:00:00Z"))
    earlier = run_folder(tmp_path, "z", summary("run-c", "2026-02-28T02:00:00Z"))
    points, _ = read_points([first, second, earlier])
    assert [p.run_id for p in points] == ["run-c", "run-a", "run-b"]


def test_the_series_key_names_every_setting_that_changes_answers() -> None:
    data = summary(models=["b/m", "a/m"], excluded_scenarios=["fact-01", 7],
                   epochs=2, seed=3, parameters={"max_tool_rounds": 4, "temperature": 0.5, "max_tokens": 800,
                                                 "api_base": None, "router_config_hash": "r1", "workers": 8})
    data["judge"] = {"model": "openai/judge", "grounding": True}
    data["run"]["arms"] = ["recall", "history_only"]  # the run's order: arms are not sorted into one
    assert series_key(point(data, manifest={"scenarios": 12})) == {
        "suite": f"{'a' * 12} (12 scenarios)", "excluded scenarios": "fact-01, 7", "models": "a/m, b/m",
        "arms": "recall, history_only", "judge": "openai/judge + grounding", "epochs": "2", "seed": "3",
        "max tool rounds": "4", "temperature": "0.5", "max tokens": "800", "api base": "None",
        "router config hash": "r1"}
    assert series_key(point({})) == {
        "suite": "? (? scenarios)", "excluded scenarios": "none", "models": "none", "arms": "none", "judge": "none",
        "epochs": "None", "seed": "None", "max tool rounds": "None", "temperature": "None", "max tokens": "None",
        "api base": "None", "router config hash": "None"}


def test_the_judge_of_a_series_is_the_summary_s_else_the_run_s_judge_model() -> None:
    def judge(block: object, judge_model: str | None = None) -> str:
        data = summary(parameters={"judge_model": judge_model})
        data["judge"] = block
        return series_key(point(data))["judge"]

    assert judge(None, "openai/j") == "openai/j"
    assert judge({"model": None, "grounding": False}, "openai/j") == "openai/j"
    assert judge({"model": "a/j"}, "openai/j") == "a/j"
    assert judge({"grounding": True}) == "none + grounding"
    assert judge("a/j", "openai/j") == "openai/j"  # a judge block that is no object names nothing
    assert series_key(point(summary(), manifest={"scenarios": 0}))["suite"].endswith(" (0 scenarios)")


def test_series_breaks_say_what_changed_from_what_to_what() -> None:
    points = [point(summary(seed=0)), point(summary(seed=7)), point(summary(seed=7)),
              point(summary(seed=0, epochs=2))]
    assert series_breaks(points) == [(1, ["seed: 0 -> 7"]), (3, ["epochs: 1 -> 2", "seed: 7 -> 0"])]
    assert series_breaks(points[1:3]) == [] and series_breaks(points[:1]) == []


def _rows(page: str) -> list[str]:
    return page[page.index("<tbody>"):page.index("</tbody>")].split("</tr>")[:-1]


def test_the_runs_table_lists_runs_newest_first_with_their_figures_and_breaks(tmp_path: Path) -> None:
    old = summary("run-1", "2026-03-01T02:00:00Z", samples=40, errors=3)
    old["paired"] = []  # no paired row: a dash, not a figure
    new = summary("run-2", "2026-03-02T02:00:00Z", seed=9, status="fail", continuity=(-0.1, -0.3, 0.05))
    points = [point(old, tmp_path / "runs" / "run-1", manifest={"suite": "starter", "shard": "1/2"}),
              point(new, tmp_path / "runs" / "run-2")]
    page = render_history(points, tmp_path, ["a warning"])
    newest, brk, oldest = _rows(page)
    assert newest.startswith("<tbody>\n<tr><td>2026-03-02T02:00:00Z</td><td>") and "<td>offline/reference</td>" in newest
    assert '<a href="runs/run-2/index.html"><code>run-2</code></a></td>' in newest and "(shard" not in newest
    assert '<span class="badge v-fail">fail</span>' in newest and "<td>20 (0)</td>" in newest
    assert "<td>-0.100 [-0.300, +0.050]</td><td>+0.000 [-0.100, +0.100]</td>" in newest
    assert brk == ('\n<tr class="brk"><td colspan="8"><b>series break</b> (the runs above are not joined to the runs '
                   "below): seed: 0 -&gt; 9</td>")
    assert "<code>run-1</code></a> (shard 1/2)</td><td>starter · " in oldest and "<td>40 (3)</td>" in oldest
    assert "<td>—</td><td>—</td>" in oldest
    assert "2 run(s) in 2 series from 2026-03-01T02:00:00Z to 2026-03-02T02:00:00Z" in page
    assert '<p class="muted">warning: a warning</p>' in page
    assert "<h3>offline/reference</h3>" in page and page.count("<svg ") == 3  # the model's three charts
    assert "1 run(s) in 1 series" in render_history(points[:1], tmp_path)


def test_the_page_of_no_run_says_so_and_a_broken_character_cannot_stop_it(tmp_path: Path) -> None:
    three = [point(summary(f"run-{n}", f"2026-03-0{n}T02:00:00Z")) for n in (1, 2, 3)]
    assert "3 run(s) in 1 series from 2026-03-01T02:00:00Z to 2026-03-03T02:00:00Z;" in render_history(three, tmp_path)
    empty = render_history([], tmp_path)
    assert "0 run(s) in 0 series from  to ;" in empty and "No model in these runs." in empty
    odd = render_history([point(summary("run-\ud800x"))], tmp_path)  # a lone surrogate parsed from a JSON escape
    assert "<code>run-?x</code>" in odd


def test_text_from_the_summaries_is_escaped_wherever_the_page_shows_it(tmp_path: Path) -> None:
    bad = "<img src=x onerror=alert(1)>"  # a run folder's summary is a file anyone with the folder can edit
    arms = {f"arm{bad}": (0.2, 0.0, 0.5), "recall": (0.45, 0.2, 0.7)}
    first = summary(f"run{bad}", f"2026{bad}", model=f"m{bad}", arms=arms, status='pass" onmouseover="alert(1)')
    second = summary("run-2", "2026-03-02T02:00:00Z", model=f"m{bad}", arms=arms)
    second["judge"] = {"model": f"judge{bad}"}
    page = render_history([point(first), point(second)], tmp_path, [f"warn{bad}"])
    assert "<img" not in page and 'onmouseover="' not in page
    esc = "&lt;img src=x onerror=alert(1)&gt;"
    assert f"<h3>m{esc}</h3>" in page and f"<code>run{esc}</code>" in page  # the model heading, the runs table
    assert f"<title>run{esc} (2026{esc}) · " in page  # a point's tooltip
    assert f'</span>arm{esc} </p>' in page  # the per-arm legend
    assert page.count(f"judge: none -&gt; judge{esc}") == 4  # the break's tooltip on three charts and its table row
    assert f"warning: warn{esc}" in page
    assert 'class="vd v-pass&#34; onmouseover=&#34;alert(1)" cx=' in page  # a verdict cannot add an attribute


def _args(tmp_path: Path, *dirs: Path, out: str = "site/h.html", **flags: bool) -> argparse.Namespace:
    return argparse.Namespace(dirs=[str(d) for d in dirs], out=str(tmp_path / out),
                              include_shards=flags.get("include_shards", False),
                              include_sensitive=flags.get("include_sensitive", False))


def test_history_prints_each_break_and_where_the_page_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "reports"
    run_folder(root, "a", summary("a", "2026-03-01T02:00:00Z"))
    run_folder(root, "b", summary("b", "2026-03-02T02:00:00Z", seed=4, epochs=2))
    run_folder(root, "c")
    run_folder(root, "d", summary("d", "2026-03-03T02:00:00Z", seed=4, epochs=2))
    page = tmp_path / "site" / "deep" / "h.html"
    for _ in range(2):  # the second time into the folders the first made
        assert cli_history(_args(tmp_path, root, out="site/deep/h.html")) == 0
        captured = capsys.readouterr()
        assert captured.out.splitlines() == [
            "series break before b (2026-03-02T02:00:00Z): epochs: 1 -> 2; seed: 0 -> 4",
            f"history of 3 run(s) in 2 series, 2026-03-01T02:00:00Z to 2026-03-03T02:00:00Z: {page}"]
        assert captured.err.startswith(f"warning: {root / 'c'}: no summary.json, left out")
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and f"warning: {root / 'c'}: no summary.json, left out" in html


def test_history_charts_shards_and_sensitive_runs_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shard = run_folder(tmp_path, "shard", summary("shard"), shard={"index": 1, "count": 2})
    secret = run_folder(tmp_path, "secret", summary("secret", "2026-03-02T02:00:00Z"), parameters={"sensitive": True})
    assert cli_history(_args(tmp_path, shard, secret, include_shards=True, include_sensitive=True)) == 0
    assert "history of 2 run(s) in 1 series" in capsys.readouterr().out
    assert cli_history(_args(tmp_path, shard, secret, include_shards=True)) == 0
    captured = capsys.readouterr()
    assert "history of 1 run(s)" in captured.out and "1 sensitive run folder(s) left out" in captured.err
    assert cli_history(_args(tmp_path, shard, secret, include_sensitive=True)) == 0
    captured = capsys.readouterr()
    assert "history of 1 run(s)" in captured.out and "1 shard folder(s) left out" in captured.err


def test_history_with_no_run_to_show_exits_2_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = run_folder(tmp_path, "secret", summary(), parameters={"sensitive": True})
    assert cli_history(_args(tmp_path, secret)) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "recall-eval history: no run with a summary.json; build the reports first (`recall-eval report DIR`) "
        "(sensitive runs need --include-sensitive)")
    bare = run_folder(tmp_path, "bare")
    assert cli_history(_args(tmp_path, bare, include_sensitive=True)) == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith("(`recall-eval report DIR`)")
    assert cli_history(_args(tmp_path, tmp_path / "nope")) == 2
    assert capsys.readouterr().err == (f"recall-eval history: {tmp_path / 'nope'}: no such folder; pass run folders "
                                       "(or folders of them) written by `recall-eval run`\n")
    assert not (tmp_path / "site").exists()


def test_history_that_cannot_write_its_page_exits_2_naming_the_file(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    run = run_folder(tmp_path, "r", summary())
    (tmp_path / "blocker").write_text("a file where the page's folder should be")
    assert cli_history(_args(tmp_path, run, out="blocker/h.html")) == 2
    err = capsys.readouterr().err
    assert err == f"recall-eval history: {tmp_path / 'blocker'}: cannot write the page (File exists); choose another --out\n"
    json.loads((run / "summary.json").read_text())  # nothing of the run was touched
