"""A run's privacy options: ``--store``, ``--redact``, and whether the run is sensitive (:mod:`harness.scenarios.privacy`).

A resumed run keeps its own store and patterns: flags may not change them.
``run.json`` holds each ``--redact`` pattern only by its digest
(:func:`harness.redaction.pattern_digest`), so a resume is given the same
patterns again and they are checked against the digests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.records import RunManifest


class PrivacyOptionsError(ValueError):
    """``--store`` or ``--redact`` cannot be used; the message names the flag and the fix."""


def _check_resumed_patterns(given: tuple[str, ...], written: list[str]) -> None:
    from harness.redaction import DIGEST_PREFIX, pattern_digest

    if not given:
        return
    mine = [pattern_digest(p) if w.startswith(DIGEST_PREFIX) else p for p, w in zip(given, written)]
    if len(given) != len(written) or mine != written:
        raise PrivacyOptionsError("--redact differs from the run being resumed (run.json holds its patterns, or their "
                                  "digests); give the same --redact patterns, in the same order")


def privacy_options(args: Any, values: dict[str, Any], previous: RunManifest | None) -> dict[str, Any]:
    """``{"store", "redact", "sensitive"}`` of this run (a resumed one: its own).

    Raises:
        PrivacyOptionsError: a flag conflicts with the resumed run, a pattern does not compile or a
            recorded digest was not given again, or the store cannot be read or changed since.
    """
    from harness.redaction import RedactionError, Redactor, recorded_patterns
    from harness.scenarios import StoreError, load_store, sensitive_suites

    stored = previous.parameters if previous else {}
    store_path = getattr(args, "store", None)
    patterns = tuple(getattr(args, "redact", None) or ())
    written: list[str] = []
    if previous is not None:
        recorded = (stored.get("store") or {}).get("path")
        if store_path and (recorded is None or str(Path(store_path).expanduser().resolve()) != recorded):
            raise PrivacyOptionsError(f"--store {store_path} conflicts with the run being resumed (store {recorded}); "
                                      "drop --store")
        written = list((stored.get("redact") or {}).get("patterns") or ())
        _check_resumed_patterns(patterns, written)
        store_path = recorded
    try:
        Redactor.build(patterns)
        patterns = recorded_patterns(written) if previous is not None else patterns
    except RedactionError as exc:
        raise PrivacyOptionsError(str(exc)) from None
    store = None
    if store_path:
        try:
            store = load_store(store_path)
        except StoreError as exc:
            raise PrivacyOptionsError(str(exc)) from None
        if previous is not None and (stored.get("store") or {}).get("sha256") not in (None, store.sha256):
            raise PrivacyOptionsError(f"--store {store_path}: the store changed since {previous.run_id} started (another "
                                      "sha256); resuming would mix stores. Start a new run.")
    sensitive = bool(store or patterns or stored.get("sensitive") or sensitive_suites(values["scenario_paths"]))
    return {"store": store, "redact": patterns, "sensitive": sensitive}
