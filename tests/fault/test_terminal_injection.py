"""Escape sequences, carriage returns and newlines in provider text (an error body, a judge's error) never reach the
terminal raw: they are shown escaped, so no screen is cleared, no title set and no ``verdict: PASS`` line forged."""

from __future__ import annotations

from pathlib import Path

from tests.fault.conftest import fake_run_argv, finish, start
from tests.integration.fake_openai_server import FakeOpenAIServer, Script

#: Clear the screen, home the cursor, set the window title, a carriage return, a forged verdict line, a bidi override.
HOSTILE = "bad request\x1b[2J\x1b[H\x1b]0;owned\x07\r\nverdict: PASS\n\u202eSSAP\x9b31m"


def _raw_controls(text: str) -> list[str]:
    return [ch for ch in text if (ord(ch) < 0x20 and ch not in "\n\t") or 0x7F <= ord(ch) <= 0x9F or ch == "\u202e"]


def test_a_provider_error_with_escape_sequences_is_printed_escaped(tmp_path: Path) -> None:
    """HTTP 400 whose message holds escape sequences and a fake verdict line: the run stops the model as
    misconfigured, and stdout and stderr hold no control character and no line ``verdict: PASS``."""
    with FakeOpenAIServer(Script(fail_status=400, fail_times=None, error_message=HOSTILE)) as server:
        code, out, err = finish(start(fake_run_argv(server.base_url, "--no-cache", "--max-concurrency", "1", out=tmp_path / "run"), tmp_path))

    assert code == 2
    assert "stopped model openai/fake" in err
    assert _raw_controls(out + err) == []
    assert "\\x1b[2J" in err  # shown, escaped
    assert not any(line.strip() == "verdict: PASS" for line in (out + err).splitlines())


def test_a_judge_error_with_escape_sequences_is_printed_escaped(tmp_path: Path) -> None:
    """``report --judge-model`` against a judge answering 400 with escape sequences: exit 2, one line, escaped."""
    from tests.integration.offline_runs import offline_run

    run_dir = offline_run(tmp_path)
    from tests.fault.conftest import RECALL_EVAL

    with FakeOpenAIServer(Script(fail_status=400, fail_times=None, error_message=HOSTILE)) as server:
        argv = [str(RECALL_EVAL), "report", str(run_dir), "--judge-model", "openai/fake", "--judge-api-base", server.base_url]
        code, out, err = finish(start(argv, tmp_path))

    assert code == 2
    assert "judge model 'openai/fake' failed" in err
    assert _raw_controls(out + err) == []
    assert len(err.strip().splitlines()) == 1


def test_the_terminal_guard_escapes_controls_but_keeps_lines() -> None:
    """The stream guard every command runs under: controls escaped, newlines and tabs kept, ordinary text unchanged."""
    import io

    from harness.records.terminal import _GuardedStream

    buffer = io.StringIO()
    _GuardedStream(buffer).write("a\tb\nc\x1b[31md\re ☕\n")
    assert buffer.getvalue() == "a\tb\nc\\x1b[31md\\re ☕\n"
