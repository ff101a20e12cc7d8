"""The pairwise judge: of two answers to one probe, which uses the earlier context correctly? No gold needed.

A team's own traffic has no answer key, but it has the earlier conversations.
The judge sees what truly happened earlier in the probe's scope (the earlier
sessions, newest kept when they are long), the probe's recent history and the
user's message, and two answers labelled only ``A`` and ``B``: never an arm
name, a tool call or the scenario's checks. It says which answer uses the
earlier context more correctly (states what the earlier conversations
support, does not invent, contradict or use a superseded value, says it does
not know when nothing supports an answer, uses nothing when memory was off),
or ``tie`` when neither is better.

Position bias is the known failure of pairwise judges (many prefer the first
answer), so every comparison is asked in both orders
(:meth:`PairwiseJudge.compare`): the answer in the first position as ``A``,
then as ``B``. Each order gives the first answer a vote of +1 (preferred),
-1 (the other preferred) or 0 (tie); the comparison's ``score`` is their
mean, and its ``outcome`` is ``first``, ``second`` or ``tie`` by its sign. A
judge that picks the same position both times gives score 0: a tie, flagged
``position_biased``, never a win.

Replies are JSON ``{"better": "A"|"B"|"tie", "reason": "..."}``, read
robustly; an unreadable reply is a ``malformed`` tie (counted). Temperature
0; verdicts are cached with the other judges' (:mod:`harness.score.judge`),
keyed by model, :data:`PROMPT_VERSION` and the messages.

:func:`calibrate` runs the judge over ``pairwise_calibration.yaml`` (labelled
pairs, a third of them ties) in both orders and reports agreement with the
labels, the position-bias rate and Cohen's kappa over the three labels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from harness.score.judge import JudgeError, JudgeModel, cache_key, recall_cached, store_cached
from harness.score.judge_calls import judge_call

PROMPT_VERSION = "pairwise-v1"
CALIBRATION_FILE = Path(__file__).with_name("pairwise_calibration.yaml")
LABELS = ("A", "B", "tie")
#: Characters of earlier sessions the judge is shown at most (the newest sessions are kept).
MAX_EARLIER_CHARS = 24_000
_MAX_TOKENS = 300

Preference = Literal["A", "B", "tie"]

_SYSTEM = (
    "You compare two answers an assistant could give to the user's latest message, in a product where the "
    "assistant may remember earlier conversations. You see what truly happened in the earlier conversations "
    "the assistant may draw on, the current conversation, and the two answers, labelled A and B. Decide which "
    "answer uses the earlier context more CORRECTLY: it states what the earlier conversations support and "
    "answers the question with it; it does not invent details, contradict the earlier conversations or give a "
    "value that was later changed; when nothing earlier supports an answer it says it does not know rather than "
    "guessing; when memory is off for the conversation it does not use earlier conversations at all. Fluency, "
    "length and politeness do not matter, and neither does the order of the answers. Say tie when both are "
    "equally correct or equally wrong. Reply with JSON only: "
    '{"better": "A" or "B" or "tie", "reason": "<one sentence>"}.'
)


class PairwiseVerdict(BaseModel):
    """One order's verdict with what produced it."""

    model_config = ConfigDict(frozen=True)

    better: Preference
    status: Literal["ok", "malformed"]
    reason: str
    raw: str
    model: str
    prompt_version: str = PROMPT_VERSION
    cached: bool = False


@dataclass(frozen=True)
class PairComparison:
    """Both orders of one comparison, in the frame of the answer asked about first.

    Attributes:
        forward: The judge's choice with the first answer shown as ``A``.
        backward: The judge's choice with the first answer shown as ``B``.
        malformed: Orders whose reply could not be read (each counted as a tie).
    """

    forward: Preference
    backward: Preference
    malformed: int = 0
    reasons: tuple[str, str] = ("", "")

    @property
    def votes(self) -> tuple[int, int]:
        """The first answer's vote in each order: +1 preferred, -1 the other preferred, 0 tie."""
        return ({"A": 1, "B": -1, "tie": 0}[self.forward], {"A": -1, "B": 1, "tie": 0}[self.backward])

    @property
    def score(self) -> float:
        """The first answer's preference, the mean of both orders' votes: -1, -0.5, 0, 0.5 or 1."""
        return sum(self.votes) / 2

    @property
    def outcome(self) -> Literal["first", "second", "tie"]:
        return "first" if self.score > 0 else "second" if self.score < 0 else "tie"

    @property
    def position_biased(self) -> bool:
        """The same position won in both orders: the choice followed the position, not the answer."""
        return self.forward == self.backward and self.forward != "tie"


def build_messages(context: str, question: str, answer_a: str, answer_b: str) -> list[dict[str, str]]:
    """The pairwise prompt: the earlier context, the conversation, then answers A and B; no arm, no answer key."""
    user = (f"{context}\n\nThe user's latest message:\n<<<QUESTION\n{question}\nQUESTION>>>\n\n"
            f"Answer A:\n<<<A\n{answer_a}\nA>>>\n\nAnswer B:\n<<<B\n{answer_b}\nB>>>")
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def parse_preference(raw: str) -> tuple[Preference, str, bool]:
    """``(better, reason, readable)`` from a reply, tolerating code fences and prose; unreadable is a tie."""
    text = raw or ""
    for candidate in re.findall(r"\{.*?\}", text, flags=re.DOTALL):
        try:
            data = json.loads(candidate)
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(data, dict):
            value = str(data.get("better", data.get("winner", ""))).strip()
            found = {"a": "A", "b": "B", "tie": "tie", "equal": "tie", "neither": "tie"}.get(value.lower())
            if found is not None:
                return found, str(data.get("reason", "")).strip() or "(no reason given)", True  # type: ignore[return-value]
    match = re.search(r'"?(?:better|winner)"?\s*[:=]\s*"?(A|B|tie)\b', text, flags=re.IGNORECASE)
    if match:
        value = match.group(1)
        return ("tie" if value.lower() == "tie" else value.upper()), "read from a malformed reply", True  # type: ignore[return-value]
    return "tie", f"unparseable judge reply: {text[:200]!r}", False


@dataclass
class PairwiseJudge(JudgeModel):
    """The pairwise judge (see :class:`harness.score.judge.JudgeModel`); counts malformed replies too."""

    malformed: int = 0
    _memory: dict[str, PairwiseVerdict] = field(default_factory=dict, repr=False)

    def ask(self, context: str, question: str, answer_a: str, answer_b: str) -> PairwiseVerdict:
        """One order: which of A and B uses the earlier context more correctly (cached)."""
        messages = build_messages(context, question, answer_a, answer_b)
        key = cache_key(self.model, PROMPT_VERSION, messages)
        found = recall_cached(self._memory, Path(self.cache_dir), key, PairwiseVerdict)
        if found is None:
            complete = self.complete or self.litellm(_MAX_TOKENS)
            raw = judge_call(self, messages, complete, max_tokens=_MAX_TOKENS)
            self.calls += 1
            better, reason, readable = parse_preference(raw)
            found = PairwiseVerdict(better=better, status="ok" if readable else "malformed", reason=reason, raw=raw,
                                    model=self.model)
            store_cached(self._memory, Path(self.cache_dir), key, found)
        else:
            self.cached += 1
        self.malformed += found.status == "malformed"
        return found

    def compare(self, context: str, question: str, first: str, second: str) -> PairComparison:
        """Both orders: ``first`` as A then as B (see the module's rule for combining them)."""
        forward = self.ask(context, question, first, second)
        backward = self.ask(context, question, second, first)
        return PairComparison(forward.better, backward.better,
                              malformed=(forward.status == "malformed") + (backward.status == "malformed"),
                              reasons=(forward.reason, backward.reason))

    def summary(self) -> dict[str, Any]:
        """Counts for ``summary.json``: model, prompt version, calls, cached, malformed."""
        return {"model": self.model, "prompt_version": PROMPT_VERSION, "calls": self.calls, "cached": self.cached,
                "malformed": self.malformed}


def judge_context(scenario: Any, *, max_chars: int = MAX_EARLIER_CHARS) -> str:
    """What the judge is shown of a probe: the earlier in-scope sessions (newest kept), then the current conversation.

    A probe whose policy denies memory (incognito, memory or agent reads off)
    is said to be so: then an answer that uses earlier conversations is wrong.
    """
    from harness.scenarios import probe_denial, sessions_in_scope

    def turns(items: Sequence[Any]) -> list[str]:
        return [f"{t.role}{' (' + t.speaker + ')' if getattr(t, 'speaker', None) else ''}: {t.content}" for t in items]

    blocks: list[str] = []
    used = 0
    omitted = 0
    for session in sorted(sessions_in_scope(scenario), key=lambda s: (s.started_at, s.id), reverse=True):
        text = "\n".join([f"[earlier conversation {session.id}]", *turns(session.turns)])
        if used + len(text) > max_chars:
            omitted += 1
            continue
        blocks.insert(0, text)
        used += len(text)
    earlier = "\n\n".join(blocks) or "(no earlier conversation)"
    if omitted:
        earlier = f"({omitted} older earlier conversation(s) left out for length)\n\n{earlier}"
    probe = scenario.probe
    current = "\n".join(turns(probe.history)) or "(no earlier turns in this conversation)"
    denial = probe_denial(scenario)
    memory = (f"Memory of earlier conversations is OFF for this conversation ({denial}): a correct answer uses "
              "none of them.\n\n" if denial is not None else "")
    return (f"{memory}Earlier conversations:\n<<<EARLIER\n{earlier}\nEARLIER>>>\n\n"
            f"The current conversation so far:\n<<<CURRENT\n{current}\nCURRENT>>>")


# ------------------------------------------------------------------------------------------------ calibration


def cohen_kappa_multi(labels: Sequence[str], predictions: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters over any set of labels; None when undefined (no items, chance agreement 1).

    Example:
        >>> cohen_kappa_multi(["A", "B", "tie", "tie"], ["A", "B", "tie", "A"])
        0.6363636363636364
    """
    n = len(labels)
    if n == 0 or n != len(predictions):
        return None
    observed = sum(a == b for a, b in zip(labels, predictions, strict=True)) / n
    values = set(labels) | set(predictions)
    chance = sum((labels.count(v) / n) * (list(predictions).count(v) / n) for v in values)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1 - chance)


@dataclass(frozen=True)
class PairwiseCalibration:
    """The pairwise judge against labelled pairs, both orders asked for each."""

    n: int
    agreement: float | None
    position_bias_rate: float | None
    cohen_kappa: float | None
    tie_rate_labelled: float | None
    mistakes: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "agreement": self.agreement, "position_bias_rate": self.position_bias_rate,
                "cohen_kappa": self.cohen_kappa, "labelled_ties": self.tie_rate_labelled}


def load_calibration(path: Path = CALIBRATION_FILE) -> list[dict[str, Any]]:
    """Labelled pairs: id, context, question, answer_a, answer_b, label (``A``, ``B`` or ``tie``)."""
    from harness.scenarios import read_yaml

    data, problems = read_yaml(Path(path))
    if problems:
        raise JudgeError(str(problems[0]))
    items = data.get("items", []) if isinstance(data, dict) else []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or item.get("label") not in LABELS:
            got = item.get("label") if isinstance(item, dict) else item
            raise JudgeError(f"{path}: items[{index}].label is {got!r}; use 'A', 'B' or 'tie'")
        for key in ("context", "question", "answer_a", "answer_b"):
            if not isinstance(item.get(key), str):
                raise JudgeError(f"{path}: items[{index}] ({item.get('id')!r}) needs {key} as a string")
    return items


def calibrate(judge: PairwiseJudge, path: Path = CALIBRATION_FILE) -> PairwiseCalibration:
    """Ask both orders of every labelled pair; agreement, position-bias rate and kappa against the labels."""
    items = load_calibration(path)
    labels, predictions, biased, mistakes = [], [], 0, []
    for item in items:
        got = judge.compare(item["context"], item["question"], item["answer_a"], item["answer_b"])
        predicted = {"first": "A", "second": "B", "tie": "tie"}[got.outcome]
        labels.append(item["label"])
        predictions.append(predicted)
        biased += got.position_biased
        if predicted != item["label"]:
            mistakes.append({"id": item.get("id"), "label": item["label"], "verdict": predicted,
                             "orders": [got.forward, got.backward]})
    n = len(items)
    agreement = sum(a == b for a, b in zip(labels, predictions, strict=True)) / n if n else None
    return PairwiseCalibration(n=n, agreement=agreement, position_bias_rate=biased / n if n else None,
                               cohen_kappa=cohen_kappa_multi(labels, predictions),
                               tie_rate_labelled=labels.count("tie") / n if n else None, mistakes=mistakes)

