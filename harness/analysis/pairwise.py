"""The pairwise judge's verdict: a paired sign test over conversations, with wins, ties, losses and intervals.

The unit of inference is the **conversation** (the part of a scenario id
before ``/``: a conversation file's probes ``conv-26/q017`` share it, a
one-story scenario is its own). Probes of one conversation share its earlier
sessions and its store, so their judgements are not independent; epochs only
refine a probe. So:

1. each judged probe has a score in [-1, 1] from the treatment's side (the
   mean of both orders' votes, :class:`harness.score.pairwise.PairComparison`);
2. a conversation's score is the mean over its probes (and their epochs);
3. a conversation is a **win** when its score is above 0, a **loss** below,
   a **tie** at 0; the two-sided exact sign test on wins against losses
   (ties left out) gives the p-value, :func:`harness.analysis.stats.mcnemar_exact`;
4. the decision: ``treatment preferred`` or ``baseline preferred`` when
   p < alpha (0.05), else ``no proven difference``;
5. the intervals: the Clopper-Pearson interval of the win share among
   decided conversations (:func:`clopper_pearson`, the sign test's own
   interval: it excludes 1/2 about when the test rejects), and the mean
   conversation score with a bootstrap over conversations
   (:func:`harness.analysis.stats.paired_diff_ci`).

The probe-level counts are reported beside, never tested: counting probes as
independent would overstate the evidence of a long conversation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis import stats


@dataclass(frozen=True)
class JudgedPair:
    """One probe x model x epoch judged in both orders, from the treatment's side.

    Attributes:
        scenario_id: The probe's scenario id (``conversation/probe`` or a one-story id).
        epoch: The epoch both answers came from.
        score: The treatment's preference: -1, -0.5, 0, 0.5 or 1.
        position_biased: The judge picked the same position in both orders.
        malformed: Orders whose reply could not be read.
    """

    scenario_id: str
    epoch: int
    score: float
    position_biased: bool = False
    malformed: int = 0


def conversation_of(scenario_id: str) -> str:
    """The conversation a scenario belongs to: its id up to the first ``/`` (a one-story scenario: its id).

    Example:
        >>> conversation_of("conv-26/q017"), conversation_of("pref-01-editor")
        ('conv-26', 'pref-01-editor')
    """
    return scenario_id.split("/", 1)[0]


def _binomial_tail_at_least(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed in log space (no overflow for thousands of trials)."""
    if k <= 0:
        return 1.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    return min(1.0, sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                                 + i * log_p + (n - i) * log_q) for i in range(k, n + 1)))


def clopper_pearson(successes: int, trials: int, level: float = 0.95) -> tuple[float | None, float | None]:
    """The exact (Clopper-Pearson) interval of a binomial share; (None, None) without trials.

    The lower end is the p at which P(X >= successes) is (1 - level)/2, the
    upper end the p at which P(X <= successes) is; found by bisection.

    Example (8 of 10, the textbook 0.444 to 0.975):
        >>> tuple(round(x, 4) for x in clopper_pearson(8, 10))
        (0.4439, 0.9748)
    """
    if trials <= 0:
        return None, None
    tail = (1.0 - level) / 2.0

    def solve(f: Any, increasing: bool) -> float:
        low, high = 0.0, 1.0
        for _ in range(100):
            mid = (low + high) / 2
            if (f(mid) < tail) == increasing:
                low = mid
            else:
                high = mid
        return (low + high) / 2

    lower = 0.0 if successes == 0 else solve(lambda p: _binomial_tail_at_least(successes, trials, p), True)
    upper = 1.0 if successes == trials else solve(
        lambda p: 1.0 - _binomial_tail_at_least(successes + 1, trials, p), False)
    return lower, upper


def sign_test(pairs: Sequence[JudgedPair], *, level: float = 0.95, alpha: float = 0.05) -> dict[str, Any]:
    """Wins, ties and losses over conversations, the exact sign test and its intervals (see the module).

    Returns:
        ``{"conversations", "wins", "ties", "losses", "p_value", "test", "decision", "win_share", "win_share_ci",
        "mean_preference", "mean_preference_ci", "probes", "probe_wins", "probe_ties", "probe_losses",
        "position_biased", "malformed"}``.
    """
    by_conversation: dict[str, list[float]] = {}
    for pair in pairs:
        by_conversation.setdefault(conversation_of(pair.scenario_id), []).append(pair.score)
    scores = [sum(values) / len(values) for _, values in sorted(by_conversation.items())]
    wins = sum(s > 0 for s in scores)
    losses = sum(s < 0 for s in scores)
    ties = len(scores) - wins - losses
    decided = wins + losses
    low, high = clopper_pearson(wins, decided, level)
    mean = stats.paired_diff_ci([0.0] * len(scores), scores, level=level)
    p_value = stats.mcnemar_exact(wins, losses)
    decision = ("no proven difference" if p_value >= alpha or wins == losses
                else "treatment preferred" if wins > losses else "baseline preferred")
    return {
        "conversations": len(scores), "wins": wins, "ties": ties, "losses": losses,
        "p_value": p_value,
        "test": "two-sided exact sign test on conversations (ties left out)",
        "decision": decision,
        "win_share": round(wins / decided, 6) if decided else None,
        "win_share_ci": [None if low is None else round(low, 6), None if high is None else round(high, 6)],
        "mean_preference": None if mean.value is None else round(mean.value, 6),
        "mean_preference_ci": [None if mean.ci_low is None else round(mean.ci_low, 6),
                               None if mean.ci_high is None else round(mean.ci_high, 6)],
        "probes": len(pairs), "probe_wins": sum(p.score > 0 for p in pairs),
        "probe_ties": sum(p.score == 0 for p in pairs), "probe_losses": sum(p.score < 0 for p in pairs),
        "position_biased": sum(p.position_biased for p in pairs), "malformed": sum(p.malformed for p in pairs),
    }
