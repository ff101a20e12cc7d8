"""Provider and model text made safe for a terminal: the escaper, the stream guard, and each layer on its own."""

from __future__ import annotations

import io
import sys

import pytest

from harness.records.terminal import guard_streams, raw_stream, terminal_text


@pytest.mark.parametrize(("unsafe", "shown"), [
    ("\x00", "\\x00"), ("\x07", "\\x07"), ("\x1b", "\\x1b"), ("\x1f", "\\x1f"), ("\x7f", "\\x7f"), ("\x80", "\\x80"),
    ("\x9b", "\\x9b"), ("\x9f", "\\x9f"), ("\u202a", "\\u202a"), ("\u202e", "\\u202e"), ("\u2066", "\\u2066"),
    ("\u2069", "\\u2069"), ("\ud800", "\\ud800"), ("\udfff", "\\udfff"), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"),
])
def test_every_control_bidi_override_and_lone_surrogate_is_shown_as_its_escape(unsafe, shown) -> None:
    assert terminal_text(f"a{unsafe}b") == f"a{shown}b"


@pytest.mark.parametrize("safe", [" ", "~", "\xa0", "é", "\u2029", "\u202f", "\u2065", "\u206a", "\ue000", "☕", "😀"])
def test_printable_text_next_to_the_escaped_ranges_is_left_as_it_is(safe) -> None:
    assert terminal_text(f"a{safe}b") == f"a{safe}b"
    assert terminal_text(f"a{safe}b\x1b") == f"a{safe}b\\x1b"


def test_newlines_and_tabs_are_kept_only_when_asked_and_carriage_returns_never() -> None:
    text = "line one\tcol\nline two\rverdict: PASS\x0b\x0c"
    assert terminal_text(text) == "line one\\tcol\\nline two\\rverdict: PASS\\x0b\\x0c"
    assert terminal_text(text, keep_newlines=True) == "line one\tcol\nline two\\rverdict: PASS\\x0b\\x0c"


def test_any_value_is_shown_as_its_text() -> None:
    assert terminal_text(ValueError("bad\x1b[2J")) == "bad\\x1b[2J"
    assert terminal_text(42) == "42"


def test_the_guard_escapes_every_write_keeps_lines_and_counts_what_it_was_given() -> None:
    buffer = io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout = buffer  # type: ignore[assignment]
    try:
        with guard_streams():
            assert sys.stdout is not buffer and raw_stream(sys.stdout) is buffer
            assert sys.stdout.write("a\x1b]0;title\x07\n") == len("a\x1b]0;title\x07\n")
            sys.stdout.writelines(["b\r\n", "c\u202ed\n"])
            sys.stdout.flush()  # anything else is the raw stream's
        assert sys.stdout is buffer and sys.stderr is saved[1]
    finally:
        sys.stdout, sys.stderr = saved
    assert buffer.getvalue() == "a\\x1b]0;title\\x07\nb\\r\nc\\u202ed\n"


def test_raw_stream_of_an_unguarded_stream_is_the_stream_itself() -> None:
    buffer = io.StringIO()
    assert raw_stream(buffer) is buffer


def test_a_guard_inside_a_guard_wraps_the_raw_stream_once() -> None:
    buffer = io.StringIO()
    saved = sys.stdout
    sys.stdout = buffer  # type: ignore[assignment]
    try:
        with guard_streams(), guard_streams():
            print("x\x1b")
    finally:
        sys.stdout = saved
    assert buffer.getvalue() == "x\\x1b\n"  # escaped once, not "x\\\\x1b"


# --- each layer on its own: the guard without any quoting site, the quoting site under a guard that keeps lines ---


def test_the_guard_alone_escapes_text_that_reached_print_unquoted(capsys) -> None:
    """The stream layer: a provider's text printed by a path that never called terminal_text is still escaped."""
    with guard_streams():
        print("provider said: \x1b[2J\x1b]0;pwned\x07done", file=sys.stderr)
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and err == "provider said: \\x1b[2J\\x1b]0;pwned\\x07done\n"


def test_a_quoted_error_cannot_forge_a_line_even_though_the_guard_keeps_newlines(capsys, tmp_path) -> None:
    """The quoting layer: `report`'s error quotes a folder name holding a newline; the guard alone keeps newlines,
    so only the quoting escapes it and no line of the output starts with the forged verdict."""
    from harness.cli import main

    forged = tmp_path / "run\nverdict: PASS"
    assert main(["report", str(forged)]) == 2
    err = capsys.readouterr().err
    assert "run\\nverdict: PASS" in err
    assert not any(line.startswith("verdict") for line in err.splitlines())
