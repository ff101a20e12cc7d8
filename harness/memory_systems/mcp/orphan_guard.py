"""Run an MCP server so that it dies with the ``recall-eval`` that started it, even after a ``kill -9`` (POSIX).

The SDK's shutdown and :mod:`~harness.memory_systems.mcp.connection`'s exit
handler run only while ``recall-eval`` lives; killed with SIGKILL, it leaves
a server that ignores its closed stdin (a hung one, a deaf one) running for
ever. So every stdio server is started as::

    python -I -S orphan_guard.py [--poll] PARENT_PID COMMAND [ARG...]

This small process (standard library only; ``-I -S`` keeps its start cheap
and free of the caller's paths) learns of its parent's death, starts the
server as its child in its own process group and waits for it. On Linux the
kernel tells it: it asks for a signal when the thread that started it dies
(``prctl(PR_SET_PDEATHSIG)``). Where there is no ``prctl`` (macOS, the BSDs),
it fails, or ``--poll`` is given, it polls instead: every
:data:`POLL_S` seconds it checks that its parent pid is still its parent
(an orphan is re-parented to init or a subreaper). When the parent dies it
kills the whole group with SIGKILL: the server, anything the server started
(an ``npx``-style wrapper's child) and itself. Otherwise it is transparent:
the server has the guard's stdin, stdout and stderr (the guard keeps no copy
of the protocol pipes, so the client sees the server's end of output), and
the guard exits with the server's status. It kills its group only when it
leads it (the SDK starts each server in a new session), never its caller's.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
#: The signal the kernel sends the guard when its parent thread dies (SIGTERM and SIGINT stay the server's own).
PARENT_DIED = signal.SIGUSR2
USAGE = "usage: orphan_guard.py [--poll] PARENT_PID COMMAND [ARG...]"
#: Seconds between two looks at the parent pid when polling (an orphaned server lives at most about this long).
POLL_S = 0.25


def kill_everything(child: int) -> None:
    """SIGKILL the guard's process group when it leads one (itself included), else the server alone."""
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    try:
        os.kill(child, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os._exit(137)


def exit_status(status: int) -> int:
    """The guard's exit code for the server's wait status (a signal's death as 128 + its number, as a shell says)."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def ask_kernel() -> bool:
    """Ask for :data:`PARENT_DIED` when the parent thread dies; False where that cannot be had (then poll)."""
    try:
        return int(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(PARENT_DIED), 0, 0, 0)) == 0
    except (AttributeError, OSError):  # no prctl in this C library (macOS, the BSDs)
        return False


def wait_polling(child: int, parent: int) -> int:
    """Wait for the server, killing its group as soon as ``parent`` is no longer this process's parent."""
    while True:
        try:
            done, status = os.waitpid(child, os.WNOHANG)
        except ChildProcessError:
            return 1
        if done == child:
            return exit_status(status)
        if os.getppid() != parent:
            kill_everything(child)
        time.sleep(POLL_S)


def main(argv: list[str]) -> int:
    """Guard ``argv[2:]`` for the parent ``argv[1]`` (after an optional ``--poll``); returns the server's exit code."""
    poll = len(argv) > 1 and argv[1] == "--poll"
    if poll:
        argv = argv[:1] + argv[2:]
    if len(argv) < 3 or not argv[1].isdigit():
        sys.stderr.write(USAGE + "\n")
        return 2
    parent, command = int(argv[1]), argv[2:]
    child = 0
    signal.signal(PARENT_DIED, lambda *_: kill_everything(child))
    poll = poll or not ask_kernel()
    if os.getppid() != parent:  # the parent died before the guard was armed: nothing must start
        return 137
    try:
        child = os.fork()
    except OSError as exc:
        sys.stderr.write(f"orphan_guard: cannot start {command[0]}: {exc}\n")
        return 127
    if child == 0:
        signal.signal(PARENT_DIED, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"orphan_guard: cannot run {command[0]}: {exc}\n")
        os._exit(127)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the protocol pipes are the server's alone: its exit closes them for the client
    os.dup2(null, 1)
    if poll:
        return wait_polling(child, parent)
    try:
        _, status = os.waitpid(child, 0)
    except ChildProcessError:
        return 1
    return exit_status(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
