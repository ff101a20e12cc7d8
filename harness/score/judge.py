"""A strict, arm-blind LLM judge for scenarios with ``expect.rubric``, cached on disk.

The judge sees the question, the rubric, every positive check of the scenario
(``must_contain_all``, ``must_contain_any``, ``must_contain_groups`` and
``must_match``, regexes shown as regexes; see :func:`expected_facts`) and the answer: never the arm, the
tool calls or the transcript. It is told to fail vague,
on-topic answers that do not state the specific fact (published memory
benchmarks with generous judges accept most of those). Temperature 0; the
verdict is JSON ``{"verdict": "pass"|"fail", "reason": "..."}``, parsed
robustly; an unparseable reply is a ``fail`` whose reason says so. Verdicts
are cached under ``cache_dir`` keyed by model, :data:`PROMPT_VERSION` and the
inputs, so rebuilding a report never pays twice.

:func:`calibrate` runs the judge on ``harness/score/judge_calibration.yaml``
(labelled answers, several vague-but-on-topic wrong ones) and reports its
false positive and false negative rates and Cohen's kappa. The grounding judge
(:mod:`harness.score.grounding`) shares the cache, the litellm call and the
calibration statistics. litellm is imported only when a real model is called.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from harness.atomic import write_atomic
from harness.records import load_model, model_json, sendable
from harness.score.judge_calls import JudgeReply, judge_call, reply_of

if TYPE_CHECKING:
    from harness.scenarios import AnswerCheck
    from harness.score.judge_presets import JudgePrompt

PROMPT_VERSION = "strict-v2"
CALIBRATION_FILE = Path(__file__).with_name("judge_calibration.yaml")
DEFAULT_CACHE_DIR = Path(".recall-eval-cache") / "judge"
_MAX_TOKENS = 300

Complete = Callable[[str, list[dict[str, str]]], str]
"""(model, messages) -> reply text; the default calls litellm."""

_SYSTEM = (
    "You grade one answer from an assistant that may remember earlier conversations. You are strict. "
    "PASS only if the answer explicitly states the specific expected fact(s) (or, when the rubric says the "
    "assistant should not know, clearly says it does not know without inventing details). "
    "FAIL answers that are vague, generic, hedged without the fact, on-topic but wrong, contradict the "
    "expected facts, or add invented specifics. Do not give credit for effort or plausibility. "
    "Expected facts are exact strings (all of them, or at least one of a list) or regular expressions "
    "(case-insensitive) that a correct answer states or matches; judge what the answer means, not its wording. "
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


_Cached = TypeVar("_Cached", bound=BaseModel)


@dataclass
class JudgeModel:
    """What every judge is bound to: a model, a cache folder, an endpoint; counts calls and cache hits.

    ``api_base`` points litellm at an OpenAI-compatible server (a local
    llama.cpp or vLLM); ``complete`` replaces litellm altogether (tests).
    Every call goes through :func:`harness.score.judge_calls.judge_call`: reserved against
    ``budget`` (a :class:`harness.run.budget.Budget`, ``run --max-cost-usd``), counted and priced in
    ``usage`` under ``phase`` (grading or calibration).
    """

    model: str
    cache_dir: Path = DEFAULT_CACHE_DIR
    complete: Complete | None = None
    api_base: str | None = None
    calls: int = 0
    cached: int = 0
    budget: Any = None
    phase: str = "grading"
    usage: dict[str, Any] = field(default_factory=dict)
    #: Each try's limit in seconds (the run's ``--timeout``; None: litellm's own) and the tries after the first
    #: on a transient error (the run's ``--retries``): :mod:`harness.score.judge_watch`.
    timeout_s: float | None = None
    retries: int = 0

    def litellm(self, max_tokens: int = 0) -> Complete:
        """The completer of this judge's litellm calls: its endpoint, ``max_tokens``, timeout and retries."""
        return partial(litellm_complete, api_base=self.api_base, max_tokens=max_tokens or _MAX_TOKENS,
                       timeout_s=self.timeout_s, retries=self.retries)


@dataclass
class Judge(JudgeModel):
    """The rubric judge: pass or fail on a rubric and the expected facts.

    ``prompt`` (a benchmark preset or a ``--judge-prompt`` file,
    :mod:`harness.score.judge_presets`) replaces the strict prompt: the judge
    then sees the question, the reference answer (``gold``), the rubric, the
    category and whether the question is an abstention probe, and its reply
    is read by the prompt's own reader. Verdicts are cached per prompt version.
    """

    prompt: JudgePrompt | None = None
    _memory: dict[str, JudgeVerdict] = field(default_factory=dict, repr=False)

    @property
    def prompt_version(self) -> str:
        return self.prompt.version if self.prompt is not None else PROMPT_VERSION

    def describe_prompt(self) -> dict[str, str | None]:
        """Which prompt grades: ``{"name", "version", "sha256", "file"}`` (the strict prompt's text hashed too)."""
        if self.prompt is not None:
            return self.prompt.describe()
        return {"name": "strict", "version": PROMPT_VERSION,
                "sha256": hashlib.sha256(_SYSTEM.encode("utf-8")).hexdigest(), "file": None}

    def __call__(self, question: str, rubric: str, expected: Sequence[str], answer: str, *, gold: str | None = None,
                 category: str = "", abstain: bool = False) -> JudgeVerdict:
        parse: Callable[[str], tuple[Literal["pass", "fail"], str]] = parse_verdict
        if self.prompt is None:
            messages = build_messages(question, rubric, expected, answer)
        else:
            from harness.score.judge_presets import JudgeCase

            reference = gold or "; ".join(expected) or rubric
            messages = self.prompt.messages(JudgeCase(question=question, gold=reference, answer=answer,
                                                      rubric=rubric, category=category, abstain=abstain))
            parse = self.prompt.parse
        key = cache_key(self.model, self.prompt_version, messages)
        found = recall_cached(self._memory, Path(self.cache_dir), key, JudgeVerdict)
        if found is not None:
            self.cached += 1
            return found
        raw = judge_call(self, messages, self.complete or self.litellm(_MAX_TOKENS), max_tokens=_MAX_TOKENS)
        self.calls += 1
        verdict, reason = parse(raw)
        result = JudgeVerdict(verdict=verdict, reason=reason, raw=raw, model=self.model,
                              prompt_version=self.prompt_version)
        store_cached(self._memory, Path(self.cache_dir), key, result)
        return result


def expected_facts(check: AnswerCheck | None, adherence: AnswerCheck | None = None) -> list[str]:
    """Every positive check as a line for the judge: strings quoted, regexes as ``/.../``.

    Example:
        >>> from harness.scenarios.models import AnswerCheck
        >>> expected_facts(AnswerCheck(must_contain_all=["sqlc"], must_match=["indent_size *= *2"]))
        ['states all of: "sqlc"', 'matches the regular expression /indent_size *= *2/ (case-insensitive)']
        >>> expected_facts(AnswerCheck(must_contain_groups=[["Paris"], ["Rome", "Roma"]]))
        ['states every one of these, in any order (one wording per bracket): ("Paris"), ("Rome" | "Roma")']
    """
    lines: list[str] = []
    for prefix, part in (("", check), ("its output ", adherence)):
        if part is None:
            continue
        if part.must_contain_all:
            lines.append(f"{prefix}states all of: " + ", ".join(json.dumps(s, ensure_ascii=False)
                                                                  for s in part.must_contain_all))
        if part.must_contain_any:
            lines.append(f"{prefix}states at least one of: " + " | ".join(json.dumps(s, ensure_ascii=False)
                                                                           for s in part.must_contain_any))
        if part.must_contain_groups:
            groups = ", ".join("(" + " | ".join(json.dumps(s, ensure_ascii=False) for s in group) + ")"
                               for group in part.must_contain_groups)
            lines.append(f"{prefix}states every one of these, in any order (one wording per bracket): {groups}")
        lines += [f"{prefix}matches the regular expression /{p}/ (case-insensitive)" for p in part.must_match]
    return lines


def build_messages(question: str, rubric: str, expected: Sequence[str], answer: str) -> list[dict[str, str]]:
    """The judge prompt: no arm, no tools, no transcript."""
    facts = "\n".join(f"- {fact}" for fact in expected) or "- (see rubric)"
    user = (
        f"Question asked:\n{question}\n\nRubric:\n{rubric}\n\nExpected facts:\n{facts}\n\n"
        f"Answer to grade:\n<<<\n{answer}\n>>>"
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def cache_key(model: str, prompt_version: str, messages: list[dict[str, str]]) -> str:
    """The cache file name of one judge call: model, prompt version and the exact messages."""
    blob = json.dumps({"model": model, "prompt_version": prompt_version, "messages": messages}, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def recall_cached(memory: dict[str, Any], cache_dir: Path, key: str, cls: type[_Cached]) -> _Cached | None:
    """The cached result for ``key`` (marked ``cached``), from memory or disk; None when missing or unreadable.

    A truncated or corrupt file is treated as missing: the judge is asked again and the file rewritten.
    """
    if key not in memory:
        try:
            memory[key] = load_model(cls, (cache_dir / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
    return memory[key].model_copy(update={"cached": True})


def store_cached(memory: dict[str, Any], cache_dir: Path, key: str, result: BaseModel) -> None:
    """Write ``result`` atomically (temp file, then rename) so a crash never leaves half a verdict."""
    path = cache_dir / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, model_json(result))
    memory[key] = result


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
            reason = data.get("reason")
            return verdict, ("" if reason is None else str(reason).strip()) or "(no reason given)"  # type: ignore[return-value]
    match = re.search(r'"?verdict"?\s*[:=]\s*"?(pass|fail)\b', text, flags=re.IGNORECASE)
    if match:
        return match.group(1).lower(), "verdict read from a malformed reply"  # type: ignore[return-value]
    return "fail", f"unparseable judge reply: {text[:200]!r}"


def litellm_complete(model: str, messages: list[dict[str, str]], *, api_base: str | None = None,
                     max_tokens: int = _MAX_TOKENS, timeout_s: float | None = None, retries: int = 0) -> JudgeReply:
    """One temperature-0 completion through litellm, with its usage and cost: each try bounded by ``timeout_s``,
    transient errors tried ``retries`` more times (:func:`harness.score.judge_watch.watched_call`); an error that
    remains becomes a :class:`JudgeError`."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from harness.score.judge_watch import watched_call

    extra: dict[str, Any] = {"api_base": api_base} if api_base else {}
    if timeout_s:
        extra["timeout"] = timeout_s

    def attempt() -> Any:  # the SDK's own retries off: the tries are counted here
        return litellm.completion(model=model, messages=sendable(messages), temperature=0, max_tokens=max_tokens,
                                  max_retries=0, **extra)

    try:
        response = watched_call(attempt, retries=retries, timeout_s=timeout_s)
    except Exception as exc:  # provider errors come in many classes
        tries = f" after {retries + 1} tries" if retries else ""
        limit = f" (--timeout {timeout_s:g} s a try)" if timeout_s else ""
        raise JudgeError(f"judge model {model!r} failed{tries}{limit}: {type(exc).__name__}: {exc}") from None
    return reply_of(response, model, messages)


def cohen_kappa(labels: Sequence[bool], predictions: Sequence[bool]) -> float | None:
    """Cohen's kappa of two binary raters: agreement beyond what their base rates give by chance.

    ``(p_o - p_e) / (1 - p_e)``, ``p_e`` the chance agreement from each
    rater's share of True. None when undefined (no items, or both raters
    always give the same single label, so ``p_e`` is 1).

    Example:
        >>> cohen_kappa([True, True, False, False], [True, False, False, False])
        0.5
    """
    n = len(labels)
    if n == 0 or n != len(predictions):
        return None
    observed = sum(a == b for a, b in zip(labels, predictions, strict=True)) / n
    p_label, p_pred = sum(labels) / n, sum(predictions) / n
    chance = p_label * p_pred + (1 - p_label) * (1 - p_pred)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1 - chance)


@dataclass(frozen=True)
class CalibrationResult:
    """Judge error rates on a labelled calibration set.

    For the rubric judge a positive is a ``pass``; for the grounding judge a
    positive is a finding (``ungrounded``). FP rate: positives given to
    label-negative items; FN rate: the reverse.
    """

    false_positive_rate: float | None
    false_negative_rate: float | None
    n: int
    mistakes: list[dict[str, Any]]
    cohen_kappa: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"false_positive_rate": self.false_positive_rate, "false_negative_rate": self.false_negative_rate,
                "cohen_kappa": self.cohen_kappa, "n": self.n}


def rates(labels: Sequence[bool], predictions: Sequence[bool]) -> tuple[float | None, float | None, float | None]:
    """(FP rate, FN rate, Cohen's kappa) of binary predictions against labels (True = positive)."""
    pairs = list(zip(labels, predictions, strict=True))
    negatives = [p for label, p in pairs if not label]
    positives = [p for label, p in pairs if label]
    fp = sum(negatives) / len(negatives) if negatives else None
    fn = sum(not p for p in positives) / len(positives) if positives else None
    return fp, fn, cohen_kappa(labels, predictions)


def load_labelled(path: Path, labels: tuple[str, str]) -> list[dict[str, Any]]:
    """The ``items`` of a calibration file, each with a ``label`` from ``labels`` (JudgeError naming the item if not).

    Read as scenario files are (:func:`harness.scenarios.documents.read_yaml`): a YAML alias, nesting
    deeper than its ``MAX_DEPTH`` or a duplicate key is a one-line JudgeError naming the file and line.
    """
    from harness.scenarios import read_yaml

    data, problems = read_yaml(Path(path))
    if problems:
        raise JudgeError(str(problems[0]))
    items = data.get("items", []) if isinstance(data, dict) else []
    for index, item in enumerate(items):
        if item.get("label") not in labels:
            raise JudgeError(f"{path}: items[{index}].label is {item.get('label')!r}; use {labels[0]!r} or {labels[1]!r}")
    return items


def load_calibration(path: Path = CALIBRATION_FILE) -> list[dict[str, Any]]:
    """Labelled items: question, rubric, expected (list), answer, label ('pass'|'fail')."""
    return load_labelled(path, ("pass", "fail"))


def calibrate(judge: Judge, path: Path = CALIBRATION_FILE) -> CalibrationResult:
    """Run the judge on the calibration set; FP rate = passes among label-fail items, FN the reverse."""
    items = load_calibration(path)
    labels, predictions, mistakes = [], [], []
    for item in items:
        got = judge(item["question"], item["rubric"], item.get("expected", []), item["answer"])
        labels.append(item["label"] == "pass")
        predictions.append(got.verdict == "pass")
        if got.verdict != item["label"]:
            mistakes.append({"id": item.get("id"), "label": item["label"], "verdict": got.verdict,
                             "reason": got.reason})
    fp, fn, kappa = rates(labels, predictions)
    return CalibrationResult(false_positive_rate=fp, false_negative_rate=fn, n=len(items), mistakes=mistakes,
                             cohen_kappa=kappa)
