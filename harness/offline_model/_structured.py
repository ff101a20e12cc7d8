"""The offline model's structured output: a request with a JSON-schema ``response_format`` gets a JSON object valid under it.

A product that calls a model inside its own write path (mem0's fact
extraction) asks for JSON of a given shape; a model that answers in prose
leaves such a product cold offline. This module honours any JSON schema
(``{"type": "json_schema", "json_schema": {"schema": ...}}``, OpenAI's form,
or a bare ``{"schema": ...}``) with the model's usual lexical means, reading
only the request like the rest of the model (never the product's prompt
wording, never a scenario file):

- **statements**: the lines of the last user message that read as a turn of a
  conversation (``<label>: <text>``, labels chained as in ``user: Caroline:
  ...``; a speaker label that is not a role stays with the text: ``Caroline:
  I went ...``), split into sentences; a sentence that is not a question, a greeting
  or thanks and has at least two content words is a statement (the write
  phase's rule, :mod:`harness.offline_model._writer`); with no turn-like line,
  the message's own sentences. Exact repeats count once; at most
  :data:`MAX_STATEMENTS`, the latest kept.
- **filling**: an array whose items carry text gets one element per statement
  (within ``minItems``/``maxItems``); an object gets its required properties
  and the optional ones it can fill; a string property named like text
  (``text``, ``content``, ``fact`` ...) gets the statement, or outside any
  array the model's ordinary prose answer; ``id``-like ones the element's
  index; title-like ones its first two salient words; list-of-words ones its
  search terms; an enum the value the statement's labels or words name, else
  the first; numbers the index within ``minimum``/``maximum``; booleans false;
  ``const`` and ``default`` as given; an array of enum options the message lists as
  ``[<option>] <description>`` lines gets the options its question overlaps
  (:mod:`harness.offline_model._choices`), best first (inside an element filled from a
  statement, the options that statement overlaps: the entries it updates). ``$ref`` (local), ``anyOf``/``oneOf``
  (first non-null branch), ``allOf`` (merged) and ``type`` lists are read.

What it cannot do: judge what matters (every statement becomes an element),
resolve pronouns, satisfy a ``pattern`` or ``format`` it does not recognise
(``date``/``date-time`` get a date the messages name, else the epoch), or
invent values a schema constrains beyond the above.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness.offline_model._choices import choose_options
from harness.offline_model._terms import analyze_question
from harness.offline_model._writer import MAX_SAVES, title_of

MAX_STATEMENTS = 3 * MAX_SAVES
"""At most this many statements fill an array (the latest kept)."""
_LABELLED = re.compile(r"^\s*([A-Za-z][\w .'-]{0,40}):\s+(\S.*)$")
_SENTENCES = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|\n+")
_SMALL_TALK = re.compile(r"^(hi|hello|hey|thanks|thank you|ok|okay|great|cool|sure|got it|morning|good (morning|evening))\b", re.I)
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?))?")
_TEXT_NAMES = ("text", "content", "memory", "fact", "statement", "note", "summary", "answer", "value", "body", "description",
               "message", "sentence", "data", "information", "detail")
_TITLE_NAMES = ("name", "title", "key", "topic", "subject", "label", "category")
_ROLES = frozenset({"", "user", "assistant", "system", "human", "ai", "tool"})
_WORD_LIST_NAMES = ("keys", "tags", "terms", "keywords", "labels", "topics", "categories")


def json_schema_of(response_format: Any) -> dict[str, Any] | None:
    """The schema a ``response_format`` asks for, or None (no format, ``text``, or ``json_object`` without a schema)."""
    if not isinstance(response_format, dict):
        return None
    inner = response_format.get("json_schema") if response_format.get("type") == "json_schema" else response_format
    schema = inner.get("schema") if isinstance(inner, dict) else None
    return schema if isinstance(schema, dict) else None


def _statements(text: str) -> list[tuple[tuple[str, ...], str]]:
    """(labels, sentence) of each statement made in ``text`` (see the module docstring)."""
    turns: list[tuple[tuple[str, ...], str]] = []
    for line in text.splitlines():
        labels: list[str] = []
        rest = line
        while (match := _LABELLED.match(rest)) and len(labels) < 3:
            labels.append(match.group(1).strip())
            rest = match.group(2)
        if labels:
            turns.append((tuple(labels), rest.strip()))
    if not turns:
        turns = [((), text)]
    found: dict[str, tuple[str, ...]] = {}
    for speakers, said in turns:
        for sentence in (s.strip() for s in _SENTENCES.split(said)):
            if (not sentence or sentence.endswith(("?", "\uff1f")) or _SMALL_TALK.match(sentence)
                    or len(analyze_question(sentence).concepts) < 2):
                continue
            found.pop(sentence, None)
            found[sentence] = speakers
    return [(speakers, sentence) for sentence, speakers in list(found.items())[-MAX_STATEMENTS:]]


class _Filler:
    """Fills one schema from the request's statements and prose answer."""

    def __init__(self, root: dict[str, Any], statements: list[tuple[tuple[str, ...], str]], prose: str, text: str) -> None:
        self.root, self.statements, self.prose, self.text = root, statements, prose, text
        dates = _DATE.findall(text)
        self.date = dates[-1][0] if dates else "1970-01-01"

    def resolve(self, schema: Any, depth: int = 0) -> dict[str, Any]:
        if not isinstance(schema, dict) or depth > 20:
            return {}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = self.root
            for part in ref[2:].split("/"):
                target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
            return self.resolve({**target, **{k: v for k, v in schema.items() if k != "$ref"}}, depth + 1)
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                chosen = next((b for b in branches if self.resolve(b, depth + 1).get("type") != "null"), branches[0])
                rest = {k: v for k, v in schema.items() if k != key}
                return self.resolve({**rest, **self.resolve(chosen, depth + 1)}, depth + 1)
        if isinstance(schema.get("allOf"), list):
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for branch in (self.resolve(p, depth + 1) for p in schema["allOf"]):
                merged["properties"] = {**merged.get("properties", {}), **branch.get("properties", {})}
                merged["required"] = [*merged.get("required", []), *branch.get("required", [])]
                merged.update({k: v for k, v in branch.items() if k not in ("properties", "required")})
            return merged
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"] or kind
            return {**schema, "type": kinds[0]}
        if kind is None and isinstance(schema.get("properties"), dict):
            return {**schema, "type": "object"}
        return schema

    def fill(self, schema: Any, name: str = "", index: int | None = None, depth: int = 0) -> Any:
        spec = self.resolve(schema)
        if "const" in spec:
            return spec["const"]
        kind = spec.get("type")
        statement = self.statements[index] if index is not None and index < len(self.statements) else None
        if isinstance(spec.get("enum"), list) and spec["enum"]:
            return self.choose(spec["enum"], statement)
        if kind == "object":
            return self.object(spec, index, depth)
        if kind == "array":
            return self.array(spec, name, index, depth)
        if "default" in spec and not self.is_text(name):
            return spec["default"]
        if kind in ("integer", "number"):
            value = max(index or 0, spec.get("minimum", 0) if isinstance(spec.get("minimum"), (int, float)) else 0)
            limit = spec.get("maximum")
            value = min(value, limit) if isinstance(limit, (int, float)) else value
            return int(value) if kind == "integer" else float(value)
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        return self.string(spec, name, index, statement)

    @staticmethod
    def is_text(name: str) -> bool:
        return name.lower() in _TEXT_NAMES or name.lower().endswith(("_text", "_content", "_fact"))

    def choose(self, values: list[Any], statement: tuple[tuple[str, ...], str] | None) -> Any:
        said = " ".join([*(statement[0] if statement else ()), statement[1] if statement else self.prose]).lower()
        named = [v for v in values if isinstance(v, str) and re.search(rf"\b{re.escape(v.lower())}\b", said)]
        return (named or values)[0]

    def object(self, spec: dict[str, Any], index: int | None, depth: int) -> dict[str, Any]:
        properties = _v if isinstance(_v := spec.get("properties"), dict) else {}
        required = [r for r in spec.get("required", []) if isinstance(r, str)] if isinstance(spec.get("required"), list) else []
        out: dict[str, Any] = {}
        for key, sub in properties.items():
            if depth > 8 and key not in required:
                continue
            value = self.fill(sub, key, index, depth + 1)
            if key in required or value not in (None, "", [], {}):
                out[key] = value
        return out

    def array(self, spec: dict[str, Any], name: str, index: int | None, depth: int) -> list[Any]:
        items = spec.get("items", {})
        low = spec.get("minItems", 0) if isinstance(spec.get("minItems"), int) else 0
        high = spec.get("maxItems") if isinstance(spec.get("maxItems"), int) else None
        item = self.resolve(items)
        about = self.statements[index][1] if index is not None and index < len(self.statements) else None
        chosen = choose_options(self.text, item["enum"], high, about) if isinstance(item.get("enum"), list) else None
        if chosen is not None:  # options the message describes: chosen by overlap with its question
            return chosen
        if name.lower() in _WORD_LIST_NAMES and item.get("type", "string") == "string":
            source = self.statements[index][1] if index is not None and index < len(self.statements) else self.prose
            values: list[Any] = list(analyze_question(source).search_terms[:8])
        elif index is None and self.carries_text(item):
            values = [self.fill(items, name, i, depth + 1) for i in range(len(self.statements))]
        else:
            values = []
        while len(values) < low:
            values.append(self.fill(items, name, index if index is not None else len(values), depth + 1))
        return values[:high] if high is not None else values

    def carries_text(self, item: dict[str, Any], depth: int = 0) -> bool:
        """Whether an array's element holds text (a string, or an object with a text-like string property)."""
        if item.get("type") == "string" and not item.get("enum"):
            return True
        properties = _v if isinstance(_v := item.get("properties"), dict) else {}
        return depth < 4 and any(self.is_text(k) and self.resolve(v).get("type") == "string" for k, v in properties.items())

    def string(self, spec: dict[str, Any], name: str, index: int | None, statement: tuple[tuple[str, ...], str] | None) -> str:
        lowered = name.lower()
        if spec.get("format") == "date-time":
            value = f"{self.date}T00:00:00Z"
        elif spec.get("format") == "date":
            value = self.date
        elif lowered == "id" or lowered.endswith("_id"):
            value = str(index or 0)
        elif lowered in _TITLE_NAMES:
            value = title_of(statement[1] if statement else self.prose) or (statement[1] if statement else self.prose)
        elif statement is not None:
            speaker = statement[0][-1] if statement[0] else ""
            value = statement[1] if speaker.lower() in _ROLES or not speaker else f"{speaker}: {statement[1]}"
        else:
            value = self.prose
        limit = spec.get("maxLength")
        value = value[:limit] if isinstance(limit, int) and limit >= 0 else value
        low = spec.get("minLength")
        return value.ljust(low, ".") if isinstance(low, int) and len(value) < low else value


def structured_reply(messages: list[dict[str, Any]], schema: dict[str, Any], prose: str) -> dict[str, Any]:
    """The assistant message whose content is a JSON value valid under ``schema``, filled from ``messages``.

    ``prose`` is the model's ordinary answer to the request, used for text outside any array.
    """
    last_user = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"), {})
    content = last_user.get("content")
    text = content if isinstance(content, str) else ""
    filler = _Filler(schema, _statements(text), prose, text)
    value = filler.fill(schema)
    return {"role": "assistant", "content": json.dumps(value, ensure_ascii=False)}
