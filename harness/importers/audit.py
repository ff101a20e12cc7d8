"""The gold audit: checks no answer could pass, found by reading a suite (``recall-eval audit SUITE``).

Wrong gold answers cap what any system can score, so a suite built from a
public benchmark is read for checks that look unpassable, each a finding of
one kind (:data:`KINDS`):

- ``absent``: a positive check (a ``must_contain_any`` list, a
  ``must_contain_groups`` group, a ``must_contain_all`` string) none of whose
  strings occurs in the conversation (turn texts, item contents, the probe's
  message and recent history) after the
  scorer's normalisation (NFKC, casefold, whitespace collapsed; short strings
  word-bounded). Groups with a digit in them are left out (counts, sums and
  dates are often computed, not quoted), and so is a bare "yes" or "no"; so is a string
  composed of the conversation's words joined by punctuation, with no space (``postgres://cms``
  when the conversation says "Postgres" and "database name is cms": a URL, path or command an
  answer builds). What is left needs knowledge from
  outside the history (LoCoMo's open-domain category) or is a wrong gold;
- ``glued``: a gold word that is in no text of the conversation nor in the
  English word list but splits into two words the conversation writes
  (``watchingmovies``, ``Yesteammates``; ``filmmaker`` and ``sunday`` are
  words, so no finding), two capitalised words run together
  (``StreetFighter``), or a number glued to a word (``15April``):
  :mod:`harness.importers.gold_words`;
- ``misspelled``: a gold word in neither the conversation nor the word list,
  one edit from a word that is (``21Janury``, ``Januarty``): unpassable as
  written, so the finding gives the spelling an answer would use
  (``21 January``);
- ``split``: two consecutive list groups that are one date or one number cut
  at its comma (``9 April`` + ``2023``, ``$25`` + ``000``);
- ``contradiction``: a real answer on an abstention probe (``abstain: true``
  with a positive check or an ``f1_reference``).

The gold words read are those of the checks (what an answer must state);
``f1_reference``, the published gold the papers' metrics score, only when a
probe has no positive check: a published ``15April`` that the importer spaced
in its checks is no finding.

The audit reads plain data (a conversation file's mapping), so the importers
run it on each conversation as they write it, and the command on the files of
any suite. It never changes a suite. ``--json`` (and ``_suite.json``'s
``audit``) gives ``finding_count`` and the list ``findings`` (schema 2; schema
1 named the count ``findings`` and the list ``items``).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.importers.answers import DATE_OR_NUMBER_PATTERNS
from harness.importers.gold_words import glued_words, misspellings, normalize, unglue_digits
from harness.scenarios import ScenarioError, discover, read_yaml
from harness.word_bounds import bounded_pattern, is_short_needle

KINDS: dict[str, str] = {
    "absent": "a check string found in no session text or item",
    "glued": "a gold with glued words",
    "misspelled": "a misspelled gold (unpassable as written)",
    "split": "a list split inside a date or number",
    "contradiction": "a gold that contradicts the probe (a real answer on an abstention probe)",
}
"""Finding kinds and what each means, in report order."""
AUDIT_SCHEMA_VERSION = 2
"""2: ``finding_count`` and ``flagged_probe_count`` are the counts, ``findings`` the list (1: ``findings``
was the count, ``items`` the list, ``flagged_probes`` the probe count)."""
MAX_LISTED = 200
"""Findings listed in SUITE.md; the counts are always exact."""

_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def found(haystack: str, needle: str) -> bool:
    """Does normalised ``haystack`` hold ``needle`` as the scorer would find it (short needles word-bounded,
    with the scorer's own boundary: :mod:`harness.word_bounds`)?

    Example:
        >>> found("i know it", "No"), found("no, never", "No"), found("watching movies", "movies")
        (False, True, True)
    """
    folded = normalize(needle)
    if not folded:
        return True
    if folded not in haystack:
        return False
    return not is_short_needle(folded) or bounded_pattern(folded).search(haystack) is not None


@dataclass(frozen=True)
class Finding:
    """One check that looks unpassable: where it is, which kind, and what about it."""

    conversation: str
    probe: str
    category: str
    kind: str
    detail: str

    @property
    def scenario(self) -> str:
        """The scenario id the run records (``conv-26/q017``; a single scenario's own id)."""
        return f"{self.conversation}/{self.probe}" if self.probe else self.conversation


@dataclass
class AuditResult:
    """Findings of a suite (or of the conversations an importer wrote), with the probes read."""

    findings: list[Finding] = field(default_factory=list)
    probes: int = 0
    probes_by_category: Counter[str] = field(default_factory=Counter)

    def add(self, data: dict[str, Any]) -> list[Finding]:
        """Audit one conversation's (or scenario's) data and keep its findings."""
        probes = _probes(data)
        self.probes += len(probes)
        self.probes_by_category.update(str(p.get("category") or data.get("category") or "") for p in probes)
        new = list(audit_conversation(data))
        self.findings += new
        return new

    def merge(self, other: AuditResult) -> None:
        """Add the findings and probes of ``other`` (another conversation's audit) after this one's."""
        self.findings += other.findings
        self.probes += other.probes
        self.probes_by_category.update(other.probes_by_category)

    def flagged(self) -> list[str]:
        """Scenario ids with at least one finding, sorted."""
        return sorted({f.scenario for f in self.findings})

    def counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {category: n}}`` over findings (a probe with two findings of a kind counts twice)."""
        out: dict[str, dict[str, int]] = {}
        for finding in self.findings:
            by_category = out.setdefault(finding.kind, {})
            by_category[finding.category] = by_category.get(finding.category, 0) + 1
        return {kind: dict(sorted(out[kind].items())) for kind in KINDS if kind in out}

    def flagged_by_category(self) -> dict[str, int]:
        """Probes with a finding, per category."""
        seen: dict[str, set[str]] = {}
        for finding in self.findings:
            seen.setdefault(finding.category, set()).add(finding.scenario)
        return {category: len(ids) for category, ids in sorted(seen.items())}

    def as_json(self) -> dict[str, Any]:
        """The audit as ``_suite.json``'s ``audit`` block and ``recall-eval audit --json``'s output."""
        return {
            "schema_version": AUDIT_SCHEMA_VERSION,
            "probes": self.probes,
            "finding_count": len(self.findings),
            "flagged_probe_count": len(self.flagged()),
            "counts": self.counts(),
            "flagged_by_category": self.flagged_by_category(),
            "flagged": self.flagged(),
            "findings": [{"scenario": f.scenario, **asdict(f)} for f in self.findings],
        }

    def lines(self, limit: int | None = None) -> list[str]:
        """Human lines: the totals, a count per kind and category, then the findings (at most ``limit``)."""
        out = [f"gold audit: {len(self.findings)} findings on {len(self.flagged())} of {self.probes} probes"]
        for kind, by_category in self.counts().items():
            out.append(f"  {sum(by_category.values()):>6}  {KINDS[kind]} ({kind}): "
                       + ", ".join(f"{c or 'uncategorised'} {n}" for c, n in by_category.items()))
        shown = self.findings if limit is None else self.findings[:limit]
        out += [f"  {f.scenario} [{f.category}] {f.kind}: {f.detail}" for f in shown]
        if not shown and self.findings:
            out.append("  (SUITE.md lists them; so does `recall-eval audit` on the suite)")
        elif len(shown) < len(self.findings):
            out.append(f"  ... and {len(self.findings) - len(shown)} more (`recall-eval audit` on the suite lists all)")
        return out


def _probes(data: dict[str, Any]) -> list[dict[str, Any]]:
    """A conversation file's probes, or a single scenario file as its one probe (id empty)."""
    if isinstance(data.get("probes"), list):
        return [p for p in data["probes"] if isinstance(p, dict)]
    if isinstance(data.get("expect"), dict):
        return [{"id": "", "category": data.get("category"), "expect": data["expect"], "probe": data.get("probe")}]
    return []


def _texts(data: dict[str, Any]) -> Iterator[str]:
    for session in data.get("sessions") or []:
        for turn in (session.get("turns") or []) if isinstance(session, dict) else []:
            if isinstance(turn, dict) and isinstance(turn.get("content"), str):
                yield turn["content"]
    for item in data.get("items") or []:
        if isinstance(item, dict) and isinstance(item.get("content"), str):
            yield item["content"]


class HaystackWords:
    """The words of a normalised text, asked one at a time (``word in words``) without listing them all.

    A conversation of LongMemEval S holds 100k words; the audit asks about a
    handful (the pieces of a possibly glued gold word), so a word-bounded
    search per question is far cheaper than building the set.
    """

    def __init__(self, haystack: str) -> None:
        self._haystack = haystack
        self._known: dict[str, bool] = {}

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str) or not word:
            return False
        if word not in self._known:
            self._known[word] = word in self._haystack and re.search(
                rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", self._haystack) is not None
        return self._known[word]


def vocabulary(texts: Iterable[str]) -> set[str]:
    """The casefolded words of ``texts``."""
    return {word for text in texts for word in _TOKEN.findall(normalize(text))}


def _split_pairs(groups: list[list[str]]) -> Iterator[str]:
    """Consecutive list groups that together are one date or one number cut at its comma."""
    for left, right in zip(groups, groups[1:]):
        if not left or not right:
            continue
        a, b = str(left[0]), str(right[0])
        cut = len(a)
        joined = next((j for j in (f"{a}, {b}", f"{a},{b}")
                       if any(m.start() < cut < m.end() for p in DATE_OR_NUMBER_PATTERNS for m in p.finditer(j))),
                      None)
        if joined is not None:
            yield f"groups {a!r} and {b!r} are one date or number: {joined!r}"


def _quotable(group: list[str]) -> bool:
    """Would a right answer quote this group from the conversation? Not a number or date, nor a bare yes/no."""
    return not any(re.search(r"\d", s) or normalize(s) in ("yes", "no") for s in group)


_JOINED = re.compile(r"[^\W_]+")


def composed(words: HaystackWords, needle: str) -> bool:
    """Is ``needle`` the conversation's words joined by punctuation (a URL, a path), so an answer can build it?

    Example: with "Postgres" and "cms" in the conversation, ``postgres://cms`` and ``/cms`` are composed;
    ``postgres://ledger`` is not (``ledger`` is in no text), nor is ``cms`` alone or ``cms db`` (no joiner).
    """
    folded = normalize(needle)
    pieces = _JOINED.findall(folded)
    joined = bool(pieces) and not any(c.isspace() for c in folded) and "".join(pieces) != folded
    return joined and all(piece in words for piece in pieces)


def _positive_groups(expect: dict[str, Any]) -> list[list[str]]:
    groups: list[list[str]] = []
    if expect.get("must_contain_any"):
        groups.append([str(s) for s in expect["must_contain_any"]])
    groups += [[str(s) for s in g] for g in expect.get("must_contain_groups") or [] if isinstance(g, list) and g]
    groups += [[str(s)] for s in expect.get("must_contain_all") or []]
    return groups


def _probe_text(probe: dict[str, Any]) -> str:
    """The probe's message and recent history, normalised."""
    block = _v if isinstance(_v := probe.get("probe"), dict) else {}
    texts = [block["message"]] if isinstance(block.get("message"), str) else []
    texts += [t["content"] for t in block.get("history") or [] if isinstance(t, dict) and isinstance(t.get("content"), str)]
    return normalize("\n".join(texts))


def audit_conversation(data: dict[str, Any]) -> Iterator[Finding]:
    """The findings of one conversation file's (or single scenario file's) data, probe by probe."""
    cid = str(data.get("id") or "")
    texts = list(_texts(data))  # one normalisation of the joined text: a LongMemEval S conversation is 500 kB
    haystack = normalize("\n".join(texts))
    words = HaystackWords(haystack)
    for probe in _probes(data):
        expect = _v if isinstance(_v := probe.get("expect"), dict) else {}
        where = (cid, str(probe.get("id") or ""), str(probe.get("category") or data.get("category") or ""))
        groups = _positive_groups(expect)
        own = _probe_text(probe)  # the question and its recent history are text an answer may draw on too
        if expect.get("abstain") is True and (groups or expect.get("f1_reference")):
            real = expect.get("f1_reference") or groups[0][0]
            yield Finding(*where, "contradiction", f"abstention probe with a real answer {real!r}")
        for group in groups:
            if _quotable(group) and not any(found(haystack, s) or found(own, s) or composed(words, s) for s in group):
                yield Finding(*where, "absent", f"none of {group[:4]!r} occurs in the conversation")
        gold_strings = [s for group in groups for s in group[:1]]
        if not gold_strings and isinstance(expect.get("f1_reference"), str):
            gold_strings = [expect["f1_reference"]]
        seen: set[str] = set()
        for text in gold_strings:
            for token, spelled in misspellings(text, words):
                if token not in seen:
                    seen.add(token)
                    yield Finding(*where, "misspelled", f"{token!r} (unpassable as written; an answer would "
                                                        f"write {spelled!r})")
            for token, split in glued_words(text, words):
                if token not in seen:
                    seen.add(token)
                    yield Finding(*where, "glued", f"{token!r} (written apart: {split!r})")
        for detail in _split_pairs(expect.get("must_contain_groups") or []):
            yield Finding(*where, "split", detail)


def _read(path: Path) -> Any:
    data, problems = read_yaml(path)
    if problems:
        raise ValueError(str(problems[0]))
    return data


def audit_suite(paths: Iterable[str | Path]) -> AuditResult:
    """Audit every scenario and conversation file under ``paths``.

    Raises:
        ValueError: A path is missing or holds no scenario file, or a file cannot be read as YAML (the message
            names it, on one line).
    """
    result = AuditResult()
    try:
        files = discover([Path(p) for p in paths])
    except ScenarioError as exc:
        raise ValueError(str(exc.problems[0]) if exc.problems else str(exc)) from None
    for file in files:
        data = _read(file)
        if isinstance(data, dict):
            result.add(data)
    return result


def flagged_in_suites(paths: Iterable[str | Path]) -> set[str] | None:
    """The scenario ids an import's gold audit flagged (its ``_suite.json``), over the suites at ``paths``.

    None when no path holds an imported suite with an audit (hand-written
    suites have none; run ``recall-eval audit`` on them). An unreadable
    ``_suite.json`` counts as none: the report never fails on it.
    """
    flagged: set[str] = set()
    any_audit = False
    for raw in paths:
        path = Path(raw)
        record = (path if path.is_dir() else path.parent) / "_suite.json"
        try:
            audit = json.loads(record.read_text(encoding="utf-8")).get("audit")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(audit, dict) and isinstance(audit.get("flagged"), list):
            any_audit = True
            flagged.update(str(i) for i in audit["flagged"])
    return flagged if any_audit else None


def cli_audit(args: Any) -> int:
    """``recall-eval audit SUITE``: 0 no finding, 1 findings, 2 the suite cannot be read."""
    try:
        result = audit_suite(args.paths)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not result.probes:
        print(f"error: {', '.join(map(str, args.paths))}: no scenario or probe found; give a suite folder",
              file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
    else:
        from harness.wrapping import say

        for line in result.lines():  # wrapped at word boundaries to the terminal (80 columns when piped)
            say(line, indent="    ")
    return 1 if result.findings else 0


__all__ = ["KINDS", "AuditResult", "Finding", "audit_conversation", "audit_suite", "cli_audit",
           "flagged_in_suites", "glued_words", "misspellings", "normalize", "unglue_digits", "vocabulary"]
