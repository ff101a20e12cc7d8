"""The exact argument errors a model reads, and the admission order (memory_tools.policy).

The model can only repair a call it understands, so each message names the
argument, what was wrong with it (its JSON type or value) and what to send
instead. These tables pin the texts; mutation testing found them unpinned.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from memory_tools.model import MatchMode
from memory_tools.policy import (
    MAX_ARGUMENT_CHARS,
    DenialReason,
    MemoryPolicy,
    RunContext,
    ToolArgumentError,
    admission,
    decode_arguments,
    limit_argument,
    parse_get_arguments,
    parse_search_arguments,
)

SEARCH_EXAMPLE = '{"terms": ["coffee"], "match": "exact"}'
GET_EXAMPLE = '{"itemId": "<itemId>"}'
SCOPE_SET_BY_HOST = "scope is set by the host, not by the tool call"


def _search_error(arguments: dict[str, Any]) -> str:
    with pytest.raises(ToolArgumentError) as caught:
        parse_search_arguments(arguments)
    return str(caught.value)


@pytest.mark.parametrize(("arguments", "message"), [
    ({}, 'terms is required: an array of 1 to 32 key strings, e.g. ["coffee", "咖啡"]'),
    ({"terms": None}, 'terms is required: an array of 1 to 32 key strings, e.g. ["coffee", "咖啡"]'),
    ({"terms": "coffee"}, 'terms must be an array of strings, e.g. ["coffee"], got a string'),
    ({"terms": {"a": 1}}, 'terms must be an array of strings, e.g. ["coffee"], got an object'),
    ({"terms": ("a",)}, 'terms must be an array of strings, e.g. ["coffee"], got tuple'),
    ({"terms": []}, "terms is empty: give at least one term"),
    ({"terms": ["a"] * 33}, "terms has 33 entries; at most 32 are allowed"),
    ({"terms": ["ok", 5, 2.5, True, None]},
     "terms[1] must be a string, got a number; terms[2] must be a string, got a number; "
     "terms[3] must be a string, got a boolean; terms[4] must be a string, got null"),
    ({"terms": [[], {}, "ok"]}, "terms[0] must be a string, got an array; terms[1] must be a string, got an object"),
    ({"terms": ["x"], "match": "fuzzy"}, 'match must be "exact" or "prefix", got "fuzzy"'),
    ({"terms": ["x"], "match": "EXACT"}, 'match must be "exact" or "prefix", got "EXACT"'),
    ({"terms": ["x"], "match": 5}, 'match must be "exact" or "prefix", got 5'),
    ({"terms": ["x"], "match": "m" * 100}, 'match must be "exact" or "prefix", got "' + "m" * 56 + "..."),
    ({"terms": ["x"], "match": "m" * 58}, 'match must be "exact" or "prefix", got "' + "m" * 58 + '"'),
    ({"terms": ["x"], "match": {1, 2}}, 'match must be "exact" or "prefix", got set'),
    ({"terms": ["x"], "match": "咖啡"}, 'match must be "exact" or "prefix", got "咖啡"'),
    ({"terms": ["x"], "limit": "3"}, 'limit must be an integer from 1 to 10, got "3"'),
    ({"terms": ["x"], "limit": True}, "limit must be an integer from 1 to 10, got true"),
    ({"terms": ["x"], "limit": 2.5}, "limit must be an integer from 1 to 10, got 2.5"),
    ({"terms": ["x"], "limit": math.inf}, "limit must be an integer from 1 to 10, got Infinity"),
    ({"terms": ["x"], "limit": 0}, "limit must be at least 1, got 0"),
    ({"terms": ["x"], "limit": -3.0}, "limit must be at least 1, got -3"),
    ({"terms": ["x"], "workspaceKey": "ws-b"}, f'unknown property "workspaceKey": {SCOPE_SET_BY_HOST}'),
    ({"terms": ["x"], "INCLUDE_ARCHIVED": True}, f'unknown property "INCLUDE_ARCHIVED": {SCOPE_SET_BY_HOST}'),
    ({"terms": ["x"], "query": "x"}, 'unknown property "query"; accepted: terms, match, limit'),
    ({"terms": ["x"], "b": 1, "a": 1}, 'unknown property "a"; accepted: terms, match, limit; '
                                       'unknown property "b"; accepted: terms, match, limit'),
])
def test_search_argument_errors_name_the_argument_and_the_fix(arguments: dict[str, Any], message: str) -> None:
    assert _search_error(arguments) == message


def test_at_most_five_problems_are_listed_and_the_rest_counted() -> None:
    arguments = {"terms": [1, 2, 3, 4, 5, 6, 7]}
    assert _search_error(arguments) == "; ".join(
        f"terms[{i}] must be a string, got a number" for i in range(5)) + "; and 2 more problem(s)"
    exactly_five = {"terms": [1, 2, 3, 4, 5]}
    assert _search_error(exactly_five).endswith("terms[4] must be a string, got a number")


def test_a_bad_term_reports_the_normalizer_message() -> None:
    assert _search_error({"terms": ["ok", "  "]}).startswith("terms[1]")


@pytest.mark.parametrize(("arguments", "limit", "capped"), [
    ({}, 5, False), ({"limit": None}, 5, False), ({"limit": 1}, 1, False), ({"limit": 10}, 10, False),
    ({"limit": 11}, 10, True), ({"limit": 2.0}, 2, False), ({"limit": 10**6}, 10, True),
])
def test_limit_defaults_to_five_and_is_clamped_to_ten(arguments: dict[str, Any], limit: int, capped: bool) -> None:
    parsed = parse_search_arguments({"terms": ["Coffee ", "coffee", "Tea"], **arguments})
    assert (parsed.limit, parsed.limit_capped) == (limit, capped)
    assert parsed.terms == ("Coffee ", "coffee", "Tea") and parsed.normalized_terms == ("coffee", "tea")
    assert parsed.match is MatchMode.EXACT


@pytest.mark.parametrize(("raw", "message"), [
    ("ten", 'limit must be an integer from 1 to 10, got "ten"'), (0, "limit must be at least 1, got 0"),
])
def test_an_invalid_limit_gives_the_default_uncapped_and_says_why(raw: object, message: str) -> None:
    """``memory_search`` and the named ``recall`` share this rule; both raise on the error, but the pair
    itself must not claim a cap that never happened (planted: ``return default, True`` after an error)."""
    errors: list[str] = []
    assert limit_argument({"limit": raw}, errors, 5, 10) == (5, False)
    assert errors == [message]


@pytest.mark.parametrize("match", ["exact", "prefix"])
def test_match_accepts_exact_and_prefix(match: str) -> None:
    assert parse_search_arguments({"terms": ["x"], "match": match}).match is MatchMode(match)


@pytest.mark.parametrize(("arguments", "message"), [
    ({}, "itemId is required: the itemId of a memory_search result"),
    ({"itemId": None}, "itemId is required: the itemId of a memory_search result"),
    ({"itemId": 7}, "itemId must be a string, got a number"),
    ({"itemId": ["a"]}, "itemId must be a string, got an array"),
    ({"itemId": "a", "workspace": "ws-b"}, f'unknown property "workspace": {SCOPE_SET_BY_HOST}'),
    ({"itemId": "a", "id": "a"}, 'unknown property "id"; accepted: itemId'),
])
def test_get_argument_errors_name_the_argument_and_the_fix(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        parse_get_arguments(arguments)
    assert str(caught.value) == message


def test_a_malformed_item_id_says_to_pass_it_as_returned() -> None:
    with pytest.raises(ToolArgumentError) as caught:
        parse_get_arguments({"itemId": " it-1"})
    assert str(caught.value) == ("itemId must not start or end with whitespace (got ' it-1'); "
                                 "pass the itemId exactly as memory_search returned it")
    assert parse_get_arguments({"itemId": "it-1"}).item_id == "it-1"


@pytest.mark.parametrize(("raw", "tool", "message"), [
    (5, "memory_search", f"arguments must be a JSON object such as {SEARCH_EXAMPLE}"),
    (["a"], "memory_get", f"arguments must be a JSON object such as {GET_EXAMPLE}"),
    ("[1]", "memory_search", f"arguments must be a JSON object such as {SEARCH_EXAMPLE}, got an array"),
    ('"x"', "memory_get", f"arguments must be a JSON object such as {GET_EXAMPLE}, got a string"),
    ("null", "memory_get", f"arguments must be a JSON object such as {GET_EXAMPLE}, got null"),
    ("{bad", "memory_search", "arguments are not valid JSON (Expecting property name enclosed in double quotes "
                              f"at position 1); send one JSON object such as {SEARCH_EXAMPLE}"),
    ('{"terms": 1, "terms": 2}', "memory_search", 'property "terms" appears more than once'),
    ("1" * 5000, "memory_search", f"arguments could not be decoded; send one JSON object such as {SEARCH_EXAMPLE}"),
    ("[" * 10_000 + "]" * 10_000, "memory_get", f"arguments could not be decoded; send one JSON object such as {GET_EXAMPLE}"),
    ("x" * (MAX_ARGUMENT_CHARS + 1), "memory_search",
     f"arguments are {MAX_ARGUMENT_CHARS + 1} characters long; at most {MAX_ARGUMENT_CHARS} are accepted"),
])
def test_undecodable_arguments_get_a_readable_error(raw: object, tool: str, message: str) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        decode_arguments(raw, tool)
    assert str(caught.value) == message


def test_a_callers_own_example_is_shown_and_a_tool_without_one_is_shown_an_empty_object() -> None:
    """Another host's tools reuse ``decode_arguments``: its own example, else ``{}``, never another tool's."""
    with pytest.raises(ToolArgumentError) as own:
        decode_arguments("{", "memory_search", '{"query": "x"}')
    assert str(own.value).endswith('send one JSON object such as {"query": "x"}')
    with pytest.raises(ToolArgumentError) as other:
        decode_arguments(7, "lookup")
    assert str(other.value) == "arguments must be a JSON object such as {}"


@pytest.mark.parametrize("raw", [None, "", "  \n", " " * MAX_ARGUMENT_CHARS])
def test_absent_or_blank_arguments_decode_to_no_arguments(raw: str | None) -> None:
    assert decode_arguments(raw, "memory_search") == {}


def test_decoded_arguments_are_returned_as_given() -> None:
    given = {"terms": ["x"]}
    assert decode_arguments(given, "memory_search") is given
    assert decode_arguments('{"terms": ["x"], "limit": 2}', "memory_get") == {"terms": ["x"], "limit": 2}


@pytest.mark.parametrize(("policy", "context", "reason"), [
    (MemoryPolicy(agent_read_enabled=True), RunContext("ws-a"), None),
    (MemoryPolicy(agent_read_enabled=True), RunContext(None), None),
    (MemoryPolicy(agent_read_enabled=True), "ws-a", DenialReason.INVALID_RUN_CONTEXT),
    ({"enabled": True}, RunContext("ws-a"), DenialReason.INVALID_POLICY),
    # incognito is checked before the policy: a private run is denied as private whatever the policy
    ({"enabled": True}, RunContext("ws-a", incognito=True), DenialReason.INCOGNITO),
    (MemoryPolicy(enabled=False, agent_read_enabled=True), RunContext("ws-a", incognito=True), DenialReason.INCOGNITO),
    (MemoryPolicy(enabled=False, agent_read_enabled=False), RunContext("ws-a"), DenialReason.MEMORY_DISABLED),
    (MemoryPolicy(enabled=True), RunContext("ws-a"), DenialReason.AGENT_READS_DISABLED),
    (MemoryPolicy(agent_read_enabled=True), RunContext(" ws-a"), DenialReason.INVALID_WORKSPACE_KEY),
    (MemoryPolicy(enabled=False, agent_read_enabled=True), RunContext(" ws-a"), DenialReason.MEMORY_DISABLED),
])
def test_admission_gives_the_first_reason_in_its_documented_order(
    policy: object, context: object, reason: DenialReason | None
) -> None:
    assert admission(policy, context) is reason


def test_the_default_policy_keeps_agent_reads_off() -> None:
    assert admission(MemoryPolicy(), RunContext("ws-a")) is DenialReason.AGENT_READS_DISABLED
    assert RunContext().workspace_key is None and RunContext().incognito is False
