"""The floor store: every table's journal, the links' pools, their hits, and a round index.

Two backends behind one class, with the same SQL: PostgreSQL through psycopg 3
(`FloorStore.postgres(dsn)`) for a floor, and SQLite (`FloorStore.sqlite(path)`) for a small
room with no PostgreSQL configured. The tests run against both (tests/floor/conftest.py).

Exactly once. `ingest` inserts a table's entries with `ON CONFLICT (table_name, entry_id)
DO NOTHING` and raises the table's high-water mark in the same transaction, so a batch sent
twice (the shipper's at-least-once delivery) has its effect once, and the shipper resumes
from `high_water` after any outage.

Serialization of the pool. `settle` reads the link's row `FOR UPDATE` (PostgreSQL; SQLite's
`BEGIN IMMEDIATE` takes the database's write lock first) and writes the round's assignment,
its hits and the new pool in that transaction. Two rounds of the same link (two tables' Royal
Flushes at the same moment) are therefore settled one after the other, in the order their
transactions take the lock; the link's `seq` numbers that order, and it is the order the
offline recomputation (`cardshoe.floor.audit`) walks. A round sent again is answered with its
first assignment (idempotent on (table, round)); the same round id with different content is
refused (`AssignmentConflict`).
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Protocol, Sequence

from cardshoe.cards import card_text

from .progressive import Assignment, FloorRefusal, Hit, LinkSettings, PoolState, assign, prepare

__all__ = ["FloorStore", "StoreUnavailable", "AssignmentConflict", "RoundWithdrawn", "UnknownLink", "ShippedEntry", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS floor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS links (
    name TEXT PRIMARY KEY, reset BIGINT NOT NULL, rate_ppm BIGINT NOT NULL,
    pool BIGINT NOT NULL, carry BIGINT NOT NULL, seq BIGINT NOT NULL,
    opening BIGINT NOT NULL, created_ns BIGINT NOT NULL, updated_ns BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS floor_tables (
    name TEXT PRIMARY KEY, link TEXT, game TEXT, hwm BIGINT NOT NULL, seen_ns BIGINT NOT NULL,
    shoe BIGINT, current_round TEXT, open_flags TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    table_name TEXT NOT NULL, entry_id BIGINT NOT NULL, t_ns BIGINT NOT NULL, kind TEXT NOT NULL,
    shoe BIGINT, boot BIGINT, seq BIGINT, type BIGINT, round_id TEXT, body TEXT NOT NULL, raw BYTEA,
    received_ns BIGINT NOT NULL, PRIMARY KEY (table_name, entry_id));
CREATE INDEX IF NOT EXISTS entries_round ON entries (table_name, round_id);
CREATE TABLE IF NOT EXISTS assignments (
    link TEXT NOT NULL, seq BIGINT NOT NULL, table_name TEXT NOT NULL, round_id TEXT NOT NULL,
    digest TEXT NOT NULL, stakes BIGINT NOT NULL, contribution BIGINT NOT NULL, carry_before BIGINT NOT NULL,
    carry_after BIGINT NOT NULL, pool_before BIGINT NOT NULL, pool BIGINT NOT NULL, pool_after BIGINT NOT NULL,
    body TEXT NOT NULL, t_ns BIGINT NOT NULL,
    PRIMARY KEY (link, seq), UNIQUE (table_name, round_id));
CREATE TABLE IF NOT EXISTS hits (
    link TEXT NOT NULL, seq BIGINT NOT NULL, n BIGINT NOT NULL, table_name TEXT NOT NULL, round_id TEXT NOT NULL,
    seat BIGINT NOT NULL, line TEXT NOT NULL, amount BIGINT NOT NULL, rule TEXT NOT NULL, t_ns BIGINT NOT NULL,
    PRIMARY KEY (link, seq, n));
CREATE TABLE IF NOT EXISTS rounds (
    table_name TEXT NOT NULL, round_id TEXT NOT NULL, game TEXT, opened_ns BIGINT, settled_ns BIGINT,
    cards TEXT NOT NULL, flags TEXT NOT NULL, void BIGINT NOT NULL, PRIMARY KEY (table_name, round_id));
CREATE INDEX IF NOT EXISTS rounds_opened ON rounds (opened_ns);
CREATE TABLE IF NOT EXISTS withdrawn (
    table_name TEXT NOT NULL, round_id TEXT NOT NULL, link TEXT NOT NULL, t_ns BIGINT NOT NULL,
    PRIMARY KEY (table_name, round_id));
"""


class StoreUnavailable(ConnectionError):
    """The store could not be reached or its transaction failed for want of it (retry later)."""


class AssignmentConflict(FloorRefusal):
    """The same (table, round) sent again with different content."""


class RoundWithdrawn(FloorRefusal):
    """A round its table withdrew (to void it) before the floor ever assigned it: never assigned now."""


class UnknownLink(FloorRefusal):
    """A link the floor is not configured with."""


@dataclass(frozen=True)
class ShippedEntry:
    """One journal entry as the shipper sends it (checkpoints' pickles are not shipped)."""

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

    def to_json(self) -> dict[str, Any]:
        """The wire form (raw as hex)."""
        return {"id": self.id, "t_ns": self.t_ns, "kind": self.kind, "shoe": self.shoe, "boot": self.boot,
                "seq": self.seq, "type": self.type, "round_id": self.round_id, "body": self.body,
                "raw": None if self.raw is None else self.raw.hex()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShippedEntry:
        """From the wire form; raises ValueError naming the field."""
        def opt_int(key: str) -> int | None:
            v = data.get(key)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
                raise ValueError(f"entries[].{key}: an integer or null")
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
        return cls(eid, t_ns, kind, opt_int("shoe"), opt_int("boot"), opt_int("seq"), opt_int("type"), rid, body,
                   raw_bytes)


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

    def __init__(self, kind: str, target: str, *, pool_size: int = 8) -> None:
        self.kind = kind
        self.target = target
        self._sqlite_lock = threading.Lock()
        self._sqlite_conn: sqlite3.Connection | None = None
        self._pg: queue.LifoQueue[Any] = queue.LifoQueue()
        self._pg_made = 0
        self._pg_max = pool_size
        self._pg_lock = threading.Lock()
        self._links: dict[str, LinkSettings] = {}
        with self._tx() as tx:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    tx.q(statement)
            row = tx.q("SELECT value FROM floor_meta WHERE key = %s", ("schema",))
            if not row:
                tx.q("INSERT INTO floor_meta (key, value) VALUES (%s, %s)", ("schema", str(SCHEMA_VERSION)))
            elif row[0][0] != str(SCHEMA_VERSION):
                raise StoreUnavailable(f"floor store {target}: schema {row[0][0]}, this floor reads {SCHEMA_VERSION}")

    @classmethod
    def sqlite(cls, path: str | Path) -> FloorStore:
        """An embedded store in one SQLite file (a small room)."""
        return cls("sqlite", str(path))

    @classmethod
    def postgres(cls, dsn: str, *, pool_size: int = 8) -> FloorStore:
        """A store on a PostgreSQL server (`dsn`: a libpq connection string or URL)."""
        return cls("postgres", dsn, pool_size=pool_size)

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
            return psycopg.connect(self.target, autocommit=True, connect_timeout=5)
        except psycopg.Error as exc:
            with self._pg_lock:
                self._pg_made -= 1
            raise StoreUnavailable(f"floor store: cannot connect: {exc}".strip()) from exc

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

    def settle(self, link_name: str, table: str, round_json: Mapping[str, Any],
               now_ns: int | None = None) -> Assignment:
        """Assign the round its pool and apply its contribution and hits, serialized per link.

        Idempotent on (table, round id): the same round again gets its first assignment back."""
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
            before = tx.q("SELECT body FROM assignments WHERE table_name = %s AND round_id = %s",
                          (table, str(rid)))
            made = assign(settings, PoolState(pool, carry, seq), table, round_json, prepared)
            if before:
                old = _assignment(json.loads(before[0][0]))
                if old.digest != made.digest:
                    raise AssignmentConflict("round", f"round {rid} of table {table} was assigned a pool already "
                                                      "with different content; a supervisor must look at it")
                return old
            if tx.q("SELECT link FROM withdrawn WHERE table_name = %s AND round_id = %s", (table, str(rid))):
                raise RoundWithdrawn("round", f"round {rid} of table {table} was withdrawn by its table (to be "
                                              "voided) before the floor assigned it a pool: it is never assigned now")
            tx.q("UPDATE links SET pool = %s, carry = %s, seq = %s, updated_ns = %s WHERE name = %s",
                 (made.pool_after, made.carry_after, made.seq, t, link_name))
            tx.q("INSERT INTO assignments (link, seq, table_name, round_id, digest, stakes, contribution, carry_before,"
                 " carry_after, pool_before, pool, pool_after, body, t_ns)"
                 " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                 (link_name, made.seq, table, made.round_id, made.digest, made.stakes, made.contribution,
                  made.carry_before, made.carry_after, made.pool_before, made.pool, made.pool_after,
                  json.dumps(made.to_json(), sort_keys=True), t))
            for n, hit in enumerate(made.hits, 1):
                tx.q("INSERT INTO hits (link, seq, n, table_name, round_id, seat, line, amount, rule, t_ns)"
                     " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                     (link_name, made.seq, n, table, made.round_id, hit.seat, hit.line, hit.amount, hit.rule, t))
        return made

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
            held = tx.q("SELECT body FROM assignments WHERE table_name = %s AND round_id = %s", (table, round_id))
            if held:
                return _assignment(json.loads(held[0][0]))
            if not tx.q("SELECT link FROM withdrawn WHERE table_name = %s AND round_id = %s", (table, round_id)):
                tx.q("INSERT INTO withdrawn (table_name, round_id, link, t_ns) VALUES (%s, %s, %s, %s)",
                     (table, round_id, link_name, t))
        return None

    def history(self, link: str, limit: int = 1000) -> list[dict[str, Any]]:
        """The link's assignments, oldest first: every pool movement with its round."""
        with self._tx() as tx:
            rows = tx.q("SELECT body, t_ns FROM assignments WHERE link = %s ORDER BY seq LIMIT %s", (link, limit))
        return [{**json.loads(r[0]), "t_ns": r[1]} for r in rows]

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

    def ingest(self, table: str, entries: Sequence[ShippedEntry], *, link: str | None = None,
               game: str | None = None, now_ns: int | None = None) -> int:
        """Store a batch of `table`'s entries (each once, whatever is resent) and index its
        rounds; returns the table's high-water mark after it."""
        t = time.time_ns() if now_ns is None else now_ns
        with self._tx() as tx:
            row = tx.q("SELECT hwm, shoe, current_round, open_flags FROM floor_tables WHERE name = %s FOR UPDATE",
                       (table,))
            if not row:
                tx.q("INSERT INTO floor_tables (name, link, game, hwm, seen_ns, shoe, current_round, open_flags)"
                     " VALUES (%s, %s, %s, 0, %s, NULL, NULL, %s)", (table, link, game, t, "{}"))
                hwm, shoe, current, flags_text = 0, None, None, "{}"
            else:
                hwm, shoe, current, flags_text = int(row[0][0]), row[0][1], row[0][2], str(row[0][3])
            # Entries at or below the high-water mark are held already: the index is built once.
            fresh = sorted((e for e in entries if e.id > hwm), key=lambda e: e.id)
            if fresh:
                tx.many("INSERT INTO entries (table_name, entry_id, t_ns, kind, shoe, boot, seq, type, round_id,"
                        " body, raw, received_ns) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                        " ON CONFLICT (table_name, entry_id) DO NOTHING",
                        [(table, e.id, e.t_ns, e.kind, e.shoe, e.boot, e.seq, e.type, e.round_id, e.body, e.raw, t)
                         for e in fresh])
            open_flags: dict[str, list[str]] = json.loads(flags_text)
            index = _RoundIndex(tx, table)
            for e in fresh:
                if e.shoe is not None:
                    shoe = e.shoe
                current = index.apply(e, open_flags, current)
            index.flush()
            new_hwm = max([hwm] + [e.id for e in fresh])
            tx.q("UPDATE floor_tables SET hwm = %s, seen_ns = %s, shoe = %s, current_round = %s, open_flags = %s,"
                 " link = COALESCE(%s, link), game = COALESCE(%s, game) WHERE name = %s",
                 (new_hwm, t, shoe, current, json.dumps(open_flags, sort_keys=True), link, game, table))
        return new_hwm

    def tables(self) -> list[dict[str, Any]]:
        """Every table: link, game, shoe, current round, open flags, high-water mark, last heard."""
        with self._tx() as tx:
            rows = tx.q("SELECT name, link, game, hwm, seen_ns, shoe, current_round, open_flags FROM floor_tables"
                        " ORDER BY name")
        return [{"table": r[0], "name": str(r[0]).rsplit(".", 1)[0], "link": r[1], "game": r[2], "high_water": r[3],
                 "seen_ns": r[4], "shoe": r[5], "current_round": r[6], "open_flags": json.loads(r[7])} for r in rows]

    def entries(self, table: str, *, after_id: int = 0, limit: int = 1000,
                round_id: str | None = None) -> list[ShippedEntry]:
        """A table's entries as the floor holds them, in id order."""
        sql = ("SELECT entry_id, t_ns, kind, shoe, boot, seq, type, round_id, body, raw FROM entries"
               " WHERE table_name = %s AND entry_id > %s")
        params: list[Any] = [table, after_id]
        if round_id is not None:
            sql += " AND round_id = %s"
            params.append(round_id)
        with self._tx() as tx:
            rows = tx.q(sql + " ORDER BY entry_id LIMIT %s", (*params, limit))
        return [ShippedEntry(int(r[0]), int(r[1]), str(r[2]), r[3], r[4], r[5], r[6], r[7], str(r[8]),
                             None if r[9] is None else bytes(r[9])) for r in rows]

    def count_entries(self, table: str | None = None) -> int:
        """How many entries the floor holds (of one table, or all)."""
        with self._tx() as tx:
            if table is None:
                row = tx.q("SELECT COUNT(*) FROM entries")
            else:
                row = tx.q("SELECT COUNT(*) FROM entries WHERE table_name = %s", (table,))
        return int(row[0][0])

    def search_rounds(self, *, table: str | None = None, since_ns: int | None = None, until_ns: int | None = None,
                      rule: str | None = None, cards: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """Rounds by table, time opened, a rule flagged, and a card sequence (cards dealt in that
        order, e.g. "Ah Kh Qh"), newest first."""
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
        with self._tx() as tx:
            rows = tx.q(sql + " ORDER BY opened_ns DESC, round_id DESC LIMIT %s", (*params, limit))
        return [{"table": r[0], "round_id": r[1], "game": r[2], "opened_ns": r[3], "settled_ns": r[4],
                 "cards": r[5].split(), "rules_flagged": r[6].split(), "void": bool(r[7])} for r in rows]


def _like(text: str) -> str:
    # Card and rule texts never hold LIKE's wildcards; any given are taken literally by refusing them.
    if any(c in text for c in "%_\\"):
        raise FloorRefusal("search", f"{text!r}: no % _ or \\ in a search")
    return " ".join(text.split())


def _assignment(data: Mapping[str, Any]) -> Assignment:
    return Assignment(link=data["link"], table=data["table"], round_id=data["round_id"], seq=data["seq"],
                      stakes=data["stakes"], contribution=data["contribution"], carry_before=data["carry_before"],
                      carry_after=data["carry_after"], pool_before=data["pool_before"], pool=data["pool"],
                      pool_after=data["pool_after"], movements=tuple(data["movements"]),
                      hits=tuple(Hit(h["seat"], h["line"], h["amount"], h["rule"]) for h in data["hits"]),
                      digest=data["digest"])


class _RoundIndex:
    """The searchable round rows, built from a table's entries as they arrive."""

    def __init__(self, tx: _Tx, table: str) -> None:
        self.tx = tx
        self.table = table
        self.rows: dict[str, dict[str, Any]] = {}

    def _row(self, rid: str) -> dict[str, Any]:
        if rid not in self.rows:
            got = self.tx.q("SELECT game, opened_ns, settled_ns, cards, flags, void FROM rounds"
                            " WHERE table_name = %s AND round_id = %s", (self.table, rid))
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
                self.tx.q("INSERT INTO rounds (game, opened_ns, settled_ns, cards, flags, void, table_name, round_id)"
                          " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", (*values, self.table, rid))
            else:
                self.tx.q("UPDATE rounds SET game = %s, opened_ns = %s, settled_ns = %s, cards = %s, flags = %s,"
                          " void = %s WHERE table_name = %s AND round_id = %s", (*values, self.table, rid))
