"""Narrowing a run for the daily loop: ``--limit N`` scenarios and ``--sample-id`` samples.

Both act after ``--filter`` and both are recorded in ``run.json``
(``parameters.limit``, ``parameters.sample_ids``), so a resumed run keeps
them and ``compare`` sees that a run was cut. ``--limit N`` keeps the first
N scenarios in the order the suite loads (the order of ``list``), never a
random draw: the same command runs the same scenarios tomorrow. A sample id
is written as the records write it, ``scenario|arm|model|epoch``
(``results.jsonl``, ``scores.jsonl``, the report's transcripts); without
``--arms``, ``--model`` or ``--epochs`` those of the ids are used, so one id
pasted from a report re-runs exactly that sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.records import sample_id
from harness.scenarios import Scenario, only, scenario_ids


class SelectionError(ValueError):
    """A ``--limit`` or ``--sample-id`` that selects nothing or cannot be read; the message says which and why."""


@dataclass(frozen=True)
class SampleKey:
    """A sample id taken apart."""

    scenario_id: str
    arm: str
    model: str
    epoch: int

    @property
    def sample_id(self) -> str:
        return sample_id(self.scenario_id, self.arm, self.model, self.epoch)


def parse_sample_id(text: str) -> SampleKey:
    """``'pref-01|recall|offline/reference|0'`` -> its parts (a model name may itself hold ``|``).

    Raises:
        SelectionError: not four ``|``-separated parts ending in an epoch number.
    """
    parts = text.split("|")
    if len(parts) < 4 or not all(parts) or not parts[-1].isdigit():
        raise SelectionError(
            f"--sample-id {text!r}: not a sample id; sample ids read SCENARIO|ARM|MODEL|EPOCH, as results.jsonl and the "
            "report name them (e.g. 'pref-01|recall|offline/reference|0'); to run a whole scenario use --filter ID"
        )
    return SampleKey(parts[0], parts[1], "|".join(parts[2:-1]), int(parts[-1]))


def sample_id_defaults(given: dict[str, Any]) -> dict[str, Any]:
    """``given`` with ``--arms``, ``--model`` and ``--epochs`` taken from ``--sample-id`` where not given.

    Given ones must hold every id's arm, model and epoch (else the id could
    never be planned).

    Raises:
        SelectionError: an id cannot be read, or names an arm, model or epoch the flags leave out.
    """
    if not given.get("sample_ids"):
        return given
    keys = [parse_sample_id(text) for text in given["sample_ids"]]
    out = dict(given)
    out["sample_ids"] = [key.sample_id for key in keys]
    for name, flag, wanted in (("arms", "--arms", [k.arm for k in keys]), ("models", "--model", [k.model for k in keys])):
        if out[name] is None:
            out[name] = list(dict.fromkeys(wanted))
        elif missing := [w for w in dict.fromkeys(wanted) if w not in out[name]]:
            raise SelectionError(f"--sample-id names {name[:-1]} {missing[0]!r}, which {flag} {' '.join(out[name])} leaves out; "
                                 f"add it to {flag} or drop {flag}")
    last = max(k.epoch for k in keys)
    if out["epochs"] is None:
        out["epochs"] = last + 1
    elif last >= out["epochs"]:
        raise SelectionError(f"--sample-id names epoch {last}, beyond --epochs {out['epochs']} (epochs count from 0); "
                             "raise --epochs or drop it")
    return out


def narrow_scenarios(scenarios: Sequence[Scenario], hashes: dict[str, str], values: dict[str, Any]) -> tuple[Sequence[Scenario], dict[str, str]]:
    """The scenarios the sample ids name (when given), then the first ``limit`` of them (when given), in suite order.

    Raises:
        SelectionError: ``limit`` below 1, or a sample id names a scenario the paths and filters do not hold.
    """
    limit, ids = values.get("limit"), values.get("sample_ids") or []
    if limit is not None and limit < 1:
        raise SelectionError(f"--limit {limit}: must be at least 1")
    if ids:
        wanted = {parse_sample_id(text).scenario_id for text in ids}
        present = set(scenario_ids(scenarios))
        if missing := sorted(wanted - present):
            where = " after --filter" if values.get("filters") else ""
            raise SelectionError(f"--sample-id: scenario {missing[0]!r} is not among the {len(present)} scenario(s) of "
                                 f"{', '.join(values['scenario_paths'])}{where}; check the id (`recall-eval list`)")
        scenarios = only(scenarios, wanted)  # a shelf's subset: nothing unpacked
    if limit is not None:
        scenarios = scenarios[:limit]
    kept = set(scenario_ids(scenarios))
    return scenarios, {sid: digest for sid, digest in hashes.items() if sid in kept}


def selected(sample_ids: list[str], scenario_ids: set[str]) -> list[str]:
    """The sample ids among these scenarios (``--sample-id`` with ``--limit`` may leave some out)."""
    return [text for text in sample_ids if parse_sample_id(text).scenario_id in scenario_ids]
