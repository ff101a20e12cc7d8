"""``run --plan`` and the first line of every run: what the run will ask of each model, before any call.

For each planned sample the arm's starting prompts are built from the scenario (the probe's messages and the tools
the Host admits; for an agent-written system also one write run per earlier session, capped at the write phase's
rounds), with no store opened per sample (:mod:`harness.run.plan_prompts`): exactly as the run builds them for the
built-in arms whose prompt the scenario alone decides; for any other arm (a plug-in, ``mcp:NAME``, a document or
agent-written arm) estimated from the scenario and what one opened sample of the arm added (the plan line names
those arms). Their tokens are counted with litellm's token counter (each distinct text once, plus the chat framing
of 3 tokens per message and 3 for the reply, as OpenAI's counting goes); an offline model's as it reports them
(:mod:`harness.run.prompt_tokens`). Where :mod:`harness.run.model_tables` knows litellm's answer from the files it
ships (tokenizer and price map), litellm is not imported at all: its import is most of a ``--plan`` on a large
suite. Each distinct (model, scenario, arm) is counted once and multiplied by its repeats (epochs).

Model calls: a sample without tools makes one call; a sample with tools is
expected to make two (a search, then the answer) and makes at most
``max_tool_rounds + 1`` (the round cap). Input tokens re-send the first prompt
with every call (tool results, unknown before the run, are not counted);
output tokens are estimated at :data:`EXPECTED_OUTPUT_TOKENS` per call, and at
most ``--max-tokens`` per call. Cost comes from litellm's price map per model
(for a Router group, its dearest deployment); "unknown" when it has no price.
A system that writes with its own model calls (``ModelWrite``, e.g. mem0's
fact extraction) builds those prompts as it runs: they are not in the plan.
The run's interrupt flag (SIGTERM, Ctrl-C) is checked between scenarios and
between the arms opened once (a system may be slow to open, or swallow the
KeyboardInterrupt a signal raises in it).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.run.errors import PlanInterrupted
from harness.run.prompt_tokens import _litellm, counter_for
from harness.scenarios import Scenario, scenarios_by_id, work_order

#: Output tokens expected per call (answers here are a few sentences, tool calls a few dozen tokens).
EXPECTED_OUTPUT_TOKENS = 100


def _total(costs: list[float | None]) -> float | None:
    """The sum of every model's cost; None when one has no price (the plan cannot bound it)."""
    known = [c for c in costs if c is not None]
    return None if len(known) < len(costs) else sum(known)


@dataclass
class ModelPlan:
    """The plan of one model."""

    model: str
    samples: int = 0
    calls_expected: int = 0
    calls_max: int = 0
    input_tokens: int = 0
    input_tokens_max: int = 0
    output_tokens: int = 0
    output_tokens_max: int = 0
    cost_usd: float | None = None
    cost_max_usd: float | None = None


@dataclass
class Plan:
    """What a run (or what is left of it) will ask of its models."""

    samples: int
    round_cap: int
    models: list[ModelPlan] = field(default_factory=list)
    #: arm -> why its prompts could not be built (its calls are not counted)
    unplanned: dict[str, str] = field(default_factory=dict)
    #: arm -> the scenario it was opened on once: its other samples' prompts are estimated from their scenarios
    #: (:mod:`harness.run.plan_prompts`); every other arm's are exact
    estimated: dict[str, str] = field(default_factory=dict)

    @property
    def calls_expected(self) -> int:
        return sum(m.calls_expected for m in self.models)

    @property
    def calls_max(self) -> int:
        return sum(m.calls_max for m in self.models)

    @property
    def input_tokens(self) -> int:
        return sum(m.input_tokens for m in self.models)

    @property
    def cost_usd(self) -> float | None:
        return _total([m.cost_usd for m in self.models])

    @property
    def cost_max_usd(self) -> float | None:
        return _total([m.cost_max_usd for m in self.models])

    def line(self) -> str:
        """The one line every run starts with."""
        unpriced = [m.model for m in self.models if m.cost_usd is None]
        if unpriced:
            cost = f"cost unknown (litellm's price map has no price for {', '.join(unpriced)})"
        else:
            cost = f"cost ~{_usd(self.cost_usd)} (at most {_usd(self.cost_max_usd)})"
        by_model = "; ".join(f"{m.model} {_usd(m.cost_usd)}" for m in self.models) if len(self.models) > 1 else ""
        return (f"plan: {self.samples:,} samples, {self.calls_expected:,} model calls expected (at most {self.calls_max:,} "
                f"at the round cap of {self.round_cap}), ~{self.input_tokens:,} input tokens, {cost}"
                + (f" [{by_model}]" if by_model else "")
                + (f"; {_arms(self.estimated)} estimated from the scenarios (opened once, on {_opened(self.estimated)})"
                   if self.estimated else "")
                + "".join(f"; arm {arm} not counted ({why})" for arm, why in sorted(self.unplanned.items())))

    def lines(self, width: int = 80) -> list[str]:
        """:meth:`line` broken at spaces to fit ``width`` columns, continuations indented under its text."""
        import textwrap

        return textwrap.wrap(self.line(), width, subsequent_indent="      ", break_long_words=False,
                             break_on_hyphens=False)

    def table(self, width: int = 112) -> list[str]:
        """``--plan``'s lines per model: one row each from 112 columns; narrower, the model's name on its own line
        above its figures, in columns of 72 (a name is never cut)."""
        names = ("samples", "calls", "max calls", "input tok", "output tok", "cost", "max cost")
        wide = width >= 112
        widths = (8, 8, 10, 12, 11, 12, 12) if wide else (7, 7, 9, 11, 10, 10, 10)

        def cells(values: tuple[str, ...]) -> str:
            return " ".join(f"{v:>{w}}" for v, w in zip(values, widths, strict=True))

        def figures(m: ModelPlan) -> str:
            return cells((f"{m.samples:,}", f"{m.calls_expected:,}", f"{m.calls_max:,}", f"{m.input_tokens:,}",
                          f"{m.output_tokens:,}", _usd(m.cost_usd), _usd(m.cost_max_usd)))

        if wide:
            return [f"{'model':32} {cells(names)}", *(f"{m.model[:32]:32} {figures(m)}" for m in self.models)]
        return ["model", f"  {cells(names)}", *(line for m in self.models for line in (m.model, f"  {figures(m)}"))]

    def as_dict(self) -> dict[str, Any]:
        return {"samples": self.samples, "round_cap": self.round_cap, "models": [vars(m) for m in self.models],
                "unplanned": dict(self.unplanned), "estimated": dict(self.estimated)}


def _arms(names: Iterable[str]) -> str:
    ordered = sorted(names)
    return ("arm " if len(ordered) == 1 else "arms ") + ", ".join(ordered)


def _opened(estimated: dict[str, str]) -> str:
    return ", ".join(sorted(set(estimated.values())))


def _usd(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:,.4f}" if value < 100 else f"${value:,.2f}"


def _prices(models: list[str], router_config: Any) -> dict[str, Any]:
    """:func:`harness.run.calls.prices`, read from litellm's shipped price map without importing litellm where that is certain."""
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if router_config is None:
        from harness.run.model_tables import local_prices

        found = local_prices(models)
        if found is not None:
            return found
    from harness.run.calls import prices

    _litellm()
    return prices(models, router_config)


def _count(runs: list[tuple[list[dict[str, Any]], list[dict[str, Any]], int]], times: int, counter: Any, plan: ModelPlan, model: str,
           round_cap: int, max_tokens: int, tool_tokens: dict[tuple[str, str], int], canonical: dict[int, tuple[Any, str]]) -> None:
    """Add the calls and tokens of one (model, scenario, arm)'s agent runs, ``times`` samples of them, to ``plan``."""
    for messages, tools, cap in runs:
        prompt = counter.messages(messages)
        if tools:
            if id(tools) not in canonical:
                canonical[id(tools)] = (tools, json.dumps(tools, separators=(",", ":"), sort_keys=True))
            key = (model, canonical[id(tools)][1])
            if key not in tool_tokens:
                tool_tokens[key] = counter.tools(tools)
            prompt += tool_tokens[key]
        rounds = round_cap if cap < 0 else cap
        expected, most = (2, rounds + 1) if tools else (1, 1)
        plan.calls_expected += expected * times
        plan.calls_max += most * times
        plan.input_tokens += prompt * expected * times
        plan.input_tokens_max += prompt * most * times
        plan.output_tokens += EXPECTED_OUTPUT_TOKENS * expected * times
        plan.output_tokens_max += max_tokens * most * times


def make_plan(scenarios: Sequence[Scenario], specs: Iterable[Any], *, round_cap: int, max_tokens: int,
              tokenizer_models: dict[str, str] | None = None, router_config: Any = None, budget: Any = None,
              should_stop: Callable[[], bool] | None = None) -> Plan:
    """The plan of ``specs`` (:class:`harness.run.samples.SampleSpec`), without calling any model.

    Args:
        tokenizer_models: run model -> the litellm model whose tokenizer counts its prompts
            (a Router group: its first deployment's model); default the model itself.
        should_stop: checked before each scenario's prompts (the run's SIGTERM flag): raises ``PlanInterrupted``.
    """
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's shipped price map, never a fetched one
    specs = list(specs)
    by_id = scenarios_by_id(scenarios)  # a shelf's view: one scenario unpacked at a time
    arms = list(dict.fromkeys(spec.arm for spec in specs))
    needed = list(dict.fromkeys(spec.scenario_id for spec in specs))
    from harness.run.plan_prompts import ArmPrompts, learning_scenario
    from harness.scenarios import reserve_store_templates

    unplanned: dict[str, str] = {}
    prompts = ArmPrompts(arms, budget, unplanned)
    # An arm the plan estimates is opened once, on one scenario, before the samples open theirs (p26store).
    learn_on = learning_scenario(needed, by_id) if prompts.estimated and needed else None
    reserve_store_templates(work_order(scenarios, ([learn_on] if learn_on else []) + [spec.scenario_id for spec in specs]))
    models = list(dict.fromkeys(spec.model for spec in specs))
    price = _prices(models, router_config)
    tokenizers = tokenizer_models or {}
    counters = {m: counter_for(tokenizers.get(m, m)) for m in models}
    tool_tokens: dict[tuple[str, str], int] = {}  # (model, tool specs) -> their token count
    canonical: dict[int, tuple[Any, str]] = {}  # id(tool specs) -> (the specs, kept alive so the id is not reused; their JSON)
    plans = {m: ModelPlan(m) for m in models}
    # Each distinct (model, scenario, arm) is counted once: its epochs (and repeated specs) share the prompts.
    repeats = Counter((spec.model, spec.scenario_id, spec.arm) for spec in specs)
    by_scenario: dict[str, list[tuple[str, str, int]]] = {}
    for (model, scenario_id, arm), times in repeats.items():
        by_scenario.setdefault(scenario_id, []).append((model, arm, times))
    if learn_on is not None:
        prompts.learn_all(learn_on, by_id, should_stop)
    # One scenario's prompts at a time: every full_history prompt of a suite at once was ~200 MB on LoCoMo.
    for done, scenario_id in enumerate(needed):
        if should_stop is not None and should_stop():
            raise PlanInterrupted(f"stopped while planning, after {done} of {len(needed)} scenarios")
        scenario = by_id[scenario_id]
        for model, arm, times in by_scenario[scenario_id]:
            plans[model].samples += times
            _count(prompts.runs(scenario, arm), times, counters[model], plans[model], model, round_cap, max_tokens,
                   tool_tokens, canonical)
    for model, plan in plans.items():
        p = price.get(model)
        if p is not None:
            plan.cost_usd = p.cost(plan.input_tokens, plan.output_tokens)
            plan.cost_max_usd = p.cost(plan.input_tokens_max, plan.output_tokens_max)
    estimated = {} if learn_on is None else {arm: learn_on for arm in prompts.estimated if arm not in unplanned}
    return Plan(samples=len(specs), round_cap=round_cap, models=list(plans.values()), unplanned=unplanned,
                estimated=estimated)


def plan_for(options: Any, scenarios: Sequence[Scenario], specs: Iterable[Any],
             should_stop: Callable[[], bool] | None = None) -> Plan:
    """:func:`make_plan` with the run's round cap, token limit and Router configuration (``should_stop``: its flag)."""
    config, tokenizers = None, {}
    if getattr(options, "router_config", None):
        from harness.run.router import load_router_config

        config = load_router_config(options.router_config)
        tokenizers = {m: config.underlying_models(m)[0] for m in options.models}
    return make_plan(scenarios, specs, round_cap=options.max_tool_rounds, max_tokens=options.max_tokens,
                     tokenizer_models=tokenizers, router_config=config, budget=getattr(options, "retrieval_budget", None),
                     should_stop=should_stop)


def price_problem(options: Any) -> str | None:
    """Why ``--max-cost-usd`` cannot bound the run (a model without a price in litellm's map), or None."""
    if options.max_cost_usd is None:
        return None
    config = None
    if getattr(options, "router_config", None):
        from harness.run.router import load_router_config

        config = load_router_config(options.router_config)
    unknown = [m for m, p in _prices(options.models, config).items() if p is None]
    judge = getattr(options, "judge_model", None)  # its calls are capped too (harness.score.judge_calls)
    if judge and _prices([judge], None).get(judge) is None:
        unknown.append(f"{judge} (--judge-model)")
    if not unknown:
        from harness.run.calls import embedding_price_problem

        return embedding_price_problem(options)  # the embedding model's requests are reserved too
    return (f"--max-cost-usd: litellm's price map has no price for {', '.join(unknown)}, so the cost cannot be bounded; "
            "drop --max-cost-usd for these models")


def start_line(options: Any, scenarios: Sequence[Scenario], specs: list[Any], done: Iterable[Any],
               should_stop: Callable[[], bool] | None = None) -> tuple[Any, str | None]:
    """Print the plan line a run starts with; return the options with ``--max-cost-usd``'s budget left (or a problem).

    ``done`` are the records an earlier attempt finished: their recorded cost counts against the limit.
    """
    import dataclasses
    import sys

    plan = plan_for(options, scenarios, specs, should_stop)
    print("\n".join(plan.lines()), file=sys.stderr)
    if options.max_cost_usd is None:
        return options, None
    from harness.run.budget import recorded_cost

    unknown = [m.model for m in plan.models if m.cost_usd is None]
    if unknown:
        return options, (f"--max-cost-usd: litellm's price map has no price for {', '.join(unknown)}, so the cost cannot be "
                         "bounded; drop --max-cost-usd for these models")
    before = recorded_cost(done)
    left = max(0.0, options.max_cost_usd - before)
    print(f"budget: --max-cost-usd ${options.max_cost_usd:,.4f}, ${before:,.4f} recorded before, ${left:,.4f} left", file=sys.stderr)
    if plan.estimated:  # the plan may count less than the run sends: the cap rests on each call's own reservation
        print(f"budget: the plan's figures for {_arms(plan.estimated)} are estimated; every call still reserves its worst "
              "case from its real prompt before it is made", file=sys.stderr)
    return dataclasses.replace(options, budget_usd=left), None


def cli_plan(options: Any, scenarios: Sequence[Scenario]) -> int:
    """``run --plan``: the plan of what the run would do (of what is left, with ``--resume``); no model call, no file written."""
    from harness.run.samples import plan_samples

    done: set[str] = set()
    if options.resume:
        from harness.run.folder import read_earlier_attempt

        done = {r.sample_id for r in read_earlier_attempt(options.run_dir).done}
    planned = plan_samples(scenarios, options.arms, options.models, options.epochs, options.seed, options.sample_ids)
    specs = [s for s in planned if s.sample_id not in done]
    plan = plan_for(options, scenarios, specs)
    from harness.wrapping import say, terminal_width

    width = terminal_width()
    print("\n".join(plan.lines(width)))
    for row in plan.table(width):
        print(row)
    shard = f" (shard {options.shard})" if options.shard else ""
    say(f"{len(scenarios)} scenarios{shard} x {len(options.arms)} arms x {len(options.models)} models x {options.epochs} epochs; "
        f"{len(done)} samples already done. Expected output {EXPECTED_OUTPUT_TOKENS} tokens per call, at most --max-tokens "
        f"{options.max_tokens}; tool results are not counted. No model was called.")
    return 0
