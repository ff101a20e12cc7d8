"""Which model of run A is compared with which model of run B, and what a model comparison may not differ in.

A nightly compares one setup with itself, and any difference in what was
asked of the model (its name, server, router configuration, temperature,
token limit) makes the runs *not comparable*. A model upgrade is the other
common A/B: the model is exactly what differs. ``compare A B --pair OLD=NEW``
(repeatable) says so; when each run has exactly one model and their names
differ, the two are paired without being asked, and ``compare`` says so.

Paired models are compared scenario by scenario, so only what breaks that
pairing is refused (:data:`PAIRING_BREAKERS`): the suite's content (its hash),
the scenario set (ids and excluded scenarios), the arms (their names,
configurations and contracts), the retrieval budget, and the judge that
scored (another judge's grades would be what changed). Everything else that
differs (API base, router configuration, temperature, token and tool-round
limits, epochs, seed, harness version, verdict thresholds) belongs to the
models being compared: it is listed, not refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.runs.comparability import CompareError, Difference

__all__ = ["PAIRING_BREAKERS", "Pairing", "resolve_pairing", "split_differences"]

#: Differences (by :attr:`Difference.name`) that break a scenario-by-scenario pairing of two models; an arm's
#: configuration and contract (``arm NAME ...``) too.
PAIRING_BREAKERS = frozenset({"suite hash", "scenario ids", "arms", "retrieval budget", "excluded scenarios",
                              "judge model"})


@dataclass(frozen=True)
class Pairing:
    """A's models paired with B's: ``pairs`` in A's order, and how they came to be paired (for the terminal)."""

    pairs: tuple[tuple[str, str], ...]
    #: ``--pair`` (asked) or ``one model each`` (paired without being asked).
    how: str

    def mapping(self) -> dict[str, str]:
        return dict(self.pairs)

    def sentence(self) -> str:
        """``paired (one model each; --pair A=B says so): A's m1 with B's m2``."""
        shown = "; ".join(f"A's {a} with B's {b}" for a, b in self.pairs)
        if self.how == "--pair":
            return f"paired (--pair): {shown}"
        a, b = self.pairs[0]
        return f"paired (each run has one model; --pair {a}={b} says so): {shown}"


def _parse(values: Sequence[str]) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        old, sep, new = value.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise CompareError(f"--pair {value!r}: expected OLD=NEW, A's model and B's model (e.g. "
                               "--pair offline/reference=offline/abstain)")
        pairs.append((old.strip(), new.strip()))
    return pairs


def resolve_pairing(models_a: Sequence[str], models_b: Sequence[str], asked: Sequence[str] | None) -> Pairing | None:
    """The pairing ``--pair`` asks for (checked against both runs' models), the automatic one, or None.

    None (compare model by model, by name) when nothing is asked and the runs do not each have one model of
    different names. With ``--pair``, a model neither pair names is paired with its namesake in the other run.

    Raises:
        CompareError: a ``--pair`` value is malformed, names a model its run lacks, or pairs a model twice.
    """
    if asked:
        pairs = _parse(asked)
        for side, models, index in (("A", models_a, 0), ("B", models_b, 1)):
            for pair in pairs:
                if pair[index] not in models:
                    raise CompareError(f"--pair {pair[0]}={pair[1]}: run {side} has no model {pair[index]!r} "
                                       f"(its models: {', '.join(models)})")
            names = [pair[index] for pair in pairs]
            twice = sorted({name for name in names if names.count(name) > 1})
            if twice:
                raise CompareError(f"--pair: run {side}'s model {twice[0]!r} is paired more than once; pair each "
                                   "model once")
        named_a, named_b = {x for x, _ in pairs}, {y for _, y in pairs}
        same = [(m, m) for m in models_a if m in models_b and m not in named_a and m not in named_b]
        return Pairing(tuple(pairs + same), "--pair")
    if len(models_a) == 1 and len(models_b) == 1 and models_a[0] != models_b[0]:
        return Pairing(((models_a[0], models_b[0]),), "one model each")
    return None


def _breaks(difference: Difference) -> bool:
    return difference.name in PAIRING_BREAKERS or difference.name.startswith("arm ")


def split_differences(found: Sequence[Difference]) -> tuple[list[Difference], list[Difference]]:
    """(what breaks the pairing, what belongs to the paired models) of the runs' differences; ``models`` is dropped
    (the pairing says it)."""
    kept = [d for d in found if d.name != "models"]
    return [d for d in kept if _breaks(d)], [d for d in kept if not _breaks(d)]
