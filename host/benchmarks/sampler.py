"""A sampling profiler of every thread of this process (py-spy is not installed here).

Every `interval_s` it charges each thread's CPU time since the last look (the kernel's count,
/proc/self/task/TID/stat) to the stack the thread is on (`sys._current_frames`): per function,
inclusive (on the stack) and own (the innermost frame), and per thread. cProfile sees only the
thread that enabled it; the floor's work is on uvicorn's loop, its settlement threads and its
rebuild thread.

`python -m cardshoe.benchmarks.sampler OUT -- ARGV...` runs `cardshoe ARGV` under it (the
bench's floor process with `--profile`), writing the report to OUT when the process ends.
"""

from __future__ import annotations

import atexit
import collections
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

__all__ = ["Sampler"]

_TICK = os.sysconf("SC_CLK_TCK")


def _name(f: FrameType) -> str:
    code = f.f_code
    return f"{code.co_name} ({Path(code.co_filename).name}:{code.co_firstlineno})"


def _thread_ticks(native_id: int) -> int:
    try:
        text = Path(f"/proc/self/task/{native_id}/stat").read_text()
    except OSError:
        return 0
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks


class Sampler:
    """Every `interval_s`, each thread's CPU ticks since the last look (/proc/self/task) are
    charged to the stack it is on now (`sys._current_frames`); write the report to `path`.

    A thread blocked in C (a queue's get, a socket, a lock) shows a Python frame but uses no
    CPU, so it is charged nothing. The kernel counts CPU in ticks at its timer, so a thread
    that runs briefly and then waits is charged at its wait: trust the per-thread split, and
    read the per-function one as a rough guide."""

    def __init__(self, path: str, interval_s: float = 0.02, focus: tuple[str, str] = ("settle", "floor/settle.py")) -> None:
        self.path = path
        self.focus = focus
        """(function, file) whose calls also get a wall-clock profile: every look at a thread inside
        it counts, running or not (waiting on PostgreSQL, a lock, the GIL): where its time goes."""
        self.wall_s = 0.0
        self.wall_looks = 0
        self.wall_ticks = 0
        self.wall_own: collections.defaultdict[str, float] = collections.defaultdict(float)
        self.wall_incl: collections.defaultdict[str, float] = collections.defaultdict(float)
        self._dt = interval_s
        self.interval_s = interval_s
        self.own: collections.Counter[str] = collections.Counter()
        self.incl: collections.Counter[str] = collections.Counter()
        self.by_thread: collections.Counter[str] = collections.Counter()
        self.ticks = 0
        self._last: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="sampler")
        self._written = False
        self._t0 = time.monotonic()

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        me = threading.get_ident()
        last = time.monotonic()
        while not self._stop.wait(max(self.interval_s, 0.0004 * threading.active_count())):
            # (with hundreds of threads, reading each one's /proc entry every 20 ms would be the load)
            # Under load the looks come late: each counts for the time since the last one.
            now = time.monotonic()
            self._dt, last = now - last, now
            frames = sys._current_frames()
            for t in threading.enumerate():
                if t.ident == me or t.native_id is None or t.ident not in frames:
                    continue
                ticks = _thread_ticks(t.native_id)
                delta = ticks - self._last.get(t.native_id, ticks)
                self._last[t.native_id] = ticks
                self._wall(frames[t.ident], delta)
                if delta <= 0:
                    continue
                self.ticks += delta
                self.by_thread[re.sub(r"[-_]?\d+", "", t.name)] += delta
                frame: FrameType | None = frames[t.ident]
                assert frame is not None
                self.own[_name(frame)] += delta
                seen = set()
                while frame is not None:
                    n = _name(frame)
                    if n not in seen:
                        seen.add(n)
                        self.incl[n] += delta
                    frame = frame.f_back

    def _wall(self, frame: FrameType | None, delta: int) -> None:
        inner: list[FrameType] = []
        while frame is not None:
            code = frame.f_code
            if code.co_name == self.focus[0] and code.co_filename.endswith(self.focus[1]):
                break
            inner.append(frame)
            frame = frame.f_back
        if frame is None:
            return  # not inside the focus
        self.wall_looks += 1
        self.wall_s += self._dt
        self.wall_ticks += max(0, delta)
        self.wall_own[_name(inner[0]) if inner else _name(frame)] += self._dt
        seen = set()
        for f in inner:
            n = _name(f)
            if n not in seen:
                seen.add(n)
                self.wall_incl[n] += self._dt

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.write()

    def write(self) -> None:
        if self._written:
            return
        self._written = True
        total = max(1, self.ticks)
        wall = time.monotonic() - self._t0
        lines = [f"{self.ticks / _TICK:.1f} CPU s of Python threads charged over {wall:.0f} s "
                 f"({self.ticks / _TICK / max(wall, 1e-9):.2f} cores), looked at every {self.interval_s * 1000:.0f} ms",
                 "", "by thread (name without its number):"]
        lines += [f"{100 * c / total:6.1f}%  {n}" for n, c in self.by_thread.most_common(15)]
        lines += ["", "own (innermost frame), % of the CPU:"]
        lines += [f"{100 * c / total:6.1f}%  {n}" for n, c in self.own.most_common(40)]
        lines += ["", "inclusive (on the stack), % of the CPU:"]
        lines += [f"{100 * c / total:6.1f}%  {n}" for n, c in self.incl.most_common(90)]
        ws = max(1e-9, self.wall_s)
        lines += ["", f"wall clock inside {self.focus[0]} ({self.focus[1]}): {self.wall_looks} looks, "
                  f"{self.wall_s:.1f} thread-s (each look counts for the time since the last), of which CPU "
                  f"{self.wall_ticks / _TICK:.1f} s; by innermost frame, % of that time:"]
        lines += [f"{100 * c / ws:6.1f}%  {n}" for n, c in sorted(self.wall_own.items(), key=lambda x: -x[1])[:30]]
        lines += ["", "inclusive below it, % of that time:"]
        lines += [f"{100 * c / ws:6.1f}%  {n}" for n, c in sorted(self.wall_incl.items(), key=lambda x: -x[1])[:60]]
        Path(self.path).write_text("\n".join(lines) + "\n")


def main() -> None:
    out, argv = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    sampler = Sampler(out)
    sampler.start()
    atexit.register(sampler.write)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # atexit runs; uvicorn installs its own later
    from cardshoe.cli import main as cli_main

    try:
        cli_main(argv)
    finally:
        sampler.stop()


if __name__ == "__main__":
    main()
