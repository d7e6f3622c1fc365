"""The gaming day: a journal file per table and day, rolled over by the running daemon (issue 25).

With `[journal] dir` and `day_ends = "06:00"` the table's journal is the file of the gaming
day in play, `DIR/{table}.{YYYY-MM-DD}.sqlite`, the day named by the date it began on (a day
that ends at 06:00 on the 28th is the 27th's). At the first moment after the hour when no
round is in play (`TableCore.in_play`: no round opened and not settled, no shoe with cards or
frames waiting, no NEW_SHOE unanswered), the daemon, holding the service lock so that no
frame or request falls between:

1. journals the `shoe_handover` input (`direction: "out"`) in the closing day: the shoe
   sessions, the cards they dealt so far (by index), each shoe's link window, who is signed
   on, the jackpot pool (`cardshoe.daemon.handover`);
2. writes a final checkpoint, then the closing entry (`daemon` `day_closed`) with the day's
   digest: the id and chain value of the entry before it, the head of the hash chain, so the
   day's record is sealed (`cardshoe replay` checks it);
3. closes that journal and makes its file read-only;
4. opens the next day's file: `day_opened` (naming the day before and its closing entry's id
   and chain value), the table's `setup`, and the same `shoe_handover` (`direction: "in"`),
   with the shoe's window written to its `windows`: the shoe's next card is placed in the
   new day, and a card the old day placed is recognised (a resend) or flagged, never
   placed twice.

The serial link stays open throughout (frames wait for the service lock a moment); the API,
the event stream and the page follow the new file (`/status` `journal`, `gaming_day`).

A daemon that starts opens the day's file by the clock, except when the day before was not
closed (the daemon was stopped or the power cut across the hour): it reopens that file, and
rolls over as soon as no round is in play, so a round in play at the hour finishes in its
day wherever the process was. A rollover cut short (after the handover-out, before the new
day's handover-in) is finished at the next start from what the old file holds.

**The clock.** The day follows the wall clock only while it keeps step with the monotonic
clock: a wall clock stepped (NTP correcting a bad time, someone setting it) by more than
`STEP_TOLERANCE_NS` is not followed, and the `clock_stepped` alarm stands (journaled, in
/status) until the wall clock agrees again. Meanwhile the day runs on the monotonic clock from
the last good reading: a step forward over the hour does not start a day early, a step back
does not reopen one. A start whose clock lies before the newest day file's day is refused
(`DayClockBehind`): that would be a second copy of a day already written.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import stat
import threading
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from cardshoe.journal import Journal, JournalError, JournalReader, append, canonical_json
from cardshoe.journal.days import day_closed, day_opened, handovers

if TYPE_CHECKING:
    from cardshoe.daemon.config import TableConfig
    from cardshoe.daemon.daemon import Daemon

log = logging.getLogger(__name__)

#: A wall clock that moves this far from where the monotonic clock says it should be is a step.
STEP_TOLERANCE_NS = 120 * 1_000_000_000
#: A rollover that failed is tried again after this long (monotonic).
RETRY_NS = 10 * 1_000_000_000
_HHMM = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
_DAY_FILE = re.compile(r"^(?P<table>.+)\.(?P<day>\d{4}-\d{2}-\d{2})\.sqlite$")


class DayPolicyError(ValueError):
    """`[journal] dir`, `day_ends` or `zone` cannot be used (the message names which)."""


class DayClockBehind(JournalError):
    """The host clock says a gaming day before one already written: refused at start."""


@dataclass(frozen=True)
class DayPolicy:
    """Where the day files are and when a day ends."""

    directory: Path
    ends_min: int
    """Minutes after local midnight the gaming day ends (and the next begins)."""
    ends_text: str
    zone: tzinfo | None
    """None: the host's local time."""

    def day_of(self, t_ns: int) -> date:
        """The gaming day the instant `t_ns` (unix ns) belongs to."""
        moment = datetime.fromtimestamp(t_ns / 1e9, self.zone) if self.zone is not None else \
            datetime.fromtimestamp(t_ns / 1e9).astimezone()
        return (moment.replace(tzinfo=None) - timedelta(minutes=self.ends_min)).date()

    def file(self, table: str, day: date) -> Path:
        """The journal file of `table`'s gaming day `day`."""
        return self.directory / f"{table}.{day.isoformat()}.sqlite"

    def files(self, table: str) -> list[tuple[date, Path]]:
        """`table`'s day files in the folder, oldest first."""
        out = []
        if self.directory.is_dir():
            for path in self.directory.iterdir():
                m = _DAY_FILE.match(path.name)
                if m is None or m["table"] != table:
                    continue
                try:
                    out.append((date.fromisoformat(m["day"]), path))
                except ValueError:
                    continue
        return sorted(out)


def parse_day_ends(text: str) -> int:
    """`"06:00"` -> 360 (minutes after midnight); raises `DayPolicyError`."""
    m = _HHMM.match(text)
    if m is None:
        raise DayPolicyError(f"journal.day_ends: {text!r} is not a time of day as HH:MM (e.g. \"06:00\")")
    return int(m[1]) * 60 + int(m[2])


def zone_of(name: str | None) -> tzinfo | None:
    """The zone named (`"UTC"`, an IANA name), None for the host's local time."""
    if name is None:
        return None
    if name.upper() == "UTC":
        return timezone.utc
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except Exception as exc:  # noqa: BLE001 - ZoneInfoNotFoundError, ValueError for a bad key
        raise DayPolicyError(f"journal.zone: {name!r} is not a time zone this host knows ({exc})") from None


def policy_of(config: TableConfig) -> DayPolicy | None:
    """The table's day policy, None for one journal; raises `DayPolicyError` naming the setting."""
    if config.day_ends is None and config.journal_dir is None:
        return None
    if config.day_ends is None:
        raise DayPolicyError("journal.dir: day files need journal.day_ends (the hour the gaming day ends)")
    if config.journal_dir is None:
        raise DayPolicyError("journal.day_ends: needs journal.dir (the folder of the day files)")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", config.name):
        raise DayPolicyError(f"table.name: {config.name!r} cannot name day files (letters, digits, - and _)")
    return DayPolicy(config.journal_dir, parse_day_ends(config.day_ends), config.day_ends, zone_of(config.day_zone))


# -- what a day file holds: see cardshoe.journal.days ------------------------------------
def seal_file(path: Path) -> None:
    """A closed day's file made whole and read-only: its write-ahead log folded into it (so the
    file alone holds the day, for a copy or an archive), then its write permission removed."""
    import sqlite3

    try:
        conn = sqlite3.connect(path, timeout=5)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
    except sqlite3.Error as exc:  # a reader mid-read: the -wal stays; `cardshoe days archive` copies through SQLite
        log.warning("gaming day file %s: its write-ahead log not folded in: %s", path, exc)
    make_read_only(path)


def make_read_only(path: Path) -> None:
    """A closed day's file, kept read-only (issue 25 item 4): nobody writes it again."""
    mode = path.stat().st_mode
    os.chmod(path, mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


# -- the clock -------------------------------------------------------------------------
class DayClock:
    """The time the gaming day follows: the wall clock while it keeps step with the monotonic
    clock; after a step, the monotonic clock from the last good reading (see the module doc)."""

    def __init__(self, wall: Callable[[], int], monotonic: Callable[[], int],
                 tolerance_ns: int = STEP_TOLERANCE_NS) -> None:
        self.wall, self.monotonic = wall, monotonic
        self.tolerance_ns = tolerance_ns
        self._anchor = (wall(), monotonic())
        self.step_ns: int | None = None
        """How far the wall clock is from the day's clock now; None: in step."""

    def now(self) -> int:
        """The day's clock now (unix ns); sets `step_ns` when the wall clock is out of step."""
        w, m = self.wall(), self.monotonic()
        expected = self._anchor[0] + (m - self._anchor[1])
        step = w - expected
        if abs(step) <= self.tolerance_ns:
            self._anchor = (w, m)  # a slew or small correction: followed
            self.step_ns = None
            return w
        self.step_ns = step
        return expected


# -- the rollover ------------------------------------------------------------------------
class GamingDays:
    """A daemon's gaming days: which file to open, and the rollover (see the module doc)."""

    def __init__(self, daemon: Daemon, policy: DayPolicy, monotonic: Callable[[], int]) -> None:
        self.daemon = daemon
        self.policy = policy
        self.clock = DayClock(daemon.clock, monotonic)
        self.day: date | None = None
        """The gaming day of the journal open now."""
        self.waiting: str | None = None
        """Why a due rollover waits (a round in play), for /status."""
        self.rollovers = 0
        self.finishing: list[Any] = []  # shippers of closed days still shipping
        self._retry_at: int | None = None  # monotonic: a failed rollover is tried again then
        self._lock = threading.Lock()

    # -- at start ------------------------------------------------------------------
    def choose(self) -> Path:
        """The file a starting daemon opens: the previous day's if it was not closed, else
        today's by the clock (created if new). Raises `DayClockBehind` if the clock says a day
        before the newest file's."""
        table = self.daemon.config.name
        today = self.policy.day_of(self.clock.now())
        files = self.policy.files(table)
        if files and files[-1][0] > today:
            raise DayClockBehind(
                f"journal: the host clock says gaming day {today}, but {files[-1][1]} of day {files[-1][0]} "
                "is already written: the clock is behind (stepped back?); set it right and start again")
        self.policy.directory.mkdir(parents=True, exist_ok=True)
        before = [(d, p) for d, p in files if d < today]
        if before:
            day, path = before[-1]
            with JournalReader(path) as reader:
                closed = day_closed(reader) is not None
            if not closed:
                log.warning("gaming day %s (%s) was not closed: it is reopened, and rolls over to %s as soon as "
                            "no round is in play", day, path, today)
                self.day = day
                return path
        self.day = today
        return self.policy.file(table, today)

    def previous_closed(self) -> tuple[date, Path] | None:
        """The newest closed day file before the open one, if any."""
        assert self.day is not None
        for day, path in reversed(self.policy.files(self.daemon.config.name)):
            if day < self.day:
                return day, path
        return None

    def started(self) -> None:
        """After the journal is rebuilt, before the link starts: a new day's file gets its
        opening (and the shoe the previous day handed over, if it did); a reopened previous
        day rolls over now if no round is in play."""
        d = self.daemon
        svc = d._svc()
        assert d.journal is not None and self.day is not None
        with d.journal.reader() as reader:
            opened = day_opened(reader)
        if opened is None:
            with svc.lock:
                fresh = svc.core.current is None and not svc.core.rounds
            if fresh:
                self._open_fresh()
        if self.day < self.policy.day_of(self.clock.now()):
            self.tick()

    def _open_fresh(self) -> None:
        """Open a day file no daemon opened yet: `day_opened` and, when the day before was
        closed with a handover, that handover (its rollover was cut short at a restart)."""
        d = self.daemon
        svc = d._svc()
        assert d.journal is not None and self.day is not None
        prev = self.previous_closed()
        previous = out = None
        if prev is not None:
            with JournalReader(prev[1]) as reader:
                closed = day_closed(reader)
                out = handovers(reader).get("out") if closed is not None else None
                jid = reader.meta("journal_id")
            if closed is not None:
                previous = {"day": prev[0].isoformat(), "file": prev[1].name, "journal_id": jid,
                            "closing": {"id": closed["id"], "chain": closed["chain"]}}
        with svc.lock:
            svc.record("daemon", self._opened_body(previous), publish=True)
            if out is not None and out.get("to_file") == d.config.journal.name:
                windows = [tuple(int(x) for x in w) for w in out.get("windows", [])]
                _write_windows(d.journal, windows, None)
                svc.submit_input(_handover_body(out, "in"))

    def _opened_body(self, previous: dict[str, Any] | None) -> dict[str, Any]:
        assert self.day is not None
        return {"type": "day_opened", "gaming_day": self.day.isoformat(), "day_ends": self.policy.ends_text,
                "file": self.daemon.config.journal.name, "previous": previous}

    # -- while running -----------------------------------------------------------------
    def tick(self) -> None:
        """The watch's look at the clock (and the service's, before a round opens): the
        clock-step alarm, and the rollover when due. A rollover that fails (the next day's file
        cannot be made) is the `gaming_day` alarm, tried again every `RETRY_NS`; the table plays
        on in the day it is in."""
        now = self.clock.now()
        self._clock_alarm()
        due = self.policy.day_of(now)
        if self.day is None or due <= self.day:
            return
        mono = self.clock.monotonic()
        if self._retry_at is not None and mono < self._retry_at:
            return
        with self._lock:
            try:
                self.roll(due)
            except Exception as exc:  # noqa: BLE001 - shown, journaled, tried again
                self._retry_at = mono + RETRY_NS
                self._failed(due, exc)
                return
        self._retry_at = None
        d = self.daemon
        with d._alarm_lock:
            d.alarms.pop("gaming_day", None)

    def _failed(self, due: date, exc: BaseException) -> None:
        d = self.daemon
        message = (f"gaming day {self.day} did not roll over to {due}: {type(exc).__name__}: {exc}; the table plays "
                   f"on in {d.config.journal.name}, tried again in {RETRY_NS // 10**9} s")
        log.error("%s", message)
        alarm = {"type": "gaming_day", "day": None if self.day is None else self.day.isoformat(),
                 "due": due.isoformat(), "since_ns": d.clock(), "message": message}
        if d.service is not None and d.service.failed is None:
            d.service.record("daemon", {**alarm, "type": "day_rollover_failed"}, publish=True)
        with d._alarm_lock:
            d.alarms["gaming_day"] = alarm

    def _clock_alarm(self) -> None:
        d = self.daemon
        step = self.clock.step_ns
        with d._alarm_lock:
            raised = d.alarms.get("clock_stepped")
        if step is not None and raised is None:
            hours = step / 3.6e12
            alarm = {"type": "clock_stepped", "step_ns": step, "since_ns": d.clock(),
                     "message": f"the host clock was stepped {'forward' if step > 0 else 'back'} by "
                                f"{abs(hours):.2f} h: the gaming day does not follow it (it runs on from the last "
                                "good reading); set the clock right"}
            log.error("gaming day: %s", alarm["message"])
            d._svc().record("daemon", alarm, publish=True)
            with d._alarm_lock:
                d.alarms["clock_stepped"] = alarm
        elif step is None and raised is not None:
            d._svc().record("daemon", {"type": "clock_stepped_cleared", "since_ns": raised["since_ns"]}, publish=True)
            with d._alarm_lock:
                d.alarms.pop("clock_stepped", None)

    def roll(self, to_day: date) -> bool:
        """Close the open day and open `to_day`'s file, if no round is in play (see the
        module doc); False (and `waiting` says why) when the table is busy."""
        d = self.daemon
        svc = d._svc()
        with svc.lock:
            if self.day is not None and to_day <= self.day:
                return False  # rolled over already (by the watch, or before a round opened)
            busy = svc.core.in_play()
            if busy is None and d._loading:
                busy = "a NEW_SHOE is not answered yet"
            if busy is None and any(t.is_alive() for t in d._evidence_threads):
                # A progressive hit's evidence is read from the day's journal and core: written first.
                busy = "a jackpot evidence file is being written"
            if busy is not None:
                if self.waiting != busy:
                    log.info("gaming day %s is over; the rollover waits: %s", self.day, busy)
                self.waiting = busy
                return False
            self.waiting = None
            old, old_path, from_day = d.journal, d.config.journal, self.day
            assert old is not None and from_day is not None
            new_path = self.policy.file(d.config.name, to_day)
            new = Journal(new_path, synchronous=d.synchronous,
                          holder=f"cardshoe run, table {d.config.name}, port {d.config.port}")
            try:
                with new.reader() as reader:
                    new_id, scope = reader.meta("journal_id"), reader.meta("round_scope")
                with old.reader() as reader:
                    old_id = reader.meta("journal_id")
                    windows = sorted((s, b, q) for s, (b, q) in reader.windows().items())
                base = {"action": "shoe_handover", "carried": svc.core.handover_state(),
                        "windows": [list(w) for w in windows], "from_day": from_day.isoformat(),
                        "to_day": to_day.isoformat(), "from_journal": old_id, "to_journal": new_id,
                        "from_file": old_path.name, "to_file": new_path.name}
                # As journaled (JSON): the live core takes exactly what a replay of either day takes.
                base = json.loads(canonical_json(base))
                done = svc.submit_input({**base, "direction": "out"})
                if done.refused is not None:
                    raise RuntimeError(f"handover refused: {done.refused}")
            except BaseException:
                new.close()
                raise
            svc.checkpoint()  # the day's final state: its file alone rebuilds it fast
            closing = close_day(svc, old, from_day, to_day, new_path.name, new_id)
            old.close()
            seal_file(old_path)
            log.info("gaming day %s closed (%s, head entry %d); day %s opened in %s", from_day, old_path.name,
                     closing["id"], to_day, new_path)
            # The next day: the same service, link and event stream; a new journal and core.
            from cardshoe.daemon.core import TableCore

            d.journal = new
            d.config = dataclasses.replace(d.config, journal=new_path)
            svc.journal = new
            svc.previous_core = svc.core  # its rounds stay readable (GET /rounds/{id}) until the next rollover
            svc.core = TableCore(dataclasses.replace(d.config.setup(), round_scope=scope))
            svc.since_checkpoint = 0
            self.day = to_day
            _write_windows(new, [tuple(w) for w in windows], d.epoch)
            svc.record("daemon", self._opened_body({"day": from_day.isoformat(), "file": old_path.name,
                                                    "journal_id": old_id,
                                                    "closing": {"id": closing["id"], "chain": closing["chain"]}}),
                       publish=True)
            svc.submit_input({"action": "setup", **svc.core.setup.to_json()})
            svc.submit_input({**base, "direction": "in"})
            self.rollovers += 1
        self._ship_next(old_path, new_path, new_id)
        return True

    def _ship_next(self, old_path: Path, new_path: Path, new_id: str | None) -> None:
        """The floor gets the closed day to its end, then the new day as a stream of its own."""
        d = self.daemon
        floor = d.floor
        if floor is None or new_id is None:
            return
        client = floor.for_journal(new_id)
        d.floor = client
        if d.control is not None and d.control.floor is not None:
            d.control.floor = client
        old = d.shipper
        if old is None:
            return  # at start: `start_shipping` ships the days in order
        from cardshoe.floor.shipper import Shipper

        nxt = Shipper(new_path, client)
        d.shipper = nxt
        self._in_order(old, nxt)

    def _in_order(self, old: Any, nxt: Any) -> None:
        """`old` (a closed day's shipper) ships to its end, and only then does `nxt` start."""
        old.finish()
        self.finishing.append(old)

        def after() -> None:
            while not old.finished.wait(0.5):
                if nxt._stop.is_set():
                    return
            if not nxt._stop.is_set():
                nxt.start()

        threading.Thread(target=after, name="floor-day-order", daemon=True).start()

    def start_shipping(self) -> Any:
        """At start, with a floor: the day before (if the floor may lack its end) ships first,
        then the open day, each as its own stream (`NAME.JOURNAL_ID`)."""
        d = self.daemon
        if d.floor is None or d.journal is None:
            return None
        from cardshoe.floor.shipper import Shipper

        with d.journal.reader() as reader:
            current_id = reader.meta("journal_id")
        assert current_id is not None
        d.floor = d.floor.for_journal(current_id)
        if d.control is not None and d.control.floor is not None:
            d.control.floor = d.floor
        current = Shipper(d.config.journal, d.floor)
        prev = self.previous_closed()
        if prev is None:
            current.start()
            return current
        with JournalReader(prev[1]) as reader:
            prev_id = reader.meta("journal_id")
        if prev_id is None:
            current.start()
            return current
        earlier = Shipper(prev[1], d.floor.for_journal(prev_id))
        earlier.start()
        self._in_order(earlier, current)
        return current

    def status(self) -> dict[str, Any]:
        """The gaming day for /status."""
        return {"day": None if self.day is None else self.day.isoformat(), "ends": self.policy.ends_text,
                "due": self.policy.day_of(self.clock.now()).isoformat(), "waiting": self.waiting,
                "rollovers": self.rollovers, "clock_step_ns": self.clock.step_ns}


def _handover_body(out: dict[str, Any], direction: str) -> dict[str, Any]:
    body = {k: v for k, v in out.items() if k not in ("entry", "direction")}
    return {**body, "direction": direction}


def _write_windows(journal: Journal, windows: list[tuple[int, ...]], epoch: int | None) -> None:
    """The shoe's link window (and the running epoch) into a new day's journal: a restart of
    the daemon in the new day takes up the link where the old day left it (SPEC 3.1, 3.3)."""
    def write(conn: Any) -> None:
        for shoe, boot, seq in windows:
            conn.execute("INSERT INTO windows (shoe, boot, seq) VALUES (?, ?, ?) ON CONFLICT(shoe) DO UPDATE SET "
                         "boot = excluded.boot, seq = excluded.seq WHERE (excluded.boot, excluded.seq) > "
                         "(windows.boot, windows.seq)", (shoe, boot, seq))
        if epoch is not None:
            conn.execute("INSERT INTO meta (key, value) VALUES ('epoch', ?) ON CONFLICT(key) DO UPDATE SET "
                         "value = excluded.value", (str(epoch),))

    journal.write(write)


def close_day(svc: Any, journal: Journal, day: date, next_day: date, next_file: str,
              next_journal_id: str | None) -> dict[str, Any]:
    """Write the day's closing entry (`daemon` `day_closed`): the head of its hash chain (the
    id and chain value of the entry before it), its rounds, the next day's file. Returns the
    body with the closing entry's own `id` and `chain`; published on the event stream."""
    from cardshoe.daemon.bus import Published

    core = svc.core
    t_ns = svc.clock()

    def write(conn: Any) -> tuple[int, str, str]:
        last = conn.execute("SELECT id, chain FROM entries ORDER BY id DESC LIMIT 1").fetchone()
        body = canonical_json({"type": "day_closed", "gaming_day": day.isoformat(),
                               "head": {"id": int(last[0]), "chain": str(last[1])},
                               "rounds": len(core.rounds), "settled": len(core.settlements),
                               "next_day": next_day.isoformat(), "next_file": next_file,
                               "next_journal_id": next_journal_id})
        eid = append(conn, "daemon", body, t_ns=t_ns)
        value = conn.execute("SELECT chain FROM entries WHERE id = ?", (eid,)).fetchone()[0]
        return eid, str(value), body

    eid, value, body = journal.write(write)
    svc.bus.publish([Published(eid, t_ns, "daemon", "day_closed", None, body)])
    return {"id": eid, "chain": value, "body": body}


__all__ = ["DayClock", "DayClockBehind", "DayPolicy", "DayPolicyError", "GamingDays", "RETRY_NS", "STEP_TOLERANCE_NS",
           "close_day", "day_closed", "day_opened", "handovers", "make_read_only", "parse_day_ends", "policy_of",
           "seal_file", "zone_of"]
