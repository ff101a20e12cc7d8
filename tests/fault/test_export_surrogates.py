"""``export inspect`` of a run whose records hold lone surrogates (a model sent ``"\\ud800"``): inspect_ai's log holds
no such text, so each is written as U+FFFD and the log says so (``replaced_surrogates`` in the sample's and the
eval's metadata, a ``note:`` line on the terminal), never as the 6-character text ``\\ud800`` without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.runs.inspect_export import valid_text
from tests.fault.test_unencodable_text import LONE, OTHER, _surrogates_everywhere
from tests.integration.fake_openai_server import FakeOpenAIServer


def test_every_lone_surrogate_of_a_record_is_replaced_and_counted() -> None:
    """Strings inside lists and dicts, and keys: each lone surrogate one U+FFFD, counted; other text untouched."""
    record = {"messages": [{"role": "assistant", "content": f"ok {LONE}", "tool_calls": [{"id": f"c{LONE}"}]}],
              f"k{OTHER}": ("x", 3, None, "caf\u00e9 \U0001f600")}
    cleaned, count = valid_text(record)
    assert count == 3
    assert cleaned == {"messages": [{"role": "assistant", "content": "ok \ufffd", "tool_calls": [{"id": "c\ufffd"}]}],
                       "k\ufffd": ["x", 3, None, "caf\u00e9 \U0001f600"]}


def test_an_exported_log_keeps_the_answer_with_a_replacement_character_and_says_so(
        run_cli, server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The log's answer ends in U+FFFD (not ``\\ud800`` as six characters), the sample and eval metadata count
    the replacements, and the terminal prints a ``note:`` naming the log."""
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (the test extra installs it: "
                                             "pip install -e '.[test]'; tests/test_test_command.py fails without it)")
    from inspect_ai.log import read_eval_log

    from harness.cli import main

    server.script.respond = _surrogates_everywhere
    result = run_cli("--no-cache", arms=("recall",))
    assert result.code in (0, 1), result.err
    assert main(["export", "inspect", str(result.run_dir), str(tmp_path / "logs")]) == 0
    assert "lone surrogate(s)" in capsys.readouterr().err
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    (sample,) = log.samples or []
    assert sample.output.completion.endswith(" \ufffd") and "\\ud800" not in sample.output.completion
    assert sample.metadata["replaced_surrogates"] >= 2
    assert log.eval.metadata["recall_eval"]["replaced_surrogates"] == sample.metadata["replaced_surrogates"]
