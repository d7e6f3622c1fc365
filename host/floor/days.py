"""Gaming-day partitions of the floor's `entries` and `rounds`, and the archive of a day (issue 24 item 2).

**An entry's gaming day is its stream's.** A table stream (`NAME.JOURNAL_ID`) is given its day
once, from its first entry's `t_ns` by the floor's rule (`[floor] day_ends`, `zone`: the same
reading as a table's `[journal] day_ends`, `cardshoe.daemon.gamingday.DayPolicy.day_of`), and
every entry and round of the stream lands in that day. It never changes: the first entry's
`t_ns` is covered by the hash chain (the floor refuses that entry changed), and an entry sent
again carries its stream's day, so `ON CONFLICT DO NOTHING` on (table, entry id, day) holds it
once. A table that rolls its journal over by day (issue 25) ships a stream per day, so a day is
archived whole with its streams, a round never split across two files, and each day's
journal is the table's own day file, closed by its `day_closed` entry.

On PostgreSQL `entries` and `rounds` are range-partitioned by `day` (a partition per day,
`entries_dYYYYMMDD`); `ensure_days` makes them ahead (`cardshoe floor serve` at start, `cardshoe
floor days ahead`), and a stream whose day has none yet gets it made when its first entry
arrives. There is no DEFAULT partition: PostgreSQL cannot detach a partition CONCURRENTLY
from a table that has one, and the floor makes the day's partition rather than park an entry.
The embedded SQLite store is not partitioned (its rows carry `day` all the same).

`archive_day` detaches a day's partitions (`DETACH PARTITION ... CONCURRENTLY`: the floor goes
on ingesting and settling other days), writes them to an SQLite file a regulator can be given,
checks the file against the detached rows, records it in `floor_days`, then drops them. The
round search reads an archived day back from its file after checking its SHA-256
(`archived_rounds`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .progressive import FloorRefusal

if TYPE_CHECKING:
    from .store import FloorStore

__all__ = ["DayRule", "DayArchived", "ArchiveUnavailable", "DaysRefused", "ARCHIVE_FORMAT", "ensure_days",
           "ensure_days_tx", "days_ahead", "list_days", "archive_day", "archived_query", "archived_rounds",
           "partition_name", "ENTRY_COLUMNS", "ROUND_COLUMNS"]

ARCHIVE_FORMAT = "cardshoe.floor.day/1"
ENTRY_COLUMNS = ("table_name", "entry_id", "t_ns", "kind", "shoe", "boot", "seq", "type", "round_id", "body", "raw",
                 "received_ns", "chain", "raw_sha256", "day")
ROUND_COLUMNS = ("table_name", "round_id", "game", "opened_ns", "settled_ns", "cards", "flags", "void", "day")
_HHMM = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
_BATCH = 5000


class DayArchived(FloorRefusal):
    """Entries of a stream whose gaming day the floor has archived (or is archiving)."""


class ArchiveUnavailable(FloorRefusal):
    """An archived day's file is gone or is not the file the floor wrote (its SHA-256 differs)."""


class DaysRefused(FloorRefusal):
    """A `cardshoe floor days` command that cannot be done as asked (the message says why)."""


@dataclass(frozen=True)
class DayRule:
    """When the floor's gaming day ends: `ends` ("06:00") in `zone` (an IANA name, "UTC", or
    None for the floor host's local time)."""

    ends: str = "06:00"
    zone: str | None = None

    def checked(self) -> DayRule:
        """Self, or DaysRefused naming the setting."""
        if _HHMM.match(self.ends) is None:
            raise DaysRefused("day_ends", f"{self.ends!r} is not a time of day as HH:MM (e.g. \"06:00\")")
        self._tz()
        return self

    def _tz(self) -> tzinfo | None:
        if self.zone is None:
            return None
        if self.zone.upper() == "UTC":
            return timezone.utc
        try:
            from zoneinfo import ZoneInfo

            return ZoneInfo(self.zone)
        except Exception as exc:  # noqa: BLE001 - ZoneInfoNotFoundError, ValueError
            raise DaysRefused("zone", f"{self.zone!r} is not a time zone this host knows ({exc})") from None

    @property
    def _minutes(self) -> int:
        h, m = self.ends.split(":")
        return int(h) * 60 + int(m)

    def day_of(self, t_ns: int) -> str:
        """The gaming day (YYYY-MM-DD) the instant `t_ns` belongs to: the date it began on."""
        zone = self._tz()
        moment = datetime.fromtimestamp(t_ns / 1e9, zone) if zone is not None else \
            datetime.fromtimestamp(t_ns / 1e9).astimezone()
        return (moment.replace(tzinfo=None) - timedelta(minutes=self._minutes)).date().isoformat()

    def starts_ns(self, day: str) -> int:
        """The instant gaming day `day` begins (unix ns)."""
        d = parse_day(day)
        local = datetime(d.year, d.month, d.day) + timedelta(minutes=self._minutes)
        zone = self._tz()
        aware = local.replace(tzinfo=zone) if zone is not None else local.astimezone()
        return int(aware.timestamp()) * 1_000_000_000

    def ends_ns(self, day: str) -> int:
        """The instant gaming day `day` ends (the next one begins)."""
        return self.starts_ns((parse_day(day) + timedelta(days=1)).isoformat())

    def to_meta(self) -> str:
        return json.dumps({"ends": self.ends, "zone": self.zone}, sort_keys=True)

    @classmethod
    def from_meta(cls, text: str) -> DayRule:
        data = json.loads(text)
        return cls(str(data["ends"]), data.get("zone"))


def parse_day(text: str) -> date:
    """YYYY-MM-DD -> date; DaysRefused naming `--day` otherwise."""
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            raise ValueError
        return date.fromisoformat(text)
    except ValueError:
        raise DaysRefused("day", f"{text!r} is not a gaming day as YYYY-MM-DD") from None


def partition_name(table: str, day: str) -> str:
    """`entries_d20261127`: a day's partition of `entries` or `rounds`."""
    return f"{table}_d{parse_day(day).strftime('%Y%m%d')}"


def _next(day: str) -> str:
    return (parse_day(day) + timedelta(days=1)).isoformat()


# -- partitions ----------------------------------------------------------------------------
def _partitions(tx: Any) -> dict[str, list[str]]:
    """{parent: [partition, ...]} of entries and rounds as attached now."""
    rows = tx.q("SELECT p.relname, c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                " JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname IN ('entries', 'rounds')"
                " AND NOT i.inhdetachpending ORDER BY c.relname")
    out: dict[str, list[str]] = {"entries": [], "rounds": []}
    for parent, child in rows:
        out[str(parent)].append(str(child))
    return out


def ensure_days(store: FloorStore, days: Iterable[str]) -> list[str]:
    """Make `entries` and `rounds` partitions of each day that has none (PostgreSQL; nothing on
    SQLite); returns the days made. A day archived (or being archived) is refused."""
    if store.kind != "postgres":
        return []
    wanted = [parse_day(d).isoformat() for d in days]
    with store._tx() as tx:
        made = ensure_days_tx(tx, wanted)
    return made


def ensure_days_tx(tx: Any, days: Iterable[str]) -> list[str]:
    """`ensure_days` in the caller's transaction (PostgreSQL)."""
    made: list[str] = []
    # One maker at a time across the floor's processes (workers, `days ahead`); and never a long
    # wait behind a reader: a lock not had in 10 s fails the transaction (the table ships again).
    tx.q("SELECT pg_advisory_xact_lock(24002)")
    tx.q("SET LOCAL lock_timeout = '10s'")
    archived = {str(r[0]) for r in tx.q("SELECT day FROM floor_days")}
    held = _partitions(tx)
    for day in sorted({parse_day(d).isoformat() for d in days}):
        if day in archived:
            raise DayArchived("day", f"gaming day {day} is archived: no partition is made for it again")
        fresh = False
        for parent in ("entries", "rounds"):
            name = partition_name(parent, day)
            if name in held[parent]:
                continue
            if tx.q("SELECT to_regclass(%s)", (name,))[0][0] is not None:
                raise DaysRefused("day", f"a table {name} exists but is not a partition of {parent} (a "
                                         "detached day not archived yet: see `cardshoe floor days list`)")
            # Dates checked by parse_day: safe to write into the statement (DDL takes no parameters).
            # Made apart and attached: ATTACH takes SHARE UPDATE EXCLUSIVE on the parent, which
            # lets the floor read and write it meanwhile (CREATE ... PARTITION OF would lock it whole).
            tx.q(f"CREATE TABLE {name} (LIKE {parent} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
            tx.q(f"ALTER TABLE {parent} ATTACH PARTITION {name} FOR VALUES FROM ('{day}') TO ('{_next(day)}')")
            fresh = True
        if fresh:
            made.append(day)
    return made


def days_ahead(store: FloorStore, n: int, now_ns: int | None = None) -> list[str]:
    """Partitions for today's gaming day and the `n - 1` after it; returns the days made."""
    if n < 1:
        raise DaysRefused("days", f"{n}: at least 1 day ahead")
    today = parse_day(store.day_rule.day_of(time.time_ns() if now_ns is None else now_ns))
    return ensure_days(store, [(today + timedelta(days=k)).isoformat() for k in range(n)])


def list_days(store: FloorStore) -> dict[str, Any]:
    """The store's partitions (with their rows), its archived days, and any day detached but
    not archived yet (an archive cut short: run it again)."""
    out: dict[str, Any] = {"store": store.kind, "day_ends": store.day_rule.ends, "zone": store.day_rule.zone}
    with store._tx() as tx:
        archives = tx.q("SELECT day, state, file, digest, entries, rounds, opened_min, opened_max, t_ns FROM floor_days"
                        " ORDER BY day")
        out["archived"] = [{"day": str(r[0]), "state": r[1], "file": r[2], "sha256": r[3], "entries": r[4],
                            "rounds": r[5], "opened_min_ns": r[6], "opened_max_ns": r[7], "t_ns": r[8]}
                           for r in archives]
        if store.kind != "postgres":
            out["partitioned"] = False
            out["note"] = "the embedded SQLite store is one file, not partitioned (PostgreSQL only)"
            return out
        out["partitioned"] = True
        held = _partitions(tx)
        days: dict[str, dict[str, Any]] = {}
        for parent, names in held.items():
            for name in names:
                day = f"{name[-8:-4]}-{name[-4:-2]}-{name[-2:]}"
                rows = int(tx.q(f"SELECT COUNT(*) FROM {name}")[0][0])
                days.setdefault(day, {"day": day})[parent] = rows
        out["partitions"] = [days[d] for d in sorted(days)]
        loose = tx.q("SELECT c.relname FROM pg_class c WHERE c.relkind = 'r' AND c.relname ~ '^(entries|rounds)_d[0-9]{8}$'"
                     " AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid AND NOT i.inhdetachpending)"
                     " ORDER BY c.relname")
        out["detached"] = [str(r[0]) for r in loose]
    return out


# -- the archive -----------------------------------------------------------------------------
def _encode(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"hex": bytes(value).hex()}
    if isinstance(value, date):
        return value.isoformat()
    return value


def _line(row: Sequence[Any]) -> bytes:
    return json.dumps([_encode(v) for v in row], separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _archive_schema() -> str:
    return """
CREATE TABLE manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entries (
    table_name TEXT NOT NULL, entry_id BIGINT NOT NULL, t_ns BIGINT NOT NULL, kind TEXT NOT NULL,
    shoe BIGINT, boot BIGINT, seq BIGINT, type BIGINT, round_id TEXT, body TEXT NOT NULL, raw BYTEA,
    received_ns BIGINT NOT NULL, chain TEXT, raw_sha256 TEXT, day DATE NOT NULL, PRIMARY KEY (table_name, entry_id));
CREATE TABLE rounds (
    table_name TEXT NOT NULL, round_id TEXT NOT NULL, game TEXT, opened_ns BIGINT, settled_ns BIGINT,
    cards TEXT NOT NULL, flags TEXT NOT NULL, void BIGINT NOT NULL, day DATE NOT NULL,
    PRIMARY KEY (table_name, round_id));
CREATE INDEX rounds_opened ON rounds (opened_ns);
CREATE TABLE streams (name TEXT PRIMARY KEY, link TEXT, game TEXT, hwm BIGINT NOT NULL, chain TEXT, parent TEXT,
    base_id BIGINT NOT NULL, day DATE NOT NULL);
CREATE TABLE assignments (link TEXT NOT NULL, seq BIGINT NOT NULL, table_name TEXT NOT NULL, round_id TEXT NOT NULL,
    body TEXT NOT NULL, signature TEXT, t_ns BIGINT NOT NULL, PRIMARY KEY (link, seq));
CREATE TABLE hits (link TEXT NOT NULL, seq BIGINT NOT NULL, n BIGINT NOT NULL, table_name TEXT NOT NULL,
    round_id TEXT NOT NULL, seat BIGINT NOT NULL, line TEXT NOT NULL, amount BIGINT NOT NULL, rule TEXT NOT NULL,
    t_ns BIGINT NOT NULL, PRIMARY KEY (link, seq, n));
"""


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _open_streams(tx: Any, day: str) -> list[str]:
    """Streams of `day` whose journal has not closed its day (their last entry is not `day_closed`)."""
    out = []
    for name, hwm in tx.q("SELECT name, hwm FROM floor_tables WHERE day = %s ORDER BY name", (day,)):
        last = tx.q("SELECT kind, body FROM entries WHERE table_name = %s AND entry_id = %s AND day = %s",
                    (name, hwm, day))
        closed = False
        if last and last[0][0] == "daemon":
            try:
                closed = json.loads(last[0][1]).get("type") == "day_closed"
            except ValueError:
                closed = False
        if not closed:
            out.append(str(name))
    return out


def archive_day(store: FloorStore, day: str, to: Path, *, include_open: bool = False,
                now_ns: int | None = None) -> dict[str, Any]:
    """Detach gaming day `day`'s partitions while the floor runs, write them to the SQLite file
    `to` (plus `to.sha256`), check the file against the detached rows, record the archive, and
    drop the rows. Refused (DaysRefused): not PostgreSQL, a day not over, a day with a stream
    whose journal has not closed its day (unless `include_open`: their later entries are then
    refused), `to` existing. Cut short, it can be run again: it goes on from where it stopped."""
    day = parse_day(day).isoformat()
    t0 = time.monotonic()
    now = time.time_ns() if now_ns is None else now_ns
    if store.kind != "postgres":
        raise DaysRefused("store", "gaming-day archives are of a PostgreSQL floor; the embedded SQLite store is one "
                                   "file (back it up whole with sqlite3 .backup)")
    if store.day_rule.ends_ns(day) > now:
        raise DaysRefused("day", f"gaming day {day} is not over (it ends at {store.day_rule.ends} on the next day)")
    to = Path(to).resolve()
    names = {p: partition_name(p, day) for p in ("entries", "rounds")}
    with store._tx() as tx:
        tx.q("SELECT pg_advisory_xact_lock(24002)")  # not while a partition is being made (`ensure_days_tx`)
        got = tx.q("SELECT state, file FROM floor_days WHERE day = %s FOR UPDATE", (day,))
        if got and got[0][0] == "archived":
            raise DaysRefused("day", f"gaming day {day} is archived already, to {got[0][1]}")
        if to.exists():
            raise DaysRefused("to", f"{to} exists: the archive is written to a new file")
        if not got:
            still = _open_streams(tx, day)
            if still and not include_open:
                raise DaysRefused("day", f"gaming day {day} has streams whose journal has not closed its day: "
                                         f"{', '.join(still)} (their tables may still ship to it; archive it once "
                                         "they have, or give --include-open: anything they ship later is refused)")
            # From this commit on, ingest refuses new entries of the day's streams.
            tx.q("INSERT INTO floor_days (day, state, file, t_ns) VALUES (%s, 'archiving', %s, %s)", (day, str(to), now))
        else:
            tx.q("UPDATE floor_days SET file = %s WHERE day = %s", (str(to), day))
    store.forget_day(day)
    t_marked = time.monotonic()
    _detach(store, names)
    t_detached = time.monotonic()
    part = to.with_name(to.name + ".part")
    part.unlink(missing_ok=True)
    counts, digest, span = _write(store, day, names, part)
    t_written = time.monotonic()
    check_counts, check_digest = _recount(part)
    if (check_counts, check_digest) != (counts, digest):
        raise DaysRefused("to", f"{part} does not hold the detached rows of {day} (file {check_counts} "
                                f"{check_digest[:12]}, store {counts} {digest[:12]}): nothing dropped; the day's rows "
                                f"stay in the detached tables {', '.join(names.values())}")
    os.replace(part, to)
    sha = _file_sha256(to)
    sidecar = to.with_name(to.name + ".sha256")
    sidecar.write_text(f"{sha}  {to.name}\n")
    with store._tx() as tx:
        tx.q("UPDATE floor_days SET state = 'archived', file = %s, digest = %s, entries = %s, rounds = %s,"
             " opened_min = %s, opened_max = %s WHERE day = %s",
             (str(to), sha, counts["entries"], counts["rounds"], span[0], span[1], day))
        for name in names.values():
            tx.q(f"DROP TABLE IF EXISTS {name}")
    t_done = time.monotonic()
    return {"day": day, "file": str(to), "sha256": sha, "sha256_file": str(sidecar), "entries": counts["entries"],
            "rounds": counts["rounds"], "assignments": counts["assignments"], "hits": counts["hits"],
            "content_sha256": digest, "seconds": {"mark": round(t_marked - t0, 3),
                                                  "detach": round(t_detached - t_marked, 3),
                                                  "write": round(t_written - t_detached, 3),
                                                  "verify": round(t_done - t_written, 3),
                                                  "total": round(t_done - t0, 3)}}


def _detach(store: FloorStore, names: dict[str, str]) -> None:
    import psycopg

    # DETACH ... CONCURRENTLY runs outside a transaction block: a connection of its own.
    try:
        conn = psycopg.connect(store.target, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        from .store import StoreUnavailable

        raise StoreUnavailable(f"floor store: cannot connect: {exc}".strip()) from exc
    with conn:
        for parent, name in names.items():
            row = conn.execute("SELECT i.inhdetachpending FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                               " JOIN pg_class p ON p.oid = i.inhparent WHERE c.relname = %s AND p.relname = %s",
                               (name, parent)).fetchone()
            if row is None:
                continue  # detached already, or the day never had a partition
            if row[0]:  # a concurrent detach interrupted: finish it
                conn.execute(f"ALTER TABLE {parent} DETACH PARTITION {name} FINALIZE")
            else:
                conn.execute(f"ALTER TABLE {parent} DETACH PARTITION {name} CONCURRENTLY")


def _write(store: FloorStore, day: str, names: dict[str, str],
           part: Path) -> tuple[dict[str, int], str, tuple[int | None, int | None]]:
    """Copy the detached rows to `part`; (row counts, content digest of the rows as read from
    the store, (first, last) round opened)."""
    h = hashlib.sha256()
    counts = {"entries": 0, "rounds": 0, "assignments": 0, "hits": 0}
    span: tuple[int | None, int | None] = (None, None)
    out = sqlite3.connect(part, isolation_level=None)
    try:
        out.executescript(_archive_schema())
        out.execute("BEGIN")
        with store._tx() as tx:
            exists = {n: tx.q("SELECT to_regclass(%s)", (n,))[0][0] is not None for n in names.values()}
            for parent, columns, key in (("entries", ENTRY_COLUMNS, "table_name COLLATE \"C\", entry_id"),
                                         ("rounds", ROUND_COLUMNS, "table_name COLLATE \"C\", round_id COLLATE \"C\"")):
                h.update(parent.encode() + b"\n")
                if not exists[names[parent]]:
                    continue
                cur = tx._cur.connection.cursor(name=f"archive_{parent}")  # type: ignore[attr-defined]
                cur.itersize = _BATCH
                cur.execute(f"SELECT {', '.join(columns)} FROM {names[parent]} ORDER BY {key}")
                marks = ", ".join("?" * len(columns))
                while True:
                    rows = cur.fetchmany(_BATCH)
                    if not rows:
                        break
                    fixed = [tuple(str(v) if isinstance(v, date) else (bytes(v) if isinstance(v, memoryview) else v)
                                   for v in r) for r in rows]
                    for r in fixed:
                        h.update(_line(r))
                    out.executemany(f"INSERT INTO {parent} ({', '.join(columns)}) VALUES ({marks})", fixed)
                    counts[parent] += len(fixed)
                cur.close()
            streams = tx.q("SELECT name, link, game, hwm, chain, parent, base_id, day FROM floor_tables WHERE day = %s",
                           (day,))
            out.executemany("INSERT INTO streams VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            [(*r[:7], str(r[7])) for r in streams])
            # Copies (the rows stay on the floor): each round's pool assignment and hits, for whoever reads the day.
            for (name,) in [(r[0],) for r in streams]:
                rows = tx.q("SELECT link, seq, table_name, round_id, body, signature, t_ns FROM assignments"
                            " WHERE table_name = %s", (name,))
                out.executemany("INSERT INTO assignments VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                counts["assignments"] += len(rows)
                hits = tx.q("SELECT link, seq, n, table_name, round_id, seat, line, amount, rule, t_ns FROM hits"
                            " WHERE table_name = %s", (name,))
                out.executemany("INSERT INTO hits VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", hits)
                counts["hits"] += len(hits)
        got = out.execute("SELECT MIN(opened_ns), MAX(opened_ns) FROM rounds").fetchone()
        span = (got[0], got[1])
        digest = h.hexdigest()
        manifest = {"format": ARCHIVE_FORMAT, "day": day, "day_ends": store.day_rule.ends,
                    "zone": store.day_rule.zone or "floor host's local time", "written_ns": str(time.time_ns()),
                    "rows_entries": str(counts["entries"]), "rows_rounds": str(counts["rounds"]),
                    "rows_assignments": str(counts["assignments"]), "rows_hits": str(counts["hits"]),
                    "content_sha256": digest}
        out.executemany("INSERT INTO manifest VALUES (?, ?)", sorted(manifest.items()))
        out.execute("COMMIT")
        out.execute("PRAGMA journal_mode=DELETE")
    finally:
        out.close()
    with open(part, "rb") as f:
        os.fsync(f.fileno())
    return counts, digest, span


def _recount(path: Path) -> tuple[dict[str, int], str]:
    """Row counts and content digest read back from an archive file (not from the store)."""
    h = hashlib.sha256()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        counts = {}
        for parent, columns, key in (("entries", ENTRY_COLUMNS, "table_name, entry_id"),
                                     ("rounds", ROUND_COLUMNS, "table_name, round_id")):
            h.update(parent.encode() + b"\n")
            n = 0
            for r in conn.execute(f"SELECT {', '.join(columns)} FROM {parent} ORDER BY {key}"):
                h.update(_line(r))
                n += 1
            counts[parent] = n
        for extra in ("assignments", "hits"):
            counts[extra] = int(conn.execute(f"SELECT COUNT(*) FROM {extra}").fetchone()[0])
    finally:
        conn.close()
    return counts, h.hexdigest()


# -- reading an archived day back ------------------------------------------------------------
_verified: dict[str, tuple[int, int, int, int, str]] = {}
_verified_lock = threading.Lock()


def _check_file(day: str, path: Path, digest: str) -> None:
    """The file is the one archived (its SHA-256), or ArchiveUnavailable naming it. A file
    checked once is not hashed again until it changes (its size, inode, mtime or ctime: the
    last cannot be set back by anyone but the kernel)."""
    try:
        st = path.stat()
    except OSError as exc:
        raise ArchiveUnavailable("archive", f"gaming day {day} is archived to {path}, which cannot be read "
                                            f"({exc.strerror}): restore that file to search the day") from None
    stamp = (st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, digest)
    with _verified_lock:
        if _verified.get(str(path)) == stamp:
            return
    got = _file_sha256(path)
    if got != digest:
        raise ArchiveUnavailable("archive", f"gaming day {day}'s archive {path} is not the file the floor wrote "
                                            f"(SHA-256 {got}, recorded {digest}): it is not read")
    with _verified_lock:
        _verified[str(path)] = stamp


def archived_query(day: str, path: str, digest: str, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of the store's query `sql` (`%s` placeholders, the store's columns) run on an
    archived day's file, after checking the file is the one archived."""
    p = Path(path)
    _check_file(day, p, digest)
    conn = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute(sql.replace("%s", "?"), tuple(params)).fetchall()]
    except sqlite3.Error as exc:
        raise ArchiveUnavailable("archive", f"gaming day {day}'s archive {path} cannot be read: {exc}") from None
    finally:
        conn.close()


def archived_rounds(day: str, path: str, digest: str, where: str, params: Sequence[Any], limit: int) -> list[tuple[Any, ...]]:
    """The rounds of an archived day matching the search's `where` (the store's SQL, `%s`
    placeholders), newest first: after checking the file is the one archived."""
    return archived_query(day, path, digest, "SELECT table_name, round_id, game, opened_ns, settled_ns, cards, flags,"
                          f" void FROM rounds WHERE {where} ORDER BY opened_ns DESC, round_id DESC LIMIT %s",
                          (*params, limit))
