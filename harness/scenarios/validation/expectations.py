"""Checks of what a good answer must and must not contain: regexes that compile, no required text that is also
forbidden or a canary, a declared category; and the smells, warnings rather than errors (no distractor, the answer
already in the probe history, ``abstain`` together with ``must_contain_*``, a leakage canary the probe may read).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from harness.scenarios.models import (
    DISTRACTOR_ROLES,
    Category,
    ItemSpec,
    LifecycleState,
    Scenario,
)
from harness.scenarios.problems import Finding, Loc
from harness.scenarios.validation.fields import CATEGORY, did_you_mean, field_of, list_field
from memory_tools import strip_format_characters

#: A lone number: scoring matches it with digit edges, never as a substring (as ``harness.score.scoring``'s).
_NUMBER = re.compile(r"[+-]?\d+(?:[.,:' ]\d+)*%?")


def _strings(obj: Any, name: str) -> list[Any]:
    return list_field(obj, name) or []


def _fold(text: str) -> str:
    return " ".join(strip_format_characters(text).casefold().split())  # as scoring matches: format characters dropped


def _groups(check: Any) -> list[tuple[Loc, list[Any]]]:
    """The check's synonym groups with their places: each ``must_contain_groups`` entry, and
    ``must_contain_any`` as one group (an answer passes it with any one of its entries)."""
    groups: list[tuple[Loc, list[Any]]] = [
        (("must_contain_groups", j), group)
        for j, group in enumerate(_strings(check, "must_contain_groups")) if isinstance(group, list) and group
    ]
    any_of = _strings(check, "must_contain_any")
    if any_of:
        groups.append((("must_contain_any",), any_of))
    return groups


def _wanted(check: Any) -> set[str]:
    """Texts every passing answer must hold: ``must_contain_all`` entries and one-synonym groups."""
    texts = [*_strings(check, "must_contain_all")]
    texts += [group[0] for _, group in _groups(check) if len(group) == 1]
    return {_fold(text) for text in texts if isinstance(text, str)}


#: What an unlabelled probe (``expect.unlabelled``: logged traffic, no gold) may not set: each is a gold of some kind.
GOLD_FIELDS = ("must_contain_any", "must_contain_all", "must_contain_groups", "must_match", "must_not_contain",
               "must_not_match", "abstain", "adherence", "relevant_items", "canaries", "rubric", "f1_reference")


def check_unlabelled(expect: Any) -> Iterator[Finding]:
    """An unlabelled probe sets no gold: a check there would be scored while its continuity is not."""
    if field_of(expect, "unlabelled") is not True:
        return
    for name in GOLD_FIELDS:
        value = field_of(expect, name)
        if value not in (None, False, [], {}):
            yield Finding(("expect", name), "expect.unlabelled is true (no gold) but this sets one: drop it, or drop "
                          "unlabelled if the probe has a gold answer", value)


def check_expect(expect: Any) -> Iterator[Finding]:
    yield from check_unlabelled(expect)
    checks: list[tuple[Loc, Any]] = [(("expect",), expect)]
    adherence = field_of(expect, "adherence")
    if adherence is not None:
        checks.append((("expect", "adherence"), adherence))
    for prefix, check in checks:
        for name in ("must_match", "must_not_match"):
            for j, pattern in enumerate(_strings(check, name)):
                if not isinstance(pattern, str):
                    continue
                try:
                    re.compile(pattern, re.IGNORECASE)
                except re.error as exc:
                    yield Finding((*prefix, name, j), f"not a valid regular expression: {exc}", pattern)
        wanted = _wanted(check)
        forbidden: set[str] = set()
        for j, text in enumerate(_strings(check, "must_not_contain")):
            if isinstance(text, str):
                forbidden.add(_fold(text))
                if _fold(text) in wanted:
                    yield Finding((*prefix, "must_not_contain", j), "also listed as required text: no answer can pass", text)
        for loc, group in _groups(check):
            if len(group) > 1 and all(isinstance(t, str) and _fold(t) in forbidden for t in group):
                what = "entry" if loc[0] == "must_contain_any" else "synonym of this group"
                yield Finding((*prefix, *loc), f"every {what} is also in must_not_contain: no answer can pass", group)
    wanted = _wanted(expect)
    groups = [group for _, group in _groups(expect)]
    for j, canary in enumerate(_strings(expect, "canaries")):
        text = field_of(canary, "text")
        if not isinstance(text, str):
            continue
        if _fold(text) in wanted or any(all(_states(t, text) for t in group) for group in groups):
            yield Finding(("expect", "canaries", j, "text"), "a canary is also required text: no answer can pass", text)


def _states(synonym: Any, canary: str) -> bool:
    """Does an answer holding ``synonym`` hold ``canary``? Equal, or contained in it when the canary is
    long enough that scoring matches it as a plain substring (short ones need word edges there)."""
    if not isinstance(synonym, str):
        return False
    needle, text = _fold(canary), _fold(synonym)
    return needle == text or (len(needle) > 3 and not _NUMBER.fullmatch(needle) and needle in text)


_WORD = re.compile(r"\w+")


def _nfkc(text: str) -> str:
    """Folded as :func:`_fold`, after NFKC (CJK compatibility ideographs, full-width forms read as typed)."""
    return _fold(unicodedata.normalize("NFKC", text))


def _unsupported_answers(scenario: Scenario) -> Iterator[Finding]:
    """Warnings for a required answer no relevant item holds, and for a distractor as the only relevant item.

    The memory arm can only earn a ``must_contain*`` answer by retrieving it:
    when no item of ``relevant_items`` states it (in its content or keys),
    either the answer key or ``relevant_items`` is wrong, and the metrics of
    retrieval would blame the system for it.
    """
    expect = scenario.expect
    by_id = {item.id: item for item in scenario.items}
    relevant = [by_id[i] for i in expect.relevant_items if i in by_id]
    if len(relevant) == 1 and relevant[0].role in DISTRACTOR_ROLES:
        yield Finding(("expect", "relevant_items"),
                      f"the only relevant item {relevant[0].id!r} has role {relevant[0].role}: an answer should come from "
                      "an item with role answer or supporting (is the role, or relevant_items, wrong?)",
                      expect.relevant_items, "warning")
    # The probe's own message may supply part of an answer (the version asked about): that is not retrieval's job.
    corpus = _nfkc(" ".join([scenario.probe.message, *(f"{i.content} {' '.join(k.key for k in i.keys)}" for i in relevant)]))
    words = set(_WORD.findall(corpus))

    def held(text: str) -> bool:
        """The text, or every word of it (``postgres://cms`` from "Postgres ... database cms"), is in the corpus."""
        folded = _nfkc(text)
        return bool(folded) and (folded in corpus or bool(found := _WORD.findall(folded)) and all(w in words for w in found))

    where = f"relevant_items {expect.relevant_items}" if relevant else "no item is named in relevant_items"
    for j, text in enumerate(expect.must_contain_all):
        if not held(text):
            yield Finding(("expect", "must_contain_all", j),
                          f"no relevant item states this required text ({where}): name the item that holds the answer "
                          "in expect.relevant_items, or fix the text", text, "warning")
    for loc, group in (*((("must_contain_groups", j), g) for j, g in enumerate(expect.must_contain_groups)),
                       *([(("must_contain_any",), expect.must_contain_any)] if expect.must_contain_any else [])):
        if group and not any(held(t) for t in group):
            yield Finding(("expect", *loc),
                          f"no relevant item states any of these ({where}): name the item that holds the answer in "
                          "expect.relevant_items, or fix the text", group, "warning")


def _visible(item: ItemSpec, scenario: Scenario) -> bool:
    return item.workspace is None or item.workspace == scenario.probe.workspace


def check_category(data: Any) -> Iterator[Finding]:
    """An undeclared category is a warning: a typo would otherwise open a category of its own in every report."""
    category = field_of(data, "category")
    declared = field_of(data, "categories")
    declared = declared if isinstance(declared, dict) else {}
    builtin = [c.value for c in Category]
    if not isinstance(category, str) or CATEGORY(category) is None or category in builtin or category in declared:
        return
    known = [*builtin, *(name for name in declared if isinstance(name, str))]
    yield Finding(
        ("category",),
        f"unknown category{did_you_mean(category, known)}: declare it in a _defaults.yaml under "
        f"`categories: {{{category}: <one sentence>}}`, or use a built-in one ({', '.join(builtin)})",
        category,
        "warning",
    )


def check_smells(scenario: Scenario, *, conversation: bool = False) -> Iterator[Finding]:
    """Warnings. In a conversation (``conversation``) every item the probe does not name as
    relevant already makes retrieval choose, so no distractor role is asked for."""
    expect = scenario.expect
    if expect.abstain and (expect.must_contain_any or expect.must_contain_all or expect.must_contain_groups):
        yield Finding(
            ("expect", "abstain"),
            "abstain is true but must_contain_* asks for content: an abstention scenario usually checks only what must not appear",
            True,
            "warning",
        )
    relevant = set(expect.relevant_items) if conversation else None
    has_distractor = any(
        item.role in DISTRACTOR_ROLES or (relevant is not None and item.role == "other" and item.id not in relevant)
        for item in scenario.items
    )
    if not has_distractor and not expect.unlabelled:  # logged traffic: the store is the team's, nothing to plant
        yield Finding(
            ("items",),
            "no distractor: add at least one item with role distractor, stale or canary so retrieval has to choose",
            severity="warning",
        )
    probe = scenario.probe
    tools_off = probe.incognito or not (probe.policy.enabled and probe.policy.agent_read_enabled)
    if (not tools_off and scenario.category != Category.RECENT_HISTORY and not conversation and not expect.abstain
            and not expect.unlabelled):
        # (not for a conversation's probes: imported benchmarks ask for counts and summaries no one item states)
        yield from _unsupported_answers(scenario)
    if tools_off and scenario.expect.relevant_items:
        yield Finding(
            ("expect", "relevant_items"),
            "the probe's policy keeps memory tools away, so no item can be retrieved",
            severity="warning",
        )
    if scenario.category != Category.RECENT_HISTORY and probe.history and not tools_off:
        history = _fold(" ".join(turn.content for turn in probe.history))
        for name in ("must_contain_any", "must_contain_all"):
            for j, text in enumerate(getattr(scenario.expect, name)):
                if _fold(text) and _fold(text) in history:
                    yield Finding(
                        ("expect", name, j),
                        "the expected answer already appears in probe.history, so the history-only arm can answer "
                        "without memory (fine only for category recent_history)",
                        text,
                        "warning",
                    )
        for j, group in enumerate(scenario.expect.must_contain_groups):
            if any(_fold(text) and _fold(text) in history for text in group):
                yield Finding(
                    ("expect", "must_contain_groups", j),
                    "a synonym of this group already appears in probe.history, so the history-only arm can answer "
                    "without memory (fine only for category recent_history)",
                    group,
                    "warning",
                )
    if scenario.category == Category.RECENT_HISTORY and not probe.history:
        yield Finding(("probe", "history"), "a recent_history scenario needs probe.history", severity="warning")
    leakage = [(j, canary) for j, canary in enumerate(scenario.expect.canaries) if canary.kind == "leakage"]
    if tools_off or not leakage:
        return
    visible = [item for item in scenario.items if _visible(item, scenario) and item.state is LifecycleState.ACTIVE]
    for j, canary in leakage:
        needle = _fold(canary.text)
        holders = [item.id for item in visible if needle in _fold(item.content)]
        if holders:
            yield Finding(
                ("expect", "canaries", j, "text"),
                f"leakage canary appears in item(s) the probe may read: {', '.join(holders)}",
                canary.text,
                "warning",
            )
