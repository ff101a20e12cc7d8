"""The verdict: pass, fail and inconclusive."""

from __future__ import annotations

from harness.aggregate import aggregate
from harness.scoring import score_sample
from harness.verdict import VerdictConfig, decide
from tests.harness.scoring_factories import MODEL, make_record, make_scenario, paired_run, tool_call


def _verdict(records, scenarios, config=None):
    scored = [score_sample(r, scenarios[r.scenario_id]) for r in records]
    return decide(aggregate(scored), {s.model for s in scored}, config)


def test_clear_gain_without_leaks_passes():
    v = _verdict(*paired_run(10, recall_right=9, history_right=2))
    assert v["status"] == "pass"
    assert v["reasons"][0].startswith("continuity +0.70")


def test_no_gain_fails():
    v = _verdict(*paired_run(10, recall_right=3, history_right=3))
    assert v["status"] == "fail"
    assert v["per_model"][MODEL]["checks"][0]["passed"] is False


def test_min_gain_threshold_is_configurable():
    v = _verdict(*paired_run(10, recall_right=9, history_right=2), VerdictConfig(min_continuity_gain=0.5))
    assert v["status"] == "fail"


def test_rising_unsupported_claims_fail():
    v = _verdict(*paired_run(10, recall_right=10, history_right=2, unsupported_in_recall=6))
    check = next(c for c in v["per_model"][MODEL]["checks"] if c["name"] == "unsupported_claims_within_tolerance")
    assert check["passed"] is False and v["status"] == "fail"


def test_tool_leak_fails_even_with_a_gain():
    records, scenarios = paired_run(10, recall_right=9, history_right=2)
    leaky = make_record(scenarios["fact-00"], calls=[tool_call(["it-other-ws"])], epoch=5)
    v = _verdict(records + [leaky], scenarios)
    assert v["status"] == "fail" and "tool-level leaks 1" in v["reasons"][0]


def test_missing_arm_is_inconclusive():
    records, scenarios = paired_run(10)
    v = _verdict([r for r in records if r.arm == "recall"], scenarios)
    assert v["status"] == "inconclusive"


def test_all_errors_is_inconclusive():
    sc = make_scenario()
    records = [make_record(sc, arm=a, error=True) for a in ("recall", "history_only")]
    assert _verdict(records, {sc.id: sc})["status"] == "inconclusive"


def test_always_abstaining_arm_does_not_get_a_better_verdict():
    answerable = {f"fact-{i}": make_scenario(f"fact-{i}") for i in range(6)}
    unanswerable = {f"abst-{i}": make_scenario(f"abst-{i}", abstain=True, category="abstention") for i in range(6)}
    scenarios = {**answerable, **unanswerable}
    honest = [make_record(s, "Billing runs Postgres 15.", arm="history_only") for s in answerable.values()]
    honest += [make_record(s, "I don't know.", arm="history_only") for s in unanswerable.values()]
    always = [make_record(s, "I don't know, that was not mentioned.", arm="recall") for s in scenarios.values()]
    v = _verdict(honest + always, scenarios)
    assert v["status"] == "fail"


def test_overall_fails_when_any_model_fails():
    good, scenarios = paired_run(10, recall_right=9, history_right=2)
    bad, _ = paired_run(10, recall_right=2, history_right=2)
    bad = [r.model_copy(update={"model": "other/model"}) for r in bad]
    v = _verdict(good + bad, scenarios)
    assert v["status"] == "fail" and v["per_model"][MODEL]["status"] == "pass"


# ---------------------------------------------------------------- the run's health overrides the checks

from types import SimpleNamespace  # noqa: E402

from harness.verdict import RunHealth, exit_code, terminal_lines  # noqa: E402

CLEAR_PASS = paired_run(10, recall_right=9, history_right=2)


def _with_health(health: RunHealth, config: VerdictConfig | None = None) -> dict:
    records, scenarios = CLEAR_PASS
    scored = [score_sample(r, scenarios[r.scenario_id]) for r in records]
    return decide(aggregate(scored), {s.model for s in scored}, config, health=health)


def test_an_incomplete_run_is_never_pass_or_fail():
    v = _with_health(RunHealth(planned=180, present=79, run_status="running", samples=79))
    assert v["status"] == "incomplete" and v["checks_status"] == "pass"
    assert v["reasons"][0].startswith("incomplete: 79 of 180 samples (run.json status 'running')")


def test_one_sample_short_is_incomplete_and_all_present_is_not():
    assert _with_health(RunHealth(planned=20, present=19, samples=19))["status"] == "incomplete"
    assert _with_health(RunHealth(planned=20, present=20, samples=20))["status"] == "pass"


def test_a_run_not_marked_complete_is_incomplete_with_every_sample():
    v = _with_health(RunHealth(planned=20, present=20, run_status="interrupted", samples=20))
    assert v["status"] == "incomplete" and "run.json status 'interrupted'" in v["reasons"][0]


def test_an_error_rate_above_the_maximum_makes_a_pass_inconclusive_with_count_and_rate_first():
    v = _with_health(RunHealth(planned=20, present=20, errors=2, samples=20))  # 10% > 5%
    assert v["status"] == "inconclusive" and v["checks_status"] == "pass"
    assert v["reasons"][0].startswith("errors: 2 of 20 samples (10.0%) ended in error, above --max-error-rate 0.05")


def test_an_error_rate_at_the_maximum_keeps_the_verdict():
    assert _with_health(RunHealth(planned=20, present=20, errors=1, samples=20))["status"] == "pass"
    v = _with_health(RunHealth(planned=20, present=20, errors=2, samples=20), VerdictConfig(max_error_rate=0.1))
    assert v["status"] == "pass"


def test_incomplete_is_said_before_the_errors():
    v = _with_health(RunHealth(planned=30, present=20, errors=5, samples=20))
    assert v["status"] == "incomplete"
    assert v["reasons"][0].startswith("incomplete: 20 of 30") and v["reasons"][1].startswith("errors: 5 of 20")


def test_the_checks_read_the_overall_paired_row_not_a_category_row():
    records, scenarios = CLEAR_PASS
    scored = [score_sample(r, scenarios[r.scenario_id]) for r in records]
    tables = aggregate(scored)
    worse = [{**row, "category": "preference", "diff": -0.5, "ci_low": -0.9, "ci_high": -0.1}
             for row in tables["paired"]]
    tables["paired"] = worse + [{**row, "category": "all"} for row in tables["paired"]]
    assert decide(tables, {MODEL})["status"] == "pass"


def test_exit_codes_for_errors_incomplete_and_gate():
    def outcome(verdict, too_many_errors=False):
        return SimpleNamespace(verdict=verdict, reasons=[], too_many_errors=too_many_errors)

    assert exit_code(outcome("inconclusive", True), gate=False) == 1
    assert exit_code(outcome("incomplete"), gate=False) == 0
    assert exit_code(outcome("incomplete"), gate=True) == 1
    assert exit_code(outcome("incomplete"), gate=False, incomplete_fails=True) == 1
    assert exit_code(outcome("fail"), gate=False) == 0 and exit_code(outcome("fail"), gate=True) == 1
    assert exit_code(outcome("pass"), gate=True) == 0


def test_terminal_lines_put_leads_before_the_verdict_and_say_them_once():
    lead = "incomplete: 3 of 4 samples; every figure covers only these, so there is no pass or fail"
    outcome = SimpleNamespace(verdict="incomplete", reasons=[lead, "continuity +0.10"], warnings=["w"],
                              headlines=[{"code": "incomplete", "lead": True, "text": lead},
                                         {"code": "cached", "lead": False, "text": "4 of 4 samples came from the cache"},
                                         {"code": "duplicates", "lead": False, "text": "2 duplicates"}])
    out, err = terminal_lines(outcome)
    assert out == [lead, "verdict: INCOMPLETE", "  - continuity +0.10", "note: 4 of 4 samples came from the cache"]
    assert err == ["warning: w"]


def test_no_model_passes_or_fails_on_an_incomplete_run():
    v = _with_health(RunHealth(planned=30, present=20, samples=20))
    (model,) = v["per_model"].values()
    assert model["status"] == "incomplete" and model["checks_status"] == "pass"
    assert _with_health(RunHealth(planned=20, present=20, samples=20))["per_model"][MODEL]["status"] == "pass"
