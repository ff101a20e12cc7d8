"""Secrets in logged transcripts, where the default patterns missed them before: a GitHub token inside the session
ids (so in file names, scenario ids, titles and descriptions), an AWS key inside the user id (probe ids, tags),
``Authorization: Basic`` with a short credential, a Hugging Face token, a Slack webhook URL, and a literal
``--redact`` value. Real ``import transcripts``, ``run``,
``run --resume`` and ``report`` processes: none of them is in any file the import or the run writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.redaction import pattern_digest
from tests.fault.conftest import harness_cli
from tests.importers.transcript_fixtures import message, write_jsonl

GITHUB = "ghp_" + "Tk9sEcReT0123456789abcdefghijklmnopq"[:36]
BASIC = "dXNlcjpodW50ZXIyc2VjcmV0"  # user:hunter2secret
HUGGING_FACE = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
SLACK = "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopqrstuvwx"
LITERAL = "Zebra-Quartz-4471"
AWS_KEY = "AKIAQWERTYUIOPASDFGH"  # inside the user id (probe ids and tags are built from it)
SECRETS = {"github token in session ids": GITHUB, "basic credentials": BASIC, "hugging face token": HUGGING_FACE,
           "slack webhook": SLACK, "literal --redact value": LITERAL, "aws key in the user id": AWS_KEY}


def _messages() -> list[dict[str, object]]:
    first, second = f"deploy-{GITHUB}", f"ask-{GITHUB}-2"
    return [dict(m, user_id=f"u.{AWS_KEY}") for m in [
        message(first, "user", f"Use port 5433 for staging. curl -H 'Authorization: Basic {BASIC}' works; "
                f"the model pulls with {HUGGING_FACE} and alerts go to {SLACK}.", "2026-03-01T10:00:00Z"),
        message(first, "assistant", f"Noted: staging uses 5433 and the vault code is {LITERAL}.", "2026-03-01T10:00:05Z"),
        message(second, "user", f"Which port did we pick for staging, and what was {LITERAL}?", "2026-03-02T09:00:00Z"),
        message(second, "assistant", "You picked 5433.", "2026-03-02T09:00:04Z"),
    ]]


def _leaks(*folders: Path) -> dict[str, list[str]]:
    """Each secret, with every file (by name or content) that still holds it."""
    found: dict[str, list[str]] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            text = path.name + ("\n" + path.read_bytes().decode("utf-8", "replace") if path.is_file() else "")
            for name, secret in SECRETS.items():
                if secret in text or (name == "github token in session ids" and GITHUB[4:20] in text):
                    found.setdefault(name, []).append(str(path.relative_to(folder)))
    return found


@pytest.fixture(scope="module")
def imported_and_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("secrets")
    source = write_jsonl(base / "log.jsonl", _messages())
    done = harness_cli("import", "transcripts", source, base / "suite", "--redact", LITERAL)
    assert done.returncode == 0, done.stderr
    run = harness_cli("run", "--scenarios", base / "suite", "--arms", "history_only", "recall", "--redact", LITERAL,
                      "--out", base / "run", "--no-progress")  # a sensitive run's cache is inside its folder
    assert run.returncode in (0, 1), run.stderr
    return {"suite": base / "suite", "run": base / "run", "log": base / "import.log"}


def test_no_secret_reaches_any_file_of_the_suite_or_the_run(imported_and_run: dict[str, Path]) -> None:
    """Every file name and content of the suite and the run folder (results, scores, junit, run.json, index.html,
    its response cache) is free of the six secrets."""
    assert _leaks(imported_and_run["suite"], imported_and_run["run"]) == {}
    run = imported_and_run["run"]
    assert {"results.jsonl", "scores.jsonl", "junit.xml", "run.json", "index.html"} <= {p.name for p in run.iterdir()}


def test_a_literal_redact_value_is_recorded_only_by_its_digest(imported_and_run: dict[str, Path]) -> None:
    """``_suite.json`` and ``run.json`` name the ``--redact`` pattern by ``sha256:`` digest, never the pattern."""
    suite = json.loads((imported_and_run["suite"] / "_suite.json").read_text(encoding="utf-8"))
    run = json.loads((imported_and_run["run"] / "run.json").read_text(encoding="utf-8"))
    assert suite["redaction"]["extra_patterns"] == [pattern_digest(LITERAL)]
    assert run["parameters"]["redact"]["patterns"] == [pattern_digest(LITERAL)]


def test_a_later_report_or_resume_asks_for_the_redact_pattern_again(imported_and_run: dict[str, Path]) -> None:
    """Without ``--redact``, ``report`` and ``run --resume`` exit 2 saying to give it again; with it, they work."""
    run = imported_and_run["run"]
    refused = harness_cli("report", run)
    assert refused.returncode == 2 and "give the same --redact again" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr and LITERAL not in refused.stderr
    assert harness_cli("report", run, "--redact", LITERAL).returncode in (0, 1)
    resumed = harness_cli("run", "--resume", run, "--no-progress")
    assert resumed.returncode == 2 and "give the same --redact again" in resumed.stderr, resumed.stderr
    wrong = harness_cli("run", "--resume", run, "--no-progress", "--redact", "other")
    assert wrong.returncode == 2 and "--redact differs" in wrong.stderr
    assert harness_cli("run", "--resume", run, "--no-progress", "--redact", LITERAL).returncode in (0, 1)
    assert _leaks(run) == {}
