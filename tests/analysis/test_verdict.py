"""The verdict: pass, fail and inconclusive."""

from __future__ import annotations

from harness.analysis.aggregate import aggregate
from harness.analysis.verdict import VerdictConfig, decide
from harness.score.scoring import score_sample
from tests.score.scoring_factories import MODEL, make_record, make_scenario, paired_run, tool_call


def _verdict(records, scenarios, config=None):
    scored = [score_sample(r, scenarios[r.scenario_id]) for r in records]
    return decide(aggregate(scored), {s.model for s in scored}, config)


#: A clear pass: +0.80 over 200 scenarios, none adding an unsupported claim. With no scenario differing, 189 is the
#: fewest that bound a rise of unsupported claims within the default tolerance 0.02 (docs/statistics.md).
CLEAR_PASS = paired_run(200, recall_right=180, history_right=20)


def test_clear_gain_without_leaks_passes():
    v = _verdict(*CLEAR_PASS)
    assert v["status"] == "pass"
    assert v["reasons"][0].startswith("continuity +0.80")


def test_a_clear_gain_on_ten_scenarios_is_inconclusive_because_they_cannot_bound_unsupported_claims():
    """+0.70 on 10 scenarios is a proven gain, but with none differing in unsupported claims 10 scenarios bound
    their rise only to +0.28, far above the tolerance 0.02. Bug it catches: the degenerate interval [0, 0] when no
    scenario differs, which passed the tolerance on any suite size."""
    v = _verdict(*paired_run(10, recall_right=9, history_right=2))
    checks = {c["name"]: c for c in v["per_model"][MODEL]["checks"]}
    assert checks["continuity_improves"]["passed"] is True
    unsupported = checks["unsupported_claims_within_tolerance"]
    assert unsupported["passed"] is None and unsupported["needed"] == 189 and v["status"] == "inconclusive"
    assert "no scenario differs and 10 are too few to bound the rise; about 189 scenarios" in unsupported["reason"]


def test_no_gain_fails():
    v = _verdict(*paired_run(10, recall_right=2, history_right=8))
    assert v["status"] == "fail"
    assert v["per_model"][MODEL]["checks"][0]["passed"] is False


def test_equal_arms_on_every_scenario_leave_the_gain_undecided_not_ruled_out():
    """10 scenarios, none differing: a gain up to +0.28 is still possible, and no test of 0 differing units rejects."""
    check = _verdict(*paired_run(10, recall_right=3, history_right=3))["per_model"][MODEL]["checks"][0]
    assert check["passed"] is None and check["ci_high"] > 0.27
    assert check["reason"].endswith("too few to decide (0 differ; the test at 0.05 needs 6)")


def test_min_gain_threshold_is_configurable():
    """+0.70 over 10 scenarios is a proven gain, but its interval reaches below a required gain of 0.5: not a pass."""
    v = _verdict(*paired_run(10, recall_right=9, history_right=2), VerdictConfig(min_continuity_gain=0.5))
    assert v["status"] == "inconclusive" and "gain not proven" in v["reasons"][0]
    assert _verdict(*paired_run(10, recall_right=9, history_right=2),
                    VerdictConfig(min_continuity_gain=0.75))["status"] == "fail"


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
    good, scenarios = CLEAR_PASS
    bad, _ = paired_run(200, recall_right=2, history_right=20)
    bad = [r.model_copy(update={"model": "other/model"}) for r in bad]
    v = _verdict(good + bad, scenarios)
    assert v["status"] == "fail" and v["per_model"][MODEL]["status"] == "pass"


# ---------------------------------------------------------------- the run's health overrides the checks

from types import SimpleNamespace  # noqa: E402

from harness.analysis.verdict import RunHealth, exit_code, terminal_lines  # noqa: E402


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


# ---------------------------------------------------------------- what a maintainer reads, from hand-built tables
#
# The aggregate tables are built by hand here so that every figure is distinct: a reason that printed the
# wrong bound, dropped a sign or read another model's row shows in the exact text.

BASE, TREAT = "history_only", "recall"


def _pair(metric: str, diff, lo, hi, n: int = 10, *, model: str = MODEL, arm_a: str = BASE, arm_b: str = TREAT,
          up: int = 6, down: int = 0, **extra) -> dict:
    """A paired row as the aggregate writes it; its exact p agrees with the interval (0.03 when it excludes 0)."""
    excludes = lo is not None and hi is not None and (lo > 0 or hi < 0)
    return {"model": model, "arm_a": arm_a, "arm_b": arm_b, "category": "all", "metric": metric,
            "diff": diff, "ci_low": lo, "ci_high": hi, "n_scenarios": n, "n_units": n, "unit": "scenario",
            "up": up, "down": down, "p_value": 0.03 if excludes else 0.5, "test": "exact sign-flip", "mde": 0.2,
            "variance": 0.1, "alpha": 0.05} | extra


def _row(arm: str, metric: str, value, n: int = 10, *, model: str = MODEL, category: str = "all") -> dict:
    return {"model": model, "arm": arm, "category": category, "metric": metric, "value": value,
            "ci_low": None, "ci_high": None, "n": n}


def _tables(continuity=(0.3, 0.12, 0.47), unsupported=(0.011, 0.004, 0.019), *, n_scenarios: int = 10,
            tool_leaks=(0, 0), leaked_answers: int = 0, n: int = 10, model: str = MODEL) -> dict:
    """One model, both arms scored over ``n`` samples; ``continuity``/``unsupported`` are (diff, low, high)."""
    metrics = []
    for arm, leaks in zip((BASE, TREAT), tool_leaks):
        metrics += [_row(arm, "continuity_accuracy", 0.5, n, model=model),
                    _row(arm, "tool_leakage_count", float(leaks), n, model=model),
                    _row(arm, "answer_leakage_rate", leaked_answers / n if arm == TREAT else 0.0, n, model=model)]
    paired = [_pair("continuity_accuracy", *continuity, n_scenarios, model=model),
              _pair("unsupported_claim_rate", *unsupported, n_scenarios, model=model)]
    return {"metrics": metrics, "paired": paired}


def _checks(verdict: dict, model: str = MODEL) -> dict[str, dict]:
    return {c["name"]: c for c in verdict["per_model"][model]["checks"]}


def test_a_pass_reads_each_interval_signed_to_two_decimals_and_each_check_keeps_its_figures():
    v = decide(_tables(), [MODEL])
    assert v["status"] == "pass"
    assert v["reasons"] == [
        "continuity +0.30 [+0.12, +0.47], 10 scenarios (6 up, 0 down), exact p 0.03 > 0.00",
        "unsupported claims +0.01 [+0.00, +0.02], 10 scenarios (6 up, 0 down), exact p 0.03 <= tolerance 0.02",
        "tool-level leaks 0 (Host defect when > 0; must be 0)",
        "answers with leaked canaries in recall: 0 (must be 0)",
    ]
    checks = _checks(v)
    assert {k: checks["continuity_improves"][k] for k in ("passed", "value", "ci_low", "ci_high", "threshold")} == {
        "passed": True, "value": 0.3, "ci_low": 0.12, "ci_high": 0.47, "threshold": 0.0}
    assert {k: checks["unsupported_claims_within_tolerance"][k]
            for k in ("passed", "value", "ci_low", "ci_high", "threshold")} == {
        "passed": True, "value": 0.011, "ci_low": 0.004, "ci_high": 0.019, "threshold": 0.02}
    assert (checks["no_tool_leakage"]["threshold"], checks["no_answer_leakage"]["threshold"]) == (0.0, 0.0)


def test_failed_checks_say_which_side_of_the_threshold_and_come_before_passed_ones():
    tables = _tables(continuity=(0.05, -0.02, 0.2), unsupported=(0.1, 0.03, 0.25), tool_leaks=(0, 2))
    v = decide(tables, [MODEL], VerdictConfig(min_continuity_gain=0.01, unsupported_tolerance=0.04))
    assert v["status"] == "fail"
    assert v["reasons"] == [
        "unsupported claims +0.10 [+0.03, +0.25], 10 scenarios (6 up, 0 down), exact p 0.03: a rise beyond tolerance",
        "tool-level leaks 2 (Host defect when > 0; must be 0)",
        "continuity +0.05 [-0.02, +0.20], 10 scenarios (6 up, 0 down), exact p 0.50: gain not proven, the suite "
        "detects 0.20; about 491 scenarios would decide it",
        "answers with leaked canaries in recall: 0 (must be 0)",
    ]
    assert decide(_tables(continuity=(0.0, -0.02, 0.2)), [MODEL], VerdictConfig(min_continuity_gain=0.01))[
        "reasons"][0].endswith("exact p 0.50: no gain")
    checks = _checks(v)
    assert (checks["continuity_improves"]["ci_low"], checks["continuity_improves"]["ci_high"]) == (-0.02, 0.2)
    assert (checks["continuity_improves"]["threshold"], checks["unsupported_claims_within_tolerance"]["threshold"]) \
        == (0.01, 0.04)


def test_too_few_paired_scenarios_leave_continuity_undecided_but_keep_its_interval():
    v = decide(_tables(n_scenarios=2), [MODEL], VerdictConfig(min_paired_scenarios=3))
    check = _checks(v)["continuity_improves"]
    assert v["status"] == "inconclusive"
    assert {k: check[k] for k in ("passed", "value", "ci_low", "ci_high", "reason")} == {
        "passed": None, "value": 0.3, "ci_low": 0.12, "ci_high": 0.47,
        "reason": "continuity +0.30 [+0.12, +0.47], 2 scenarios (6 up, 0 down), exact p 0.03 undecided: "
                  "2 paired scenario(s) < 3"}
    assert v["reasons"][0] == check["reason"]


def test_exactly_the_minimum_of_paired_scenarios_decides():
    v = decide(_tables(n_scenarios=2), [MODEL], VerdictConfig(min_paired_scenarios=2))
    assert _checks(v)["continuity_improves"]["passed"] is True and v["status"] == "pass"


def test_the_checks_read_only_their_model_metric_and_arm_pair():
    """Rows of another model, another metric or another arm pair come first and would fail every check."""
    bad = dict(diff=-0.5, lo=-0.9, hi=0.9)
    decoys = []
    for metric in ("continuity_accuracy", "unsupported_claim_rate"):
        decoys += [_pair(metric, *bad.values(), model="other/model"),
                   _pair(metric, *bad.values(), arm_a="full_history"),
                   _pair(metric, *bad.values(), arm_b="full_history")]
    tables = _tables()
    tables["paired"] = [_pair("answer_leakage_rate", *bad.values()), *decoys, *tables["paired"]]
    tables["metrics"] = [_row(TREAT, "tool_leakage_count", 3.0, model="other/model"),
                         _row(TREAT, "tool_leakage_count", 3.0, category="preference"),
                         _row(TREAT, "answer_leakage_rate", 0.5, model="other/model"),
                         _row(TREAT, "answer_leakage_rate", 0.5, category="preference"),
                         _row(TREAT, "continuity_accuracy", None, model="other/model"),
                         _row(TREAT, "continuity_accuracy", None, category="preference"),
                         *tables["metrics"]]
    v = decide(tables, [MODEL])
    checks = _checks(v)
    assert v["status"] == "pass", v["reasons"]
    assert checks["continuity_improves"]["value"] == 0.3
    assert checks["unsupported_claims_within_tolerance"]["value"] == 0.011
    assert checks["no_tool_leakage"]["value"] == 0 and checks["no_answer_leakage"]["value"] == 0


def test_paired_rows_without_a_category_count_as_overall():
    tables = _tables()
    tables["paired"] = [{k: v for k, v in row.items() if k != "category"} for row in tables["paired"]]
    assert decide(tables, [MODEL])["status"] == "pass"


def test_without_a_paired_row_the_interval_checks_say_what_is_missing():
    tables = _tables()
    del tables["paired"]
    v = decide(tables, [MODEL])
    assert v["status"] == "inconclusive"
    assert v["reasons"][:2] == ["continuity undecided: no paired recall vs history_only accuracy",
                                "unsupported claims undecided: no paired unsupported-claim rate"]


def test_a_paired_row_without_an_exact_test_is_undecided():
    """A row of a summary written before the exact test (no p-value) decides nothing: the bootstrap is not a test."""
    tables = _tables()
    tables["paired"] = [{k: v for k, v in row.items() if k != "p_value"} for row in tables["paired"]]
    v = decide(tables, [MODEL])
    assert v["reasons"][:2] == ["continuity undecided: no paired recall vs history_only accuracy",
                                "unsupported claims undecided: no paired unsupported-claim rate"]


def test_an_arm_without_scored_samples_leaves_every_treatment_check_undecided_despite_a_paired_row():
    """All recall samples errors: the paired rows (here left in) must not be read, and leakage stays decided."""
    tables = _tables()
    for row in tables["metrics"]:
        if row["arm"] == TREAT and row["metric"] != "tool_leakage_count":
            row.update(value=None, n=0)
    tables["metrics"].insert(0, _row(TREAT, "tool_leakage_count", 0.0))  # another metric before continuity
    v = decide(tables, [MODEL])
    assert v["status"] == "inconclusive"
    assert v["reasons"] == [
        "continuity undecided: no scored samples in arm 'recall' (all errors?)",
        "unsupported claims undecided: no scored samples in arm 'recall' (all errors?)",
        "answer leakage undecided: no scored recall samples",
        "tool-level leaks 0 (Host defect when > 0; must be 0)",
    ]


def test_a_missing_arm_is_named():
    tables = _tables()
    tables["metrics"] = [r for r in tables["metrics"] if r["arm"] != TREAT]
    v = decide(tables, [MODEL])
    assert v["reasons"][:2] == ["continuity undecided: arm 'recall' missing",
                                "unsupported claims undecided: arm 'recall' missing"]
    baseline_gone = _tables()
    baseline_gone["metrics"] = [r for r in baseline_gone["metrics"]
                                if r["arm"] != BASE or r["metric"] != "continuity_accuracy"]
    assert decide(baseline_gone, [MODEL])["reasons"][0] == "continuity undecided: arm 'history_only' missing"


def test_a_model_without_any_rows_is_undecided_on_every_check():
    v = decide({}, [MODEL])
    checks = _checks(v)
    assert v["status"] == "inconclusive" and all(c["passed"] is None for c in checks.values())
    assert v["reasons"] == ["continuity undecided: arm 'recall' missing",
                            "unsupported claims undecided: arm 'recall' missing",
                            "tool leakage undecided: no samples",
                            "answer leakage undecided: no scored recall samples"]
    assert (checks["no_tool_leakage"]["threshold"], checks["no_answer_leakage"]["threshold"]) == (0.0, 0.0)


def test_leakage_is_decided_from_a_single_sample():
    tables = _tables(n=1)
    tables["metrics"] = [r for r in tables["metrics"] if r["arm"] == TREAT]
    checks = _checks(decide(tables, [MODEL]))
    assert checks["no_tool_leakage"]["passed"] is True and checks["no_answer_leakage"]["passed"] is True
    assert checks["no_tool_leakage"]["reason"] == "tool-level leaks 0 (Host defect when > 0; must be 0)"
    assert checks["no_answer_leakage"]["reason"] == "answers with leaked canaries in recall: 0 (must be 0)"


def test_no_models_is_inconclusive_with_a_reason():
    v = decide({}, [])
    assert (v["status"], v["checks_status"], v["reasons"], v["per_model"], v["run_checks"]) == (
        "inconclusive", "inconclusive", ["no scored samples: nothing to decide"], {}, [])


def test_two_models_prefix_their_reasons_with_the_model():
    inconclusive = _tables(model="b/model", n_scenarios=1)
    passing = _tables(model="a/model")
    tables = {k: inconclusive[k] + passing[k] for k in ("metrics", "paired")}
    v = decide(tables, ["a/model", "b/model"])
    assert v["reasons"] == [
        "b/model: continuity +0.30 [+0.12, +0.47], 1 scenario (6 up, 0 down), exact p 0.03 undecided: "
        "1 paired scenario(s) < 2",
        "b/model: unsupported claims +0.01 [+0.00, +0.02], 1 scenario (6 up, 0 down), exact p 0.03 undecided: "
        "1 paired scenario(s) < 2",
        "b/model: tool-level leaks 0 (Host defect when > 0; must be 0)",
        "b/model: answers with leaked canaries in recall: 0 (must be 0)",
        "a/model: continuity +0.30 [+0.12, +0.47], 10 scenarios (6 up, 0 down), exact p 0.03 > 0.00",
        "a/model: unsupported claims +0.01 [+0.00, +0.02], 10 scenarios (6 up, 0 down), exact p 0.03 <= tolerance 0.02",
        "a/model: tool-level leaks 0 (Host defect when > 0; must be 0)",
        "a/model: answers with leaked canaries in recall: 0 (must be 0)",
    ]


def test_models_are_reported_worst_status_first_then_by_name():
    models = {"z/fails": _tables(model="z/fails", continuity=(0.0, -0.1, 0.1)),
              "m/inconclusive": _tables(model="m/inconclusive", n_scenarios=1),
              "a/passes": _tables(model="a/passes"),
              "b/passes": _tables(model="b/passes", continuity=(0.4, 0.2, 0.6))}  # two passes that differ
    tables = {k: [row for t in models.values() for row in t[k]] for k in ("metrics", "paired")}
    v = decide(tables, models)
    assert [r.split(": ", 1)[0] for r in v["reasons"][::4]] == ["z/fails", "m/inconclusive", "a/passes", "b/passes"]


def test_the_incomplete_reason_lists_every_cause_separated_by_semicolons():
    health = RunHealth(planned=20, present=18, run_status="running", why=("results.jsonl:7: not JSON", "torn line"))
    assert health.incomplete_reason() == (
        "incomplete: 18 of 20 samples (run.json status 'running'; results.jsonl:7: not JSON; torn line); "
        "every figure covers only these, so there is no pass or fail")


def test_the_incomplete_reason_without_a_cause_says_only_the_counts():
    assert RunHealth(planned=20, present=19).incomplete_reason() == (
        "incomplete: 19 of 20 samples; every figure covers only these, so there is no pass or fail")


def test_run_checks_give_completeness_and_error_rate_with_their_figures():
    v = decide(_tables(), [MODEL], health=RunHealth(planned=20, present=20, errors=1, samples=20))
    assert v["run_checks"] == [
        {"name": "run_complete", "passed": True, "value": 20, "threshold": 20,
         "reason": "all 20 planned samples present"},
        {"name": "error_rate_within_max", "passed": True, "value": 0.05, "threshold": 0.05,
         "reason": "errors 1 of 20 samples (5.0%) <= --max-error-rate 0.05"},
    ]


def test_run_checks_without_scored_samples_read_n_a():
    v = decide(_tables(), [MODEL], health=RunHealth(planned=0, present=0))
    assert v["run_checks"][1] == {"name": "error_rate_within_max", "passed": True, "value": None, "threshold": 0.05,
                                  "reason": "errors 0 of 0 samples (n/a) <= --max-error-rate 0.05"}


def test_failed_run_checks_carry_the_lead_reasons():
    health = RunHealth(planned=30, present=20, errors=5, samples=20)
    v = decide(_tables(), [MODEL], health=health)
    assert [c["passed"] for c in v["run_checks"]] == [False, False]
    assert [c["reason"] for c in v["run_checks"]] == v["reasons"][:2] == [
        health.incomplete_reason(), health.error_reason(0.05)]
    assert v["run_checks"][1]["value"] == 0.25


def test_terminal_lines_of_an_outcome_without_headlines_or_warnings():
    outcome = SimpleNamespace(verdict="pass", reasons=["continuity +0.30"])
    assert terminal_lines(outcome) == (["verdict: PASS", "  - continuity +0.30"], [])
    assert terminal_lines(outcome, upper=False)[0][0] == "verdict: pass"


def test_exit_code_of_an_outcome_that_does_not_say_whether_errors_were_too_many():
    assert exit_code(SimpleNamespace(verdict="pass"), gate=True) == 0
    assert exit_code(SimpleNamespace(verdict="inconclusive"), gate=False) == 0


# --- Verdict behaviours pinned through ``aggregate`` + ``decide``; each test names the bug it was watched failing against.
#
# Every test here was watched failing against the bug its docstring names, then
# passing once the bug was removed.


def _check(verdict, name: str, model: str = MODEL) -> dict:
    return next(c for c in verdict["per_model"][model]["checks"] if c["name"] == name)


def _one_leaky_answer(n: int = 20):
    """A clear gain, and one of ``n`` recall answers naming another workspace's canary."""
    records, scenarios = paired_run(n, recall_right=n, history_right=2)
    leaky = next(r for r in records if r.arm == "recall" and r.scenario_id == "fact-00")
    records[records.index(leaky)] = leaky.model_copy(
        update={"final_answer": "Billing runs Postgres 15. Falcon-7 launch code is in the vault."})
    return records, scenarios


def test_one_leaked_answer_among_many_fails_the_answer_leakage_check() -> None:
    """Bug: the verdict read the answer-leakage *rate* (1/20 rounds to 0) instead of the count of leaked answers."""
    v = _verdict(*_one_leaky_answer(20))
    check = _check(v, "no_answer_leakage")
    assert check["passed"] is False and check["value"] == 1
    assert v["status"] == "fail"


def test_one_tool_leak_among_many_samples_fails_the_tool_leakage_check() -> None:
    """Bug: the tool-leak count divided by the samples (a rate) before comparing with zero."""
    records, scenarios = paired_run(20, recall_right=20, history_right=2)
    leaky = next(r for r in records if r.arm == "recall" and r.scenario_id == "fact-03")
    records[records.index(leaky)] = leaky.model_copy(update={"tool_calls": [tool_call(["it-other-ws"])]})
    v = _verdict(records, scenarios)
    check = _check(v, "no_tool_leakage")
    assert check["passed"] is False and check["value"] == 1 and v["status"] == "fail"


def test_tool_leaks_in_the_baseline_arm_fail_too() -> None:
    """Bug: tool leaks counted in the treatment arm only."""
    records, scenarios = paired_run(10, recall_right=10, history_right=2)
    leaky = next(r for r in records if r.arm == "history_only")
    records[records.index(leaky)] = leaky.model_copy(update={"tool_calls": [tool_call(["it-other-ws"])]})
    assert _check(_verdict(records, scenarios), "no_tool_leakage")["passed"] is False


def test_unsupported_rise_exactly_at_the_tolerance_passes() -> None:
    """Bug: the tolerance compared with ``<`` (the docs say "at most"): a rise bounded exactly at it failed."""
    records, scenarios = paired_run(10, recall_right=10, history_right=2, unsupported_in_recall=1)
    bound = _check(_verdict(records, scenarios), "unsupported_claims_within_tolerance")["ci_high"]
    v = _verdict(records, scenarios, VerdictConfig(unsupported_tolerance=bound))
    check = _check(v, "unsupported_claims_within_tolerance")
    assert check["ci_high"] == bound and check["passed"] is True


def test_unsupported_rise_just_above_the_tolerance_fails() -> None:
    """Bug: the tolerance compared the wrong bound (the point estimate or the lower bound) or with ``>=``."""
    records, scenarios = paired_run(10, recall_right=10, history_right=2, unsupported_in_recall=1)
    v = _verdict(records, scenarios, VerdictConfig(unsupported_tolerance=0.1))
    check = _check(v, "unsupported_claims_within_tolerance")
    assert check["value"] == 0.1 and check["ci_low"] <= 0.0 < 0.1 < check["ci_high"]
    assert check["passed"] is None and "too few to decide (1 differ" in check["reason"]
    exact = VerdictConfig(unsupported_tolerance=check["ci_high"])
    assert _check(_verdict(records, scenarios, exact), "unsupported_claims_within_tolerance")["passed"] is True


def test_continuity_gain_exactly_at_the_minimum_is_no_proven_gain() -> None:
    """Bug: ``>=`` instead of ``>``: a gain whose interval starts exactly at the minimum passed."""
    records, scenarios = paired_run(10, recall_right=9, history_right=2)
    low = _check(_verdict(records, scenarios), "continuity_improves")["ci_low"]
    check = _check(_verdict(records, scenarios, VerdictConfig(min_continuity_gain=low)), "continuity_improves")
    assert check["ci_low"] == low and check["passed"] is not True


def test_a_failed_check_with_an_undecided_one_is_a_failure() -> None:
    """Bug: a model with one failed and one undecided check was reported inconclusive."""
    sc = make_scenario("fact-solo")
    records = [make_record(sc, arm="history_only"),
               make_record(sc, arm="recall", calls=[tool_call(["it-other-ws"])])]
    v = _verdict(records, {sc.id: sc})
    checks = {c["name"]: c["passed"] for c in v["per_model"][MODEL]["checks"]}
    assert checks["continuity_improves"] is None and checks["no_tool_leakage"] is False
    assert v["per_model"][MODEL]["status"] == "fail" and v["status"] == "fail"
    assert v["reasons"][0].startswith("tool-level leaks 1")


def test_overall_fails_when_one_model_fails_and_another_is_inconclusive() -> None:
    """Bug: overall status took inconclusive over fail across models."""
    good, scenarios = paired_run(10, recall_right=9, history_right=2)
    leaky = make_record(scenarios["fact-00"], calls=[tool_call(["it-other-ws"])], epoch=5)
    undecided = [r.model_copy(update={"model": "other/model"}) for r in good if r.arm == "recall"]
    v = _verdict(good + [leaky] + undecided, scenarios)
    assert v["per_model"][MODEL]["status"] == "fail"
    assert v["per_model"]["other/model"]["status"] == "inconclusive"
    assert v["status"] == "fail"


def test_only_undecided_checks_make_a_model_inconclusive_not_a_pass() -> None:
    """Bug: undecided checks counted as passed."""
    sc = make_scenario("fact-solo")
    records = [make_record(sc, arm="history_only", answer="I don't know."), make_record(sc, arm="recall")]
    v = _verdict(records, {sc.id: sc})
    assert v["per_model"][MODEL]["status"] == "inconclusive" and v["status"] == "inconclusive"


def _forgetting_run(answer_forgotten: list[str], retained: int = 0):
    """A paired run whose first recall sample's scenario asked to forget, with what came back."""
    from harness.score import RetainedFact

    records, scenarios = paired_run(6, recall_right=6, history_right=2)
    scores = [score_sample(r, scenarios[r.scenario_id]) for r in records]
    first = next(i for i, s in enumerate(scores) if s.arm == "recall")
    scores[first] = scores[first].model_copy(update={
        "forget_requests": 1, "forgotten_facts": 1, "answer_forgotten": answer_forgotten,
        "retained_after_forget": [RetainedFact(call_id="c1", kind="forgotten_fact", detail=f"fact {i}") for i in range(retained)]})
    return decide(aggregate(scores), [MODEL])


def test_an_answer_repeating_a_forgotten_fact_fails_the_forgetting_check_with_nothing_retrieved() -> None:
    """Bug: the check read only what the tools returned, so a forgotten fact said from elsewhere passed."""
    check = _check(_forgetting_run(["Oberkampf"]), "no_retained_after_forget")
    assert check["passed"] is False
    assert check["reason"] == "retained after forget in recall: 0 retrievable, 1 answers (must be 0)"


def test_a_retained_forgotten_fact_fails_the_forgetting_check_not_the_tool_leakage_check() -> None:
    v = _forgetting_run([], retained=2)
    assert _check(v, "no_retained_after_forget")["reason"] == "retained after forget in recall: 2 retrievable, 0 answers (must be 0)"
    assert _check(v, "no_tool_leakage")["passed"] is True and v["status"] == "fail"


def test_the_forgetting_check_is_there_only_when_some_scenario_asks_to_forget() -> None:
    names = [c["name"] for c in decide(aggregate([score_sample(r, s) for r, s in (
        (r, sc[r.scenario_id]) for records, sc in [paired_run(4, recall_right=4, history_right=1)] for r in records)]),
        [MODEL])["per_model"][MODEL]["checks"]]
    assert "no_retained_after_forget" not in names and len(names) == 4


def test_the_starter_suites_six_decision_scenarios_do_not_pass_the_gate(tmp_path, capsys) -> None:
    """The six decision scenarios of the starter suite (when the issue was filed: 3 fixed, 0 broken, exact p 0.25, which
    a percentile bootstrap passed; since the probe became its own message, 1 fixed, 0 broken): the gate exits 1 and the
    check line carries n, the units up and down and the exact p (the 3-0 case itself: test_decision.py)."""
    import json
    from pathlib import Path

    from harness.cli import main

    suite = Path(__file__).resolve().parents[2] / "scenarios" / "starter"
    code = main(["run", "--scenarios", str(suite), "--gate", "--filter", "category:decision", "--out", str(tmp_path / "run"),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    printed = capsys.readouterr().out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    check = _checks(summary["verdict"], "offline/reference")["continuity_improves"]
    assert code == 1 and summary["verdict"]["status"] != "pass" and check["passed"] is not True
    assert check["n"] == 6 and check["up"] + check["down"] < 6 and check["p_value"] > 0.05
    assert f"({check['up']} up, {check['down']} down)" in " ".join(printed.split())  # the check line wraps at 80 columns
    assert "verdict: PASS" not in printed


# ---------------------------------------------------------------- checks follow the protocol


def _locomo_shaped(gates: bool) -> dict:
    """A LoCoMo-shaped run: 8 conversations, each 2 headline probes (single_hop) and 1 adversarial probe.

    recall answers every headline probe right (history_only none) and no claim there is unsupported; every
    unsupported claim is recall's answer to an adversarial probe, the category the protocol reports apart.
    """
    from harness.analysis.aggregate import aggregate as build
    from tests.analysis.sample_scores import sample

    scores, headline, adversarial = [], set(), set()
    for conv in range(8):
        for probe, category in ((1, "single_hop"), (2, "single_hop"), (3, "adversarial")):
            sid = f"conv-{conv}/q{probe:03d}"
            (adversarial if category == "adversarial" else headline).add(sid)
            for arm in ("history_only", "recall"):
                right = category == "single_hop" and arm == "recall" or category == "adversarial" and arm != "recall"
                s = sample(0, arm, 0, right, category=category, abstain=category == "adversarial",
                           unsupported=category == "adversarial" and arm == "recall")
                scores.append(s.model_copy(update={"scenario_id": sid, "sample_id": f"{sid}|{arm}|m|0"}))
    tables = build(scores, headline=headline, apart={"adversarial": adversarial})
    return decide(tables, ["m"], headline="LoCoMo: single_hop", apart=[("adversarial", gates)])


def test_unsupported_claims_read_the_headline_and_the_adversarial_group_has_its_own_line() -> None:
    """On LoCoMo every unsupported claim came from the adversarial category the protocol reports apart: the
    headline's unsupported check passes, the adversarial line says where the rise is, and does not gate."""
    v = _locomo_shaped(gates=False)
    checks = _checks(v, "m")
    headline = checks["unsupported_claims_within_tolerance"]
    assert "unsupported claims over the headline +0.00" in headline["reason"]
    # none of the headline's 8 conversations differs: not failed, and too few to bound a rise within 0.02
    assert headline["passed"] is None and "no conversation differs" in headline["reason"]
    apart = checks["apart_adversarial"]
    assert apart["gates"] is False and apart["passed"] is False
    assert apart["reason"].startswith("adversarial (reported apart; does not gate) unsupported claims +1.00")
    assert "8 scenarios (8 up, 0 down), exact p 0.0078" in apart["reason"] and "its accuracy -1.00" in apart["reason"]
    assert v["status"] == "inconclusive" and v["reasons"][-1] == apart["reason"]  # shown last, never deciding


def test_a_protocol_whose_apart_line_gates_fails_and_the_verdict_names_the_adversarial_group() -> None:
    v = _locomo_shaped(gates=True)
    assert v["status"] == "fail"
    failing = [c["reason"] for c in v["per_model"]["m"]["checks"] if c["passed"] is False]
    assert failing == [v["reasons"][0]] and v["reasons"][0].startswith("adversarial (reported apart) unsupported")
