"""``summary.json``: the scored samples of a run aggregated, the verdict decided and every input named, as one document.

:func:`build_summary` is a pure function of the manifest, the records and
the scenarios (and the judges' verdicts when a judge is given);
``docs/summary-json.md`` documents every field.
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness import __version__
from harness.analysis import RunHealth, VerdictConfig
from harness.records import SampleRecord, redact_url
from harness.scenarios import Scenario, ShelfView

SUMMARY_SCHEMA_VERSION = 1


def hash_warnings(records: Sequence[SampleRecord], scenarios: Mapping[str, Scenario]) -> list[str]:
    from harness.scenarios import known_hash, scenario_hash

    seen: dict[str, str] = {}
    for record in records:
        seen.setdefault(record.scenario_id, record.scenario_hash)
    warnings = []
    for sid, h in sorted(seen.items()):
        # a shelf hashed each scenario as it was loaded: the same digest, without unpacking it again
        if sid in scenarios and (now := known_hash(scenarios, sid) or scenario_hash(scenarios[sid])) != h:
            warnings.append(f"scenario {sid!r} changed since the run (hash {h[:12]} in results, {now[:12]} now)")
    return warnings


def _expected_dict(scenario: Scenario) -> dict[str, Any]:
    """The answer key shown in a sample's panel: the non-default ``expect`` fields plus ``abstain``."""
    return scenario.expect.model_dump(mode="json", exclude_defaults=True) | {"abstain": scenario.expect.abstain}


def _sample_dict(record: SampleRecord, scenario: Scenario, scores: Any,
                expected: dict[str, Any] | None = None) -> dict[str, Any]:
    """One entry of the ``samples`` list handed to the HTML renderer (see report_contract.md).

    ``expected`` is :func:`_expected_dict` of the scenario, passed in when the
    caller shares one dict between the samples of a scenario (read-only).
    """
    dumped = record.model_dump(include={"error", "tool_calls", "model_calls"})  # one serializer call for all
    return {
        "sample_id": record.sample_id, "scenario_id": record.scenario_id, "title": scenario.title,
        "category": record.category, "tags": list(scenario.tags), "arm": record.arm, "model": record.model,
        "epoch": record.epoch, "status": record.status, "error": dumped["error"],
        "outcome": scores.outcome, "final_answer": record.final_answer, "stop_reason": record.stop_reason,
        "messages": record.messages, "tool_calls": dumped["tool_calls"], "model_calls": dumped["model_calls"],
        "pasted": record.pasted.model_dump() if record.pasted is not None else None,
        "tools_offered": list(record.tools_offered), "seed": record.seed,
        "scores": scores.model_dump(include={"scores"})["scores"],
        # per sample in scores.jsonl, so the session-retrieval means of summary.json can be recomputed and audited
        "session_retrieval": scores.session_retrieval, "ours_session_retrieval": scores.ours_session_retrieval,
        "uncredited_items": scores.uncredited_items,  # ids a tool reported and was not credited with (harness.score.credit)
        "latency_s": record.wall_time_s, "prompt_tokens": scores.prompt_tokens,
        "completion_tokens": scores.completion_tokens, "tool_result_tokens": scores.tool_result_tokens,
        "cost_usd": scores.cost_usd, "cached": scores.cached,
        # The write phase (arms whose agent writes memory): its calls shown before the probe's, its costs apart.
        "write_calls": _write_calls(record), "write_model_calls": scores.write_model_calls,
        "write_tokens": scores.write_prompt_tokens + scores.write_completion_tokens,
        "unsupported_kinds": dict(Counter(c.kind for c in claims)) if (claims := scores.unsupported_claims) else {},
        "expected": expected if expected is not None else _expected_dict(scenario),
        "sample_scores": scores,  # written whole to scores.jsonl, so compare can aggregate it again
    }


def _write_calls(record: SampleRecord) -> list[dict[str, Any]]:
    """Every write call of the sample's write phase, named after its session for the transcript view."""
    if record.write_phase is None:
        return []
    return [
        {**call.model_dump(), "name": f"[write phase, session {session.session_id}] {call.name}"}
        for session in record.write_phase.sessions
        for call in session.tool_calls
    ]


def judge_for(judge_model: str | None, judge_cache_dir: Path | None, *, preset: str | None = None,
              prompt_file: Path | None = None) -> Any:
    """The rubric judge of a report: the strict prompt, a benchmark preset, or a prompt file (exclusive)."""
    if not judge_model:
        return None
    from harness.score import DEFAULT_CACHE_DIR, Judge, judge_prompt

    return Judge(model=judge_model, cache_dir=judge_cache_dir or DEFAULT_CACHE_DIR,
                 prompt=judge_prompt(preset, prompt_file))


def pairwise_judge_for(judge: Any) -> Any:
    """The pairwise judge (``--pairwise-judge``): the rubric judge's model, cache, endpoint and completer."""
    from harness.score import PairwiseJudge

    return PairwiseJudge(model=judge.model, cache_dir=judge.cache_dir, complete=judge.complete, api_base=judge.api_base,
                         budget=judge.budget, timeout_s=judge.timeout_s, retries=judge.retries)


def grounding_judge_for(judge: Any) -> Any:
    """The grounding judge: the rubric judge's model, cache folder, endpoint and completer, its own prompt."""
    if judge is None:
        return None
    from harness.score import GroundingJudge

    return GroundingJudge(model=judge.model, cache_dir=judge.cache_dir, complete=judge.complete,
                          api_base=judge.api_base, budget=judge.budget, timeout_s=judge.timeout_s, retries=judge.retries)


def _judge_block(judge: Any, grounding: Any, judged: int, ungrounded: int) -> dict[str, Any] | None:
    """``summary.json``'s ``judge``: each judge's run counts, tokens and cost, then its calibration (its calls apart)."""
    if judge is None and grounding is None:
        return None
    from harness.score import calibrate, calibrating, usage_block
    from harness.score import grounding as grounding_module

    block: dict[str, Any] = {}
    if judge is not None:
        block = {"model": judge.model, "calls": judge.calls, "cached": judge.cached, **usage_block(judge, "grading"),
                 "prompt": judge.describe_prompt()}
        with calibrating(judge):
            block["calibration"] = {**calibrate(judge).as_dict(), **usage_block(judge, "calibration")}
    if grounding is not None:
        counts = {**grounding.summary(), **usage_block(grounding, "grading"), "judged": judged, "ungrounded": ungrounded}
        with calibrating(grounding):
            calibration = grounding_module.calibrate(grounding).as_dict()
        block["grounding"] = {**counts, "calibration": {**calibration, **usage_block(grounding, "calibration")}}
    return block


def build_summary(manifest: Any, records: Sequence[SampleRecord], scenarios: Mapping[str, Scenario], *,
                  config: VerdictConfig, judge: Any = None, excluded: Sequence[str] = (),
                  warnings: Sequence[str] = (), grounding: Any = None,
                  inputs: Any = None, pairwise: Any = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Score, aggregate and decide; returns ``(summary, samples)`` (pure apart from judge calls).

    ``judge`` grades rubric scenarios; ``grounding`` (:class:`harness.score.grounding.GroundingJudge`)
    looks for unsupported specifics in every answered sample; ``pairwise``
    (:class:`harness.score.PairwiseJudge`, ``--pairwise-judge``) compares the treatment's answers with the
    baseline's (:mod:`harness.report.pairwise`). ``inputs`` is the
    :class:`harness.report.inputs.ReportInputs` the records came from (completeness, bad lines,
    duplicates); None treats ``records`` as the whole, clean run.
    """
    from harness.analysis import AggregateConfig, aggregate, decide
    from harness.report.contracts import contracts_block
    from harness.report.forgetting import forgetting_block
    from harness.report.headlines import headlines, tool_use, unsupported_by_kind
    from harness.report.inputs import ReportInputs
    from harness.report.layers import layers_block
    from harness.report.protocol import protocol_block, run_protocol
    from harness.report.systems import systems_block
    from harness.score import expected_facts, score_sample, visible_context, write_path_blocks

    if inputs is None:
        inputs = ReportInputs(records=list(records), planned=len(records), present=len(records), run_status="complete")
    scored, samples = [], []
    expected: dict[str, dict[str, Any]] = {}
    unjudged: set[str] = set()
    full = scenarios
    husks: dict[str, Scenario] | None = {} if isinstance(scenarios, ShelfView) else None
    for record in records:
        scenario = scenarios[record.scenario_id]
        if record.scenario_id not in expected:
            expected[record.scenario_id] = _expected_dict(scenario)
            if husks is not None:
                husks[record.scenario_id] = _husk(scenario)
        verdict = None
        if scenario.expect.rubric and record.status == "ok":
            if judge is None:
                unjudged.add(record.scenario_id)
            else:
                facts = expected_facts(scenario.expect, scenario.expect.adherence)
                verdict = judge(scenario.probe.message, scenario.expect.rubric, facts, record.final_answer or "",
                                gold=scenario.expect.f1_reference, category=scenario.category,
                                abstain=scenario.expect.abstain)
        found = None
        if grounding is not None and (first := score_sample(record, scenario, judge=verdict)).status == "ok" \
                and first.answered:
            found = grounding(visible_context(record.messages), record.final_answer or "")
        scores = final_scores(record, scenario, verdict=verdict, found=found, judged=judge is not None)
        scored.append(scores)
        samples.append(_sample_dict(record, scenario, scores, expected[record.scenario_id]))
    if husks is not None and isinstance(scenarios, ShelfView):  # the passes below read no haystack: the shelf is not unpacked again for each of them
        scenarios = _husks(scenarios, husks)
    agg_cfg = AggregateConfig(treatment_arm=config.treatment_arm, baseline_arm=config.baseline_arm, alpha=config.alpha)
    protocol = run_protocol(scored, scenarios, judged=judge is not None)
    for sample in samples:  # each sample's place in the protocol, in scores.jsonl: the tables can be rebuilt from it
        sample.update(protocol_place(protocol, sample["scenario_id"]))
    tables = aggregate(scored, titles={sid: s.title for sid, s in scenarios.items()}, config=agg_cfg,
                       headline=None if protocol is None else protocol.headline_ids,
                       apart=None if protocol is None else dict(protocol.apart))
    errors = sum(r.status == "error" for r in records)
    health = RunHealth(planned=inputs.planned, present=inputs.present, run_status=inputs.run_status,
                       why=tuple(inputs.why_short()), errors=errors, samples=len(records))
    verdict_block = decide(tables, {s.model for s in scored}, config, health=health,
                           headline=None if protocol is None else protocol.description(),
                           apart=None if protocol is None else protocol.apart_lines)
    judge_block = _judge_block(judge, grounding, sum(s.grounding is not None for s in scored),
                               sum(s.grounding == "ungrounded" for s in scored))
    summary: dict[str, Any] = {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "generated_at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "harness_version": __version__,
        "verdict": verdict_block,
        "headlines": [],
        "run": {
            "run_id": manifest.run_id, "models": list(manifest.models), "arms": list(manifest.arms),
            "epochs": manifest.epochs, "seed": manifest.seed, "suite_hash": manifest.suite_hash,
            "samples": len(records), "errors": errors, "error_rate": _rate(errors, len(records)),
            "cached_samples": sum(s.cached for s in scored),
            "planned_samples": inputs.planned, "present_samples": inputs.present, "complete": health.complete,
            "unusable_lines": len(inputs.problems), "torn_last_line": inputs.torn_last_line,
            "duplicates_dropped": inputs.duplicates, "foreign_records": len(inputs.foreign_ids),
            "excluded_scenarios": sorted(excluded), "started_at": manifest.started_at,
            "finished_at": manifest.finished_at, "status": manifest.status, "warnings": list(warnings),
            "parameters": _shown_parameters(manifest.parameters),
        },
        **tables,
        "tool_use": tool_use(scored, tables.get("metrics") or []),
        "unsupported_by_kind": unsupported_by_kind(scored),
        "categories": _categories(scored, scenarios),
        "judge": judge_block,
        **write_path_blocks(scored),
    }
    forgetting = forgetting_block(scored, list(manifest.arms))
    if forgetting:  # only then: a suite that never asks to forget gets the summary it always got
        summary["forgetting"] = forgetting
    uncredited: Counter[tuple[str, str]] = Counter()
    for one in scored:  # ids a system reported and was not credited with (harness.score.credit)
        uncredited[(one.model, one.arm)] += len(one.uncredited_items)
    summary["systems"] = systems_block(manifest, records, tables.get("metrics") or [], uncredited)
    contracts = contracts_block(manifest)  # each arm's terms, beside the systems table (none in older runs)
    if contracts is not None:
        summary["contracts"] = contracts
    from harness.report.document_v03 import document_v03_block

    v03 = document_v03_block(records, scored, full, list(manifest.arms))  # full: what a window wrote from
    if v03 is not None:  # only a run with a top-K or Dream Mode arm gets the block (and the ladder's lines)
        summary["memory_document_v03"] = v03
    summary["layers"] = layers_block(scored, scenarios, list(manifest.arms))
    if v03 is not None:
        from harness.report.document_layers import with_document_lines

        summary["layers"] = with_document_lines(summary["layers"], scored, list(manifest.arms), v03)
    if protocol is not None:  # only then: a suite without a protocol gets the summary it always got
        summary["protocol"] = protocol_block(protocol, scored, scenarios, tables["metrics"], list(manifest.arms))
    from harness.report.shadow import shadow_block, shadow_headline

    shadow = shadow_block(records, scenarios)
    if shadow is not None:  # only a run with the shadow arm gets the block
        summary["shadow"] = shadow
    if pairwise is not None:
        from harness.report.pairwise import pairwise_block

        summary["pairwise"] = pairwise_block(records, full, pairwise,  # the judge's context reads the sessions treatment=config.treatment_arm,
                                             baseline=config.baseline_arm)
    summary["headlines"] = headlines(summary, health=health, inputs=inputs, config=config,
                                     unjudged_rubric=len(unjudged))
    if (lead := shadow_headline(shadow)) is not None:
        summary["headlines"].insert(0, lead)
    return summary, samples


def _husk(scenario: Scenario) -> Scenario:
    """``scenario`` without its haystack, for the summary's passes after scoring: no sessions, and of its items only
    those of the kinds a working projection pins (:data:`harness.report.layers.UBIQUITOUS_KINDS`, all the layers
    table reads of them). A LongMemEval question's husk is a few kB, its scenario ~4.6 MB."""
    from harness.report.layers import UBIQUITOUS_KINDS

    return scenario.model_copy(update={"sessions": [], "items": [i for i in scenario.items if str(i.kind) in UBIQUITOUS_KINDS]})


def _husks(view: ShelfView, husks: dict[str, Scenario]) -> dict[str, Scenario]:
    """Every scenario of ``view`` as a husk, by id in its order: those scored already, the others unpacked once each."""
    return {sid: husks[sid] if sid in husks else _husk(view[sid]) for sid in view}


def final_scores(record: SampleRecord, scenario: Scenario, *, verdict: Any, found: Any, judged: bool) -> Any:
    """The scores the report records for one sample, given the judges' words on it (None where not asked).

    ``verdict`` is the rubric judge's :class:`harness.score.JudgeVerdict`, ``found`` the grounding judge's
    :class:`harness.score.grounding.GroundingVerdict`; ``judged``: a judge model graded the run. ``compare``
    scores a run's transcripts again through this same function (:mod:`harness.runs.rescore`).
    """
    from harness.report.protocol import is_not_judged
    from harness.score import score_sample

    scores = score_sample(record, scenario, judge=verdict, grounding=found)
    if scores.status == "ok" and is_not_judged(scenario, judged=judged):
        scores = _not_judged(scores)
    return scores


def protocol_place(protocol: Any, scenario_id: str) -> dict[str, Any]:
    """A sample's place in the run's protocol (:func:`harness.report.protocol.run_protocol`, None without one), as
    ``scores.jsonl`` records it: ``headline`` (None without a protocol), the reported-apart groups it is in, and
    ``apart_gates`` (the protocol's word on whether those groups gate the verdict; None without a protocol), so the
    verdict can be decided again from the samples alone."""
    if protocol is None:
        return {"headline": None, "apart": [], "apart_gates": None}
    return {"headline": scenario_id in protocol.headline_ids,
            "apart": [name for name, ids in protocol.apart if scenario_id in ids],
            "apart_gates": protocol.protocol.apart_gates}


def _not_judged(scores: Any) -> Any:
    """A ``judge_only`` sample scored without a judge: no correctness at all, rather than the patterns' guess.

    Its patterns pass any answer that does not abstain (a preference rubric has
    no text to check), so counting them would credit a keyword agent with 0.8.
    """
    reason = ("not judged: this category is graded by a judge only (--judge-model); its patterns "
              f"({'pass' if scores.pattern_correct else 'fail'}) are not counted")
    rescored = [score.model_copy(update={"value": None, "passed": None, "reason": reason})
                if score.name == "continuity" else score for score in scores.scores]
    return scores.model_copy(update={"continuity_correct": None, "outcome": "not_judged", "scores": rescored})


def _categories(scored: Sequence[Any], scenarios: Mapping[str, Scenario]) -> list[dict[str, Any]]:
    """``summary.json``'s ``categories``: every category scored, with the suite's description and its scenario count.

    The description is the one a scenario's ``categories`` declares for the
    name (a suite's ``_defaults.yaml``); null for a built-in category nobody declared.
    """
    ids: dict[str, set[str]] = {}
    for s in scored:
        ids.setdefault(str(s.category), set()).add(s.scenario_id)
    described: dict[str, str] = {}
    for sid in sorted({sid for members in ids.values() for sid in members}):
        scenario = scenarios.get(sid)
        for name, text in (scenario.categories if scenario is not None else {}).items():
            described.setdefault(name, text)
    return [{"name": name, "description": described.get(name), "scenarios": len(ids[name])} for name in sorted(ids)]


#: run.json parameters copied to ``summary.run.parameters``: what a reader of a report, a comparison or a
#: history needs to know was asked of the model (never paths of this machine such as ``cache_dir``).
SHOWN_PARAMETERS = ("filters", "max_tool_rounds", "max_tokens", "temperature", "timeout_s", "retries", "api_base",
                    "cache", "judge_model", "judge_preset", "incomplete_suites", "retrieval_budget",
                    "retrieval_budget_source")


def _shown_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    shown = {k: parameters[k] for k in SHOWN_PARAMETERS if k in parameters}
    if isinstance(shown.get("api_base"), str):  # a run.json written before URLs were redacted
        shown["api_base"] = redact_url(shown["api_base"])
    return shown


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None
