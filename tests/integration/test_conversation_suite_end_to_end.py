"""A conversation suite end to end on the offline model: ``tests/fixtures/conversation_suite`` run, reported and read back.

One conversation between Caroline and Melanie (speakers), a suite system
prompt and categories (``_defaults.yaml``), a list answer
(``must_contain_groups``), token-F1 references, the someone_else trap and a
question only a speaker's name would seem to answer.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.records import RESULTS_FILE, scan_results

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "conversation_suite"
ARMS = ("history_only", "recall", "full_history")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conversation_run")
    code = main(["run", "--scenarios", str(SUITE), "--out", str(root / "run"), "--cache-dir", str(root / "cache"),
                 "--no-progress", "--retries", "0"])
    assert code == 0
    return root / "run"


@pytest.fixture(scope="module")
def records(run_dir: Path) -> dict[tuple[str, str], Any]:
    return {(r.scenario_id, r.arm): r for r in scan_results(run_dir / RESULTS_FILE).records}


@pytest.fixture(scope="module")
def scores(run_dir: Path) -> dict[tuple[str, str], dict[str, Any]]:
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    return {(r["scenario_id"], r["arm"]): r for r in rows}


@pytest.fixture(scope="module")
def summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


def _score(scores: dict[tuple[str, str], dict[str, Any]], sid: str, arm: str, name: str) -> dict[str, Any]:
    return next(s for s in scores[(sid, arm)]["scores"] if s["name"] == name)


def test_the_model_sees_speaker_names_and_the_suites_system_prompt_in_every_arm(records: dict) -> None:
    """Caught planted bugs: turns sent without their speaker; the scenario's system prompt ignored."""
    for arm in ARMS:
        system = records[("conv-cm/q1", arm)].messages[0]["content"]
        assert system.startswith("You answer questions about the conversations between Caroline and Melanie")
        assert "Current date and time: 2023-07-01T09:00:00Z (Saturday)." in system
    pasted = "\n".join(m["content"] or "" for m in records[("conv-cm/q1", "full_history")].messages)
    assert "Caroline: I am moving to Lisbon in September." in pasted and "Melanie: My kids would love" in pasted


def test_a_list_answer_passes_in_any_order_and_the_fact_earns_it(scores: dict, records: dict) -> None:
    """Caught planted bugs: groups required in order; speaker labels kept in the offline model's statements."""
    for arm in ("recall", "full_history"):
        assert scores[("conv-cm/q2", arm)]["outcome"] == "correct"
    assert records[("conv-cm/q2", "full_history")].final_answer.startswith("Earlier Caroline said:")
    assert scores[("conv-cm/q2", "history_only")]["outcome"] == "abstained_wrongly"


def test_a_speaker_name_alone_earns_no_answer_in_any_arm(scores: dict) -> None:
    """Caught planted bug: speaker labels kept in the offline model's statements ("Melanie" answered q4)."""
    assert {scores[("conv-cm/q4", arm)]["outcome"] for arm in ARMS} == {"abstained_correctly"}


def test_the_someone_else_trap_is_counted_apart_from_invented(scores: dict, summary: dict) -> None:
    """Caught planted bug: someone_else canaries filed as ``invented``."""
    for arm in ("recall", "full_history"):
        claims = _score(scores, "conv-cm/q3", arm, "unsupported_claims")
        assert claims["value"] == 2 and "someone_else: 'sunset'" in claims["reason"]
    kinds = {(r["arm"], r["kind"]): r["claims"] for r in summary["unsupported_by_kind"]}
    assert kinds[("full_history", "someone_else")] == 1 and ("full_history", "invented") not in kinds


def test_token_f1_is_reported_per_sample_and_per_arm_and_category_but_not_in_the_verdict(
        scores: dict, summary: dict, run_dir: Path) -> None:
    """Caught planted bug: per-category rows only for the built-in categories."""
    assert _score(scores, "conv-cm/q1", "full_history", "token_f1")["value"] == pytest.approx(2 / 11, abs=1e-4)
    rows = {(r["arm"], r["category"]): r for r in summary["metrics"] if r["metric"] == "token_f1"}
    assert rows[("recall", "single_hop")]["value"] == pytest.approx(2 / 11, abs=1e-6)
    assert rows[("history_only", "all")]["value"] == 0.0 and rows[("history_only", "all")]["n"] == 2
    assert rows[("recall", "adversarial")]["n"] == 0
    with (run_dir / "metrics.csv").open(encoding="utf-8") as handle:
        assert any(r["metric"] == "token_f1" and r["category"] == "multi_hop" for r in csv.DictReader(handle))
    verdict = json.dumps(summary["verdict"])
    assert "f1" not in verdict.lower()


def test_suite_categories_are_broken_down_with_their_descriptions(summary: dict, run_dir: Path) -> None:
    """Caught planted bugs: built-in categories only; descriptions dropped; the by-category table missing."""
    assert [(c["name"], c["scenarios"]) for c in summary["categories"]] == [
        ("adversarial", 2), ("multi_hop", 1), ("single_hop", 1)]
    assert summary["categories"][1]["description"] == "A list answer gathered from what was said."
    accuracy = {(r["arm"], r["category"]) for r in summary["metrics"] if r["metric"] == "continuity_accuracy"}
    assert {("recall", c) for c in ("all", "adversarial", "multi_hop", "single_hop")} <= accuracy
    assert {r["category"] for r in summary["paired"]} == {"all", "adversarial", "multi_hop", "single_hop"}
    page = (run_dir / "index.html").read_text(encoding="utf-8")
    assert 'id="by-category"' in page and "One fact said in one session." in page
    adversarial_row = page[page.index('<th scope="row">adversarial'):].split("</tr>")[0]
    assert "F1" not in adversarial_row  # no reference in that category: no F1 shown


def test_scores_frame_has_tags_and_the_suites_categories(run_dir: Path) -> None:
    """Caught planted bug: ``scores_frame`` without the ``tags`` column."""
    from harness.report.frames import scores_frame

    frame = scores_frame(run_dir)
    assert set(frame["category"]) == {"single_hop", "multi_hop", "adversarial"}
    assert all(tags == ["conversation", "speakers"] for tags in frame["tags"])
    assert frame.explode("tags").groupby("tags").size().to_dict() == {"conversation": 12, "speakers": 12}
    q1 = frame[(frame.scenario_id == "conv-cm/q1") & (frame.arm == "history_only")]
    assert q1["token_f1"].iloc[0] == 0.0
