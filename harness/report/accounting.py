"""What building and searching each system's memory cost, per sample, the same way for every system (issue 43).

Every system rebuilds its memory for every sample (nothing crosses samples),
and the products rebuild more than the built-in arms do (their stores, their
embeddings). This module reads each record's ``ingest`` (seconds opening the
system and in its write phase, embeddings by then) and ``embedding`` (the
sample's embeddings: texts, cache hits, calls, tokens, cost, seconds, and what
the cache hits had cost when first computed) and gives one row per model x
arm of per-sample means over the ok samples, for ``summary.json`` ``systems``
and the systems table:

- ``ingest_s`` (``open_s`` + ``write_s``): the memory built before the probe;
- ``embedding_calls``, ``embedding_texts``, ``embedding_cached``,
  ``embedding_tokens``, ``embedding_cost_usd``, ``embedding_s``: what the
  sample paid (an in-process embedder's batches count as calls);
- ``embedding_s_uncached``, ``embedding_tokens_uncached``,
  ``embedding_cost_usd_uncached``: paid plus what the cache hits had cost
  when first computed, so an arm that ran after another over the same texts
  is never made to look free by the other's work (the cached and uncached
  figures are reported apart).

Tool calls, the same way for every system (a built-in Host, a plug-in, an
MCP server): ``write_tool_calls`` and ``probe_tool_calls`` per sample,
``tool_latency_p50_ms``/``tool_latency_p95_ms`` over every call of both
phases, and ``disclosed_bytes``, the UTF-8 bytes of the probe's tool results
the model was shown, per sample. MCP sampling (a system's servers asking
the client for model calls; absent for a system that cannot ask, every
non-MCP arm), per sample: ``sampling_calls``, ``sampling_tokens`` (prompt +
completion), ``sampling_cost_usd`` and ``sampling_s`` of the requests served
with the run's model (``purpose: sampling`` among the model calls of both
phases, already inside ``probe_tokens``, ``write_tokens`` and ``cost_usd``),
and ``sampling_refused``, the requests refused (by the arm's config, its
per-sample limit or the spending cap), so a product that depends on sampling
shows what it spent, or that it went without, never silently.

A system that embeds nothing has no embedding figures (None); a record
written before ``ingest`` was recorded has no ingest figures. A system whose
fingerprint says it embeds with its own embedder, not the run's, is marked
so in the embedding column.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from harness.report import formatting as fmt

__all__ = ["ACCOUNTING_COLUMNS", "accounting_by_arm", "accounting_cells"]

#: (key of a cell, column header), appended to the systems table's columns.
ACCOUNTING_COLUMNS = (
    ("ingest", "ingest s / sample"),
    ("embedding", "embed calls · s / sample (uncached s)"),
    ("embedding_cost", "embed tokens · cost / sample"),
    ("tool_calls", "tool calls write · probe / sample, p50 / p95 ms, bytes shown"),
)
_INGEST = ("open_s", "write_s")
_PAID = ("calls", "texts", "cached", "tokens", "cost_usd", "latency_s")


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def accounting_by_arm(records: Iterable[Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(model, arm) -> per-sample means of the ok samples' ingest and embedding figures (see the module docstring)."""
    ingest: dict[tuple[str, str], list[tuple[float, float]]] = {}
    embedding: dict[tuple[str, str], list[dict[str, float]]] = {}
    counted: dict[tuple[str, str], int] = {}
    calls: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
    latencies: dict[tuple[str, str], list[float]] = {}
    refused: dict[tuple[str, str], list[float]] = {}
    served: dict[tuple[str, str], list[tuple[float, float, float, float]]] = {}
    for record in records:
        if record.status != "ok":
            continue
        key = (str(record.model), str(record.arm))
        counted[key] = counted.get(key, 0) + 1
        phase, probe = getattr(record, "write_phase", None), list(getattr(record, "tool_calls", None) or [])
        written = [c for s in (phase.sessions if phase is not None else []) for c in s.tool_calls]
        shown = sum(len(c.result_text.encode("utf-8")) for c in probe)
        calls.setdefault(key, []).append((len(written), len(probe), shown))
        latencies.setdefault(key, []).extend(float(c.elapsed_s) for c in [*written, *probe])
        if getattr(record, "sampling_refused", None) is not None:
            refused.setdefault(key, []).append(float(record.sampling_refused))
            served.setdefault(key, []).append(_sampling(record))
        log = getattr(record, "ingest", None)
        if log is not None:
            ingest.setdefault(key, []).append((float(log.open_s), float(log.write_s)))
        used = getattr(record, "embedding", None)
        if used is not None:
            figures = {name: float(getattr(used, name, 0) or 0) for name in _PAID}
            figures["saved_s"] = float(used.cached_latency_s)
            figures["saved_tokens"] = float(used.cached_tokens)
            figures["saved_cost_usd"] = float(used.cached_cost_usd)
            embedding.setdefault(key, []).append(figures)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for key, samples in counted.items():
        opened = [o for o, _ in ingest.get(key, [])]
        written = [w for _, w in ingest.get(key, [])]
        rows = embedding.get(key, [])
        # a sample of an embedding arm that embedded nothing (a denied probe) counts as zero, not as absent
        per = lambda name: _mean([r[name] for r in rows] + [0.0] * (samples - len(rows))) if rows else None  # noqa: E731, B023 - used within this iteration
        paid_s, saved_s = per("latency_s"), per("saved_s")
        out[key] = {
            "ingest_s": _mean([o + w for o, w in zip(opened, written, strict=True)]),
            "open_s": _mean(opened), "write_s": _mean(written),
            "embedding_calls": per("calls"), "embedding_texts": per("texts"), "embedding_cached": per("cached"),
            "embedding_tokens": per("tokens"), "embedding_cost_usd": per("cost_usd"), "embedding_s": paid_s,
            "embedding_s_uncached": None if paid_s is None or saved_s is None else paid_s + saved_s,
            "embedding_tokens_uncached": None if not rows else (per("tokens") or 0.0) + (per("saved_tokens") or 0.0),
            "embedding_cost_usd_uncached": None if not rows else (per("cost_usd") or 0.0) + (per("saved_cost_usd") or 0.0),
            **_tool_figures(calls.get(key, []), latencies.get(key, [])),
            **({"sampling_refused": _mean(refused[key]), **_sampling_figures(served[key])} if key in refused else {}),
        }  # fmt: skip
    return out


def _sampling(record: Any) -> tuple[float, float, float, float]:
    """(calls, tokens, cost in USD, seconds) of the sampling requests a record's servers had served, both phases."""
    phase = getattr(record, "write_phase", None)
    calls = [c for c in [*record.model_calls, *(phase.model_calls if phase is not None else ())]
             if getattr(c, "purpose", None) == "sampling"]
    return (float(len(calls)), float(sum(c.prompt_tokens + c.completion_tokens for c in calls)),
            sum(max(0.0, c.cost_usd or 0.0) for c in calls if not c.cached), sum(float(c.latency_s) for c in calls))


def _sampling_figures(per_sample: list[tuple[float, float, float, float]]) -> dict[str, float | None]:
    """Per-sample means of the served sampling calls, tokens, cost and seconds."""
    names = ("sampling_calls", "sampling_tokens", "sampling_cost_usd", "sampling_s")
    return {name: _mean([s[i] for s in per_sample]) for i, name in enumerate(names)}


def _quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (linear between the nearest ranks)."""
    ordered = sorted(values)
    at = q * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def _tool_figures(per_sample: list[tuple[int, int, int]], latencies: list[float]) -> dict[str, float | None]:
    """Per-sample means of write and probe tool calls and bytes shown, and the calls' latency quantiles in ms."""
    mean = lambda i: _mean([float(s[i]) for s in per_sample])  # noqa: E731
    return {"write_tool_calls": mean(0), "probe_tool_calls": mean(1), "disclosed_bytes": mean(2),
            "tool_latency_p50_ms": _quantile(latencies, 0.5) * 1000 if latencies else None,
            "tool_latency_p95_ms": _quantile(latencies, 0.95) * 1000 if latencies else None}


def _seconds(value: Any) -> str:
    return f"{value:.2f}" if fmt.is_number(value) else "—"


def accounting_cells(row: Mapping[str, Any]) -> dict[str, str]:
    """The accounting columns of one ``systems`` row as display text (``—`` where a figure does not apply)."""
    calls, cost = row.get("embedding_calls"), row.get("embedding_cost_usd")
    embedder = _v if isinstance(_v := row.get("embedder"), Mapping) else {}
    embedding = "—"
    if embedder.get("source") == "own":  # a system that cannot take the run's embedder: marked, not hidden
        embedding = f"own embedder: {embedder.get('model')} (not the run's)"
    elif fmt.is_number(calls):
        embedding = f"{calls:.1f} · {_seconds(row.get('embedding_s'))} ({_seconds(row.get('embedding_s_uncached'))})"
    tokens = row.get("embedding_tokens")
    cost_text = "—"
    if fmt.is_number(tokens):
        cost_text = f"{tokens:,.0f} · ${cost:.4f}" if fmt.is_number(cost) else f"{tokens:,.0f}"
    calls = "—"
    if fmt.is_number(row.get("write_tool_calls")) and fmt.is_number(row.get("probe_tool_calls")):
        p50, p95 = row.get("tool_latency_p50_ms"), row.get("tool_latency_p95_ms")
        latency = f"{p50:.1f} / {p95:.1f}" if fmt.is_number(p50) and fmt.is_number(p95) else "—"
        calls = (f"{row['write_tool_calls']:.1f} · {row['probe_tool_calls']:.1f}, {latency}, "
                 f"{row.get('disclosed_bytes') or 0:,.0f}")
        if fmt.is_number(row.get("sampling_refused")):  # a server that may ask for model calls: served and refused
            calls += f", {_sampling_text(row)}"
    return {"ingest": _seconds(row.get("ingest_s")), "embedding": embedding, "embedding_cost": cost_text, "tool_calls": calls}


def _sampling_text(row: Mapping[str, Any]) -> str:
    """``sampling 2.0 calls · 310 tokens · $0.0001 · 0.41 s, refused 0.0`` (per sample) for an MCP arm's row."""
    cost = row.get("sampling_cost_usd")
    return (f"sampling {row.get('sampling_calls') or 0:.1f} calls · {row.get('sampling_tokens') or 0:,.0f} tokens"
            + (f" · ${cost:.4f}" if fmt.is_number(cost) else "")
            + f" · {_seconds(row.get('sampling_s'))} s, refused {row['sampling_refused']:.1f}")
