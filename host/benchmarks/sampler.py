"""A sampling profiler of every thread of this process (py-spy is not installed here).

Every `interval_s` it takes every thread's stack (`sys._current_frames`) and counts, per
function, the samples where it is on the stack (inclusive) and where it is the innermost frame
(own time). cProfile sees only the thread that enabled it; the floor's work is on uvicorn's
loop, its settlement threads and its rebuild thread. Threads that are waiting (a lock, a
socket, a sleep) are counted too, as "waiting" when their innermost frame is a known wait:
the report separates them so what it shows is where the CPU goes.

`python -m cardshoe.benchmarks.sampler OUT -- ARGV...` runs `cardshoe ARGV` under it (the
bench's floor process with `--profile`), writing the report to OUT when the process ends.
"""

from __future__ import annotations

import atexit
import collections
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

__all__ = ["Sampler"]

_WAITS = {"wait", "select", "poll", "accept", "recv", "recv_into", "readinto", "sleep", "acquire", "_wait_for_tstate_lock",
          "get", "read", "_run_once", "join", "epoll", "_recv", "connect", "wait_for", "readline", "execute",
          "fetchone", "fetchall", "_conn_wait", "wait_conn", "getconn"}


def _name(f: FrameType) -> str:
    code = f.f_code
    return f"{code.co_name} ({Path(code.co_filename).name}:{code.co_firstlineno})"


class Sampler:
    """Sample every thread's stack until stopped; write the report to `path`."""

    def __init__(self, path: str, interval_s: float = 0.01) -> None:
        self.path = path
        self.interval_s = interval_s
        self.own: collections.Counter[str] = collections.Counter()
        self.incl: collections.Counter[str] = collections.Counter()
        self.samples = 0
        self.waiting = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="sampler")
        self._written = False

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        me = threading.get_ident()
        while not self._stop.wait(self.interval_s):
            for tid, frame in sys._current_frames().items():
                if tid == me:
                    continue
                self.samples += 1
                if frame.f_code.co_name in _WAITS:
                    self.waiting += 1
                    continue
                self.own[_name(frame)] += 1
                seen = set()
                f: FrameType | None = frame
                while f is not None:
                    n = _name(f)
                    if n not in seen:
                        seen.add(n)
                        self.incl[n] += 1
                    f = f.f_back

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.write()

    def write(self) -> None:
        if self._written:
            return
        self._written = True
        busy = max(1, self.samples - self.waiting)
        lines = [f"{self.samples} thread samples every {self.interval_s * 1000:.0f} ms, {self.waiting} waiting "
                 f"(innermost frame a wait), {busy} running or runnable", "", "own time (innermost frame), % of running:"]
        lines += [f"{100 * c / busy:6.1f}%  {n}" for n, c in self.own.most_common(40)]
        lines += ["", "inclusive (on the stack), % of running:"]
        lines += [f"{100 * c / busy:6.1f}%  {n}" for n, c in self.incl.most_common(80)]
        Path(self.path).write_text("\n".join(lines) + "\n")


def main() -> None:
    out, argv = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    sampler = Sampler(out)
    sampler.start()
    atexit.register(sampler.write)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # atexit runs; uvicorn installs its own later
    from cardshoe.cli import main as cli_main

    t0 = time.monotonic()
    try:
        cli_main(argv)
    finally:
        sampler._stop.set()
        sampler.write()
        del t0


if __name__ == "__main__":
    main()
