"""``run --plan`` and the plan line of every run: samples, calls with the round cap, litellm's tokens and prices."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402

from harness.cli import main  # noqa: E402
from harness.run.budget import Budget, BudgetExceeded, Price  # noqa: E402
from harness.run.plan import EXPECTED_OUTPUT_TOKENS, make_plan  # noqa: E402
from harness.run.samples import plan_samples  # noqa: E402
from harness.scenarios import load_scenarios  # noqa: E402
from tests.memory_systems.arm_builders import get_arm  # noqa: E402
from tests.memory_systems.prompt_factories import write_small_suite  # noqa: E402
from tests.run.scripted_model import install_scripted  # noqa: E402

ARMS = ["history_only", "recall", "full_history"]


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    return write_small_suite(tmp_path / "suite")


def _plan(suite: Path, model: str = "openai/gpt-4o-mini", arms: list[str] = ARMS, round_cap: int = 4, epochs: int = 1):
    scenarios = load_scenarios([suite])
    specs = plan_samples(scenarios, arms, [model], epochs, 0)
    return make_plan(scenarios, specs, round_cap=round_cap, max_tokens=2048), scenarios


def test_plan_counts_one_call_without_tools_and_two_expected_up_to_the_round_cap_with_them(suite: Path) -> None:
    plan, _ = _plan(suite, epochs=2)
    (model,) = plan.models
    assert plan.samples == model.samples == 2 * 3 * 2
    # history_only and full_history: 1 call each; recall (tools admitted): 2 expected, at most cap + 1
    assert (model.calls_expected, model.calls_max) == (2 * 2 * (1 + 2 + 1), 2 * 2 * (1 + 5 + 1))
    capped, _ = _plan(suite, round_cap=1, epochs=2)
    assert capped.calls_max == 2 * 2 * (1 + 2 + 1)


def test_plan_of_an_agent_written_arm_adds_one_write_run_per_earlier_session_at_the_write_phase_cap(suite: Path) -> None:
    from harness.memory_systems import WRITE_MAX_TOOL_ROUNDS, write_order

    recall, scenarios = _plan(suite, arms=["recall"])
    named, _ = _plan(suite, arms=["named_memory"])
    sessions = sum(len(write_order(s)) for s in scenarios)
    assert sessions > 0
    (r,), (n,) = recall.models, named.models
    # the probe: 2 expected calls (tools offered) either way; the writes: 2 expected, at most the write cap + 1, per session
    assert n.calls_expected == r.calls_expected + 2 * sessions
    assert n.calls_max == 2 * (4 + 1) + sessions * (WRITE_MAX_TOOL_ROUNDS + 1)
    assert n.input_tokens > r.input_tokens  # the transcripts the model is asked to write from are counted


def test_plan_tokens_are_litellms_count_of_each_first_prompt(suite: Path) -> None:
    plan, scenarios = _plan(suite, arms=["history_only", "full_history"])
    expected = sum(
        litellm.token_counter(model="gpt-4o-mini", messages=get_arm(arm).build(scenario, None).messages)
        for scenario in scenarios for arm in ("history_only", "full_history")
    )
    assert plan.input_tokens == expected


def test_an_offline_models_plan_counts_each_first_prompt_as_the_usage_its_reply_reports(suite: Path) -> None:
    from harness.offline_model import answer, register_offline

    register_offline()
    plan, scenarios = _plan(suite, model="offline/reference", arms=["history_only", "full_history"])
    reported = sum(
        answer("offline/reference", get_arm(arm).build(scenario, None).messages, None).prompt_tokens
        for scenario in scenarios for arm in ("history_only", "full_history")
    )
    assert plan.input_tokens == reported
    with_tools, _ = _plan(suite, model="offline/reference", arms=["recall"])
    assert with_tools.input_tokens > 0 and with_tools.models[0].calls_expected == 2 * len(scenarios)


def test_plan_cost_comes_from_litellms_price_map_per_model(suite: Path) -> None:
    plan, _ = _plan(suite)
    (model,) = plan.models
    price = litellm.model_cost["gpt-4o-mini"]
    want = model.input_tokens * price["input_cost_per_token"] + model.output_tokens * price["output_cost_per_token"]
    assert model.output_tokens == EXPECTED_OUTPUT_TOKENS * model.calls_expected
    assert model.cost_usd == pytest.approx(want) and model.cost_usd > 0
    assert model.cost_max_usd == pytest.approx(model.input_tokens_max * price["input_cost_per_token"]
                                               + model.output_tokens_max * price["output_cost_per_token"])
    unpriced, _ = _plan(suite, model="openai/no-such-model-anywhere")
    assert unpriced.cost_usd is None and "unknown" in unpriced.line()


def test_run_plan_calls_no_model_and_writes_nothing(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scripted = install_scripted(lambda m, t: {"content": "ok"})
    code = main(["run", "--plan", "--scenarios", str(suite), "--model", "scripted/x", "--out", str(tmp_path / "run"), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and scripted.calls == 0 and not (tmp_path / "run").exists()
    assert out.startswith("plan: 6 samples, 8 model calls expected (at most 14 at the round cap of 4)")
    assert "No model was called" in out


def test_every_run_starts_with_the_plan_line(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.cli.run._build_report", lambda options, scenarios=None: 0)
    assert main(["run", "--scenarios", str(suite), "--out", str(tmp_path / "run"), "--no-progress", "--no-cache"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("plan: 6 samples,") and all(len(line) <= 80 for line in lines[:2])
    assert "cost ~$0.0000" in " ".join(line.strip() for line in lines[:2])  # the plan wraps to 80 columns


def test_budget_refuses_a_call_whose_worst_case_would_pass_the_limit_counting_calls_in_flight() -> None:
    budget = Budget(1.0, {"m": Price(input=0.001, output=0.002)})
    first = budget.reserve_now("m", 100, 200)  # 0.1 + 0.4
    assert first == pytest.approx(0.5)
    second = budget.reserve_now("m", 100, 200)  # 1.0 with the first still in flight: allowed, not past
    with pytest.raises(BudgetExceeded, match="--max-cost-usd"):
        budget.reserve_now("m", 1, 0)
    assert budget.exhausted
    budget.settle("m", first, 0.2)
    budget.settle("m", second, 0.2)
    with pytest.raises(BudgetExceeded):  # once exhausted, no call starts again in this process
        budget.reserve_now("m", 1, 0)
    assert budget.recorded_usd == pytest.approx(0.4)


def test_budget_learns_when_a_provider_bills_more_than_the_estimate() -> None:
    budget = Budget(10.0, {"m": Price(input=0.01, output=0.0)})
    reserved = budget.reserve_now("m", 100, 0)  # 1.0 estimated
    budget.settle("m", reserved, 3.0)  # billed three times the estimate
    assert budget.reserve_now("m", 100, 0) == pytest.approx(3.0)


def test_plan_of_several_epochs_is_the_plan_of_one_times_the_epochs_in_every_number(suite: Path) -> None:
    one, _ = _plan(suite, epochs=1)
    three, _ = _plan(suite, epochs=3)
    (a,), (b,) = one.models, three.models
    for name in ("samples", "calls_expected", "calls_max", "input_tokens", "input_tokens_max", "output_tokens", "output_tokens_max"):
        assert getattr(b, name) == 3 * getattr(a, name) > 0, name
    assert b.cost_usd == pytest.approx(3 * a.cost_usd)


STORE_ARMS = ["history_only", "recall", "full_history", "recall_fts", "recall_vector", "recall_hybrid"]


def test_planning_the_built_in_arms_opens_no_store(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_tools.store import MemoryItemStore

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the plan opened a store")

    monkeypatch.setattr(MemoryItemStore, "__init__", refuse)
    plan, _ = _plan(suite, arms=STORE_ARMS)
    assert plan.unplanned == {}  # the plan catches a system's error: a refused store would land here
    assert plan.input_tokens > 0


def test_a_plan_built_without_stores_counts_what_opening_each_arm_counts(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.run import plan_prompts

    scenarios = load_scenarios([suite])
    incognito = scenarios[0].model_copy(update={"id": f"{scenarios[0].id}-incognito",
                                                "probe": scenarios[0].probe.model_copy(update={"incognito": True})})
    scenarios.append(incognito)  # the Host admits no tool: recall's prompt is history_only's
    specs = plan_samples(scenarios, STORE_ARMS, ["openai/gpt-4o-mini"], 1, 0)
    by_arm = {}
    for mode in ("scenario alone", "opened"):
        if mode == "opened":  # every sample's instance opened, as the plan did before it planned from the scenario
            monkeypatch.setattr(plan_prompts.ArmPrompts, "runs", lambda self, scenario, name: plan_prompts.opened_runs(
                self.arms[name], scenario, self.budget))
        by_arm[mode] = [vars(make_plan(scenarios, [s for s in specs if s.arm == arm], round_cap=4, max_tokens=2048).models[0])
                        for arm in STORE_ARMS]
    assert by_arm["scenario alone"] == by_arm["opened"]
    tools = [row["calls_max"] for row in by_arm["opened"]]
    assert tools[0] < tools[1] and tools[3] == tools[1]  # recall's tools offered and counted
