"""Several floor API processes on the one listening socket (issue 24 item 1).

`cardshoe floor serve --workers N` binds the API's socket itself (port 0 and `--port-file`
work as with one process), then forks N workers that inherit it. Each worker builds its own
database connections, round rebuilder and settler after the fork and serves the API on the
inherited socket; the kernel hands each new connection to one of them. The parent only
supervises:

* a worker that ends (a crash, an out-of-memory kill, SIGKILL) is logged and replaced; one
  that keeps dying at once is restarted with a growing delay (up to `MAX_DELAY`), so a floor
  whose database is away does not spin;
* SIGTERM or SIGINT to the parent stops every worker (SIGTERM: uvicorn finishes the requests
  in hand) and the parent returns when the last has gone; one still there after
  `STOP_GRACE` seconds is killed;
* a worker dies with its parent (Linux's parent-death signal), so killing the parent alone
  leaves no worker answering on a floor nobody supervises.

Connections the kernel queued while no worker accepted (between a death and its replacement)
wait in the socket's backlog; none is refused. Nothing of record is kept in a worker: the
order of the link's settlements and of a table's entries is the database's (docs/floor.md,
"Several API processes").
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
import traceback
from typing import Any, Callable

__all__ = ["supervise", "MAX_DELAY", "STOP_GRACE", "describe_exit"]

#: The longest wait before a worker that keeps dying at once is started again (seconds).
MAX_DELAY = 10.0
#: A worker that lived this long had a fair run: its successor starts without delay (seconds).
FAIR_RUN = 10.0
#: How long the workers have to finish after SIGTERM before they are killed (seconds).
STOP_GRACE = 30

_STOPS = (signal.SIGTERM, signal.SIGINT)
_PR_SET_PDEATHSIG = 1


def describe_exit(status: int) -> str:
    """A wait status in words: 'killed by SIGKILL', 'exited with code 1'."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"killed by {name}"
    return f"exited with code {os.waitstatus_to_exitcode(status)}"


def _die_with_parent(parent: int) -> None:
    """Ask Linux to send this process SIGTERM when its parent ends (no orphan keeps serving)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the parent's SIGTERM handler still stops us
        pass
    if os.getppid() != parent:  # the parent ended before the request took effect
        os._exit(0)


def supervise(count: int, work: Callable[[int], int], *, say: Callable[[str], None],
              started: Callable[[list[int]], None] | None = None) -> int:
    """Run `work(slot)` in `count` forked processes (slots 0..count-1) until SIGTERM or SIGINT.

    Call from a process with no other thread and no open database connection: the children
    are forks of it. `say` logs a line (a worker replaced, the stop); `started(pids)` is called
    once the first workers are forked. Returns 0 after a stop the signals asked for."""
    parent = os.getpid()
    children: dict[int, int] = {}  # pid -> slot
    born: dict[int, float] = {}
    quick_deaths = [0] * count
    stopping = False

    def say_safely(line: str) -> None:
        try:  # from a signal handler: the main code may be inside a write to the same stream
            say(line)
        except RuntimeError:
            pass

    def stop(signum: int, _frame: Any) -> None:
        nonlocal stopping
        if not stopping:
            say_safely(f"{signal.Signals(signum).name}: stopping {len(children)} workers")
            signal.signal(signal.SIGALRM, kill_all)
            signal.alarm(STOP_GRACE)
        stopping = True
        for pid in list(children):
            _signal(pid, signal.SIGTERM)

    def kill_all(_signum: int, _frame: Any) -> None:
        say_safely(f"workers {', '.join(map(str, children))} still running {STOP_GRACE} s after SIGTERM: killed")
        for pid in list(children):
            _signal(pid, signal.SIGKILL)

    def start(slot: int) -> int:
        # Signals held across the fork: a child must never run the parent's handler (it
        # would signal its siblings), and the parent must know the child before it stops.
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        try:
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    for sig in _STOPS:
                        signal.signal(sig, signal.SIG_DFL)
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
                    _die_with_parent(parent)
                    code = work(slot)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 1
                except BaseException:  # noqa: BLE001 - a child never returns into the parent's code
                    traceback.print_exc()
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            children[pid] = slot
            born[pid] = time.monotonic()
            return pid
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)

    previous = {sig: signal.signal(sig, stop) for sig in _STOPS}
    try:
        for slot in range(count):
            if not stopping:
                start(slot)
        if started is not None:
            started(list(children))
        while children:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            slot_of = children.pop(pid, None)
            lived = time.monotonic() - born.pop(pid, time.monotonic())
            if slot_of is None or stopping:
                continue
            quick_deaths[slot_of] = 0 if lived >= FAIR_RUN else quick_deaths[slot_of] + 1
            delay = 0.0 if quick_deaths[slot_of] <= 1 else min(MAX_DELAY, 0.25 * 2 ** quick_deaths[slot_of])
            say(f"worker {pid} {describe_exit(status)} after {lived:.1f} s; starting another"
                + (f" in {delay:.1f} s" if delay else ""))
            until = time.monotonic() + delay
            while not stopping and time.monotonic() < until:
                time.sleep(min(0.1, max(0.0, until - time.monotonic())))
            if not stopping:
                new = start(slot_of)
                say(f"worker {new} started in place of {pid}")
        return 0
    finally:
        signal.alarm(0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
