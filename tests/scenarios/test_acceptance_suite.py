"""The acceptance suite is an instrument: every scenario valid with no warning, each a different situation.

Two scenarios that share most of their text, or ask nearly the same question, are one
observation counted twice: they shrink the interval without adding evidence. The check
compares every pair (and every acceptance scenario with every starter one, so the quick
suite is not copied into the big one) by word 3-gram Jaccard similarity of the whole
story, and by word-set Jaccard similarity of the probe messages.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest

from harness.scenarios import Scenario, load_suite

ROOT = Path(__file__).resolve().parents[2]
ACCEPTANCE = ROOT / "scenarios" / "acceptance"
STARTER = ROOT / "scenarios" / "starter"

STORY_LIMIT = 0.25  # word 3-gram Jaccard of the whole story text
PROBE_LIMIT = 0.60  # word-set Jaccard of the probe messages
_WORD = re.compile(r"[\w'-]+")
# a plain (unquoted) mapping value or list item holding " #": everything from the "#" on is a comment
_PLAIN_WITH_COMMENT = re.compile(r"^\s*(?:-\s+)?[\w$-]+:\s+[^\s\"'\[{|>#][^#]*\s#")


def story_text(scenario: Scenario) -> str:
    """Everything a reader would call the scenario's story: its sessions, items, probe history and message."""
    parts = [turn.content for session in scenario.sessions for turn in session.turns]
    parts += [item.content for item in scenario.items]
    parts += [turn.content for turn in scenario.probe.history]
    parts.append(scenario.probe.message)
    return "\n".join(parts)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def shingles(text: str, size: int = 3) -> frozenset[tuple[str, ...]]:
    tokens = words(text)
    return frozenset(tuple(tokens[i:i + size]) for i in range(max(1, len(tokens) - size + 1)))


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def near_duplicates(scenarios: list[Scenario], others: list[Scenario] = ()) -> tuple[list[str], tuple[float, str, str]]:
    """Pairs over the limits (within ``scenarios``, and between them and ``others``), and the closest pair by story."""
    stories = {s.id: shingles(story_text(s)) for s in [*scenarios, *others]}
    probes = {s.id: frozenset(words(s.probe.message)) for s in [*scenarios, *others]}
    own = [s.id for s in scenarios]
    pairs = list(itertools.combinations(own, 2)) + [(a, b.id) for a in own for b in others]
    found, closest = [], (0.0, "", "")
    for a, b in pairs:
        story, probe = jaccard(stories[a], stories[b]), jaccard(probes[a], probes[b])
        closest = max(closest, (story, a, b))
        if story > STORY_LIMIT:
            found.append(f"{a} ~ {b}: stories share {story:.0%} of their word 3-grams (limit {STORY_LIMIT:.0%})")
        if probe > PROBE_LIMIT:
            found.append(f"{a} ~ {b}: probes share {probe:.0%} of their words (limit {PROBE_LIMIT:.0%})")
    return found, closest


@pytest.fixture(scope="module")
def acceptance() -> list[Scenario]:
    loaded = load_suite([ACCEPTANCE])
    assert [f"{p.file}:{p.line}: {p.message}" for p in loaded.problems] == []  # no error and no warning
    return loaded.scenarios


def test_no_two_acceptance_scenarios_tell_the_same_story_or_ask_the_same_question(acceptance: list[Scenario]) -> None:
    starter = load_suite([STARTER]).scenarios
    found, closest = near_duplicates(acceptance, starter)
    assert found == [], "\n".join(found)
    assert closest[0] <= STORY_LIMIT


def suite_table_counts(text: str) -> dict[str, int]:
    """The ``| category | n | what it exercises |`` table of SUITE.md, as {category: n}."""
    lines = text.splitlines()
    start = lines.index("| category | n | what it exercises |") + 2  # past the header and its rule
    rows = itertools.takewhile(lambda line: line.startswith("|"), lines[start:])
    return {cells[0]: int(cells[1]) for cells in ([c.strip() for c in row.strip("|").split("|")] for row in rows)}


def test_suite_md_counts_every_scenario_of_every_category(acceptance: list[Scenario]) -> None:
    """SUITE.md's category table is the suite's size: a lost (or an added, uncounted) file makes a row disagree."""
    table = suite_table_counts((ACCEPTANCE / "SUITE.md").read_text(encoding="utf-8"))
    assert table == dict(Counter(s.category for s in acceptance))
    assert sum(table.values()) == len(acceptance) == len(list(ACCEPTANCE.glob("[!_]*.yaml")))


def test_no_unquoted_text_is_cut_short_by_a_yaml_comment() -> None:
    """``content: colour #1F5C3A`` loads as ``colour``: YAML reads `` #`` in a plain scalar as a comment."""
    cut = [f"{path.name}:{number}" for path in sorted(ACCEPTANCE.glob("*.yaml"))
           for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
           if _PLAIN_WITH_COMMENT.match(line)]
    assert cut == []


def test_a_copied_scenario_with_a_new_id_is_caught(acceptance: list[Scenario]) -> None:
    original = acceptance[0]
    copy = original.model_copy(update={"id": original.id + "-copy"})
    found, closest = near_duplicates([original, copy])
    assert closest == (1.0, original.id, copy.id)
    assert len(found) == 2  # the story and the probe


def test_the_same_question_over_a_different_story_is_caught(acceptance: list[Scenario]) -> None:
    first, second = acceptance[0], acceptance[1]
    same_question = second.model_copy(update={"probe": second.probe.model_copy(update={"message": first.probe.message})})
    found, _ = near_duplicates([first, same_question])
    assert [line.split(": ", 1)[1].split(" share")[0] for line in found] == ["probes"]


def test_the_abstain_tag_marks_exactly_the_scenarios_that_expect_an_abstention(acceptance: list[Scenario]) -> None:
    """``--tag abstain`` and SUITE.md's count of it must select what the scores treat as unanswerable."""
    assert sorted(s.id for s in acceptance if ("abstain" in s.tags) != s.expect.abstain) == []


#: Near misses whose text passes the positive checks by design: a canary or the agreed rule still decides.
_NEAR_MISS_ALLOWED = {
    ("cons-021-max-pr-size", "it-graphite"),  # "stacked PRs" is the rule's own remedy, not a wrong answer
    ("forget-009-client-name-nda", "it-veridian"),  # the forgotten name is a canary: the answer fails on it
    # a forgotten value the user later gave again: the new item counts, the detail deleted beside it is a canary
    ("forget-032-penicillin-restated", "it-allergy-old"),
    ("forget-038-birthday-restated", "it-birthday-40"),
    ("forget-047-lactose-restated", "it-diet-old"),
    ("forget-052-mum-number-kept", "it-mum-old"),
}


def test_no_near_miss_item_passes_its_scenarios_positive_checks(acceptance: list[Scenario]) -> None:
    """An answer that only repeats a distractor, stale or canary item must not pass: "1.2 km" is not "2 km".

    A scenario checked only through ``expect.adherence`` (a preference) is held to its adherence checks, as the
    scorer does (:func:`harness.score.matching.fact_check`): pref-014's distractor once passed them.
    """
    from harness.score.matching import fact_check, positive_checks_pass

    checks = {s.id: fact_check(s.expect) for s in acceptance if not s.expect.abstain}
    passing = {(s.id, item.id) for s in acceptance if checks.get(s.id) is not None
               for item in s.items if item.role in ("distractor", "stale", "canary")
               and positive_checks_pass(item.content, checks[s.id])}
    assert sorted(passing - _NEAR_MISS_ALLOWED) == []


def test_every_answerable_scenario_asks_the_answer_for_something(acceptance: list[Scenario]) -> None:
    """A check that only forbids passes any answer that avoids the forbidden words: a relayed note ("the school is
    nut-free") passed as five lunchbox ideas. Each answerable scenario needs a positive check, top level or adherence."""
    from harness.score.matching import fact_check

    forbidding_only = [s.id for s in acceptance if not s.expect.abstain and fact_check(s.expect) is None]
    assert forbidding_only == []
