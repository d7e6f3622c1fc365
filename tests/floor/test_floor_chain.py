"""The floor keeps every table's hash chain (issue 21 item 3): a gap, a broken link, an entry
changed after it was shipped, or a journal restored below the floor's copy is refused with an
alarm (the floor's page and, in the refusal, the table's), and no round of that journal is
settled until a person looks. A restored journal goes on as a stream of its own that shares
the old one's entries up to the last both hold. On SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest
from fastapi.testclient import TestClient

from cardshoe.floor.progressive import LinkSettings
from cardshoe.floor.shipper import shipped
from cardshoe.journal import Journal, JournalReader, append
from cardshoe.floor.store import FloorStore, JournalRefused
from floor_chain import genesis
from floor_journal import RESET, MiniTable, wire
from floor_server import TOKENS
from floor_server import app as floor_app

NOTHING = ("4c 7d Jh", "Kd 6c 2h", "3s 8c")


@pytest.fixture
def table(tmp_path: Path) -> Iterator[MiniTable]:
    t = MiniTable(tmp_path / "T1.sqlite")
    t.play(*NOTHING)
    yield t
    t.close()


def refused(store: FloorStore, table: MiniTable, entries: list, head: tuple[int, str | None] | None = None) -> str:
    with pytest.raises(JournalRefused) as err:
        store.ingest(table.stream, entries, head=head)
    return err.value.kind


def test_a_gap_a_break_and_an_entry_changed_after_shipping_are_refused_with_an_alarm(
        store: FloorStore, table: MiniTable) -> None:
    entries = table.entries()
    n = len(entries)
    assert store.ingest(table.stream, entries[:5]) == 5
    # A gap: entries 6 and 7 missing.
    assert refused(store, table, entries[7:]) == "gap"
    # A break: entry 6 edited before shipping, its chain value left as written.
    edited = replace(entries[5], body=entries[5].body.replace("1", "2", 1))
    assert edited.body != entries[5].body
    assert refused(store, table, [edited] + entries[6:]) == "break"
    # Entry 3 sent again, changed (a journal edited after shipping, its chain made again).
    assert refused(store, table, [replace(entries[2], chain="0" * 64)]) == "diverged"
    assert store.high_water(table.stream) == 5  # nothing of any refused batch was kept
    kinds = [a["kind"] for a in store.alarms(table.stream, open_only=True)]
    assert kinds == ["gap", "break", "diverged"]
    assert [a["kind"] for a in store.tables()[0]["alarms"]] == kinds
    # The whole journal as it is, sent in order, is taken; the alarms stay until cleared.
    assert store.ingest(table.stream, entries) == n
    assert store.clear_alarm(table.stream, 1, "sup-1") and not store.clear_alarm(table.stream, 1, "sup-1")
    assert [a["kind"] for a in store.alarms(table.stream, open_only=True)] == ["break", "diverged"]


def test_a_journal_restored_below_the_floors_copy_is_refused_and_continues_as_its_own_stream(
        store: FloorStore, tmp_path: Path) -> None:
    store.configure_link(LinkSettings("mega", RESET, 50_000))
    t = MiniTable(tmp_path / "T1.sqlite")
    t.control.settle(t.play(*NOTHING, progressive=False), None)
    backup = tmp_path / "backup.sqlite"
    src = sqlite3.connect(t.path)
    dst = sqlite3.connect(backup)
    src.backup(dst)  # the online backup API: a consistent copy of a journal in use
    src.close()
    dst.close()
    backed_up = t.head()
    t.control.settle(t.play(*NOTHING, progressive=False), None)
    lost = t.entries()  # the history the restore loses at the table: all on the floor
    assert store.ingest(t.stream, lost, head=t.head()) == lost[-1].id
    t.close()
    # The journal restored from the backup, a daemon started on it: it writes on.
    for suffix in ("", "-wal", "-shm"):
        Path(f"{t.path}{suffix}").unlink(missing_ok=True)
    backup.rename(t.path)
    restored = Journal(t.path)
    restored.write(lambda c: append(c, "daemon", {"type": "daemon_started"}, t_ns=5))
    with JournalReader(t.path) as reader:
        head = reader.top()
        assert head is not None and head.id == backed_up[0] + 1
        new_entries = [e for e in reader.entries(after_id=backed_up[0])]
    # The shipper sends nothing (the floor's mark is above the journal's top), only its head.
    assert refused(store, t, [], head=(head.id, head.chain)) == "restored"
    kind = refused(store, t, [shipped(e) for e in new_entries], head=(head.id, head.chain))
    assert kind == "restored"
    (alarm,) = store.alarms(t.stream, open_only=True)
    assert "restored from a backup" in alarm["message"] and "--journal-restored" in alarm["message"]
    # `cardshoe run --journal-restored`: a new id, a stream of its own from the last entry both hold.
    old, new, top = restored.restored()
    child = f"T1.{new}"
    assert store.chain_at(t.stream, backed_up[0]) == backed_up[1]
    made = store.fork(child, t.stream, backed_up[0], str(backed_up[1]))
    assert made["high_water"] == backed_up[0]
    assert store.alarms(t.stream, open_only=True) == []  # cleared, naming the new stream
    assert store.alarms(t.stream)[0]["cleared_by"] == f"continued as {child} from entry {backed_up[0]}"
    with JournalReader(t.path) as reader:
        ours = [shipped(e) for e in reader.entries(after_id=backed_up[0])]
    assert store.ingest(child, ours) == ours[-1].id
    # Every entry of both histories is held once: the old stream whole, the new one after the fork.
    assert [e.id for e in store.entries(t.stream, limit=10_000)] == [e.id for e in lost]
    assert [e.chain for e in store.entries(child, limit=10_000)] == [e.chain for e in ours]
    whole = store.entries(child, limit=10_000, lineage=True)
    assert [e.id for e in whole] == list(range(1, ours[-1].id + 1))
    assert [e.chain for e in whole[:backed_up[0]]] == [e.chain for e in lost[:backed_up[0]]]
    restored.close()
    assert old == t.stream.split(".")[1] and top == backed_up[0] + 1


def test_a_fork_must_continue_the_floors_copy(store: FloorStore, table: MiniTable) -> None:
    entries = table.entries()
    store.ingest(table.stream, entries)
    with pytest.raises(Exception) as err:
        store.fork("T1.0123456789ab", table.stream, 3, "0" * 64)
    assert getattr(err.value, "field", None) == "chain"
    made = store.fork("T1.0123456789ab", table.stream, 0, genesis(table.stream))
    assert made["high_water"] == 0


def test_the_api_shows_the_alarm_to_the_table_and_the_floor_and_settles_nothing_of_that_journal(
        store: FloorStore, table: MiniTable) -> None:
    store.configure_link(LinkSettings("mega", RESET, 50_000))
    app = floor_app(store)
    t1 = TestClient(app, headers={"Authorization": f"Bearer {TOKENS['T1']}"})
    entries = table.entries()
    r = t1.post(f"/tables/{table.stream}/entries", json={"entries": wire(entries[:3] + entries[4:])})
    assert r.status_code == 409 and r.json()["detail"]["alarm"] == "gap", r.text
    assert t1.get(f"/tables/{table.stream}/high-water").json()["alarms"][0]["kind"] == "gap"
    pit = TestClient(app, headers={"Authorization": f"Bearer {TOKENS['pit']}"})
    assert [a["kind"] for a in pit.get("/alarms").json()] == ["gap"]
    assert pit.get("/floor").text.count('id="alarms"') == 1
    # The journal shipped whole afterwards; its round is still not settled while the alarm is open.
    rid = table.control.round_list(1)[0]["round_id"]
    entry = table.send(rid)
    r = t1.post("/links/mega/settle", json={"table": table.stream, "round_id": rid, "entry": entry,
                                            "entries": wire(table.entries())})
    assert r.status_code == 409 and r.json()["detail"]["error"] == "StreamAlarmed", r.text
    sup = TestClient(app, headers={"Authorization": f"Bearer {TOKENS['supervisor']}"})
    assert sup.post(f"/tables/{table.stream}/alarms/1/clear", json={"by": "sup-1"}).status_code == 200
    r = t1.post("/links/mega/settle", json={"table": table.stream, "round_id": rid, "entry": entry})
    assert r.status_code == 200, r.text


def test_a_store_of_schema_1_is_upgraded_and_its_streams_are_anchored_at_their_next_entry(
        tmp_path: Path, table: MiniTable) -> None:
    path = tmp_path / "old-floor.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE floor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO floor_meta VALUES ('schema', '1');
        CREATE TABLE floor_tables (name TEXT PRIMARY KEY, link TEXT, game TEXT, hwm BIGINT NOT NULL,
            seen_ns BIGINT NOT NULL, shoe BIGINT, current_round TEXT, open_flags TEXT NOT NULL);
        CREATE TABLE entries (table_name TEXT NOT NULL, entry_id BIGINT NOT NULL, t_ns BIGINT NOT NULL,
            kind TEXT NOT NULL, shoe BIGINT, boot BIGINT, seq BIGINT, type BIGINT, round_id TEXT, body TEXT NOT NULL,
            raw BYTEA, received_ns BIGINT NOT NULL, PRIMARY KEY (table_name, entry_id));
        CREATE TABLE assignments (link TEXT NOT NULL, seq BIGINT NOT NULL, table_name TEXT NOT NULL,
            round_id TEXT NOT NULL, digest TEXT NOT NULL, stakes BIGINT NOT NULL, contribution BIGINT NOT NULL,
            carry_before BIGINT NOT NULL, carry_after BIGINT NOT NULL, pool_before BIGINT NOT NULL,
            pool BIGINT NOT NULL, pool_after BIGINT NOT NULL, body TEXT NOT NULL, t_ns BIGINT NOT NULL,
            PRIMARY KEY (link, seq), UNIQUE (table_name, round_id));
    """)
    entries = table.entries()
    for e in entries[:4]:  # shipped before the chain: no chain values held
        conn.execute("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                     (table.stream, e.id, e.t_ns, e.kind, e.shoe, e.boot, e.seq, e.type, e.round_id, e.body, e.raw))
    conn.execute("INSERT INTO floor_tables VALUES (?, NULL, NULL, 4, 0, NULL, NULL, '{}')", (table.stream,))
    conn.commit()
    conn.close()
    store = FloorStore.sqlite(path)
    try:
        assert store.ingest(table.stream, entries[4:]) == entries[-1].id  # entry 5 is the anchor
        with pytest.raises(JournalRefused):  # from the anchor on, every link is checked
            store.ingest(table.stream, [replace(e, chain="1" * 64) for e in table.entries(after=entries[-1].id)]
                         or [replace(entries[-1], id=entries[-1].id + 1, chain="1" * 64)])
    finally:
        store.close()
