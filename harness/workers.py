"""``run --workers N``: N processes, each with its own event loop, run shares of the samples.

One event loop spends ~2-2.5 ms of CPU per litellm call (most of it inside
litellm: logging object, cost calculation, response building), so a single
process tops out near 400-500 calls/s whatever the concurrency. Workers lift
that ceiling on a machine with several cores.

Contract (the same as one process):

* Only the parent writes ``results.jsonl``: workers send each finished
  record back over a queue, the parent appends and flushes it at once and
  advances the progress, so resume and "no duplicates" work unchanged.
* Samples are dealt round-robin; ``--max-concurrency`` is split among the
  workers (each gets at least 1).
* Workers share the on-disk response cache (entries are written atomically).
* Each worker runs its own early stop of a misconfigured model, so up to
  ``N x CONFIG_FAILURE_THRESHOLD`` samples of such a model are tried.
* Ctrl-C or any parent exit: workers are terminated; lines already written
  stay whole, finished records still in the queue are written, the rest is
  resumable. A worker whose parent died exits on its own.

Workers start from a ``forkserver`` that has imported litellm once (litellm
runs no thread at import, so forking that server is safe, unlike forking a
process that has used litellm); ``spawn`` where there is no forkserver.
"""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing
import os
import queue as queue_mod
import signal
from collections.abc import Callable
from typing import Any

from harness.results import SampleRecord
from harness.run_options import RunOptions
from harness.scenarios.models import Scenario

_POLL_S = 0.2


class WorkerError(Exception):
    """A worker process failed outside any sample (its message names the worker and the cause)."""


def _context() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # inherited by the forkserver and workers
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["litellm", "harness.runner"])
        return ctx
    return multiprocessing.get_context("spawn")  # pragma: no cover - platforms without forkserver


def share(total: int, workers: int, index: int) -> int:
    """Worker ``index``'s part of ``total`` (parts differ by at most one, each at least 1).

    Example:
        >>> [share(10, 3, i) for i in range(3)]
        [4, 3, 3]
    """
    return max(1, total // workers + (1 if index < total % workers else 0))


async def _watch_parent(main: asyncio.Task[Any]) -> None:
    parent = multiprocessing.parent_process()
    while parent is not None and parent.is_alive():
        await asyncio.sleep(_POLL_S * 5)
    main.cancel()


def _worker_main(
    index: int,
    specs: list[Any],
    options: RunOptions,
    scenarios: list[Scenario],
    hashes: dict[str, str],
    out: Any,
    setup: Callable[[], None] | None,
) -> None:
    """Entry point of one worker: run ``specs``, send ``("record", json)`` per sample, then ``("done", status, stopped)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and terminates the workers
    try:
        import warnings

        from harness.runner import ctx_for, execute, register_offline

        warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
        register_offline()
        if setup is not None:
            setup()
        ctx = ctx_for(options, scenarios, hashes)

        async def main() -> tuple[str, dict[str, str]]:
            task = asyncio.create_task(execute(specs, ctx, lambda record: out.put(("record", record.model_dump_json()))))
            watchdog = asyncio.create_task(_watch_parent(task))
            try:
                return await task
            finally:
                watchdog.cancel()

        status, stopped = asyncio.run(main())
        out.put(("done", index, status, stopped))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which decides
        out.put(("failed", index, f"{type(exc).__name__}: {exc}"))


def run_in_workers(
    specs: list[Any],
    options: RunOptions,
    scenarios: list[Scenario],
    hashes: dict[str, str],
    emit: Callable[[SampleRecord], None],
    *,
    worker_setup: Callable[[], None] | None = None,
) -> tuple[str, dict[str, str]]:
    """Run ``specs`` in ``options.workers`` processes; ``emit`` gets every record, in this process.

    Returns:
        ``("complete" | "interrupted", {model: reason})`` as :func:`harness.runner.execute`.

    Raises:
        WorkerError: a worker crashed outside a sample (records it sent are already emitted).
    """
    ctx = _context()
    count = min(options.workers, len(specs))
    out = ctx.Queue()
    processes = []
    for index in range(count):
        worker_options = dataclasses.replace(options, max_concurrency=share(options.max_concurrency, count, index), workers=1)
        args = (index, specs[index::count], worker_options, scenarios, hashes, out, worker_setup)
        process = ctx.Process(target=_worker_main, args=args, name=f"recall-eval-worker-{index}", daemon=True)
        process.start()
        processes.append(process)
    status, stopped, failures = "complete", {}, []
    running = set(range(count))
    try:
        while running:
            try:
                message = out.get(timeout=_POLL_S)
            except queue_mod.Empty:
                dead = [i for i in running if not processes[i].is_alive()]
                if dead and out.empty():
                    failures += [f"worker {i} exited with code {processes[i].exitcode}" for i in dead]
                    running -= set(dead)
                continue
            if message[0] == "record":
                emit(SampleRecord.model_validate_json(message[1]))
            elif message[0] == "done":
                running.discard(message[1])
                stopped.update(message[3])
                status = "interrupted" if message[2] != "complete" else status
            else:
                running.discard(message[1])
                failures.append(f"worker {message[1]}: {message[2]}")
    except KeyboardInterrupt:
        _stop(processes)
        _drain(out, emit)
        raise
    finally:
        _stop(processes)
    if failures:
        raise WorkerError("; ".join(failures) + ". Finished samples are saved; continue with --resume.")
    return status, stopped


def _stop(processes: list[Any]) -> None:
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)


def _drain(out: Any, emit: Callable[[SampleRecord], None]) -> None:
    """Write the finished records still queued when the run is interrupted."""
    while True:
        try:
            message = out.get(timeout=_POLL_S)
        except (queue_mod.Empty, EOFError, OSError):
            return
        if message and message[0] == "record":
            try:
                emit(SampleRecord.model_validate_json(message[1]))
            except ValueError:  # a record cut off by the termination: resumable like any unfinished sample
                continue
