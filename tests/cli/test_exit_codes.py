"""Exit codes agree across commands: a missing path is 2 everywhere, and every --help says what each code means."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import build_parser, main


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return sorted(sub.choices)


@pytest.mark.parametrize("command", _commands())
def test_every_help_lists_its_exit_codes(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "exit codes: 0 " in text and " 2 " in text.split("exit codes:")[1]


def test_the_top_level_help_lists_the_shared_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit codes: 0 success, 1 the answer is no" in text and "2 bad input (a missing path" in text


@pytest.mark.parametrize("argv", [
    ["validate", "{nope}"],
    ["list", "{nope}"],
    ["report", "{nope}"],
    ["compare", "{nope}", "{nope}"],
    ["history", "{nope}"],
    ["merge", "{out}", "{nope}"],
    ["run", "--scenarios", "{nope}", "--no-progress"],
    ["run", "--resume", "{nope}", "--no-progress"],
    ["import", "locomo", "{nope}", "{out}"],
    ["schema", "--out", "{nope}/schema.json"],
], ids=lambda argv: " ".join(a for a in argv if "{" not in a))
def test_a_missing_path_exits_2_in_every_command(argv: list[str], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    nope = tmp_path / "nope"
    code = main([a.format(nope=nope, out=tmp_path / "out") for a in argv])
    captured = capsys.readouterr()
    assert code == 2, captured.out + captured.err
    assert str(nope) in captured.err and "Traceback" not in captured.err


def test_resume_of_a_folder_that_does_not_exist_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--resume", str(tmp_path / "nope"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'nope'}: no such run folder (the folder does not exist)" in err
    assert "no run manifest" not in err
