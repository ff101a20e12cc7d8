"""What identifies an arm's system in a run (``run.json`` ``arm_fingerprints[arm]``).

Its own seam beside :mod:`harness.memory_systems.protocol`: the fingerprint is read by ``compare`` to refuse
runs that met the probe on different terms, so the hash's inputs are listed here in one place: system,
class, write mode, budget, session times, configuration, the embedder the arm embeds with (the run's or its
own) and the shared instruction set; the arm's contract rides beside the hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from harness.memory_systems.contract import ContractTerms, fingerprint_contract
from harness.memory_systems.protocol import SystemArm
from harness.memory_systems.run_embedding import arm_embedder
from harness.scenarios import RetrievalBudget


def arm_fingerprint(arm: SystemArm, budget: RetrievalBudget, harness_version: str,
                    run_embedder: dict[str, Any] | None = None, *,
                    terms: ContractTerms | None = None) -> dict[str, Any]:
    """What identifies an arm's system in a run: system, version, budget, session times, embedder, a configuration
    hash and the arm's contract (:func:`harness.memory_systems.contract.fingerprint_contract`).

    The hash covers the system's name and class, write mode, budget, ``sees_session_times``,
    :meth:`MemorySystem.configuration` and the embedder it embeds with (:func:`arm_embedder`: the run's
    ``run_embedder`` record when it takes it): the same arm name under another configuration or embedder hashes
    apart; the instruction set too unless it is ``legacy`` (whose hash is the one runs made before contracts
    recorded). A system that embeds nothing hashes as before embedders were recorded.
    """
    system = arm.system
    version = f"recall-eval {harness_version}" if arm.origin == "built-in" else arm.origin
    sees = getattr(system, "sees_session_times", True) is not False
    configure = getattr(system, "configuration", None)
    configuration = dict(configure()) if callable(configure) else {}
    payload = {
        "system": system.name, "class": f"{type(system).__module__}.{type(system).__qualname__}",
        "write_mode": arm.write_mode, "retrieval_budget": budget.record(), "sees_session_times": sees,
        "configuration": configuration,
    }
    embedder = arm_embedder(system, run_embedder)
    if embedder is not None:  # systems that embed nothing hash as before
        payload["embedder"] = embedder
    contract = fingerprint_contract(arm, terms or ContractTerms(budget=budget))
    if contract["instructions"]["name"] not in ("legacy", "none"):
        payload["instructions"] = contract["instructions"]
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    facts = getattr(system, "fingerprint_facts", None)  # what identifies a served product (an MCP server's name, version)
    return {
        **({"served": dict(facts())} if callable(facts) else {}),
        "system": system.name, "version": version, "write_mode": arm.write_mode,
        "retrieval_budget": budget.record(), "sees_session_times": sees,
        "config_hash": hashlib.sha256(text.encode("utf-8")).hexdigest(), "contract": contract,
        **({"embedder": embedder} if embedder is not None else {}),
    }
