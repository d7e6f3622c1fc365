"""The floor store: every table's journal, the links' pools, their hits, and a round index.

Two backends behind one class, with the same SQL: PostgreSQL through psycopg 3
(`FloorStore.postgres(dsn)`) for a floor, and SQLite (`FloorStore.sqlite(path)`) for a small
room with no PostgreSQL configured. The tests run against both (tests/floor/conftest.py).

Exactly once. `ingest` inserts a table's entries with `ON CONFLICT (table_name, entry_id)
DO NOTHING` and raises the table's high-water mark in the same transaction, so a batch sent
twice (the shipper's at-least-once delivery) has its effect once, and the shipper resumes
from `high_water` after any outage.

Tamper evidence (issue 21 item 3). Every entry carries its hash chain value
(`cardshoe.journal.chain`); `ingest` takes an entry only if its ids follow the floor's mark
with no gap and its chain value follows from the floor's entry before it, and it compares the
table's head (its last entry's id and chain value) and anything sent again with what the floor
holds. A gap, a break, a journal that differs from the floor's copy, or one that ends below
the floor's mark (restored from a backup) is refused, recorded as an alarm of the table
(`floor_alarms`), and shown on the floor's page and, in the refusal, on the table's. A
restored journal goes on as a stream of its own that continues the old one from the last
entry both hold (`fork`); entries at or below that point are held once, by the old stream.

Serialization of the pool. `settle` reads the link's row `FOR UPDATE` (PostgreSQL; SQLite's
`BEGIN IMMEDIATE` takes the database's write lock first) and writes the round's assignment,
its hits and the new pool in that transaction. Two rounds of the same link (two tables' Royal
Flushes at the same moment) are therefore settled one after the other, in the order their
transactions take the lock; the link's `seq` numbers that order, and it is the order the
offline recomputation (`cardshoe.floor.audit`) walks. A round sent again is answered with its
first assignment (idempotent on (table, round)); the same round id with different content is
refused (`AssignmentConflict`). `settle` takes a round file: the API never hands it one from a
table, only one the floor rebuilt from the entries it holds (`cardshoe.floor.settle`).
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from cardshoe.cards import card_text
from cardshoe.journal import chain as journal_chain

from .days import ENTRY_COLUMNS, ROUND_COLUMNS, DayArchived, DayRule
from .progressive import Assignment, FloorRefusal, Hit, LinkSettings, PoolState, assign, prepare

__all__ = ["FloorStore", "StoreUnavailable", "StoreRefused", "GENERATION_KEY", "AssignmentConflict", "RoundWithdrawn", "UnknownLink", "ShippedEntry",
           "SCHEMA_VERSION", "JournalRefused", "UnknownTable", "stream_genesis", "Signer"]

SCHEMA_VERSION = 3
"""3: each stream's gaming day (`floor_tables.day`), carried by its `entries` and `rounds` rows,
which PostgreSQL partitions by day, and `floor_days` (the archived days; `cardshoe.floor.days`).
A schema 2 store is moved in place when the floor starts (docs/floor.md, "Gaming-day partitions").
2: entries' hash chain (`chain`, `raw_sha256`), the tables' chain and lineage (`chain`,
`parent`, `base_id`), `floor_alarms`, and each assignment's journal point and signature
(`entry`, `chain`, `signature`). A schema 1 store is upgraded in place when the floor starts."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS floor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS links (
    name TEXT PRIMARY KEY, reset BIGINT NOT NULL, rate_ppm BIGINT NOT NULL,
    pool BIGINT NOT NULL, carry BIGINT NOT NULL, seq BIGINT NOT NULL,
    opening BIGINT NOT NULL, created_ns BIGINT NOT NULL, updated_ns BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS floor_tables (
    name TEXT PRIMARY KEY, link TEXT, game TEXT, hwm BIGINT NOT NULL, seen_ns BIGINT NOT NULL,
    shoe BIGINT, current_round TEXT, open_flags TEXT NOT NULL, chain TEXT, parent TEXT,
    base_id BIGINT NOT NULL DEFAULT 0, day DATE);
CREATE TABLE IF NOT EXISTS assignments (
    link TEXT NOT NULL, seq BIGINT NOT NULL, table_name TEXT NOT NULL, round_id TEXT NOT NULL,
    digest TEXT NOT NULL, stakes BIGINT NOT NULL, contribution BIGINT NOT NULL, carry_before BIGINT NOT NULL,
    carry_after BIGINT NOT NULL, pool_before BIGINT NOT NULL, pool BIGINT NOT NULL, pool_after BIGINT NOT NULL,
    body TEXT NOT NULL, t_ns BIGINT NOT NULL, entry BIGINT, chain TEXT, signature TEXT,
    PRIMARY KEY (link, seq), UNIQUE (table_name, round_id));
CREATE TABLE IF NOT EXISTS hits (
    link TEXT NOT NULL, seq BIGINT NOT NULL, n BIGINT NOT NULL, table_name TEXT NOT NULL, round_id TEXT NOT NULL,
    seat BIGINT NOT NULL, line TEXT NOT NULL, amount BIGINT NOT NULL, rule TEXT NOT NULL, t_ns BIGINT NOT NULL,
    PRIMARY KEY (link, seq, n));
CREATE TABLE IF NOT EXISTS withdrawn (
    table_name TEXT NOT NULL, round_id TEXT NOT NULL, link TEXT NOT NULL, t_ns BIGINT NOT NULL,
    PRIMARY KEY (table_name, round_id));
CREATE TABLE IF NOT EXISTS floor_alarms (
    table_name TEXT NOT NULL, n BIGINT NOT NULL, kind TEXT NOT NULL, at_id BIGINT, message TEXT NOT NULL,
    t_ns BIGINT NOT NULL, cleared_ns BIGINT, cleared_by TEXT, PRIMARY KEY (table_name, n));
CREATE TABLE IF NOT EXISTS floor_days (
    day DATE PRIMARY KEY, state TEXT NOT NULL, file TEXT, digest TEXT, entries BIGINT, rounds BIGINT,
    opened_min BIGINT, opened_max BIGINT, t_ns BIGINT NOT NULL);
"""

#: `entries` and `rounds` (schema 3): each row carries its stream's gaming day (`cardshoe.floor.days`).
#: PostgreSQL partitions them by it, so the day is part of the key; SQLite keeps one table each.
_ENTRIES = """
CREATE TABLE IF NOT EXISTS entries (
    table_name TEXT NOT NULL, entry_id BIGINT NOT NULL, t_ns BIGINT NOT NULL, kind TEXT NOT NULL,
    shoe BIGINT, boot BIGINT, seq BIGINT, type BIGINT, round_id TEXT, body TEXT NOT NULL, raw BYTEA,
    received_ns BIGINT NOT NULL, chain TEXT, raw_sha256 TEXT, day DATE{nn}, PRIMARY KEY (table_name, entry_id{key}))
    {partition};
CREATE INDEX IF NOT EXISTS entries_round ON entries (table_name, round_id);
"""
_ROUNDS = """
CREATE TABLE IF NOT EXISTS rounds (
    table_name TEXT NOT NULL, round_id TEXT NOT NULL, game TEXT, opened_ns BIGINT, settled_ns BIGINT,
    cards TEXT NOT NULL, flags TEXT NOT NULL, void BIGINT NOT NULL, day DATE{nn}, PRIMARY KEY (table_name, round_id{key}))
    {partition};
CREATE INDEX IF NOT EXISTS rounds_opened ON rounds (opened_ns);
"""

#: Schema 1 -> 2: the columns a store made before the hash chain lacks (`floor_alarms` is
#: created by the schema above).
_UPGRADE_1_TO_2 = [
    "ALTER TABLE entries ADD COLUMN chain TEXT",
    "ALTER TABLE entries ADD COLUMN raw_sha256 TEXT",
    "ALTER TABLE floor_tables ADD COLUMN chain TEXT",
    "ALTER TABLE floor_tables ADD COLUMN parent TEXT",
    "ALTER TABLE floor_tables ADD COLUMN base_id BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE assignments ADD COLUMN entry BIGINT",
    "ALTER TABLE assignments ADD COLUMN chain TEXT",
    "ALTER TABLE assignments ADD COLUMN signature TEXT",
]

#: Signs an assignment's body (`cardshoe.floor.signing`): body -> {"algorithm", "public_key", "value"}.
Signer = Callable[[Mapping[str, Any]], dict[str, Any]]


def stream_genesis(stream: str) -> str:
    """The chain value a table stream's first entry follows: the genesis of the journal whose id
    ends the stream's key (`NAME.JOURNAL_ID`, INTERFACES.md "The table and the floor")."""
    return journal_chain.genesis(stream.rsplit(".", 1)[-1])


class StoreUnavailable(ConnectionError):
    """The store could not be reached or its transaction failed for want of it (retry later)."""


class StoreRefused(StoreUnavailable):
    """The server reached is not one this floor may write to: a standby in recovery, or an old
    primary whose failover generation is below one this process has seen (docs/floor.md,
    "Failover"). The message names the server."""


#: The floor_meta key of the failover generation (`cardshoe floor pg promote` bumps it on the
#: new primary; `cardshoe.floor.pgserver.GENERATION_KEY`).
GENERATION_KEY = "generation"

#: The highest failover generation this process has seen, by the servers' system identifier
#: (a primary and its standbys share one) and database: a server below it is an old primary.
_SEEN_GENERATION: dict[str, int] = {}
_SEEN_LOCK = threading.Lock()


class AssignmentConflict(FloorRefusal):
    """The same (table, round) sent again with different content."""


class RoundWithdrawn(FloorRefusal):
    """A round its table withdrew (to void it) before the floor ever assigned it: never assigned now."""


class UnknownLink(FloorRefusal):
    """A link the floor is not configured with."""


class UnknownTable(FloorRefusal):
    """A table stream the floor holds nothing of."""


class JournalRefused(FloorRefusal):
    """Entries the floor refuses because they do not continue what it holds of the table: a gap,
    a broken chain, a journal that differs from the floor's copy or ends below it (restored).
    `kind` is the alarm's kind; the alarm is recorded before this is raised."""

    def __init__(self, kind: str, at_id: int | None, message: str) -> None:
        super().__init__("entries", message)
        self.kind = kind
        self.at_id = at_id


@dataclass(frozen=True)
class ShippedEntry:
    """One journal entry as the shipper sends it (checkpoints' pickles are not shipped: their
    raw bytes' digest is, so the hash chain can still be checked)."""

    id: int
    t_ns: int
    kind: str
    shoe: int | None
    boot: int | None
    seq: int | None
    type: int | None
    round_id: str | None
    body: str
    raw: bytes | None
    chain: str | None = None
    raw_sha256: str | None = None
    """The raw bytes' digest when the bytes are not sent (a checkpoint)."""

    @property
    def raw_digest(self) -> str | None:
        """The digest of the raw bytes as the chain takes it."""
        return journal_chain.raw_sha256(self.raw) if self.raw is not None else self.raw_sha256

    def link(self) -> journal_chain.ChainLink:
        """The entry as the hash chain covers it."""
        return journal_chain.ChainLink(self.id, self.t_ns, self.kind, self.shoe, self.boot, self.seq, self.type,
                                       self.round_id, self.body, self.raw_digest, self.chain)

    def to_json(self) -> dict[str, Any]:
        """The wire form (raw as hex)."""
        return {"id": self.id, "t_ns": self.t_ns, "kind": self.kind, "shoe": self.shoe, "boot": self.boot,
                "seq": self.seq, "type": self.type, "round_id": self.round_id, "body": self.body,
                "raw": None if self.raw is None else self.raw.hex(), "chain": self.chain,
                "raw_sha256": self.raw_sha256}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShippedEntry:
        """From the wire form; raises ValueError naming the field."""
        def opt_int(key: str) -> int | None:
            v = data.get(key)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
                raise ValueError(f"entries[].{key}: an integer or null")
            return v

        def opt_hex64(key: str) -> str | None:
            v = data.get(key)
            if v is not None and (not isinstance(v, str) or len(v) != 64
                                  or any(c not in "0123456789abcdef" for c in v)):
                raise ValueError(f"entries[].{key}: 64 lower-case hex digits or null")
            return v

        eid, t_ns, kind, body = data.get("id"), data.get("t_ns"), data.get("kind"), data.get("body")
        if not isinstance(eid, int) or isinstance(eid, bool) or eid < 1:
            raise ValueError("entries[].id: a positive integer")
        if not isinstance(t_ns, int) or isinstance(t_ns, bool):
            raise ValueError("entries[].t_ns: an integer")
        if not isinstance(kind, str) or not kind:
            raise ValueError("entries[].kind: text")
        if not isinstance(body, str):
            raise ValueError("entries[].body: text")
        rid, raw = data.get("round_id"), data.get("raw")
        if rid is not None and not isinstance(rid, str):
            raise ValueError("entries[].round_id: text or null")
        if raw is not None and not isinstance(raw, str):
            raise ValueError("entries[].raw: hex text or null")
        try:
            raw_bytes = None if raw is None else bytes.fromhex(raw)
        except ValueError:
            raise ValueError("entries[].raw: not hex") from None
        digest = opt_hex64("raw_sha256")
        if digest is not None and raw_bytes is not None:
            raise ValueError("entries[].raw_sha256: only for an entry whose raw bytes are not sent")
        return cls(eid, t_ns, kind, opt_int("shoe"), opt_int("boot"), opt_int("seq"), opt_int("type"), rid, body,
                   raw_bytes, opt_hex64("chain"), digest)


class _Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def fetchone(self) -> Any: ...


class _Tx:
    """One transaction: `q(sql, params)` with `%s` placeholders on either backend."""

    def __init__(self, cur: _Cursor, sqlite_style: bool) -> None:
        self._cur = cur
        self._sqlite = sqlite_style

    def q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if self._sqlite:
            sql = sql.replace("%s", "?").replace(" FOR UPDATE", "").replace("GREATEST(", "MAX(")
        self._cur.execute(sql, tuple(params))
        if getattr(self._cur, "description", None) is None:
            return []  # a statement that returns no rows
        return [tuple(r) for r in self._cur.fetchall()]

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if self._sqlite:
            sql = sql.replace("%s", "?")
            self._cur.executemany(sql, rows)  # type: ignore[attr-defined]
        else:
            self._cur.executemany(sql, rows)  # type: ignore[attr-defined]


class FloorStore:
    """The floor's database. Thread-safe: each transaction takes a connection of its own
    (PostgreSQL) or the one connection under a lock (SQLite)."""

    def __init__(self, kind: str, target: str, *, pool_size: int = 8, day_rule: DayRule | None = None,
                 read_only: bool = False) -> None:
        self.kind = kind
        self.target = target
        self.read_only = read_only
        self.server: tuple[str, ...] | None = None
        """The PostgreSQL server the last connection reached (system id, address, start time)."""
        self.server_epoch = 0
        """Counts the changes of `server` (a failover, a restart): caches of the store's
        content (the Rebuilder's cores, the report's readers) are dropped when it moves, since
        what one server showed (a commit a crashed primary never sent its standby) the next
        may not hold."""
        self._sqlite_lock = threading.Lock()
        self._sqlite_conn: sqlite3.Connection | None = None
        self._pg: queue.LifoQueue[Any] = queue.LifoQueue()
        self._pg_made = 0
        self._pg_max = pool_size
        self._pg_lock = threading.Lock()
        self._links: dict[str, LinkSettings] = {}
        self.day_rule = DayRule()
        """The floor's gaming day (`[floor] day_ends`, `zone`), kept in `floor_meta` (`set_day_rule`)."""
        self._days_ready: set[str] = set()
        if read_only:
            self._check_schema()
            return
        with self._tx() as tx:
            if kind == "postgres":
                # The floor's processes open the store together (workers): one at a time here,
                # so a schema made or moved by one is seen whole by the next.
                tx.q("SELECT pg_advisory_xact_lock(24001)")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    tx.q(statement)
            row = tx.q("SELECT value FROM floor_meta WHERE key = %s", ("day_rule",))
            if row:
                self.day_rule = DayRule.from_meta(str(row[0][0]))
            if day_rule is not None and day_rule != self.day_rule:
                # The floor's file names the rule: kept before any stream (or a store moved to
                # schema 3 below) is given its day by it.
                day_rule.checked()
                tx.q("DELETE FROM floor_meta WHERE key = %s", ("day_rule",))
                tx.q("INSERT INTO floor_meta (key, value) VALUES (%s, %s)", ("day_rule", day_rule.to_meta()))
                self.day_rule = day_rule
            row = tx.q("SELECT value FROM floor_meta WHERE key = %s", ("schema",))
            if row and row[0][0] not in ("1", "2", str(SCHEMA_VERSION)):
                raise StoreUnavailable(f"floor store {target}: schema {row[0][0]}, this floor reads {SCHEMA_VERSION}")
            self._create_entries_rounds(tx)
            if not row:
                tx.q("INSERT INTO floor_meta (key, value) VALUES (%s, %s)", ("schema", str(SCHEMA_VERSION)))
                return
            if row[0][0] == "1":
                # Entries, tables and assignments held before the chain keep NULL in the new
                # columns: a table's next entry is then taken as the chain's anchor (`ingest`).
                for statement in _UPGRADE_1_TO_2:
                    tx.q(statement)
            if row[0][0] in ("1", "2"):
                self._upgrade_to_days(tx)
                tx.q("UPDATE floor_meta SET value = %s WHERE key = %s", (str(SCHEMA_VERSION), "schema"))

    def _create_entries_rounds(self, tx: _Tx) -> None:
        pg = self.kind == "postgres"
        for text in (_ENTRIES, _ROUNDS):
            sql = text.format(nn=" NOT NULL" if pg else "", key=", day" if pg else "",
                              partition="PARTITION BY RANGE (day)" if pg else "")
            for statement in sql.split(";"):
                if statement.strip():
                    tx.q(statement)

    def _columns(self, tx: _Tx, table: str) -> set[str]:
        if self.kind == "sqlite":
            return {str(r[1]) for r in tx.q(f"PRAGMA table_info({table})")}
        return {str(r[0]) for r in tx.q("SELECT column_name FROM information_schema.columns WHERE table_name = %s"
                                        " AND table_schema = current_schema()", (table,))}

    def _upgrade_to_days(self, tx: _Tx) -> None:
        """Schema 2 -> 3, in the transaction that opens the store (nothing changes if it fails):
        every stream is given its gaming day (its first entry's, by the floor's rule), and on
        PostgreSQL `entries` and `rounds` are made again partitioned by day, every row copied
        with its stream's day and counted before the old tables are dropped."""
        from .days import ensure_days_tx

        if "day" not in self._columns(tx, "floor_tables"):
            tx.q("ALTER TABLE floor_tables ADD COLUMN day DATE")
        firsts = tx.q("SELECT t.name, MIN(e.t_ns) FROM floor_tables t JOIN entries e ON e.table_name = t.name"
                      " WHERE t.day IS NULL GROUP BY t.name")
        tx.many("UPDATE floor_tables SET day = %s WHERE name = %s",
                [(self.day_rule.day_of(int(t_ns)), name) for name, t_ns in firsts])
        if self.kind == "sqlite":
            for table in ("entries", "rounds"):
                if "day" not in self._columns(tx, table):
                    tx.q(f"ALTER TABLE {table} ADD COLUMN day DATE")
                tx.q(f"UPDATE {table} SET day = (SELECT day FROM floor_tables WHERE name = {table}.table_name)"
                     " WHERE day IS NULL")
            return
        moved = []
        for table, indexes in (("entries", ("pkey", "round")), ("rounds", ("pkey", "opened"))):
            if tx.q("SELECT relkind FROM pg_class WHERE relname = %s AND relnamespace = current_schema()::regnamespace",
                    (table,))[0][0] == "p":
                continue
            tx.q(f"ALTER TABLE {table} RENAME TO {table}_schema2")
            for index in indexes:
                tx.q(f"ALTER INDEX IF EXISTS {table}_{index} RENAME TO {table}_schema2_{index}")
            moved.append(table)
        self._create_entries_rounds(tx)
        ensure_days_tx(tx, [str(r[0]) for r in tx.q("SELECT DISTINCT day FROM floor_tables WHERE day IS NOT NULL")])
        for table in moved:
            columns = [c for c in (ENTRY_COLUMNS if table == "entries" else ROUND_COLUMNS) if c != "day"]
            tx.q(f"INSERT INTO {table} ({', '.join(columns)}, day) SELECT {', '.join('o.' + c for c in columns)},"
                 f" t.day FROM {table}_schema2 o JOIN floor_tables t ON t.name = o.table_name")
            old, new = (int(tx.q(f"SELECT COUNT(*) FROM {t}")[0][0]) for t in (f"{table}_schema2", table))
            if old != new:
                raise StoreUnavailable(f"floor store {self.target}: moving {table} into gaming-day partitions copied "
                                       f"{new} of {old} rows; nothing was changed (the store is left at schema 2)")
            tx.q(f"DROP TABLE {table}_schema2")

    def set_day_rule(self, rule: DayRule) -> None:
        """The floor's gaming day (from its file), kept in the store: every process of the floor
        (workers, `cardshoe floor days`) then reads the same. Streams already given a day keep it."""
        rule.checked()
        with self._tx() as tx:
            held = tx.q("SELECT value FROM floor_meta WHERE key = %s", ("day_rule",))
            if held and held[0][0] == rule.to_meta():
                pass  # unchanged: nothing written (a floor pointed at a standby reads only)
            elif held:
                tx.q("UPDATE floor_meta SET value = %s WHERE key = %s", (rule.to_meta(), "day_rule"))
            else:
                tx.q("INSERT INTO floor_meta (key, value) VALUES (%s, %s)", ("day_rule", rule.to_meta()))
        self.day_rule = rule

    def forget_day(self, day: str) -> None:
        """A day whose partition is being detached: ingest checks it in the store again."""
        self._days_ready.discard(day)

    @classmethod
    def sqlite(cls, path: str | Path, *, day_rule: DayRule | None = None) -> FloorStore:
        """An embedded store in one SQLite file (a small room). `day_rule`: the floor's gaming
        day, kept in the store (None: the store's, 06:00 local for a new one)."""
        return cls("sqlite", str(path), day_rule=day_rule)

    @classmethod
    def postgres(cls, dsn: str, *, pool_size: int = 8, day_rule: DayRule | None = None,
                 read_only: bool = False) -> FloorStore:
        """A store on a PostgreSQL server (`dsn`: a libpq connection string or URL; several
        hosts with `target_session_attrs=read-write` follow the primary through a failover).
        `read_only`: a hot standby's copy, read and never written (no table is created, every
        transaction is read-only); otherwise a standby is refused (StoreRefused)."""
        return cls("postgres", dsn, pool_size=pool_size, day_rule=day_rule, read_only=read_only)

    def _check_schema(self) -> None:
        import psycopg

        try:
            with self._tx() as tx:
                row = tx.q("SELECT value FROM floor_meta WHERE key = %s", ("schema",))
                rule = tx.q("SELECT value FROM floor_meta WHERE key = %s", ("day_rule",))
        except psycopg.errors.UndefinedTable:
            raise StoreUnavailable(f"floor store {self.target}: no floor store there (no floor_meta): a read-only "
                                   "floor reads a store a floor on the primary made") from None
        if not row or row[0][0] != str(SCHEMA_VERSION):
            raise StoreUnavailable(f"floor store {self.target}: schema {row[0][0] if row else 'none'}, this floor "
                                   f"reads {SCHEMA_VERSION}")
        if rule:
            self.day_rule = DayRule.from_meta(str(rule[0][0]))  # the primary's floor keeps it

    # -- connections -------------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[_Tx]:
        if self.kind == "sqlite":
            with self._sqlite_lock:
                if self._sqlite_conn is None:
                    Path(self.target).parent.mkdir(parents=True, exist_ok=True)
                    conn = sqlite3.connect(self.target, isolation_level=None, check_same_thread=False)
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=FULL")
                    self._sqlite_conn = conn
                conn = self._sqlite_conn
                cur = conn.cursor()
                # IMMEDIATE: the write lock first, so a transaction never upgrades (and deadlocks).
                cur.execute("BEGIN IMMEDIATE")
                try:
                    yield _Tx(cur, True)
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
                cur.execute("COMMIT")
            return
        import psycopg

        conn = self._pg_take()
        try:
            with conn.transaction():
                with conn.cursor() as cur:
                    yield _Tx(cur, False)
        except psycopg.OperationalError as exc:
            conn.close()  # a broken connection is not put back
            with self._pg_lock:
                self._pg_made -= 1
            self._drop_idle()  # a restarted server broke them all: the next transaction connects afresh
            raise StoreUnavailable(f"floor store: {exc}".strip()) from exc
        except BaseException:
            self._pg_give(conn)
            raise
        self._pg_give(conn)

    def _pg_take(self) -> Any:
        import psycopg

        try:
            return self._pg.get_nowait()
        except queue.Empty:
            pass
        with self._pg_lock:
            make = self._pg_made < self._pg_max
            if make:
                self._pg_made += 1
        if not make:
            try:
                return self._pg.get(timeout=30)
            except queue.Empty:
                raise StoreUnavailable("floor store: every connection busy for 30 s") from None
        try:
            return self._pg_connect()
        except StoreUnavailable:
            with self._pg_lock:
                self._pg_made -= 1
            raise
        except psycopg.Error as exc:
            with self._pg_lock:
                self._pg_made -= 1
            raise StoreUnavailable(f"floor store: cannot connect: {exc}".strip()) from exc

    def _pg_connect(self) -> Any:
        """A connection to a server this floor may use (`_check_server`). With several hosts in
        the DSN, a server refused (an old primary started again by hand) does not end the
        search: each host is tried in turn, as libpq does, with the same checks."""
        import psycopg
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        conn = psycopg.connect(self.target, autocommit=True, connect_timeout=5)
        try:
            self._check_server(conn)
            return conn
        except StoreRefused as exc:
            conn.close()
            refused = exc
        params = conninfo_to_dict(self.target)
        hosts = str(params.get("host") or "").split(",")
        ports = str(params.get("port") or "").split(",")
        for i, host in enumerate(hosts if len(hosts) > 1 else []):
            port = ports[i] if len(ports) == len(hosts) else (ports[0] if ports != [""] else None)
            one = make_conninfo("", **{**params, "host": host, **({"port": port} if port else {})})
            try:
                conn = psycopg.connect(one, autocommit=True, connect_timeout=5)
            except psycopg.Error:
                continue
            try:
                self._check_server(conn)
                return conn
            except StoreRefused:
                conn.close()
            except BaseException:
                conn.close()
                raise
        raise refused

    def _check_server(self, conn: Any) -> None:
        """Refuse a server this floor may not use: a standby in recovery for a floor that
        writes (`pg_is_in_recovery()`), or one whose failover generation (floor_meta) is below
        the highest this process has seen of its cluster (an old primary, fenced file removed
        and started by hand, which lost what the new primary took since). Notes the server, so
        caches are dropped when it changes; a read-only floor's connection is made read-only."""
        import psycopg

        where = f"{conn.info.host}:{conn.info.port}"
        in_recovery, started = conn.execute("SELECT pg_is_in_recovery(), pg_postmaster_start_time()::text").fetchone()
        try:
            system = str(conn.execute("SELECT system_identifier FROM pg_control_system()").fetchone()[0])
        except psycopg.Error:  # a role without the right to read it: the DSN names the cluster
            system = "dsn:" + self.target
        system += "/" + str(conn.info.dbname)
        generation = 1
        if conn.execute("SELECT to_regclass('floor_meta')").fetchone()[0] is not None:
            row = conn.execute("SELECT value FROM floor_meta WHERE key = %s", (GENERATION_KEY,)).fetchone()
            generation = int(row[0]) if row and str(row[0]).isdigit() else 1
        if self.read_only:
            conn.execute("SET default_transaction_read_only = on")
        else:
            if in_recovery:
                raise StoreRefused(f"floor store: the server at {where} is a standby in recovery "
                                   "(pg_is_in_recovery()): a floor that writes needs the primary (give the pair's "
                                   "writer DSN), or set [floor] read_only = true to serve reads from it")
            with _SEEN_LOCK:
                seen = _SEEN_GENERATION.get(system, 0)
                if generation < seen:
                    raise StoreRefused(f"floor store: the server at {where} is at failover generation {generation}, "
                                       f"below generation {seen} this floor process has seen: an old primary after "
                                       "a failover, refused as a writer (docs/floor.md, \"Failover\")")
                _SEEN_GENERATION[system] = generation
        server = (system, where, str(started))
        with self._pg_lock:
            if server != self.server:
                self.server = server
                self.server_epoch += 1

    def _drop_idle(self) -> None:
        while True:
            try:
                idle = self._pg.get_nowait()
            except queue.Empty:
                return
            idle.close()
            with self._pg_lock:
                self._pg_made -= 1

    def _pg_give(self, conn: Any) -> None:
        if conn.closed:
            with self._pg_lock:
                self._pg_made -= 1
            return
        self._pg.put(conn)

    def close(self) -> None:
        """Close every connection."""
        if self._sqlite_conn is not None:
            with self._sqlite_lock:
                self._sqlite_conn.close()
                self._sqlite_conn = None
        self._drop_idle()

    # -- links -------------------------------------------------------------------------
    def configure_link(self, link: LinkSettings, now_ns: int | None = None) -> None:
        """Create the link with its opening pool, or update its reset and rate (the pool stays)."""
        link.checked()
        t = time.time_ns() if now_ns is None else now_ns
        with self._tx() as tx:
            row = tx.q("SELECT name FROM links WHERE name = %s FOR UPDATE", (link.name,))
            if row:
                tx.q("UPDATE links SET reset = %s, rate_ppm = %s, updated_ns = %s WHERE name = %s",
                     (link.reset, link.rate_ppm, t, link.name))
            else:
                tx.q("INSERT INTO links (name, reset, rate_ppm, pool, carry, seq, opening, created_ns, updated_ns)"
                     " VALUES (%s, %s, %s, %s, 0, 0, %s, %s, %s)",
                     (link.name, link.reset, link.rate_ppm, link.opening_pool, link.opening_pool, t, t))
        self._links[link.name] = link

    def links(self) -> list[dict[str, Any]]:
        """Every link with its pool as it stands."""
        with self._tx() as tx:
            rows = tx.q("SELECT name, reset, rate_ppm, pool, carry, seq, opening, updated_ns FROM links ORDER BY name")
        return [{"link": r[0], "reset": r[1], "rate_ppm": r[2], "pool": r[3], "carry": r[4], "rounds": r[5],
                 "opening": r[6], "updated_ns": r[7]} for r in rows]

    def pool(self, link: str) -> dict[str, Any]:
        """One link's pool as displayed (raises UnknownLink)."""
        for row in self.links():
            if row["link"] == link:
                return row
        raise UnknownLink("link", f"no link {link!r} on this floor")

    def settle(self, link_name: str, table: str, round_json: Mapping[str, Any], now_ns: int | None = None, *,
               entry: int | None = None, chain: str | None = None, signer: Signer | None = None) -> Assignment:
        """Assign the round its pool and apply its contribution and hits, serialized per link.

        `round_json` is a round file the floor rebuilt from `table`'s entries up to `entry`
        (whose chain value is `chain`; `cardshoe.floor.settle`), never one a table sent.
        `signer` signs the assignment in the same transaction. Idempotent on (table, round id):
        the same round again gets its first assignment back; a different one under that id is
        refused (`AssignmentConflict`)."""
        t = time.time_ns() if now_ns is None else now_ns
        # The settlement engine runs here, outside the link's lock; under it, a round that does
        # not pay from the pool costs arithmetic only (`cardshoe bench floor` measures the lock).
        with self._tx() as tx:
            row = tx.q("SELECT reset, rate_ppm FROM links WHERE name = %s", (link_name,))
        if not row:
            raise UnknownLink("link", f"no link {link_name!r} on this floor")
        prepared = prepare(LinkSettings(link_name, int(row[0][0]), int(row[0][1])), round_json)
        with self._tx() as tx:
            row = tx.q("SELECT reset, rate_ppm, pool, carry, seq FROM links WHERE name = %s FOR UPDATE",
                       (link_name,))
            if not row:
                raise UnknownLink("link", f"no link {link_name!r} on this floor")
            reset, rate, pool, carry, seq = (int(x) for x in row[0])
            settings = LinkSettings(link_name, reset, rate)
            rid = round_json.get("round_id")
            if entry is not None and chain is not None and self.kind == "postgres":
                # The round was rebuilt from entries read earlier, perhaps on a server that has
                # since gone (a failover): the server committing this must hold the same journal
                # up to `entry`, which the chain value at `entry` pins.
                if self._chains(tx, table, [entry]).get(entry) != chain:
                    raise StoreUnavailable(f"floor store: the server does not hold entry {entry} of {table} as the "
                                           "round was rebuilt from (it changed during the settlement): ask again")
            before = tx.q("SELECT body, signature FROM assignments WHERE table_name = %s AND round_id = %s",
                          (table, str(rid)))
            made = assign(settings, PoolState(pool, carry, seq), table, round_json, prepared)
            if before:
                old = _assignment(json.loads(before[0][0]), before[0][1])
                if old.digest != made.digest:
                    raise AssignmentConflict("round", f"round {rid} of table {table} was assigned a pool already "
                                                      "with different content; a supervisor must look at it")
                return old
            if tx.q("SELECT link FROM withdrawn WHERE table_name = %s AND round_id = %s", (table, str(rid))):
                raise RoundWithdrawn("round", f"round {rid} of table {table} was withdrawn by its table (to be "
                                              "voided) before the floor assigned it a pool: it is never assigned now")
            made = replace(made, entry=entry, chain=chain)
            if signer is not None:
                made = replace(made, signature=signer(made.signed_body()))
            tx.q("UPDATE links SET pool = %s, carry = %s, seq = %s, updated_ns = %s WHERE name = %s",
                 (made.pool_after, made.carry_after, made.seq, t, link_name))
            tx.q("INSERT INTO assignments (link, seq, table_name, round_id, digest, stakes, contribution, carry_before,"
                 " carry_after, pool_before, pool, pool_after, body, t_ns, entry, chain, signature)"
                 " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                 (link_name, made.seq, table, made.round_id, made.digest, made.stakes, made.contribution,
                  made.carry_before, made.carry_after, made.pool_before, made.pool, made.pool_after,
                  json.dumps(made.to_json(), sort_keys=True), t, entry, chain,
                  None if made.signature is None else json.dumps(made.signature, sort_keys=True)))
            for n, hit in enumerate(made.hits, 1):
                tx.q("INSERT INTO hits (link, seq, n, table_name, round_id, seat, line, amount, rule, t_ns)"
                     " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                     (link_name, made.seq, n, table, made.round_id, hit.seat, hit.line, hit.amount, hit.rule, t))
        return made

    def assignment(self, table: str, round_id: str) -> Assignment | None:
        """The floor's assignment of `table`'s round `round_id`, or None."""
        with self._tx() as tx:
            row = tx.q("SELECT body, signature FROM assignments WHERE table_name = %s AND round_id = %s",
                       (table, round_id))
        return _assignment(json.loads(row[0][0]), row[0][1]) if row else None

    def withdraw(self, link_name: str, table: str, round_id: str, now_ns: int | None = None) -> Assignment | None:
        """The table asks to void a round it sent for settlement but heard no answer about.

        Serialized with `settle` on the link's row: if the round was assigned, its assignment
        (the table must settle it with that; it is not voided); if not, the round is recorded
        as withdrawn, so a settlement of it still on its way is refused (`RoundWithdrawn`), and
        None (the table may void it). Idempotent: asking again gets the same answer."""
        t = time.time_ns() if now_ns is None else now_ns
        with self._tx() as tx:
            if not tx.q("SELECT seq FROM links WHERE name = %s FOR UPDATE", (link_name,)):
                raise UnknownLink("link", f"no link {link_name!r} on this floor")
            held = tx.q("SELECT body, signature FROM assignments WHERE table_name = %s AND round_id = %s",
                        (table, round_id))
            if held:
                return _assignment(json.loads(held[0][0]), held[0][1])
            if not tx.q("SELECT link FROM withdrawn WHERE table_name = %s AND round_id = %s", (table, round_id)):
                tx.q("INSERT INTO withdrawn (table_name, round_id, link, t_ns) VALUES (%s, %s, %s, %s)",
                     (table, round_id, link_name, t))
        return None

    def history(self, link: str, limit: int = 1000) -> list[dict[str, Any]]:
        """The link's assignments, oldest first: every pool movement with its round."""
        with self._tx() as tx:
            rows = tx.q("SELECT body, t_ns FROM assignments WHERE link = %s ORDER BY seq LIMIT %s", (link, limit))
        return [{**json.loads(r[0]), "t_ns": r[1]} for r in rows]

    def assignment_rows(self, link: str) -> list[dict[str, Any]]:
        """The link's assignments as stored, oldest first, for the audit: each body, with the
        row's own columns (`_row`) and the signed assignment (`_signed`, None if unsigned)."""
        from .progressive import ASSIGNMENT_FORMAT

        columns = ("seq", "table_name", "round_id", "digest", "stakes", "contribution", "carry_before", "carry_after",
                   "pool_before", "pool", "pool_after", "entry", "chain")
        with self._tx() as tx:
            rows = tx.q(f"SELECT body, signature, {', '.join(columns)} FROM assignments WHERE link = %s ORDER BY seq",
                        (link,))
        out = []
        for r in rows:
            body = json.loads(r[0])
            signature = None if r[1] is None else json.loads(r[1])
            out.append({**body, "_row": dict(zip(columns, r[2:])),
                        "_signed": None if signature is None else {"assignment": {"format": ASSIGNMENT_FORMAT, **body},
                                                                   "signature": signature}})
        return out

    def hits(self, link: str | None = None) -> list[dict[str, Any]]:
        """Every jackpot hit (a payment from a pool), in the order the floor paid them."""
        sql = "SELECT link, seq, n, table_name, round_id, seat, line, amount, rule, t_ns FROM hits"
        params: tuple[Any, ...] = ()
        if link is not None:
            sql += " WHERE link = %s"
            params = (link,)
        with self._tx() as tx:
            rows = tx.q(sql + " ORDER BY link, seq, n", params)
            # Each hit with its evidence: the table's `evidence_written` entry for the round
            # (the signed file's path, SHA-256 and public key), once the table has shipped it.
            evidence: dict[tuple[str, str], dict[str, Any]] = {}
            for table in sorted({str(r[3]) for r in rows}):
                for (body,) in tx.q("SELECT body FROM entries WHERE table_name = %s AND kind = 'daemon'"
                                    " AND body LIKE %s ORDER BY entry_id", (table, '%"evidence_written"%')):
                    data = json.loads(body)
                    if data.get("type") == "evidence_written" and isinstance(data.get("round_id"), str):
                        evidence[(table, data["round_id"])] = {k: data.get(k) for k in
                                                               ("path", "sha256", "public_key", "reason")}
        return [{"link": r[0], "seq": r[1], "n": r[2], "table": r[3], "round_id": r[4], "seat": r[5], "line": r[6],
                 "amount": r[7], "rule": r[8], "t_ns": r[9], "evidence": evidence.get((str(r[3]), str(r[4])))}
                for r in rows]

    # -- journal shipping --------------------------------------------------------------
    def high_water(self, table: str) -> int:
        """The highest entry id of `table` the floor holds (0: none); the shipper resumes after it."""
        with self._tx() as tx:
            row = tx.q("SELECT hwm FROM floor_tables WHERE name = %s", (table,))
        return int(row[0][0]) if row else 0

    def stream(self, table: str) -> dict[str, Any] | None:
        """What the floor holds of a table stream: `high_water`, `chain` (the chain value there),
        `parent` and `base_id` (a restored journal's stream), or None when it holds nothing."""
        with self._tx() as tx:
            row = tx.q("SELECT hwm, chain, parent, base_id, link, game FROM floor_tables WHERE name = %s", (table,))
        if not row:
            return None
        r = row[0]
        return {"table": table, "high_water": int(r[0]), "chain": r[1], "parent": r[2], "base_id": int(r[3]),
                "link": r[4], "game": r[5]}

    def ingest(self, table: str, entries: Sequence[ShippedEntry], *, link: str | None = None,
               game: str | None = None, head: tuple[int, str | None] | None = None,
               now_ns: int | None = None) -> int:
        """Store a batch of `table`'s entries (each once, whatever is resent) and index its
        rounds; returns the table's high-water mark after it.

        The batch must continue what the floor holds: ids from the mark on with no gap, each
        entry's chain value following from the one before, anything sent again equal to the
        floor's copy, and the table's `head` (its journal's last id and chain value) agreeing
        with the floor's entry there. Otherwise nothing of the batch is stored, an alarm is
        recorded and `JournalRefused` raised (docs/floor.md, "Tamper-evident journals")."""
        t = time.time_ns() if now_ns is None else now_ns
        for attempt in (1, 2):
            try:
                with self._tx() as tx:
                    return self._ingest(tx, table, entries, link, game, head, t)
            except JournalRefused as exc:
                self.raise_alarm(table, exc.kind, exc.at_id, exc.message, now_ns=t)
                raise
            except _DayMissing as missing:
                if attempt == 2:
                    raise StoreUnavailable(f"floor store: gaming day {missing.day}'s partition is not there") from None
                # The stream's day has no partition yet (not made ahead): made, then the batch again.
                from .days import ensure_days

                ensure_days(self, [missing.day])
        raise AssertionError("unreachable")

    def _ingest(self, tx: _Tx, table: str, entries: Sequence[ShippedEntry], link: str | None, game: str | None,
                head: tuple[int, str | None] | None, t: int) -> int:
        row = tx.q("SELECT hwm, shoe, current_round, open_flags, chain, day FROM floor_tables WHERE name = %s"
                   " FOR UPDATE", (table,))
        day: str | None = None
        if not row:
            if not entries and head is None:
                return 0  # a heartbeat of a table that has written nothing yet
            # A new stream's first batch may reach two API processes at once (its shipper's and
            # its settlement's tail): one inserts the row, the other waits on it and goes on as
            # if it had been there (FOR UPDATE below), instead of failing on the primary key.
            tx.q("INSERT INTO floor_tables (name, link, game, hwm, seen_ns, shoe, current_round, open_flags, chain,"
                 " base_id) VALUES (%s, %s, %s, 0, %s, NULL, NULL, %s, %s, 0) ON CONFLICT (name) DO NOTHING",
                 (table, link, game, t, "{}", stream_genesis(table)))
            row = tx.q("SELECT hwm, shoe, current_round, open_flags, chain, day FROM floor_tables WHERE name = %s"
                       " FOR UPDATE", (table,))
        hwm, shoe, current, flags_text, prev = int(row[0][0]), row[0][1], row[0][2], str(row[0][3]), row[0][4]
        day = None if row[0][5] is None else str(row[0][5])
        # Sent again (a lost answer): each must be the floor's copy, or the journal has changed.
        again = sorted((e for e in entries if e.id <= hwm), key=lambda e: e.id)
        if again:
            held = self._chains(tx, table, [e.id for e in again])
            lower = head is not None and head[0] < hwm
            for e in again:
                if held.get(e.id) is not None and e.chain != held[e.id]:
                    raise JournalRefused("restored" if lower else "diverged", e.id,
                                         f"table {table}: entry {e.id} as sent now differs from the copy the floor "
                                         + (f"holds, and the floor holds entries up to {hwm}: the journal was "
                                            "restored from a backup" if lower else
                                            "holds: the journal was edited or restored from a backup")
                                         + "; its entries are refused and none of its rounds is settled until it is "
                                           "restarted with `cardshoe run --journal-restored` (docs/floor.md, \"A "
                                           "restored journal\")")
        # Entries at or below the high-water mark are held already: the index is built once.
        fresh = sorted((e for e in entries if e.id > hwm), key=lambda e: e.id)
        expect = hwm + 1
        for e in fresh:
            if e.id != expect:
                raise JournalRefused("gap", expect, f"table {table}: entry {e.id} sent after entry {expect - 1}: "
                                     f"entries {expect}..{e.id - 1} are missing (removed from the journal?)")
            if e.chain is None:
                raise JournalRefused("break", e.id, f"table {table}: entry {e.id} carries no chain value (a table "
                                     "daemon older than the hash chain)")
            # A stream held from before the chain (schema 1) has no value at its mark: the
            # first chained entry is its anchor; from there on every link is checked.
            if prev is not None and e.link().expected(prev) != e.chain:
                raise JournalRefused("break", e.id, f"table {table}: entry {e.id} does not chain from entry "
                                     f"{e.id - 1} as the floor holds it (an entry edited, removed or inserted, "
                                     "or the journal replaced)")
            prev = e.chain
            expect += 1
        new_hwm = expect - 1
        if head is not None:
            # The table's head agrees with the floor's copy, or the journal is no longer the one
            # the floor holds. A head below the mark with the same value is only a head read
            # before the last batch arrived: not an alarm (a journal restored from a backup
            # differs at its first new entry, which the next head shows).
            head_id, head_chain = head
            if 0 < head_id <= new_hwm:
                held_head = prev if head_id == new_hwm else self._chains(tx, table, [head_id]).get(head_id)
                if held_head is not None and head_chain != held_head:
                    lower = head_id < new_hwm
                    raise JournalRefused(
                        "restored" if lower else "diverged", head_id,
                        f"table {table}: its journal's entry {head_id} differs from the floor's copy"
                        + (f", and the floor holds entries up to {new_hwm}: the journal was restored from a backup"
                           if lower else ": the journal was edited or restored from a backup")
                        + "; its entries are refused and none of its rounds is settled until it is restarted with "
                          "`cardshoe run --journal-restored` (docs/floor.md, \"A restored journal\")")
        if fresh:
            # The stream's gaming day: its first entry's, fixed then (docs/floor.md, "Gaming-day partitions").
            if day is None:
                day = self.day_rule.day_of(fresh[0].t_ns)
            self._day_open(tx, table, day)
            # The key holds the day (a partitioned table's key must): an entry sent again has its
            # stream's day, so it conflicts with the row held and is not doubled.
            tx.many("INSERT INTO entries (table_name, entry_id, t_ns, kind, shoe, boot, seq, type, round_id,"
                    " body, raw, received_ns, chain, raw_sha256, day) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
                    " %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    [(table, e.id, e.t_ns, e.kind, e.shoe, e.boot, e.seq, e.type, e.round_id, e.body, e.raw, t,
                      e.chain, e.raw_sha256, day) for e in fresh])
        open_flags: dict[str, list[str]] = json.loads(flags_text)
        index = _RoundIndex(tx, table, day)
        for e in fresh:
            if e.shoe is not None:
                shoe = e.shoe
            current = index.apply(e, open_flags, current)
        index.flush()
        tx.q("UPDATE floor_tables SET hwm = %s, seen_ns = %s, shoe = %s, current_round = %s, open_flags = %s,"
             " link = COALESCE(%s, link), game = COALESCE(%s, game), chain = %s, day = %s WHERE name = %s",
             (new_hwm, t, shoe, current, json.dumps(open_flags, sort_keys=True), link, game, prev, day, table))
        return new_hwm

    def _day_open(self, tx: _Tx, table: str, day: str) -> None:
        """Entries of `day` may be stored: it is not archived, and (PostgreSQL) has its partition."""
        archived = tx.q("SELECT state, file FROM floor_days WHERE day = %s", (day,))
        if archived:
            raise DayArchived("day", f"stream {table} is of gaming day {day}, which the floor "
                                     f"{'archived' if archived[0][0] == 'archived' else 'is archiving'} to "
                                     f"{archived[0][1]}: its entries after that are not taken (its journal keeps them)")
        if self.kind == "postgres" and day not in self._days_ready:
            from .days import partition_name

            if tx.q("SELECT to_regclass(%s)", (partition_name("entries", day),))[0][0] is None:
                raise _DayMissing(day)
            self._days_ready.add(day)

    def _lineage(self, tx: _Tx, table: str) -> list[tuple[str, int, int | None]]:
        """(stream, first id, last id or None) from the root: where each of `table`'s entry ids lives."""
        out: list[tuple[str, int, int | None]] = []
        name: str | None = table
        upper: int | None = None
        seen: set[str] = set()
        while name is not None and name not in seen:
            seen.add(name)
            row = tx.q("SELECT parent, base_id FROM floor_tables WHERE name = %s", (name,))
            if not row:
                break
            parent, base = row[0][0], int(row[0][1])
            out.append((name, base + 1, upper))
            name, upper = parent, base
        out.reverse()
        return out

    def _chains(self, tx: _Tx, table: str, ids: Sequence[int]) -> dict[int, str | None]:
        """The chain values the floor holds of `table`'s entries `ids` (through its lineage)."""
        out: dict[int, str | None] = {}
        for stream, lo, hi in self._lineage(tx, table):
            want = [i for i in ids if i >= lo and (hi is None or i <= hi)]
            for k in range(0, len(want), 500):
                part = want[k:k + 500]
                marks = ", ".join(["%s"] * len(part))
                for eid, value in tx.q(f"SELECT entry_id, chain FROM entries WHERE table_name = %s AND entry_id IN"
                                       f" ({marks})", (stream, *part)):
                    out[int(eid)] = value
        return out

    def base_chain(self, table: str) -> str | None:
        """The chain value a stream's first own entry follows: its genesis, or the value of the
        entry of its parent it continues from (None: the floor holds nothing of it)."""
        with self._tx() as tx:
            return self._base_chain(tx, table)

    def _base_chain(self, tx: _Tx, table: str) -> str | None:
        row = tx.q("SELECT parent, base_id FROM floor_tables WHERE name = %s", (table,))
        if not row:
            return None
        parent, base = row[0][0], int(row[0][1])
        if base > 0:
            return self._chains(tx, str(parent), [base]).get(base)
        root = self._lineage(tx, table)[0][0]
        if root != table:
            return self._base_chain(tx, root)
        # A root stream starts at its journal's genesis; one whose parent the floor never held
        # (restored before anything was shipped) at that parent's.
        return stream_genesis(table if parent is None else str(parent))

    def chain_at(self, table: str, entry_id: int) -> str | None:
        """The chain value of `table`'s entry `entry_id` as the floor holds it (0: the stream's
        genesis), or None when the floor does not hold it."""
        with self._tx() as tx:
            lineage = self._lineage(tx, table)
            if not lineage:
                return None
            if entry_id != 0:
                return self._chains(tx, table, [entry_id]).get(entry_id)
            return self._base_chain(tx, lineage[0][0])

    def fork(self, table: str, parent: str, at: int, chain: str, *, link: str | None = None,
             game: str | None = None, now_ns: int | None = None) -> dict[str, Any]:
        """Open `table` as the stream of a journal restored from a backup of `parent`'s: it holds
        `parent`'s entries up to `at` (whose chain value must be `chain`) and its own after them.

        Idempotent. The parent's alarms of a restored or diverged journal are cleared, naming
        the new stream. Raises UnknownTable, or JournalRefused when the floor's entry `at` is
        not the one given."""
        t = time.time_ns() if now_ns is None else now_ns
        with self._tx() as tx:
            got = tx.q("SELECT hwm FROM floor_tables WHERE name = %s FOR UPDATE", (parent,))
            if not got and at != 0:
                raise UnknownTable("parent", f"the floor holds nothing of table {parent}")
            if got and not 0 <= at <= int(got[0][0]):
                raise FloorRefusal("at", f"entry {at} is not one the floor holds of {parent} (it holds up to "
                                         f"{got[0][0]})")
            # Entry 0 is the chain's start: the genesis of the journal the lineage began with
            # (a parent the floor never heard of began it).
            held = (self._base_chain(tx, self._lineage(tx, parent)[0][0]) if got else stream_genesis(parent)) \
                if at == 0 else self._chains(tx, parent, [at]).get(at)
            if held != chain:
                raise FloorRefusal("chain", f"entry {at} of {parent} as the floor holds it is not the one given: the "
                                            "journal does not continue the floor's copy there")
            row = tx.q("SELECT parent, base_id FROM floor_tables WHERE name = %s FOR UPDATE", (table,))
            if row:
                if (row[0][0], int(row[0][1])) != (parent, at):
                    raise FloorRefusal("table", f"table {table} is already a stream of its own on the floor")
            else:
                # The same fork asked of two API processes at once (a parent the floor never
                # heard of locks no row above): one inserts, the other finds its row.
                made = tx.q("INSERT INTO floor_tables (name, link, game, hwm, seen_ns, shoe, current_round, open_flags,"
                            " chain, parent, base_id) VALUES (%s, %s, %s, %s, %s, NULL, NULL, %s, %s, %s, %s)"
                            " ON CONFLICT (name) DO NOTHING RETURNING name",
                            (table, link, game, at, t, "{}", chain, parent, at))
                if not made:
                    row = tx.q("SELECT parent, base_id FROM floor_tables WHERE name = %s FOR UPDATE", (table,))
                    if (row[0][0], int(row[0][1])) != (parent, at):
                        raise FloorRefusal("table", f"table {table} is already a stream of its own on the floor")
                    return {"table": table, "parent": parent, "base_id": at, "high_water": at}
                tx.q("UPDATE floor_alarms SET cleared_ns = %s, cleared_by = %s WHERE table_name = %s"
                     " AND cleared_ns IS NULL AND kind IN ('restored', 'diverged')",
                     (t, f"continued as {table} from entry {at}", parent))
        return {"table": table, "parent": parent, "base_id": at, "high_water": at}

    # -- alarms --------------------------------------------------------------------------
    def raise_alarm(self, table: str, kind: str, at_id: int | None, message: str, now_ns: int | None = None) -> None:
        """Record an alarm of `table` (once while one of its kind is open: a table that goes on
        writing to a restored journal does not add an alarm per exchange)."""
        t = time.time_ns() if now_ns is None else now_ns
        with self._tx() as tx:
            open_ = tx.q("SELECT n FROM floor_alarms WHERE table_name = %s AND kind = %s AND cleared_ns IS NULL",
                         (table, kind))
            if open_:
                return
            n = int(tx.q("SELECT COALESCE(MAX(n), 0) FROM floor_alarms WHERE table_name = %s", (table,))[0][0]) + 1
            tx.q("INSERT INTO floor_alarms (table_name, n, kind, at_id, message, t_ns) VALUES (%s, %s, %s, %s, %s, %s)",
                 (table, n, kind, at_id, message, t))

    def alarms(self, table: str | None = None, *, open_only: bool = False) -> list[dict[str, Any]]:
        """The tables' alarms (a table's, or all), oldest first."""
        sql = "SELECT table_name, n, kind, at_id, message, t_ns, cleared_ns, cleared_by FROM floor_alarms WHERE 1 = 1"
        params: list[Any] = []
        if table is not None:
            sql += " AND table_name = %s"
            params.append(table)
        if open_only:
            sql += " AND cleared_ns IS NULL"
        with self._tx() as tx:
            rows = tx.q(sql + " ORDER BY t_ns, table_name, n", params)
        return [{"table": r[0], "n": r[1], "kind": r[2], "at_id": r[3], "message": r[4], "t_ns": r[5],
                 "cleared_ns": r[6], "cleared_by": r[7]} for r in rows]

    def clear_alarm(self, table: str, n: int, by: str, now_ns: int | None = None) -> bool:
        """A floor supervisor's acknowledgement of alarm `n` of `table`; False when there is none open."""
        t = time.time_ns() if now_ns is None else now_ns
        with self._tx() as tx:
            if not tx.q("SELECT n FROM floor_alarms WHERE table_name = %s AND n = %s AND cleared_ns IS NULL",
                        (table, n)):
                return False
            tx.q("UPDATE floor_alarms SET cleared_ns = %s, cleared_by = %s WHERE table_name = %s AND n = %s",
                 (t, by, table, n))
        return True

    def tables(self) -> list[dict[str, Any]]:
        """Every table stream: link, game, shoe, current round, open flags, high-water mark, last
        heard, the stream it continues (a restored journal's) and its open alarms."""
        with self._tx() as tx:
            rows = tx.q("SELECT name, link, game, hwm, seen_ns, shoe, current_round, open_flags, parent, base_id"
                        " FROM floor_tables ORDER BY name")
        alarms: dict[str, list[dict[str, Any]]] = {}
        for a in self.alarms(open_only=True):
            alarms.setdefault(a["table"], []).append(a)
        return [{"table": r[0], "name": str(r[0]).rsplit(".", 1)[0], "link": r[1], "game": r[2], "high_water": r[3],
                 "seen_ns": r[4], "shoe": r[5], "current_round": r[6], "open_flags": json.loads(r[7]),
                 "parent": r[8], "base_id": r[9], "alarms": alarms.get(str(r[0]), [])} for r in rows]

    def entries(self, table: str, *, after_id: int = 0, limit: int = 1000, round_id: str | None = None,
                upto: int | None = None, kinds: Sequence[str] | None = None,
                lineage: bool = False) -> list[ShippedEntry]:
        """A table's entries as the floor holds them, in id order: after `after_id`, up to
        `upto`, of `kinds`, of one round. With `lineage`, a restored journal's stream also
        gives the entries it shares with the stream it continues (held there, at or below its
        base). A stream of an archived gaming day is read from the day's file
        (`ArchiveUnavailable` if it is gone or changed)."""
        out: list[ShippedEntry] = []
        with self._tx() as tx:
            parts = self._lineage(tx, table) if lineage else [(table, 1, None)]
            for stream, lo, hi in parts:
                top = hi if upto is None else (upto if hi is None else min(hi, upto))
                if top is not None and top <= after_id or len(out) >= limit:
                    continue
                sql = ("SELECT entry_id, t_ns, kind, shoe, boot, seq, type, round_id, body, raw, chain, raw_sha256"
                       " FROM entries WHERE table_name = %s AND entry_id > %s")
                params: list[Any] = [stream, max(after_id, lo - 1)]
                if top is not None:
                    sql += " AND entry_id <= %s"
                    params.append(top)
                if round_id is not None:
                    sql += " AND round_id = %s"
                    params.append(round_id)
                if kinds is not None:
                    sql += f" AND kind IN ({', '.join(['%s'] * len(kinds))})"
                    params += list(kinds)
                sql += " ORDER BY entry_id LIMIT %s"
                archive = tx.q("SELECT d.day, d.file, d.digest FROM floor_tables t JOIN floor_days d ON d.day = t.day"
                               " WHERE t.name = %s AND d.state = 'archived'", (stream,))
                if archive:  # a stream of an archived day: read from the day's file, checked first
                    from .days import archived_query

                    rows = archived_query(str(archive[0][0]), str(archive[0][1]), str(archive[0][2]), sql,
                                          (*params, limit - len(out)))
                else:
                    rows = tx.q(sql, (*params, limit - len(out)))
                out += [ShippedEntry(int(r[0]), int(r[1]), str(r[2]), r[3], r[4], r[5], r[6], r[7], str(r[8]),
                                     None if r[9] is None else bytes(r[9]), r[10], r[11]) for r in rows]
        return out

    def count_entries(self, table: str | None = None) -> int:
        """How many entries the floor holds (of one table, or all)."""
        with self._tx() as tx:
            if table is None:
                row = tx.q("SELECT COUNT(*) FROM entries")
            else:
                row = tx.q("SELECT COUNT(*) FROM entries WHERE table_name = %s", (table,))
        return int(row[0][0])

    def search_rounds(self, *, table: str | None = None, since_ns: int | None = None, until_ns: int | None = None,
                      rule: str | None = None, cards: str | None = None, limit: int = 200,
                      live_cards: bool = True) -> list[dict[str, Any]]:
        """Rounds by table, time opened, a rule flagged, and a card sequence (cards dealt in that
        order, e.g. "Ah Kh Qh"), newest first. Without `live_cards` (a reader who may not see
        a hole card before it is turned), a round still in play shows no cards and is not
        found by them."""
        sql = "SELECT table_name, round_id, game, opened_ns, settled_ns, cards, flags, void FROM rounds WHERE 1 = 1"
        params: list[Any] = []
        if table is not None:
            # A table's name finds every journal of it (`NAME.JOURNAL_ID`); a full key, that one.
            sql += " AND (table_name = %s OR table_name LIKE %s ESCAPE '!')"
            params += [table, table.replace("!", "!!").replace("%", "!%").replace("_", "!_") + ".%"]
        if since_ns is not None:
            sql += " AND opened_ns >= %s"
            params.append(since_ns)
        if until_ns is not None:
            sql += " AND opened_ns < %s"
            params.append(until_ns)
        if rule is not None:
            sql += " AND flags LIKE %s"
            params.append(f"% {_like(rule)} %")
        if cards is not None:
            sql += " AND cards LIKE %s"
            params.append(f"% {_like(cards)} %")
            if not live_cards:
                sql += " AND (settled_ns IS NOT NULL OR void = 1)"
        with self._tx() as tx:
            rows = tx.q(sql + " ORDER BY opened_ns DESC, round_id DESC LIMIT %s", (*params, limit))
            archives = tx.q("SELECT day, file, digest, opened_min, opened_max FROM floor_days WHERE state = 'archived'"
                            " AND opened_max IS NOT NULL ORDER BY opened_max DESC")
        # Archived days are read back from their files (each checked against its SHA-256 first):
        # those whose rounds' span meets the range and could still place within the limit.
        for day, path, digest, lo, hi in archives:
            if since_ns is not None and int(hi) < since_ns or until_ns is not None and int(lo) >= until_ns:
                continue
            if len(rows) >= limit and rows[limit - 1][3] is not None and int(hi) < int(rows[limit - 1][3]):
                continue
            from .days import archived_rounds

            rows += archived_rounds(str(day), str(path), str(digest), sql.split(" WHERE ", 1)[1], params, limit)
            rows.sort(key=lambda r: (-1 if r[3] is None else int(r[3]), str(r[1])), reverse=True)
            rows = rows[:limit]
        return [{"table": r[0], "round_id": r[1], "game": r[2], "opened_ns": r[3], "settled_ns": r[4],
                 "cards": r[5].split() if live_cards or r[4] is not None or r[7] else [],
                 "rules_flagged": r[6].split(), "void": bool(r[7])} for r in rows]


def _like(text: str) -> str:
    # Card and rule texts never hold LIKE's wildcards; any given are taken literally by refusing them.
    if any(c in text for c in "%_\\"):
        raise FloorRefusal("search", f"{text!r}: no % _ or \\ in a search")
    return " ".join(text.split())


def _assignment(data: Mapping[str, Any], signature: str | None = None) -> Assignment:
    return Assignment(link=data["link"], table=data["table"], round_id=data["round_id"], seq=data["seq"],
                      stakes=data["stakes"], contribution=data["contribution"], carry_before=data["carry_before"],
                      carry_after=data["carry_after"], pool_before=data["pool_before"], pool=data["pool"],
                      pool_after=data["pool_after"], movements=tuple(data["movements"]),
                      hits=tuple(Hit(h["seat"], h["line"], h["amount"], h["rule"]) for h in data["hits"]),
                      digest=data["digest"], reset=data.get("reset"), rate_ppm=data.get("rate_ppm"),
                      entry=data.get("entry"), chain=data.get("chain"),
                      signature=None if signature is None else json.loads(signature))


class _DayMissing(Exception):
    def __init__(self, day: str) -> None:
        super().__init__(day)
        self.day = day


class _RoundIndex:
    """The searchable round rows, built from a table's entries as they arrive."""

    def __init__(self, tx: _Tx, table: str, day: str | None) -> None:
        self.tx = tx
        self.table = table
        self.day = day
        self.rows: dict[str, dict[str, Any]] = {}

    def _row(self, rid: str) -> dict[str, Any]:
        if rid not in self.rows:
            got = self.tx.q("SELECT game, opened_ns, settled_ns, cards, flags, void FROM rounds"
                            " WHERE table_name = %s AND round_id = %s AND day = %s", (self.table, rid, self.day))
            if got:
                g = got[0]
                self.rows[rid] = {"game": g[0], "opened_ns": g[1], "settled_ns": g[2], "cards": str(g[3]),
                                  "flags": str(g[4]), "void": int(g[5]), "new": False}
            else:
                self.rows[rid] = {"game": None, "opened_ns": None, "settled_ns": None, "cards": " ", "flags": " ",
                                  "void": 0, "new": True}
        return self.rows[rid]

    def apply(self, e: ShippedEntry, open_flags: dict[str, list[str]], current: str | None) -> str | None:
        if e.kind not in ("event", "settlement") or e.round_id is None:
            return current
        try:
            body = json.loads(e.body)
        except ValueError:
            return current
        etype = body.get("type")
        rid = e.round_id
        if etype == "round_opened":
            row = self._row(rid)
            row["game"], row["opened_ns"] = body.get("game"), e.t_ns
            return rid
        if etype == "card_placed" and isinstance(body.get("card"), int):
            self._row(rid)["cards"] += card_text(int(body["card"])) + " "
        elif etype in ("flagged", "flag_resolved") and isinstance(body.get("irregularity"), dict):
            irr = body["irregularity"]
            key = f"{rid}#{irr.get('id')}"
            rules = [str(r) for r in irr.get("rules", [])]
            if etype == "flagged":
                row = self._row(rid)
                for r in rules:
                    if f" {r} " not in row["flags"]:
                        row["flags"] += r + " "
            if irr.get("decision") in ("pending", "reconstruction_proposed", "referred", "placement_proposed"):
                open_flags[key] = rules
            else:
                open_flags.pop(key, None)
        elif etype == "round_voided":
            self._row(rid)["void"] = 1
        elif e.kind == "settlement":
            row = self._row(rid)
            row["settled_ns"] = e.t_ns
            # A settled round waits for nobody: its flags are closed with it.
            for key in [k for k in open_flags if k.startswith(f"{rid}#")]:
                del open_flags[key]
        return current

    def flush(self) -> None:
        for rid, row in self.rows.items():
            values = (row["game"], row["opened_ns"], row["settled_ns"], row["cards"], row["flags"], row["void"])
            if row["new"]:
                self.tx.q("INSERT INTO rounds (game, opened_ns, settled_ns, cards, flags, void, table_name, round_id,"
                          " day) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", (*values, self.table, rid, self.day))
            else:
                self.tx.q("UPDATE rounds SET game = %s, opened_ns = %s, settled_ns = %s, cards = %s, flags = %s,"
                          " void = %s WHERE table_name = %s AND round_id = %s AND day = %s",
                          (*values, self.table, rid, self.day))
