"""Lone surrogates (``"\\ud800"`` in a provider's JSON): text UTF-8 cannot encode, in answers, tool calls and judge replies.

Every writer (records, response cache, judge cache, report) writes them as JSON
escapes, readers get them back, and the answer is scored as sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.records import scan_results
from tests.fault.conftest import fake_run_argv, finish, start
from tests.integration.fake_openai_server import FakeOpenAIServer, Script

LONE = "\ud800"
OTHER = "\udfff"
ARMS = ("history_only", "recall", "full_history")


def _surrogates_everywhere(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    """The fake model's reply with lone surrogates in its answer and in its tool call's id, name and arguments."""
    message = reply["choices"][0]["message"]
    if message.get("content"):
        message["content"] += f" {LONE}"
    for call in message.get("tool_calls") or []:
        call["id"] += LONE
        call["function"]["arguments"] = call["function"]["arguments"].replace('"terms": [', f'"terms": ["x{OTHER}", ')
    return reply


def _surrogate_in_answer(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    message = reply["choices"][0]["message"]
    if message.get("content"):
        message["content"] += f" {LONE}"
    return reply


def _utf8_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines()]  # strict: valid UTF-8 or it raises


def test_lone_surrogates_from_the_model_are_written_read_back_and_resume_finds_nothing_to_do(tmp_path: Path) -> None:
    """Lone surrogates in answers and tool call ids and arguments: every record is written (valid UTF-8, the
    surrogate as a JSON escape), the answer reads back as sent, and ``--resume`` has nothing left to run."""
    with FakeOpenAIServer(Script(respond=_surrogates_everywhere)) as server:
        code, out, err = finish(start(fake_run_argv(server.base_url, "--no-cache", out=tmp_path / "run"), tmp_path))
        assert code in (0, 1), err
        assert "Traceback" not in err
        records = _utf8_lines(tmp_path / "run" / "results.jsonl")
        assert len(records) == 9 and {r["status"] for r in records} == {"ok"}
        assert all(r["final_answer"].endswith(f" {LONE}") for r in records)
        recall = [r for r in records if r["arm"] == "recall"]
        assert all(r["tool_calls"][0]["call_id"].endswith(LONE) and OTHER in r["tool_calls"][0]["arguments"] for r in recall)
        assert json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["status"] == "complete"
        assert len(scan_results(tmp_path / "run" / "results.jsonl").records) == 9
        requests = len(server.requests)
        code, out, err = finish(start(fake_run_argv(server.base_url, resume=tmp_path / "run"), tmp_path))
        assert code in (0, 1) and "Traceback" not in err, err
        assert len(server.requests) == requests  # nothing was run again
    scores = _utf8_lines(tmp_path / "run" / "scores.jsonl")
    assert len(scores) == 9
    json.loads((tmp_path / "run" / "summary.json").read_bytes().decode("utf-8"))
    assert (tmp_path / "run" / "index.html").read_bytes().decode("utf-8")  # valid UTF-8: shown as U+FFFD, kept as escapes in its data


def test_lone_surrogates_are_cached_and_a_rerun_replays_them_from_the_cache(run_cli, server: FakeOpenAIServer) -> None:
    """With the response cache on, an answer holding a lone surrogate is stored (no error sample) and a rerun is
    served from the cache with the same text."""
    server.script.respond = _surrogates_everywhere

    first = run_cli(scenario="smoke-0[123]*", arms=ARMS)
    assert {r.status for r in first.records()} == {"ok"}, [r.error for r in first.records()]
    entries = list(first.cache_dir.rglob("*.json"))
    assert entries and all(path.read_bytes().decode("utf-8") for path in entries)
    calls = len(server.requests)

    from harness.cli import main

    second_dir = first.run_dir.with_name("again")
    argv = [
        "run",
        "--model",
        "openai/fake",
        "--api-base",
        server.base_url,
        "--scenarios",
        str(Path(__file__).resolve().parents[2] / "scenarios" / "smoke"),
        "--filter",
        "smoke-0[123]*",
        "--arms",
        *ARMS,
        "--out",
        str(second_dir),
        "--cache-dir",
        str(first.cache_dir),
        "--no-progress",
    ]
    assert main(argv) in (0, 1)
    assert len(server.requests) == calls  # every call a cache hit
    again = scan_results(second_dir / "results.jsonl").records
    assert sorted(r.final_answer or "" for r in again) == sorted(r.final_answer or "" for r in first.records())
    assert all(call.cached for r in again for call in r.model_calls)


def test_an_answer_with_a_lone_surrogate_is_scored_as_sent(run_cli, server: FakeOpenAIServer) -> None:
    """The same answers with and without a trailing lone surrogate get the same outcome for every sample."""
    plain = run_cli("--no-cache", scenario="smoke-0[123]*", arms=ARMS)
    server.script.respond = _surrogate_in_answer
    odd = run_cli("--no-cache", scenario="smoke-0[123]*", arms=ARMS)

    def outcomes(run_dir: Path) -> dict[str, str]:
        return {s["sample_id"]: s["outcome"] for s in _utf8_lines(run_dir / "scores.jsonl")}

    assert outcomes(plain.run_dir) == outcomes(odd.run_dir)
    assert "correct" in outcomes(odd.run_dir).values()


def test_a_judge_reply_with_a_lone_surrogate_is_cached_and_read_back(tmp_path: Path, monkeypatch, capsys) -> None:
    """``report --judge-model`` whose judge replies hold a lone surrogate: the report builds, the judge cache is
    written and a second report is served from it (no new judge call)."""
    from harness.cli import main
    from tests.integration.offline_runs import offline_run

    monkeypatch.chdir(tmp_path)
    run_dir = offline_run(tmp_path)

    def judge(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        reply["choices"][0]["message"]["content"] = json.dumps({"verdict": "pass", "reason": f"fine {LONE}", "claims": []})
        return reply

    with FakeOpenAIServer(Script(respond=judge)) as server:
        argv = ["report", str(run_dir), "--judge-model", "openai/fake", "--judge-api-base", server.base_url]
        assert main(argv) in (0, 1)
        err = capsys.readouterr().err
        assert "Traceback" not in err and "failed" not in err, err
        asked = len(server.requests)
        assert asked > 0
        assert main(argv) in (0, 1)
        assert len(server.requests) == asked
    cached = list((tmp_path / ".recall-eval-cache" / "judge").rglob("*.json"))
    assert cached and any("\\ud800" in path.read_text(encoding="utf-8") for path in cached)
    json.loads((run_dir / "summary.json").read_bytes().decode("utf-8"))
