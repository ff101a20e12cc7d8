"""``report --pairwise-judge``: recall against history_only per probe, both orders, a sign test, its page section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.memory_systems.prompt_factories import write_small_suite


def _scripted_judges(monkeypatch: pytest.MonkeyPatch, *, always: str | None = None) -> list[list[dict[str, str]]]:
    """Every judge's litellm call replaced: the pairwise one prefers the answer stating port 5174 (or ``always``)."""
    pairwise_prompts: list[list[dict[str, str]]] = []

    def complete(model, messages, **_):
        system = messages[0]["content"]
        if system.startswith("You compare two answers"):
            pairwise_prompts.append(messages)
            if always is not None:
                return json.dumps({"better": always})
            text = messages[-1]["content"]
            a = "5174" in text.split("<<<A\n", 1)[1].split("\nA>>>", 1)[0]
            b = "5174" in text.split("<<<B\n", 1)[1].split("\nB>>>", 1)[0]
            return json.dumps({"better": "tie" if a == b else "A" if a else "B", "reason": "scripted"})
        if "unsupported claims" in system:
            return json.dumps({"unsupported": []})
        return json.dumps({"verdict": "fail", "reason": "scripted"})

    for module in ("harness.score.judge",):  # every judge calls litellm through JudgeModel.litellm
        monkeypatch.setattr(f"{module}.litellm_complete", complete)
    return pairwise_prompts


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.cli import main

    base = tmp_path_factory.mktemp("pairwise")
    run_dir = base / "run"
    code = main(["run", "--scenarios", str(write_small_suite(base / "suite")), "--arms", "history_only", "recall",
                 "--out", str(run_dir), "--no-cache", "--no-progress"])
    assert code in (0, 1)
    return run_dir


def _report(run_dir: Path, tmp_path: Path, *extra: str) -> int:
    from harness.cli import main

    return main(["report", str(run_dir), "--judge-model", "test/judge", *extra])


def test_pairwise_judge_compares_recall_with_history_only_per_conversation(small_run: Path, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # the judge cache lands here
    prompts = _scripted_judges(monkeypatch)
    assert _report(small_run, tmp_path, "--pairwise-judge") in (0, 1)
    summary = json.loads((small_run / "summary.json").read_text(encoding="utf-8"))
    block = summary["pairwise"]
    (comparison,) = block["comparisons"]
    assert (comparison["treatment"], comparison["baseline"], comparison["model"]) == ("recall", "history_only",
                                                                                       "offline/reference")
    assert (comparison["conversations"], comparison["wins"], comparison["ties"], comparison["losses"]) == (2, 2, 0, 0)
    assert comparison["p_value"] == 0.5 and comparison["position_biased"] == 0
    assert block["calibration"]["n"] >= 60 and block["calibration"]["position_bias_rate"] == 0.0
    asked = prompts[: 2 * 2]  # two probes, both orders, before the calibration's calls
    assert all("recall" not in json.dumps(p) and "history_only" not in json.dumps(p) for p in asked)
    page = (small_run / "index.html").read_text(encoding="utf-8")
    assert 'id="pairwise"' in page and "recall vs history_only" in page and "position-bias rate" in page
    out = capsys.readouterr().out
    assert "pairwise recall vs history_only: 2W 0T 0L of 2 conversations, p 0.5" in out
    assert "  no proven difference (sign test over conversations)" in out  # two conversations cannot prove it
    assert all(len(line) <= 80 for line in out.splitlines() if line.startswith(("pairwise", "  pairwise")))


def test_a_position_biased_judge_gives_ties_not_wins(small_run: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _scripted_judges(monkeypatch, always="A")
    assert _report(small_run, tmp_path, "--pairwise-judge") in (0, 1)
    block = json.loads((small_run / "summary.json").read_text(encoding="utf-8"))["pairwise"]
    (comparison,) = block["comparisons"]
    assert (comparison["wins"], comparison["ties"], comparison["losses"], comparison["position_biased"]) == (0, 2, 0, 2)
    assert block["calibration"]["position_bias_rate"] == 1.0


def test_a_logged_reply_is_a_second_comparison(small_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _scripted_judges(monkeypatch)
    monkeypatch.setattr("harness.report.pairwise.logged_reply",
                        lambda scenario: "It's port 5174." if scenario.id == "alpha" else None)
    assert _report(small_run, tmp_path, "--pairwise-judge") in (0, 1)
    comparisons = json.loads((small_run / "summary.json").read_text(encoding="utf-8"))["pairwise"]["comparisons"]
    logged = next(c for c in comparisons if c["baseline"] == "logged reply")
    assert (logged["conversations"], logged["ties"]) == (1, 1)  # both state the port: a tie


def test_pairwise_judge_without_a_judge_model_is_a_one_line_error(small_run: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    assert main(["report", str(small_run), "--pairwise-judge"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["recall-eval report: --pairwise-judge compares answers with --judge-model's model; also pass "
                   "--judge-model M"]


def test_run_refuses_pairwise_judge_without_a_judge_model_before_any_call(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    code = main(["run", "--scenarios", str(write_small_suite(tmp_path / "suite")), "--pairwise-judge",
                 "--out", str(tmp_path / "run"), "--no-progress"])
    assert code == 2 and "--pairwise-judge" in capsys.readouterr().err
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_a_report_without_the_flag_has_no_pairwise_block(small_run: Path) -> None:
    from harness.report import build_report

    build_report(small_run)
    assert "pairwise" not in json.loads((small_run / "summary.json").read_text(encoding="utf-8"))
