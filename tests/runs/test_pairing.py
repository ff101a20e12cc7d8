"""Which models ``compare`` pairs, and which differences refuse a pairing (the rest go with the models)."""

from __future__ import annotations

import pytest

from harness.runs.comparability import CompareError, Difference
from harness.runs.pairing import resolve_pairing, split_differences


def test_one_model_each_of_different_names_is_paired_without_being_asked() -> None:
    pairing = resolve_pairing(["old"], ["new"], None)
    assert pairing is not None and pairing.pairs == (("old", "new"),) and pairing.how == "one model each"
    assert "--pair old=new says so" in pairing.sentence()
    assert resolve_pairing(["m"], ["m"], None) is None  # a nightly: the same model, compared by name
    assert resolve_pairing(["a", "b"], ["c"], None) is None  # not one each: only --pair pairs them


def test_asked_pairs_are_kept_and_a_model_neither_names_pairs_with_its_namesake() -> None:
    pairing = resolve_pairing(["a", "shared"], ["b", "shared"], ["a=b"])
    assert pairing is not None and pairing.pairs == (("a", "b"), ("shared", "shared")) and pairing.how == "--pair"
    assert pairing.mapping() == {"a": "b", "shared": "shared"}


@pytest.mark.parametrize(("asked", "message"), [
    (["a"], "expected OLD=NEW"),
    (["=b"], "expected OLD=NEW"),
    (["x=b"], "run A has no model 'x' (its models: a, c)"),
    (["a=y"], "run B has no model 'y' (its models: b, d)"),
    (["a=b", "c=b"], "run B's model 'b' is paired more than once"),
])
def test_a_malformed_or_unknown_pair_is_refused_naming_it(asked: list[str], message: str) -> None:
    with pytest.raises(CompareError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resolve_pairing(["a", "c"], ["b", "d"], asked)


def test_only_what_breaks_the_pairing_refuses_it() -> None:
    found = [Difference(name, "x", "y") for name in ("models", "suite hash", "scenario ids", "arms", "retrieval budget",
                                                      "excluded scenarios", "judge model", "arm recall configuration",
                                                      "arm recall contract sees times", "temperature", "api base",
                                                      "router config hash", "epochs", "seed", "harness version",
                                                      "max tokens", "verdict alpha")]
    breaks, noted = split_differences(found)
    assert [d.name for d in breaks] == ["suite hash", "scenario ids", "arms", "retrieval budget", "excluded scenarios",
                                        "judge model", "arm recall configuration", "arm recall contract sees times"]
    assert [d.name for d in noted] == ["temperature", "api base", "router config hash", "epochs", "seed",
                                       "harness version", "max tokens", "verdict alpha"]
