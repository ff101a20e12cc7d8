"""Results held by their inputs' content (harness/analysis/held.py), and paired_evidence's use of it."""

from __future__ import annotations

import threading

import pytest

from harness.analysis import decision, held


def test_the_digest_tells_apart_parts_that_join_to_the_same_bytes() -> None:
    assert held.digest(b"ab", b"c") != held.digest(b"a", b"bc")
    assert held.digest(b"ab", b"c") == held.digest(b"ab", b"c") and len(held.digest(b"")) == 16


def test_a_key_is_computed_once_the_oldest_key_goes_first_and_an_error_holds_nothing() -> None:
    calls: list[int] = []

    def square(x: int) -> int:
        calls.append(x)
        if x < 0:
            raise ValueError(x)
        return x * x

    memo = held.ByDigest(square, maxsize=2)
    assert [memo(("k", 2), 2), memo(("k", 2), 2), memo(("k", 3), 3)] == [4, 4, 9] and calls == [2, 3]
    memo(("k", 2), 2)  # 2 is now the newest: adding 4 drops 3
    memo(("k", 4), 4)
    memo(("k", 2), 2)
    memo(("k", 3), 3)
    assert calls == [2, 3, 4, 3]
    for _ in range(2):
        with pytest.raises(ValueError):
            memo(("k", -1), -1)
    assert calls[-2:] == [-1, -1]
    memo.cache_clear()
    memo(("k", 2), 2)
    assert calls[-1] == 2 and memo.__module__ == __name__  # found (and cleared) by the session in this module


def test_threads_asking_at_once_all_get_the_value() -> None:
    memo = held.ByDigest(lambda x: [x], maxsize=8)
    got: list[list[int]] = []
    threads = [threading.Thread(target=lambda i=i: got.append(memo(i % 3, i % 3))) for i in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(v[0] for v in got) == sorted(i % 3 for i in range(30))


def test_paired_evidence_is_held_by_every_input_that_changes_it() -> None:
    """The same differences under other units, another level, other bounds, draws or seed are other evidence.

    Bugs planted: the key without the units (a conversation's evidence served for scenarios), without alpha, and
    made of the treatment alone (two pairs with the same treatment and other baselines)."""
    decision._held.cache_clear()
    baseline, treatment = [0, 0, 0, 1, 0, 1, 0, 0], [1, 1, 1, 1, 0, 1, 1, 0]
    alone = decision.paired_evidence(baseline, treatment)
    grouped = decision.paired_evidence(baseline, treatment, ["a", "a", "b", "b", "c", "c", "d", "d"])
    assert (alone.unit, alone.n) == ("scenario", 8) and (grouped.unit, grouped.n) == ("conversation", 4)
    paired = decision.paired_evidence(baseline, treatment, ["a", "b", "a", "b", "a", "b", "a", "b"])
    assert paired.n == 2 and decision.paired_evidence(baseline, treatment, list("abcdefgh")).unit == "scenario"
    assert decision.paired_evidence(baseline, treatment) is alone  # held: the same frozen object
    wider = decision.paired_evidence(baseline, treatment, alpha=0.01)
    assert wider.alpha == 0.01 and wider.ci_low < alone.ci_low
    assert decision.paired_evidence(baseline, treatment, bounds=(None, None)).ci_high != alone.ci_high
    other = decision.paired_evidence([1, 1, 1, 1, 0, 1, 1, 0], treatment)
    assert other.diff == 0.0 and alone.diff == 0.5
    sampled = [decision.paired_evidence([0] * 20, [1] * 14 + [0] * 6, draws=50, seed=s) for s in (1, 2)]
    assert sampled[0] is not sampled[1]
    assert decision.paired_evidence([0] * 20, [1] * 14 + [0] * 6, draws=60, seed=1) is not sampled[0]
