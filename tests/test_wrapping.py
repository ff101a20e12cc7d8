"""harness.wrapping: prose and standard error fit the terminal's width."""

from __future__ import annotations

import io
import sys

import pytest

from harness.records import guard_streams, raw_stream
from harness.wrapping import WrappingStream, wrapped_stderr

LONG_ERROR = ("recall-eval history: /tmp/nightly/2026-12-01: no such folder; pass run folders (or folders of them) "
              "written by `recall-eval run`")


@pytest.fixture
def eighty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")


def test_a_line_longer_than_the_terminal_wraps_at_words_with_an_indented_continuation(eighty: None) -> None:
    out = io.StringIO()
    stream = WrappingStream(out)
    print(LONG_ERROR, file=stream)  # type: ignore[arg-type]
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and all(len(line) <= 80 for line in lines)
    assert lines[1].startswith("  ") and " ".join(" ".join(lines).split()) == LONG_ERROR


def test_a_line_that_fits_passes_byte_for_byte(eighty: None) -> None:
    out = io.StringIO()
    stream = WrappingStream(out)
    text = "error:  two spaces\tand a tab stay\n\nan empty line too\n"
    stream.write(text)
    assert out.getvalue() == text


def test_a_line_written_in_pieces_is_wrapped_whole_once_its_newline_comes(eighty: None) -> None:
    out = io.StringIO()
    stream = WrappingStream(out)
    for word in LONG_ERROR.split(" "):
        stream.write(word + " ")
    assert out.getvalue() == ""  # held until its newline
    stream.write("\n")
    assert [len(line) <= 80 for line in out.getvalue().splitlines()] == [True, True]


def test_a_flushed_partial_line_goes_out_as_it_is(eighty: None) -> None:
    out = io.StringIO()
    stream = WrappingStream(out)
    stream.write("continue? ")
    stream.flush()
    assert out.getvalue() == "continue? "


def test_wrapped_stderr_wraps_what_the_commands_print_and_restores_the_stream(eighty: None,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    before = sys.stderr
    with wrapped_stderr():
        print(LONG_ERROR, file=sys.stderr)
        sys.stderr.write("an unfinished line")
    assert sys.stderr is before
    err = capsys.readouterr().err
    assert max(len(line) for line in err.splitlines()) <= 80 and err.endswith("an unfinished line")


def test_the_progress_bar_still_reaches_the_raw_stream_past_guard_and_wrapping() -> None:
    with guard_streams():
        guarded = sys.stderr
        with wrapped_stderr():
            assert raw_stream(sys.stderr) is raw_stream(guarded)
            assert raw_stream(sys.stderr) is not guarded  # rich's cursor moves are neither escaped nor wrapped


@pytest.mark.parametrize("argv", [["history", "{missing}"], ["report", "{missing}"], ["validate", "{missing}"],
                                  ["view", "{missing}"], ["run", "--max-conc", "4"]],
                         ids=["history", "report", "validate", "view", "argparse"])
def test_a_commands_error_is_wrapped_by_main_whoever_prints_it(argv: list[str], tmp_path, eighty: None,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    monkeypatch.chdir(tmp_path)
    missing = "nightly/2026-12-01/not-a-run-folder"
    try:
        code = main([arg.format(missing=missing) for arg in argv])
    except SystemExit as exc:  # argparse's own exit
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2 and err.strip()
    assert max(len(line) for line in err.splitlines()) <= 80, err
