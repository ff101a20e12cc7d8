"""The imported suites load and validate with 0 errors through the real loader, and run end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.importers.locomo import CATEGORY_TEXT, SYSTEM_PROMPT
from harness.scenarios import load_suite
from tests.importers.importer_fixtures import imported, read_yaml


@pytest.mark.parametrize("kind", ["locomo", "longmemeval"])
def test_an_imported_suite_validates_with_0_errors_through_the_loader(tmp_path: Path, kind: str) -> None:
    out, _ = imported(kind, tmp_path)
    suite = load_suite([out])
    assert [str(p) for p in suite.errors] == []
    expected = sorted(f"{read_yaml(p)['id']}/{probe['id']}" for p in out.glob("[!_]*.yaml") for probe in read_yaml(p)["probes"])
    assert sorted(s.id for s in suite.scenarios) == expected
    # the only warnings are the fixtures' tiny stores without a distractor
    assert {p.message for p in suite.problems} <= {
        "no distractor: add at least one item with role distractor, stale or canary so retrieval has to choose"}


def test_the_loaded_locomo_probes_carry_the_suite_prompt_categories_speakers_and_checks(tmp_path: Path) -> None:
    out, _ = imported("locomo", tmp_path)
    scenarios = {s.id: s for s in load_suite([out]).scenarios}
    trap, listed = scenarios["conv-1/q005"], scenarios["conv-1/q002"]
    assert trap.system_prompt == SYSTEM_PROMPT and trap.categories == CATEGORY_TEXT
    assert trap.category == "adversarial" and trap.expect.canaries[0].kind == "someone_else"
    assert listed.sessions[0].turns[0].speaker == "Maya"
    assert listed.expect.must_contain_groups == [["Sweden"], ["Canada"]] and listed.expect.f1_reference == "Sweden, Canada"
    roles = {item.id: item.role for item in listed.items}
    assert roles["obs-1-3"] == "answer" and roles["obs-1-1"] == "distractor"  # item_roles apply per probe
    assert {item.id: item.role for item in scenarios["conv-1/q001"].items}["obs-1-1"] == "answer"


def test_an_imported_suite_runs_end_to_end_on_the_offline_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = imported("locomo", tmp_path)
    run = tmp_path / "run"
    code = main(["run", "--scenarios", str(out), "--filter", "conv-1/q00[15]", "--out", str(run), "--no-progress",
                 "--no-cache", "--arms", "history_only", "recall"])
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert sorted((r["scenario_id"], r["arm"]) for r in records) == [
        ("conv-1/q001", "history_only"), ("conv-1/q001", "recall"), ("conv-1/q005", "history_only"), ("conv-1/q005", "recall")]
    assert all(r["status"] == "ok" for r in records), capsys.readouterr()
    assert code in (0, 1)  # the verdict on two probes is not the point; finishing without errors is


def test_the_report_shows_how_many_scored_questions_the_gold_audit_flagged(tmp_path: Path) -> None:
    from tests.importers.importer_fixtures import locomo_sample, write_source

    source = write_source(tmp_path, "locomo10.json", [locomo_sample([
        {"question": "What does Ben love?", "answer": "watchingmovies", "evidence": ["D1:2"], "category": 4},
        {"question": "Where did Ana go?", "answer": "Sweden", "evidence": ["D1:1"], "category": 4},
        {"question": "What did Ben win?", "answer": "the cup", "evidence": ["D2:1"], "category": 4},
    ])])
    out, _ = imported("locomo", tmp_path, source)
    run = tmp_path / "run"
    main(["run", "--scenarios", str(out), "--filter", "conv-9/q00[12]", "--out", str(run), "--no-progress",
          "--no-cache", "--arms", "history_only", "recall"])
    summary = json.loads((run / "summary.json").read_text())
    assert summary["run"]["gold_audit"] == {"flagged": 1, "scored": 2}  # q003 is not scored in this run
    note = "gold audit: 1 of 2 scored questions have a check that looks unpassable"
    assert any(h["code"] == "gold_audit" and h["text"].startswith(note) for h in summary["headlines"])
    assert note in (run / "index.html").read_text()


def test_scores_jsonl_holds_each_samples_session_retrieval_so_both_populations_means_can_be_recomputed(
        tmp_path: Path) -> None:
    """A LongMemEval-shaped file with a user-side question and a single-session-assistant one (its target turn is
    the assistant's), run on the offline model: scores.jsonl gives each sample's figures on LongMemEval's population
    (null for the assistant-side question, which LongMemEval's retrieval evaluation skips) and on ours, and their
    means are summary.json's rows. Bug planted: the figures left out of scores.jsonl (the means could not be audited)."""
    from tests.importers.importer_fixtures import longmemeval_question, write_source

    assistant = longmemeval_question("q-2", qtype="single-session-assistant")
    for turns in assistant["haystack_sessions"]:
        for turn in turns:
            turn.pop("has_answer", None)
    assistant["haystack_sessions"][1][1] |= {"content": "You went to Lake Tahoe with your sister.", "has_answer": True}
    source = write_source(tmp_path, "longmemeval_oracle.json", [longmemeval_question("q-1"), assistant])
    out, _ = imported("longmemeval", tmp_path, source)
    run = tmp_path / "run"
    main(["run", "--scenarios", str(out), "--out", str(run), "--no-progress", "--no-cache", "--arms", "recall"])
    lines = {row["scenario_id"]: row for row in map(json.loads, (run / "scores.jsonl").read_text().splitlines())}
    user_id, assistant_id = "q-1/q", "q-2/q"
    assert lines[assistant_id]["session_retrieval"] is None and lines[assistant_id]["ours_session_retrieval"] is not None
    assert lines[user_id]["session_retrieval"] is not None
    rows = {(r["category"], r["metric"]): r for r in json.loads((run / "summary.json").read_text())["metrics"]
            if r["arm"] == "recall"}
    for field, prefix in (("session_retrieval", "session_"), ("ours_session_retrieval", "ours_session_")):
        for figure in ("recall_all@5", "ndcg@10"):
            values = [line[field][figure] for line in lines.values() if line[field] is not None]
            row = rows[("all", f"{prefix}{figure}")]
            assert (row["value"], row["n"]) == (pytest.approx(sum(values) / len(values)), len(values)), (field, figure)
