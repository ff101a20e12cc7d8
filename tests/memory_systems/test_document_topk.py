"""Top-K retrieval over the memory document: each lane's choice, the shared K and cap, the gate, the judge's calls."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from harness.memory_systems import open_instance, resolve_arm
from harness.memory_systems.document import PROMPT_CAP_CHARS, SECTION_OPEN
from harness.memory_systems.document_format import DocumentEntry
from harness.memory_systems.document_topk import (
    JUDGE_FIRST_LINE_CHARS,
    JUDGE_SYSTEM,
    TOPK_ARMS,
    fts_select,
    judge_choice,
    judge_request,
    probe_entries,
    topk_section,
    vector_select,
)
from harness.memory_systems.fingerprint import arm_fingerprint
from harness.memory_systems.run_embedding import sample_embedding
from harness.scenarios import RetrievalBudget, probe_policy
from tests.memory_systems.topk_factories import topk_scenario


def _entries(n: int) -> tuple[DocumentEntry, ...]:
    return tuple(DocumentEntry(title=f"note {i}", content=f"alpha fact number {i}", id=f"id{i}") for i in range(n))


def _probe_section(arm: str, k: int = 3, **probe: Any) -> str:
    scenario = topk_scenario(probe=probe or None)
    instance = open_instance(resolve_arm(arm), scenario, RetrievalBudget(top_k=k))
    policy, context = probe_policy(scenario)
    return instance.begin_probe(policy, context).messages[0]["content"]


def test_fts_lane_ranks_the_entry_sharing_the_query_words_first_by_bm25() -> None:
    entries = probe_entries(topk_scenario())
    chosen = fts_select(entries, "What is the staging database host?", 3)
    assert entries[chosen[0]].content == "The staging database host is pg-staging-7.internal."
    assert fts_select(entries, "What is it?", 3) == []  # no content word: nothing chosen


def test_every_lane_chooses_at_most_k_entries() -> None:
    """Planted bug caught: the FTS query without ``LIMIT ?`` (K ignored) returned all 20 matching entries."""
    entries = _entries(20)
    assert len(fts_select(entries, "alpha fact", 4)) == 4
    assert len(vector_select(entries, "alpha fact", 4, sample_embedding(None).embed)) == 4
    reply = json.dumps({"selected": [f"e{i + 1}" for i in range(20)]})
    assert judge_choice(reply, entries, 4) == [0, 1, 2, 3]


def test_the_section_never_shows_more_than_k_entries_whatever_a_lane_returned() -> None:
    """Planted bug caught: ``topk_section`` keeping every chosen index (K ignored) showed 6 entries for K 2."""
    section = topk_section(_entries(10), [5, 1, 3, 7, 0, 2], 2)
    assert section.count("## note") == 2 and "## note 1" in section and "## note 5" in section
    assert section.index("## note 1") < section.index("## note 5")  # file order (newest first), not rank order


def test_vector_lane_puts_the_most_similar_entry_first_with_the_runs_embedder() -> None:
    entries = probe_entries(topk_scenario())
    embedding = sample_embedding(None)
    chosen = vector_select(entries, "staging database host", 2, embedding.embed)
    assert "pg-staging-7" in entries[chosen[0]].content and embedding.usage.texts == len(entries) + 1


def test_the_judge_sees_titles_and_first_lines_and_only_ids_it_was_shown_count() -> None:
    entries = (DocumentEntry(title="deploy", content="Deploys go out on Fridays.\nsecond line never shown"),
               DocumentEntry(title="port", content="The dev server runs on port 5174."))
    messages, response_format = judge_request(entries, "Which port?", 1)
    assert "[e1] deploy — Deploys go out on Fridays." in messages[1]["content"]
    assert "[e2] port — The dev server" in messages[1]["content"]
    same = (DocumentEntry(title="The dev server runs…", content="The dev server runs on port 5174."),)
    assert "[e1] The dev server runs on port 5174." in judge_request(same, "Which port?", 1)[0][1]["content"]
    assert "second line" not in messages[1]["content"]
    assert response_format["json_schema"]["schema"]["properties"]["selected"]["maxItems"] == 1
    assert judge_choice('{"selected": ["e9", "e2", "e2"]}', entries, 2) == [1]
    assert judge_choice("e2 looks relevant", entries, 2) == [] and judge_choice('{"ids": ["e2"]}', entries, 2) == []


def test_topk_arms_inject_the_relevant_entry_and_fewer_than_the_whole_file() -> None:
    whole = _probe_section("memory_document")
    assert whole.count("\n## ") == 13
    for lane in ("fts", "vector"):
        section = _probe_section(TOPK_ARMS[lane], k=3)
        assert "pg-staging-7" in section and 1 <= section.count("\n## ") <= 3, lane


def test_a_denying_policy_keeps_every_lane_cold_and_the_judge_unasked() -> None:
    for lane, arm in TOPK_ARMS.items():
        for probe in ({"incognito": True}, {"policy": {"agent_read_enabled": False}}, {"policy": {"enabled": False}}):
            scenario = topk_scenario(probe=probe)
            instance = open_instance(resolve_arm(arm), scenario, RetrievalBudget(top_k=3))
            policy, context = probe_policy(scenario)
            assert instance.begin_selection(policy, context) is None, (lane, probe)
            assert SECTION_OPEN not in instance.begin_probe(policy, context).messages[0]["content"], (lane, probe)
            assert instance.entries is None  # nothing was read


def test_lane_and_k_are_in_the_fingerprint_and_the_cap_is_the_whole_files() -> None:
    prints = {arm: arm_fingerprint(resolve_arm(arm), RetrievalBudget(top_k=3), "t") for arm in TOPK_ARMS.values()}
    assert len({p["config_hash"] for p in prints.values()}) == 3
    other_k = arm_fingerprint(resolve_arm(TOPK_ARMS["fts"]), RetrievalBudget(top_k=4), "t")
    assert other_k["config_hash"] != prints[TOPK_ARMS["fts"]]["config_hash"]
    assert resolve_arm(TOPK_ARMS["judge"]).system.configuration() == {
        "lane": "judge", "k": "retrieval_budget.top_k", "cap_chars": PROMPT_CAP_CHARS}


def test_the_judges_calls_are_counted_as_the_probes_model_calls_and_its_choice_is_injected() -> None:
    """Planted bug caught: dropping the selection's calls from the outcome (judge calls uncounted) left one call."""
    from harness.offline_model import register_offline
    from harness.run.agent import ModelClient, ModelSettings
    from harness.run.sample import run_memory_sample

    register_offline()
    result = asyncio.run(run_memory_sample(TOPK_ARMS["judge"], topk_scenario(), client=ModelClient(),
                                           settings=ModelSettings("offline/reference", seed=1), epoch=0,
                                           max_tool_rounds=4, budget=RetrievalBudget(top_k=3)))
    calls = result.outcome.model_calls
    selection = [c for c in calls if c.purpose == "selection"]
    assert len(selection) == 1 and selection[0].prompt_tokens > 0 and calls[0] is selection[0]
    assert len(calls) == 2 and calls[1].purpose is None
    system = result.outcome.messages[0]["content"]
    assert "pg-staging-7" in system and system.count("\n## ") <= 3
    assert "pg-staging-7" in (result.outcome.final_answer or "")
    assert "purpose" not in calls[1].model_dump()  # the agent's own calls are recorded as before


def test_a_judge_whose_model_fails_ends_the_sample_as_an_error_before_the_probe() -> None:
    from harness.run.agent import ModelClient, ModelSettings
    from harness.run.retry import RetryPolicy
    from harness.run.sample import run_memory_sample
    from tests.run.scripted_model import install_scripted

    scripted = install_scripted(lambda messages, tools: ValueError("provider down"))
    result = asyncio.run(run_memory_sample(TOPK_ARMS["judge"], topk_scenario(),
                                           client=ModelClient(retry=RetryPolicy(retries=0, base_delay_s=0.0)),
                                           settings=ModelSettings("scripted/judge"), epoch=0, max_tool_rounds=4,
                                           budget=RetrievalBudget(top_k=3)))
    assert result.outcome.stop_reason == "error" and scripted.calls == 1  # the probe was never asked
    assert result.outcome.error.message.startswith("selection before the probe: ")


def test_a_judge_reply_naming_nothing_it_was_shown_leaves_the_probe_without_a_section() -> None:
    from harness.run.agent import ModelClient, ModelSettings
    from harness.run.sample import run_memory_sample
    from tests.run.scripted_model import install_scripted

    seen: list[list[dict[str, Any]]] = []

    def script(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        seen.append(messages)
        return {"content": '{"selected": ["e99"]}' if len(seen) == 1 else "I don't know."}

    install_scripted(script)
    asyncio.run(run_memory_sample(TOPK_ARMS["judge"], topk_scenario(), client=ModelClient(),
                                  settings=ModelSettings("scripted/judge2"), epoch=0, max_tool_rounds=4,
                                  budget=RetrievalBudget(top_k=3)))
    assert (
        "\n[e13] The staging database host is pg-staging-7.internal.\n" in seen[0][1]["content"] + "\n"
        and SECTION_OPEN not in seen[1][0]["content"]
    )


def _recording_embed(vectors: dict[str, list[float]], kinds: list[str]) -> Any:
    """An embedder giving each text its vector from ``vectors`` ([0, 0] when unknown), recording each call's kind."""
    def embed(texts: list[str], kind: str) -> list[list[float]]:
        kinds.append(kind)
        return [vectors.get(text, [0.0, 0.0]) for text in texts]
    return embed


def test_the_fts_lane_matches_an_entrys_title_its_first_content_word_and_each_tag() -> None:
    """Bug this guards: the title, content and tags glued without a separator the tokenizer splits on, so the
    title's last word, the content's first and a tag beside another were never matched."""
    entries = (DocumentEntry(title="Deploy", content="Fridays at noon.", tags=("infra", "release")),
               DocumentEntry(title="Lunch", content="Ramen on King Street."))
    assert fts_select(entries, "deploy", 3) == [0]
    assert fts_select(entries, "fridays", 3) == [0]
    assert fts_select(entries, "infra", 3) == [0] and fts_select(entries, "release", 3) == [0]


def test_the_fts_lane_chooses_one_entry_for_k_one_and_none_for_k_zero_or_below() -> None:
    """Bug this guards: a K of 1 choosing nothing, or a negative K reaching SQLite as ``LIMIT -1`` (no limit)."""
    entries = _entries(5)
    assert len(fts_select(entries, "alpha fact", 1)) == 1
    assert fts_select(entries, "alpha fact", 0) == [] and fts_select(entries, "alpha fact", -1) == []


def test_a_query_fts5_cannot_parse_chooses_nothing_rather_than_failing_the_probe(monkeypatch: Any) -> None:
    """The guard's own case: a term FTS5 rejects (an unterminated string) is no error for the probe."""
    import harness.memory_systems.document_topk as topk

    monkeypatch.setattr(topk, "shadow_terms", lambda query: (["\x00"], 0))
    assert fts_select(_entries(3), "anything", 3) == []


def test_the_vector_lane_embeds_entries_as_passages_and_the_query_as_a_query() -> None:
    """Bug this guards: the kinds swapped or lost (an e5-style model embeds ``query:`` and ``passage:`` apart)."""
    kinds: list[str] = []
    entries = _entries(2)
    vector_select(entries, "alpha", 2, _recording_embed({}, kinds))
    assert kinds == ["passage", "query"]


def test_the_vector_lane_never_chooses_an_entry_with_no_similarity_and_takes_exactly_k() -> None:
    entries = _entries(3)
    texts = [f"note {i}\nalpha fact number {i}" for i in range(3)]
    vectors = {texts[0]: [0.0, 1.0], texts[1]: [1.0, 0.0], texts[2]: [0.6, 0.8], "alpha": [1.0, 0.0]}
    assert vector_select(entries, "alpha", 3, _recording_embed(vectors, [])) == [1, 2]  # entry 0 scores exactly 0
    assert vector_select(entries, "alpha", 1, _recording_embed(vectors, [])) == [1]


def test_the_vector_lane_embeds_nothing_without_entries_a_query_or_a_positive_k() -> None:
    """Bug this guards: embedding calls (counted in the sample's usage) made for a choice that must be empty, and a
    negative K slicing ``ranked[:-1]`` (every entry but the last)."""
    for entries, query, k in ((_entries(3), "   ", 3), ((), "alpha", 3), (_entries(3), "alpha", 0),
                              (_entries(3), "alpha", -1)):
        kinds: list[str] = []
        assert vector_select(entries, query, k, _recording_embed({"alpha": [1.0, 0.0]}, kinds)) == []
        assert kinds == [], (query, k)


def test_the_judges_request_is_the_exact_schema_and_roles_a_provider_enforces() -> None:
    """Bug this guards: a misspelt schema key or role is ignored by a provider (the judge then answers freely)."""
    entries = _entries(2)
    messages, response_format = judge_request(entries, "Which fact?", 2)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == JUDGE_SYSTEM.format(k=2) and "at most 2 entries" in messages[0]["content"]
    assert response_format == {"type": "json_schema", "json_schema": {"name": "memory_selection", "strict": True, "schema": {
        "type": "object", "additionalProperties": False, "required": ["selected"],
        "properties": {"selected": {"type": "array", "maxItems": 2, "items": {"type": "string", "enum": ["e1", "e2"]}}}}}}


def test_the_judge_is_shown_a_first_line_whole_up_to_its_limit_and_cut_with_a_mark_past_it() -> None:
    exact, longer = "x" * JUDGE_FIRST_LINE_CHARS, "y" * (JUDGE_FIRST_LINE_CHARS + 1)
    entries = (DocumentEntry(title="a", content=exact), DocumentEntry(title="b", content=longer),
               DocumentEntry(title="c", content="\n  \n"))
    user = judge_request(entries, "q", 3)[0][1]["content"]
    assert f"[e1] a — {exact}\n" in user
    assert f"[e2] b — {'y' * (JUDGE_FIRST_LINE_CHARS - 1)}…\n" in user
    assert user.endswith("[e3] c — ")  # no content line: the title alone, nothing invented


def test_the_judges_reply_of_another_shape_or_a_k_of_zero_chooses_nothing() -> None:
    entries = _entries(3)
    assert judge_choice('["e1"]', entries, 3) == []  # a list, not the object asked for
    assert judge_choice('{"selected": [["e1"], {"id": "e2"}, "e3"]}', entries, 3) == [2]  # ids that are not text
    assert judge_choice('{"selected": ["e1"]}', entries, 0) == []


def test_the_section_keeps_the_first_entry_ignores_indices_out_of_range_and_is_empty_without_a_choice() -> None:
    entries = _entries(3)
    section = topk_section(entries, [0, 3, -1], 3)
    assert "## note 0" in section and section.count("\n## ") == 1
    assert topk_section(entries, [], 3) == "" and topk_section(entries, [3], 3) == ""
    assert topk_section(entries, [1], 0) == ""


def test_the_judge_is_shown_the_title_unless_it_is_the_first_lines_beginning() -> None:
    """Bug this guards: a title ending in ``X`` read as a shortened first line (its last letter stripped as if it
    were the ellipsis), or a shortened title with a space before its ellipsis not recognised."""
    entries = (DocumentEntry(title="Rule X", content="Rule Y applies from Monday."),
               DocumentEntry(title="The dev …", content="The dev-server runs on 5174."))
    user = judge_request(entries, "q", 2)[0][1]["content"]
    assert "[e1] Rule X — Rule Y applies from Monday.\n[e2] The dev-server runs on 5174." in user
