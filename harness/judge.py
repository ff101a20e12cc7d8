"""A strict, arm-blind LLM judge for scenarios with ``expect.rubric``, cached on disk.

The judge sees the question, the rubric, the expected facts and the answer:
never the arm, the tool calls or the transcript. It is told to fail vague,
on-topic answers that do not state the specific fact (published memory
benchmarks with generous judges accept most of those). Temperature 0; the
verdict is JSON ``{"verdict": "pass"|"fail", "reason": "..."}``, parsed
robustly; an unparseable reply is a ``fail`` whose reason says so. Verdicts
are cached under ``cache_dir`` keyed by model, :data:`PROMPT_VERSION` and the
inputs, so rebuilding a report never pays twice.

:func:`calibrate` runs the judge on ``harness/judge_calibration.yaml``
(labelled answers, several vague-but-on-topic wrong ones) and reports its
false positive and false negative rates. litellm is imported only when a
real model is called.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

PROMPT_VERSION = "strict-v1"
CALIBRATION_FILE = Path(__file__).with_name("judge_calibration.yaml")
DEFAULT_CACHE_DIR = Path(".recall-eval-cache") / "judge"

Complete = Callable[[str, list[dict[str, str]]], str]
"""(model, messages) -> reply text; the default calls litellm."""

_SYSTEM = (
    "You grade one answer from an assistant that may remember earlier conversations. You are strict. "
    "PASS only if the answer explicitly states the specific expected fact(s) (or, when the rubric says the "
    "assistant should not know, clearly says it does not know without inventing details). "
    "FAIL answers that are vague, generic, hedged without the fact, on-topic but wrong, contradict the "
    "expected facts, or add invented specifics. Do not give credit for effort or plausibility. "
    'Reply with JSON only: {"verdict": "pass" or "fail", "reason": "<one sentence>"}.'
)


class JudgeError(Exception):
    """The judge model could not be called; the message names the model."""


class JudgeVerdict(BaseModel):
    """One verdict with what produced it."""

    model_config = ConfigDict(frozen=True)

    verdict: Literal["pass", "fail"]
    reason: str
    raw: str
    model: str
    prompt_version: str = PROMPT_VERSION
    cached: bool = False


@dataclass
class Judge:
    """A judge bound to a model and a cache folder; counts calls and cache hits."""

    model: str
    cache_dir: Path = DEFAULT_CACHE_DIR
    complete: Complete | None = None
    calls: int = 0
    cached: int = 0
    _memory: dict[str, JudgeVerdict] = field(default_factory=dict, repr=False)

    def __call__(self, question: str, rubric: str, expected: Sequence[str], answer: str) -> JudgeVerdict:
        messages = build_messages(question, rubric, expected, answer)
        key = _cache_key(self.model, messages)
        path = Path(self.cache_dir) / f"{key}.json"
        if key not in self._memory:
            cached = _read_cached(path)
            if cached is not None:
                self._memory[key] = cached
        if key in self._memory:
            self.cached += 1
            return self._memory[key].model_copy(update={"cached": True})
        raw = (self.complete or _litellm_complete)(self.model, messages)
        self.calls += 1
        verdict, reason = parse_verdict(raw)
        result = JudgeVerdict(verdict=verdict, reason=reason, raw=raw, model=self.model)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(result.model_dump_json(), encoding="utf-8")
        tmp.replace(path)
        self._memory[key] = result
        return result


def build_messages(question: str, rubric: str, expected: Sequence[str], answer: str) -> list[dict[str, str]]:
    """The judge prompt: no arm, no tools, no transcript."""
    facts = "\n".join(f"- {fact}" for fact in expected) or "- (see rubric)"
    user = (
        f"Question asked:\n{question}\n\nRubric:\n{rubric}\n\nExpected facts:\n{facts}\n\n"
        f"Answer to grade:\n<<<\n{answer}\n>>>"
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def _cache_key(model: str, messages: list[dict[str, str]]) -> str:
    blob = json.dumps({"model": model, "prompt_version": PROMPT_VERSION, "messages": messages}, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _read_cached(path: Path) -> JudgeVerdict | None:
    """The verdict cached at ``path``; None when missing or unreadable (a truncated write is asked again)."""
    try:
        return JudgeVerdict.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def parse_verdict(raw: str) -> tuple[Literal["pass", "fail"], str]:
    """Read ``{"verdict", "reason"}`` from a reply, tolerating code fences and prose around it.

    Anything that is not clearly a pass is a fail (strictness), with a reason
    saying the reply could not be read.
    """
    text = raw or ""
    for candidate in re.findall(r"\{.*?\}", text, flags=re.DOTALL) + [text]:
        try:
            data = json.loads(candidate)
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(data, dict) and str(data.get("verdict", "")).strip().lower() in ("pass", "fail"):
            verdict = str(data["verdict"]).strip().lower()
            return verdict, str(data.get("reason", "")).strip() or "(no reason given)"  # type: ignore[return-value]
    match = re.search(r'"?verdict"?\s*[:=]\s*"?(pass|fail)\b', text, flags=re.IGNORECASE)
    if match:
        return match.group(1).lower(), "verdict read from a malformed reply"  # type: ignore[return-value]
    return "fail", f"unparseable judge reply: {text[:200]!r}"


def _litellm_complete(model: str, messages: list[dict[str, str]]) -> str:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    try:
        response = litellm.completion(model=model, messages=messages, temperature=0, max_tokens=300)
    except Exception as exc:  # provider errors come in many classes
        raise JudgeError(f"judge model {model!r} failed: {type(exc).__name__}: {exc}") from None
    return response.choices[0].message.content or ""


@dataclass(frozen=True)
class CalibrationResult:
    """Judge error rates on the labelled calibration set."""

    false_positive_rate: float | None
    false_negative_rate: float | None
    n: int
    mistakes: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"false_positive_rate": self.false_positive_rate, "false_negative_rate": self.false_negative_rate,
                "n": self.n}


def load_calibration(path: Path = CALIBRATION_FILE) -> list[dict[str, Any]]:
    """Labelled items: question, rubric, expected (list), answer, label ('pass'|'fail')."""
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    items = data.get("items", []) if isinstance(data, dict) else []
    for index, item in enumerate(items):
        if item.get("label") not in ("pass", "fail"):
            raise JudgeError(f"{path}: items[{index}].label is {item.get('label')!r}; use 'pass' or 'fail'")
    return items


def calibrate(judge: Judge, path: Path = CALIBRATION_FILE) -> CalibrationResult:
    """Run the judge on the calibration set; FP rate = passes among label-fail items, FN the reverse."""
    items = load_calibration(path)
    fp = fn = negatives = positives = 0
    mistakes = []
    for item in items:
        got = judge(item["question"], item["rubric"], item.get("expected", []), item["answer"])
        if item["label"] == "fail":
            negatives += 1
            fp += got.verdict == "pass"
        else:
            positives += 1
            fn += got.verdict == "fail"
        if got.verdict != item["label"]:
            mistakes.append({"id": item.get("id"), "label": item["label"], "verdict": got.verdict,
                             "reason": got.reason})
    return CalibrationResult(
        false_positive_rate=fp / negatives if negatives else None,
        false_negative_rate=fn / positives if positives else None,
        n=len(items),
        mistakes=mistakes,
    )
