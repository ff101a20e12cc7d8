"""A run over a team's own data: imported transcripts and ``--store``, end to end on the offline model.

One run is made for the module: logged sessions (with a secret and a marker
phrase in them) imported, then run in three arms with ``--store`` (a store of
two workspaces and the global scope) and ``--redact``, from a working directory
of its own, so every file it could write elsewhere is under ``tmp``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.cli import main
from harness.importers import import_transcripts
from harness.redaction import pattern_digest
from tests.importers.transcript_fixtures import SECRET, two_sessions, write_jsonl
from tests.scenarios.store_factories import T0, digest, side_files, write_store

MARKER = "zebra-marmalade"
"""A phrase of the logged conversation: text of the run, to look for outside its folder."""
PHONE = "+1 555 0100"


@pytest.fixture(scope="module")
def sensitive(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sensitive")
    messages = two_sessions()
    messages[0]["content"] = f"Use port 5433 for staging ({MARKER}). Token: {SECRET}"
    source = write_jsonl(root / "log.jsonl", messages)
    suite = root / "suite"
    import_transcripts(source, suite, echo=lambda line: None)
    store = write_store(root / "team.sqlite", (
        ("acme-port", f"The staging database port is 5433; ask {PHONE}.", ("staging", "port"), "acme", T0),
        ("beta-port", "Beta's staging database port is 6000.", ("staging", "port"), "beta", T0),
        ("style", f"The user prefers short answers. key={SECRET}", ("style",), None, T0),
        ("acme-late", "The staging port moved to 7777.", ("staging", "port"), "acme", T0 + 30 * 86_400_000),
    ))
    before = {"digest": digest(store), "side": side_files(store)}
    cwd = Path.cwd()
    os.chdir(root)  # the default cache folder, had it been used, would land here
    try:
        code = main(["run", "--scenarios", str(suite), "--store", str(store), "--redact", r"\+1 555 \d{4}",
                     "--arms", "history_only", "recall", "full_history", "--out", str(root / "run"), "--no-progress"])
    finally:
        os.chdir(cwd)
    assert code in (0, 1)
    (root / "before.json").write_text(json.dumps(before), encoding="utf-8")
    return {"root": root, "run": root / "run", "store": store, "suite": suite, "source": source}


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def _parameters(run: Path) -> dict:
    return json.loads((run / "run.json").read_text(encoding="utf-8"))["parameters"]


def test_a_run_over_imported_transcripts_is_marked_sensitive_in_run_json(sensitive: dict[str, Path]) -> None:
    parameters = _parameters(sensitive["run"])
    assert parameters["sensitive"] is True
    assert parameters["redact"]["patterns"] == [pattern_digest(r"\+1 555 \d{4}")] and parameters["redact"]["redacted"] >= 2
    assert parameters["store"]["path"] == str(sensitive["store"].resolve()) and parameters["store"]["items"] == 4


def test_the_store_seeds_recall_and_the_host_shows_only_the_probe_s_scope(sensitive: dict[str, Path]) -> None:
    (recall,) = [r for r in _records(sensitive["run"]) if r["arm"] == "recall"]
    disclosed = {i for call in recall["tool_calls"] for i in call["disclosed_item_ids"]}
    assert "acme-port" in disclosed and "5433" in recall["final_answer"]
    assert not disclosed & {"beta-port", "acme-late"}  # another workspace's, and one written after the probe
    summary = json.loads((sensitive["run"] / "summary.json").read_text(encoding="utf-8"))
    leaks = [r for r in summary["metrics"] if r["metric"] == "tool_leakage_count" and r["category"] == "all"]
    assert leaks and all(r["value"] == 0 for r in leaks)


def test_the_store_file_is_unchanged_after_a_run(sensitive: dict[str, Path]) -> None:
    before = json.loads((sensitive["root"] / "before.json").read_text(encoding="utf-8"))
    assert digest(sensitive["store"]) == before["digest"] and side_files(sensitive["store"]) == before["side"]


def test_secrets_and_redact_matches_never_reach_the_model_or_the_records(sensitive: dict[str, Path]) -> None:
    text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in sensitive["run"].rglob("*") if p.is_file())
    assert SECRET not in text and PHONE not in text
    assert "[REDACTED]" in text and MARKER in text  # the run still holds its (redacted) conversation


def test_a_sensitive_run_keeps_its_response_cache_inside_its_run_folder(sensitive: dict[str, Path]) -> None:
    assert _parameters(sensitive["run"])["cache_dir"] == str(sensitive["run"] / "cache")
    assert any((sensitive["run"] / "cache").rglob("*.json"))
    assert not (sensitive["root"] / ".recall-eval-cache").exists()


def test_no_text_of_a_sensitive_run_is_written_outside_its_run_folder(sensitive: dict[str, Path]) -> None:
    inputs = {sensitive["source"], sensitive["store"]}
    outside = [p for p in sensitive["root"].rglob("*") if p.is_file() and p not in inputs
               and not p.is_relative_to(sensitive["run"]) and not p.is_relative_to(sensitive["suite"])]
    assert outside  # before.json at least: the scan looks at something
    assert [p for p in outside if MARKER.encode() in p.read_bytes()] == []


def test_the_report_scores_exactly_what_ran(sensitive: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(sensitive["run"])]) in (0, 1)
    summary = json.loads((sensitive["run"] / "summary.json").read_text(encoding="utf-8"))
    assert not [w for w in summary["run"]["warnings"] if "changed since the run" in w]
    assert {r["outcome"] for r in map(json.loads, (sensitive["run"] / "scores.jsonl").read_text().splitlines())} == {"unlabelled"}


def test_a_sensitive_run_refuses_a_cache_dir_outside_its_folder(sensitive: dict[str, Path], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--scenarios", str(sensitive["suite"]), "--out", str(tmp_path / "run"),
                 "--cache-dir", str(tmp_path / "shared-cache"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "real user data (sensitive)" in err and "--cache-dir" in err
    assert not (tmp_path / "shared-cache").exists()


def test_a_store_of_another_schema_version_is_refused_by_run_and_validate(
        sensitive: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "recall-eval-memory-items", "schema_version": 1, "items": []}),
                   encoding="utf-8")
    assert main(["validate", str(sensitive["suite"]), "--store", str(old)]) == 2
    assert "schema version 1" in capsys.readouterr().err
    code = main(["run", "--scenarios", str(sensitive["suite"]), "--store", str(old), "--out", str(tmp_path / "r"),
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "schema version 1, and this harness reads version 2" in err and "Traceback" not in err


def test_validate_with_a_store_says_what_each_probe_sees(sensitive: dict[str, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(sensitive["suite"]), "--store", str(sensitive["store"])]) == 0
    out = capsys.readouterr().out
    assert "4 items, schema version 2" in out and "per probe 3-3 items created before it, 2-2 in its scope" in out


def test_a_resumed_sensitive_run_keeps_its_store_redaction_and_cache(sensitive: dict[str, Path], tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(sensitive["run"], run)
    store = shutil.copy(sensitive["store"], tmp_path / "team.sqlite")
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    manifest["parameters"]["store"]["path"] = str(store)
    manifest["parameters"]["cache_dir"] = str(run / "cache")
    (run / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--resume", str(run), "--no-progress"]) in (0, 1)
    parameters = _parameters(run)
    assert parameters["sensitive"] and parameters["store"]["path"] == str(store)
    assert parameters["redact"]["patterns"] == [pattern_digest(r"\+1 555 \d{4}")] and parameters["cache_dir"] == str(run / "cache")
    assert not (tmp_path / ".recall-eval-cache").exists()


def test_resuming_over_a_store_that_changed_is_refused(sensitive: dict[str, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(sensitive["run"], run)
    store = write_store(tmp_path / "other.sqlite")
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    manifest["parameters"]["store"]["path"] = str(store)
    (run / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["run", "--resume", str(run), "--no-progress"]) == 2
    assert "the store changed since" in capsys.readouterr().err
