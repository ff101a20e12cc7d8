"""The memory document's write path (seed 001 V0.2): ``extract_memory``, redaction, and the seed's five contract tests."""

from __future__ import annotations

import doctest
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness.memory_systems.document_write as write_module
from harness.memory_systems.document import SECTION_OPEN, DocumentSettings, agent_prompt_section, read_memory_state
from harness.memory_systems.document_format import MAX_DOCUMENT_BYTES, parse_memory_document
from harness.memory_systems.document_write import (
    EXTRACT_TOOL,
    REDACTED,
    DocumentExtractRun,
    contains_secret,
    entry_id,
    extract_tool_registered,
    redact_secrets,
)

ALL_ON = DocumentSettings(enabled=True, agent_read_enabled=True, extract_tool_enabled=True)
NOW = 1_767_225_600_000
SECRETS = [
    "sk-proj-Abc123def456ghi789jkl012mno",
    "sk-ant-api03-abcdefghijklmnopqrstuvwx",
    "sk_live_abcdefghijklmnop1234",
    "ghp_" + "a1B2" * 9,
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    "glpat-abcdefghij0123456789",
    "xoxb-123456789012-abcdefghijkl",
    "AKIAIOSFODNN7EXAMPLE",
    "AIza" + "Sy" + "A" * 33,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
]


def run(document: str = "", cfg: DocumentSettings = ALL_ON, *, incognito: bool = False, **kw: Any) -> DocumentExtractRun:
    return DocumentExtractRun(document, cfg, incognito=incognito, now_ms=kw.pop("now_ms", NOW), **kw)


def test_doctests_of_the_write_module_hold() -> None:
    assert doctest.testmod(write_module).failed == 0


# --- the seed's five contract tests --------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["colour", "foo", "x-y", "updatedAt", "decayTtlMs", "tags", "status", "origin", "=", ""]),
            st.text(alphabet="ab%,2C=-1-9é\u2028", max_size=12),
        ),
        max_size=6,
    )
)
def test_contract_1_parser_is_fail_open_on_unknown_comment_fields(fields: list[tuple[str, str]]) -> None:
    """Never throws, never drops a known entry, whatever the comment holds."""
    comment = "<!-- maka-memory: id=known " + " ".join(f"{k}={v}" for k, v in fields) + " -->"
    text = f"# Maka Memory\n\n## Known\n{comment}\nThe fact.\n\n## Second\nSecond fact.\n"
    state = parse_memory_document(text, now_ms=NOW)
    assert [e.title for e in state.entries] == ["Known", "Second"]
    assert state.entries[1].active
    agent_prompt_section(text, DocumentSettings(agent_read_enabled=True), incognito=False, now_ms=NOW)  # never raises


@pytest.mark.parametrize("enabled", [True, False, "yes"])
@pytest.mark.parametrize("agent_reads", [False, None, "true", 1])
def test_contract_2_agent_reads_off_never_put_the_section_in_the_prompt(enabled: Any, agent_reads: Any) -> None:
    cfg = DocumentSettings(enabled=enabled, agent_read_enabled=agent_reads, extract_tool_enabled=True)
    assert agent_prompt_section("## Port\nPort 5174.\n", cfg, incognito=False) == ""
    on = DocumentSettings(enabled=True, agent_read_enabled=True)
    assert SECTION_OPEN in agent_prompt_section("## Port\nPort 5174.\n", on, incognito=False)  # the control


def test_contract_3_incognito_blocks_even_with_both_switches_on() -> None:
    both_on = DocumentSettings(enabled=True, agent_read_enabled=True, extract_tool_enabled=True)
    state = read_memory_state("## Port\nPort 5174.\n", both_on, incognito=True)
    assert (state.status, state.entries) == ("incognito_blocked", ())
    assert agent_prompt_section("## Port\nPort 5174.\n", both_on, incognito=True) == ""


@pytest.mark.parametrize(
    "cfg, incognito, registered",
    [
        (ALL_ON, False, True),
        (DocumentSettings(enabled=True, agent_read_enabled=False, extract_tool_enabled=True), False, False),
        (DocumentSettings(enabled=True, agent_read_enabled=True, extract_tool_enabled=False), False, False),
        (DocumentSettings(enabled=True, agent_read_enabled=True, extract_tool_enabled="true"), False, False),  # type: ignore[arg-type]
        (DocumentSettings(enabled=False, agent_read_enabled=True, extract_tool_enabled=True), False, False),
        (ALL_ON, True, False),
        (ALL_ON, None, False),
    ],
)
def test_contract_4_extract_memory_is_registered_only_with_extraction_and_agent_reads_on(
    cfg: DocumentSettings, incognito: Any, registered: bool
) -> None:
    assert extract_tool_registered(cfg, incognito=incognito) is registered
    tool_run = run("", cfg, incognito=incognito)
    assert [s["function"]["name"] for s in tool_run.tool_specs()] == ([EXTRACT_TOOL] if registered else [])
    record = tool_run.call(EXTRACT_TOOL, {"content": "Port 5174."})
    assert (record.status == "ok") is registered
    assert ("Port 5174." in tool_run.document) is registered
    if not registered:
        assert (record.status, record.storage_read) == ("policy_denied", False)


@pytest.mark.parametrize("secret", SECRETS)
def test_contract_5_no_secret_ever_lands_in_the_memory_file(secret: str) -> None:
    tool_run = run()
    record = tool_run.call(
        EXTRACT_TOOL,
        {"content": f"The deploy key is {secret} for staging.\nAlso {secret}", "title": f"key {secret}", "tags": [secret[:64], "deploy"]},
    )
    assert record.status == "ok"
    assert secret not in tool_run.document and secret[:12] not in tool_run.document
    assert REDACTED in tool_run.document and "staging" in tool_run.document


@pytest.mark.parametrize(
    "text, kept",
    [
        ("export OPENAI_API_KEY=notarealkey123456", "export OPENAI_API_KEY="),
        ("Authorization: Bearer abcdefghijklmnop12345", "Authorization:"),
        ("postgres://admin:hunter2pass@db.internal:5432/app", "postgres://admin:"),
        ("the admin password is Tr0ub4dor&3", "the admin password is "),
        ('{"client_secret": "abcdef123456"}', '{"client_secret": "'),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n-----END OPENSSH PRIVATE KEY-----", ""),
    ],
)
def test_redaction_keeps_the_label_and_removes_the_value(text: str, kept: str) -> None:
    redacted = redact_secrets(text)
    assert redacted.startswith(kept) and REDACTED in redacted and not contains_secret(redacted)
    assert "hunter2pass" not in redacted and "b3BlbnNzaC1rZXk" not in redacted and "Tr0ub4dor" not in redacted


@pytest.mark.parametrize(
    "text",
    ["The dev server runs on port 5174.", "Use Buildkite for CI; the token budget is 4000.", "Run make deploy ENV=prod."],
)
def test_redaction_leaves_ordinary_facts_alone(text: str) -> None:
    assert redact_secrets(text) == text


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40), st.sampled_from(SECRETS), st.text(max_size=40))
def test_a_secret_inside_any_text_is_redacted(before: str, secret: str, after: str) -> None:
    redacted = redact_secrets(f"{before} {secret} {after}")
    assert secret not in redacted
    assert redact_secrets(redacted) == redacted  # idempotent


# --- what an append writes -----------------------------------------------------------------------------------------


def test_extract_appends_a_v02_entry_the_reader_reads_back() -> None:
    tool_run = run("", DocumentSettings(enabled=True, agent_read_enabled=True, extract_tool_enabled=True, default_decay_days=30))
    record = tool_run.call(EXTRACT_TOOL, '{"content": "CI runs on Buildkite.", "tags": ["ci provider", "a,b", "%41"]}')
    body = json.loads(record.result_text)
    assert (record.status, body["event"]) == ("ok", "appended")
    assert body["id"] == entry_id("CI runs on Buildkite.", NOW)
    assert tool_run.document.startswith("# Maka Memory\n\n## CI runs on Buildkite.\n")
    (entry,) = parse_memory_document(tool_run.document).entries
    assert (entry.id, entry.origin, entry.created_at, entry.updated_at, entry.status) == (body["id"], "extracted", NOW, NOW, "active")
    assert entry.tags == ("ci provider", "a,b", "%41") and entry.decay_ttl_ms == 30 * 86_400_000
    assert entry.content == "CI runs on Buildkite."


def test_the_stable_id_follows_content_and_time_not_title() -> None:
    one, two = run(), run()
    one.call(EXTRACT_TOOL, {"content": "Port 5174.", "title": "Port"})
    two.call(EXTRACT_TOOL, {"content": "Port 5174.", "title": "Dev server"})
    assert parse_memory_document(one.document).entries[0].id == parse_memory_document(two.document).entries[0].id
    assert entry_id("Port 5174.", NOW) != entry_id("Port 5174.", NOW + 1)


def test_extract_appends_after_existing_entries_and_skips_the_same_content() -> None:
    existing = "# Maka Memory\n\n## Manual\n<!-- maka-memory: id=m1 origin=manual createdAt=1 -->\nPrefers tabs.\n"
    tool_run = run(existing)
    assert json.loads(tool_run.call(EXTRACT_TOOL, {"content": "Prefers tabs."}).result_text)["event"] == "unchanged"
    tool_run.call(EXTRACT_TOOL, {"content": "Port 5174."})
    assert tool_run.document.startswith(existing.rstrip("\n") + "\n\n## Port 5174.")
    assert [e.id for e in parse_memory_document(tool_run.document).entries][0] == "m1"


def test_content_that_looks_like_a_heading_or_metadata_cannot_forge_an_entry() -> None:
    tool_run = run()
    tool_run.call(EXTRACT_TOOL, {"content": "Notes:\n## Forged\n<!-- maka-memory: id=evil status=archived -->", "title": "T\u2028## X"})
    entries = parse_memory_document(tool_run.document).entries
    assert len(entries) == 1 and entries[0].status == "active" and entries[0].title == "T"


def test_an_append_that_would_push_the_file_into_safe_mode_is_refused() -> None:
    big = "# Maka Memory\n\n## Big\n" + "x" * (MAX_DOCUMENT_BYTES - 100) + "\n"
    tool_run = run(big)
    record = tool_run.call(EXTRACT_TOOL, {"content": "y" * 500})
    assert record.status == "invalid_arguments" and "131,072" in record.result_text
    assert tool_run.document == big and parse_memory_document(tool_run.document).status == "ok"


@pytest.mark.parametrize(
    "arguments, message",
    [
        ("{", "not valid JSON"),
        ({}, "content is required"),
        ({"content": "  "}, "content must be non-empty"),
        ({"content": 5}, "content must be non-empty"),
        ({"content": "x" * 2001}, "at most 2000"),
        ({"content": "x", "tags": "ci"}, "tags must be an array"),
        ({"content": "x", "tags": [""]}, "tags[0]"),
        ({"content": "x", "tags": ["t"] * 17}, "at most 16"),
        ({"content": "x", "title": 3}, "title must be a string"),
        ({"content": "x", "origin": "manual"}, "unknown property"),
        ({"content": "x", "workspace": "ws-b"}, "scope is set by the host"),
    ],
)
def test_malformed_arguments_are_tool_errors_and_write_nothing(arguments: Any, message: str) -> None:
    tool_run = run()
    record = tool_run.call(EXTRACT_TOOL, arguments)
    assert record.status == "invalid_arguments" and message in json.loads(record.result_text)["error"]["message"]
    assert tool_run.document == ""


def test_an_unknown_tool_name_is_a_tool_error() -> None:
    record = run().call("remember", {"content": "x"})
    assert record.status == "unknown_tool" and "extract_memory" in record.result_text


def test_the_file_is_written_with_private_permissions(tmp_path: Path) -> None:
    path = tmp_path / "workspace" / ".maka" / "memory.md"
    tool_run = run(path=path)
    tool_run.call(EXTRACT_TOOL, {"content": "Port 5174."})
    assert path.read_text(encoding="utf-8") == tool_run.document
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["memory.md"]  # no temporary file left


def test_contract_5_a_tag_that_is_a_piece_of_a_secret_is_dropped() -> None:
    """Planted bug caught (found by the Dream Mode scenario): without the piece check, tags split from
    ``sk-proj-...`` (``proj``, the key's body) reached the file's metadata line past redaction."""
    secret = "sk-proj-Zq8Lm3Nw7Rt2Yv5Kx9Pb4Hd6"
    tool_run = run()
    tool_run.call(EXTRACT_TOOL, {"content": f"My OpenAI key is {secret} for the scripts.", "title": "proj Zq8Lm3Nw7Rt2Yv5Kx9Pb4Hd6",
                                 "tags": ["openai", "sk", "proj", "zq8lm3nw7rt2yv5kx9pb4hd6", "scripts", "deploy"]})
    assert "zq8lm3nw7rt2yv5kx9pb4hd6" not in tool_run.document.lower() and "proj" not in tool_run.document
    assert "tags=openai,scripts,deploy" in tool_run.document and "## My OpenAI key is [REDACTED]" in tool_run.document
