"""``run.json`` ``arm_fingerprints``: what identifies the system behind each arm of a run.

Each arm's system, version, write mode, budget, session times, the embedder it
embeds with (the run's ``--embedding-model`` for every arm that takes it, a
system's own one marked) and a configuration hash over all of them
(:func:`harness.memory_systems.arm_fingerprint`): ``compare`` refuses two runs
whose arm hashes differ, so the same arm under two embedders is never compared
as one configuration. Each fingerprint carries the arm's contract under the
terms the run offers (:func:`harness.run.contracts.contract_terms`).
"""

from __future__ import annotations

from typing import Any

from harness import __version__
from harness.memory_systems import UnknownArmError, arm_fingerprint, resolve_arm
from harness.run.contracts import contract_terms
from harness.run.embeddings import embedder_description


def arm_fingerprints(options: Any) -> dict[str, dict[str, Any]]:
    """Each of ``options.arms``' fingerprint under the run's budget, embedder and contract terms (an unknown arm is left out:
    the option checks report it)."""
    embedder = embedder_description(options)
    terms = contract_terms(options)
    out: dict[str, dict[str, Any]] = {}
    for arm in options.arms:
        try:
            out[arm] = arm_fingerprint(resolve_arm(arm), options.retrieval_budget, __version__, embedder, terms=terms)
        except UnknownArmError:
            continue
    return out
