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


def _scenario(sid: str, message: str, logged: str | None = None):
    from tests.memory_systems.prompt_factories import make_scenario

    scenario = make_scenario(message=message, history=[{"role": "user", "content": f"About {sid}."}])
    return scenario.model_copy(update={"id": sid, "expect": scenario.expect.model_copy(update={"logged_reply": logged})})


def _sample(model: str, arm: str, sid: str, epoch: int, answer: str | None, status: str = "ok"):
    from types import SimpleNamespace

    return SimpleNamespace(model=model, arm=arm, scenario_id=sid, epoch=epoch, final_answer=answer, status=status)


def _port_judge(tmp_path: Path):
    """A pairwise judge preferring the answer that states port 5174; logs (phase, A, B, the prompt's user message)
    of every call."""
    from harness.score import PairwiseJudge

    asked: list[tuple[str, str, str, str]] = []

    def complete(model, messages):
        text = messages[-1]["content"]
        a = text.split("<<<A\n", 1)[1].split("\nA>>>", 1)[0]
        b = text.split("<<<B\n", 1)[1].split("\nB>>>", 1)[0]
        asked.append((judge.phase, a, b, text))
        return json.dumps({"better": "tie" if ("5174" in a) == ("5174" in b) else "A" if "5174" in a else "B"})

    judge = PairwiseJudge(model="test/p", cache_dir=tmp_path / "judge-cache", complete=complete)
    return judge, asked


def _counts(comparison: dict) -> tuple:
    keys = ("model", "treatment", "baseline", "conversations", "wins", "ties", "losses", "probes", "probe_wins",
            "probe_ties", "probe_losses", "position_biased", "malformed")
    return tuple(comparison[k] for k in keys)


def test_each_ok_treatment_answer_is_judged_in_both_orders_against_the_baseline_of_its_model_and_epoch(
        tmp_path: Path) -> None:
    """Bug this guards: answers paired across models or epochs, an errored or unknown sample judged, an answer-less
    sample dropped instead of judged as no answer, or the calibration's calls counted as grading."""
    from harness.report.pairwise import NO_ANSWER, pairwise_block
    from harness.score import judge_context

    scenarios = {"alpha": _scenario("alpha", "Which port does the dev server use?"),
                 "beta": _scenario("beta", "And the dev server port, again?")}
    records = [
        _sample("m1", "recall", "alpha", 0, "Port 5174."), _sample("m1", "history_only", "alpha", 0, "No idea."),
        _sample("m1", "recall", "alpha", 1, "Not sure."), _sample("m1", "history_only", "alpha", 1, "It's 5174."),
        _sample("m1", "recall", "beta", 0, None), _sample("m1", "history_only", "beta", 0, "Port 5174."),
        _sample("m1", "recall", "beta", 1, "Port 5174."), _sample("m1", "history_only", "beta", 1, "x", status="error"),
        _sample("m1", "recall", "alpha", 2, "Port 5174.", status="error"), _sample("m1", "history_only", "alpha", 2, "No."),
        _sample("m1", "recall", "gamma", 0, "Port 5174."), _sample("m1", "history_only", "gamma", 0, "No."),
        _sample("m1", "recall_vector", "alpha", 0, "Port 5174."),
        _sample("m2", "recall", "alpha", 0, "It is 5174."), _sample("m2", "history_only", "alpha", 0, "5174."),
    ]
    judge, asked = _port_judge(tmp_path)
    block = pairwise_block(records, scenarios, judge)
    assert [_counts(c) for c in block["comparisons"]] == [
        ("m1", "recall", "history_only", 2, 0, 1, 1, 3, 1, 0, 2, 0, 0),  # alpha: a win and a loss (a tie); beta: lost
        ("m2", "recall", "history_only", 1, 0, 1, 0, 1, 0, 1, 0, 0, 0)]
    grading = [(a, b) for phase, a, b, _ in asked if phase == "grading"]
    assert grading == [("Port 5174.", "No idea."), ("No idea.", "Port 5174."),  # m1 alpha 0, both orders
                       ("Not sure.", "It's 5174."), ("It's 5174.", "Not sure."),  # m1 alpha 1
                       (NO_ANSWER, "Port 5174."), ("Port 5174.", NO_ANSWER),  # m1 beta 0: no answer is judged
                       ("It is 5174.", "5174."), ("5174.", "It is 5174.")]  # m2 alpha 0
    assert [(phase, a, b) for phase, a, b, _ in asked[:8]] == [("grading", a, b) for a, b in grading]  # calibration after
    assert (block["model"], block["prompt_version"], block["calls"], block["cached"], block["malformed"]) == (
        "test/p", "pairwise-v1", 8, 0, 0)
    assert (block["baseline_arm"], block["treatment_arm"]) == ("history_only", "recall")
    calibration = block["calibration"]
    assert calibration["n"] >= 60 and calibration["calls"] == 2 * calibration["n"] == len(asked) - 8
    assert set(calibration) >= {"agreement", "position_bias_rate", "cohen_kappa", "labelled_ties"}
    assert judge.phase == "grading"
    for (*_, prompt), sid in zip(asked[:8], ["alpha"] * 4 + ["beta"] * 2 + ["alpha"] * 2, strict=True):
        scenario = scenarios[sid]  # each probe judged with its own earlier context and question
        assert prompt.startswith(judge_context(scenario) + "\n\nThe user's latest message:\n<<<QUESTION\n"
                                 + scenario.probe.message + "\nQUESTION>>>"), sid


def test_a_logged_reply_is_judged_after_the_baseline_and_even_where_the_baseline_has_no_answer(tmp_path: Path) -> None:
    """Bug this guards: a probe whose baseline sample failed losing its logged-reply comparison too, or a blank
    logged reply taken as a reference."""
    from harness.report.pairwise import LOGGED, logged_reply, pairwise_block

    scenarios = {"alpha": _scenario("alpha", "Which port?", logged="It's 5174."),
                 "beta": _scenario("beta", "Which port, again?", logged="No clue."),
                 "gamma": _scenario("gamma", "And now?", logged="  \n ")}
    assert [logged_reply(s) for s in scenarios.values()] == ["It's 5174.", "No clue.", None]
    records = [_sample("m", "recall", "alpha", 0, "5174"), _sample("m", "history_only", "alpha", 0, "5174 too"),
               _sample("m", "recall", "beta", 0, "5174"), _sample("m", "history_only", "beta", 0, "x", status="error"),
               _sample("m", "recall", "gamma", 0, "5174"), _sample("m", "history_only", "gamma", 0, "no")]
    judge, asked = _port_judge(tmp_path)
    comparisons = pairwise_block(records, scenarios, judge)["comparisons"]
    assert [_counts(c) for c in comparisons] == [
        ("m", "recall", "history_only", 2, 1, 1, 0, 2, 1, 1, 0, 0, 0),  # alpha tie, gamma win; beta has no baseline
        ("m", "recall", LOGGED, 2, 1, 1, 0, 2, 1, 1, 0, 0, 0)]  # alpha tie, beta win; gamma's blank reply is none
    assert all(b.strip() for _, _, b, _ in asked)


def test_the_baseline_is_history_only_else_shadow_else_none_with_the_arms_named_in_the_block(tmp_path: Path) -> None:
    """Bug this guards: a run without history_only judged against nothing silently, or against the wrong arm."""
    from harness.report.pairwise import pairwise_block

    scenarios = {"alpha": _scenario("alpha", "Which port?", logged="5174")}
    both = [_sample("m", "recall", "alpha", 0, "5174"), _sample("m", "shadow", "alpha", 0, "no"),
            _sample("m", "history_only", "alpha", 0, "5174")]
    block = pairwise_block(both, scenarios, _port_judge(tmp_path / "a")[0])
    assert block["baseline_arm"] == "history_only" and block["comparisons"][0]["ties"] == 1  # not shadow's "no"
    block = pairwise_block(both[:2], scenarios, _port_judge(tmp_path / "b")[0])
    assert block["baseline_arm"] == "shadow" and [c["baseline"] for c in block["comparisons"]] == ["shadow", "logged reply"]
    assert block["comparisons"][0]["wins"] == 1
    block = pairwise_block(both[:1], scenarios, _port_judge(tmp_path / "c")[0])
    assert block["baseline_arm"] is None and [c["baseline"] for c in block["comparisons"]] == ["logged reply"]
    other = pairwise_block(both, scenarios, _port_judge(tmp_path / "d")[0], treatment="shadow", baseline="recall")
    assert (other["treatment_arm"], other["baseline_arm"]) == ("shadow", "recall")
    assert [(c["treatment"], c["baseline"], c["losses"]) for c in other["comparisons"]] == [
        ("shadow", "recall", 1), ("shadow", "logged reply", 1)]


def test_a_position_biased_choice_and_an_unreadable_reply_are_each_counted_in_their_comparison(tmp_path: Path) -> None:
    """Bug this guards: the judge's position bias or its unreadable replies lost between the judge and the table
    (each is a tie, so the counts of wins and losses alone cannot show them)."""
    from harness.report.pairwise import pairwise_block
    from harness.score import PairwiseJudge

    def complete(model, messages):  # "A" whatever the order for one probe, prose for the other
        return "I cannot tell." if "Which port, again?" in messages[-1]["content"] else '{"better": "A"}'

    scenarios = {"alpha": _scenario("alpha", "Which port?"), "beta": _scenario("beta", "Which port, again?")}
    records = [_sample("m", arm, sid, 0, f"{arm} on {sid}") for sid in scenarios for arm in ("recall", "history_only")]
    judge = PairwiseJudge(model="test/p", cache_dir=tmp_path, complete=complete)
    block = pairwise_block(records, scenarios, judge)
    (comparison,) = block["comparisons"]
    assert (comparison["ties"], comparison["probe_ties"], comparison["position_biased"], comparison["malformed"]) == (
        2, 2, 1, 2)
    assert block["malformed"] == 2


_BLOCK = {
    "model": "judge/x", "prompt_version": "pairwise-v1", "calls": 40, "cached": 8, "malformed": 1,
    "comparisons": [
        {"model": "m2", "treatment": "recall", "baseline": "history_only", "conversations": 12, "wins": 9, "ties": 1,
         "losses": 2, "p_value": 0.0654, "decision": "no proven difference", "win_share": 0.818182,
         "win_share_ci": [0.482, 0.977], "mean_preference": 0.25, "mean_preference_ci": [-0.1, 0.6], "probes": 20,
         "probe_wins": 14, "probe_ties": 3, "probe_losses": 3, "position_biased": 1},
        {"model": "m1", "treatment": "recall", "baseline": "logged reply", "conversations": 1, "wins": 0, "ties": 1,
         "losses": 0, "p_value": 1.0, "decision": "no proven difference", "win_share": None,
         "win_share_ci": [None, None], "mean_preference": 0.0, "mean_preference_ci": None, "probes": 2,
         "probe_wins": 0, "probe_ties": 2, "probe_losses": 0, "position_biased": 0},
        {"model": "m1", "treatment": "recall", "baseline": "history_only", "conversations": 30, "wins": 20, "ties": 4,
         "losses": 6, "p_value": 0.0005, "decision": "treatment preferred", "win_share": 0.769231,
         "win_share_ci": [0.5635, 0.9103], "mean_preference": -0.125, "mean_preference_ci": [-0.3, 0.05],
         "probes": 1200, "probe_wins": 700, "probe_ties": 300, "probe_losses": 200, "position_biased": 1500},
    ],
    "calibration": {"n": 60, "agreement": 0.9, "position_bias_rate": 0.05, "cohen_kappa": 0.8471, "labelled_ties": 0.3333},
}


def test_the_pairwise_section_has_one_table_per_model_with_each_comparisons_cells() -> None:
    """Bug this guards: a cell showing another column's figure, an interval's bound or sign lost, the tables of
    two models merged or out of order, or the judge's counts and calibration misreported on the page."""
    from harness.report.pairwise import pairwise_section

    section = pairwise_section({"pairwise": _BLOCK})
    assert section is not None
    assert section["headers"] == ["conversations", "wins", "ties", "losses", "sign test p", "decision",
                                  "win share [95% CI]", "mean preference [95% CI]", "probes (w/t/l)", "position-biased"]
    assert section["tables"] == [
        {"caption": "m1", "rows": [
            {"label": "recall vs logged reply", "cells": ["1", "0", "1", "0", "p = 1.000", "no proven difference",
                                                          "— [—, —]", "+0.00 [—, —]", "2 (0/2/0)", "0"]},
            {"label": "recall vs history_only", "cells": ["30", "20", "4", "6", "p < 0.001", "treatment preferred",
                                                          "0.77 [0.56, 0.91]", "-0.12 [-0.30, +0.05]",
                                                          "1200 (700/300/200)", "1,500"]}]},
        {"caption": "m2", "rows": [
            {"label": "recall vs history_only", "cells": ["12", "9", "1", "2", "p = 0.065", "no proven difference",
                                                          "0.82 [0.48, 0.98]", "+0.25 [-0.10, +0.60]", "20 (14/3/3)",
                                                          "1"]}]}]
    assert section["calibration"] == ("Calibration on 60 labelled pairs (0.33 ties), both orders asked: agreement 0.90, "
                                      "position-bias rate 0.05, Cohen's kappa 0.85.")
    assert section["note"] == (
        "Judge judge/x (pairwise-v1): 40 calls, 8 cached, 1 unreadable replies (ties). Each probe is asked in both "
        "orders; a conversation wins when its probes' mean preference for the treatment is above 0. The sign test is "
        "over conversations, the unit of inference; probe counts are shown beside, untested.")


def test_no_pairwise_block_means_no_section_and_no_calibration_means_no_calibration_line() -> None:
    from harness.report.pairwise import pairwise_section

    assert pairwise_section({}) is None and pairwise_section({"pairwise": None}) is None
    assert pairwise_section({"pairwise": [_BLOCK]}) is None
    bare = pairwise_section({"pairwise": {"model": "j"}})
    assert bare is not None and bare["tables"] == [] and bare["calibration"] is None
    assert bare["note"].startswith("Judge j (None): None calls, None cached, None unreadable replies (ties).")
    assert pairwise_section({"pairwise": {**_BLOCK, "calibration": {}}})["calibration"] is None  # type: ignore[index]


def test_the_terminal_shows_each_comparison_in_two_lines_then_the_calibration() -> None:
    """Bug this guards: the counts of one column printed under another's name, or the calibration line missing."""
    from harness.report.pairwise import pairwise_terminal_lines

    assert pairwise_terminal_lines({**_BLOCK, "comparisons": _BLOCK["comparisons"][:1]}) == [
        "pairwise recall vs history_only: 9W 1T 2L of 12 conversations, p 0.065",
        "  no proven difference (sign test over conversations)",
        "  pairwise calibration: agreement 0.90, position bias 0.05, kappa 0.85 (n 60)"]
    assert pairwise_terminal_lines(None) == [] and pairwise_terminal_lines({}) == []
    unknown = {"calibration": {"n": 4, "agreement": None, "position_bias_rate": 0.0, "cohen_kappa": None}}
    assert pairwise_terminal_lines(unknown) == ["  pairwise calibration: agreement —, position bias 0.00, kappa — (n 4)"]
    assert pairwise_terminal_lines({"comparisons": [], "calibration": {"n": 0, "agreement": 1.0}}) == []
    assert pairwise_terminal_lines({"comparisons": None, "calibration": None, "model": "j"}) == []
