"""A linked table's journal restored from a backup (issue 21 item 3), end to end: a real table
daemon (pty, firmware codec, journal) and a real floor over HTTP, on SQLite and PostgreSQL.

Backed up mid-run, the table deals on (a Straight Flush paid from the pool), the journal is
restored from the backup, and the table deals on again (a Royal Flush). The documented
procedure (docs/floor.md, "A restored journal"): started without `--journal-restored`, the floor
refuses the journal and both the floor and the table show the alarm; started with it, the
journal gets a new id and the floor continues it as a stream of its own from the last entry
both hold. Every entry of both histories is then on the floor once, and the pool is what the
rules make of every round of both: Megalink 4.4, Straight Flush 10% and Royal Flush 100% of
the pool as displayed, which holds each round's own 5% contribution (25 of 500, reading 58)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "daemon"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cardshoe.floor.store import FloorStore  # noqa: E402
from cardshoe.floor.testnet import Relay  # noqa: E402
from cardshoe.journal import JournalReader  # noqa: E402
from daemon_harness import DECK_ID, Table, wait_for  # noqa: E402
from floor_server import FLOOR_PUBKEY  # noqa: E402
from test_floor_table_e2e import (FLOOR_TOKEN, MTCP, RESET, START, floor, make_table, play,  # noqa: E402,F401
                                  shipped, stream)
from test_floor_void_sent import cli_audit  # noqa: E402


def history(path: Path) -> list[tuple[int, str | None]]:
    with JournalReader(path) as reader:
        return [(e.id, e.chain) for e in reader.entries()]


def settle(table: Table, rid: str) -> dict[str, Any]:
    return table.settle_linked(rid)["settlement"]


def test_a_restored_linked_table_loses_nothing_on_the_floor_and_the_pool_is_exact(
        make_table: Any, floor: tuple[FloorStore, Relay], store_target: tuple[str, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, relay = floor
    monkeypatch.setenv("CARDSHOE_FLOOR_TOKEN", FLOOR_TOKEN)
    table: Table = make_table(MTCP, 7, floor_url=relay.url, floor_link="mega", jackpot_reset=RESET,
                              limits=(("progressive", 500, 500),), floor_public_key=FLOOR_PUBKEY.hex())
    table.power_on_and_load()
    wait_for(lambda: table.daemon.floor is not None and table.daemon.floor.online, 15, "the floor online")
    path = table.config.journal
    r1 = play(table, "4c 7d Jh", "Kd 6c 2h", "3s 8c", "4d", progressive=True)["rid"]
    settle(table, r1)
    old_stream = stream(table)

    # Backed up mid-run, with the daemon running (SQLite's online backup: a consistent copy).
    backup = tmp_path / "backup.sqlite"
    src, dst = sqlite3.connect(path), sqlite3.connect(backup)
    src.backup(dst)
    src.close()
    dst.close()
    backed_up = history(backup)[-1]

    # The table deals on: a Straight Flush takes 10% of the pool as displayed.
    r2 = play(table, "9h 8h 7h", "Kd 6c 2c", "6h 5h", "4d", progressive=True)["rid"]
    paid_sf = [w["paid"] for s in settle(table, r2)["seats"] for w in s["wagers"] if w["wager"] == "progressive"]
    r3 = play(table, "4c 7d Jh", "Kd 6c 2h", "3s 8c", "4d", progressive=True)["rid"]
    settle(table, r3)
    wait_for(lambda: shipped(store, table), 30, "the journal shipped")
    lost = history(path)  # the history the restore throws away at the table
    table.kill_daemon()

    # Restored from the backup, started as if nothing happened: refused, alarmed on both sides.
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    backup.rename(path)
    table.start_daemon()
    wait_for(lambda: any(a["type"] == "floor_journal" for a in table.ok("GET", "/status")["alarms"]), 30,
             "the table to show the floor's alarm")
    (alarm,) = store.alarms(old_stream, open_only=True)
    assert alarm["kind"] == "restored" and "--journal-restored" in alarm["message"]
    assert [e.id for e in store.entries(old_stream, limit=100_000)] == [i for i, _ in lost]  # nothing overwritten
    table.kill_daemon()

    # The procedure: `cardshoe run --journal-restored`, then a new shoe is loaded.
    table.start_daemon(journal_restored=True)
    new_stream = stream(table)
    assert new_stream != old_stream
    wait_for(lambda: store.stream(new_stream) is not None, 30, "the floor to open the restored journal's stream")
    info = store.stream(new_stream)
    assert info is not None and info["parent"] == old_stream and info["base_id"] >= backed_up[0]
    assert store.alarms(old_stream, open_only=True) == []
    r = table.client.post("/shoe/load", json={"deck_id": DECK_ID})
    assert r.status_code == 202, r.text
    shoe_no = int(r.json()["shoe_no"])
    wait_for(lambda: table.shoe.state.shoe_no == shoe_no, what="NEW_SHOE at the shoe")
    table.shoe.wait_acked()
    wait_for(lambda: table.daemon.status()["shoes"].get(str(table.shoe.serial), {}).get("shoe_no") == shoe_no,
             what="the daemon to record the shoe as loaded")
    wait_for(lambda: not any(a["type"] == "floor_journal" for a in table.ok("GET", "/status")["alarms"]), 30,
             "the table's alarm to clear")
    r4 = play(table, "As Ks Qs", "Kd 6c 2h", "Js Ts", "4d", progressive=True)["rid"]
    paid_royal = [w["paid"] for s in settle(table, r4)["seats"] for w in s["wagers"] if w["wager"] == "progressive"]
    wait_for(lambda: shipped(store, table), 30, "the restored journal shipped")

    # Every entry of both histories on the floor, once, as written.
    ours = history(path)
    assert [(e.id, e.chain) for e in store.entries(old_stream, limit=100_000)] == lost
    whole = [(e.id, e.chain) for e in store.entries(new_stream, limit=100_000, lineage=True)]
    assert whole == ours
    base = int(info["base_id"])
    assert [(e.id, e.chain) for e in store.entries(new_stream, limit=100_000)] == ours[base:]
    assert lost[:base] == ours[:base]
    # The pool, from the rules, over the four rounds paid in the order the floor took them.
    pool = START + 25                       # r1: nothing, 25 contributed
    pool += 25
    assert paid_sf == [pool // 10]          # r2: Straight Flush, 10% of the pool as displayed
    pool -= pool // 10
    pool += 25                              # r3: nothing
    pool += 25
    assert paid_royal == [pool]             # r4 (after the restore): Royal Flush, 100%
    assert store.pool("mega")["pool"] == RESET and store.pool("mega")["rounds"] == 4
    assert [(h["table"], h["round_id"]) for h in store.hits("mega")] == [(old_stream, r2), (new_stream, r4)]
    code, report = cli_audit(store_target, table)
    assert report["floor"]["problems"] == [] and report["floor"]["rounds"] == 4, report["floor"]["problems"]
