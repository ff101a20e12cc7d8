"""A real-provider model that never calls the memory tools and invents answers (seen on a small local model).

Through litellm's real ``openai/`` provider and the fake server's ``invent`` mode,
on the starter suite's abstention scenarios: every invented answer to an
unanswerable question counts as an unsupported claim, and the report leads
with the fact that the model never used the tools it was offered.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.cli import main
from harness.records import scan_results
from tests.integration.fake_openai_server import INVENTED_ANSWER, FakeOpenAIServer

STARTER = Path(__file__).resolve().parents[2] / "scenarios" / "starter"


def test_invented_answers_to_unanswerable_questions_are_unsupported_claims_and_no_tool_use_leads(
        tmp_path: Path, server: FakeOpenAIServer, capsys) -> None:
    """An invented answer to each of the 5 abstention probes among the 7 scenarios of the abstention category is an
    ``answered_unanswerable`` claim in both arms (the other 2, abs-02 and abs-04, are answered with a status their
    memory holds: there it is a wrong answer); tool use 0 leads the verdict."""
    server.script.mode = "invent"
    out = tmp_path / "run"
    code = main(["run", "--model", "openai/fake", "--api-base", server.base_url, "--scenarios", str(STARTER),
                 "--filter", "category:abstention", "--arms", "history_only", "recall", "--out", str(out),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0
    records = scan_results(out / "results.jsonl").records
    assert len(records) == 14 and {r.final_answer for r in records} == {INVENTED_ANSWER}
    assert not any(r.tool_calls for r in records)
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert sum(sample["should_abstain"] for sample in scores) == 10
    for sample in scores:
        assert sample["outcome"] == "wrong", sample["sample_id"]
        if sample["should_abstain"]:
            claims = next(s for s in sample["scores"] if s["name"] == "unsupported_claims")
            assert claims["value"] == 1 and claims["reason"].startswith("answered_unanswerable: "), sample["sample_id"]
    summary = json.loads((out / "summary.json").read_text())
    kinds = {(r["arm"], r["kind"]): r["samples"] for r in summary["unsupported_by_kind"]}
    assert kinds == {("history_only", "answered_unanswerable"): 5, ("recall", "answered_unanswerable"): 5}
    rates = {r["arm"]: r["value"] for r in summary["metrics"]
             if r["metric"] == "unsupported_claim_rate" and r["category"] == "all"}
    assert rates == {"history_only": round(5 / 7, 6), "recall": round(5 / 7, 6)}
    lead = summary["headlines"][0]
    assert lead["code"] == "low_tool_use" and lead["lead"]
    assert printed.index("low tool use") < printed.index("verdict:")  # the tool-use line comes before the verdict
