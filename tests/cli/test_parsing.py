"""The command line forgives typos with a suggestion, never by guessing: no abbreviations, one model per --model."""

from __future__ import annotations

import argparse

import pytest

from harness.cli import build_parser, main
from harness.cli.parsing import model_value, suggestion


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    return capsys.readouterr().err


def test_max_connections_is_max_concurrency_under_inspect_ais_name() -> None:
    args = build_parser().parse_args(["run", "--max-connections", "4"])
    assert args.max_concurrency == 4
    assert build_parser().parse_args(["run", "--max-concurrency", "3"]).max_concurrency == 3


def test_an_unknown_flag_gets_its_commands_usage_and_the_closest_flag(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(["run", "--max-conections", "4"], capsys)
    assert err.startswith("usage: recall-eval run ")
    assert err.rstrip().endswith("recall-eval run: error: unrecognized argument --max-conections; did you mean --max-connections?")
    assert "recall-eval list: error: unrecognized argument --tags; did you mean --tag?" in _refused(["list", "--tags", "x"], capsys)


def test_a_flag_is_never_abbreviated_but_the_full_name_is_suggested(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse took --max-conc for --max-concurrency: a meaning that changes silently when a flag is added."""
    err = _refused(["run", "--max-conc", "4"], capsys)
    assert "unrecognized argument --max-conc; did you mean --max-concurrency?" in err
    assert "did you mean --judge-model?" in _refused(["report", "x", "--judge-mode=m"], capsys)


def test_an_unknown_flag_far_from_every_flag_points_at_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert "unrecognized argument --zzz; `recall-eval run --help` lists the flags" in _refused(["run", "--zzz"], capsys)


def test_a_stray_word_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert "recall-eval run: error: unrecognized arguments: extra" in _refused(["run", "--plan", "extra"], capsys)


@pytest.mark.parametrize("argv", [["run", "--model", "a,b"], ["run", "--model", "openai/gpt-4o-mini,openai/gpt-4o"],
                                  ["report", "x", "--judge-model", "a,b"]])
def test_a_comma_in_a_model_name_is_refused_before_anything_runs(argv: list[str], capsys: pytest.CaptureFixture[str],
                                                                 tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    err = _refused(argv, capsys)
    assert "holds a comma: one model per --model" in err and "Traceback" not in err
    assert not (tmp_path / "reports").exists()


def test_the_comma_message_spells_out_the_flags_to_give() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="--model openai/a --model openai/b$"):
        model_value("openai/a, openai/b")
    with pytest.raises(argparse.ArgumentTypeError, match="empty model name"):
        model_value("  ")
    assert model_value(" offline/reference ") == "offline/reference"
    assert build_parser().parse_args(["run", "--model", "a", "--model", "b"]).models == ["a", "b"]


def test_suggestion_reads_the_flag_before_an_equals_sign() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-tokens")
    assert suggestion("--max-token=5", parser) == "--max-tokens"
    assert suggestion("--colour", parser) is None
