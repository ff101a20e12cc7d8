"""``recall-eval import transcripts``: logged sessions -> unlabelled probes, and every bad input decided."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.importers import FaultLog, ImporterError, import_transcripts
from harness.redaction import Redactor, pattern_digest
from harness.scenarios import load_scenarios
from tests.importers.transcript_fixtures import (
    SECRET,
    imported_transcripts,
    message,
    scenarios_of,
    suite_json,
    two_sessions,
    write_jsonl,
)


def test_each_later_session_first_user_message_is_an_unlabelled_probe(tmp_path: Path) -> None:
    out, lines = imported_transcripts(tmp_path, two_sessions())
    (scenario,) = scenarios_of(out).values()
    assert scenario["probe"]["message"] == "Which port did we pick for staging?"
    assert scenario["probe"]["workspace"] == "acme"
    assert [s["id"] for s in scenario["sessions"]] == ["s1"]
    assert scenario["sessions"][0]["turns"][0]["content"] == "Use port 5433 for the staging database."
    assert scenario["items"] == []
    assert "1 unlabelled probes" in lines[0]


def test_the_logged_reply_is_a_reference_never_a_gold(tmp_path: Path) -> None:
    out, _ = imported_transcripts(tmp_path, two_sessions())
    (scenario,) = scenarios_of(out).values()
    assert scenario["expect"] == {"unlabelled": True, "logged_reply": "You picked 5433."}
    (loaded,) = load_scenarios([out])
    assert loaded.expect.unlabelled and not loaded.expect.must_contain_any and loaded.expect.f1_reference is None


def test_the_probe_history_is_the_turns_before_it_in_its_session(tmp_path: Path) -> None:
    opener = message("s2", "assistant", "Good morning! How can I help?", "2026-03-02T08:59:59Z")
    out, _ = imported_transcripts(tmp_path, [*two_sessions()[:2], opener, *two_sessions()[2:]])
    (scenario,) = scenarios_of(out).values()
    assert scenario["probe"]["history"] == [{"role": "assistant", "content": "Good morning! How can I help?"}]


def test_sessions_out_of_order_in_the_file_are_sorted_and_counted(tmp_path: Path) -> None:
    later_first = [*two_sessions()[2:], *two_sessions()[:2]]
    out, lines = imported_transcripts(tmp_path, later_first)
    (scenario,) = scenarios_of(out).values()
    assert scenario["probe"]["message"].startswith("Which port")
    assert suite_json(out)["repairs"]["sessions out of time order in the input, sorted by their first message"]["count"] == 1
    assert any("sessions out of time order" in line for line in lines)


def test_messages_of_a_session_out_of_time_order_are_sorted(tmp_path: Path) -> None:
    swapped = [two_sessions()[1], two_sessions()[0], *two_sessions()[2:]]
    out, _ = imported_transcripts(tmp_path, swapped)
    (scenario,) = scenarios_of(out).values()
    assert [t["role"] for t in scenario["sessions"][0]["turns"]] == ["user", "assistant"]
    assert "messages of a session out of time order, sorted by time" in suite_json(out)["repairs"]


def test_a_message_without_a_time_takes_the_time_before_it(tmp_path: Path) -> None:
    messages = two_sessions()
    del messages[1]["timestamp"]
    out, _ = imported_transcripts(tmp_path, messages)
    (scenario,) = scenarios_of(out).values()
    assert scenario["sessions"][0]["turns"][1]["content"] == "Noted: staging uses 5433."
    repair = suite_json(out)["repairs"]["message without a time, given the time of the message before it"]
    assert repair == {"count": 1, "examples": ["log.jsonl:2"]}


def test_a_session_without_any_time_is_dropped_and_counted(tmp_path: Path) -> None:
    untimed = [message("s0", "user", "Hello there", None), message("s0", "assistant", "Hi", None)]
    out, _ = imported_transcripts(tmp_path, [*untimed, *two_sessions()])
    (scenario,) = scenarios_of(out).values()
    assert [s["id"] for s in scenario["sessions"]] == ["s1"]
    assert suite_json(out)["drops"]["session without any message time (cannot be placed in time)"] == {
        "count": 1, "examples": ["session 's0' (log.jsonl:1)"]}


def test_an_unreadable_time_exits_naming_line_and_field(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[2]["timestamp"] = "yesterday"
    with pytest.raises(ImporterError, match=r"log\.jsonl:3: field 'timestamp' 'yesterday' is not a time"):
        imported_transcripts(tmp_path, messages)
    assert not (tmp_path / "suite").exists()  # refused before anything is written


def test_epoch_seconds_and_milliseconds_are_both_times(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[0]["timestamp"], messages[1]["timestamp"] = 1772359200, 1772359205000  # 2026-03-01T10:00:00Z, +5 s
    out, _ = imported_transcripts(tmp_path, messages)
    (scenario,) = scenarios_of(out).values()
    assert scenario["sessions"][0]["started_at"] == "2026-03-01T10:00:00.000Z"


def test_a_session_without_a_workspace_runs_in_none_and_is_reported(tmp_path: Path) -> None:
    messages = [message(m["session_id"], m["role"], m["content"], m["timestamp"], workspace=None) for m in two_sessions()]
    out, _ = imported_transcripts(tmp_path, messages)
    (scenario,) = scenarios_of(out).values()
    assert scenario["probe"]["workspace"] is None and scenario["sessions"][0]["workspace"] is None
    reported = suite_json(out)["reports"]["session without a workspace, imported as running in none (global scope only)"]
    assert reported["count"] == 2


def test_a_workspace_missing_on_some_messages_is_the_session_s_workspace(tmp_path: Path) -> None:
    messages = two_sessions()
    del messages[3]["workspace"]
    out, _ = imported_transcripts(tmp_path, messages)
    (scenario,) = scenarios_of(out).values()
    assert scenario["probe"]["workspace"] == "acme"
    assert "reports" not in suite_json(out)


def test_one_session_in_two_workspaces_exits_naming_both_lines(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[3]["workspace"] = "other"
    with pytest.raises(ImporterError, match=r"log\.jsonl:4: field 'workspace' 'other' differs from 'acme' at log\.jsonl:3"):
        imported_transcripts(tmp_path, messages)


def test_a_workspace_that_is_not_an_identifier_exits_naming_it(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[0]["workspace"] = "acme/web"
    with pytest.raises(ImporterError, match=r"log\.jsonl:1: field 'workspace' 'acme/web' is not an identifier"):
        imported_transcripts(tmp_path, messages)


def test_a_session_with_only_assistant_turns_is_dropped_and_counted(tmp_path: Path) -> None:
    notice = [message("s0", "assistant", "Your trial ends tomorrow.", "2026-02-28T10:00:00Z")]
    out, _ = imported_transcripts(tmp_path, [*notice, *two_sessions()])
    (scenario,) = scenarios_of(out).values()
    assert [s["id"] for s in scenario["sessions"]] == ["s1"]
    assert suite_json(out)["drops"]["session with only assistant turns (nothing the user said)"] == {
        "count": 1, "examples": ["session 's0' (log.jsonl:1)"]}


def test_a_repeated_message_is_dropped_and_counted(tmp_path: Path) -> None:
    messages = two_sessions()
    out, _ = imported_transcripts(tmp_path, [*messages[:2], messages[0], *messages[2:]])
    (scenario,) = scenarios_of(out).values()
    assert len(scenario["sessions"][0]["turns"]) == 2
    assert suite_json(out)["drops"]["repeated message (same session, role, text and time)"] == {
        "count": 1, "examples": ["log.jsonl:3"]}


def test_the_same_text_at_another_time_is_not_a_repeat(tmp_path: Path) -> None:
    messages = two_sessions()
    again = message("s1", "user", messages[0]["content"], "2026-03-01T10:01:00Z")
    out, _ = imported_transcripts(tmp_path, [*messages[:2], again, *messages[2:]])
    assert len(next(iter(scenarios_of(out).values()))["sessions"][0]["turns"]) == 3


def test_secrets_in_messages_are_redacted_by_default(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[0]["content"] = f"Use port 5433. The deploy key is {SECRET} and DB_PASSWORD=hunter2hunter2"
    messages[3]["content"] = f"Your key {SECRET} is noted."
    out, lines = imported_transcripts(tmp_path, messages)
    text = "".join(p.read_text(encoding="utf-8") for p in out.iterdir())
    assert SECRET not in text and "hunter2hunter2" not in text
    (scenario,) = scenarios_of(out).values()
    assert "[REDACTED]" in scenario["sessions"][0]["turns"][0]["content"]
    assert scenario["expect"]["logged_reply"] == "Your key [REDACTED] is noted."
    assert suite_json(out)["redaction"] == {"default_patterns": True, "extra_patterns": [], "redacted": 3}
    assert any(line.startswith("redacted: 3 match(es)") for line in lines)


def test_redact_patterns_add_to_the_secret_patterns(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[0]["content"] = "Call Ana at +1 555 0100 about port 5433."
    out, _ = imported_transcripts(tmp_path, messages, redact=(r"\+\d[\d ]{7,}\d",))
    (scenario,) = scenarios_of(out).values()
    assert scenario["sessions"][0]["turns"][0]["content"] == "Call Ana at [REDACTED] about port 5433."
    assert suite_json(out)["redaction"]["extra_patterns"] == [pattern_digest(r"\+\d[\d ]{7,}\d")]  # never the pattern


def test_a_redact_pattern_that_does_not_compile_exits_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ImporterError, match=r"--redact '\(unclosed': not a regular expression"):
        imported_transcripts(tmp_path, two_sessions(), redact=("(unclosed",))


def test_the_import_marks_the_suite_sensitive(tmp_path: Path) -> None:
    out, _ = imported_transcripts(tmp_path, two_sessions())
    assert suite_json(out)["sensitive"] is True and suite_json(out)["complete"] is True


def test_sessions_are_grouped_per_user_and_workspace(tmp_path: Path) -> None:
    other_user = [message(m["session_id"] + "-b", m["role"], m["content"], m["timestamp"], user="u2")
                  for m in two_sessions()]
    other_workspace = [message(m["session_id"] + "-c", m["role"], m["content"], m["timestamp"], workspace="beta")
                       for m in two_sessions()]
    out, _ = imported_transcripts(tmp_path, [*two_sessions(), *other_user, *other_workspace])
    scenarios = scenarios_of(out)
    assert sorted(scenarios) == ["u1.acme.s2", "u1.beta.s2-c", "u2.acme.s2-b"]
    assert [s["id"] for s in scenarios["u2.acme.s2-b"]["sessions"]] == ["s1-b"]


def test_an_earlier_session_still_running_at_the_probe_is_cut_at_its_time(tmp_path: Path) -> None:
    late = message("s1", "user", "One more thing: the cache is redis.", "2026-03-02T09:30:00Z")
    out, _ = imported_transcripts(tmp_path, [*two_sessions(), late])
    (scenario,) = scenarios_of(out).values()
    assert "redis" not in json.dumps(scenario["sessions"])
    assert "earlier session still running at the probe, cut at the probe's time" in suite_json(out)["repairs"]


def test_system_and_tool_messages_are_dropped_and_counted(tmp_path: Path) -> None:
    extra = [message("s1", "system", "You are helpful.", "2026-03-01T09:59:59Z"),
             message("s1", "tool", "{\"rows\": 3}", "2026-03-01T10:00:01Z")]
    out, _ = imported_transcripts(tmp_path, [*extra, *two_sessions()])
    drops = suite_json(out)["drops"]
    assert drops["system message (not a user or assistant turn)"]["count"] == 1
    assert drops["tool message (not a user or assistant turn)"]["count"] == 1


def test_openai_content_parts_are_read_as_text(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[2]["content"] = [{"type": "text", "text": "Which port"}, {"type": "image_url", "image_url": {}},
                              {"type": "text", "text": "for staging?"}]
    out, _ = imported_transcripts(tmp_path, messages)
    assert next(iter(scenarios_of(out).values()))["probe"]["message"] == "Which port\nfor staging?"


def test_a_line_that_is_not_json_exits_naming_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(ImporterError, match=r"log\.jsonl:2: not a JSON object"):
        imported_transcripts(tmp_path, [two_sessions()[0], "{torn", *two_sessions()[1:]])


def test_a_message_without_session_id_exits_naming_the_field(tmp_path: Path) -> None:
    messages = two_sessions()
    del messages[1]["session_id"]
    with pytest.raises(ImporterError, match=r"log\.jsonl:2: field 'session_id' is missing"):
        imported_transcripts(tmp_path, messages)


def test_a_folder_of_session_files_imports_like_the_jsonl(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for sid in ("s1", "s2"):
        msgs = [{"role": m["role"], "content": m["content"], "timestamp": m["timestamp"]}
                for m in two_sessions() if m["session_id"] == sid]
        (folder / f"{sid}.json").write_text(json.dumps({"workspace": "acme", "user_id": "u1", "messages": msgs}),
                                            encoding="utf-8")
    out = tmp_path / "from-folder"
    import_transcripts(folder, out, echo=lambda line: None)
    jsonl, _ = imported_transcripts(tmp_path, two_sessions())
    assert scenarios_of(out) == scenarios_of(jsonl)


def test_two_files_of_one_session_exit_naming_both(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("a.json", "b.json"):
        (folder / name).write_text(json.dumps({"session_id": "s1", "messages": []}), encoding="utf-8")
    with pytest.raises(ImporterError, match=r"b\.json: session_id 's1' is also the session of a\.json"):
        import_transcripts(folder, tmp_path / "out", echo=lambda line: None)


def test_no_group_with_two_sessions_exits_saying_why(tmp_path: Path) -> None:
    with pytest.raises(ImporterError, match=r"no probe: 1 usable session\(s\) in 1 user/workspace group"):
        imported_transcripts(tmp_path, two_sessions()[:2])


def test_the_imported_suite_validates_and_the_output_is_deterministic(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = imported_transcripts(tmp_path, two_sessions())
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    import_transcripts(tmp_path / "log.jsonl", out, echo=lambda line: None)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first
    assert main(["validate", str(out)]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().out


def test_cli_import_transcripts_exits_2_with_one_line_on_bad_input(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    source = write_jsonl(tmp_path / "log.jsonl", [two_sessions()[0], "not json"])
    assert main(["import", "transcripts", str(source), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: log.jsonl:2: not a JSON object") and "Traceback" not in err
    good = write_jsonl(tmp_path / "good.jsonl", two_sessions())
    assert main(["import", "transcripts", str(good), str(tmp_path / "out"), "--redact", "5433"]) == 0
    assert "5433" not in (tmp_path / "out" / "u1.acme.s2.yaml").read_text(encoding="utf-8")


# Round two of mutation testing (issue 50, part 6): each test below is named after what a user would see go wrong.


def _exits(tmp_path: Path, messages: list[Any], pattern: str) -> None:
    """The import of ``messages`` is refused with a message matching ``pattern``."""
    with pytest.raises(ImporterError, match=pattern):
        imported_transcripts(tmp_path, messages)


def test_a_clean_log_is_imported_without_any_repair_drop_or_report(tmp_path: Path) -> None:
    out, lines = imported_transcripts(tmp_path, two_sessions())
    assert suite_json(out)["repairs"] == {} and suite_json(out)["drops"] == {} and "reports" not in suite_json(out)
    assert suite_json(out)["transcripts"] == {"messages": 4, "sessions": 2, "groups": 1}
    assert lines[0].startswith("imported 4 messages, 2 sessions in 1 user/workspace groups: 1 unlabelled probes")
    assert lines[2:] == ["repaired: 0 (nothing)", "dropped: 0 (nothing)"]


def test_the_probe_file_states_its_schema_title_tags_and_description(tmp_path: Path) -> None:
    out, _ = imported_transcripts(tmp_path, two_sessions())
    scenario = scenarios_of(out)["u1.acme.s2"]
    assert scenario["schema_version"] == 1 and scenario["category"] == "logged"
    assert scenario["title"] == "Logged session s2 in acme"
    assert scenario["tags"] == ["transcripts", "workspace:acme", "user:u1"]
    assert scenario["description"] == ("The first user message of session s2 after 1 earlier session(s) of the same "
                                       "user and workspace; logged traffic, no gold answer.")
    assert scenario["probe"]["started_at"] == "2026-03-02T09:00:00.000Z"


def test_a_probe_without_user_or_workspace_has_neither_in_its_title_tags_or_id(tmp_path: Path) -> None:
    messages = [message(m["session_id"], m["role"], m["content"], m["timestamp"], workspace=None, user=None)
                for m in two_sessions()]
    out, _ = imported_transcripts(tmp_path, messages)
    scenario = scenarios_of(out)["s2"]
    assert scenario["title"] == "Logged session s2" and scenario["tags"] == ["transcripts"]


def test_times_are_written_in_utc_whatever_the_machine_s_time_zone(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "XST-5:30")  # a POSIX zone 5 h 30 ahead of UTC (no tz database needed)
    time.tzset()
    try:
        out, _ = imported_transcripts(tmp_path, two_sessions())
    finally:
        monkeypatch.undo()
        time.tzset()
    scenario = scenarios_of(out)["u1.acme.s2"]
    assert scenario["sessions"][0]["started_at"] == "2026-03-01T10:00:00.000Z"
    assert scenario["probe"]["started_at"] == "2026-03-02T09:00:00.000Z"


def test_a_turn_after_a_repeated_message_is_kept(tmp_path: Path) -> None:
    messages = two_sessions()
    more = message("s1", "user", "And the cache is redis.", "2026-03-01T10:00:09Z")
    out, _ = imported_transcripts(tmp_path, [*messages[:2], messages[0], more, *messages[2:]])
    turns = scenarios_of(out)["u1.acme.s2"]["sessions"][0]["turns"]
    assert [t["content"] for t in turns] == [messages[0]["content"], messages[1]["content"], more["content"]]


def test_a_session_s_first_message_without_a_time_takes_the_first_time_there_is(tmp_path: Path) -> None:
    messages = two_sessions()
    del messages[0]["timestamp"]
    out, _ = imported_transcripts(tmp_path, messages)
    earlier = scenarios_of(out)["u1.acme.s2"]["sessions"][0]
    assert earlier["started_at"] == "2026-03-01T10:00:05.000Z"
    assert [t["role"] for t in earlier["turns"]] == ["user", "assistant"]
    assert "messages of a session out of time order, sorted by time" not in suite_json(out)["repairs"]


def test_an_untimed_message_takes_the_time_just_before_it_and_keeps_its_place(tmp_path: Path) -> None:
    messages = two_sessions()
    last = message("s1", "user", "Thanks, that is all.", None)
    out, _ = imported_transcripts(tmp_path, [*messages[:2], last, *messages[2:]])
    turns = scenarios_of(out)["u1.acme.s2"]["sessions"][0]["turns"]
    assert [t["content"] for t in turns][-1] == "Thanks, that is all."
    assert "messages of a session out of time order, sorted by time" not in suite_json(out)["repairs"]


def test_messages_logged_at_the_same_moment_keep_the_file_s_order(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[1]["timestamp"] = messages[0]["timestamp"]  # a log with one-second resolution
    out, _ = imported_transcripts(tmp_path, messages)
    turns = scenarios_of(out)["u1.acme.s2"]["sessions"][0]["turns"]
    assert [t["role"] for t in turns] == ["user", "assistant"]
    assert suite_json(out)["repairs"] == {}


def test_a_turn_of_an_earlier_session_logged_at_the_probe_s_moment_is_cut(tmp_path: Path) -> None:
    same_moment = message("s1", "assistant", "Also: the cache is redis.", "2026-03-02T09:00:00Z")
    out, _ = imported_transcripts(tmp_path, [*two_sessions(), same_moment])
    assert "redis" not in json.dumps(scenarios_of(out)["u1.acme.s2"]["sessions"])


def test_the_logged_reply_is_the_reply_after_the_probe_not_a_greeting_before_it(tmp_path: Path) -> None:
    opener = message("s2", "assistant", "Good morning! How can I help?", "2026-03-02T08:59:59Z")
    out, _ = imported_transcripts(tmp_path, [*two_sessions()[:2], opener, *two_sessions()[2:]])
    assert scenarios_of(out)["u1.acme.s2"]["expect"]["logged_reply"] == "You picked 5433."


def test_a_probe_without_a_logged_reply_has_only_the_unlabelled_mark(tmp_path: Path) -> None:
    out, _ = imported_transcripts(tmp_path, two_sessions()[:3])
    assert scenarios_of(out)["u1.acme.s2"]["expect"] == {"unlabelled": True}


def test_sessions_starting_at_the_probe_s_moment_are_left_out_and_later_probes_still_made(tmp_path: Path) -> None:
    at = "2026-03-02T09:00:00Z"
    same = [message(sid, "user", f"Hello from {sid}.", at) for sid in ("s2a", "s2b")]
    later = message("s3", "user", "Which port again?", "2026-03-03T09:00:00Z")
    out, _ = imported_transcripts(tmp_path, [*two_sessions()[:2], *same, later])
    scenarios = scenarios_of(out)
    assert [s["id"] for s in scenarios["u1.acme.s2a"]["sessions"]] == ["s1"]
    assert [s["id"] for s in scenarios["u1.acme.s2b"]["sessions"]] == ["s1"]  # not s2a: it started with it
    assert [s["id"] for s in scenarios["u1.acme.s3"]["sessions"]] == ["s1", "s2a", "s2b"]
    drop = suite_json(out)["drops"]["earlier session starting with the later one, left out of its probe"]
    assert drop == {"count": 1, "examples": ["session 's2a' before 's2b'"]}


def test_a_later_session_whose_earlier_ones_all_started_with_it_is_no_probe_and_the_next_still_is(
        tmp_path: Path) -> None:
    at = "2026-03-02T09:00:00Z"
    same = [message(sid, "user", f"Hello from {sid}.", at) for sid in ("s2a", "s2b", "s2c")]
    later = message("s3", "user", "Which port again?", "2026-03-03T09:00:00Z")
    out, _ = imported_transcripts(tmp_path, [*same, later])
    scenarios = scenarios_of(out)
    assert sorted(scenarios) == ["u1.acme.s3"]
    assert [s["id"] for s in scenarios["u1.acme.s3"]["sessions"]] == ["s2a", "s2b", "s2c"]
    assert suite_json(out)["drops"]["earlier session starting with the later one, left out of its probe"]["count"] == 3


def _session_folder(tmp_path: Path, files: dict[str, Any]) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return folder


def _folder_files() -> dict[str, Any]:
    return {f"{sid}.json": {"workspace": "acme", "user_id": "u1",
                            "messages": [{k: m[k] for k in ("role", "content", "timestamp")}
                                         for m in two_sessions() if m["session_id"] == sid]} for sid in ("s1", "s2")}


def _import_folder(tmp_path: Path, files: dict[str, Any]) -> Path:
    out = tmp_path / "suite"
    import_transcripts(_session_folder(tmp_path, files), out, echo=lambda line: None)
    return out


def test_a_session_file_may_be_a_bare_list_of_messages_named_by_the_file(tmp_path: Path) -> None:
    files = _folder_files()
    files["s1.json"] = [{**m, "workspace": "acme", "user_id": "u1"} for m in files["s1.json"]["messages"]]
    out = _import_folder(tmp_path, files)
    assert [s["id"] for s in scenarios_of(out)["u1.acme.s2"]["sessions"]] == ["s1"]


def test_files_other_than_json_in_the_folder_are_not_read(tmp_path: Path) -> None:
    out = _import_folder(tmp_path, {**_folder_files(), "README.md": "# exported from the chat service\n"})
    assert sorted(scenarios_of(out)) == ["u1.acme.s2"]


def test_a_folder_without_session_files_exits_saying_what_to_give(tmp_path: Path) -> None:
    folder = _session_folder(tmp_path, {"notes.txt": "nothing"})
    with pytest.raises(ImporterError, match=r"sessions: no \*\.json file in the folder; give one JSON file per "
                                            r"session, or a JSONL file$"):
        import_transcripts(folder, tmp_path / "suite", echo=lambda line: None)


def test_a_session_file_that_is_not_json_exits_naming_the_file_and_the_shape(tmp_path: Path) -> None:
    folder = _session_folder(tmp_path, {**_folder_files(), "s2.json": "{torn"})
    with pytest.raises(ImporterError) as caught:
        import_transcripts(folder, tmp_path / "suite", echo=lambda line: None)
    assert str(caught.value).startswith(f"{folder / 's2.json'}: not a JSON object (")
    assert str(caught.value).endswith("); one JSON object per session file")


def test_a_session_file_without_messages_exits_naming_the_field_and_the_shape(tmp_path: Path) -> None:
    folder = _session_folder(tmp_path, {**_folder_files(), "s2.json": {"workspace": "acme", "turns": []}})
    with pytest.raises(ImporterError) as caught:
        import_transcripts(folder, tmp_path / "suite", echo=lambda line: None)
    assert str(caught.value) == ('s2.json: field \'messages\' is missing; a session file is {"session_id": ..., '
                                 '"workspace": ..., "messages": [...]}')


def test_a_message_of_a_session_file_that_is_not_an_object_exits_naming_file_and_index(tmp_path: Path) -> None:
    files = _folder_files()
    files["s2.json"]["messages"].append("You picked 5433.")
    with pytest.raises(ImporterError, match=r"^s2\.json:messages\[2\]: a message must be a JSON object, not str$"):
        _import_folder(tmp_path, files)


def test_a_bad_role_in_a_session_file_exits_naming_file_and_index(tmp_path: Path) -> None:
    files = _folder_files()
    files["s2.json"]["messages"][1]["role"] = "bot"
    with pytest.raises(ImporterError, match=r"^s2\.json:messages\[1\]: field 'role' 'bot' is not user, assistant, "
                                            r"system or tool$"):
        _import_folder(tmp_path, files)


def test_a_message_of_a_session_file_naming_another_session_exits_instead_of_moving_it(tmp_path: Path) -> None:
    files = _folder_files()
    files["s2.json"]["messages"][1]["session_id"] = "s1"  # would have been moved into s1.json's session
    with pytest.raises(ImporterError, match=r"^s2\.json:messages\[1\]: field 'session_id' 's1' differs from the "
                                            r"file's session 's2'; one file per session$"):
        _import_folder(tmp_path, files)
    files["s2.json"]["messages"][1]["session_id"] = "s2"  # its own session: fine
    assert sorted(scenarios_of(_import_folder(tmp_path / "again", files))) == ["u1.acme.s2"]


def test_two_files_of_one_session_name_the_rule(tmp_path: Path) -> None:
    files = {name: {"session_id": "s1", "messages": []} for name in ("a.json", "b.json")}
    with pytest.raises(ImporterError, match=r"^b\.json: session_id 's1' is also the session of a\.json; one file per "
                                            r"session$"):
        _import_folder(tmp_path, files)


def test_a_session_file_that_cannot_be_read_exits_naming_it_and_the_reason(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _session_folder(tmp_path, _folder_files())
    real = Path.read_bytes

    def refuse(path: Path) -> bytes:
        if path.name == "s2.json":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(ImporterError) as caught:
        import_transcripts(folder, tmp_path / "suite", echo=lambda line: None)
    assert str(caught.value) == f"{folder / 's2.json'}: cannot read: Permission denied"


def test_a_log_that_cannot_be_read_exits_naming_it_and_the_reason(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.importers import transcripts

    log = write_jsonl(tmp_path / "log.jsonl", two_sessions())

    def refuse(path: Path, mode: str = "r") -> Any:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(transcripts, "open", refuse, raising=False)
    with pytest.raises(ImporterError) as caught:
        list(transcripts.read_transcripts(log, FaultLog(), Redactor.build(), transcripts.TranscriptStats()))
    assert str(caught.value) == f"{log}: cannot read: Permission denied"


def test_a_source_that_is_neither_file_nor_folder_exits_saying_what_to_give(tmp_path: Path) -> None:
    from harness.importers import transcripts

    with pytest.raises(ImporterError, match=r"^/dev/null: not a file or folder \(missing, or a pipe or device\); "
                                            r"give a JSONL file of messages or a folder of session files$"):
        list(transcripts.read_transcripts(Path("/dev/null"), FaultLog(), Redactor.build(), transcripts.TranscriptStats()))


def test_a_blank_line_is_skipped_and_the_lines_after_it_are_read_and_numbered(tmp_path: Path) -> None:
    messages = two_sessions()
    out, _ = imported_transcripts(tmp_path, [*messages[:2], "", *messages[2:]])
    assert scenarios_of(out)["u1.acme.s2"]["expect"]["logged_reply"] == "You picked 5433."
    messages[3]["role"] = "bot"
    with pytest.raises(ImporterError, match=r"^log\.jsonl:5: field 'role' 'bot'"):
        imported_transcripts(tmp_path, [*messages[:2], "", *messages[2:]])


def test_a_line_that_is_not_json_names_the_expected_shape(tmp_path: Path) -> None:
    with pytest.raises(ImporterError, match=r"^log\.jsonl:2: not a JSON object \(.*\); one message per line$"):
        imported_transcripts(tmp_path, [two_sessions()[0], "{torn", *two_sessions()[1:]])


def test_invalid_utf8_and_a_raw_surrogate_exit_naming_line_and_byte(tmp_path: Path) -> None:
    first = json.dumps(two_sessions()[0]).encode()
    for bad, byte in ((b'"caf\xe9"', "0xe9"), (b'"x\xed\xa0\x80y"', "0xed")):
        log = tmp_path / "log.jsonl"
        log.write_bytes(first + b'\n{"session_id": "s2", "workspace": "acme", "role": "user", "content": ' + bad
                        + b', "timestamp": "2026-03-02T10:00:00Z"}\n')
        with pytest.raises(ImporterError, match=rf"^log\.jsonl:2: not UTF-8 \(byte {byte} at offset \d+: "
                                                r".*\); save the log as UTF-8$"):
            import_transcripts(log, tmp_path / "suite", echo=lambda line: None)


def test_json_nested_past_python_s_limit_exits_naming_the_line(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(json.dumps(two_sessions()[0]).encode() + b"\n" + b"[" * 200_000 + b"]" * 200_000 + b"\n")
    with pytest.raises(ImporterError, match=r"^log\.jsonl:2: JSON nested deeper than Python reads; one message per "
                                            r"line$"):
        import_transcripts(log, tmp_path / "suite", echo=lambda line: None)


def test_an_escaped_lone_surrogate_is_a_replacement_character_and_a_counted_repair(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[2]["content"] = "Which port\ud800 for staging?"
    out, _ = imported_transcripts(tmp_path, messages)  # json.dumps writes it as the escape \ud800
    assert scenarios_of(out)["u1.acme.s2"]["probe"]["message"] == "Which port\ufffd for staging?"
    assert suite_json(out)["repairs"]["lone surrogate (a \\ud800-style escape) in a message, written as U+FFFD"] == {
        "count": 1, "examples": ["log.jsonl:3"]}


def test_a_line_that_is_not_an_object_exits_naming_its_type(tmp_path: Path) -> None:
    with pytest.raises(ImporterError, match=r"^log\.jsonl:2: a message must be a JSON object, not list$"):
        imported_transcripts(tmp_path, [two_sessions()[0], "[1, 2]", *two_sessions()[1:]])


@pytest.mark.parametrize("sid", ["  ", [1], 1.5, None])
def test_a_session_id_that_is_blank_or_not_a_name_exits(tmp_path: Path, sid: Any) -> None:
    messages = two_sessions()
    messages[1]["session_id"] = sid
    _exits(tmp_path, messages, r"^log\.jsonl:2: field 'session_id' is missing; every message names its "
                               r"session$")


def test_a_role_that_is_not_a_chat_role_exits_naming_it(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[1]["role"] = "bot"
    _exits(tmp_path, messages, r"^log\.jsonl:2: field 'role' 'bot' is not user, assistant, system or "
                               r"tool$")


def test_function_and_developer_messages_are_dropped_and_counted_not_refused(tmp_path: Path) -> None:
    extra = [message("s1", "developer", "Be brief.", "2026-03-01T09:59:58Z"),
             message("s1", "function", "{\"rows\": 3}", "2026-03-01T10:00:01Z")]
    out, _ = imported_transcripts(tmp_path, [*extra, *two_sessions()])
    drops = suite_json(out)["drops"]
    assert drops["developer message (not a user or assistant turn)"] == {"count": 1, "examples": ["log.jsonl:1"]}
    assert drops["function message (not a user or assistant turn)"] == {"count": 1, "examples": ["log.jsonl:2"]}
    assert suite_json(out)["transcripts"]["messages"] == 6


@pytest.mark.parametrize("content", ["   ", [], [{"type": "image_url", "image_url": {}}], None, 42])
def test_a_message_without_text_is_dropped_and_counted_with_its_line(tmp_path: Path, content: Any) -> None:
    tool_call = message("s1", "assistant", content, "2026-03-01T10:00:03Z")
    out, _ = imported_transcripts(tmp_path, [*two_sessions()[:1], tool_call, *two_sessions()[1:]])
    assert suite_json(out)["drops"]["message without text (tool calls or empty content)"] == {
        "count": 1, "examples": ["log.jsonl:2"]}
    assert len(scenarios_of(out)["u1.acme.s2"]["sessions"][0]["turns"]) == 2


def test_a_message_wrapped_in_a_message_field_is_read_with_its_time_inside_or_outside(tmp_path: Path) -> None:
    wrapped = []
    for n, m in enumerate(two_sessions()):
        inner = {"role": m["role"], "content": m["content"]}
        outer = {"session_id": m["session_id"], "workspace": "acme", "user_id": "u1", "message": inner}
        (inner if n % 2 else outer)["created_at"] = m["timestamp"]
        wrapped.append(outer)
    out, _ = imported_transcripts(tmp_path, wrapped)
    (tmp_path / "plain").mkdir()
    assert scenarios_of(out) == scenarios_of(imported_transcripts(tmp_path / "plain", two_sessions())[0])
    assert suite_json(out)["repairs"] == {}


def test_an_unreadable_time_inside_a_wrapped_message_names_its_field(tmp_path: Path) -> None:
    bad = {"session_id": "s2", "workspace": "acme", "message": {"role": "user", "content": "Hi", "time": "soon"}}
    with pytest.raises(ImporterError, match=r"^log\.jsonl:3: field 'time' 'soon' is not a time"):
        imported_transcripts(tmp_path, [*two_sessions()[:2], bad])


def test_a_workspace_given_only_on_a_later_message_is_the_session_s(tmp_path: Path) -> None:
    messages = two_sessions()
    del messages[0]["workspace"], messages[2]["workspace"]
    out, _ = imported_transcripts(tmp_path, messages)
    scenario = scenarios_of(out)["u1.acme.s2"]
    assert scenario["probe"]["workspace"] == "acme" and scenario["sessions"][0]["workspace"] == "acme"
    assert "reports" not in suite_json(out)
    messages.append(message("s2", "user", "And staging?", "2026-03-02T09:00:09Z", workspace="other"))
    _exits(tmp_path, messages, r"^log\.jsonl:5: field 'workspace' 'other' differs from 'acme' at "
                               r"log\.jsonl:4 for session 's2'; one session runs in one workspace for "
                               r"one user$")


def test_a_user_given_only_on_a_later_message_is_the_session_s(tmp_path: Path) -> None:
    messages = two_sessions()
    del messages[0]["user_id"], messages[2]["user_id"]
    out, _ = imported_transcripts(tmp_path, messages)
    assert sorted(scenarios_of(out)) == ["u1.acme.s2"]
    assert scenarios_of(out)["u1.acme.s2"]["tags"] == ["transcripts", "workspace:acme", "user:u1"]


def test_one_session_for_two_users_exits_naming_both_lines(tmp_path: Path) -> None:
    messages = two_sessions()
    messages[3]["user_id"] = "u2"
    _exits(tmp_path, messages, r"^log\.jsonl:4: field 'user_id' 'u2' differs from 'u1' at log\.jsonl:3 "
                               r"for session 's2'; one session runs in one workspace for one user$")
    del messages[2]["user_id"]  # the user first read on line 4, so the conflict on line 5 names line 4
    messages.append(message("s2", "user", "And staging?", "2026-03-02T09:00:09Z", user="u3"))
    _exits(tmp_path, messages, r"^log\.jsonl:5: field 'user_id' 'u3' differs from 'u2' at log\.jsonl:4 ")


def test_the_user_field_may_be_called_user_and_a_bad_one_is_named_as_given(tmp_path: Path) -> None:
    messages = [{**{k: v for k, v in m.items() if k != "user_id"}, "user": "u1"} for m in two_sessions()]
    out, _ = imported_transcripts(tmp_path, messages)
    assert sorted(scenarios_of(out)) == ["u1.acme.s2"]
    messages[0]["user"] = "Ana Lopez"
    with pytest.raises(ImporterError) as caught:
        imported_transcripts(tmp_path, messages)
    assert str(caught.value) == ("log.jsonl:1: field 'user' 'Ana Lopez' is not an identifier (letters, digits and ._:-, "
                                 "starting with a letter or digit): it is the memory store's scope key, so it is not "
                                 "renamed; map it in the file")


@pytest.mark.parametrize("workspace", [True, 2.5, ["acme"]])
def test_a_workspace_that_is_not_a_string_or_number_is_refused(tmp_path: Path, workspace: Any) -> None:
    messages = two_sessions()
    messages[1]["workspace"] = workspace
    _exits(tmp_path, messages, r"^log\.jsonl:2: field 'workspace' .* is not an identifier")


def test_a_user_id_that_is_a_secret_is_redacted_once_per_session(tmp_path: Path) -> None:
    messages = [message(m["session_id"], m["role"], m["content"], m["timestamp"], user=SECRET) for m in two_sessions()]
    out, _ = imported_transcripts(tmp_path, messages)
    assert SECRET not in "".join(p.read_text(encoding="utf-8") for p in out.iterdir())
    assert suite_json(out)["redaction"]["redacted"] == 2  # read once for each of its two sessions


def test_one_user_with_and_without_a_workspace_makes_two_groups(tmp_path: Path) -> None:
    global_scope = [message(m["session_id"] + "-g", m["role"], m["content"], m["timestamp"], workspace=None)
                    for m in two_sessions()]
    out, _ = imported_transcripts(tmp_path, [*two_sessions(), *global_scope])
    assert sorted(scenarios_of(out)) == ["u1.acme.s2", "u1.s2-g"]
    assert suite_json(out)["transcripts"]["groups"] == 2


def test_session_ids_that_clean_to_the_same_name_stay_distinct(tmp_path: Path) -> None:
    first, second = two_sessions()[:2], two_sessions()[:2]
    for m in first:
        m["session_id"] = "a/b"
    for m in second:
        m["session_id"], m["timestamp"] = "a?b", m["timestamp"].replace("T10", "T11")
    out, _ = imported_transcripts(tmp_path, [*first, *second, *two_sessions()[2:]])
    assert [s["id"] for s in scenarios_of(out)["u1.acme.s2"]["sessions"]] == ["a-b", "a-b-2"]


def test_sessions_and_probes_without_an_identifier_character_are_named_by_position(tmp_path: Path) -> None:
    messages = [message(sid, "user", f"Message {n}.", f"2026-03-0{n}T10:00:00Z", workspace=None, user=None)
                for n, sid in enumerate(("!!!", "???", "###", "***"), start=1)]
    out, _ = imported_transcripts(tmp_path, messages)
    scenarios = scenarios_of(out)
    assert {cid: s["probe"]["message"] for cid, s in scenarios.items()} == {
        "probe-1": "Message 2.", "probe-2": "Message 3.", "probe-3": "Message 4."}
    assert [s["id"] for s in scenarios["probe-3"]["sessions"]] == ["s1", "s2", "s3"]


def test_colliding_probe_ids_are_told_apart_the_same_way_whatever_the_file_s_order(tmp_path: Path) -> None:
    def group(user: str, workspace: str, later: str) -> list[dict[str, Any]]:
        return [message(f"first-{user}-{workspace}", "user", f"Hello {user} {workspace}.", "2026-03-01T10:00:00Z",
                        user=user, workspace=workspace),
                message(later, "user", f"Question of {user} in {workspace}.", "2026-03-02T10:00:00Z",
                        user=user, workspace=workspace)]

    groups = [group("u", "a", "b.s"), group("u", "a.b", "s"),  # both u.a.b.s: the workspace decides
              group("u", "w", "x.w.t"), group("u.w.x", "w", "t")]  # both u.w.x.w.t: the user decides
    found = []
    for n, order in enumerate((groups, groups[::-1])):
        (tmp_path / str(n)).mkdir()
        out, _ = imported_transcripts(tmp_path / str(n), [m for g in order for m in g])
        found.append({cid: s["probe"]["message"] for cid, s in scenarios_of(out).items()})
    assert found[0] == found[1] == {
        "u.a.b.s": "Question of u in a.", "u.a.b.s-1": "Question of u in a.b.",
        "u.w.x.w.t": "Question of u in w.", "u.w.x.w.t-1": "Question of u.w.x in w."}
