"""``--max-cost-usd`` against a fake server that reports its usage (priced as gpt-4o-mini): the cap ends a run only when
spending would truly pass it, whatever the concurrency, and every judge call is reserved, capped, counted and priced."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.records import RESULTS_FILE, scan_results
from harness.run.budget import recorded_cost
from tests.fault.conftest import REPO, cli_env, cli_in_process, finish
from tests.integration.conftest import DUMMY_KEY, SMOKE
from tests.integration.fake_openai_server import FakeOpenAIServer, Script

ARMS = ("history_only", "recall", "full_history")
MAX_TOKENS = 16000
#: A call's worst case here: a smoke prompt (under 2,000 tokens by litellm's count) at $0.15/M plus
#: --max-tokens 16,000 at $0.60/M; the server reports 4,242 + 17 tokens, a real cost of ~$0.00065.
WORST_CASE_USD = 2000 * 0.15e-6 + MAX_TOKENS * 0.6e-6
#: What one request costs at the usage the fake server reports (4,242 prompt and 17 completion tokens).
CALL_USD = 4242 * 0.15e-6 + 17 * 0.6e-6


def in_process(cwd: Path, *argv: str) -> tuple[int, str]:
    """``recall-eval ARGV`` through ``main`` in the test's process, in ``cwd`` (the judge's cache folder is relative),
    with the dummy key; (exit code, stderr). The faults here are the cap and the server's reported usage, not a
    process boundary (:func:`~tests.fault.conftest.cli_in_process`)."""
    done = cli_in_process(*argv, cwd=cwd, env={"OPENAI_API_KEY": DUMMY_KEY})
    return done.returncode, done.stderr


def _run(tmp_path: Path, server: FakeOpenAIServer, name: str, *flags: str) -> tuple[int, str, Path]:
    """``recall-eval run`` on five smoke scenarios (15 samples) at 8 in flight, in ``tmp_path``; (code, stderr, run
    folder)."""
    out = tmp_path / name
    code, err = in_process(tmp_path, "run", "--no-progress", "--no-cache", "--model", "openai/gpt-4o-mini",
                           "--api-base", server.base_url, "--scenarios", str(SMOKE), "--filter", "smoke-0[12345]*",
                           "--arms", *ARMS, "--out", str(out), "--max-concurrency", "8", "--max-tokens", str(MAX_TOKENS),
                           *flags)
    return code, err, out


def _judge_requests(server: FakeOpenAIServer) -> int:
    """Requests the judges made (the agent's ask for --max-tokens MAX_TOKENS; the judges for 300 or 600)."""
    return sum(1 for seen in server.requests if seen.body.get("max_tokens") != MAX_TOKENS)


def test_a_cap_the_whole_run_fits_under_finishes_at_eight_calls_in_flight(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """Cap $0.03, eight calls in flight, worst case ~$0.0099 a call, real cost ~$0.00065: eight worst cases (~$0.08)
    do not fit at once, yet the whole run (~$0.02) does; calls wait for reservations to settle instead of ending
    the run (it used to exit 3 after a few calls with almost nothing spent)."""
    code, err, out = _run(tmp_path, server, "fits", "--max-cost-usd", "0.03")

    records = scan_results(out / RESULTS_FILE).records
    assert code in (0, 1), err
    assert "--max-cost-usd" not in err.split("budget:", 1)[-1].split("\n", 1)[-1]  # no stop line after the budget line
    assert len(records) == 15 and {r.status for r in records} == {"ok"}
    assert 0 < recorded_cost(records) <= 0.03


def test_a_cap_the_run_does_not_fit_under_stops_only_when_the_next_call_would_pass_it(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """Cap $0.016 at eight in flight: the run stops with exit 3 and the resume command, having recorded no more than
    the cap, and no less than the cap minus one call's worst case (with nothing in flight, the next call's worst case
    did not fit: stopping earlier leaves money unspent, later passes the cap)."""
    code, err, out = _run(tmp_path, server, "stops", "--max-cost-usd", "0.016")

    records = scan_results(out / RESULTS_FILE).records
    spent = recorded_cost(records)
    assert code == 3, err
    assert "--max-cost-usd $0.0160 reached" in err and "--resume" in err
    assert 0.016 - WORST_CASE_USD < spent <= 0.016
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["status"] == "interrupted"
    assert all(r.error.type == "BudgetExceeded" for r in records if r.status == "error")


JUDGE = ("--judge-model", "openai/gpt-4o-mini")


def test_every_judge_call_is_counted_and_priced_in_summary_json_with_calibration_apart(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """A run with every judge (rubric, grounding and pairwise, their calibration sets) at a cap it fits under:
    summary.json lists each judge's grading calls and its calibration's, each with the tokens the server reported and
    their price, and together they are every judge request the server saw (16 of 94 were listed, none priced)."""
    code, err, out = _run(tmp_path, server, "judged", *JUDGE, "--judge-api-base", server.base_url, "--pairwise-judge",
                          "--max-cost-usd", "1")

    assert code in (0, 1), err
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    judge, pairwise = summary["judge"], summary["pairwise"]
    parts = [judge, judge["calibration"], judge["grounding"], judge["grounding"]["calibration"], pairwise, pairwise["calibration"]]
    assert pairwise["calibration"]["calls"] == 2 * pairwise["calibration"]["n"]  # both orders of every labelled pair
    assert judge["calibration"]["calls"] == judge["calibration"]["n"] > 0 and judge["grounding"]["calls"] > 0
    assert sum(part["calls"] for part in parts) == _judge_requests(server) > 0
    for part in parts:
        assert part["prompt_tokens"] == 4242 * part["calls"] and part["completion_tokens"] == 17 * part["calls"]
        assert abs(part["cost_usd"] - part["calls"] * CALL_USD) < 1e-9 and part["unpriced_calls"] == 0


def test_judge_calls_at_a_small_cap_stop_the_run_before_spending_past_it(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """Cap $0.03: the agent's calls (~$0.013) fit, the judges' (~100 calls, ~$0.065) do not: the run stops with exit 3
    before the judge call that would pass the cap, naming the cap and the resume command; the server's reported usage
    of every request made (agent and judge) stays within the cap (it went to $4.79 at a $0.50 cap, exit 0)."""
    code, err, out = _run(tmp_path, server, "capped", *JUDGE, "--judge-api-base", server.base_url, "--max-cost-usd", "0.03")

    assert code == 3, err
    assert "reached before the next judge call" in err and "--resume" in err and "Traceback" not in err
    assert _judge_requests(server) > 0
    assert len(server.requests) * CALL_USD <= 0.03
    records = scan_results(out / RESULTS_FILE).records
    assert len(records) == 15 and {r.status for r in records} == {"ok"}


def _report(cwd: Path, run: Path, *flags: str) -> tuple[int, str]:
    """``recall-eval report RUN FLAGS`` in ``cwd`` (its judge cache folder is relative); (code, stderr)."""
    return in_process(cwd, "report", str(run), *flags)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished run with no cap and no judge (15 samples, its own server), shared read-only: each test that
    reports on it copies it (:func:`_copy`)."""
    folder = tmp_path_factory.mktemp("plain")
    with FakeOpenAIServer(Script()) as server:
        code, err, out = _run(folder, server, "plain")
    assert code in (0, 1), err
    return out


def _copy(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / run.name))


def test_report_judge_calls_stop_at_its_own_cap_and_a_higher_cap_finishes_from_the_cache(
        tmp_path: Path, server: FakeOpenAIServer, plain: Path) -> None:
    """`report --judge-model M --max-cost-usd 0.01` on a finished run (its judges, calibration included, would make ~90
    calls, ~$0.06 at the usage the server reports): it stops with exit 3 before the judge call that would pass $0.01,
    writes nothing (the run's report untouched), and the judge requests made cost no more than the cap; the same
    command at $1 then finishes, asking the server again only for the verdicts not yet paid for."""
    out = _copy(plain, tmp_path)
    before = (out / "summary.json").read_bytes()
    agent_requests = len(server.requests)  # none: the run was made against another server
    flags = (*JUDGE, "--judge-api-base", server.base_url)

    code, err = _report(tmp_path, out, *flags, "--max-cost-usd", "0.01")
    first = len(server.requests) - agent_requests
    assert code == 3, err
    assert "--max-cost-usd $0.0100 reached before the next judge call" in err and "Traceback" not in err
    assert 0 < first and first * CALL_USD <= 0.01
    assert (out / "summary.json").read_bytes() == before

    code, err = _report(tmp_path, out, *flags, "--max-cost-usd", "1")
    assert code in (0, 1), err
    judge = json.loads((out / "summary.json").read_text(encoding="utf-8"))["judge"]
    paid = sum(part["calls"] for part in (judge, judge["calibration"], judge["grounding"], judge["grounding"]["calibration"]))
    assert len(server.requests) - agent_requests - first == paid  # the verdicts cached by the stopped report not asked again
    assert first + paid > first * 2  # the first report really stopped short of the whole


def test_report_max_cost_without_a_judge_or_with_an_unpriced_judge_is_one_line(
        tmp_path: Path, server: FakeOpenAIServer, plain: Path) -> None:
    """`report --max-cost-usd` without --judge-model (a report makes no other call), or with a judge litellm has no
    price for: one line naming the fix, exit 2, no request sent and nothing written."""
    out = _copy(plain, tmp_path)
    sent = len(server.requests)
    code, err = _report(tmp_path, out, "--max-cost-usd", "1")
    assert code == 2 and "also pass --judge-model M" in err and len(err.strip().splitlines()) == 1, err
    code, err = _report(tmp_path, out, "--judge-model", "openai/no-such-priced-judge", "--judge-api-base",
                        server.base_url, "--max-cost-usd", "1")
    assert code == 2 and "no price for openai/no-such-priced-judge" in err and "Traceback" not in err, err
    assert len(server.requests) == sent


GROWING_PLUGIN = '''
from harness.memory_systems import MemoryInstance, MemorySystem, ProbeSetup, policy_denial, probe_messages

OPENED = []


class _Instance(MemoryInstance):
    def __init__(self, scenario, section):
        super().__init__(scenario)
        self.section = section

    def begin_probe(self, policy, context):
        if policy_denial(policy, context) is not None:
            return ProbeSetup(probe_messages(self.scenario))
        return ProbeSetup(probe_messages(self.scenario, context_section=self.section))


class Growing(MemorySystem):
    """A store whose injected context the plan's one opening does not show: small at the first opening of the
    process (the plan's), about 80,000 tokens at every later one (the samples')."""

    name, description, arms = "growing", "injects more than the plan saw", {"growing": "seeded"}

    def open(self, scenario, write_mode):
        OPENED.append(scenario.id)
        return _Instance(scenario, "<notes>a note</notes>" if len(OPENED) == 1 else "<notes>" + "note " * 80000 + "</notes>")


system = Growing()
'''


def test_a_plan_that_estimates_below_the_real_prompts_cannot_let_a_run_pass_the_cap(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """A plug-in whose samples inject ~80,000 tokens the plan's one opening did not show: the plan's maximum (~$0.002)
    is under the $0.005 cap, yet the first call's reservation from its real prompt (~$0.012) is not: the run stops
    with exit 3 before any request, the budget line having said the plug-in's figures are estimated."""
    import re

    site = tmp_path / "site"
    (site / "growing-0.dist-info").mkdir(parents=True)
    (site / "growing.py").write_text(GROWING_PLUGIN, encoding="utf-8")
    (site / "growing-0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: growing\nVersion: 0\n")
    (site / "growing-0.dist-info" / "entry_points.txt").write_text("[recall_eval.memory_systems]\ngrowing = growing:system\n")
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "harness.cli", "run", "--no-progress", "--no-cache", "--model", "openai/gpt-4o-mini",
            "--api-base", server.base_url, "--scenarios", str(SMOKE), "--filter", "smoke-0[12345]*", "--arms", "growing",
            "--out", str(out), "--max-concurrency", "1", "--max-tokens", "100", "--max-cost-usd", "0.005"]
    env = cli_env() | {"PYTHONPATH": os.pathsep.join([str(REPO), str(site)])}
    code, _, err = finish(subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True), timeout=300)

    plan_max = float(re.search(r"at most \$([0-9.]+)\)", " ".join(err.split())).group(1))
    assert plan_max < 0.005, err  # the plan said the run fits
    assert "the plan's figures for arm growing are estimated" in " ".join(err.split())
    assert code == 3, err
    assert "--max-cost-usd $0.0050 reached" in err and "Traceback" not in err
    assert server.requests == [] and recorded_cost(scan_results(out / RESULTS_FILE).records) == 0
