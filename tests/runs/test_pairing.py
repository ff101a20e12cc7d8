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


def test_the_sentence_says_how_the_models_were_paired_and_names_every_pair() -> None:
    asked = resolve_pairing(["a", "shared"], ["b", "shared"], ["a=b"])
    assert asked is not None and asked.sentence() == "paired (--pair): A's a with B's b; A's shared with B's shared"
    auto = resolve_pairing(["old"], ["new"], None)
    assert auto is not None and auto.sentence() == (
        "paired (each run has one model; --pair old=new says so): A's old with B's new")


def test_a_pair_is_read_around_spaces_and_a_malformed_one_is_refused_in_full() -> None:
    pairing = resolve_pairing(["a"], ["b"], [" a = b "])
    assert pairing is not None and pairing.pairs == (("a", "b"),) and pairing.how == "--pair"
    for value in ("a=", "a= ", " =b", "a"):
        with pytest.raises(CompareError) as caught:
            resolve_pairing(["a"], ["b"], [value])
        assert str(caught.value) == (f"--pair {value!r}: expected OLD=NEW, A's model and B's model (e.g. --pair "
                                     "offline/reference=offline/abstain)")


def test_a_refused_pair_names_the_pair_the_run_and_its_models_in_full() -> None:
    with pytest.raises(CompareError) as caught:
        resolve_pairing(["a", "c"], ["b", "d"], ["a=b", "x=d"])
    assert str(caught.value) == "--pair x=d: run A has no model 'x' (its models: a, c)"
    with pytest.raises(CompareError) as caught:
        resolve_pairing(["a", "c"], ["b", "d"], ["c=b", "a=b", "c=d", "a=d"])
    assert str(caught.value) == "--pair: run A's model 'a' is paired more than once; pair each model once"
    with pytest.raises(CompareError) as caught:
        resolve_pairing(["a", "c"], ["b", "d"], ["a=d", "c=d"])
    assert str(caught.value) == "--pair: run B's model 'd' is paired more than once; pair each model once"


def test_a_model_already_paired_is_not_paired_again_with_its_namesake() -> None:
    """A's ``b`` is not paired with B's ``b`` when ``--pair a=b`` took B's; nor B's ``a`` with A's when A's is taken."""
    taken_in_b = resolve_pairing(["a", "b"], ["b", "c"], ["a=b"])
    assert taken_in_b is not None and taken_in_b.pairs == (("a", "b"),)
    taken_in_a = resolve_pairing(["a", "x"], ["a", "b"], ["a=b"])
    assert taken_in_a is not None and taken_in_a.pairs == (("a", "b"),)
    assert resolve_pairing(["a"], ["b", "c"], None) is None  # B has two models: only --pair pairs them
