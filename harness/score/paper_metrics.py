"""The published benchmarks' own metrics, computed beside ours so numbers can be set against the papers'.

Informational: none of these enters correctness, the outcome or the verdict.

* **Token F1 as LoCoMo computes it** (:func:`locomo_f1`): LoCoMo's
  ``normalize_answer`` (:func:`locomo_tokens`: commas removed, lowercase, the
  ASCII characters of ``string.punctuation`` removed and nothing else, so a
  typographic quote or dash stays in its token or is a token, the words
  a/an/the/and removed with the ``regex`` package's ``\b`` as LoCoMo's code
  does, split on whitespace), each token Porter-stemmed (NLTK's
  ``PorterStemmer``, as LoCoMo's evaluation code), F1 over the two token
  multisets. LoCoMo's multi-hop category (its category 1, our ``multi_hop``)
  is scored per sub-answer: gold and answer are split on commas, each gold
  part takes its best F1 against any answer part, and the sample's F1 is the
  mean over gold parts. Its open-domain category (3, our ``open_domain``)
  keeps the gold's first ``;``-separated part. The gold is the published one
  (the importers write it verbatim as ``expect.f1_reference``).
* **BLEU-1** (:func:`bleu1`): NLTK's ``sentence_bleu`` with weights
  ``(1, 0, 0, 0)`` and smoothing method 1 over lowercased Treebank-style
  tokens (NLTK's ``NLTKWordTokenizer``, the word tokenizer of
  ``word_tokenize`` without its sentence splitter, which needs a downloaded
  model), as the mem0 paper scores LoCoMo answers.
* **Session-level retrieval as LongMemEval computes it**
  (:func:`session_retrieval`): the memory tools' results ranked in the order
  they were disclosed (call by call, each call's ids in order), every item
  replaced by the sessions its ``sources`` cite, repeats dropped; the
  evidence sessions are the sessions the scenario's ``relevant_items`` cite.
  ``recall_any@k`` is 1 when some evidence session is in the top k,
  ``recall_all@k`` when all are; ``ndcg@k`` uses binary relevance and
  LongMemEval's discount (rank 1 and rank 2 both weigh 1, rank r > 1 weighs
  ``1/log2(r)``), over an ideal ranking of every evidence session first.
  Two populations, each under its own name: LongMemEval's
  (:func:`session_retrieval`, the ``session_*`` rows), which skips a question
  with no target turn on the user side as its retrieval evaluation does (a
  turn with a ``speaker``, one of LoCoMo's two people, is a person's side
  whatever its role), and
  ours (:func:`ours_session_retrieval`, the ``ours_session_*`` rows), every
  question with an evidence session.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from harness.score.credit import credited_ids
from harness.score.matching import multiset_f1

if TYPE_CHECKING:
    from harness.records import SampleRecord
    from harness.scenarios import Scenario

#: Cut-offs of the session-level retrieval metrics (LongMemEval reports 5 and 10).
SESSION_KS: tuple[int, ...] = (5, 10)
#: LoCoMo's multi-hop category: scored per comma-separated sub-answer.
MULTI_ANSWER_CATEGORIES: frozenset[str] = frozenset({"multi_hop"})
#: LoCoMo's open-domain category: the gold's first ``;``-separated part is scored.
FIRST_PART_CATEGORIES: frozenset[str] = frozenset({"open_domain"})
NLTK_MISSING = ("the papers' metrics (stemmed token F1, BLEU-1) need NLTK: "
                "pip install 'nltk>=3.8' (a core dependency of recall-eval; reinstall it)")


class PaperMetricsError(Exception):
    """A library the papers' metrics need is missing; the message says what to install."""


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    try:
        from nltk.stem import PorterStemmer
    except ImportError:
        raise PaperMetricsError(NLTK_MISSING) from None
    return PorterStemmer()


@lru_cache(maxsize=16384)
def _stem(token: str) -> str:
    return _stemmer().stem(token)


@lru_cache(maxsize=1)
def _dropped_words() -> Any:
    try:
        import regex  # NLTK's own dependency; LoCoMo's code removes articles with it
    except ImportError:
        raise PaperMetricsError(NLTK_MISSING) from None
    return regex.compile(r"\b(a|an|the|and)\b")


_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)


def locomo_tokens(text: str) -> list[str]:
    """LoCoMo's ``normalize_answer`` split into tokens, step for step as its evaluation code runs it.

    Only ASCII punctuation goes (``string.punctuation``); a Unicode one such as
    ``’`` or ``—`` is kept, as LoCoMo keeps it, so it can stand as a token.

    Example:
        >>> locomo_tokens("The dog, and a cat's toy — Caroline’s!")
        ['dog', 'cats', 'toy', '—', 'caroline’s']
    """
    lowered = text.replace(",", "").lower().translate(_ASCII_PUNCTUATION)
    return _dropped_words().sub(" ", lowered).split()


def stemmed_tokens(text: str) -> list[str]:
    """LoCoMo's normalised tokens (:func:`locomo_tokens`), each Porter-stemmed.

    Example:
        >>> stemmed_tokens("The paintings, and a painted wall")
        ['paint', 'paint', 'wall']
    """
    return [_stem(token) for token in locomo_tokens(text)]


def stemmed_f1(answer: str, gold: str) -> float:
    """F1 of the two stemmed token multisets; 0.0 when either is empty or none is shared.

    Example:
        >>> round(stemmed_f1("She paints landscapes", "painting landscapes"), 3)
        0.8
    """
    return multiset_f1(stemmed_tokens(answer), stemmed_tokens(gold))


def locomo_f1(answer: str, gold: str, category: str) -> float:
    """The sample's token F1 as LoCoMo's evaluation scores its category (see the module docstring).

    Example:
        >>> locomo_f1("hiking, painting", "painting, hiking, swimming", "multi_hop")
        0.6666666666666666
    """
    if category in FIRST_PART_CATEGORIES:
        gold = gold.split(";")[0].strip()
    if category not in MULTI_ANSWER_CATEGORIES:
        return stemmed_f1(answer, gold)
    answers = [part.strip() for part in answer.split(",")]
    golds = [part.strip() for part in gold.split(",")]
    return sum(max(stemmed_f1(a, g) for a in answers) for g in golds) / len(golds)


@lru_cache(maxsize=1)
def _bleu() -> tuple[Any, Any, Any]:
    try:
        from nltk.tokenize import NLTKWordTokenizer
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    except ImportError:
        raise PaperMetricsError(NLTK_MISSING) from None
    return NLTKWordTokenizer(), sentence_bleu, SmoothingFunction().method1


def bleu1(answer: str, gold: str) -> float:
    """BLEU-1 of the answer against the gold (unigram precision with brevity penalty, smoothed); 0.0 when empty.

    Example:
        >>> round(bleu1("Max is a dog", "a dog named Max"), 3)
        0.75
    """
    tokenizer, sentence_bleu, smoothing = _bleu()
    hypothesis, reference = tokenizer.tokenize(answer.lower()), tokenizer.tokenize(gold.lower())
    if not hypothesis or not reference:
        return 0.0
    return float(sentence_bleu([reference], hypothesis, weights=(1, 0, 0, 0), smoothing_function=smoothing))


def _dcg(relevances: Sequence[float]) -> float:
    """LongMemEval's DCG: the first relevance undiscounted, the one at rank r > 1 divided by log2(r)."""
    if not relevances:
        return 0.0
    return relevances[0] + sum(rel / math.log2(rank) for rank, rel in enumerate(relevances[1:], start=2))


def ranked_session_metrics(ranked: Sequence[str], evidence: set[str], ks: Sequence[int] = SESSION_KS
                           ) -> dict[str, float]:
    """``recall_any@k``, ``recall_all@k`` and ``ndcg@k`` of a session ranking against the evidence sessions.

    Example:
        >>> ranked_session_metrics(["s3", "s1", "s9"], {"s1", "s2"}, ks=(2,))
        {'recall_any@2': 1.0, 'recall_all@2': 0.0, 'ndcg@2': 0.5}
    """
    out: dict[str, float] = {}
    for k in ks:
        top = list(ranked[:k])
        relevances = [1.0 if session in evidence else 0.0 for session in top]
        ideal = _dcg([1.0] * min(len(evidence), k))
        out[f"recall_any@{k}"] = float(any(session in evidence for session in top))
        out[f"recall_all@{k}"] = float(all(session in top for session in evidence))
        out[f"ndcg@{k}"] = _dcg(relevances) / ideal if ideal else 0.0
    return out


def ranked_sessions(record: SampleRecord, scenario: Scenario) -> list[str]:
    """The sessions of the items the tools disclosed, in the order first disclosed (an item's sources in order)."""
    sessions_of = {item.id: [source.session for source in item.sources] for item in scenario.items}
    ranked: list[str] = []
    for ids in credited_ids(record, scenario):  # at k, and only what the result showed (harness.score.credit)
        for item_id in ids:
            ranked += [s for s in sessions_of.get(item_id, []) if s not in ranked]
    return ranked


def evidence_sessions(scenario: Scenario, *, user_side: bool = False) -> set[str]:
    """The sessions the scenario's relevant items cite (the importers record the evidence turns as sources).

    ``user_side``: only sources that are a person's turn, as LongMemEval's retrieval evaluation counts a
    session as a target only when one of its user turns has ``has_answer`` (else it renames it ``noans``):
    a ``user`` turn, or any turn with a ``speaker`` (LoCoMo's two named people, whose ``assistant`` role is
    a stand-in); an ``assistant`` turn without one is the assistant's own words, which LongMemEval skips.
    """
    relevant = set(scenario.expect.relevant_items)
    cited = [source for item in scenario.items if item.id in relevant for source in item.sources]
    if not user_side:
        return {source.session for source in cited}
    people = {(session.id, turn.id) for session in scenario.sessions for turn in session.turns
              if turn.role == "user" or turn.speaker}
    return {source.session for source in cited if (source.session, source.turn) in people}


def _ranked_against(record: SampleRecord, scenario: Scenario, evidence: set[str]) -> dict[str, float] | None:
    if record.status != "ok" or not record.tools_offered or record.write_phase is not None or not evidence:
        return None
    return ranked_session_metrics(ranked_sessions(record, scenario), evidence)


def session_retrieval(record: SampleRecord, scenario: Scenario) -> dict[str, float] | None:
    """LongMemEval's session-level retrieval metrics of one sample, on LongMemEval's own population, or None.

    LongMemEval's retrieval evaluation skips a question with no target turn
    on the user side (its single-session-assistant questions): None then, as
    when the arm offered no tools, the agent wrote its own memory (its items
    are not the scenario's), the sample failed, or no relevant item cites a
    session. The targets are the sessions with a user-side target turn.
    """
    return _ranked_against(record, scenario, evidence_sessions(scenario, user_side=True))


def ours_session_retrieval(record: SampleRecord, scenario: Scenario) -> dict[str, float] | None:
    """The same metrics on our population: every question whose relevant items cite a session, on any side.

    Differs from :func:`session_retrieval` only in which questions count
    (and, for a question with targets on both sides, which sessions are targets).
    """
    return _ranked_against(record, scenario, evidence_sessions(scenario))


def task_averaged(per_category: dict[str, float]) -> float | None:
    """LongMemEval's task-averaged accuracy: the mean over question types of each type's accuracy.

    Example:
        >>> task_averaged({"temporal": 0.5, "multi_session": 1.0, "knowledge_update": 0.0})
        0.5
    """
    return sum(per_category.values()) / len(per_category) if per_category else None


def session_figures(s: Any) -> dict[str, dict[str, float]]:
    """The sample's session-retrieval figures by row prefix: ``""`` LongMemEval's population, ``"ours_"`` ours."""
    return {"": s.session_retrieval or {}, "ours_": s.ours_session_retrieval or {}}


def session_metric_order(name: str) -> tuple[bool, int, str]:
    """LongMemEval's rows before ours; ``recall_any@5`` before ``recall_all@5`` before ``ndcg@5``, then at 10."""
    ours, (figure, _, k) = name.startswith("ours_"), name.partition("session_")[2].partition("@")
    return (ours, int(k) if k.isdigit() else 0, {"recall_any": "0", "recall_all": "1", "ndcg": "2"}.get(figure, figure))
