"""Unsupported claims in an answer: canaries, stale values not mentioned as superseded, item ids nothing shown
supports, and what the grounding judge listed.

A string is id-shaped when it starts with one of the scenario's item-id
prefixes (the leading letters plus separator of each item id, e.g. ``it-``).
A cited item id is supported when a tool call is credited with it
(:func:`harness.score.credit.credited_ids`: at k, and shown by the result;
never the ids a plug-in merely reports) or when something the model read
names it as a whole token (``it-1`` is not supported by ``it-10``).
Stale values are only detected through ``stale`` canaries, never by fuzzy
matching; the supersession rule is :mod:`harness.score.superseded`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING

from harness.memo import by_identity
from harness.records import SampleRecord
from harness.scenarios import ItemSpec, Scenario, forgotten_texts
from harness.score.credit import credited_ids, shows_id
from harness.score.matching import (
    fact_check,
    find_spans,
    lines_normalized,
    normalize_text,
    positive_checks_pass,
)
from harness.score.models import CLAIM_EXCERPT_CHARS, UnsupportedClaim
from harness.score.superseded import is_superseded_mention
from harness.score.visible import shows

if TYPE_CHECKING:
    from harness.score.grounding import GroundingVerdict

_ID_PREFIX_RE = re.compile(r"^([A-Za-z]+[-_:.])[A-Za-z0-9]")


def _ids_of(items: Sequence[ItemSpec]) -> frozenset[str]:
    return frozenset(item.id for item in items)


def _id_prefixes_of(items: Sequence[ItemSpec]) -> frozenset[str]:
    return frozenset(m.group(1) for item in items if (m := _ID_PREFIX_RE.match(item.id)))


def _by_id(items: Sequence[ItemSpec]) -> Mapping[str, ItemSpec]:
    return MappingProxyType({item.id: item for item in items})


# Derived from a scenario's item list alone, once per list: every arm and epoch of a scenario, and every
# probe of a conversation, share one (see harness.memo).
_item_ids = by_identity(_ids_of)
_item_id_prefixes = by_identity(_id_prefixes_of)
items_by_id = by_identity(_by_id)


@lru_cache(maxsize=1024)
def _id_pattern(prefix: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9._:-])" + re.escape(prefix) + r"[A-Za-z0-9][A-Za-z0-9._:-]*")


def _cited_ids(answer: str, prefixes: Iterable[str]) -> list[str]:
    found: list[str] = []
    for prefix in sorted(prefixes):
        for match in _id_pattern(prefix).finditer(answer):
            token = match.group(0).rstrip(".:-_")
            if token not in found:
                found.append(token)
    return found


def _visible_text(record: SampleRecord) -> str:
    parts = [str(m.get("content") or "") for m in record.messages if m.get("role") != "assistant"]
    return "\n".join(parts + [call.result_text for call in record.tool_calls])


def _stale_as_superseded(answer: str, text: str, scenario: Scenario) -> bool:
    """True when every occurrence of stale ``text`` is mentioned as superseded (see :mod:`harness.score.superseded`).

    Requires the answer to state the current value: the scenario's positive
    checks (top level, else adherence) pass. Without positive checks (an
    abstention scenario) a stale value is never excused.
    """
    check = fact_check(scenario.expect)
    if check is None or not positive_checks_pass(answer, check):
        return False
    folded = lines_normalized(answer)
    spans = find_spans(folded, normalize_text(text))
    return bool(spans) and all(is_superseded_mention(folded, start, end) for start, end in spans)


def canary_findings(answer: str, scenario: Scenario) -> tuple[list[UnsupportedClaim], list[str]]:
    """(canaries claimed, stale canaries mentioned only as superseded).

    A forgotten fact (:func:`harness.scenarios.forgotten_texts`: a
    ``forgotten`` canary, or a ``leakage`` one held only archived in the
    probe's scope) is claimed as ``forgotten``, never as ``leakage``.
    """
    claims: list[UnsupportedClaim] = []
    superseded: list[str] = []
    forgotten = forgotten_texts(scenario)
    for canary in scenario.expect.canaries:
        if not shows(answer, canary.text):  # what a reader sees: ignorables, markup and homoglyphs folded
            continue
        if canary.kind == "stale" and _stale_as_superseded(answer, canary.text, scenario):
            superseded.append(canary.text)
        elif canary.text in forgotten and canary.kind in ("forgotten", "leakage"):
            claims.append(UnsupportedClaim(kind="forgotten", text=canary.text))
        else:
            claims.append(UnsupportedClaim(kind=canary.kind, text=canary.text))
    return claims, superseded


def cited_id_claims(answer: str, record: SampleRecord, scenario: Scenario,
                    canary_claims: list[UnsupportedClaim]) -> list[UnsupportedClaim]:
    """``canary_claims`` (of :func:`canary_findings`) and every cited item id nothing shown supports.

    Supported: an id some call is credited with (a plug-in that over-credits cannot make an unshown id look
    supported), or one the model's messages or tool results name as a whole token.
    """
    claims = list(canary_claims)
    item_ids = _item_ids(scenario.items)
    disclosed = {i for ids in credited_ids(record, scenario) for i in ids}
    visible: str | None = None
    for cited in _cited_ids(answer, _item_id_prefixes(scenario.items)):
        if cited not in item_ids:
            claims.append(UnsupportedClaim(kind="unknown_item_id", text=cited))
            continue
        if cited in disclosed:
            continue
        visible = _visible_text(record) if visible is None else visible
        if not shows_id(visible, cited):
            claims.append(UnsupportedClaim(kind="undisclosed_item_id", text=cited))
    return claims


def excerpt(answer: str) -> str:
    text = " ".join(answer.split())
    return text if len(text) <= CLAIM_EXCERPT_CHARS else text[: CLAIM_EXCERPT_CHARS - 1] + "…"


def grounding_claims(grounding: GroundingVerdict | None) -> list[UnsupportedClaim]:
    if grounding is None or grounding.status != "ok":
        return []
    return [UnsupportedClaim(kind="ungrounded", text=excerpt(claim)) for claim in grounding.unsupported]
