"""Run: every planned sample through the agent loop, each from fresh storage, streamed to the run folder.

Takes: validated scenarios (:mod:`harness.scenarios`), the arms of
:mod:`harness.memory_systems`, and the run's options (models, epochs, seeds,
limits). Gives: one :class:`~harness.records.SampleRecord` per sample in
``results.jsonl`` and the ``run.json`` manifest (:mod:`harness.records`).

What is here: the agent loop (``agent``) and the model client a run uses
(``calls``: the response cache, retries, rate limits, a litellm Router and the
cost budget), the plan printed before any call (``plan``, ``model_tables``),
the options of ``recall-eval run`` (``options``), the run folder's lock and
resume state (``folder``), the samples and their seeds (``samples``), one
sample from open to close (``sample``: write phase, probe), the loop over
them (``runner``), worker processes (``workers``), shards (``shards``) and
the progress display (``progress``). Every model call goes through litellm,
except those of the built-in offline models without a Router, answered
in-process (``direct``) so that an offline run never imports litellm.
"""

from harness.run.agent import AgentOutcome, ModelClient, ModelSettings, count_tokens, run_agent
from harness.run.budget import BudgetExceeded, budget_stop
from harness.run.calls import PriceError, judge_budget
from harness.run.direct import needs_litellm
from harness.run.folder import (
    EarlierAttempt,
    RunFolderError,
    check_fresh,
    describe_writer,
    live_writer,
    lock_folder,
    prepare_folder,
    read_earlier_attempt,
)
from harness.run.model_names import model_name_problems
from harness.run.options import RunOptions, RunOptionsError, now_iso, resolve_options
from harness.run.plan import PlanInterrupted, cli_plan, price_problem, start_line
from harness.run.progress import RunProgress, record_flags
from harness.run.responses import fault_note
from harness.run.retry import RetryPolicy, is_transient
from harness.run.runner import ctx_for, execute, redact, secret_values
from harness.run.samples import SampleSpec, plan_samples, sample_seed
from harness.run.shards import Shard, ShardError, parse_shard, shard_ids
from harness.run.watchdog import heartbeat_interval, stall_message
from harness.run.workers import WorkerError, run_specs, start_server

__all__ = [
    "AgentOutcome",
    "BudgetExceeded",
    "EarlierAttempt",
    "ModelClient",
    "ModelSettings",
    "RunFolderError",
    "RunOptions",
    "RunOptionsError",
    "RunProgress",
    "SampleSpec",
    "Shard",
    "ShardError",
    "WorkerError",
    "budget_stop",
    "fault_note",
    "judge_budget",
    "PriceError",
    "RetryPolicy",
    "heartbeat_interval",
    "is_transient",
    "check_fresh",
    "count_tokens",
    "cli_plan",
    "ctx_for",
    "describe_writer",
    "execute",
    "live_writer",
    "lock_folder",
    "now_iso",
    "parse_shard",
    "plan_samples",
    "prepare_folder",
    "model_name_problems",
    "needs_litellm",
    "price_problem",
    "read_earlier_attempt",
    "record_flags",
    "redact",
    "resolve_options",
    "run_agent",
    "run_specs",
    "sample_seed",
    "secret_values",
    "shard_ids",
    "start_line",
    "PlanInterrupted",
    "stall_message",
    "start_server",
]
