"""The shadow arm end to end: schema 3 records, the summary's shadow block per workspace, the page and the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.records import RESULTS_FILE, scan_results
from tests.memory_systems.prompt_factories import make_scenario

ARMS = ("history_only", "shadow", "recall")


def _suite(folder: Path) -> Path:
    """alpha: ws-a, its item surfaces; beta: the same probe incognito (cold); gamma: a probe in ws-b (nothing in scope)."""
    folder.mkdir()
    variants = {"alpha": {}, "beta": {"incognito": True}, "gamma": {"workspace": "ws-b"}}
    for sid, probe in variants.items():
        data = make_scenario(**probe).model_dump(mode="json", exclude_none=True)
        data["id"] = sid
        if sid == "gamma":  # nothing of ws-a is relevant (nor visible) from ws-b: an unanswerable probe
            data["expect"] = {"abstain": True}
        (folder / f"{sid}.yaml").write_text(json.dumps(data), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def shadow_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.cli import main

    base = tmp_path_factory.mktemp("shadow")
    run_dir = base / "run"
    code = main(["run", "--scenarios", str(_suite(base / "suite")), "--arms", *ARMS, "--out", str(run_dir),
                 "--no-cache", "--no-progress"])
    assert code in (0, 1)
    return run_dir


def _lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines()]


def test_shadow_records_are_schema_3_and_every_other_record_is_written_as_before(shadow_run: Path) -> None:
    lines = _lines(shadow_run)
    assert len(lines) == 9
    for line in lines:
        if line["arm"] == "shadow":
            assert line["schema_version"] == 3 and line["shadow"]["terms"]
        else:
            assert line["schema_version"] == 2 and "shadow" not in line
    scan = scan_results(shadow_run / RESULTS_FILE)
    assert not scan.problems and len(scan.records) == 9


def test_a_shadow_field_in_a_schema_2_record_is_refused_by_line(shadow_run: Path, tmp_path: Path) -> None:
    line = next(line for line in _lines(shadow_run) if line["arm"] == "shadow")
    (tmp_path / RESULTS_FILE).write_text(json.dumps({**line, "schema_version": 2}) + "\n", encoding="utf-8")
    scan = scan_results(tmp_path / RESULTS_FILE)
    assert not scan.records and "a shadow search is schema 3" in scan.problems[0]


def test_shadow_answers_are_history_onlys(shadow_run: Path) -> None:
    records = {(r.scenario_id, r.arm): r for r in scan_results(shadow_run / RESULTS_FILE).records}
    for sid in ("alpha", "beta", "gamma"):
        shadow, baseline = records[(sid, "shadow")], records[(sid, "history_only")]
        assert shadow.messages == baseline.messages and shadow.tool_calls == [] and shadow.tools_offered == []
        assert [c.prompt_tokens for c in shadow.model_calls] == [c.prompt_tokens for c in baseline.model_calls]


def test_the_summary_reports_the_shadow_search_per_workspace_and_overall(shadow_run: Path) -> None:
    from harness.run.agent import count_tokens

    summary = json.loads((shadow_run / "summary.json").read_text(encoding="utf-8"))
    (entry,) = summary["shadow"]["models"]
    overall = entry["overall"]
    assert {k: overall[k] for k in ("probes", "cold", "searched", "surfaced", "truncated", "scope_violations")} == {
        "probes": 3, "cold": 1, "searched": 2, "surfaced": 1, "truncated": 0, "scope_violations": 0}
    assert overall["surfaced_share"] == pytest.approx(1 / 3, abs=1e-4)
    assert overall["items_per_probe"] == pytest.approx(1 / 3, abs=1e-4)
    alpha = next(r for r in scan_results(shadow_run / RESULTS_FILE).records if r.sample_id.startswith("alpha|shadow"))
    assert overall["result_chars"] == sum(r.shadow.result_chars for r in scan_results(shadow_run / RESULTS_FILE).records
                                          if r.shadow is not None and r.shadow.status == "ok")
    assert alpha.shadow.result_tokens == count_tokens("offline/reference", text=alpha.shadow.result_text) > 0
    assert overall["latency_p50_ms"] is not None and overall["latency_p95_ms"] >= overall["latency_p50_ms"]
    by_ws = {w["workspace"]: w for w in entry["workspaces"]}
    assert (by_ws["ws-a"]["probes"], by_ws["ws-a"]["cold"], by_ws["ws-a"]["surfaced"]) == (2, 1, 1)
    assert (by_ws["ws-b"]["probes"], by_ws["ws-b"]["cold"], by_ws["ws-b"]["surfaced"]) == (1, 0, 0)
    assert summary["shadow"]["scope_violations"] == 0
    assert not any(h["code"] == "shadow_scope_violation" for h in summary["headlines"])


def test_the_page_has_a_shadow_section_and_the_terminal_lines_fit_80_columns(shadow_run: Path) -> None:
    from harness.report.shadow import shadow_terminal_lines

    page = (shadow_run / "index.html").read_text(encoding="utf-8")
    assert 'id="shadow"' in page and 'href="#shadow"' in page and "all workspaces" in page
    summary = json.loads((shadow_run / "summary.json").read_text(encoding="utf-8"))
    lines = shadow_terminal_lines(summary["shadow"])
    assert lines[0] == "shadow (offline/reference): recall would surface items in 1/3 probes (33%)"
    assert all(len(line) <= 80 for line in lines)


def test_a_scope_violation_leads_the_headlines() -> None:
    from harness.report.shadow import shadow_headline

    assert shadow_headline({"scope_violations": 0}) is None
    lead = shadow_headline({"scope_violations": 2})
    assert lead["lead"] is True and "Host defect" in lead["text"]


def test_a_run_without_the_shadow_arm_has_no_shadow_block(tmp_path: Path) -> None:
    from tests.integration.offline_runs import offline_run

    run_dir = offline_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert "shadow" not in summary and 'id="shadow"' not in (run_dir / "index.html").read_text(encoding="utf-8")


def _records_and_scenarios(run_dir: Path):
    from harness.records import read_manifest
    from harness.scenarios import load_scenarios

    scenarios = {s.id: s for s in load_scenarios(read_manifest(run_dir).scenario_paths)}
    return scan_results(run_dir / RESULTS_FILE).records, scenarios


def test_each_probe_counts_once_per_model_whatever_the_epochs(shadow_run: Path) -> None:
    from harness.report.shadow import shadow_block

    records, scenarios = _records_and_scenarios(shadow_run)
    alpha = next(r for r in records if r.sample_id.startswith("alpha|shadow"))
    again = alpha.model_copy(update={"epoch": 1, "sample_id": alpha.sample_id[:-1] + "1"})
    block = shadow_block([*records, again], scenarios)
    assert block["models"][0]["overall"]["probes"] == 3 and block["models"][0]["overall"]["surfaced"] == 1


def test_without_history_only_the_pairwise_baseline_is_the_shadow_arm(shadow_run: Path, tmp_path: Path) -> None:
    """shadow's answers are history_only's by construction, so a run of shadow and recall alone is judged the same."""
    from harness.report.pairwise import pairwise_block
    from harness.score import PairwiseJudge

    records, scenarios = _records_and_scenarios(shadow_run)
    judge = PairwiseJudge(model="test/p", cache_dir=tmp_path, complete=lambda m, msgs: '{"better": "tie"}')
    full = pairwise_block(records, scenarios, judge)
    judge = PairwiseJudge(model="test/p", cache_dir=tmp_path / "b", complete=lambda m, msgs: '{"better": "tie"}')
    block = pairwise_block([r for r in records if r.arm != "history_only"], scenarios, judge)
    assert full["baseline_arm"] == "history_only" and block["baseline_arm"] == "shadow"
    strip = ("model", "baseline")
    assert [{k: v for k, v in c.items() if k not in strip} for c in block["comparisons"]] == [
        {k: v for k, v in c.items() if k not in strip} for c in full["comparisons"]]


def test_shadow_figures_match_a_hand_count() -> None:
    """Twenty searches of 1..20 ms (p50 10 ms, p95 19 ms by the lower quantile), one cold probe, one truncated."""
    import types

    from harness.report.shadow import shadow_figures

    def log(ms: float, ids: tuple[str, ...] = (), *, admitted: bool = True, truncated: bool = False):
        return types.SimpleNamespace(status="ok" if admitted else "policy_denied", admitted=admitted, elapsed_s=ms / 1000,
                                     disclosed_item_ids=ids, result_chars=100 if admitted else 60,
                                     result_tokens=25 if admitted else 15, truncated=truncated,
                                     omitted_count=2 if truncated else 0, scope_violations=[])

    logs = [log(float(ms), ("it-1",) * (ms % 3 == 0), truncated=ms == 20) for ms in range(1, 21)]
    logs.append(log(99.0, admitted=False))
    got = shadow_figures(logs)
    assert (got["probes"], got["cold"], got["searched"], got["surfaced"]) == (21, 1, 20, 6)
    assert (got["latency_p50_ms"], got["latency_p95_ms"]) == (10.0, 19.0)  # the cold probe's time is no search
    assert (got["truncated"], got["omitted_results"], got["result_chars"], got["result_tokens"]) == (1, 2, 2000, 500)
    assert got["surfaced_share"] == round(6 / 21, 4) and got["result_tokens_per_probe"] == round(500 / 21, 4)


def _violating(status: str, *violations: str, admitted: bool | None = None):
    import types

    return types.SimpleNamespace(
        status=status,
        admitted=status != "policy_denied" if admitted is None else admitted,
        elapsed_s=0.001,
        disclosed_item_ids=("x",),
        result_chars=10,
        result_tokens=2,
        truncated=False,
        omitted_count=0,
        scope_violations=list(violations),
    )


def test_every_scope_violation_is_counted_whatever_the_probes_status() -> None:
    """A denied probe that disclosed anyway is the worst violation: it counts, and so does each one of a probe."""
    from harness.report.shadow import shadow_figures

    logs = [_violating("ok", "a: item of workspace 'ws-b'", "b: archived item"),
            _violating("policy_denied", "(run): disclosed items under a denying policy"), _violating("ok"),
            _violating("no_terms")]  # admitted, nothing searchable: not cold, and not searched
    got = shadow_figures(logs)
    assert got["scope_violations"] == 3 and got["cold"] == 1 and got["searched"] == 2
    assert got["violations"] == ["a: item of workspace 'ws-b'", "b: archived item",
                                 "(run): disclosed items under a denying policy"]


def test_the_runs_scope_violations_are_summed_over_every_model() -> None:
    import types

    from harness.report.shadow import shadow_block

    def record(model: str, *violations: str):
        return types.SimpleNamespace(model=model, scenario_id="s1", epoch=0, shadow=_violating("ok", *violations))

    block = shadow_block([record("m-a"), record("m-b", "x: not in the store"), record("m-c", "y: archived item")], {})
    assert block["scope_violations"] == 2 and [m["overall"]["scope_violations"] for m in block["models"]] == [0, 1, 1]


@pytest.mark.parametrize("order", ["first epoch first", "last epoch first"])
def test_a_probe_run_in_several_epochs_is_read_from_its_lowest_epoch_in_any_order(order: str) -> None:
    """Epochs repeat the same shadow search, but a resumed run's later epoch timed it on another load: the figures
    are the lowest epoch's (as the module says), however the records are ordered in results.jsonl."""
    import types

    from harness.report.shadow import shadow_block

    def record(epoch: int, ms: float):
        log = types.SimpleNamespace(**{**vars(_violating("ok")), "elapsed_s": ms / 1000})
        return types.SimpleNamespace(model="m", scenario_id="s1", epoch=epoch, shadow=log)

    records = [record(0, 2.0), record(1, 40.0), record(2, 90.0)]
    block = shadow_block(records if order == "first epoch first" else records[::-1], {})
    overall = block["models"][0]["overall"]
    assert overall["probes"] == 1 and overall["latency_p50_ms"] == 2.0


def _two_workspace_block():
    import types

    from harness.report.shadow import shadow_block

    def record(sid: str, log, model: str = "m"):
        return types.SimpleNamespace(model=model, scenario_id=sid, epoch=0, shadow=log)

    def scenario(workspace: str | None):
        return types.SimpleNamespace(probe=types.SimpleNamespace(workspace=workspace))

    slow = types.SimpleNamespace(**{**vars(_violating("ok")), "elapsed_s": 0.004, "result_chars": 1500,
                                    "result_tokens": 1234})
    records = [record("a", _violating("ok")), record("b", slow), record("c", _violating("policy_denied")),
               record("gone", _violating("ok"))]
    return shadow_block(records, {"a": scenario("ws-a"), "b": scenario("ws-a"), "c": scenario(None)})


def test_probes_are_grouped_by_their_scenarios_workspace_and_the_search_is_described() -> None:
    """A probe without a workspace, or whose scenario is not in the suite any more, is under ``(none)``; the cold
    probe's result text is in no character or token figure (it was never given)."""
    block = _two_workspace_block()
    (entry,) = block["models"]
    assert [(w["workspace"], w["probes"], w["cold"]) for w in entry["workspaces"]] == [("(none)", 2, 1), ("ws-a", 2, 0)]
    assert block["search"] == {"terms": "the probe message's content words and adjacent pairs", "match": "exact",
                               "limit": "the tool's default"}


def test_the_shadow_section_has_a_table_per_model_with_every_workspace_after_the_overall_row() -> None:
    from harness.report.shadow import COLUMNS, shadow_section

    section = shadow_section({"shadow": _two_workspace_block()})
    assert section["headers"] == [h for _, h in COLUMNS] and section["scope_violations"] == 0
    (table,) = section["tables"]
    assert table["caption"] == "m" and [r["label"] for r in table["rows"]] == ["all workspaces", "(none)", "ws-a"]
    assert table["rows"][0]["cells"] == ["4", "1", "100%", "1.00", "0", "380.00", "309.50", "1.00", "4.00", "0"]
    assert table["rows"][2]["cells"] == ["2", "0", "100%", "1.00", "0", "755.00", "618.00", "1.00", "4.00", "0"]
    assert shadow_section({}) is None and shadow_section({"shadow": {"models": []}}) is None


def test_a_share_that_does_not_apply_is_a_dash_and_counts_are_grouped() -> None:
    from harness.report.shadow import _cell

    assert (_cell("surfaced_share", None), _cell("surfaced_share", 0.5), _cell("probes", 12345)) == ("—", "50%", "12,345")
    assert (_cell("truncated", 3), _cell("latency_p50_ms", None), _cell("items_per_probe", 0.333)) == ("3", "—", "0.33")


def test_the_terminal_lines_give_each_models_share_items_tokens_latency_and_violations() -> None:
    from harness.report.shadow import shadow_terminal_lines

    assert shadow_terminal_lines(_two_workspace_block()) == [
        "shadow (m): recall would surface items in 4/4 probes (100%)",
        "  1.00 items/probe, +310 tokens/probe, search p95 4.0 ms, 0 scope violations"]
    empty = {"models": [{"model": "m", "overall": {
        "surfaced": 0, "probes": 0, "surfaced_share": None, "latency_p95_ms": None, "items_per_probe": None,
        "result_tokens_per_probe": None, "scope_violations": 0}}]}
    assert shadow_terminal_lines(empty) == ["shadow (m): recall would surface items in 0/0 probes (—)",
                                            "  0.00 items/probe, +0 tokens/probe, search p95 — ms, 0 scope violations"]
    assert shadow_terminal_lines(None) == []


def test_a_scope_violation_headline_gives_the_count_and_where_to_read_them() -> None:
    from harness.report.shadow import shadow_headline

    assert shadow_headline({"scope_violations": 3}) == {
        "code": "shadow_scope_violation", "lead": True,
        "text": "shadow: 3 scope violation(s) in what recall's search would have disclosed: a Host defect (must be 0); "
                "see summary.json shadow.models[].violations"}
    assert shadow_headline(None) is None and shadow_headline({}) is None


def test_every_violation_is_counted_and_the_first_twenty_are_listed() -> None:
    from harness.report.shadow import shadow_figures

    got = shadow_figures([_violating("ok", *(f"it-{n}: archived item" for n in range(25)))])
    assert got["scope_violations"] == 25 and got["violations"] == [f"it-{n}: archived item" for n in range(20)]


def test_no_probe_gives_no_per_probe_figure_and_no_latency() -> None:
    from harness.report.shadow import shadow_figures

    got = shadow_figures([])
    assert (got["probes"], got["surfaced_share"], got["items_per_probe"], got["result_chars_per_probe"]) == (0, None, None, None)
    assert (got["latency_p50_ms"], got["latency_p95_ms"]) == (None, None)
    timed = shadow_figures([types_log(0.0012345)])
    assert (timed["latency_p50_ms"], timed["latency_p95_ms"]) == (1.234, 1.234)


def types_log(elapsed_s: float):
    import types

    return types.SimpleNamespace(**{**vars(_violating("ok")), "elapsed_s": elapsed_s})


def test_the_section_carries_the_runs_scope_violation_count_for_the_page() -> None:
    from harness.report.shadow import shadow_section

    block = _two_workspace_block()
    assert shadow_section({"shadow": {**block, "scope_violations": 2}})["scope_violations"] == 2
    assert shadow_section({"shadow": {"models": block["models"]}})["scope_violations"] == 0
