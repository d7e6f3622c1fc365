"""Gaming-day partitions of the floor's entries and rounds, and the archive of a day (issue 24 item 2).

Real PostgreSQL (the session's `pg_cluster`, a fresh database per test), real SQLite, a real
`cardshoe floor serve` process. Each expected day is worked out here from the calendar (the
floor's rule: the day ends at 06:00 UTC in these tests), not asked of the code under test."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest

from cardshoe.cards import parse_card
from cardshoe.floor.days import ArchiveUnavailable, DayArchived, DayRule, DaysRefused, archive_day, days_ahead, \
    list_days
from cardshoe.floor.pgserver import PgCluster
from cardshoe.floor.store import FloorStore, ShippedEntry, stream_genesis

from floor_server import TOKENS
from floor_stores import fresh_database

UTC6 = DayRule("06:00", "UTC")


def at(day: str, hhmm: str) -> int:
    """Unix ns of `day` at `hhmm` UTC."""
    d = datetime.fromisoformat(f"{day}T{hhmm}:00+00:00")
    return int(d.timestamp()) * 1_000_000_000


def past_day(days_back: int) -> str:
    """A gaming day that is over (06:00 UTC rule): the calendar date `days_back` days ago."""
    return (datetime.now(timezone.utc) - timedelta(days=days_back)).date().isoformat()


def day_stream(stream: str, t0_ns: int, rounds: int, *, first: int = 1, prev: str | None = None,
               close: bool = True, step_ns: int = 1_000_000_000) -> list[ShippedEntry]:
    """A chained stream: `rounds` rounds (opened, Ah Kh Qh placed, settled), then `day_closed`."""
    out: list[ShippedEntry] = []
    chain = stream_genesis(stream) if prev is None else prev
    table = stream.split(".")[0]

    def add(kind: str, body: dict[str, Any], rid: str | None = None) -> None:
        nonlocal chain
        e = ShippedEntry(first + len(out), t0_ns + len(out) * step_ns, kind, None, None, None, None, rid,
                         json.dumps(body), None)
        e = replace(e, chain=e.link().expected(chain))
        chain = str(e.chain)
        out.append(e)

    for k in range(rounds):
        rid = f"{table}-{stream[-6:]}-{first + k:06d}"
        add("event", {"type": "round_opened", "game": "three-card-poker"}, rid)
        for card in ("Ah", "Kh", "Qh"):
            add("event", {"type": "card_placed", "card": parse_card(card)}, rid)
        add("settlement", {"round_id": rid}, rid)
    if close:
        add("daemon", {"type": "day_closed"})
    return out


@pytest.fixture
def pg(pg_cluster: PgCluster) -> Iterator[FloorStore]:
    store = FloorStore.postgres(fresh_database(pg_cluster))
    store.set_day_rule(UTC6)
    yield store
    store.close()


def partition_counts(store: FloorStore, table: str) -> dict[str, int]:
    with store._tx() as tx:
        rows = tx.q(f"SELECT tableoid::regclass::text, COUNT(*) FROM {table} GROUP BY 1")
    return {str(r[0]): int(r[1]) for r in rows}


# -- partitions ---------------------------------------------------------------------------------

def test_partitions_are_made_ahead_from_the_floors_gaming_day(pg: FloorStore) -> None:
    now = at("2031-03-10", "05:59")  # before 06:00: still the 9th's gaming day
    assert days_ahead(pg, 3, now_ns=now) == ["2031-03-09", "2031-03-10", "2031-03-11"]
    assert days_ahead(pg, 3, now_ns=now) == []  # made once
    listed = list_days(pg)
    assert listed["partitioned"] is True
    assert [p["day"] for p in listed["partitions"]] == ["2031-03-09", "2031-03-10", "2031-03-11"]
    assert all(p["entries"] == 0 and p["rounds"] == 0 for p in listed["partitions"])
    with pg._tx() as tx:
        kinds = dict(tx.q("SELECT relname, relkind FROM pg_class WHERE relname IN ('entries', 'rounds')"))
        key = tx.q("SELECT array_agg(a.attname::text ORDER BY a.attname) FROM pg_index i JOIN pg_attribute a"
                   " ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
                   " WHERE i.indrelid = 'entries'::regclass AND i.indisprimary")[0][0]
    assert kinds == {"entries": "p", "rounds": "p"}
    assert sorted(key) == ["day", "entry_id", "table_name"]
    with pg._tx() as tx:  # each day's partition holds the key too (what ON CONFLICT meets)
        unique = tx.q("SELECT indexdef FROM pg_indexes WHERE tablename = 'entries_d20310310' AND indexdef LIKE"
                      " 'CREATE UNIQUE INDEX%%'")
    assert len(unique) == 1 and "(table_name, entry_id, day)" in unique[0][0], unique


def test_an_entry_lands_in_its_streams_day_and_sent_again_is_not_doubled(pg: FloorStore) -> None:
    # The stream begins at 05:00 on the 4th (the 3rd's gaming day) and runs past 06:00: every
    # entry of it is of the 3rd, so the day's journal is never split.
    stream = "T1.a1b2c3d4e5f6"
    entries = day_stream(stream, at("2031-05-04", "05:00"), 3, step_ns=30 * 60 * 1_000_000_000)
    assert entries[-1].t_ns > at("2031-05-04", "06:00")
    assert pg.ingest(stream, entries[:6]) == 6
    # The floor's day rule changes after the stream began: the stream keeps its day.
    pg.set_day_rule(DayRule("04:00", "UTC"))
    assert pg.ingest(stream, entries[3:]) == len(entries)  # overlapping resend
    assert pg.ingest(stream, entries) == len(entries)      # the whole batch again
    assert partition_counts(pg, "entries") == {"entries_d20310503": len(entries)}
    assert partition_counts(pg, "rounds") == {"rounds_d20310503": 3}
    # A new stream takes the rule as it is now: 05:00 on the 4th is the 4th's day from 04:00.
    other = "T2.0f0e0d0c0b0a"
    pg.ingest(other, day_stream(other, at("2031-05-04", "05:00"), 1))
    assert partition_counts(pg, "entries")["entries_d20310504"] == 6


def test_sqlite_is_one_table_that_carries_the_day(tmp_path: Path) -> None:
    store = FloorStore.sqlite(tmp_path / "floor.sqlite")
    try:
        store.set_day_rule(UTC6)
        stream = "T1.a1b2c3d4e5f6"
        entries = day_stream(stream, at("2031-05-04", "07:00"), 2)
        store.ingest(stream, entries)
        store.ingest(stream, entries)
        assert store.count_entries() == len(entries)
        with store._tx() as tx:
            assert tx.q("SELECT DISTINCT day FROM entries") == [("2031-05-04",)]
            assert tx.q("SELECT type FROM sqlite_master WHERE name = 'entries'") == [("table",)]
        assert list_days(store)["partitioned"] is False
        with pytest.raises(DaysRefused, match="SQLite"):
            archive_day(store, "2031-05-04", tmp_path / "day.sqlite")
    finally:
        store.close()


# -- the archive ---------------------------------------------------------------------------------

def _search(store: FloorStore, day: str) -> list[dict[str, Any]]:
    return store.search_rounds(since_ns=at(day, "06:00"), until_ns=at(day, "06:00") + 86400 * 10**9, limit=10_000)


def test_archive_a_day_and_the_search_reads_it_back_refusing_a_tampered_or_missing_file(
        pg: FloorStore, tmp_path: Path) -> None:
    day, next_day = past_day(3), past_day(2)
    old, new = "T1.aaaaaaaaaaaa", "T1.bbbbbbbbbbbb"
    old_entries = day_stream(old, at(day, "07:00"), 20)
    pg.ingest(old, old_entries)
    pg.ingest(new, day_stream(new, at(next_day, "07:00"), 5))
    before = _search(pg, day)
    assert len(before) == 20 and all(r["table"] == old for r in before)
    held = pg.entries(old, limit=10_000)
    assert held == old_entries
    cards = pg.search_rounds(cards="Ah Kh Qh", limit=10_000)
    assert len(cards) == 25

    with pytest.raises(DaysRefused, match="not over"):  # today's date: its gaming day ends tomorrow at 06:00
        archive_day(pg, past_day(0), tmp_path / "today.sqlite")
    out = tmp_path / "day.sqlite"
    done = archive_day(pg, day, out)
    assert (done["entries"], done["rounds"]) == (20 * 5 + 1, 20)
    # The file: the same rows a regulator can read with sqlite3, its digest beside it.
    sidecar = (tmp_path / "day.sqlite.sha256").read_text().split()
    assert sidecar == [hashlib.sha256(out.read_bytes()).hexdigest(), "day.sqlite"]
    with sqlite3.connect(out) as conn:
        assert conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 101
        manifest = dict(conn.execute("SELECT key, value FROM manifest").fetchall())
    assert manifest["day"] == day and manifest["rows_entries"] == "101" and manifest["rows_rounds"] == "20"
    # The store: the day's rows gone from it, the archive recorded, the other day untouched.
    assert pg.count_entries(old) == 0 and pg.count_entries(new) == 26
    listed = list_days(pg)
    assert [(a["day"], a["state"], a["entries"], a["rounds"]) for a in listed["archived"]] == [(day, "archived", 101, 20)]
    assert day not in [p["day"] for p in listed["partitions"]] and listed["detached"] == []
    # The search: the same rounds, from the file.
    assert _search(pg, day) == before
    # Surveillance's read of the stream's journal: the same entries, from the file.
    assert pg.entries(old, limit=10_000) == held
    assert pg.entries(old, after_id=50, limit=5, kinds=["settlement"]) == \
        [e for e in old_entries if e.id > 50 and e.kind == "settlement"][:5]
    assert len(pg.search_rounds(cards="Ah Kh Qh", limit=10_000)) == 25
    assert [r["round_id"] for r in pg.search_rounds(table="T1", limit=3)] == \
        [r["round_id"] for r in sorted(before + _search(pg, next_day), key=lambda r: -r["opened_ns"])][:3]
    # Entries of the archived day's stream are refused from now on (its journal keeps them).
    with pytest.raises(DayArchived, match=str(out)):
        pg.ingest(old, day_stream(old, at(day, "23:00"), 1, first=102, prev=old_entries[-1].chain))
    with pytest.raises(DaysRefused, match="archived already"):
        archive_day(pg, day, tmp_path / "again.sqlite")

    # A file changed (one byte) is refused, naming it; put back, it is read again.
    data = out.read_bytes()
    out.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(ArchiveUnavailable, match=str(out)):
        _search(pg, day)
    with pytest.raises(ArchiveUnavailable, match=str(out)):
        pg.entries(old)
    out.write_bytes(data)
    assert _search(pg, day) == before
    out.rename(tmp_path / "elsewhere.sqlite")
    with pytest.raises(ArchiveUnavailable, match=f"{out}.*restore"):
        _search(pg, day)
    # A range that does not reach the archived day does not need its file.
    assert len(_search(pg, next_day)) == 5


def test_an_open_stream_holds_its_day_unless_included(pg: FloorStore, tmp_path: Path) -> None:
    day = past_day(4)
    stream = "T2.cccccccccccc"
    entries = day_stream(stream, at(day, "08:00"), 3, close=False)
    pg.ingest(stream, entries)
    with pytest.raises(DaysRefused, match=stream):
        archive_day(pg, day, tmp_path / "a.sqlite")
    assert pg.count_entries(stream) == len(entries)  # refused: nothing moved
    done = archive_day(pg, day, tmp_path / "a.sqlite", include_open=True)
    assert done["entries"] == len(entries)


# -- a store made before partitions ----------------------------------------------------------------

_SCHEMA_2 = """
CREATE TABLE floor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO floor_meta VALUES ('schema', '2');
CREATE TABLE floor_tables (name TEXT PRIMARY KEY, link TEXT, game TEXT, hwm BIGINT NOT NULL, seen_ns BIGINT NOT NULL,
    shoe BIGINT, current_round TEXT, open_flags TEXT NOT NULL, chain TEXT, parent TEXT, base_id BIGINT NOT NULL DEFAULT 0);
CREATE TABLE entries (table_name TEXT NOT NULL, entry_id BIGINT NOT NULL, t_ns BIGINT NOT NULL, kind TEXT NOT NULL,
    shoe BIGINT, boot BIGINT, seq BIGINT, type BIGINT, round_id TEXT, body TEXT NOT NULL, raw BYTEA,
    received_ns BIGINT NOT NULL, chain TEXT, raw_sha256 TEXT, PRIMARY KEY (table_name, entry_id));
CREATE INDEX entries_round ON entries (table_name, round_id);
CREATE TABLE rounds (table_name TEXT NOT NULL, round_id TEXT NOT NULL, game TEXT, opened_ns BIGINT, settled_ns BIGINT,
    cards TEXT NOT NULL, flags TEXT NOT NULL, void BIGINT NOT NULL, PRIMARY KEY (table_name, round_id));
CREATE INDEX rounds_opened ON rounds (opened_ns);
"""


def _old_store(kind: str, target: str, streams: dict[str, list[ShippedEntry]]) -> None:
    """A schema 2 store (before partitions) holding `streams` as the floor of then stored them."""
    if kind == "sqlite":
        conn: Any = sqlite3.connect(target)
        conn.executescript(_SCHEMA_2)
        mark = "?"
    else:
        import psycopg

        conn = psycopg.connect(target, autocommit=True)
        conn.execute(_SCHEMA_2)
        mark = "%s"
    for stream, entries in streams.items():
        for e in entries:
            conn.execute(f"INSERT INTO entries VALUES ({', '.join([mark] * 13)}, NULL)",
                         (stream, e.id, e.t_ns, e.kind, e.shoe, e.boot, e.seq, e.type, e.round_id, e.body, e.raw, 0,
                          e.chain))
        rounds = sorted({e.round_id for e in entries if e.round_id})
        for rid in rounds:
            opened = min(e.t_ns for e in entries if e.round_id == rid)
            conn.execute(f"INSERT INTO rounds VALUES ({', '.join([mark] * 8)})",
                         (stream, rid, "three-card-poker", opened, opened + 4, " Ah Kh Qh ", " ", 0))
        conn.execute(f"INSERT INTO floor_tables VALUES ({', '.join([mark] * 11)})",
                     (stream, None, None, entries[-1].id, 0, None, None, "{}", entries[-1].chain, None, 0))
    if kind == "sqlite":
        conn.commit()
    conn.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_store_made_before_partitions_opens_with_every_row(kind: str, tmp_path: Path, request: Any) -> None:
    target = str(tmp_path / "old.sqlite") if kind == "sqlite" else fresh_database(request.getfixturevalue("pg_cluster"))
    d1, d2 = past_day(6), past_day(5)
    a, b = "T1.dddddddddddd", "T2.eeeeeeeeeeee"
    streams = {a: day_stream(a, at(d1, "09:00"), 4), b: day_stream(b, at(d2, "05:30"), 2, close=False)}
    _old_store(kind, target, streams)
    # Opened with the floor's rule (its file's, as `serve` opens it): the streams' days follow it.
    store = FloorStore.sqlite(target, day_rule=UTC6) if kind == "sqlite" else FloorStore.postgres(target, day_rule=UTC6)
    try:
        assert store.count_entries(a) == 21 and store.count_entries(b) == 10
        assert len(store.search_rounds(limit=100)) == 6
        with store._tx() as tx:
            assert tx.q("SELECT value FROM floor_meta WHERE key = 'schema'") == [("3",)]
            days = {str(n): str(d) for n, d in tx.q("SELECT name, day FROM floor_tables")}
        # b began at 05:30 on d2: the day before's (d1) gaming day.
        assert days == {a: d1, b: d1}
        if kind == "postgres":
            assert partition_counts(store, "entries") == {f"entries_d{d1.replace('-', '')}": 31}
            assert partition_counts(store, "rounds") == {f"rounds_d{d1.replace('-', '')}": 6}
        # The stream goes on where it was.
        more = day_stream(b, at(d2, "06:30"), 1, first=11, prev=streams[b][-1].chain)
        assert store.ingest(b, more) == 16
        assert store.count_entries() == 21 + 16
    finally:
        store.close()
    # Opened again: nothing moves twice.
    store = FloorStore.sqlite(target) if kind == "sqlite" else FloorStore.postgres(target)
    try:
        assert store.count_entries() == 37
    finally:
        store.close()


# -- with the floor serving -------------------------------------------------------------------------

def test_a_day_is_archived_while_a_serving_floor_ingests_another(pg_cluster: PgCluster, tmp_path: Path) -> None:
    import httpx
    import psycopg

    dsn = fresh_database(pg_cluster)
    day = past_day(2)
    old = "T1.ffffffffffff"
    store = FloorStore.postgres(dsn)
    store.set_day_rule(UTC6)
    store.ingest(old, day_stream(old, at(day, "07:00"), 40))
    store.close()
    for name in ("T1", "pit", "surveillance", "supervisor"):
        (tmp_path / f"{name}.token").write_text(TOKENS[name] + "\n")
        os.chmod(tmp_path / f"{name}.token", 0o600)
    (tmp_path / "signing.key").write_text(bytes(range(100, 132)).hex() + "\n")
    os.chmod(tmp_path / "signing.key", 0o600)
    config = tmp_path / "floor.toml"
    config.write_text(f'[floor]\npostgres = "{dsn}"\nlisten = "127.0.0.1:0"\nsigning_key = "signing.key"\n'
                      'day_ends = "06:00"\nzone = "UTC"\ndays_ahead = 3\n[roles]\npit = "pit.token"\n'
                      'surveillance = "surveillance.token"\nsupervisor = "supervisor.token"\n'
                      '[tables.T1]\ntoken_file = "T1.token"\n')
    port_file = tmp_path / "floor.port"
    env = {k: v for k, v in os.environ.items() if k != "CARDSHOE_FLOOR_TOKEN"}
    proc = subprocess.Popen([sys.executable, "-m", "cardshoe.cli", "floor", "serve", "--config", str(config),
                             "--port-file", str(port_file)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    archiver: subprocess.Popen[str] | None = None
    holder = psycopg.connect(dsn)
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        base = f"http://127.0.0.1:{int(port_file.read_text())}"
        surv = {"Authorization": f"Bearer {TOKENS['surveillance']}"}
        table = {"Authorization": f"Bearer {TOKENS['T1']}"}
        span = {"since_ns": at(day, "06:00"), "until_ns": at(day, "06:00") + 86400 * 10**9, "limit": 10_000}
        before = httpx.get(f"{base}/rounds", params=span, headers=surv, timeout=60).json()
        assert len(before) == 40
        listed = json.loads(subprocess.run([sys.executable, "-m", "cardshoe.cli", "floor", "days", "list", "--config",
                                            str(config)], env=env, capture_output=True, text=True, check=True).stdout)
        today = DayRule("06:00", "UTC").day_of(time.time_ns())
        assert today in [p["day"] for p in listed["partitions"]]  # made ahead when the floor started

        # A transaction of surveillance's holds the day's partitions open: the archive's detach
        # waits for it, so the floor is seen ingesting and searching while the day is detaching.
        holder.execute("SELECT COUNT(*) FROM entries")
        out = tmp_path / "archive" / "day.sqlite"
        out.parent.mkdir()
        archiver = subprocess.Popen([sys.executable, "-m", "cardshoe.cli", "floor", "days", "archive", "--config",
                                     str(config), "--day", day, "--to", str(out)], env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        pending = f"entries_d{day.replace('-', '')}"
        with psycopg.connect(dsn, autocommit=True) as watch:
            deadline = time.monotonic() + 120
            while not watch.execute("SELECT i.inhdetachpending FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                                    " WHERE c.relname = %s", (pending,)).fetchone() == (True,):
                assert archiver.poll() is None and time.monotonic() < deadline, archiver.communicate()
                time.sleep(0.05)
        # Detaching: today's stream ships and is searched meanwhile.
        live = f"T1.{'1' * 12}"
        entries = day_stream(live, time.time_ns() - 60 * 10**9, 6, close=False, step_ns=1_000_000)
        shipped: list[int] = []
        for k in range(0, len(entries), 10):
            r = httpx.post(f"{base}/tables/{live}/entries", headers=table, timeout=60,
                           json={"entries": [e.to_json() for e in entries[k:k + 10]]})
            assert r.status_code == 200, r.text
            shipped.append(r.json()["high_water"])
        assert shipped[-1] == len(entries)
        assert archiver.poll() is None  # still waiting on the holder: the floor went on meanwhile
        holder.commit()
        stdout, stderr = archiver.communicate(timeout=300)
        assert archiver.returncode == 0, stderr
        assert json.loads(stdout)["entries"] == 40 * 5 + 1
        after = httpx.get(f"{base}/rounds", params=span, headers=surv, timeout=60).json()
        assert after == before
        got = httpx.get(f"{base}/tables/{live}/entries", headers=surv, timeout=60).json()
        assert [e["id"] for e in got] == list(range(1, len(entries) + 1))
        # Changed on disk: the search over that day is refused, naming the file.
        out.write_bytes(out.read_bytes() + b"\0")
        r = httpx.get(f"{base}/rounds", params=span, headers=surv, timeout=60)
        assert r.status_code == 409 and str(out) in r.json()["detail"]["message"], r.text
        listed = json.loads(subprocess.run([sys.executable, "-m", "cardshoe.cli", "floor", "days", "list", "--config",
                                            str(config)], env=env, capture_output=True, text=True, check=True).stdout)
        assert [(a["day"], a["file"]) for a in listed["archived"]] == [(day, str(out))]
    finally:
        holder.close()
        for p in (archiver, proc):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(10)


def test_the_floors_file_names_the_gaming_day_and_a_wrong_one_is_named(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from cardshoe import cli
    from cardshoe.floor.config import ConfigError, load_floor_config

    path = tmp_path / "floor.toml"
    path.write_text(f'[floor]\nsqlite = "{tmp_path / "f.sqlite"}"\nday_ends = "6am"\n')
    with pytest.raises(ConfigError, match="floor.day_ends"):
        load_floor_config(path)
    path.write_text(f'[floor]\nsqlite = "{tmp_path / "f.sqlite"}"\nday_ends = "06:00"\nzone = "Mars/Olympus"\n')
    with pytest.raises(ConfigError, match="floor.zone"):
        load_floor_config(path)
    path.write_text(f'[floor]\nsqlite = "{tmp_path / "f.sqlite"}"\nday_ends = "04:30"\nzone = "UTC"\ndays_ahead = 0\n')
    with pytest.raises(ConfigError, match="floor.days_ahead"):
        load_floor_config(path)
    path.write_text(f'[floor]\nsqlite = "{tmp_path / "f.sqlite"}"\nday_ends = "04:30"\nzone = "UTC"\n')
    assert cli.main(["floor", "days", "ahead", "--config", str(path)]) == 0
    assert "not partitioned" in json.loads(capsys.readouterr().out)["note"]
    assert cli.main(["floor", "days", "list", "--config", str(path)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert (listed["partitioned"], listed["day_ends"], listed["zone"]) == (False, "04:30", "UTC")
    assert cli.main(["floor", "days", "archive", "--config", str(path), "--day", "2020-01-01", "--to",
                     str(tmp_path / "x.sqlite")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SQLite" in err
