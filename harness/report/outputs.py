"""Machine-readable outputs of a run folder: summary.json, metrics.csv, junit.xml, scores.jsonl.

Each writer replaces its file atomically (temp file, then rename), so a
reader never sees half a file.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.atomic import write_atomic
from harness.records import json_text
from harness.score import CORRECT_OUTCOMES

SUMMARY_FILE = "summary.json"
METRICS_FILE = "metrics.csv"
JUNIT_FILE = "junit.xml"
SCORES_FILE = "scores.jsonl"
HTML_FILE = "index.html"
METRICS_COLUMNS = ("model", "arm", "category", "metric", "value", "ci_low", "ci_high", "n")


def write_output(path: Path, text: str | Sequence[str]) -> Path:
    """Write ``text`` to ``path`` atomically (:func:`harness.atomic.write_atomic`: a unique temp name, never through
    a symlink); on failure the temp file is removed and the OSError raised."""
    return write_atomic(path, text)


def write_summary_json(run_dir: Path, summary: Mapping[str, Any]) -> Path:
    """``summary.json``: the summary dict, verdict first (key order kept)."""
    return write_output(Path(run_dir) / SUMMARY_FILE, json_text(summary, indent=1) + "\n")


def write_index_html(run_dir: Path, page: str | Sequence[str]) -> Path:
    """``index.html``: the rendered page, whole or in pieces (:func:`harness.report.html.render_page`)."""
    return write_output(Path(run_dir) / HTML_FILE, page)


def write_metrics_csv(run_dir: Path, metrics: Iterable[Mapping[str, Any]]) -> Path:
    """``metrics.csv``: one row per model/arm/category/metric; empty cells for unknown values."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(METRICS_COLUMNS)
    for row in metrics:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in METRICS_COLUMNS])
    return write_output(Path(run_dir) / METRICS_FILE, buffer.getvalue())


#: ``scores.jsonl``'s row format: 2 holds each sample's whole :class:`harness.score.SampleScores` (and its place in
#: the suite's protocol), so ``compare`` can aggregate the samples again and check ``summary.json``'s tables; 3 adds
#: ``apart_gates`` (whether the protocol's groups reported apart gate the verdict), so ``compare`` decides the
#: verdict again with those lines too. Rows of format 2 are still read (:data:`SCORES_READABLE_VERSIONS`).
SCORES_SCHEMA_VERSION = 3
#: The row formats ``compare`` can aggregate again (2 lacks ``apart_gates``: :mod:`harness.runs.verdict_check`).
SCORES_READABLE_VERSIONS = (2, 3)
#: Fields a later row format added, with that format: an older row lacks them, and is not edited for lacking them.
SCORES_ADDED_IN = {"apart_gates": 3}
#: The fields of a ``scores.jsonl`` row that come first, as rows without ``schema_version`` (version 1) held them.
SCORES_KEYS = ("sample_id", "scenario_id", "title", "category", "arm", "model", "epoch", "status", "outcome", "scores",
               "session_retrieval", "ours_session_retrieval", "uncredited_items")


def _scores_row(sample: Mapping[str, Any]) -> dict[str, Any]:
    """One ``scores.jsonl`` row: the leading fields, then the rest of the sample's scores and its protocol groups."""
    row = {k: sample.get(k) for k in SCORES_KEYS}
    full = sample.get("sample_scores")
    if full is None:  # a sample dict built by hand (tests, tools): the leading fields only
        return row
    rest = full.model_dump(mode="json", exclude=set(SCORES_KEYS))
    return {"schema_version": SCORES_SCHEMA_VERSION, **row, **rest, "headline": sample.get("headline"),
            "apart": list(sample.get("apart") or ()), "apart_gates": sample.get("apart_gates")}


def scores_text(samples: Iterable[Mapping[str, Any]]) -> str:
    """The text of ``scores.jsonl`` (its digest goes into ``summary.json`` before either is written)."""
    lines = [json_text(_scores_row(s)) for s in samples]
    return "\n".join(lines) + ("\n" if lines else "")


def text_sha256(text: str) -> str:
    """SHA-256 of ``text`` as a written file holds it (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_scores_jsonl(run_dir: Path, samples: Iterable[Mapping[str, Any]] | str) -> Path:
    """``scores.jsonl``: per-sample outcome and scores without transcripts (read by ``compare``); or its text."""
    text = samples if isinstance(samples, str) else scores_text(samples)
    return write_output(Path(run_dir) / SCORES_FILE, text)


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    """Drop characters XML 1.0 cannot hold (control bytes a model may emit)."""
    return _XML_BAD.sub("\ufffd", text)


def _failure_text(sample: Mapping[str, Any]) -> str:
    failed = [f"{s['name']}: {s['reason']}" for s in sample.get("scores", []) if s.get("passed") is False]
    return "; ".join(failed) or str(sample.get("outcome"))


def _outcome_text(sample: Mapping[str, Any]) -> str:
    """A sample's outcome as junit.xml records it: ``correct``, ``wrong: why``, ``error: Type: message``."""
    if sample["status"] == "error":
        err = sample.get("error") or {}
        return f"error: {err.get('type', 'error')}: {err.get('message', '')}"
    if sample["outcome"] in CORRECT_OUTCOMES:
        return str(sample["outcome"])
    return f"{sample['outcome']}: {_failure_text(sample)}"


def write_junit_xml(run_dir: Path, verdict: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> Path:
    """``junit.xml``: the gate's checks are the test cases; every sample's outcome is recorded beside them.

    Suite ``gates`` holds one case per verdict check and model, then ``run_complete`` and
    ``error_rate_within_max``: a failed check is a ``<failure>``, an undecided one ``<skipped>``. So the CI's
    test tab is red exactly when the gate is. Per model+arm a suite with no test cases records each sample's
    outcome as a ``<property>`` (``name`` the scenario and epoch, ``value`` ``correct``, ``wrong: why`` or
    ``error: ...``) with the counts: a wrong answer of the baseline arm is a measurement, not a failing test.
    """
    root = ET.Element("testsuites", name="recall-eval", status=str(verdict.get("status")))
    gates = ET.SubElement(root, "testsuite", name="gates")
    n_gates = n_gate_fail = 0
    for model, mv in sorted(verdict.get("per_model", {}).items()):
        for check in mv.get("checks", []):
            n_gates += 1
            case = ET.SubElement(gates, "testcase", classname=f"gates.{model}", name=check["name"])
            if check.get("gates") is False:  # a line the protocol reports apart and does not gate on
                ET.SubElement(case, "skipped", message=_clean(f"reported apart, not gating: {check['reason']}"))
            elif check.get("passed") is False:
                n_gate_fail += 1
                ET.SubElement(case, "failure", message=_clean(check["reason"])).text = _clean(check["reason"])
            elif check.get("passed") is None:
                ET.SubElement(case, "skipped", message=_clean(check["reason"]))
    for check in verdict.get("run_checks") or []:  # the run itself: every sample there, errors within bounds
        n_gates += 1
        case = ET.SubElement(gates, "testcase", classname="gates.run", name=check["name"])
        if check.get("passed") is False:
            n_gate_fail += 1
            ET.SubElement(case, "failure", message=_clean(check["reason"])).text = _clean(check["reason"])
    gates.set("tests", str(n_gates))
    gates.set("failures", str(n_gate_fail))
    gates.set("errors", "0")
    suites: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for sample in samples:
        suites.setdefault((sample["model"], sample["arm"]), []).append(sample)
    for (model, arm), members in sorted(suites.items()):
        suite = ET.SubElement(root, "testsuite", name=_clean(f"outcomes {model} / {arm}"), tests="0", failures="0",
                              errors="0")
        properties = ET.SubElement(suite, "properties")
        ordered = sorted(members, key=lambda s: (s["scenario_id"], s["epoch"]))
        errors = sum(s["status"] == "error" for s in ordered)
        correct = sum(s["status"] != "error" and s["outcome"] in CORRECT_OUTCOMES for s in ordered)
        for name, value in (("samples", len(ordered)), ("correct", correct),
                            ("not_correct", len(ordered) - correct - errors), ("errors", errors)):
            ET.SubElement(properties, "property", name=name, value=str(value))
        for sample in ordered:
            ET.SubElement(properties, "property", name=_clean(f"{sample['scenario_id']} [epoch {sample['epoch']}]"),
                          value=_clean(_outcome_text(sample)))
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode", xml_declaration=False)
    return write_output(Path(run_dir) / JUNIT_FILE, '<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n")
