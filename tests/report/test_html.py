"""The HTML report page: order, panels, escaping, no external resources, filters, flips, edge cases."""

from __future__ import annotations

import base64
import html
import json
import re
import zlib
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.analysis import decision
from harness.report import html as report_html
from harness.report.formatting import paired_diff
from harness.report.html import format_metric, render_html
from tests.report.report_fixtures import make_report_data, make_summary

XSS = "<script>alert(1)</script>"
OWN_SCRIPTS = {"filter-data", "transcript-data", None}  # None: the page's own inline script


class _Page(HTMLParser):
    """Collects what the tests look at: tags in order, panels, answers, script bodies, link targets."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: dict[str, int] = {}
        self.panels: dict[str, str] = {}  # panel id -> summary text
        self.answers: dict[str, str] = {}  # panel id -> final answer text
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.options: dict[str, list[str]] = {}
        self.text: list[str] = []
        self._panel: str | None = None
        self._capture: str | None = None
        self._script: dict[str, str | None] | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if a.get("id"):
            self.ids.setdefault(a["id"], len(self.tags))
        if tag == "details" and "p" in (a.get("class") or "").split():
            self._panel = a["id"]
            self.panels[a["id"]] = ""
        elif tag == "summary" and self._panel:
            self._capture = "summary"
        elif tag == "pre" and a.get("class") == "ans" and self._panel:
            self._capture = "answer"
            self.answers[self._panel] = ""
        elif tag == "script":
            self._script = a
            self.scripts.append((a, ""))
        elif tag == "select":
            self._select = a.get("name")
            self.options[self._select or ""] = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("summary", "pre"):
            self._capture = None
        elif tag == "details":
            self._panel = None
        elif tag == "script":
            self._script = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            attrs, body = self.scripts[-1]
            self.scripts[-1] = (attrs, body + data)
            return
        self.text.append(data)
        if self._capture == "summary" and self._panel:
            self.panels[self._panel] += data
        elif self._capture == "answer" and self._panel:
            self.answers[self._panel] += data
        if self._select is not None and self.tags[-1][0] == "option":
            self.options[self._select].append(data)

    def script(self, script_id: str) -> tuple[dict[str, str | None], str]:
        return next((a, body) for a, body in self.scripts if a.get("id") == script_id)


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def _transcripts(parsed: _Page) -> dict[str, Any]:
    attrs, body = parsed.script("transcript-data")
    if attrs.get("data-encoding") == "deflate-base64":
        body = zlib.decompress(base64.b64decode(body)).decode("utf-8")
    return json.loads(body)


@pytest.fixture(scope="module")
def report() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return make_report_data(n_scenarios=8, models=("openai/gpt-4o-mini", "anthropic/claude-3-5-haiku"), epochs=2)


@pytest.fixture(scope="module")
def parsed(report: tuple[dict[str, Any], list[dict[str, Any]]]) -> _Page:
    return _parse(render_html(*report))


def _with_hostile_text() -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    summary, samples = make_report_data(n_scenarios=3, seed=3)
    target = next(s for s in samples if s["arm"] == "recall" and s["tool_calls"] and s["status"] == "ok")
    target["final_answer"] = XSS
    target["messages"][-1]["content"] = XSS
    target["title"] = "<script>alert('title')</script>"
    target["messages"].insert(1, {"role": "user", "content": "</script><script>alert('history')</script>"})
    tool_message = next(m for m in target["messages"] if m["role"] == "tool")
    tool_message["content"] = json.dumps({"results": [{"text": "</script><script>alert('tool')</script>"}]})
    target["tool_calls"][0]["result_text"] = tool_message["content"]
    target["scores"][0]["reason"] = "<img src=x onerror=alert('reason')>"
    return summary, samples, target


def test_verdict_comes_first_before_the_metric_table(parsed: _Page) -> None:
    assert parsed.ids["verdict"] < parsed.ids["metrics"] < parsed.ids["samples"]
    first_section = next(a for tag, a in parsed.tags if tag == "section")
    assert first_section["id"] == "verdict"
    assert "PASS" in "".join(parsed.text)


def test_verdict_shows_each_check_with_value_interval_and_threshold(parsed: _Page) -> None:
    text = " ".join(parsed.text)
    assert "continuity improves" in text
    assert "0.180 [0.090, 0.270]" in text
    assert "no tool leakage" in text


@pytest.mark.parametrize("status", ["pass", "fail", "inconclusive"])
def test_verdict_badge_names_the_status_in_text_and_class(status: str) -> None:
    summary, samples = make_report_data(n_scenarios=2, status=status)
    parsed = _parse(render_html(summary, samples))
    badge = next(a for tag, a in parsed.tags if tag == "span" and "big" in (a.get("class") or ""))
    assert f"v-{status}" in (badge["class"] or "")
    assert status.upper() in "".join(parsed.text)


def test_one_panel_per_sample(report: tuple[dict[str, Any], list[dict[str, Any]]], parsed: _Page) -> None:
    assert len(parsed.panels) == len(report[1])
    assert set(parsed.panels) == {f"s{i}" for i in range(len(report[1]))}
    assert len(_transcripts(parsed)["r"]) == len(report[1])


def test_panel_header_names_scenario_arm_model_epoch_and_outcome(
    report: tuple[dict[str, Any], list[dict[str, Any]]], parsed: _Page
) -> None:
    headers = set(parsed.panels.values())
    for sample in report[1]:
        expected = (f"{sample['scenario_id']} {sample['title']} {sample['category']} · {sample['arm']} · "
                    f"{sample['model']} · epoch {sample['epoch']}")
        assert any(expected in header and sample["outcome"].replace("_", " ") in header for header in headers)


def test_metric_table_shows_values_with_intervals(parsed: _Page) -> None:
    cells = [c for c in parsed.text if re.fullmatch(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", c)]
    assert len(cells) > 10
    assert "continuity accuracy" in parsed.text


def test_format_metric_writes_value_and_interval() -> None:
    assert format_metric({"metric": "coverage", "value": 0.82, "ci_low": 0.74, "ci_high": 0.891}) == "0.82 [0.74, 0.89]"
    assert format_metric({"metric": "cost_usd", "value": 0.00123, "ci_low": None, "ci_high": None}) == "$0.00123"
    assert format_metric({"metric": "latency_p95_s", "value": 1.5}) == "1.50 s"
    assert format_metric({"metric": "prompt_tokens", "value": 12345.6}) == "12,346"
    assert format_metric({"metric": "coverage", "value": None}) == "—"


def test_paired_section_shows_difference_mcnemar_and_detectable_effect(parsed: _Page) -> None:
    text = " ".join(parsed.text)
    assert re.search(r"[+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]", text)
    assert re.search(r"p [=<] 0\.\d{3}", text) and "Minimum detectable effect" in text


def test_paired_differences_use_the_metric_unit() -> None:
    row = {"metric": "prompt_tokens", "diff": 30.4, "ci_low": 3.4, "ci_high": 60.1}
    assert paired_diff(row) == "+30 [+3, +60]"
    row = {"metric": "continuity_accuracy", "diff": 0.18, "ci_low": -0.02, "ci_high": 0.3}
    assert paired_diff(row) == "+0.180 [-0.020, +0.300]"
    assert paired_diff({"metric": "latency_s", "diff": 0.37}) == "+370 ms"


def test_charts_are_inline_svg(parsed: _Page) -> None:
    svgs = [a for tag, a in parsed.tags if tag == "svg"]
    assert len(svgs) == 4 + 2 + 2  # paired effect per model x baseline (2 x 2), accuracy per model, latency, tokens
    assert all(a.get("role") == "img" and a.get("aria-label") for a in svgs)
    assert any(tag == "rect" for tag, _ in parsed.tags)


def test_script_tags_in_answer_tool_result_and_title_render_as_text() -> None:
    summary, samples, target = _with_hostile_text()
    page = render_html(summary, samples)
    parsed = _parse(page)
    script_ids = [a.get("id") for a, _ in parsed.scripts]
    assert len(script_ids) == 3 and set(script_ids) == OWN_SCRIPTS
    assert not any(tag == "img" for tag, _ in parsed.tags)
    pid = next(p for p, header in parsed.panels.items() if "alert('title')" in header)
    assert parsed.answers[pid] == XSS
    blob = json.dumps(_transcripts(parsed), ensure_ascii=False)
    assert "</script><script>alert('tool')</script>" in blob
    assert "<img src=x onerror=alert('reason')>" in blob


def test_embedded_json_cannot_break_out_of_its_script_element() -> None:
    summary, samples, _ = _with_hostile_text()
    parsed = _parse(render_html(summary, samples))
    for script_id in ("filter-data", "transcript-data"):
        _, body = parsed.script(script_id)
        assert not set("<>&") & set(body)
    strings = _transcripts(parsed)["s"]
    assert "</script><script>alert('history')</script>" in strings


def test_large_transcripts_are_deflated_and_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    summary, samples, _ = _with_hostile_text()
    plain = _transcripts(_parse(render_html(summary, samples)))
    monkeypatch.setattr(report_html, "_COMPRESS_ABOVE", 0)
    parsed = _parse(render_html(summary, samples))
    attrs, body = parsed.script("transcript-data")
    assert attrs.get("data-encoding") == "deflate-base64"
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", body)
    assert _transcripts(parsed) == plain


@pytest.mark.parametrize("rows", [0, 1, 9, 3000])
def test_the_blob_deflated_a_piece_at_a_time_is_the_deflate_of_the_whole_json(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    """The pieces joined are base64(deflate(json)) of one dump, whatever the piece sizes (p22 run memory).

    Planted: pieces joined without their ``,`` separator; base64 of a piece cut off a multiple of 3 bytes;
    the flushed tail dropped. Each fails here.
    """
    from harness.report import page_data

    monkeypatch.setattr(page_data, "PIECE", 4)  # elements per json.dumps call: several pieces even for 9 rows
    monkeypatch.setattr(page_data, "B64_PIECE", 3 * 5)  # base64 15 bytes at a time: many cuts
    import random

    draw = random.Random(rows)  # text deflate cannot squeeze to nothing, so a large blob leaves zlib in many parts
    strings = [f"s{i} <é> \u2014 " + "".join(draw.choices("abcdefghij <>&é", k=60)) for i in range(rows * 3)]
    table = [[[["a", i, 0, -1]], [], i % 3, [[1, 0.5, True, 2]], [], -1, None] for i in range(rows)]
    whole = page_data.script_json({"s": strings, "r": table})
    plain, encoding = page_data.transcript_blob(strings, table, len(whole))
    assert (encoding, "".join(plain)) == ("json", whole)
    deflated = base64.b64encode(zlib.compress(whole.encode("utf-8"), 1)).decode("ascii")
    for above in (len(whole) - 1, 10):  # over the bound at the last piece, or at the first
        pieces, encoding = page_data.transcript_blob(strings, table, above)
        assert encoding == "deflate-base64"
        assert "".join(pieces) == deflated
    assert len(pieces) > 1 or rows < 3000


def test_transcript_strings_are_stored_once(report: tuple[dict[str, Any], list[dict[str, Any]]], parsed: _Page) -> None:
    strings = _transcripts(parsed)["s"]
    system_prompt = report[1][0]["messages"][0]["content"]
    assert strings.count(system_prompt) == 1
    assert len(strings) == len(set(strings))


def test_final_answer_is_not_repeated_in_the_transcript_data(
    report: tuple[dict[str, Any], list[dict[str, Any]]], parsed: _Page
) -> None:
    answers = {s["final_answer"] for s in report[1] if s["final_answer"]}
    assert not answers & set(_transcripts(parsed)["s"])


def test_no_external_resources(parsed: _Page) -> None:
    page = render_html(*make_report_data(n_scenarios=3))
    for tag, attrs in parsed.tags:
        for name in ("src", "href", "action", "data", "xlink:href"):
            assert not re.match(r"\s*(https?:)?//", attrs.get(name) or "", re.I), (tag, attrs)
        assert not (tag == "link" and attrs.get("rel") == "stylesheet")
        assert tag not in ("iframe", "img", "object", "embed")
    assert all(a.get("src") is None for a, _ in parsed.scripts)
    style = page[page.index("<style>"): page.index("</style>")]
    assert "@import" not in style and "url(" not in style


def test_filters_offer_the_arms_categories_models_and_outcomes_of_the_data(
    report: tuple[dict[str, Any], list[dict[str, Any]]], parsed: _Page
) -> None:
    samples = report[1]
    for field in ("arm", "category", "model", "outcome"):
        assert parsed.options[field][0] == "all"
        assert set(parsed.options[field][1:]) == {str(s[field]) for s in samples}
    assert any(tag == "input" and a.get("name") == "q" for tag, a in parsed.tags)
    assert "count" in parsed.ids


def test_filter_data_matches_the_panels(report: tuple[dict[str, Any], list[dict[str, Any]]], parsed: _Page) -> None:
    data = json.loads(parsed.script("filter-data")[1])
    assert len(data["r"]) == len(parsed.panels)
    for index, row in enumerate(data["r"]):
        header = parsed.panels[f"s{index}"]
        assert data["ids"][row[4]] in header
        assert f"· {data['f']['arm'][row[0]]} ·" in header


def test_flip_row_links_to_its_sample_panels(
    report: tuple[dict[str, Any], list[dict[str, Any]]], parsed: _Page
) -> None:
    flips = report[0]["flips"]
    assert flips
    links = [a["href"] for tag, a in parsed.tags if tag == "a" and a.get("class") == "fl"]
    assert links
    for href in links:
        assert href.startswith("#") and href[1:] in parsed.panels
    first = flips[0]
    headers = [parsed.panels[h[1:]] for h in links]
    assert any(first["scenario_id"] in h and f"· {first['arm_b']} · {first['model']}" in h for h in headers)
    assert any(first["scenario_id"] in h and f"· {first['arm_a']} · {first['model']}" in h for h in headers)


def test_empty_samples_render() -> None:
    summary = make_summary([])
    parsed = _parse(render_html(summary, []))
    assert parsed.panels == {}
    assert "No samples in this run." in parsed.text
    assert _transcripts(parsed)["r"] == []


def test_summary_without_sections_renders() -> None:
    parsed = _parse(render_html({}, []))
    assert "verdict" in parsed.ids
    assert "NO VERDICT" in "".join(parsed.text)


def test_error_sample_renders_its_error_and_no_answer() -> None:
    summary, samples = make_report_data(n_scenarios=2)
    broken = samples[0]
    broken.update(status="error", outcome="error", final_answer=None, scores=[], cost_usd=None,
                  error={"type": "RateLimitError", "message": "429 <too many>"})
    parsed = _parse(render_html(summary, samples))
    pid = next(p for p, header in parsed.panels.items() if header.startswith("error"))
    assert pid not in parsed.answers
    assert "Error RateLimitError: 429 <too many>" in "".join(parsed.text)


def test_odd_values_do_not_crash_the_render() -> None:
    summary, samples = make_report_data(n_scenarios=2)
    odd = samples[0]
    odd.update(epoch=None, latency_s=float("nan"), prompt_tokens=None, messages=[{"role": "user", "content": [
        {"type": "text", "text": "part"}]}, "not a dict"], tool_calls=[{"call_id": "x"}], expected=None)
    odd["final_answer"] = "lone surrogate \ud800 here"
    page = render_html(summary, samples)
    page.encode("utf-8")
    assert len(_parse(page).panels) == len(samples)


def test_render_is_deterministic(report: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    assert render_html(*report) == render_html(*report)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from("<>&\"'/ ascriptSCRIPT!-=é\u2028"), min_size=1, max_size=40))
def test_any_model_text_renders_as_the_same_text(text: str) -> None:
    summary, samples = make_report_data(n_scenarios=1, arms=("recall",))
    sample = samples[0]
    sample.update(final_answer=text, title=text)
    sample["messages"][1]["content"] = text + "!"
    parsed = _parse(render_html(summary, samples))
    assert parsed.answers["s0"] == text
    assert text in parsed.panels["s0"]
    assert {a.get("id") for a, _ in parsed.scripts} == OWN_SCRIPTS and len(parsed.scripts) == 3
    assert text + "!" in _transcripts(parsed)["s"]


def test_flip_links_are_capped_and_show_the_flip_first() -> None:
    summary, samples = make_report_data(n_scenarios=3, epochs=10, seed=5)
    flip = next(f for f in summary["flips"] if f["kind"] == "fixed")
    treatment = [s for s in samples if s["scenario_id"] == flip["scenario_id"] and s["arm"] == flip["arm_b"]]
    assert any(s["outcome"] in ("correct", "abstained_correctly") for s in treatment)
    page = render_html(summary, samples)
    parsed = _parse(page)
    flips = page[page.index('id="flips"'):]
    row = flips[flips.index(f"<code>{flip['scenario_id']}</code>"):]
    row = row[: row.index("</tr>")]
    treatment_links = row[row.index(f"{flip['arm_b']}:"):]
    assert treatment_links.count('class="fl"') == 6
    assert "(+4 more)" in row
    first = re.search(r'href="#(s\d+)"[^>]*>e\d+ (.)</a>', treatment_links)
    assert first and first.group(2) == "✓"
    assert flip["arm_b"] in parsed.panels[first.group(1)]


# ---------------------------------------------------------------- headlines, the effect chart, the paired test


def test_headlines_open_the_verdict_leads_first() -> None:
    summary, samples = make_report_data(n_scenarios=2)
    summary["headlines"] = [
        {"code": "incomplete", "lead": True, "text": "incomplete: 5 of 9 samples"},
        {"code": "cached", "lead": False, "text": "3 of 5 samples came from the cache"},
    ]
    parsed = _parse(render_html(summary, samples))
    items = [(a.get("class"), a.get("data-code")) for tag, a in parsed.tags if tag == "li" and a.get("data-code")]
    assert items == [("lead", "incomplete"), ("note", "cached")]
    first_li = next(i for i, (tag, a) in enumerate(parsed.tags) if tag == "li")
    assert parsed.tags[first_li][1].get("data-code") == "incomplete"  # before the verdict's reasons
    assert parsed.ids["verdict"] < first_li + 1 < parsed.ids["effect"]


def test_an_incomplete_verdict_has_its_own_badge() -> None:
    summary, samples = make_report_data(n_scenarios=2, status="pass")
    summary["verdict"]["status"] = "incomplete"
    parsed = _parse(render_html(summary, samples))
    badge = next(a for tag, a in parsed.tags if tag == "span" and "big" in (a.get("class") or ""))
    assert "v-incomplete" in (badge["class"] or "") and "INCOMPLETE" in "".join(parsed.text)
    assert "the checks alone say pass" in "".join(parsed.text)


def test_an_undecided_check_is_not_shown_as_failed() -> None:
    summary, samples = make_report_data(n_scenarios=2)
    check = summary["verdict"]["per_model"]["openai/gpt-4o-mini"]["checks"][0]
    check.update(passed=None, reason="continuity undecided: arm 'recall' missing")
    text = "".join(_parse(render_html(summary, samples)).text)
    assert "? undecided" in text and not re.search("✗ fail(?!ed)", text)


def _effect_rows(page: str) -> list[str]:
    return re.findall(r'<g class="effect-row[^"]*">.*?</g>', page, flags=re.S)


def test_the_effect_chart_shows_each_category_with_its_interval_and_n() -> None:
    summary, samples = make_report_data(n_scenarios=7)
    page = render_html(summary, samples)
    assert page.index('id="effect"') < page.index('id="metrics"')
    rows = _effect_rows(page)
    categories = sorted({s["category"] for s in samples})
    assert len(rows) == 2 * (1 + len(categories))  # history_only and full_history vs recall: all + each category
    overall = rows[0]
    row = next(r for r in summary["paired"] if r.get("category") == "all" and r["metric"] == "continuity_accuracy")
    assert f"{row['diff']:+.2f} [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}] · n={row['n_scenarios']}" in overall
    assert "all (n=7)" in overall


def test_a_zero_difference_is_a_dot_on_the_zero_line_and_missing_data_is_said() -> None:
    summary, samples = make_report_data(n_scenarios=7)
    page = render_html(summary, samples)
    zero_line = re.search(r'<line class="axis zero" x1="([\d.]+)"', page).group(1)
    categories = sorted({s["category"] for s in samples})
    zero_row = next(r for r in _effect_rows(page) if f">{categories[0].replace('_', ' ')} (n=" in r)
    assert f'<circle class="dot" cx="{zero_line}"' in zero_row and "+0.00" in zero_row
    missing = next(r for r in _effect_rows(page) if f">{categories[-1].replace('_', ' ')}<" in r)
    assert "no paired data" in missing and "<circle" not in missing and "<rect" not in missing


def test_a_summary_without_category_rows_draws_only_the_overall_difference() -> None:
    summary, samples = make_report_data(n_scenarios=7)
    summary["paired"] = [{k: v for k, v in r.items() if k != "category"} for r in summary["paired"]
                         if r.get("category") == "all"]
    rows = _effect_rows(render_html(summary, samples))
    assert len(rows) == 2 and "no paired data" not in "".join(rows)


def test_the_paired_test_that_ran_is_named() -> None:
    summary, samples = make_report_data(n_scenarios=3)
    summary["mcnemar"][0]["test"] = "mcnemar_mid_p"
    text = " ".join(_parse(render_html(summary, samples)).text)
    assert "mcnemar mid p" in text
    for row in summary["mcnemar"]:
        row.pop("test")
    assert "McNemar exact" in " ".join(_parse(render_html(summary, samples)).text)


def _paired_paragraphs(summary: dict[str, Any], samples: list[dict[str, Any]]) -> list[str]:
    """The text of each paragraph of the paired section that names its test."""
    section = render_html(summary, samples).split('id="paired"', 1)[1].split("</section>", 1)[0]
    return [re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", p))).strip()
            for p in re.findall(r"<p>(.*?)</p>", section, re.S) if "Paired test" in p]


def test_the_paired_test_says_it_pairs_scenarios() -> None:
    """summary.json's ``mcnemar`` block counts scenario pairs (``unit: scenario``); the page says so, also for a
    summary written before the field, and adds no line of another unit when the checks pair scenarios too."""
    summary, samples = make_report_data(n_scenarios=6)
    for row in summary["paired"]:
        row.update(decision.evidence_fields(decision.paired_evidence([0] * 6, [1, 1, 1, 0, 0, 0])))
    for row in summary["mcnemar"]:
        row.pop("unit", None)
    paragraphs = _paired_paragraphs(summary, samples)
    assert paragraphs and all(p.startswith("Paired test on scenarios: mcnemar exact, 6 pairs;") for p in paragraphs)
    assert not any("conversation" in p for p in paragraphs)


def test_on_a_conversation_suite_the_page_names_the_conversations_the_checks_pair() -> None:
    """Six conversations of three probes, every probe fixed: McNemar over 18 scenarios says p < 0.001, while the
    verdict's continuity check flips 6 conversations (exact p 2/2^6 = 0.031). The page prints both, each with
    its unit, so a reader does not take the scenarios' p for the one the verdict decided on."""
    summary, samples = make_report_data(n_scenarios=18)
    evidence = decision.paired_evidence([0] * 18, [1] * 18, [f"conv-{k % 6}" for k in range(18)])
    for row in summary["paired"]:
        if row["metric"] == "continuity_accuracy" and row["category"] == "all":
            row.update(decision.evidence_fields(evidence))
    for row in summary["mcnemar"]:
        row.update({"unit": "scenario", "n_pairs": 18, "fixed": 18, "broken": 0, "p_value": 2 / 2**18})
    paragraphs = _paired_paragraphs(summary, samples)
    assert paragraphs and all(p.startswith("Paired test on scenarios: mcnemar exact, 18 pairs;") for p in paragraphs)
    assert all("p < 0.001. The verdict's checks pair conversations, not scenarios: 6 conversations, 6 up, 0 down; "
               "exact sign-flip permutation test on per-conversation mean differences, p = 0.031." in p
               for p in paragraphs), paragraphs
    assert "18 (6 conversations)" in " ".join(_parse(render_html(summary, samples)).text)


def test_tool_use_per_arm_is_shown_in_the_verdict() -> None:
    summary, samples = make_report_data(n_scenarios=3)
    summary["tool_use"] = [{"model": "openai/gpt-4o-mini", "arm": "recall", "offered": 5, "used": 0, "rate": 0.0}]
    text = " ".join(_parse(render_html(summary, samples)).text)
    assert "recall 0.00 (0 of 5)" in text.replace("  ", " ")


def test_every_chart_is_well_formed_svg() -> None:
    import xml.etree.ElementTree as ET

    summary, samples = make_report_data(n_scenarios=7)
    summary["paired"][-1]["diff"] = None  # a row without a difference: drawn as missing
    svgs = re.findall(r"<svg .*?</svg>", render_html(summary, samples), flags=re.S)
    assert len(svgs) >= 4
    for svg in svgs:
        ET.fromstring(svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def test_a_lead_headline_is_not_repeated_as_a_reason() -> None:
    summary, samples = make_report_data(n_scenarios=2)
    lead = "incomplete: 5 of 9 samples; every figure covers only these"
    summary["headlines"] = [{"code": "incomplete", "lead": True, "text": lead}]
    summary["verdict"]["reasons"].insert(0, lead)
    assert render_html(summary, samples).count(lead) == 1


# ---------------------------------------------------------------- category charts say n; zero is not missing


def _accuracy_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in summary["metrics"] if r["metric"] == "continuity_accuracy"]


def test_the_accuracy_chart_labels_say_n_per_category() -> None:
    from harness.report.charts import accuracy_charts

    summary, _ = make_report_data(n_scenarios=7, seed=2)
    rows = [r for r in _accuracy_rows(summary) if r["category"] == "preference"]
    for row, n in zip(rows, (4, 3, 4)):
        row["n"] = n
    labels = [label["text"] for label in accuracy_charts(summary)[0]["labels"]]
    arms_n = {r["arm"]: r["n"] for r in _accuracy_rows(summary) if r["category"] == "all"}
    assert labels[0] == "all (n=" + ("/".join(str(arms_n[a]) for a in ("history_only", "recall", "full_history"))
                                     if len(set(arms_n.values())) > 1 else str(arms_n["recall"])) + ")"
    assert "preference (n=4/3/4)" in labels


def test_a_zero_accuracy_is_a_marked_line_and_missing_data_is_said_not_drawn() -> None:
    from harness.report.charts import accuracy_charts

    summary, samples = make_report_data(n_scenarios=7, seed=2)
    rows = _accuracy_rows(summary)
    zero = next(r for r in rows if r["category"] == "decision" and r["arm"] == "recall")
    zero.update(value=0.0, ci_low=0.0, ci_high=0.0)
    gone = next(r for r in rows if r["category"] == "temporal" and r["arm"] == "recall")
    gone.update(value=None, ci_low=None, ci_high=None, n=0)
    chart = accuracy_charts(summary)[0]
    zeros = [b for b in chart["bars"] if b["zero"]]
    assert "decision · recall" in [b["title"].split(":")[0] for b in zeros]
    assert all(b["title"].split(": ")[1].startswith("0.00") for b in zeros)
    assert [m["title"] for m in chart["missing"]] == ["temporal · recall: no data (n=0)"]
    assert not any(b["title"].startswith("temporal · recall") for b in chart["bars"])
    page = render_html(summary, samples)
    assert page.count('class="zerobar"') == len(zeros) and page.count('class="nodata"') == 1


def _pasted_samples() -> list[dict[str, Any]]:
    span = [{"role": "user", "content": "[Earlier conversation s1, Monday 1 May 2023]\nI adopted a greyhound called Pixel."},
            {"role": "assistant", "content": "Congratulations on Pixel!"},
            {"role": "user", "content": "[Earlier conversation s2, Friday 5 May 2023]\nPixel learned to sit."}]
    system, probe = {"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "What is my dog called?"}
    return [{"arm": "full_history", "category": "c", "model": "m", "_outcome": "correct", "scenario_id": f"c/q{i}", "epoch": 0,
             "final_answer": "Pixel", "messages": [system, *span, probe], "pasted": {"at": 1, "count": 3, "digest": "ab" * 32}}
            for i in range(2)]


def test_pasted_histories_over_the_page_budget_are_one_message_naming_their_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    """A LongMemEval S run pastes ~200 MB of distinct sessions: over the budget the page names them instead of embedding them."""
    from harness.report import page_data

    samples = _pasted_samples()
    assert page_data.pasted_chars(samples) == sum(len(m["content"]) for m in samples[0]["messages"][1:4])  # one history, once
    _, whole, _ = page_data.data_blobs(samples, 10**9)
    assert "[Earlier conversation s2, Friday 5 May 2023]\nPixel learned to sit." in json.loads("".join(whole))["s"]  # embedded whole
    monkeypatch.setattr(page_data, "PASTED_PAGE_CHARS", page_data.pasted_chars(samples) - 1)
    _, pieces, _ = page_data.data_blobs(samples, 10**9)
    blob = json.loads("".join(pieces))
    strings, (row, _) = blob["s"], blob["r"]
    assert [m[0] for m in row[0]] == ["s", "pasted_history", "u"]
    summary = strings[row[0][1][1]]
    assert summary.startswith("3 pasted messages") and "histories.jsonl" in summary and "history abababababab" in summary
    assert summary.endswith("[Earlier conversation s1, Monday 1 May 2023]\n[Earlier conversation s2, Friday 5 May 2023]")
    assert not any("Pixel learned" in s or "Congratulations" in s for s in strings)
