"""``run --workers N``: N processes, each with its own event loop, run shares of the samples.

One event loop spends ~2-2.5 ms of CPU per litellm call (most of it inside
litellm: logging object, cost calculation, response building), so a single
process tops out near 400-500 calls/s whatever the concurrency. Workers lift
that ceiling on a machine with several cores.

Contract (the same as one process):

* Only the parent writes ``results.jsonl``: each worker sends its finished
  records as JSON lines over its own pipe (all records finished in one turn
  of its event loop go in one message); the parent appends and flushes them
  at once and advances the progress, so resume and "no duplicates" work
  unchanged. The parent does not re-validate the lines: they were dumped
  from a validated :class:`SampleRecord` by the same code.
* Samples are dealt round-robin; ``--max-concurrency`` is split among the
  workers (each gets at least 1).
* Workers share the on-disk response cache (entries are written atomically).
* Each worker runs its own early stop of a misconfigured model, so up to
  ``N x CONFIG_FAILURE_THRESHOLD`` samples of such a model are tried.
* Ctrl-C, SIGTERM or any parent exit: workers are terminated; lines already
  written stay whole, finished records already sent are written, the rest is
  resumable. A worker whose parent died exits on its own. A worker killed by
  SIGTERM or SIGINT (a CI system signalling the whole process group) makes
  the run interrupted, not failed.
* A record the parent cannot write (disk full) stops every worker at once.

Why pipes and not a ``multiprocessing.Queue``: a queue pickles and writes in
a feeder thread, which fights the worker's event loop for the GIL on every
record; a pipe written from the loop itself, once per loop turn, does not.

Workers start from a ``forkserver`` that has imported litellm once (litellm
runs no thread at import, so forking that server is safe, unlike forking a
process that has used litellm); ``spawn`` where there is no forkserver.
"""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing import connection
from typing import Any

from harness.offline_model import register_offline
from harness.records import SampleRecord, append_line, append_record, load_model, model_json
from harness.run.direct import needs_litellm
from harness.run.options import RunOptions
from harness.run.progress import RunProgress, record_flags
from harness.run.runner import ctx_for, execute, frozen_heap
from harness.run.samples import SampleSpec
from harness.run.watchdog import Beat, heartbeat_interval
from harness.scenarios import Scenario

_POLL_S = 0.2
_EXIT_GRACE_S = 2.0  # a worker that sent "done" only has to exit

# Imported once by the forkserver, so that no worker pays for them. Besides
# litellm itself, the modules litellm imports lazily on its first call (its
# default tiktoken encoding, proxy types, callback manager...): 0.27 s per
# fresh process, 0.6 s for the first call of two workers starting together;
# 0.04 s with them preloaded. Names a litellm version lacks are skipped
# (the forkserver ignores ImportError).
_LITELLM_PRELOAD = [
    "litellm",
    "litellm.litellm_core_utils.default_encoding",
    "litellm.litellm_core_utils.logging_callback_manager",
    "litellm.proxy._types",
    "litellm.integrations.generic_api.generic_api_callback",
    "litellm.llms.edenai.chat.transformation",
    "litellm.llms.fal_ai.image_generation",
    "litellm.llms.github_copilot.authenticator",
    "litellm.llms.openai_like.dynamic_config",
    "harness.offline_model._provider",
]
#: Without a model litellm serves (only the built-in offline models, no Router: ``harness.run.direct``) litellm is not preloaded.
_PRELOAD = ["harness.run.runner"]


def _needs_litellm(options: RunOptions | None) -> bool:
    return options is None or needs_litellm(options.models, getattr(options, "router_config", None))


class WorkerError(Exception):
    """A worker process failed outside any sample (its message names the worker and the cause)."""


def _context(litellm: bool = True) -> Any:
    """The worker start context; ``litellm``: whether the forkserver preloads litellm (the run calls it)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # inherited by the forkserver and workers
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload((_LITELLM_PRELOAD if litellm else []) + _PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")  # pragma: no cover - platforms without forkserver


def start_server(options: RunOptions | None = None) -> None:
    """Start the forkserver now, so that its litellm import overlaps this process's own work.

    ``run --workers`` calls this before it imports litellm itself: the two
    imports (~2.5 s each) then run at the same time on two cores. A run of
    the built-in offline models alone preloads no litellm (``options`` says which).
    """
    if _context(_needs_litellm(options)).get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def share(total: int, workers: int, index: int) -> int:
    """Worker ``index``'s part of ``total`` (parts differ by at most one, each at least 1).

    Example:
        >>> [share(10, 3, i) for i in range(3)]
        [4, 3, 3]
    """
    return max(1, total // workers + (1 if index < total % workers else 0))


def _limit_shares(options: RunOptions, count: int) -> dict[str, Any]:
    """One worker's part of ``--rpm``, ``--tpm`` and the ``--max-cost-usd`` budget: ``1/count`` of each, so the sums hold."""
    from harness.run.ratelimit import share_limits

    budget = getattr(options, "budget_usd", None)
    return {"rpm": share_limits(options.rpm, count), "tpm": share_limits(options.tpm, count),
            "budget_usd": None if budget is None else budget / count}


async def _watch_parent(main: asyncio.Task[Any]) -> None:
    parent = multiprocessing.parent_process()
    while parent is not None and parent.is_alive():
        await asyncio.sleep(_POLL_S * 5)
    main.cancel()


class _Sender:
    """Batches a worker's finished records: one pipe message per event-loop turn."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._lines: list[tuple[tuple[bool, bool, bool], str]] = []

    def __call__(self, record: SampleRecord) -> None:
        if not self._lines:
            asyncio.get_running_loop().call_soon(self.flush)
        self._lines.append((record_flags(record), model_json(record)))

    def flush(self) -> None:
        if self._lines:
            lines, self._lines = self._lines, []
            self._conn.send(("records", lines))

    def beat(self, beat: Beat) -> None:
        """The worker's heartbeat state, for the parent's one line (its records sent first, so counts agree)."""
        self.flush()
        self._conn.send(("beat", beat))


def _worker_main(
    index: int,
    specs: list[Any],
    options: RunOptions,
    scenarios: Sequence[Scenario],
    hashes: dict[str, str],
    conn: Any,
    setup: Callable[[], None] | None,
) -> None:
    """Entry point of one worker: run ``specs``, send ``("records", [(flags, json), ...])`` batches, then ``("done", status, stopped)``.

    ``flags`` are :func:`harness.run.progress.record_flags` of the record.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and terminates the workers
    try:
        import warnings

        warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
        if _needs_litellm(options):
            register_offline()
        if setup is not None:
            setup()
        ctx = ctx_for(options, scenarios, hashes)
        sender = _Sender(conn)

        async def main() -> tuple[str, dict[str, str]]:
            task = asyncio.create_task(execute(specs, ctx, sender, announce=sender.beat))
            watchdog = asyncio.create_task(_watch_parent(task))
            try:
                return await task
            finally:
                watchdog.cancel()
                sender.flush()

        with frozen_heap():
            status, stopped = asyncio.run(main())
        conn.send(("done", status, stopped))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which decides
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def run_in_workers(
    specs: list[Any],
    options: RunOptions,
    scenarios: Sequence[Scenario],
    hashes: dict[str, str],
    emit_line: Callable[[str, tuple[bool, bool, bool]], None],
    *,
    worker_setup: Callable[[], None] | None = None,
) -> tuple[str, dict[str, str]]:
    """Run ``specs`` in ``options.workers`` processes; ``emit_line(json, flags)`` gets every record, in this process.

    An exception from ``emit_line`` (a record that cannot be written)
    terminates every worker and is raised.

    Returns:
        ``("complete" | "interrupted" | "stalled", {model: reason})`` as :func:`harness.run.runner.execute`
        (a worker whose calls stalled makes the run ``stalled``).

    Raises:
        WorkerError: a worker crashed outside a sample (records it sent are already emitted).
    """
    ctx = _context(_needs_litellm(options))
    count = min(options.workers, len(specs))
    processes: list[multiprocessing.process.BaseProcess] = []
    conns: dict[connection.Connection, int] = {}
    for index in range(count):
        worker_options = dataclasses.replace(options, max_concurrency=share(options.max_concurrency, count, index), workers=1,
                                             **_limit_shares(options, count))
        receiver, sender = ctx.Pipe(duplex=False)
        args = (index, specs[index::count], worker_options, scenarios, hashes, sender, worker_setup)
        process = ctx.Process(target=_worker_main, args=args, name=f"recall-eval-worker-{index}", daemon=True)
        process.start()
        sender.close()  # the worker holds the only write end: its exit closes the pipe
        processes.append(process)
        conns[receiver] = index
    status, stopped, failures = "complete", dict[str, Any](), list[str]()
    heartbeat = _Heartbeat(len(specs), count)
    try:
        while conns:
            heartbeat.maybe_print()
            for ready in connection.wait(list(conns), timeout=_POLL_S):
                conn = ready if isinstance(ready, connection.Connection) else None
                assert conn is not None  # wait() hands back the connections it was given
                index = conns[conn]
                try:
                    message: Any = conn.recv()
                except (EOFError, OSError):  # the worker exited without saying it was done
                    del conns[conn]
                    processes[index].join(timeout=5)
                    if processes[index].exitcode in (-signal.SIGTERM, -signal.SIGINT):
                        status = "interrupted"  # signalled from outside (e.g. CI cancelling the process group): resumable
                    else:
                        failures.append(f"worker {index} exited with code {processes[index].exitcode}")
                    continue
                if message[0] == "records":
                    for flags, line in message[1]:
                        emit_line(line, flags)
                    heartbeat.done += len(message[1])
                    continue
                if message[0] == "beat":
                    heartbeat.beats[index] = message[1]
                    continue
                del conns[conn]
                if message[0] == "done":
                    stopped.update(message[2])
                    if message[1] != "complete" and status != "stalled":  # a stalled worker's reason wins
                        status = message[1]
                else:
                    failures.append(f"worker {index}: {message[1]}")
    except KeyboardInterrupt:
        _stop(processes)
        _drain(list(conns), emit_line)
        raise
    finally:
        _stop(processes, grace_s=0.0 if conns else _EXIT_GRACE_S)
    if failures:
        raise WorkerError("; ".join(failures) + ". Finished samples are saved; continue with --resume.")
    return status, stopped


class _Heartbeat:
    """The parent's one heartbeat line of a run in workers, every :func:`heartbeat_interval` seconds, from their beats."""

    def __init__(self, planned: int, workers: int) -> None:
        self.planned, self.done, self.beats = planned, 0, {i: Beat(0) for i in range(workers)}
        self.every_s = heartbeat_interval()
        self.next_at = time.monotonic() + self.every_s

    def maybe_print(self) -> None:
        now = time.monotonic()
        if now >= self.next_at:
            self.next_at = now + self.every_s
            total = Beat.total(self.done, list(self.beats.values()))
            print(total.line(self.planned, now), file=sys.stderr, flush=True)


def _stop(processes: list[Any], grace_s: float = 0.0) -> None:
    """Terminate the workers still alive after ``grace_s`` (those that said "done" exit on their own, cleanly)."""
    for process in processes:
        process.join(timeout=grace_s)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)


def _drain(conns: list[Any], emit_line: Callable[[str, tuple[bool, bool, bool]], None]) -> None:
    """Write the finished records already sent when the run is interrupted (the workers are gone)."""
    for conn in conns:
        while True:
            try:
                if not conn.poll():
                    break
                message = conn.recv()
            except Exception:  # noqa: BLE001 - closed, or a message cut off by the termination: resumable
                break
            if message and message[0] == "records":
                for flags, line in message[1]:
                    emit_line(line, flags)


def run_specs(
    specs: list[SampleSpec],
    options: RunOptions,
    scenarios: Sequence[Scenario],
    hashes: dict[str, str],
    handle: Any,
    progress: RunProgress,
    *,
    worker_setup: Callable[[], None] | None = None,
) -> tuple[str, dict[str, str]]:
    """Run ``specs`` in this process (``options.workers == 1``) or in worker processes.

    Either way this process alone appends to ``handle`` (one flushed line per
    record, e.g. a :class:`harness.records.ResultsWriter`) and advances
    ``progress``. ``worker_setup`` runs first in every worker (a module-level
    function, e.g. one registering a custom provider).

    Returns:
        As :func:`execute`.

    Raises:
        harness.records.ResultsWriteError: a record could not be written; nothing was run after it.
    """

    def emit(record: SampleRecord) -> None:
        append_record(handle, record)
        progress.advance(*record_flags(record), error=f"{record.error.type}: {record.error.message}" if record.error else None,
                         record=record)

    def emit_line(line: str, flags: tuple[bool, bool, bool]) -> None:  # a worker's record, already dumped as JSON
        pasted = '"pasted":{' in line  # a pasted history: written once, by reference, by this process alone
        # errors are rare: without running scores or a pasted history only those are parsed, and each line once
        record = load_model(SampleRecord, line) if pasted or progress.wants_records or not flags[0] else None
        if record is not None and pasted:
            append_record(handle, record)
        else:
            append_line(handle, line)
        error = record.error if record is not None and not flags[0] else None
        progress.advance(*flags, error=f"{error.type}: {error.message}" if error else None, record=record)

    if options.workers > 1 and len(specs) > 1:
        return run_in_workers(specs, options, scenarios, hashes, emit_line, worker_setup=worker_setup)
    if worker_setup is not None:
        worker_setup()
    ctx = ctx_for(options, scenarios, hashes)
    try:
        with frozen_heap():
            return asyncio.run(execute(specs, ctx, emit))
    finally:
        progress.concurrency = getattr(ctx.client.concurrency, "summary", lambda: None)()
