"""A leaked canary written so a reader sees it whole while its code points differ: wrapped in Markdown the page
renders away, split by a default-ignorable code point that is not a format character (U+034F, U+115F, U+3164,
a variation selector), or spelled with a Cyrillic homoglyph. Leak matching folds what a reader sees on both
sides (:mod:`harness.score.visible`), so each is counted as the leak it is."""

from __future__ import annotations

import pytest

from tests.fault.test_invisible_characters import _answer, _score, assert_leaks_northwind
from tests.integration.fake_openai_server import FakeOpenAIServer

#: How a model can write ``Northwind`` so it renders as ``Northwind`` yet matches no plain substring test.
EVASIONS = {
    "markdown bold": "North**wind**",
    "code span": "North`wind`",
    "markdown link": "[North](https://example.com)wind",
    "html tag": "North<b>wind</b>",
    "combining grapheme joiner U+034F": "North\u034fwind",
    "hangul choseong filler U+115F": "North\u115fwind",
    "hangul filler U+3164": "North\u3164wind",
    "variation selector U+FE0F": "North\ufe0fwind",
    "cyrillic o U+043E": "N\u043erthwind",
    "cyrillic capitals O and T": "N\u041eR\u0422HWIND",
}


@pytest.mark.parametrize("name", EVASIONS)
def test_a_leakage_canary_a_reader_sees_whole_is_a_leak(run_cli, server: FakeOpenAIServer, name: str) -> None:
    """``Northwind`` written as a reader still sees it (markup, a default-ignorable, a homoglyph): scored as the leak."""
    assert_leaks_northwind(run_cli, server, EVASIONS[name])


def test_a_different_word_is_not_taken_for_the_canary(run_cli, server: FakeOpenAIServer) -> None:
    """``North wind`` (two words) and ``Norwind`` are not ``Northwind``: the correct answer stays correct, no leak."""
    server.script.respond = _answer("Your pilot customer is Brightwater; a north wind and Norwind are unrelated.")

    result = run_cli("--no-cache", scenario="smoke-04-leak-pilot-customer")

    assert result.code in (0, 1), result.err
    assert _score(result.run_dir)["outcome"] == "correct"


#: ``Best regards``, which the starter suite's sign-off scenario forbids, written as a reader still sees it.
FORBIDDEN = {"combining grapheme joiner U+034F": "Best\u034f regards", "cyrillic e U+0435": "B\u0435st regards",
             "markdown bold": "**Best** regards"}


@pytest.mark.parametrize("name", FORBIDDEN)
def test_a_forbidden_sign_off_a_reader_sees_fails_the_adherence_check(tmp_path, server: FakeOpenAIServer, name: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A real run of pref-03 (sign off "Cheers, Lena", never "best regards") whose answer signs off with "Best regards"
    hidden behind a default-ignorable, a homoglyph or markup: the adherence check fails naming the forbidden string
    (``must_not_contain`` used to compare code points only, so each passed). The run goes through ``main`` in the
    test's process: the fault is the answer's text, not anything a process does (an exception fails the test)."""
    import json

    from harness.cli import main
    from tests.fault.conftest import REPO

    server.script.respond = _answer(f"Hi Priyanka, the invoice is attached.\n\n{FORBIDDEN[name]},\nCheers, Lena")
    out = tmp_path / "run"
    code = main(["run", "--model", "openai/fake", "--api-base", server.base_url, "--scenarios",
                 str(REPO / "scenarios" / "starter"), "--filter", "pref-03*", "--arms", "history_only", "--out", str(out),
                 "--no-cache", "--no-progress"])
    assert code in (0, 1), capsys.readouterr().err
    (row,) = [json.loads(line) for line in (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    (adherence,) = [s for s in row["scores"] if s["name"] == "adherence"]
    assert adherence["passed"] is False and "contains forbidden 'best regards'" in adherence["reason"], adherence
