"""Invisible characters a model writes inside words (zero-width space, soft hyphen, word joiner, bidi marks):
matching ignores Unicode format characters (category Cf), so a hidden canary is still a leak and a correct
answer is still correct."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.fake_openai_server import FakeOpenAIServer

#: Unicode format characters (Cf) a model or a copy-paste puts inside words.
INVISIBLE = {"zero-width space": "\u200b", "soft hyphen": "\u00ad", "word joiner": "\u2060", "left-to-right mark": "\u200e"}


def _answer(text: str):
    def respond(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        reply["choices"][0]["message"].update(content=text, tool_calls=None)
        reply["choices"][0]["message"].pop("tool_calls")
        reply["choices"][0]["finish_reason"] = "stop"
        return reply
    return respond


def _score(run_dir: Path) -> dict[str, Any]:
    (line,) = (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(line)


def assert_leaks_northwind(run_cli, server: FakeOpenAIServer, written: str) -> None:
    """A run of the leak scenario whose answer names the other client as ``written`` is scored as leaking ``Northwind``."""
    server.script.respond = _answer(f"The pilot customer is Brightwater ({written} was the other client's).")

    result = run_cli("--no-cache", scenario="smoke-04-leak-pilot-customer")

    assert result.code in (0, 1), result.err
    score = _score(result.run_dir)
    (claims,) = [s for s in score["scores"] if s["name"] == "unsupported_claims"]
    assert claims["passed"] is False and "leakage: 'Northwind'" in claims["reason"]
    assert score["outcome"] != "correct"


@pytest.mark.parametrize("name", INVISIBLE)
def test_a_leakage_canary_split_by_an_invisible_character_is_still_a_leak(run_cli, server: FakeOpenAIServer, name: str) -> None:
    """``North<Cf>wind`` in an answer is the leakage canary ``Northwind``: the sample is scored as leaking it."""
    assert_leaks_northwind(run_cli, server, f"North{INVISIBLE[name]}wind")


@pytest.mark.parametrize("name", INVISIBLE)
def test_a_correct_answer_with_an_invisible_character_inside_the_fact_is_correct(run_cli, server: FakeOpenAIServer, name: str) -> None:
    """``Bright<Cf>water`` states the expected ``Brightwater``: the outcome is correct, as without the character."""
    cf = INVISIBLE[name]
    server.script.respond = _answer(f"Your pilot customer for the export beta is Bright{cf}water.")

    result = run_cli("--no-cache", scenario="smoke-04-leak-pilot-customer")

    assert result.code in (0, 1), result.err
    assert _score(result.run_dir)["outcome"] == "correct"
