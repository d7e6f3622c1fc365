"""Issue 25 item 3: the floor ships each gaming day as its own stream, in order.

A linked table on day files (an injected clock: no hour is waited for) plays a progressive
round, the day rolls over, it plays another; the floor holds each day file, entry for entry,
under `T1.{journal_id}`, the closed day complete, and the link's pool took both rounds. A
floor that cannot take the closed day's end gets it first, and only then the new day."""

from __future__ import annotations

import sys
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "daemon"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cardshoe.floor.store import FloorStore  # noqa: E402
from cardshoe.floor.testnet import Relay  # noqa: E402
from cardshoe.journal import JournalReader  # noqa: E402
from daemon_harness import Table, wait_for  # noqa: E402
from test_daemon_gaming_day import DayTime  # noqa: E402
from test_floor_table_e2e import FLOOR_TOKEN, MTCP, RESET, START, floor, make_table, play  # noqa: E402,F401


def _history(path: Path) -> list[tuple[int, str | None]]:
    with JournalReader(path) as reader:
        return [(e.id, e.chain) for e in reader.entries()]


def _journal_id(path: Path) -> str:
    with JournalReader(path) as reader:
        found = reader.meta("journal_id")
    assert found is not None
    return found


@pytest.mark.parametrize("store_target", ["sqlite"], indirect=True)
def test_each_gaming_day_is_its_own_stream_on_the_floor_in_order(
        make_table: Any, floor: tuple[FloorStore, Relay], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    store, relay = floor
    monkeypatch.setenv("CARDSHOE_FLOOR_TOKEN", FLOOR_TOKEN)
    arrived: list[tuple[str, int]] = []  # (stream, the last id of a batch) in the order the floor took them
    ingest = store.ingest
    held: dict[str, Any] = {"stream": None, "refused": 0}  # a stream the floor cannot take yet
    gate = threading.Event()

    def watched(table_: str, entries: Any, **kw: Any) -> int:
        if table_ == held["stream"] and not gate.is_set():
            held["refused"] += 1
            raise RuntimeError("the floor's store is busy")  # a 500: the shipper tries again
        if entries:
            arrived.append((table_, max(e.id for e in entries)))
        return ingest(table_, entries, **kw)

    monkeypatch.setattr(store, "ingest", watched)
    clock = DayTime(datetime(2026, 11, 27, 5, 50, tzinfo=timezone.utc))
    table: Table = make_table(MTCP, 7, floor_url=relay.url, floor_link="mega", jackpot_reset=RESET,
                              limits=(("progressive", 500, 500),), journal_dir=tmp_path / "days",
                              day_ends="06:00", day_zone="UTC",
                              daemon_kwargs={"clock": clock.wall, "monotonic": clock.mono})
    table.power_on_and_load()
    wait_for(lambda: table.daemon.floor is not None and table.daemon.floor.online, 15, "the floor online")
    r1 = play(table, "4c 7d Jh", "Kd 6c 2h", "3s 8c", "4d", progressive=True)["rid"]
    table.ok("POST", f"/rounds/{r1}/settle", json={})
    old = table.daemon.config.journal

    # The floor cannot take the closed day's end: the new day's stream must not start meanwhile.
    held["stream"] = f"T1.{_journal_id(old)}"
    clock.advance(15 * 60 * 10**9)
    wait_for(lambda: table.daemon.status()["gaming_day"]["day"] == "2026-11-27", 10, "the rollover")
    new = table.daemon.config.journal
    assert new != old
    wait_for(lambda: held["refused"] >= 2, 30, "the closed day's end offered to the floor")
    nxt = table.daemon.shipper
    assert nxt is not None and nxt._thread is None and not table.daemon.days.finishing[-1].finished.is_set()
    assert store.stream(f"T1.{_journal_id(new)}") is None
    gate.set()
    wait_for(lambda: store.high_water(f"T1.{_journal_id(old)}") == _history(old)[-1][0], 30, "the old day shipped")
    r2 = play(table, "9h 8h 7h", "Kd 6c 2c", "6h 5h", "4d", progressive=True)["rid"]
    table.ok("POST", f"/rounds/{r2}/settle", json={})
    wait_for(lambda: store.high_water(f"T1.{_journal_id(new)}") == _history(new)[-1][0], 30, "the new day shipped")

    # Each day's file on the floor as written, under its own stream; the link took both rounds.
    for path in (old, new):
        assert [(e.id, e.chain) for e in store.entries(f"T1.{_journal_id(path)}", limit=100_000)] == _history(path)
    assert [h["table"] for h in store.history("mega")] == [f"T1.{_journal_id(old)}", f"T1.{_journal_id(new)}"]
    assert r1 != r2
    # In order: the closed day's last entry reached the floor before any entry of the next day.
    old_stream, new_stream = f"T1.{_journal_id(old)}", f"T1.{_journal_id(new)}"
    last_old = arrived.index((old_stream, _history(old)[-1][0]))
    first_new = next(i for i, (t, _) in enumerate(arrived) if t == new_stream)
    assert last_old < first_new, arrived
