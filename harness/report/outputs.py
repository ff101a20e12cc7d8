"""Machine-readable outputs of a run folder: summary.json, metrics.csv, junit.xml, scores.jsonl.

Each writer replaces its file atomically (temp file, then rename), so a
reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.records import json_text
from harness.score import CORRECT_OUTCOMES

SUMMARY_FILE = "summary.json"
METRICS_FILE = "metrics.csv"
JUNIT_FILE = "junit.xml"
SCORES_FILE = "scores.jsonl"
HTML_FILE = "index.html"
METRICS_COLUMNS = ("model", "arm", "category", "metric", "value", "ci_low", "ci_high", "n")


def write_output(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically; on failure the temp file is removed and the OSError raised."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):  # nothing to clean up, or a read-only folder
            tmp.unlink(missing_ok=True)
        raise
    return path


def write_summary_json(run_dir: Path, summary: Mapping[str, Any]) -> Path:
    """``summary.json``: the summary dict, verdict first (key order kept)."""
    return write_output(Path(run_dir) / SUMMARY_FILE, json_text(summary, indent=1) + "\n")


def write_index_html(run_dir: Path, page: str) -> Path:
    """``index.html``: the rendered page (see :func:`harness.report.html.render_html`)."""
    return write_output(Path(run_dir) / HTML_FILE, page)


def write_metrics_csv(run_dir: Path, metrics: Iterable[Mapping[str, Any]]) -> Path:
    """``metrics.csv``: one row per model/arm/category/metric; empty cells for unknown values."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(METRICS_COLUMNS)
    for row in metrics:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in METRICS_COLUMNS])
    return write_output(Path(run_dir) / METRICS_FILE, buffer.getvalue())


def write_scores_jsonl(run_dir: Path, samples: Iterable[Mapping[str, Any]]) -> Path:
    """``scores.jsonl``: per-sample outcome and scores without transcripts (read by ``compare``)."""
    keys = ("sample_id", "scenario_id", "title", "category", "arm", "model", "epoch", "status", "outcome", "scores")
    lines = [json_text({k: s.get(k) for k in keys}) for s in samples]
    return write_output(Path(run_dir) / SCORES_FILE, "\n".join(lines) + ("\n" if lines else ""))


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    """Drop characters XML 1.0 cannot hold (control bytes a model may emit)."""
    return _XML_BAD.sub("\ufffd", text)


def _failure_text(sample: Mapping[str, Any]) -> str:
    failed = [f"{s['name']}: {s['reason']}" for s in sample.get("scores", []) if s.get("passed") is False]
    return "; ".join(failed) or str(sample.get("outcome"))


def write_junit_xml(run_dir: Path, verdict: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> Path:
    """``junit.xml``: suite ``gates`` (one case per verdict check and model, then ``run_complete`` and
    ``error_rate_within_max``), then one suite per
    model+arm with a case per scenario x epoch. Wrong answers are ``<failure>``, error samples ``<error>``.
    """
    root = ET.Element("testsuites", name="recall-eval", status=str(verdict.get("status")))
    gates = ET.SubElement(root, "testsuite", name="gates")
    n_gates = n_gate_fail = 0
    for model, mv in sorted(verdict.get("per_model", {}).items()):
        for check in mv.get("checks", []):
            n_gates += 1
            case = ET.SubElement(gates, "testcase", classname=f"gates.{model}", name=check["name"])
            if check.get("passed") is False:
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
    suites: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for sample in samples:
        suites.setdefault((sample["model"], sample["arm"]), []).append(sample)
    for (model, arm), members in sorted(suites.items()):
        suite = ET.SubElement(root, "testsuite", name=_clean(f"{model} / {arm}"))
        failures = errors = 0
        for sample in sorted(members, key=lambda s: (s["scenario_id"], s["epoch"])):
            case = ET.SubElement(suite, "testcase", classname=_clean(f"{model}.{arm}.{sample.get('category', '')}"),
                                 name=_clean(f"{sample['scenario_id']} [epoch {sample['epoch']}]"),
                                 time=f"{float(sample.get('latency_s') or 0.0):.3f}")
            if sample["status"] == "error":
                errors += 1
                err = sample.get("error") or {}
                message = _clean(str(err.get("message", "")))
                ET.SubElement(case, "error", type=_clean(str(err.get("type", "error"))), message=message).text = message
            elif sample["outcome"] not in CORRECT_OUTCOMES:
                failures += 1
                text = _clean(_failure_text(sample))
                ET.SubElement(case, "failure", type=sample["outcome"], message=text).text = text
        suite.set("tests", str(len(members)))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode", xml_declaration=False)
    return write_output(Path(run_dir) / JUNIT_FILE, '<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n")
