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


def test_a_judge_server_that_never_answers_is_given_up_after_the_runs_timeout_and_retries_with_a_heartbeat(tmp_path):
    """A judge server that accepts each request and does not answer for 60 s, for a run made with `--timeout 1
    --retries 1`: a real `report --judge-model` process tries each judge call twice at 1 s a try, prints the
    heartbeat line while it waits, and exits 2 naming the model, the tries and the timeout (it used to wait as long
    as the server kept the connection open, printing nothing)."""
    import os
    import subprocess
    import sys

    from harness.cli import main
    from tests.fault.conftest import REPO, cli_env, finish
    from tests.integration.conftest import SMOKE

    run_dir = tmp_path / "run"
    code = main(["run", "--scenarios", str(SMOKE), "--filter", "smoke-02*", "--arms", "history_only", "recall",
                 "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--timeout", "1",
                 "--retries", "1"])
    assert code in (0, 1)
    with FakeOpenAIServer(Script(mode="recall", delay_s=60)) as server:
        env = cli_env() | {"PYTHONPATH": str(REPO), "RECALL_EVAL_HEARTBEAT_S": "0.4"}
        proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "report", str(run_dir), "--judge-model",
                                 "openai/gpt-4o-mini", "--judge-api-base", server.base_url], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        code, _, err = finish(proc, timeout=120)  # a hang fails here, clearly
        judge_requests = len(server.requests)
    assert code == 2 and "Traceback" not in err, err
    assert "judge model 'openai/gpt-4o-mini' failed after 2 tries (--timeout 1 s a try): Timeout" in err, err
    assert "[recall-eval] still judging: 0 judge calls answered, one in flight for" in err
    assert "(try 2 of 2, --timeout 1 s)" in err and "last timeout" in err
    assert judge_requests == 2
    assert os.environ.get("RECALL_EVAL_HEARTBEAT_S") is None


def test_a_judge_server_that_never_answers_stops_the_report_after_three_timeouts_in_a_row_not_every_retry(tmp_path):
    """The same silent judge server for a run made with `--timeout 1` and the default `--retries 4`: a real `report
    --judge-model` process gives up after 3 tries in a row timed out (as the runner stops a model server that times
    out alone), not after all 5 tries of the first call; one line naming the stop and --timeout, exit 2, the run's
    results.jsonl untouched and no report written."""
    import subprocess
    import sys

    from harness.cli import main
    from tests.fault.conftest import REPO, cli_env, finish
    from tests.integration.conftest import SMOKE

    run_dir = tmp_path / "run"
    code = main(["run", "--scenarios", str(SMOKE), "--filter", "smoke-02*", "--arms", "history_only", "recall",
                 "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--timeout", "1"])
    assert code in (0, 1)
    (run_dir / "summary.json").unlink()
    results = (run_dir / "results.jsonl").read_bytes()
    with FakeOpenAIServer(Script(mode="recall", delay_s=60)) as server:
        env = cli_env() | {"PYTHONPATH": str(REPO)}
        proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "report", str(run_dir), "--judge-model",
                                 "openai/gpt-4o-mini", "--judge-api-base", server.base_url], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        code, _, err = finish(proc, timeout=120)
        judge_requests = len(server.requests)
    assert code == 2 and "Traceback" not in err, err
    lines = [line for line in err.splitlines() if not line.startswith("[recall-eval] still judging")]
    assert len(lines) == 1 and lines[0].startswith(
        "recall-eval report: judge model 'openai/gpt-4o-mini': stopped: 3 judge tries in a row timed out or failed on "
        "the server (--timeout 1 s a try), the last Timeout"), err
    assert "give the run a longer --timeout; the run's results are kept" in lines[0]
    assert judge_requests == 3
    assert (run_dir / "results.jsonl").read_bytes() == results and not (run_dir / "summary.json").exists()
