"""The memory document's V0.3 questions on the layer ladder, and the block that shows what each arm cost and risked."""

from __future__ import annotations

from typing import Any

from harness.report.document_layers import document_layer_lines, with_document_lines
from harness.report.document_v03 import document_v03_lines
from harness.report.layers import JUSTIFIED, NOT_JUSTIFIED, NOT_MEASURED, layers_block
from tests.report.test_layers import scores
from tests.score.scoring_factories import make_scenario

TOPK_ARMS = ["memory_document_topk_fts", "memory_document_topk_vector", "memory_document_topk_judge"]
ARMS = ["memory_document", *TOPK_ARMS, "memory_document_extracted", "memory_document_dream"]


def _by_arm(n: int, *, better: set[str], worse: set[str] = frozenset()) -> dict[str, list]:
    out: dict[str, list] = {arm: [] for arm in ARMS}
    for i in range(n):
        sid = f"s{i:02d}"
        for arm in ARMS:
            base = arm in ("memory_document", "memory_document_extracted")
            correct = (not base) if arm in better else base if arm in worse else False
            out[arm].append(scores(sid, arm, correct=correct))
    return out


def _line(lines: list[dict], line_id: str) -> dict:
    return next(x for x in lines if x["id"] == line_id)


def test_a_lane_right_on_ten_scenarios_where_the_whole_file_was_wrong_is_justified_per_lane() -> None:
    lines = document_layer_lines(_by_arm(10, better={"memory_document_topk_fts", "memory_document_dream"}), ARMS, {})
    assert _line(lines, "topk_fts")["outcome"] == JUSTIFIED
    assert "memory_document_topk_fts - memory_document" in _line(lines, "topk_fts")["why"]
    assert _line(lines, "topk_vector")["outcome"] == NOT_JUSTIFIED  # equal to the whole file everywhere
    assert _line(lines, "dream")["outcome"] == JUSTIFIED and _line(lines, "dream")["against"] == "memory_document_extracted"


def test_fewer_than_ten_scenarios_or_a_missing_arm_is_not_measured() -> None:
    lines = document_layer_lines(_by_arm(4, better=set(TOPK_ARMS)), ARMS, {})
    assert {x["outcome"] for x in lines} == {NOT_MEASURED}
    lines = document_layer_lines(_by_arm(12, better=set(TOPK_ARMS)), ["memory_document_topk_fts"], {})
    assert _line(lines, "topk_fts")["why"] == "the run has no memory_document arm"


def test_dream_modes_line_prints_its_measured_risks_beside_the_reason() -> None:
    risks = {"memory_document_dream": {"consolidation_calls": 4.0, "consolidation_tokens": 900.0, "facts_lost": 1,
                                       "entries_superseded": 6.7,
                                       "superseded_served": 2, "secrets_written": 0, "foreign_written": 0}}
    why = _line(document_layer_lines(_by_arm(10, better=set()), ARMS, risks), "dream")["why"]
    assert "6.7 entries superseded" in why and "facts lost 1" in why and "secrets written 0" in why and "4.0 consolidation calls" in why


def test_the_ladder_gains_the_documents_questions_after_its_own_lines() -> None:
    scored = [s for rows in _by_arm(3, better=set()).values() for s in rows]
    scenarios = {f"s{i:02d}": make_scenario() for i in range(3)}
    plain = layers_block(scored, scenarios, ARMS)
    asked = with_document_lines(layers_block(scored, scenarios, ARMS), scored, ARMS, [])
    assert not any(x["id"].startswith("topk_") for x in plain[0]["lines"])
    assert [x["id"] for x in asked[0]["lines"]][-4:] == ["topk_fts", "topk_vector", "topk_judge", "dream"]


def test_the_terminal_block_shows_one_row_per_arm_and_dashes_where_nothing_was_spent() -> None:
    rows = [{"arm": "memory_document", "continuity": 0.45, "unsupported": 0.0, "answer_leaks": 0, "selection_calls": 0.0,
             "windows": 0.0, "facts_lost": 0, "superseded_served": 1, "secrets_written": 0, "foreign_written": 0},
            {"arm": "memory_document_dream", "continuity": 0.9, "unsupported": 0.0, "answer_leaks": 0, "selection_calls": 0.0,
             "windows": 5.0, "consolidation_calls": 4.8, "consolidation_tokens": 7703.4, "facts_lost": 1, "entries_superseded": 6.7,
             "superseded_served": 2, "secrets_written": 0, "foreign_written": 0}]
    lines = document_v03_lines({"memory_document_v03": rows})
    assert len(lines) == 4 and "4.8/7703.4" in lines[3] and " 6.7 " in lines[3] and " 45% " in lines[2]
    assert document_v03_lines({}) == []


def test_the_page_shows_the_block_as_a_table_and_nothing_without_it() -> None:
    from harness.report.document_v03 import document_v03_section

    rows = [{"model": "m", "arm": "memory_document_topk_judge", "continuity": 0.44, "unsupported": 0.1, "answer_leaks": 0,
             "selection_calls": 1.0, "selection_tokens": 341.0, "windows": 0.0, "facts_lost": 0, "superseded_served": 1,
             "secrets_written": 0, "foreign_written": 0}]
    section = document_v03_section({"memory_document_v03": rows})
    assert section["rows"][0]["label"] == "m · memory_document_topk_judge"
    assert section["rows"][0]["cells"][:5] == ["44%", "10%", "0", "341.0", "-"] and len(section["headers"]) == 12
    assert document_v03_section({}) is None


def _sample(model: str, arm: str, *, calls: list | None = None, windows: list | None = None, section: str = "",
            status: str = "ok", scenario_id: str = "dream-test") -> Any:
    from types import SimpleNamespace

    from harness.records import WritePhaseLog, WriteSessionLog
    from tests.score.test_document_risks import _call

    sessions = [WriteSessionLog(session_id=f"dream@w{i}", stop_reason="final_answer", model_calls=[_call(100, 0.25)],
                                tool_calls=tools) for i, tools in enumerate(windows or [])]
    system = f"base\n<memory_document>\n{section}\n</memory_document>" if section else "base"
    return SimpleNamespace(model=model, arm=arm, status=status, scenario_id=scenario_id, model_calls=calls or [],
                           write_phase=WritePhaseLog(sessions=sessions) if windows else None,
                           messages=[{"role": "system", "content": system}])


def _row(model: str, arm: str, samples: int, **figures: Any) -> dict[str, Any]:
    zero = {"continuity": None, "unsupported": 0.0, "answer_leaks": 0, "selection_calls": 0.0, "selection_tokens": 0.0,
            "selection_cost_usd": 0.0, "windows": 0.0, "consolidation_calls": 0.0, "consolidation_tokens": 0.0,
            "consolidation_cost_usd": 0.0, "facts_lost": 0, "entries_superseded": 0.0, "superseded_served": 0,
            "secrets_written": 0, "foreign_written": 0}
    return {"model": model, "arm": arm, "samples": samples, **zero, **figures}


def test_the_block_has_one_row_per_model_and_document_arm_with_per_sample_means_and_totals() -> None:
    """Only ok samples of a document arm and a known scenario count; rows by model, then the arms' report order."""
    from harness.report.document_v03 import document_v03_block
    from tests.memory_systems.dream_factories import FOREIGN, SECRET, dream_scenario
    from tests.score.test_document_risks import _appended, _call, _write

    window = [_write("dream.snapshot", "ws-a", {"before": ["Port 8080 now."], "after": ["Standup 09:30."]}),
              _write("dream.supersede", "ws-a", {"event": "archived", "id": "x", "content": "Port 5173."}),
              _appended("ws-a", f"The key is {SECRET}"), _appended("ws-a", f"The {FOREIGN}.")]
    fts, whole, dream = "memory_document_topk_fts", "memory_document", "memory_document_dream"
    pairs = [
        (_sample("m2", dream, windows=[window], section="The dev server runs on port 5173."), scores("a", dream)),
        (_sample("m2", dream), scores("b", dream, correct=None)),
        (_sample("m1", fts, calls=[_call(40, 0.1, "selection"), _call(500, 1.0)]), scores("a", fts, correct=False)),
        (_sample("m1", fts, calls=[_call(40, None, "selection")]), scores("b", fts)),
        (_sample("m1", whole), scores("a", whole, unsupported=True).model_copy(update={"answer_leaks": ["x", "y"]})),
        (_sample("m1", whole), scores("b", whole, correct=False)),
        (_sample("m1", whole), scores("c", whole, correct=False)),
        (_sample("m1", fts, status="error"), scores("d", fts)),
        (_sample("m1", "history"), scores("e", "history")),
        (_sample("m1", whole, scenario_id="elsewhere"), scores("f", whole)),
    ]
    rows = document_v03_block([p[0] for p in pairs], [p[1] for p in pairs], {"dream-test": dream_scenario()},
                              [whole, fts, dream, "history"])
    assert rows == [
        _row("m1", whole, 3, continuity=0.333333, unsupported=0.333333, answer_leaks=2),
        _row("m1", fts, 2, continuity=0.5, selection_calls=1.0, selection_tokens=42.0, selection_cost_usd=None),
        _row("m2", dream, 2, continuity=1.0, windows=0.5, consolidation_calls=0.5, consolidation_tokens=51.0,
             consolidation_cost_usd=0.125, facts_lost=1, entries_superseded=0.5, superseded_served=1,
             secrets_written=1, foreign_written=1),
    ]


def test_the_block_exists_only_for_a_run_with_a_top_k_or_dream_mode_arm() -> None:
    from harness.report.document_v03 import document_v03_block

    assert document_v03_block([], [], {}, ["memory_document", "memory_document_extracted", "history"]) is None
    for arm in [*TOPK_ARMS, "memory_document_dream"]:
        assert document_v03_block([], [], {}, [arm]) == []


def test_each_line_names_its_question_and_the_judge_lane_prints_its_tokens() -> None:
    """The judge's tokens only on the judge's lane, "?" for an unknown figure; a missing lane arm is named."""
    from harness.report.document_layers import _num

    risks = {"memory_document_topk_judge": {"selection_tokens": 341.04}, "memory_document_topk_fts": {"selection_tokens": 9.0}}
    lines = document_layer_lines(_by_arm(10, better=set()), ARMS, risks)
    assert [(x["layer"], x["arm"], x["against"]) for x in lines] == [
        ("top-K document retrieval by FTS5 bm25", "memory_document_topk_fts", "memory_document"),
        ("top-K document retrieval by vectors", "memory_document_topk_vector", "memory_document"),
        ("top-K document retrieval by the run's model as judge", "memory_document_topk_judge", "memory_document"),
        ("Dream Mode (idle-window consolidation)", "memory_document_dream", "memory_document_extracted")]
    assert lines[0]["trigger"] == "the whole memory document is cut by the prompt cap or buries the relevant entry"
    assert lines[3]["trigger"] == "extraction alone leaves duplicates and superseded entries the probe is shown"
    assert lines[2]["why"].endswith("; unsupported answers +0.0 pp [-27.8, +27.8]; judge 341.0 tokens per sample")
    assert "tokens per sample" not in lines[0]["why"] and "consolidation" not in lines[3]["why"]
    assert _num("many") == "?" and _num(None) == "?" and _num(2) == "2.0"
    missing = document_layer_lines(_by_arm(10, better=set()), ["memory_document"], {})
    assert missing[0] == {"id": "topk_fts", "layer": "top-K document retrieval by FTS5 bm25",
                          "trigger": "the whole memory document is cut by the prompt cap or buries the relevant entry",
                          "arm": "memory_document_topk_fts", "against": "memory_document", "outcome": NOT_MEASURED,
                          "why": "the run has no memory_document_topk_fts arm", "estimate": None}


def test_a_lane_with_fewer_unsupported_answers_says_so_beside_its_gain() -> None:
    by_arm = _by_arm(10, better={"memory_document_topk_fts"})
    by_arm["memory_document"] = [s.model_copy(update={"unsupported_claims": scores("x", "y", unsupported=True).unsupported_claims})
                                 for s in by_arm["memory_document"]]
    line = _line(document_layer_lines(by_arm, ARMS, {}), "topk_fts")
    assert line["outcome"] == JUSTIFIED and line["estimate"]["value"] == 1.0
    assert line["why"].endswith("; unsupported answers -100.0 pp [-100.0, -44.5]")


def test_each_models_ladder_gains_lines_from_its_own_ok_samples_and_its_own_risks() -> None:
    good = _by_arm(10, better={"memory_document_topk_fts"})
    other = {arm: [s.model_copy(update={"model": "other"}) for s in rows] for arm, rows in _by_arm(10, better=set()).items()}
    failed = [s.model_copy(update={"status": "error", "continuity_correct": False})
              for s in good["memory_document_topk_fts"]]
    scored = [s for rows in [*good.values(), *other.values()] for s in rows] + failed
    blocks = [{"model": "other", "lines": []}, {"model": good["memory_document"][0].model, "lines": [{"id": "own"}]}]
    dream = {"arm": "memory_document_dream", "consolidation_calls": 3.0}
    out = with_document_lines(blocks, scored, ARMS, [{**dream, "model": "other"}])
    assert _line(out[0]["lines"], "topk_fts")["outcome"] == NOT_JUSTIFIED
    assert "3.0 consolidation calls" in _line(out[0]["lines"], "dream")["why"]
    assert out[1]["lines"][0] == {"id": "own"} and _line(out[1]["lines"], "topk_fts")["outcome"] == JUSTIFIED
    assert "consolidation" not in _line(out[1]["lines"], "dream")["why"]


def _shown_rows() -> list[Any]:
    return [{"model": "m", "arm": "memory_document_dream", "continuity": None, "unsupported": 0.25, "answer_leaks": 3,
             "selection_calls": 0.0, "selection_tokens": 5.0, "windows": 2.0, "consolidation_calls": 4.8,
             "consolidation_tokens": 7703.4, "entries_superseded": 6.7, "facts_lost": 1, "superseded_served": 2,
             "secrets_written": 3, "foreign_written": 4},
            {"model": "m", "arm": "memory_document_topk_judge", "selection_calls": 1.0, "selection_tokens": 341.0}, "junk"]


def test_every_cell_of_the_page_table_is_its_figure_or_a_dash_where_the_arm_spent_nothing() -> None:
    """A judge's tokens only where it made calls, a window's figures only where windows ran, 0 for a missing count."""
    from harness.report.document_v03 import document_v03_section

    section = document_v03_section({"memory_document_v03": _shown_rows()})
    assert section == {"headers": ["continuity", "unsupported", "answer leaks", "judge tokens", "windows",
                                   "consolidation calls", "consolidation tokens", "entries superseded", "facts lost",
                                   "stale served", "secrets written", "other workspaces' content written"],
                       "rows": [{"label": "m · memory_document_dream",
                                 "cells": ["—", "25%", "3", "-", "2.0", "4.8", "7703.4", "6.7", "1", "2", "3", "4"]},
                                {"label": "m · memory_document_topk_judge",
                                 "cells": ["—", "—", "0", "341.0", "-", "-", "-", "-", "0", "0", "0", "0"]}]}
    assert document_v03_section({"memory_document_v03": ["junk"]}) is None


def test_every_column_of_the_terminal_block_is_its_figure_or_a_dash_where_the_arm_spent_nothing() -> None:
    assert document_v03_lines({"memory_document_v03": _shown_rows()}) == [
        "memory document V0.3 (seed 001; docs/memory-document-v03.md): per sample, counts are totals",
        "  arm                          cont  unsup  leaks  select tok  dream calls/tok  lost  supers  stale  secrets  foreign",
        "  memory_document_dream            —    25%      3          -       4.8/7703.4     1     6.7      2        3        4",
        "  memory_document_topk_judge       —      —      0      341.0                -     0       -      0        0        0"]
    assert document_v03_lines({"memory_document_v03": ["junk"]}) == []


def test_a_figure_missing_from_a_row_that_spent_shows_as_a_dash() -> None:
    from harness.report.document_v03 import document_v03_section

    row = {"model": "m", "arm": "memory_document_topk_judge", "selection_calls": 1.0}
    assert document_v03_section({"memory_document_v03": [row]})["rows"][0]["cells"][3] == "—"
    assert document_v03_lines({"memory_document_v03": [row]})[2].split()[4] == "—"


def test_a_models_rows_follow_the_arms_report_order_not_their_names() -> None:
    from harness.report.document_v03 import document_v03_block
    from tests.memory_systems.dream_factories import dream_scenario

    arms = ["memory_document_dream", "memory_document_topk_fts"]
    rows = document_v03_block([_sample("m", a) for a in arms], [scores("a", a) for a in arms],
                              {"dream-test": dream_scenario()}, arms)
    assert [r["arm"] for r in rows] == ["memory_document_topk_fts", "memory_document_dream"]


def test_a_listed_arm_whose_samples_all_failed_leaves_its_lines_not_measured_instead_of_failing_the_report() -> None:
    """Every sample of the judge lane (or of the whole file) errored: its lines pair no scenario, the rest decide."""
    rows = _by_arm(10, better={"memory_document_topk_fts"})
    failed = {"memory_document_topk_judge", "memory_document"}
    for arms_failed in ({"memory_document_topk_judge"}, failed):
        scored = [s if s.arm not in arms_failed else s.model_copy(update={"status": "error"})
                  for arm_rows in rows.values() for s in arm_rows]
        lines = with_document_lines([{"model": scored[0].model, "lines": []}], scored, ARMS, [])[0]["lines"]
        judge = _line(lines, "topk_judge")
        assert judge["outcome"] == NOT_MEASURED and judge["estimate"] is None
        assert judge["why"] == ("continuity accuracy gained (memory_document_topk_judge - memory_document): "
                                "0 paired scenario(s), fewer than the 10 a decision needs")
        fts = _line(lines, "topk_fts")
        assert fts["outcome"] == (NOT_MEASURED if "memory_document" in arms_failed else JUSTIFIED)
    assert _line(lines, "dream")["outcome"] == NOT_JUSTIFIED  # its arms did not fail


def test_a_lane_with_more_unsupported_answers_prints_the_rise_beside_its_gain() -> None:
    by_arm = _by_arm(10, better=set())
    claims = scores("x", "y", unsupported=True).unsupported_claims
    by_arm["memory_document_topk_fts"] = [s.model_copy(update={"unsupported_claims": claims}) if i % 2 else s
                                          for i, s in enumerate(by_arm["memory_document_topk_fts"])]
    assert _line(document_layer_lines(by_arm, ARMS, {}), "topk_fts")["why"] == (
        "continuity accuracy gained (memory_document_topk_fts - memory_document) +0.0 pp [-27.8, +27.8] over 10 "
        "paired scenarios (0 up, 0 down), exact p 1.00: not shown above 0; unsupported answers +50.0 pp [+0.0, +100.0]")


def test_dream_modes_reason_prints_every_measured_cost_and_risk_in_full_and_nothing_without_its_row() -> None:
    """What a reader checks Dream Mode by: each figure from its own field, the two that must be 0 named."""
    risks = {"memory_document_dream": {"consolidation_calls": 4.04, "consolidation_tokens": 7703.44,
                                       "entries_superseded": 6.66, "facts_lost": 1, "superseded_served": 2,
                                       "secrets_written": 3, "foreign_written": 4}}
    decided = ("continuity accuracy gained (memory_document_dream - memory_document_extracted) +100.0 pp [+44.5, +100.0] "
               "over 10 paired scenarios (10 up, 0 down), exact p 0.002: the interval is above 0; unsupported answers "
               "+0.0 pp [-27.8, +27.8]")
    by_arm = _by_arm(10, better={"memory_document_dream"})
    assert _line(document_layer_lines(by_arm, ARMS, risks), "dream")["why"] == (
        f"{decided}; per sample 4.0 consolidation calls, 7703.4 tokens, 6.7 entries superseded; facts lost 1, "
        "superseded served 2, secrets written 3, other workspaces' content written 4 (the last two must be 0)")
    assert _line(document_layer_lines(by_arm, ARMS, {}), "dream")["why"] == decided
