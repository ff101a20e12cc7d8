"""Every call a judge makes: reserved against ``--max-cost-usd``, counted and priced, calibration apart.

The rubric, grounding and pairwise judges (:class:`harness.score.judge.JudgeModel`) each make their
model calls through :func:`judge_call`. A call is

* reserved first, when the judge has a :class:`harness.run.budget.Budget` (``run --max-cost-usd``:
  what the run's own calls left): the prompt's tokens and the judge's ``max_tokens`` at litellm's
  price. Judge calls are made one at a time, so one whose worst case does not fit raises
  :class:`harness.run.budget.BudgetExceeded` at once and the report is not built (``run`` exits 3);
* counted under the judge's current :attr:`~harness.score.judge.JudgeModel.phase`: ``grading``
  (the run's samples) or ``calibration`` (the labelled calibration sets, :func:`calibrating`), so
  ``summary.json`` lists each judge's calls, tokens and cost with its calibration's apart;
* priced from the provider's reported usage (litellm's cost of the response), else the counted
  tokens at litellm's price; a completer that reports nothing (a test's plain string) is counted
  as a call of unknown tokens and cost, and charged its whole reservation.

Cached verdicts make no call and cost nothing.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: The phases a judge's calls are counted under, in ``summary.json``'s order.
PHASES = ("grading", "calibration")


class JudgeReply(str):
    """A judge's reply text that also carries the call's usage and cost (None: not known).

    A ``str``, so everything that reads a reply (and every completer a test substitutes, which
    returns a plain string) works unchanged.
    """

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None

    @classmethod
    def of(cls, text: str, prompt_tokens: int | None, completion_tokens: int | None, cost_usd: float | None) -> JudgeReply:
        reply = cls(text)
        reply.prompt_tokens, reply.completion_tokens, reply.cost_usd = prompt_tokens, completion_tokens, cost_usd
        return reply


@dataclass
class CallTally:
    """One judge's calls in one phase: how many, their tokens and cost (``unpriced``: calls of unknown cost)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    unpriced: int = 0

    def add(self, reply: str, cost_usd: float | None) -> None:
        self.calls += 1
        self.prompt_tokens += getattr(reply, "prompt_tokens", None) or 0
        self.completion_tokens += getattr(reply, "completion_tokens", None) or 0
        if cost_usd is None:
            self.unpriced += 1
        else:
            self.cost_usd += cost_usd

    def as_dict(self) -> dict[str, Any]:
        """``summary.json``'s fields: ``calls``, ``prompt_tokens``, ``completion_tokens``, ``cost_usd`` (None when no call
        had a price), ``unpriced_calls``."""
        priced = self.calls - self.unpriced
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost_usd": round(self.cost_usd, 8) if priced or not self.calls else None, "unpriced_calls": self.unpriced}


def usage_block(judge: Any, phase: str) -> dict[str, Any]:
    """A judge's calls, tokens and cost in ``phase`` (zeros when it made none)."""
    return judge.usage.get(phase, CallTally()).as_dict()


@contextlib.contextmanager
def calibrating(*judges: Any) -> Iterator[None]:
    """Count the calls of ``judges`` as calibration while the block runs (then as grading again)."""
    before = [judge.phase for judge in judges]
    for judge in judges:
        judge.phase = "calibration"
    try:
        yield
    finally:
        for judge, phase in zip(judges, before, strict=True):
            judge.phase = phase


def _counted_prompt(model: str, messages: list[dict[str, str]]) -> int:
    from harness.run import count_tokens

    return count_tokens(model, messages=messages)


def judge_call(judge: Any, messages: list[dict[str, str]], complete: Callable[[str, list[dict[str, str]]], str],
               *, max_tokens: int) -> str:
    """``complete(judge.model, messages)`` reserved against ``judge.budget``, counted and priced under ``judge.phase``.

    Raises:
        harness.run.budget.BudgetExceeded: the call's worst case does not fit what the cap has left; it is not made.
    """
    budget = getattr(judge, "budget", None)
    reserved = 0.0
    if budget is not None:
        reserved = budget.reserve_now(judge.model, _counted_prompt(judge.model, messages), max_tokens)
    try:
        raw = complete(judge.model, messages)
    except BaseException:
        if budget is not None:
            budget.settle(judge.model, reserved, None)  # not answered: nothing recorded
        raise
    cost = getattr(raw, "cost_usd", None)
    if cost is not None and not (math.isfinite(cost) and cost >= 0):
        cost = None
    if budget is not None:
        budget.settle(judge.model, reserved, reserved if cost is None else cost)  # an unknown cost is its worst case
    judge.usage.setdefault(judge.phase, CallTally()).add(raw, cost)
    return raw


def reply_of(response: Any, model: str, messages: list[dict[str, str]]) -> JudgeReply:
    """A litellm response as a :class:`JudgeReply`: its text, the reported usage (counted when absent or
    implausible) and litellm's price of it (None: litellm has no price for ``model``)."""
    import litellm

    text = response.choices[0].message.content or ""
    usage = getattr(response, "usage", None)
    prompt, completion = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
    if not (isinstance(prompt, int) and isinstance(completion, int) and prompt >= 0 and completion >= 0):
        from harness.run import count_tokens

        prompt, completion = count_tokens(model, messages=messages), count_tokens(model, text=text)
    try:
        inp, out = litellm.cost_per_token(model=model, prompt_tokens=prompt, completion_tokens=completion)
        cost: float | None = float(inp) + float(out)
    except Exception:  # noqa: BLE001 - a model litellm has no price for (a local server): cost unknown
        cost = None
    return JudgeReply.of(text, prompt, completion, cost)
