"""Both judges over the real litellm wire path, against the fake OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest

from tests.integration import fake_openai_server
from tests.integration.conftest import SMOKE
from tests.integration.offline_runs import offline_run


def _judge_decide(script, body):
    """Reply as a grounding judge (fenced JSON, flagging answers quoting notes) or as a rubric judge."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    if "unsupported claims" in system:
        answer = user.split("<<<ANSWER\n")[-1]
        found = [{"claim": "the quoted note", "why": "scripted"}] if "notes" in answer.lower() else []
        return "Here is my review:\n```json\n" + json.dumps({"unsupported": found}) + "\n```", []
    return json.dumps({"verdict": "pass", "reason": "scripted pass"}), []


def test_grounding_and_rubric_judges_through_litellm_to_a_local_server(tmp_path, server, monkeypatch, capsys):
    from harness.cli import main

    run_dir = offline_run(tmp_path)
    monkeypatch.setattr(fake_openai_server, "decide", _judge_decide)
    capsys.readouterr()
    code = main(["report", str(run_dir), "--judge-model", "openai/fake", "--judge-api-base", server.base_url])
    assert code in (0, 1), capsys.readouterr().err
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    grounding = summary["judge"]["grounding"]
    scores = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    judged = [s for s in scores if any(x["name"] == "grounding" for x in s["scores"])]
    flagged = [s for s in judged if next(x for x in s["scores"] if x["name"] == "grounding")["value"]]
    assert grounding["judged"] == len(judged) > 0 and grounding["ungrounded"] == len(flagged)
    assert grounding["malformed"] == 0 and grounding["calibration"]["n"] >= 60
    assert grounding["calibration"]["cohen_kappa"] is not None
    bodies = [seen.body for seen in server.requests]
    assert all(b["model"] == "fake" and b["temperature"] == 0 for b in bodies)
    grounding_bodies = [b for b in bodies if "unsupported claims" in b["messages"][0]["content"]]
    assert len(grounding_bodies) == len(judged) + grounding["calibration"]["n"]
    assert not any(arm in json.dumps(b) for b in grounding_bodies for arm in ("history_only", '"recall"'))
    assert (tmp_path / ".recall-eval-cache" / "judge").is_dir()


@pytest.fixture(autouse=True)
def _judge_cache_in_tmp(tmp_path, monkeypatch):
    """The judge cache goes to ./.recall-eval-cache/judge: keep it in the test's folder."""
    monkeypatch.chdir(tmp_path)


def test_run_judge_api_base_sends_the_judge_to_that_server_and_records_it(tmp_path, server, monkeypatch, capsys):
    """`run --judge-api-base` means what `report --judge-api-base` means: the judges' endpoint (run.json keeps it)."""
    from harness.cli import main

    monkeypatch.setattr(fake_openai_server, "decide", _judge_decide)
    run_dir = tmp_path / "run"
    code = main(["run", "--scenarios", str(SMOKE), "--filter", "smoke-02*", "--arms", "history_only", "recall",
                 "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                 "--judge-model", "openai/fake", "--judge-api-base", server.base_url])
    assert code in (0, 1), capsys.readouterr().err
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["judge"]["grounding"]["judged"] > 0 and summary["judge"]["grounding"]["malformed"] == 0
    assert server.requests and all(seen.body["model"] == "fake" for seen in server.requests)
    manifest = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert manifest["parameters"]["judge_api_base"] == server.base_url


def test_run_judge_preset_grades_with_the_benchmark_protocol_and_records_it(tmp_path, server, monkeypatch, capsys):
    """`run --judge-preset longmemeval`: the rubric judge's requests carry that protocol; run.json and summary name it."""
    from harness.cli import main

    monkeypatch.setattr(fake_openai_server, "decide", _judge_decide)
    run_dir = tmp_path / "run"
    code = main(["run", "--scenarios", str(SMOKE), "--filter", "smoke-02*", "--arms", "history_only", "recall",
                 "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                 "--judge-model", "openai/fake", "--judge-api-base", server.base_url, "--judge-preset", "longmemeval"])
    assert code in (0, 1), capsys.readouterr().err
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["judge"]["prompt"]["name"] == "longmemeval" and summary["judge"]["prompt"]["version"] == "longmemeval-v1"
    assert json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["parameters"]["judge_preset"] == "longmemeval"
    rubric = [seen.body for seen in server.requests if "unsupported claims" not in seen.body["messages"][0]["content"]]
    assert rubric and all('"label": "yes" or "no"' in b["messages"][0]["content"] for b in rubric)
    assert list((run_dir / "judges").glob("*.json"))
