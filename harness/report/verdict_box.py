"""What the report page's verdict box says first: why the run passed or failed, before what to keep in mind.

A reader opens a failed run to learn why it failed. The box leads with
the error itself when every sample errored (nothing else on the page means
anything then), then each model's checks (mark, value, reason), then the
lead headlines (incomplete, errors, low tool use) and any verdict reason no
check says; the context notes (offline baseline, cache, unjudged rubrics,
below the detectable effect) come last, folded when there are more than
:data:`OPEN_NOTES` of them. This module picks those pieces from the summary
and the samples; the template lays them out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["OPEN_NOTES", "verdict_box"]

#: Context notes shown open; more than this many are folded under one summary line.
OPEN_NOTES = 2
#: Distinct error texts named when every sample errored (the rest counted).
_SHOWN_ERRORS = 3


def _error_text(sample: Mapping[str, Any]) -> str:
    error = sample.get("error")
    if isinstance(error, Mapping):
        return f"{error.get('type', 'error')}: {error.get('message', '')}".strip()
    return str(error or "error (no message recorded)")


def _all_errored(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The errors, most frequent first, when there are samples and none of them ended ok; else None."""
    if not samples or any(s.get("status") == "ok" for s in samples):
        return None
    texts = Counter(_error_text(s) for s in samples)
    return {"count": len(samples), "errors": texts.most_common(_SHOWN_ERRORS),
            "more": max(0, len(texts) - _SHOWN_ERRORS)}


def verdict_box(summary: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The verdict box's pieces in the order the page shows them.

    Returns:
        ``all_errored`` (None, or the count and the most frequent error texts), ``leads`` (lead headlines),
        ``reasons`` (verdict reasons neither a check nor a lead says), ``notes`` (context headlines) and
        ``fold_notes`` (more than :data:`OPEN_NOTES` of them).
    """
    verdict = summary.get("verdict") or {}
    headlines = [h for h in summary.get("headlines") or [] if isinstance(h, Mapping)]
    leads = [h for h in headlines if h.get("lead")]
    notes = [h for h in headlines if not h.get("lead")]
    said = {h.get("text") for h in leads}
    for model_verdict in (verdict.get("per_model") or {}).values():
        said |= {c.get("reason") for c in (model_verdict or {}).get("checks") or [] if isinstance(c, Mapping)}
    reasons = [r for r in verdict.get("reasons") or [] if r not in said]
    return {"all_errored": _all_errored(samples), "leads": leads, "reasons": reasons, "notes": notes,
            "fold_notes": len(notes) > OPEN_NOTES}
