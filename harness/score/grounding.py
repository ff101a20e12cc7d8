"""The grounding judge: which specifics of an answer does nothing the sample could see support?

Canaries only catch the traps a scenario author foresaw; a model that invents
a CI system or a customer for an unanswerable question trips none of them.
With ``--judge-model``, every answered sample (not error, not abstained) gets
one call: the judge sees the final answer and exactly what the sample could
see (its messages: system prompt with any pasted sessions or memory document,
history, the question, the tool calls and their results) and lists the
specific assertions about the user, their projects, people, systems or
decisions that none of it supports. It never sees the arm's name, the
scenario or its answer key. Each listed specific becomes an ``ungrounded``
unsupported claim (:func:`harness.score.scoring.score_sample`).

The reply is JSON ``{"unsupported": [{"claim": "...", "why": "..."}]}``,
read robustly (code fences, prose around it, a bare list, plain strings); a
reply with no such JSON is recorded as ``malformed`` with the reason and adds
no claim, never a traceback. Temperature 0; results are cached under the
judge's cache folder keyed by model, :data:`PROMPT_VERSION` and the prompt,
like the rubric judge's (:mod:`harness.score.judge`).

:func:`calibrate` runs the judge on ``harness/score/grounding_calibration.yaml``
(66 labelled answers with their context: a third plausible-but-unsupported
specifics, a third supported, a third mixed or edge cases) and reports its
false positive rate, false negative rate and Cohen's kappa, a positive being
a finding of an unsupported specific.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.score.judge import (
    CalibrationResult,
    JudgeError,
    JudgeModel,
    cache_key,
    load_labelled,
    rates,
    recall_cached,
    store_cached,
)
from harness.score.judge_calls import judge_call

PROMPT_VERSION = "grounding-v1"
CALIBRATION_FILE = Path(__file__).with_name("grounding_calibration.yaml")
_MAX_TOKENS = 600
_CLAIM_KEYS = ("claim", "specific", "text", "statement")

_SYSTEM = (
    "You check one answer from an assistant for unsupported claims. You see everything the assistant could "
    "see when it answered (its instructions, the conversation, any pasted earlier conversations or memory "
    "file, its tool calls and their results) and then its final answer. List every specific assertion in the "
    "answer about the user, their projects, colleagues, customers, systems, tools, settings, numbers, dates, "
    "decisions or past conversations that nothing visible supports: invented names, versions, values, "
    "reasons or events; a value stated as current when the visible context says it changed; details added to a "
    "supported fact. Be strict: plausible is not supported. Do NOT list: restatements or paraphrases of "
    "visible content, simple arithmetic or date reasoning from visible facts, general knowledge or advice that "
    "is not a claim about the user or their work, code or examples the user asked for, or saying it does not "
    "know. Reply with JSON only: "
    '{"unsupported": [{"claim": "<the unsupported specific, quoted or short>", "why": "<one sentence>"}]} '
    '- an empty list when every specific is supported.'
)


class GroundingVerdict(BaseModel):
    """One grounding judgement with what produced it."""

    model_config = ConfigDict(frozen=True)

    status: Literal["ok", "malformed"]
    unsupported: list[str] = Field(default_factory=list, description="Unsupported specifics, as the judge wrote them")
    error: str | None = Field(None, description="Why a malformed reply could not be read")
    raw: str
    model: str
    prompt_version: str = PROMPT_VERSION
    cached: bool = False


def visible_context(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """What a sample could see, from its recorded messages: all but the final answer, tool calls spelled out.

    The final answer is the last message when it is an assistant message
    (also when the loop stopped at its tool-round limit: that message's tool
    calls never ran, so nothing of it was seen). Each returned message is
    ``{"role", "content"}``; an assistant's tool calls become
    ``called NAME(ARGUMENTS)`` lines.
    """
    items = list(messages)
    if items and items[-1].get("role") == "assistant":
        items = items[:-1]
    context: list[dict[str, str]] = []
    for message in items:
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False) if content else ""
        calls = [f"called {call.get('function', {}).get('name', '?')}({call.get('function', {}).get('arguments', '')})"
                 for call in message.get("tool_calls") or []]
        context.append({"role": str(message.get("role", "?")), "content": "\n".join([text, *calls]).strip()})
    return context


def build_messages(context: Sequence[Mapping[str, str]], answer: str) -> list[dict[str, str]]:
    """The grounding prompt: the visible context, then the answer; no arm, no scenario, no answer key."""
    shown = "\n\n".join(f"[{m.get('role', '?')}]\n{m.get('content', '')}" for m in context) or "(nothing)"
    user = (f"Everything the assistant could see:\n<<<CONTEXT\n{shown}\nCONTEXT>>>\n\n"
            f"The assistant's final answer:\n<<<ANSWER\n{answer}\nANSWER>>>")
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def _json_values(text: str) -> list[Any]:
    """Every JSON object or array that starts somewhere in ``text``, outermost first."""
    decoder = json.JSONDecoder()
    values, index = [], 0
    while index < len(text):
        starts = [i for i in (text.find("{", index), text.find("[", index)) if i != -1]
        if not starts:
            break
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            index = start + 1
            continue
        values.append(value)
        index = end
    return values


def _claim_text(item: Any) -> str | None:
    if isinstance(item, str):
        return item.strip() or None
    if isinstance(item, Mapping):
        for key in _CLAIM_KEYS:
            if isinstance(item.get(key), str) and item[key].strip():
                return item[key].strip()
    return None


def parse_findings(raw: str) -> tuple[list[str] | None, str | None]:
    """(unsupported specifics, None) from a reply, or (None, why) when it holds no readable list.

    Accepts ``{"unsupported": [...]}`` (items strings or objects with
    ``claim``), a bare JSON list, code fences and prose around either.
    """
    text = raw or ""
    for value in _json_values(text):
        found = value.get("unsupported") if isinstance(value, Mapping) else value
        if isinstance(found, list):
            claims = [_claim_text(item) for item in found]
            if all(claim is not None for claim in claims):
                return list(dict.fromkeys(c for c in claims if c)), None
    return None, f"no JSON list of unsupported claims in the reply: {text[:200]!r}"


@dataclass
class GroundingJudge(JudgeModel):
    """The grounding judge (see :class:`harness.score.judge.JudgeModel`); also counts malformed replies."""

    malformed: int = 0
    _memory: dict[str, GroundingVerdict] = field(default_factory=dict, repr=False)

    def __call__(self, context: Sequence[Mapping[str, str]], answer: str) -> GroundingVerdict:
        messages = build_messages(context, answer)
        key = cache_key(self.model, PROMPT_VERSION, messages)
        found = recall_cached(self._memory, Path(self.cache_dir), key, GroundingVerdict)
        if found is None:
            complete = self.complete or self.litellm(_MAX_TOKENS)
            raw = judge_call(self, messages, complete, max_tokens=_MAX_TOKENS)
            self.calls += 1
            claims, error = parse_findings(raw)
            found = GroundingVerdict(status="ok" if claims is not None else "malformed", unsupported=claims or [],
                                     error=error, raw=raw, model=self.model)
            store_cached(self._memory, Path(self.cache_dir), key, found)
        else:
            self.cached += 1
        self.malformed += found.status == "malformed"
        return found

    def summary(self) -> dict[str, Any]:
        """Counts for ``summary.json``: model, calls, cached, malformed."""
        return {"model": self.model, "calls": self.calls, "cached": self.cached, "malformed": self.malformed}


def load_calibration(path: Path = CALIBRATION_FILE) -> list[dict[str, Any]]:
    """Labelled items: id, group, context (messages), answer, label ('grounded'|'ungrounded'), unsupported."""
    items = load_labelled(path, ("grounded", "ungrounded"))
    for index, item in enumerate(items):
        if not isinstance(item.get("context"), list) or not isinstance(item.get("answer"), str):
            raise JudgeError(f"{path}: items[{index}] ({item.get('id')!r}) needs a context list and an answer string")
    return items


def calibrate(judge: GroundingJudge, path: Path = CALIBRATION_FILE) -> CalibrationResult:
    """Run the judge on the calibration set; a positive is a finding (label ``ungrounded``).

    A malformed reply counts as no finding, as in scoring, and is named in ``mistakes``.
    """
    labels, predictions, mistakes = [], [], []
    for item in load_calibration(path):
        got = judge(item["context"], item["answer"])
        flagged = got.status == "ok" and bool(got.unsupported)
        labels.append(item["label"] == "ungrounded")
        predictions.append(flagged)
        if flagged != labels[-1] or got.status != "ok":
            mistakes.append({"id": item.get("id"), "label": item["label"], "found": got.unsupported,
                             "status": got.status})
    fp, fn, kappa = rates(labels, predictions)
    return CalibrationResult(false_positive_rate=fp, false_negative_rate=fn, n=len(labels), mistakes=mistakes,
                             cohen_kappa=kappa)
