"""Faults of a judge model reached over HTTP (the fake OpenAI-compatible server on 127.0.0.1)."""

from __future__ import annotations

import json

import pytest

from tests.integration.fake_openai_server import FakeOpenAIServer, Script
from tests.integration.offline_runs import offline_run


@pytest.fixture(autouse=True)
def _setup(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-recall-eval-dummy-0123456789abcdef")
    monkeypatch.chdir(tmp_path)


def test_judge_replying_prose_instead_of_json_is_recorded_as_malformed(tmp_path, capsys):
    """A judge answering "I don't know." instead of JSON: the report still builds, and each grounding
    reply is counted malformed and adds no claim."""
    from harness.cli import main

    run_dir = offline_run(tmp_path)
    with FakeOpenAIServer(Script(mode="recall")) as server:  # no tools offered -> "I don't know."
        code = main(["report", str(run_dir), "--judge-model", "openai/fake", "--judge-api-base", server.base_url])
    err = capsys.readouterr().err
    assert code in (0, 1) and "Traceback" not in err
    grounding = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["judge"]["grounding"]
    assert grounding["judged"] > 0 and grounding["malformed"] == grounding["judged"] and grounding["ungrounded"] == 0
    scores = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    reasons = [x["reason"] for s in scores for x in s["scores"] if x["name"] == "grounding"]
    assert reasons and all("unreadable" in r for r in reasons)


def test_judge_server_rejecting_every_request_exits_2_naming_the_model(tmp_path, capsys):
    """A judge endpoint answering 401 to every request: `report` exits 2 with one line naming the
    judge model, no traceback."""
    from harness.cli import main

    run_dir = offline_run(tmp_path)
    with FakeOpenAIServer(Script(fail_status=401, fail_times=None)) as server:
        code = main(["report", str(run_dir), "--judge-model", "openai/fake", "--judge-api-base", server.base_url])
    err = capsys.readouterr().err
    assert code == 2 and "judge model 'openai/fake' failed" in err and "Traceback" not in err
