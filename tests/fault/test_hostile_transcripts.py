"""``import transcripts`` on hostile logs, as a real process: JSON nested 200,000 deep, invalid UTF-8, a raw
(UTF-8-encoded) surrogate, NaN and infinite timestamps, and times far outside any conversation (1e300, 9e15 ms =
the year 287,168, the year 9999): one line naming ``file:line`` (and the plausible range), exit 2, nothing written;
a ``\\ud800`` escape (valid JSON, no character) is written as U+FFFD and counted as a repair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fault.conftest import harness_cli

FIRST = json.dumps({"session_id": "s1", "workspace": "acme", "role": "user", "content": "Use port 5433.",
                    "timestamp": "2026-03-01T10:00:00Z"}).encode()


def _second(content: bytes = b'"Which port?"', timestamp: bytes = b'"2026-03-02T10:00:00Z"') -> bytes:
    return b'{"session_id": "s2", "workspace": "acme", "role": "user", "content": ' + content + b', "timestamp": ' + timestamp + b"}"


HOSTILE: dict[str, tuple[bytes, str]] = {
    "nested 200,000 deep": (_second(content=b"[" * 200_000 + b"]" * 200_000), "nested deeper than Python reads"),
    "invalid UTF-8": (_second(content=b'"caf\xe9"'), "not UTF-8 (byte 0xe9"),
    "raw surrogate": (_second(content=b'"x\xed\xa0\x80y"'), "not UTF-8 (byte 0xed"),
    "NaN timestamp": (_second(timestamp=b"NaN"), "'timestamp' nan is not a time"),
    "infinite timestamp": (_second(timestamp=b"Infinity"), "'timestamp' inf is not a time"),
    "-infinite timestamp": (_second(timestamp=b"-Infinity"), "'timestamp' -inf is not a time"),
    "1e300 timestamp": (_second(timestamp=b"1e300"), "is out of range: a logged message's time lies between 1990-01-01 and 2100-01-01"),
    "9e15 ms timestamp": (_second(timestamp=b"9000000000000000"), "is out of range"),
    "year 9999": (_second(timestamp=b'"9999-12-31T00:00:00Z"'), "is out of range"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_line_is_one_error_naming_it(tmp_path: Path, name: str) -> None:
    """One ``error:`` line naming ``log.jsonl:2`` and the fault, exit 2, no traceback, no suite written."""
    line, expected = HOSTILE[name]
    log = tmp_path / "log.jsonl"
    log.write_bytes(FIRST + b"\n" + line + b"\n")
    done = harness_cli("import", "transcripts", log, tmp_path / "suite")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [text for text in done.stderr.splitlines() if text.strip()]
    assert len(lines) == 1 and "log.jsonl:2" in lines[0] and expected in lines[0], done.stderr
    assert not (tmp_path / "suite").exists()


@pytest.mark.parametrize("name", ["nested 200,000 deep", "invalid UTF-8"])
def test_a_hostile_session_file_is_one_error_naming_it(tmp_path: Path, name: str) -> None:
    """The folder form (one JSON file per session): the same one line naming the file, exit 2."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "s1.json").write_bytes(b'{"workspace": "acme", "messages": [' + FIRST + b"]}")
    (folder / "s2.json").write_bytes(b'{"workspace": "acme", "messages": [' + HOSTILE[name][0] + b"]}")
    done = harness_cli("import", "transcripts", folder, tmp_path / "suite")
    assert done.returncode == 2 and "s2.json" in done.stderr and HOSTILE[name][1] in done.stderr, done.stderr
    assert len([text for text in done.stderr.splitlines() if text.strip()]) == 1, done.stderr


def test_an_escaped_lone_surrogate_is_written_as_a_replacement_character_and_counted(tmp_path: Path) -> None:
    """``"x\\ud800y"`` is valid JSON but no text: the probe reads ``x\ufffdy`` and the repair is printed."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(FIRST + b"\n" + _second(content=b'"x\\ud800y"') + b"\n")
    done = harness_cli("import", "transcripts", log, tmp_path / "suite")
    assert done.returncode == 0, done.stderr
    assert "lone surrogate" in done.stdout + done.stderr
    (scenario,) = (tmp_path / "suite").glob("acme.*.yaml")
    assert "x\ufffdy" in scenario.read_text(encoding="utf-8")
