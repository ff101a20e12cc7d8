"""The write path in the HTML report and the terminal table: what memory arms wrote, where they lost, what it cost."""

from __future__ import annotations

import contextlib
import io
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.report.html import render_html
from harness.report.terminal import arm_table
from tests.report.report_fixtures import make_report_data

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scenarios" / "smoke"
PAIR_FIELDS = {"scenarios": "n_scenarios", "both correct": "both_correct", "extraction failures": "extraction_failures",
               "retrieval failures": "retrieval_failures", "answer failures": "answer_failures",
               "oracle failed too": "oracle_failed_too", "extracted only correct": "extracted_only_correct"}
STAGE_FIELDS = {"correct": "correct", "lost at extraction": "extraction", "lost at retrieval": "retrieval",
                "lost at answer": "answer"}
COUNT_FIELDS = {"samples": "samples", "memories written": "memories_written", "duplicates": "write_duplicates",
                "rejected": "writes_rejected"}
RATE_FIELDS = {"written holds expected": "written_holds_expected_rate",
               "retrieved holds expected": "retrieved_holds_expected_rate"}


class _Tables(HTMLParser):
    """Every table of a page as ``(class, caption, header cells, body rows)``, and every element id."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, Any]] = []
        self.ids: set[str] = set()
        self.classes: list[str] = []
        self._cell: list[str] | None = None
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        self.classes += (a.get("class") or "").split()
        if tag == "table":
            self.tables.append({"class": a.get("class") or "", "caption": "", "head": [], "rows": []})
        elif tag in ("thead", "tbody", "caption"):
            self._in = tag
        elif tag == "tr" and self.tables and self._in == "tbody":
            self.tables[-1]["rows"].append([])
        elif tag in ("th", "td") and self.tables:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None and self.tables:
            text = "".join(self._cell).strip()
            table = self.tables[-1]
            (table["head"] if self._in == "thead" else table["rows"][-1]).append(text)
            self._cell = None
        elif tag in ("thead", "tbody", "caption"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        elif self._in == "caption" and self.tables:
            self.tables[-1]["caption"] += data


def _parse(page: str) -> _Tables:
    parser = _Tables()
    parser.feed(page)
    parser.close()
    return parser


def _rows(parsed: _Tables, cls: str) -> list[dict[str, str]]:
    """The body rows of every table with class ``cls``, each as header -> cell text (plus ``_caption``)."""
    out = []
    for table in parsed.tables:
        if cls in table["class"].split():
            out += [{**dict(zip(table["head"], row, strict=True)), "_caption": table["caption"]} for row in table["rows"]]
    return out


def _num(value: Any) -> str:
    return "—" if value is None else f"{value:.2f}"


@pytest.fixture(scope="module")
def written_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An offline smoke run with the oracle arm and two agent-written arms: its summary, page and printed table."""
    root = tmp_path_factory.mktemp("write-path")
    out = root / "run"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["run", "--arms", "recall", "recall_extracted", "named_memory", "--scenarios", str(SMOKE),
                     "--out", str(out), "--cache-dir", str(root / "cache"), "--no-progress"])
    assert code in (0, 1)
    return {"summary": json.loads((out / "summary.json").read_text()),
            "page": (out / "index.html").read_text(encoding="utf-8"), "stdout": buffer.getvalue()}


def test_the_report_shows_each_memory_arms_write_figures_from_summary_json(written_run: dict[str, Any]) -> None:
    summary, parsed = written_run["summary"], _parse(written_run["page"])
    assert "write-path" in parsed.ids
    shown = {(r["_caption"], r["arm"]): r for r in _rows(parsed, "write-path")}
    assert set(shown) == {(w["model"], w["arm"]) for w in summary["write_path"]} and len(shown) == 3
    for w in summary["write_path"]:
        row = shown[(w["model"], w["arm"])]
        for header, field in COUNT_FIELDS.items():
            assert row[header] == str(w[field]), (w["arm"], header)
        for header, field in RATE_FIELDS.items():
            assert row[header] == _num(w[field]), (w["arm"], header)
        assert row["forgets done / requested"] == f"{w['forgets_done']} / {w['forgets_requested']}"
        for header, stage in STAGE_FIELDS.items():
            assert row[header] == str(w["stages"][stage]), (w["arm"], header)
        assert row["memory"] == ("the scenario's items (oracle)" if w["arm"] == "recall" else "written by the agent")
    assert int(shown[("offline/reference", "named_memory")]["memories written"]) > 0


def test_the_report_shows_the_oracle_vs_extracted_split_and_how_to_read_it(written_run: dict[str, Any]) -> None:
    summary, parsed = written_run["summary"], _parse(written_run["page"])
    (pair,) = summary["oracle_vs_extracted"]
    (row,) = _rows(parsed, "oracle-vs-extracted")
    assert row["extracted vs oracle"] == "recall_extracted vs recall" and row["model"] == pair["model"]
    assert {header: int(row[header]) for header in PAIR_FIELDS} == {h: pair[f] for h, f in PAIR_FIELDS.items()}
    howto = written_run["page"].split('id="oracle-vs-extracted-howto">', 1)[1].split("</p>", 1)[0]
    assert "extraction failure</b> means the agent never stored the expected fact" in howto
    assert "retrieval failure</b> means it stored it but the probe's tools did not return it" in howto.replace("&#39;", "'")


def _metric(summary: dict[str, Any], arm: str, metric: str) -> float:
    return next(r["value"] for r in summary["metrics"]
                if r["arm"] == arm and r["metric"] == metric and r["category"] == "all")


def test_the_metric_table_puts_write_cost_beside_the_probes(written_run: dict[str, Any]) -> None:
    summary, parsed = written_run["summary"], _parse(written_run["page"])
    table = next(t for t in parsed.tables if "metrics" in t["class"].split() and t["head"][0] == "metric")
    arms = table["head"][1:]
    rows = {r[0]: dict(zip(arms, r[1:], strict=True)) for r in table["rows"]}
    for arm in ("recall", "recall_extracted", "named_memory"):
        probe = _metric(summary, arm, "prompt_tokens") + _metric(summary, arm, "completion_tokens")
        write = _metric(summary, arm, "write_prompt_tokens") + _metric(summary, arm, "write_completion_tokens")
        assert rows["tokens per sample, probe + write"][arm] == f"{probe:,.0f} + {write:,.0f}"
        calls = f"{_metric(summary, arm, 'model_calls'):.2f} + {_metric(summary, arm, 'write_model_calls'):.2f}"
        assert rows["model calls per sample, probe + write"][arm] == calls
    assert _metric(summary, "named_memory", "write_model_calls") > 0 and _metric(summary, "recall", "write_model_calls") == 0


def test_the_terminal_table_prints_tokens_and_model_calls_as_probe_plus_write(written_run: dict[str, Any]) -> None:
    summary = written_run["summary"]
    lines = arm_table(summary)
    assert "tokens/sample probe + write" in lines[0] and "model calls probe + write" in lines[0]
    assert lines == [line for line in written_run["stdout"].splitlines() if line in lines]  # what `run` printed
    for arm in ("recall", "named_memory"):
        line = next(line for line in lines if line.startswith(f"  {arm} "))
        probe = _metric(summary, arm, "prompt_tokens") + _metric(summary, arm, "completion_tokens")
        write = _metric(summary, arm, "write_prompt_tokens") + _metric(summary, arm, "write_completion_tokens")
        assert f"  {probe:,.0f} + {write:,.0f}  " in line
        assert f"  {_metric(summary, arm, 'model_calls'):.2f} + {_metric(summary, arm, 'write_model_calls'):.2f}  " in line
    rows = [lines[0], *(line for line in lines if line.startswith("  "))]
    assert len({len(line) for line in rows}) == 1


def test_a_run_of_the_default_arms_shows_no_write_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    main(["run", "--scenarios", str(SMOKE), "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert [w["arm"] for w in summary["write_path"]] == ["recall"]  # the oracle has a row, yet nothing was written
    page = (out / "index.html").read_text(encoding="utf-8")
    parsed = _parse(page)
    assert "write-path" not in parsed.ids and 'href="#write-path"' not in page and "probe + write" not in page
    assert "model · arm" in printed and "probe + write" not in printed


def _distinct_summary() -> dict[str, Any]:
    """A summary whose every write-path figure differs from every other, so a swapped column shows."""
    summary, _ = make_report_data(n_scenarios=2)
    summary["write_path"] = [{"model": "m", "arm": "recall_extracted", "samples": 40, "memories_written": 31,
                              "write_duplicates": 7, "writes_rejected": 3, "forgets_requested": 5, "forgets_done": 4,
                              "written_holds_expected_rate": 0.6, "retrieved_holds_expected_rate": 0.45,
                              "stages": {"correct": 11, "extraction": 9, "retrieval": 6, "answer": 2}}]
    summary["oracle_vs_extracted"] = [{"model": "m", "oracle_arm": "recall", "extracted_arm": "recall_extracted",
                                       "n_scenarios": 30, "both_correct": 13, "extraction_failures": 8,
                                       "retrieval_failures": 5, "answer_failures": 1, "oracle_failed_too": 2,
                                       "extracted_only_correct": 1}]
    return summary


def test_each_write_path_column_holds_its_own_figure() -> None:
    summary = _distinct_summary()
    parsed = _parse(render_html(summary, []))
    (row,) = _rows(parsed, "write-path")
    (w,) = summary["write_path"]
    assert {h: row[h] for h in COUNT_FIELDS} == {h: str(w[f]) for h, f in COUNT_FIELDS.items()}
    assert {h: row[h] for h in RATE_FIELDS} == {h: _num(w[f]) for h, f in RATE_FIELDS.items()}
    assert {h: row[h] for h in STAGE_FIELDS} == {h: str(w["stages"][s]) for h, s in STAGE_FIELDS.items()}
    assert row["forgets done / requested"] == "4 / 5"
    (pair_row,) = _rows(parsed, "oracle-vs-extracted")
    (pair,) = summary["oracle_vs_extracted"]
    assert {h: pair_row[h] for h in PAIR_FIELDS} == {h: str(pair[f]) for h, f in PAIR_FIELDS.items()}


def test_a_pair_alone_shows_the_section_and_no_memory_row_shows_none() -> None:
    summary = _distinct_summary()
    summary["write_path"] = []
    assert "write-path" in _parse(render_html(summary, [])).ids
    summary["oracle_vs_extracted"] = []
    summary["write_path"] = [{"model": "m", "arm": "recall", "samples": 4, "memories_written": 0,
                              "write_duplicates": 0, "writes_rejected": 0, "forgets_requested": 0, "forgets_done": 0,
                              "written_holds_expected_rate": 1.0, "retrieved_holds_expected_rate": 1.0,
                              "stages": {"correct": 4, "extraction": 0, "retrieval": 0, "answer": 0}}]
    assert "write-path" not in _parse(render_html(summary, [])).ids


def test_hostile_text_in_the_write_path_renders_as_text() -> None:
    from tests.browser.pages import PAYLOADS, hostile_data

    summary, samples = hostile_data()
    page = render_html(summary, samples)
    parsed = _parse(page)
    assert "injected" not in parsed.classes
    assert "write-path" in parsed.ids
    rows = _rows(parsed, "write-path")
    assert {r["_caption"] for r in rows} == {"m/" + PAYLOADS[0]}  # the hostile model name, as text
    assert any(PAYLOADS[2 % len(PAYLOADS)] in r["arm"] for r in rows)
    (pair,) = _rows(parsed, "oracle-vs-extracted")
    assert PAYLOADS[4 % len(PAYLOADS)] in pair["model"]
