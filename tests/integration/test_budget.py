"""``--max-cost-usd``: the run stops before its recorded cost would pass the limit, and resumes to the end.

The fake server answers as ``openai/gpt-4o-mini``, a model litellm has a price for, and reports
4,242 prompt tokens per call, so every call has a real recorded cost.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.records import RESULTS_FILE, read_manifest, scan_results
from harness.run.budget import recorded_cost
from tests.integration.conftest import SMOKE
from tests.integration.fake_openai_server import FakeOpenAIServer


def _run(tmp_path: Path, server: FakeOpenAIServer, *flags: str) -> int:
    return main(["run", "--model", "openai/gpt-4o-mini", "--api-base", server.base_url, "--scenarios", str(SMOKE),
                 "--arms", "history_only", "recall", "--out", str(tmp_path / "run"), "--no-cache", "--no-progress",
                 "--max-concurrency", "2", *flags])


def test_max_cost_stops_before_the_recorded_cost_passes_it_and_resume_finishes(tmp_path: Path, server: FakeOpenAIServer,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    limit = 0.004  # a call costs ~$0.00065 here: a few samples fit, not all ten
    assert _run(tmp_path, server, "--max-cost-usd", str(limit)) == 3
    err = capsys.readouterr().err
    assert "--max-cost-usd $0.0040 reached" in err and "--resume" in err
    records = scan_results(tmp_path / "run" / RESULTS_FILE).records
    spent = recorded_cost(records)
    assert 0 < spent <= limit
    assert read_manifest(tmp_path / "run").status == "interrupted"
    assert 0 < sum(r.status == "ok" for r in records) < 10
    assert all(r.error.type == "BudgetExceeded" for r in records if r.status == "error")
    calls_before = len(server.requests)

    assert main(["run", "--resume", str(tmp_path / "run"), "--no-progress", "--max-cost-usd", "1"]) in (0, 1)
    final = scan_results(tmp_path / "run" / RESULTS_FILE).records
    assert len(final) == 10 and {r.status for r in final} == {"ok"}
    assert read_manifest(tmp_path / "run").status == "complete"
    assert recorded_cost(final) <= 1 and len(server.requests) > calls_before


def test_max_cost_with_a_model_litellm_has_no_price_for_is_refused_before_any_call(run_cli, server: FakeOpenAIServer) -> None:
    result = run_cli("--max-cost-usd", "1")
    assert result.code == 2 and "no price for openai/fake" in result.err
    assert server.requests == [] and not result.run_dir.exists()
