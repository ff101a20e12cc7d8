"""Judge prompts that follow the published benchmarks' grading protocols, and prompts read from a file.

A :class:`JudgePrompt` turns one :class:`JudgeCase` (question, reference
answer, rubric, category, whether it is an abstention question, the answer)
into the judge's messages and reads the judge's reply back as pass or fail.

* ``locomo`` (``--judge-preset locomo``): LoCoMo's LLM-judge protocol as the
  mem0 paper runs it: the judge sees the question, the gold answer and the
  generated answer and labels it ``CORRECT`` or ``WRONG``, generous about
  wording and date formats. Adversarial (abstention) questions are correct
  when the answer says the conversation does not tell.
* ``longmemeval`` (``--judge-preset longmemeval``): LongMemEval's protocol:
  question, correct answer and response, a ``yes``/``no`` reply, with the
  instruction depending on the question type: temporal reasoning forgives
  an off-by-one in counts of days, weeks or months; knowledge-update accepts
  the updated answer even when the old one is mentioned too; single-session
  preference is graded against the rubric of what the user would want;
  abstention questions pass when the response says it cannot answer.
* ``--judge-prompt FILE``: an official prompt used verbatim, one text for
  every question. Placeholders: ``{question}``, ``{gold}`` (also
  ``{gold_answer}``, ``{correct_answer}``, ``{answer_key}``), ``{answer}``
  (also ``{generated_answer}``, ``{response}``), ``{rubric}``, ``{category}``;
  or three bare ``{}`` filled with question, gold and answer in that order
  (LongMemEval's templates). Any other brace is left as written. The reply
  is read as JSON ``verdict`` pass/fail or ``label`` CORRECT/WRONG, else by
  its first yes/no/correct/wrong/pass/fail word.

The preset texts are our own words, written from the papers' descriptions of
their protocols. Every prompt has a ``version`` that names it in the judge
cache key and the outputs, and a SHA-256 of its text(s), so grades under two
prompts never mix and a report says which prompt graded it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PRESETS: tuple[str, ...] = ("locomo", "longmemeval")
Verdict = Literal["pass", "fail"]


@dataclass(frozen=True)
class JudgeCase:
    """What a protocol judge may see of one sample: never the arm, the tools or the transcript."""

    question: str
    gold: str
    answer: str
    rubric: str = ""
    category: str = ""
    abstain: bool = False


@dataclass(frozen=True)
class JudgePrompt:
    """A named prompt: messages for a case, and a reader of the reply."""

    name: str
    version: str
    sha256: str
    build: Callable[[JudgeCase], list[dict[str, str]]]
    parse: Callable[[str], tuple[Verdict, str]]
    source: str | None = None

    def messages(self, case: JudgeCase) -> list[dict[str, str]]:
        return self.build(case)

    def describe(self) -> dict[str, str | None]:
        """The ``prompt`` entry of ``summary.json``'s ``judge`` block."""
        return {"name": self.name, "version": self.version, "sha256": self.sha256, "file": self.source}


def _sha(*texts: str) -> str:
    return hashlib.sha256("\n\x00\n".join(texts).encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- reading replies

_WORDS: dict[str, Verdict] = {"yes": "pass", "correct": "pass", "pass": "pass",
                              "no": "fail", "wrong": "fail", "incorrect": "fail", "fail": "fail"}
_FIRST_WORD_RE = re.compile(r"[A-Za-z]+")


def read_reply(raw: str) -> tuple[Verdict, str]:
    """Pass or fail from a protocol judge's reply; anything unreadable is a fail that says so.

    Example:
        >>> read_reply('{"label": "CORRECT", "reason": "same date"}'), read_reply("Yes."), read_reply("No")[0]
        (('pass', 'same date'), ('pass', 'yes'), 'fail')
    """
    text = raw or ""
    for candidate in re.findall(r"\{.*?\}", text, flags=re.DOTALL):
        try:
            data = json.loads(candidate)
        except (json.JSONDecodeError, TypeError):
            continue
        if not isinstance(data, dict):
            continue
        for key in ("verdict", "label"):
            word = str(data.get(key, "")).strip().lower()
            if word in _WORDS:
                return _WORDS[word], str(data.get("reason") or data.get("reasoning") or "").strip() or word
    match = _FIRST_WORD_RE.search(text)
    if match and match.group(0).lower() in _WORDS:
        return _WORDS[match.group(0).lower()], match.group(0).lower()
    labelled = re.search(r"\b(CORRECT|WRONG)\b", text)
    if labelled:
        return _WORDS[labelled.group(1).lower()], f"label {labelled.group(1)} read from the reply"
    return "fail", f"unparseable judge reply: {text[:200]!r}"


# ---------------------------------------------------------------- locomo

_LOCOMO_SYSTEM = (
    "You grade answers to questions about a long conversation between two people. You are given the question, "
    "the gold answer and an answer to grade, and you label the answer CORRECT or WRONG. Be generous about "
    "wording: an answer that refers to the same fact, thing or event as the gold answer is CORRECT even when "
    "it is longer, phrased differently or adds context. For questions about time, an answer naming the same "
    "date, month, year or period in another format or as a relative expression that resolves to it is "
    "CORRECT. An answer that names a different fact, or none, is WRONG. "
    'Reply with JSON only: {"label": "CORRECT" or "WRONG", "reason": "<one sentence>"}.'
)
_LOCOMO_ABSTAIN = (
    "This question asks about something the conversation never says of the person asked about. The answer "
    "is CORRECT only if it says the conversation does not mention it (or that it cannot tell); it is WRONG "
    "if it offers an answer."
)


def _locomo_messages(case: JudgeCase) -> list[dict[str, str]]:
    gold = _LOCOMO_ABSTAIN if case.abstain else f"Gold answer: {case.gold}"
    user = f"Question: {case.question}\n{gold}\nAnswer to grade: {case.answer}"
    return [{"role": "system", "content": _LOCOMO_SYSTEM}, {"role": "user", "content": user}]


# ---------------------------------------------------------------- longmemeval

_LME_BASE = (
    "You check whether a chat assistant's response answers a question about the user's earlier conversations "
    "correctly. Reply yes if the response states the correct answer or something equivalent to it, or if it "
    "works through the steps and arrives at the correct answer. Reply no if the response gives a different "
    "answer or only part of the required answer."
)
_LME_TYPE_RULES: dict[str, str] = {
    "temporal": (
        " The question involves time: do not hold an off-by-one difference in a count of days, weeks or months "
        "against the response (for example 18 days where 19 is expected is still correct)."),
    "knowledge_update": (
        " The user's information changed over time and the correct answer is the latest one: a response that "
        "also mentions an earlier value is still correct as long as it gives the updated value as the current "
        "answer."),
}
_LME_PREFERENCE = (
    "You check whether a chat assistant's response suits what the user wants, given what the user said about "
    "their preferences in earlier conversations. You are given a rubric describing the response the user "
    "would want. Reply yes if the response follows the rubric and uses the user's personal information "
    "correctly; it does not need to cover every point of the rubric. Reply no otherwise."
)
_LME_ABSTAIN = (
    "The question cannot be answered from the user's earlier conversations: the information was never given "
    "or the question assumes something that did not happen. Reply yes if the response says it cannot answer, "
    "that it does not know or that the information is missing. Reply no if it answers anyway."
)
_LME_FORMAT = ' Reply with JSON only: {"label": "yes" or "no", "reason": "<one sentence>"}.'


def _lme_system(case: JudgeCase) -> str:
    if case.abstain:
        return _LME_ABSTAIN
    if case.category == "single_session_preference":
        return _LME_PREFERENCE
    return _LME_BASE + _LME_TYPE_RULES.get(case.category, "")


def _lme_messages(case: JudgeCase) -> list[dict[str, str]]:
    if case.abstain:
        reference = f"Explanation of why it cannot be answered: {case.gold or case.rubric}"
    elif case.category == "single_session_preference":
        reference = f"Rubric: {case.rubric or case.gold}"
    else:
        reference = f"Correct answer: {case.gold}"
    user = f"Question: {case.question}\n\n{reference}\n\nResponse: {case.answer}\n\nIs the response correct?"
    return [{"role": "system", "content": _lme_system(case) + _LME_FORMAT}, {"role": "user", "content": user}]


def _lme_read(raw: str) -> tuple[Verdict, str]:
    return read_reply(raw)


_LME_TEXTS = (_LME_BASE, *_LME_TYPE_RULES.values(), _LME_PREFERENCE, _LME_ABSTAIN, _LME_FORMAT)


def preset(name: str) -> JudgePrompt:
    """The named protocol prompt (:data:`PRESETS`); ValueError naming the choices for another name."""
    if name == "locomo":
        return JudgePrompt("locomo", "locomo-v1", _sha(_LOCOMO_SYSTEM, _LOCOMO_ABSTAIN), _locomo_messages, read_reply)
    if name == "longmemeval":
        return JudgePrompt("longmemeval", "longmemeval-v1", _sha(*_LME_TEXTS), _lme_messages, _lme_read)
    raise ValueError(f"--judge-preset {name!r} is not a preset; use one of {', '.join(PRESETS)}")


# ---------------------------------------------------------------- a prompt file

_NAMED = {"question": "question", "gold": "gold", "gold_answer": "gold", "correct_answer": "gold",
          "answer_key": "gold", "answer": "answer", "generated_answer": "answer", "response": "answer",
          "rubric": "rubric", "category": "category"}
_PLACEHOLDER_RE = re.compile(r"\{(" + "|".join(_NAMED) + r")?\}")
_POSITIONAL = ("question", "gold", "answer")


def fill_template(template: str, case: JudgeCase) -> str:
    """The template with its placeholders filled (see the module docstring); other braces untouched.

    Example:
        >>> fill_template('Q: {} A: {} R: {} {"label": "CORRECT"}', JudgeCase("q?", "Paris", "paris"))
        'Q: q? A: Paris R: paris {"label": "CORRECT"}'
    """
    values = {"question": case.question, "gold": case.gold, "answer": case.answer, "rubric": case.rubric,
              "category": case.category}
    position = iter(_POSITIONAL)

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            field = next(position, None)
            return match.group(0) if field is None else values[field]
        return values[_NAMED[name]]

    return _PLACEHOLDER_RE.sub(fill, template)


class JudgePromptError(ValueError):
    """A ``--judge-prompt`` file cannot be used; the message names the file and the fix."""


def from_file(path: Path) -> JudgePrompt:
    """A prompt read verbatim from ``path`` (UTF-8), named by its SHA-256.

    Raises:
        JudgePromptError: the file is missing, unreadable, empty or has no placeholder for the answer.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JudgePromptError(f"--judge-prompt {path}: cannot read it ({getattr(exc, 'strerror', None) or exc}); "
                               "pass a UTF-8 text file") from None
    if not text.strip():
        raise JudgePromptError(f"--judge-prompt {path}: the file is empty; put the judge prompt in it")
    found = [m.group(1) for m in _PLACEHOLDER_RE.finditer(text)]
    if not any(_NAMED.get(name or "") == "answer" for name in found) and found.count(None) < len(_POSITIONAL):
        raise JudgePromptError(f"--judge-prompt {path}: no placeholder for the answer to grade; write {{answer}} "
                               "(or three {} for question, gold and answer) where it goes")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()

    def build(case: JudgeCase) -> list[dict[str, str]]:
        return [{"role": "user", "content": fill_template(text, case)}]

    return JudgePrompt(f"file {path.name}", f"file-{digest[:16]}", digest, build, read_reply, source=str(path))


def judge_prompt(preset_name: str | None, prompt_file: Path | None) -> JudgePrompt | None:
    """The prompt ``--judge-preset`` / ``--judge-prompt`` ask for; None for the strict default.

    Raises:
        JudgePromptError: both given, an unknown preset, or an unusable file.
    """
    if preset_name and prompt_file:
        raise JudgePromptError("--judge-preset and --judge-prompt both given; pass one (a prompt file replaces the "
                               "preset's prompts for every question)")
    if prompt_file:
        return from_file(Path(prompt_file))
    if preset_name:
        try:
            return preset(preset_name)
        except ValueError as exc:
            raise JudgePromptError(str(exc)) from None
    return None
