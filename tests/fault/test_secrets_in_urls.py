"""Credentials inside ``--api-base`` (``user:pass@`` userinfo, a token in the query string) are used for the
requests but never written: not in run.json, summary.json, the pages, the records or the terminal."""

from __future__ import annotations

from pathlib import Path

from harness.records import read_manifest
from tests.fault.conftest import fake_run_argv, finish, start
from tests.integration.fake_openai_server import FakeOpenAIServer, Script

SECRETS = ("hunter2-pass", "tok-0123456789abcdef", "sig-fedcba9876")


def _with_credentials(base_url: str) -> str:
    scheme, rest = base_url.split("://", 1)
    return f"{scheme}://{rest}?api-version=2024-06-01&token={SECRETS[1]}&sig={SECRETS[2]}"


def test_credentials_in_the_api_base_reach_no_file_and_no_terminal_line(tmp_path: Path) -> None:
    """A run (and its report) with tokens in the --api-base query: the server got the requests, and no
    file of the run folder nor any output line holds a credential; run.json keeps the harmless api-version."""
    with FakeOpenAIServer(Script()) as server:
        url = _with_credentials(server.base_url)
        code, out, err = finish(start(fake_run_argv(url, "--no-cache", out=tmp_path / "run"), tmp_path))
        assert code in (0, 1), err
        assert server.requests and all("token=" + SECRETS[1] in seen.path for seen in server.requests)

    written = {
        p.name: p.read_text(encoding="utf-8")
        for p in (tmp_path / "run").iterdir()
        if p.is_file() and p.suffix in (".json", ".jsonl", ".html", ".csv", ".xml")
    }
    assert {"run.json", "summary.json", "index.html", "results.jsonl"} <= set(written)
    for name, text in {**written, "stdout": out, "stderr": err}.items():
        assert not [s for s in SECRETS if s in text], name
    api_base = read_manifest(tmp_path / "run").parameters["api_base"]
    assert api_base.endswith("/v1?api-version=2024-06-01&token=REDACTED&sig=REDACTED")


def test_userinfo_and_query_credentials_are_redacted_in_every_written_url() -> None:
    """The one helper every URL writer uses: userinfo dropped, query values redacted but harmless ones, fragment dropped.
    (A userinfo URL cannot be called through litellm's OpenAI client at all, so it is checked here, not over the wire.)"""
    from harness.records import redact_url

    assert redact_url(f"https://alice:{SECRETS[0]}@llm.example:8443/v1?key={SECRETS[1]}#{SECRETS[2]}") == "https://llm.example:8443/v1?key=REDACTED"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert redact_url(f"http://h/v1?{SECRETS[1]}") == "http://h/v1?REDACTED"


def test_resume_of_a_run_whose_api_base_was_redacted_asks_for_it_again(tmp_path: Path) -> None:
    """``--resume`` without ``--api-base`` after a redacted one: exit 2 with a message saying to give --api-base again
    (the redacted URL is never called); with it, the run resumes."""
    with FakeOpenAIServer(Script()) as server:
        url = _with_credentials(server.base_url)
        code, _, err = finish(start(fake_run_argv(url, "--no-cache", "--filter", "smoke-01*", out=tmp_path / "run"), tmp_path))
        assert code in (0, 1), err
        requests = len(server.requests)
        argv = [a for a in fake_run_argv(url, resume=tmp_path / "run") if a not in ("--api-base", url)]
        code, _, err = finish(start(argv, tmp_path))
        assert code == 2 and "--api-base" in err and "redacted" in err and "Traceback" not in err
        assert len(server.requests) == requests
        code, _, err = finish(start(fake_run_argv(url, resume=tmp_path / "run"), tmp_path))
        assert code in (0, 1), err
