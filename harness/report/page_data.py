"""The data embedded in ``index.html``: filter fields and transcripts as compact JSON.

Transcripts, tool calls, score reasons and answer keys travel in one blob in
which each distinct string is stored once (rows refer to it by index), with
``<``, ``>`` and ``&`` escaped, deflated and base64-encoded when large. The
page's script (``templates/script.js``) decodes a row only when its panel is
opened and builds DOM nodes with ``textContent``.

Row layout (``r[i]`` of the transcript blob, ``s`` the string table):
``[messages, tool_logs, expected, scores, model_calls, tools_offered, seed]`` where a
message is ``[role code, content, tool calls or 0, tool_call_id]`` and a model call
``[round, latency_s, prompt_tokens, completion_tokens, usage_source, cost_usd,
finish_reason, tool_call_count, cached, attempts]`` (strings as table indexes).

Pasted histories (``full_history``) are embedded whole while the distinct
pasted text of the run stays under :data:`PASTED_PAGE_CHARS`; above it (a
LongMemEval S run pastes ~200 MB of distinct sessions, which no compression
brings near a page that opens in seconds), each sample's pasted span is one
``pasted_history`` message naming its size, the sessions it holds (their
opening lines) and ``histories.jsonl``, which holds the text. The page stays
one file.

Filter rows (``r[i]`` of the filter blob): ``[arm, category, model, outcome, scenario id,
epoch, latency_s, tokens, cost_usd]``, the first four as codes into ``f``, the id an index
into ``ids``; ``p`` holds the run's request parameters shown with every model call.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable, Iterator
from typing import Any, cast

from markupsafe import Markup

from harness.records import json_text, redact_url

ROLE_CODES = {"system": "s", "user": "u", "assistant": "a", "tool": "t"}
NULL, SAME_AS_ANSWER = -1, -2


def _string_table() -> tuple[dict[str, int], Callable[[Any], int]]:
    """A string table and its ``intern`` function: each distinct text is stored once in the blob.

    A non-string (a dict such as an answer key) is stored as its sorted JSON; the
    same object met again (samples of one scenario share their answer key) is
    encoded once.
    """
    table: dict[str, int] = {}
    setdefault = table.setdefault
    encoded: dict[int, tuple[Any, int]] = {}

    def intern(text: Any) -> int:
        if text is None:
            return NULL
        if text.__class__ is not str:
            known = encoded.get(id(text))
            if known is not None and known[0] is text:
                return known[1]
            index = setdefault(json.dumps(text, ensure_ascii=False, sort_keys=True, default=str), len(table))
            encoded[id(text)] = (text, index)  # keeps the object alive, so its id is not reused
            return index
        return setdefault(text, len(table))

    return table, intern


#: Characters of distinct pasted history a page embeds whole; above, pasted spans are summarised (module docstring).
PASTED_PAGE_CHARS = 20_000_000


def _span(sample: dict[str, Any]) -> tuple[int, int, str] | None:
    """``(at, count, digest)`` of the sample's pasted history, or None."""
    pasted = sample.get("pasted")
    messages = sample.get("messages") or []
    if not isinstance(pasted, dict) or not isinstance(pasted.get("at"), int) or not isinstance(pasted.get("count"), int):
        return None
    at, count = pasted["at"], pasted["count"]
    return (at, count, str(pasted.get("digest"))) if 0 <= at and count > 0 and at + count <= len(messages) else None


def pasted_chars(samples: list[dict[str, Any]]) -> int:
    """The characters of the samples' distinct pasted histories (each history once)."""
    seen: dict[str, int] = {}
    for sample in samples:
        span = _span(sample)
        if span is not None and span[2] not in seen:
            at, count, digest = span
            seen[digest] = sum(len(m.get("content") or "") if isinstance(m, dict) and isinstance(m.get("content"), str) else 0
                               for m in sample["messages"][at:at + count])
    return sum(seen.values())


def _pasted_summary(span: list[Any], digest: str, total: int) -> dict[str, str]:
    """The one message standing for a pasted span on a page over :data:`PASTED_PAGE_CHARS`."""
    chars = sum(len(m["content"]) for m in span if isinstance(m, dict) and isinstance(m.get("content"), str))
    openings = [line for m in span if isinstance(m, dict) and isinstance(m.get("content"), str)
                for line in m["content"].split("\n", 1)[:1] if line.startswith("[") and line.endswith("]")]
    return {"role": "pasted_history", "content": (
        f"{len(span):,} pasted messages ({chars:,} characters: the earlier sessions) are not embedded in this page: "
        f"the run's pasted histories total {total:,} characters, over the page's {PASTED_PAGE_CHARS:,}. "
        f"histories.jsonl in the run folder holds them (history {digest[:12]}). The sessions pasted:\n" + "\n".join(openings))}


def _messages(sample: dict[str, Any], intern: Callable[[Any], int], pasted_total: int = 0) -> list[list[Any]]:
    answer = sample.get("final_answer")
    out = []
    messages = sample.get("messages") or []
    span = _span(sample) if pasted_total > PASTED_PAGE_CHARS else None
    if span is not None:
        at, count, digest = span
        messages = [*messages[:at], _pasted_summary(messages[at:at + count], digest, pasted_total), *messages[at + count:]]
    for message in messages:
        if not isinstance(message, dict):
            out.append(["?", intern(message), 0, NULL])
            continue
        role = str(message.get("role"))
        content = message.get("content")
        ref = SAME_AS_ANSWER if (content == answer and answer and role == "assistant") else intern(content)
        calls = []
        for call in message.get("tool_calls") or ():
            function = (call.get("function") or {}) if isinstance(call, dict) else {}
            call_id = call.get("id") if isinstance(call, dict) else None
            calls.append([intern(call_id), intern(function.get("name")), intern(function.get("arguments"))])
        out.append([ROLE_CODES.get(role, role), ref, calls or 0, intern(message.get("tool_call_id"))])
    return out


def _tool_logs(sample: dict[str, Any], intern: Callable[[Any], int]) -> list[list[Any]]:
    out = []
    for log in [*(sample.get("write_calls") or ()), *(sample.get("tool_calls") or ())]:  # writes came first
        if not isinstance(log, dict):
            continue
        ids = ", ".join(str(i) for i in log.get("disclosed_item_ids") or ())
        out.append([
            intern(log.get("call_id")), intern(log.get("name")), intern(log.get("status")), intern(ids or None),
            log.get("result_tokens"), log.get("elapsed_s"), bool(log.get("storage_read")),
            intern(log.get("arguments")), intern(log.get("result_text")),
        ])  # fmt: skip
    return out


def _scores(sample: dict[str, Any], intern: Callable[[Any], int]) -> list[list[Any]]:
    return [
        [intern(str(s.get("name"))), s.get("value"), s.get("passed"), intern(s.get("reason"))]
        for s in sample.get("scores") or ()
        if isinstance(s, dict)
    ]


def _model_calls(sample: dict[str, Any], intern: Callable[[Any], int]) -> list[list[Any]]:
    out = []
    for call in sample.get("model_calls") or ():
        if not isinstance(call, dict):
            continue
        out.append([
            call.get("round"), call.get("latency_s"), call.get("prompt_tokens"), call.get("completion_tokens"),
            intern(call.get("usage_source")), call.get("cost_usd"), intern(call.get("finish_reason")),
            call.get("tool_call_count"), bool(call.get("cached")), call.get("attempts"),
        ])  # fmt: skip
    return out


def _number(value: Any) -> float | int | None:
    """A JSON-safe number for sorting (None for anything else, NaN included)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return value if isinstance(value, int) else round(value, 6)


def _tokens(sample: dict[str, Any]) -> int | None:
    parts = [sample.get(k) for k in ("prompt_tokens", "completion_tokens")]
    numbers = [p for p in parts if isinstance(p, int | float) and not isinstance(p, bool)]
    return int(sum(numbers)) if numbers else None


def script_json(data: Any) -> str:
    """JSON for a ``<script type="application/json">``: ``<``, ``>``, ``&`` escaped, so ``</script>`` cannot occur."""
    text = json_text(data, separators=(",", ":"), default=str)  # lone surrogates as escapes: the page reads them back
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def data_blobs(samples: list[dict[str, Any]], compress_above: int,
               parameters: dict[str, Any] | None = None) -> tuple[Markup, list[Markup], str]:
    """The embedded data: filter fields (always plain JSON) and transcripts (plain, or deflate+base64 when large).

    Args:
        samples: the samples in page order, each with its ``_outcome``.
        compress_above: transcript JSON longer than this many characters is deflated.
        parameters: the run's request parameters (``run.json``), shown with each model call.

    Returns:
        ``(filters_json, transcripts, encoding)`` with encoding ``"json"`` or ``"deflate-base64"``; the
        transcripts in pieces (:func:`transcript_blob`), written one after another. Both texts
        are free of ``<``, ``>`` and ``&``, which is what makes the ``Markup`` safe inside a script element;
        the page parses them with ``JSON.parse``, never evaluates them.
    """
    strings, intern = _string_table()
    id_table, ids = _string_table()
    fields: dict[str, dict[str, int]] = {"arm": {}, "category": {}, "model": {}, "outcome": {}}

    def code(field: str, value: Any) -> int:
        table = fields[field]
        return table.setdefault(str(value), len(table))

    filters, rows = [], []
    pasted_total = pasted_chars(samples)
    for sample in samples:
        filters.append([code("arm", sample.get("arm")), code("category", sample.get("category")),
                        code("model", sample.get("model")), code("outcome", sample["_outcome"]),
                        ids(str(sample.get("scenario_id"))), _number(sample.get("epoch")),
                        _number(sample.get("latency_s")), _tokens(sample), _number(sample.get("cost_usd"))])
        offered = sample.get("tools_offered")
        rows.append([_messages(sample, intern, pasted_total), _tool_logs(sample, intern), intern(sample.get("expected")),
                     _scores(sample, intern), _model_calls(sample, intern),
                     intern(", ".join(str(t) for t in offered) if isinstance(offered, list) else None),
                     _number(sample.get("seed"))])
    shown = ("temperature", "max_tokens", "timeout_s", "max_tool_rounds", "api_base")
    request = {k: (parameters or {}).get(k) for k in shown if (parameters or {}).get(k) is not None}
    if isinstance(request.get("api_base"), str):
        request["api_base"] = redact_url(request["api_base"])
    filter_text = script_json({"f": {name: list(table) for name, table in fields.items()}, "ids": list(id_table),
                               "r": filters, "p": request})
    pieces: list[Any]
    pieces, encoding = transcript_blob(list(strings), rows, compress_above)
    for index, piece in enumerate(pieces):  # in place: a Markup is a copy, so at most one piece is held twice
        pieces[index] = Markup(piece)  # noqa: S704 - see docstring
    return Markup(filter_text), cast("list[Markup]", pieces), encoding  # noqa: S704 - see docstring


#: Elements of the string table or rows written per ``json.dumps`` call (C-speed, yet bounded pieces).
PIECE = 512


def _pieces(strings: list[str], rows: list[Any]) -> Iterator[str]:
    """``script_json({"s": strings, "r": rows})`` in pieces of :data:`PIECE` elements, the same text once joined.

    Without indent, a JSON array is its elements' texts joined by the separator, so
    dumping elements a piece at a time writes exactly the characters of one dump.
    """
    for opening, values in (('{"s":[', strings), ('],"r":[', rows)):
        yield opening
        for start in range(0, len(values), PIECE):
            part = script_json(values[start:start + PIECE])[1:-1]
            yield part if start == 0 else "," + part
    yield "]}"


#: Deflated bytes turned into base64 text at a time (a multiple of 3, so the pieces join into one base64 text).
B64_PIECE = 3 << 18


def transcript_blob(strings: list[str], rows: list[Any], compress_above: int) -> tuple[list[str], str]:
    """The transcript blob's text, in pieces, and its encoding: plain JSON up to ``compress_above`` characters, else deflate+base64.

    The JSON is written, deflated and base64-encoded a piece at a time, and the
    pieces are never joined (the page template writes them one after another),
    so only the base64 text is ever whole: a LongMemEval S report's JSON (every
    pasted history once, about 260 MB) was held four times over before (its
    text, its UTF-8 bytes, their deflate, its base64). Joined, the pieces are
    ``base64(zlib.compress(text.encode(), 1))``: deflate's output does not
    depend on how its input is split, and base64 of pieces cut at multiples of
    3 bytes is the base64 of the whole.
    """
    plain: list[str] = []
    length = 0
    pieces = _pieces(strings, rows)
    for piece in pieces:
        plain.append(piece)
        length += len(piece)
        if length > compress_above:
            break
    else:
        return plain, "json"
    deflate = zlib.compressobj(1)
    pending = bytearray(deflate.compress("".join(plain).encode("utf-8")))
    del plain
    out: list[str] = []
    for piece in pieces:
        pending += deflate.compress(piece.encode("utf-8"))
        if len(pending) >= B64_PIECE:
            cut = len(pending) - len(pending) % 3
            out.append(base64.b64encode(pending[:cut]).decode("ascii"))
            del pending[:cut]
    pending += deflate.flush()
    out.append(base64.b64encode(pending).decode("ascii"))
    return out, "deflate-base64"
