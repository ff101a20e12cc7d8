"""The retrieval budget counts memory text (item content), the same way for every system; memory_get is inside it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from memory_tools import Host, MemoryItemStore, MemoryPolicy, RunContext, fit_disclosure
from tests.memory_tools.conftest import item

READ = MemoryPolicy(enabled=True, agent_read_enabled=True)
#: Six items of 150 characters of content each, ranked newest first by one shared key.
CONTENTS = [(f"Build note {i}: " + "the release build runs on the self-hosted runner pool; " * 3)[:140].rstrip().ljust(150, ".")
            for i in range(6)]


@pytest.fixture
def store() -> Iterator[MemoryItemStore]:
    with MemoryItemStore(":memory:") as raw:
        for i, content in enumerate(CONTENTS):
            raw.create(item(f"b-{i}", content, ["build", f"build {i}"], now=1_000 + i))
        yield raw


def run(store: MemoryItemStore, chars: int, top_k: int = 10) -> object:
    host = Host(store, READ, search_result_budget_chars=None, content_budget_chars=chars, search_limit=top_k)
    return host.open_run(RunContext(workspace_key="ws-a"))


def test_the_rule_shows_whole_items_best_first_while_their_texts_fit_and_at_most_top_k() -> None:
    assert fit_disclosure(["a" * 100, "b" * 100, "c" * 100], top_k=10, chars=250) == 2
    assert fit_disclosure(["a" * 100, "b" * 100, "c" * 100], top_k=1, chars=1000) == 1
    assert fit_disclosure(["a" * 300, "b" * 10], top_k=10, chars=250) == 0  # a prefix: a long best item is not skipped
    assert fit_disclosure([], top_k=3, chars=10) == 0


def test_search_counts_item_content_not_the_json_around_it(store: MemoryItemStore) -> None:
    """Three items of 150 characters fit 460, though their JSON (some 390 characters each) would fit only one."""
    record = run(store, 460).call("memory_search", {"terms": ["build"]})
    result = json.loads(record.result_text)
    assert [r["content"] for r in result["results"]] == [CONTENTS[5], CONTENTS[4], CONTENTS[3]]
    assert sum(len(r["content"]) for r in result["results"]) == 450 <= 460 < len(record.result_text)
    assert result["truncated"] is True and result["omittedCount"] == 2  # of the tool's default limit of 5
    assert record.disclosed_item_ids == ("b-5", "b-4", "b-3")


def test_search_shows_at_most_top_k_items_whatever_the_characters(store: MemoryItemStore) -> None:
    record = run(store, 100_000, top_k=2).call("memory_search", {"terms": ["build"], "limit": 10})
    assert record.disclosed_item_ids == ("b-5", "b-4")


def test_memory_get_is_inside_the_budget_its_content_cut_at_the_budget_and_said_so() -> None:
    with MemoryItemStore(":memory:") as raw:
        raw.create(item("long", "x" * 1081, ["long"]))
        record = run(raw, 1000).call("memory_get", {"itemId": "long"})
        whole = run(raw, 2000).call("memory_get", {"itemId": "long"})
    body = json.loads(record.result_text)
    assert len(body["item"]["content"]) == 1000 and body["item"]["contentTruncated"] is True
    assert body["item"]["omittedContentChars"] == 81 and record.disclosed_item_ids == ("long",)
    whole_item = json.loads(whole.result_text)["item"]
    assert len(whole_item["content"]) == 1081 and "contentTruncated" not in whole_item


def test_without_a_content_budget_the_host_keeps_its_result_text_ceilings(store: MemoryItemStore) -> None:
    """The product's own default: memory_tools used outside the harness answers as it always did."""
    host = Host(store, READ, search_result_budget_chars=1000)
    record = host.open_run(RunContext(workspace_key="ws-a")).call("memory_search", {"terms": ["build"]})
    assert len(record.result_text) <= 1000 and len(record.disclosed_item_ids) < 3


def test_times_are_shown_in_iso_utc_to_the_second_and_a_time_out_of_range_as_its_number() -> None:
    """``observedAtIso`` is UTC whatever the machine's zone, ``2026-03-02T10:00:00Z``; a millisecond count no
    calendar holds is written as the number, not an error."""
    import os
    import time

    from memory_tools.disclosure import iso_utc

    zone = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    try:
        assert iso_utc(1772445600999) == "2026-03-02T10:00:00Z"
    finally:
        if zone is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = zone
        time.tzset()
    assert iso_utc(10**20) == "100000000000000000000"


def test_memory_get_cuts_content_only_past_its_budget() -> None:
    from memory_tools.disclosure import budgeted_content

    assert budgeted_content("x" * 30, 30) == {} and budgeted_content("x" * 30, None) == {}
    assert budgeted_content("x" * 31, 30) == {"content": "x" * 30, "contentTruncated": True, "omittedContentChars": 1}


def test_items_that_fill_the_budget_exactly_are_all_shown_at_most_top_k() -> None:
    assert fit_disclosure(["port 5173", "uses pnpm"], top_k=10, chars=18) == 2
    assert fit_disclosure(["port 5173", "uses pnpm"], top_k=10, chars=17) == 1
    assert fit_disclosure(["a"] * 5, top_k=3, chars=100) == 3


def test_each_time_gets_its_iso_form_right_after_it_only_when_asked() -> None:
    """Beside the epoch milliseconds, never instead; a flag that happens to be a bool or a field that is no time
    gets none."""
    from memory_tools.disclosure import with_iso_times

    fields = {"id": 7, "observedAt": 1772445600000, "pinned": True, "createdAt": False, "content": "x"}
    assert with_iso_times(dict(fields), False) == fields
    assert list(with_iso_times(dict(fields), True).items()) == [
        ("id", 7), ("observedAt", 1772445600000), ("observedAtIso", "2026-03-02T10:00:00Z"), ("pinned", True),
        ("createdAt", False), ("content", "x")]
