"""The shift's figures kept live: inside the table daemon, and on the floor (issue 23 items 4, 6).

`LiveShift` is fed the table's journal entries as they are published (and, at start, those
already in the journal) through a `TableReader`; after each settlement it counts the round in
the current shift's figures (`cardshoe.report.figures.Figures`, the report's own code, kept
up to date round by round) and evaluates the alarm at its sequential boundary (a look after
every round: `cardshoe.report.alarm`). A new alarm is journaled and shown on the event stream as a `daemon` entry
`hold_alarm` (with every figure behind it) and listed in `/status` `alarms` until it clears
(`hold_alarm_cleared`). `GET /shift` answers the figures and the alarms.

The current shift is the one the clock is in (`Options.shift_starts`, local time); the
figures cover rounds opened since its start.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable, Mapping

from cardshoe.report.alarm import AlarmPolicy, evaluate
from cardshoe.report.figures import Figures, Options
from cardshoe.report.shift import EntryLike, TableReader

__all__ = ["LiveShift", "shift_start_ns"]


def shift_start_ns(now_ns: int, starts: Iterable[int]) -> int:
    """The start of the shift `now_ns` falls in (local time)."""
    local = datetime.fromtimestamp(now_ns / 1e9).astimezone()
    day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    hours = sorted(starts) or [0]
    begin = None
    for h in hours:
        if local.hour >= h:
            begin = day + timedelta(hours=h)
    if begin is None:
        begin = day - timedelta(days=1) + timedelta(hours=hours[-1])
    return int(begin.timestamp() * 1e9)


class LiveShift:
    """The live figures of one table (or of what the floor reads, table by table)."""

    def __init__(self, source: str, *, policy: AlarmPolicy | None = None, options: Options | None = None,
                 clock: Callable[[], int] = time.time_ns,
                 on_alarm: Callable[[str, Mapping[str, Any]], None] | None = None) -> None:
        self.reader = TableReader(source)
        self.policy = policy or AlarmPolicy()
        self.options = options or Options()
        self.clock = clock
        self.on_alarm = on_alarm
        self._lock = threading.Lock()
        self._alarms: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._backlog: Callable[[], Iterable[EntryLike]] | None = None
        self._pending: list[EntryLike] | None = None  # published while the backlog is read
        self._figures: Figures | None = None
        self._figures_lock = threading.Lock()

    def feed(self, entry: EntryLike) -> None:
        """One entry as published; a settlement marks the figures for a new look."""
        with self._lock:
            if self._pending is not None:
                self._pending.append(entry)
                return
            self.reader.feed(entry)
        if entry.kind == "settlement":
            self._dirty.set()

    def feed_all(self, entries: Iterable[EntryLike]) -> None:
        """Entries already in the journal (at start)."""
        with self._lock:
            for e in entries:
                self.reader.feed(e)
        self._dirty.set()

    def figures(self) -> dict[str, Any]:
        """The current shift's report and its alarms."""
        now = self.clock()
        since = shift_start_ns(now, self.options.shift_starts)
        with self._figures_lock:
            fig = self._figures
            if fig is None or fig.opts.since_ns != since:  # a new shift: its own figures
                fig = self._figures = Figures(Options(
                    since_ns=since, until_ns=None, tz=self.options.tz, shift_starts=self.options.shift_starts,
                    band_z=self.options.band_z, idle_s=self.options.idle_s))
            with self._lock:  # rounds are counted once: never one whose settlement is being read
                fig.update([self.reader.shift()])
            report = fig.report()
            report["alarms"] = evaluate(fig, self.policy)
        report["policy"] = {"z": self.policy.z, "min_rounds": self.policy.min_rounds, "sides": self.policy.sides,
                            "looks": self.policy.looks}
        return report

    def look(self) -> list[dict[str, Any]]:
        """Evaluate now: raise new alarms, clear gone ones (each through `on_alarm`); the alarms standing."""
        report = self.figures()
        now = {(a["group"], a["key"], a["row"]): a for a in report["alarms"]}
        for k, a in now.items():
            a["since_ns"] = self._alarms[k].get("since_ns") if k in self._alarms else self.clock()
        raised = [a for k, a in now.items() if k not in self._alarms]
        cleared = [a for k, a in self._alarms.items() if k not in now]
        self._alarms = now
        if self.on_alarm is not None:
            for a in raised:
                self.on_alarm("hold_alarm", a)
            for a in cleared:
                self.on_alarm("hold_alarm_cleared", a)
        return list(now.values())

    def alarms(self) -> list[dict[str, Any]]:
        """The alarms standing at the last look, as `/status` lists them."""
        return [{"type": "hold", "message": a["message"], "since_ns": a.get("since_ns"), **a}
                for a in self._alarms.values()]

    # -- the looking thread -------------------------------------------------------------------
    def start(self, backlog: Callable[[], Iterable[EntryLike]] | None = None) -> None:
        """Look after each settlement, off the request path (a thread). `backlog` gives the entries
        already journaled: read in the thread, so a daemon's start does not wait for its history;
        entries published meanwhile are held and applied after it, each once."""
        if backlog is not None:
            with self._lock:
                self._pending = []
            self._backlog = backlog
            self._dirty.set()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="live-shift", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._dirty.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _load_backlog(self) -> None:
        backlog, self._backlog = self._backlog, None
        if backlog is None:
            return
        last = 0
        try:
            for e in backlog():
                with self._lock:
                    self.reader.feed(e)
                last = e.id
        finally:
            with self._lock:
                pending, self._pending = self._pending or [], None
                for e in pending:
                    if e.id > last:
                        self.reader.feed(e)

    def _run(self) -> None:
        try:
            self._load_backlog()
        except Exception:  # noqa: BLE001 - the figures must never take the table down
            import logging

            logging.getLogger(__name__).exception("the live shift figures could not read the journal")
        while not self._stop.is_set():
            self._dirty.wait()
            self._dirty.clear()
            if self._stop.is_set():
                return
            try:
                self.look()
            except Exception:  # noqa: BLE001 - the figures must never take the table down
                import logging

                logging.getLogger(__name__).exception("the live shift figures failed")
