"""Re-grading a finished run with other judge prompts, never calling the agent, and the spread between judges."""

from __future__ import annotations

import json

import pytest

import harness.score.judge as judge_module
from harness.cli import main
from harness.report import build_report
from tests.score.scoring_factories import make_record, make_scenario, write_run


class _ScriptedJudge:
    """Every judge model call of a report: grounding finds nothing; the rubric judge passes answers with ``needle``."""

    def __init__(self) -> None:
        self.rubric_calls = 0
        self.needle = "Postgres 15"

    def __call__(self, model, messages, **_):
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        if "unsupported claims" in system:
            return '{"unsupported": []}'
        self.rubric_calls += 1
        answer = messages[-1]["content"]
        # Passes when the needle is in the graded part of the prompt (after the answer's label).
        graded = answer.rsplit("Response:", 1)[-1] if "Response:" in answer else answer.rsplit("Answer", 1)[-1]
        return "yes" if self.needle in graded else "no"


@pytest.fixture
def scripted(monkeypatch):
    judge = _ScriptedJudge()
    monkeypatch.setattr(judge_module, "litellm_complete", judge)
    # the grounding judge calls litellm through JudgeModel.litellm, so judge_module's name is the one patched

    def agent_called(*args, **kwargs):
        raise AssertionError("a report called a model other than the judge")

    import sys
    import types

    monkeypatch.setitem(sys.modules, "litellm", types.SimpleNamespace(completion=agent_called))
    return judge


def _run(tmp_path):
    scenarios = {sid: make_scenario(sid, category="multi_session",
                                    expect={"rubric": "The gold answer is 'Postgres 15'.", "f1_reference": "Postgres 15"})
                 for sid in ("q-1", "q-2")}
    answers = {("q-1", "recall"): "Billing runs Postgres 15.", ("q-2", "recall"): "Billing runs Postgres 15.",
               ("q-1", "history_only"): "Billing runs Postgres 15.", ("q-2", "history_only"): "Billing runs on a Postgres server."}
    records = [make_record(scenarios[sid], answer, arm=arm) for (sid, arm), answer in answers.items()]
    return write_run(tmp_path / "run", records), scenarios


def test_report_regrades_a_finished_run_with_another_prompt_and_shows_the_spread(tmp_path, scripted) -> None:
    """Bugs planted: the spread taken as max + min; the second judge's file overwriting the first's."""
    run_dir, scenarios = _run(tmp_path)
    cache = tmp_path / "judge-cache"
    build_report(run_dir, judge_model="test/j", judge_preset="longmemeval", scenarios=scenarios, judge_cache_dir=cache)
    first_calls = scripted.rubric_calls
    lenient = tmp_path / "lenient.txt"
    lenient.write_text("Question: {}\nGold: {}\nResponse: {}\nSay yes if it names a Postgres version.", encoding="utf-8")
    scripted.needle = "Postgres"  # the second prompt's judge passes any Postgres version
    outcome = build_report(run_dir, judge_model="test/j", judge_prompt=lenient, scenarios=scenarios,
                           judge_cache_dir=cache)
    summary = json.loads(outcome.summary_json.read_text())
    assert summary["judge"]["prompt"]["file"] == str(lenient) and len(summary["judge"]["prompt"]["sha256"]) == 64
    found = summary["judge_sensitivity"]
    assert sorted(j["prompt"]["name"] for j in found["judges"]) == ["file lenient.txt", "longmemeval"]
    spread = {r["arm"]: r for r in found["spread"]}
    assert spread["history_only"] == {"model": "offline/reference", "arm": "history_only", "judges": 2,
                                      "min": 0.5, "max": 1.0, "spread": 0.5}
    assert spread["recall"]["spread"] == 0.0
    assert len(list((run_dir / "judges").glob("*.json"))) == 2
    page = (run_dir / "index.html").read_text()
    assert "Judge sensitivity" in page and "spread (max − min)" in page
    # Grades are cached per prompt: grading again with either prompt asks the judge nothing.
    calls = scripted.rubric_calls
    assert calls > first_calls
    build_report(run_dir, judge_model="test/j", judge_preset="longmemeval", scenarios=scenarios, judge_cache_dir=cache)
    build_report(run_dir, judge_model="test/j", judge_prompt=lenient, scenarios=scenarios, judge_cache_dir=cache)
    assert scripted.rubric_calls == calls


def test_a_report_without_a_judge_still_shows_the_judges_recorded(tmp_path, scripted) -> None:
    run_dir, scenarios = _run(tmp_path)
    build_report(run_dir, judge_model="test/j", judge_preset="locomo", scenarios=scenarios,
                 judge_cache_dir=tmp_path / "c")
    summary = json.loads(build_report(run_dir, scenarios=scenarios).summary_json.read_text())
    assert [j["prompt"]["name"] for j in summary["judge_sensitivity"]["judges"]] == ["locomo"]
    assert summary["judge"] is None


def test_judges_of_other_samples_are_not_compared(tmp_path, scripted) -> None:
    run_dir, scenarios = _run(tmp_path)
    build_report(run_dir, judge_model="test/j", judge_preset="locomo", scenarios=scenarios,
                 judge_cache_dir=tmp_path / "c")
    summary = json.loads(build_report(run_dir, scenarios=scenarios, exclude=["q-2"]).summary_json.read_text())
    assert summary["judge_sensitivity"]["judges"] == [] and summary["judge_sensitivity"]["not_comparable"] == 1


def test_cli_report_with_a_bad_judge_prompt_exits_2_with_one_line(tmp_path, capsys, scripted) -> None:
    run_dir, _ = _run(tmp_path)
    code = main(["report", str(run_dir), "--judge-model", "test/j", "--judge-prompt", str(tmp_path / "nope.txt")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "nope.txt: cannot read it" in err[0]
    assert main(["report", str(run_dir), "--judge-prompt", str(tmp_path / "nope.txt")]) == 2
    assert "also pass --judge-model" in capsys.readouterr().err
