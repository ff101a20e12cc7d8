"""A run's privacy options (``harness.run.privacy``): ``--store``, ``--redact`` and sensitivity, kept on resume.

A resume that silently changed the store would mix two stores' answers in one table; one that dropped or swapped a
``--redact`` pattern would write a secret the first half of the run hid; one that forgot the run was sensitive
would cache its prompts in the shared cache.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.records import RunManifest
from harness.redaction import pattern_digest, remember_patterns
from harness.run.privacy import PrivacyOptionsError, privacy_options
from tests.scenarios.store_factories import ITEMS, digest, write_store

SUITE = Path(__file__).resolve().parents[2] / "scenarios" / "starter"


def _args(store: str | None = None, redact: list[str] | None = None) -> SimpleNamespace:
    return SimpleNamespace(store=store, redact=redact)


def _values(*paths: Path) -> dict[str, Any]:
    return {"scenario_paths": [str(p) for p in paths or (SUITE,)]}


def _previous(parameters: dict[str, Any]) -> RunManifest:
    return RunManifest.model_construct(run_id="20261205T080000Z", parameters=parameters)


REDACT_DIFFERS = re.escape("--redact differs from the run being resumed (run.json holds its patterns, or their digests); "
                           "give the same --redact patterns, in the same order")


def test_a_fresh_run_without_flags_is_not_sensitive() -> None:
    assert privacy_options(_args(), _values(), None) == {"store": None, "redact": (), "sensitive": False}


def test_a_fresh_run_with_redact_keeps_its_patterns_and_is_sensitive() -> None:
    found = privacy_options(_args(redact=["hunter\\d", "Falcon-7"]), _values(), None)
    assert found == {"store": None, "redact": ("hunter\\d", "Falcon-7"), "sensitive": True}


@pytest.mark.parametrize("pattern, says", [("(", "not a regular expression"), ("x*", "matches the empty string")])
def test_a_redact_pattern_that_cannot_redact_is_refused_with_the_flag_named(pattern: str, says: str) -> None:
    with pytest.raises(PrivacyOptionsError, match=f"--redact .*{says}"):
        privacy_options(_args(redact=[pattern]), _values(), None)


def test_a_fresh_run_with_a_store_reads_it_and_is_sensitive(tmp_path: Path) -> None:
    path = write_store(tmp_path / "memory.db")
    found = privacy_options(_args(store=str(path)), _values(), None)
    assert found["sensitive"] is True and found["redact"] == ()
    assert found["store"].sha256 == digest(path) and len(found["store"].items) == len(ITEMS)
    with pytest.raises(PrivacyOptionsError, match="--store"):
        privacy_options(_args(store=str(tmp_path / "missing.db")), _values(), None)


def test_a_suite_marked_sensitive_makes_the_run_sensitive(tmp_path: Path) -> None:
    (tmp_path / "_suite.json").write_text(json.dumps({"sensitive": True}), encoding="utf-8")
    assert privacy_options(_args(), _values(tmp_path), None)["sensitive"] is True
    (tmp_path / "_suite.json").write_text(json.dumps({"sensitive": False}), encoding="utf-8")
    assert privacy_options(_args(), _values(tmp_path), None)["sensitive"] is False


def test_a_resumed_run_keeps_its_store_and_refuses_another_or_a_changed_one(tmp_path: Path) -> None:
    path = write_store(tmp_path / "memory.db")
    recorded = {"store": {"path": str(path.resolve()), "sha256": digest(path)}}
    kept = privacy_options(_args(), _values(), _previous(recorded))
    assert kept["store"].sha256 == digest(path) and kept["sensitive"] is True
    again = privacy_options(_args(store=str(path)), _values(), _previous(recorded))  # the same store may be named
    assert again["store"].sha256 == digest(path)
    other = write_store(tmp_path / "other.db", ITEMS[:1])
    with pytest.raises(PrivacyOptionsError, match=r"^--store .*other\.db conflicts with the run being resumed \(store "
                                                  r".*memory\.db\); drop --store$"):
        privacy_options(_args(store=str(other)), _values(), _previous(recorded))
    with pytest.raises(PrivacyOptionsError, match=r"conflicts with the run being resumed \(store None\)"):
        privacy_options(_args(store=str(path)), _values(), _previous({}))
    with pytest.raises(PrivacyOptionsError, match=r": the store changed since 20261205T080000Z started \(another "
                                                  r"sha256\); resuming would mix stores\. Start a new run\.$"):
        privacy_options(_args(), _values(), _previous({"store": {"path": str(path.resolve()), "sha256": "0" * 64}}))
    # a run recorded before store digests were: the store is read, no digest to compare
    unhashed = privacy_options(_args(), _values(), _previous({"store": {"path": str(path.resolve())}}))
    assert unhashed["store"].sha256 == digest(path)


def test_a_resumed_run_keeps_its_redact_patterns_given_again_in_the_same_order() -> None:
    patterns = ["hunter\\d", "Falcon-7"]
    remember_patterns(patterns)
    recorded = {"redact": {"patterns": [pattern_digest(p) for p in patterns]}}
    same = privacy_options(_args(redact=patterns), _values(), _previous(recorded))
    assert same == {"store": None, "redact": tuple(patterns), "sensitive": True}
    # not given again: this process was given them before (the CLI remembers every --redact it parses)
    assert privacy_options(_args(), _values(), _previous(recorded))["redact"] == tuple(patterns)
    for wrong in (patterns[::-1], patterns[:1], [*patterns, "x\\d"], ["hunter\\d", "Falcon-8"]):
        with pytest.raises(PrivacyOptionsError, match=f"^{REDACT_DIFFERS}$"):
            privacy_options(_args(redact=wrong), _values(), _previous(recorded))
    # a run recorded before digests were holds the patterns themselves
    legacy = {"redact": {"patterns": patterns}}
    assert privacy_options(_args(redact=patterns), _values(), _previous(legacy))["redact"] == tuple(patterns)
    with pytest.raises(PrivacyOptionsError, match=f"^{REDACT_DIFFERS}$"):
        privacy_options(_args(redact=["hunter\\d", "Falcon-8"]), _values(), _previous(legacy))
    # a resumed run that had no --redact may not gain one
    with pytest.raises(PrivacyOptionsError, match=f"^{REDACT_DIFFERS}$"):
        privacy_options(_args(redact=patterns), _values(), _previous({}))


def test_a_digest_no_pattern_was_given_for_is_refused_saying_to_give_redact_again() -> None:
    recorded = {"redact": {"patterns": [pattern_digest("never given to this process 7f3a")]}}
    with pytest.raises(PrivacyOptionsError, match="give the same --redact again"):
        privacy_options(_args(), _values(), _previous(recorded))


def test_a_resumed_sensitive_run_stays_sensitive_with_no_flag_at_all() -> None:
    assert privacy_options(_args(), _values(), _previous({"sensitive": True}))["sensitive"] is True
    assert privacy_options(_args(), _values(), _previous({"sensitive": False}))["sensitive"] is False
    assert privacy_options(SimpleNamespace(), _values(), None) == {"store": None, "redact": (), "sensitive": False}
