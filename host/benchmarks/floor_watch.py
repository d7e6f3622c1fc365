"""What `cardshoe bench floor` reads of the machine: memory and CPU of its process groups,
from /proc (the floor's processes, each table process, PostgreSQL's processes).

Sampled every second by a thread of the parent. Per process: the peak resident set (VmHWM,
the kernel's own high-water mark) and CPU time (utime + stime). PostgreSQL's backends share
its buffers: their sum of VmRSS counts the shared pages once per process, so PostgreSQL's
memory is given as the peak of the sampled sum of private memory (RssAnon) of its processes
plus the largest shared part (RssShmem) once.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["ProcWatch", "descendants", "postmaster_pid"]

_TICK = os.sysconf("SC_CLK_TCK")


def _status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS", "RssAnon", "RssShmem", "RssFile"):
                out[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def _cpu_s(pid: int) -> float:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14, 15 of stat)


def _parents() -> dict[int, int]:
    out: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            text = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        out[int(d)] = int(text[text.rindex(")") + 2:].split()[1])
    return out


def descendants(roots: list[int], parents: dict[int, int] | None = None) -> list[int]:
    """The processes `roots` and all their descendants that run now."""
    parents = _parents() if parents is None else parents
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [r for r in roots if r in parents]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def postmaster_pid(data: Path) -> int | None:
    """The postmaster of the cluster whose data directory is `data` (its postmaster.pid)."""
    try:
        first = (data / "postmaster.pid").read_text().splitlines()[0].strip()
        return int(first)
    except (OSError, ValueError, IndexError):
        return None


class ProcWatch:
    """Samples groups of processes every `interval_s`: group name -> a function giving the
    group's root processes (their descendants are included)."""

    def __init__(self, groups: dict[str, Callable[[], list[int]]], interval_s: float = 1.0) -> None:
        self.groups = groups
        self.interval_s = interval_s
        self.hwm_kb: dict[str, dict[int, int]] = {g: {} for g in groups}
        self.cpu_s: dict[str, dict[int, float]] = {g: {} for g in groups}
        self.first_cpu_s: dict[str, dict[int, float]] = {g: {} for g in groups}
        self.private_peak_kb: dict[str, int] = {g: 0 for g in groups}
        self.shmem_peak_kb: dict[str, int] = {g: 0 for g in groups}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="procwatch")

    def start(self) -> None:
        self.sample()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sample()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def sample(self) -> None:
        parents = _parents()
        for group, roots in self.groups.items():
            private = shmem = 0
            for pid in descendants(roots(), parents):
                st = _status(pid)
                if not st:
                    continue
                self.hwm_kb[group][pid] = max(self.hwm_kb[group].get(pid, 0), st.get("VmHWM", 0))
                cpu = _cpu_s(pid)
                self.first_cpu_s[group].setdefault(pid, cpu)
                self.cpu_s[group][pid] = max(self.cpu_s[group].get(pid, 0.0), cpu)
                private += st.get("RssAnon", 0)
                shmem = max(shmem, st.get("RssShmem", 0))
            self.private_peak_kb[group] = max(self.private_peak_kb[group], private)
            self.shmem_peak_kb[group] = max(self.shmem_peak_kb[group], shmem)

    def cpu_total_s(self, group: str) -> float:
        """CPU seconds used by the group's processes so far (each one's last sample)."""
        return sum(self.cpu_s[group].values())

    def cpu_used_s(self, group: str) -> float:
        """CPU seconds the group's processes used while watched (from each one's first sample)."""
        return sum(c - self.first_cpu_s[group].get(pid, 0.0) for pid, c in self.cpu_s[group].items())


def wait_until(cond: Callable[[], bool], timeout_s: float, step_s: float = 0.05) -> bool:
    """Poll `cond` until it holds or `timeout_s` passes; whether it held."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step_s)
    return cond()
