"""The journal's promises, from its documentation, on real SQLite (issue 16).

docs/api.md "The journal and replay": SQLite, WAL, `synchronous=FULL`, a frame acknowledged
only after its entry is committed. host/journal/store.py: errors are never swallowed, they
reach the caller and the journal remembers the first. host/daemon/service.py: if the journal
fails, the service refuses every further input. Failures are made by SQLite itself (a
trigger that aborts the insert, as a full disk or a constraint would), not by a mock. Each
test names the mutation it was shown to kill (`scripts/mutations.toml`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cardshoe.daemon.bus import EventBus
from cardshoe.daemon.core import TableCore, TableSetup
from cardshoe.daemon.service import FrameInput, ServiceFailed, TableService
from cardshoe.journal import Journal, append

BREAK = "CREATE TRIGGER broken BEFORE INSERT ON entries BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END"
MEND = "DROP TRIGGER broken"

HEARTBEAT = FrameInput(shoe=9, boot=3, seq=1, type=7, message={"type": "HEARTBEAT", "t_ms": 1, "dealt": 0, "outbox": 0},
                       raw=b"\x00frame\x00")


def test_the_journal_runs_in_wal_mode_with_full_synchronous_writes(tmp_path: Path) -> None:
    """docs/api.md: WAL, synchronous=FULL (every commit is on the disk before the ACK).
    Kills: synchronous=OFF or NORMAL (the fsync at commit dropped)."""
    with Journal(tmp_path / "j.sqlite") as journal:
        mode = journal.write(lambda c: c.execute("PRAGMA journal_mode").fetchone()[0])
        sync = journal.write(lambda c: c.execute("PRAGMA synchronous").fetchone()[0])
    assert str(mode).lower() == "wal"
    assert sync in (2, 3)  # FULL (2), or EXTRA (3), which is stricter still


def test_a_failing_write_reaches_its_caller_and_is_remembered(tmp_path: Path) -> None:
    """store.py: a callable's error reaches its caller, undoes only its own writes, and the
    journal remembers the first SQLite error. Kills: a failed write reported as done."""
    with Journal(tmp_path / "j.sqlite") as journal:
        journal.write(lambda c: append(c, "input", {"n": 1}, t_ns=1))
        journal.write(lambda c: c.execute(BREAK))
        with pytest.raises(sqlite3.Error, match="disk I/O error"):
            journal.write(lambda c: append(c, "input", {"n": 2}, t_ns=2))
        assert isinstance(journal.error, sqlite3.Error)
        journal.write(lambda c: c.execute(MEND))
        journal.write(lambda c: append(c, "input", {"n": 3}, t_ns=3))
        reader = journal.reader()
        assert [e.data()["n"] for e in reader.entries(("input",))] == [1, 3]
        reader.close()


def test_a_journal_failure_stops_the_service_and_is_never_swallowed(tmp_path: Path) -> None:
    """service.py: the input and what it derived are committed before the call returns; a
    journal failure raises ServiceFailed and every later input is refused (so no frame is
    acknowledged as if recorded), even once the journal would work again; the window is not
    written. Kills: a swallowed journal failure; a service that goes on after one."""
    with Journal(tmp_path / "j.sqlite") as journal:
        service = TableService(TableCore(TableSetup(name="t", game="three-card-poker", seats=7)), journal, EventBus())
        journal.write(lambda c: c.execute(BREAK))
        with pytest.raises(ServiceFailed):
            service.submit_frame(HEARTBEAT)
        journal.write(lambda c: c.execute(MEND))
        with pytest.raises(ServiceFailed):
            service.submit_input({"action": "nonsense"})
        with pytest.raises(ServiceFailed):
            service.submit_frame(HEARTBEAT)
        reader = journal.reader()
        assert reader.windows() == {}
        assert reader.count("frame") == 0 and reader.count("input") == 0
        reader.close()


def test_a_frame_and_its_window_are_committed_together(tmp_path: Path) -> None:
    """SPEC 3.4 item 5: the window is journaled in the same transaction as the frame that
    moved it. Kills: the window not written (a restart would reopen it)."""
    with Journal(tmp_path / "j.sqlite") as journal:
        service = TableService(TableCore(TableSetup(name="t", game="three-card-poker", seats=7)), journal, EventBus())
        service.submit_frame(HEARTBEAT)
        reader = journal.reader()
        assert reader.windows() == {9: (3, 1)}
        (entry,) = reader.entries(("frame",))
        assert (entry.shoe, entry.boot, entry.seq, entry.type) == (9, 3, 1, 7)
        reader.close()



def test_replay_finds_a_derived_entry_edited_or_missing(tmp_path: Path) -> None:
    """docs/api.md: `cardshoe replay` rebuilds every round from the journal and checks that
    every event and settlement comes out byte for byte the same. An event edited after the
    fact, or one deleted, is a mismatch. Kills: the body not compared; the count not compared."""
    from cardshoe.journal.replay import replay

    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        service = TableService(TableCore(TableSetup(name="t", game="three-card-poker", seats=7)), journal, EventBus())
        service.submit_input({"action": "nonsense"})  # refused, and the refusal is a derived event
        service.submit_input({"action": "nonsense again"})
    report, _ = replay(path)
    assert report.ok, report.mismatches
    conn = sqlite3.connect(path)
    first, second = (r[0] for r in conn.execute("SELECT id FROM entries WHERE kind = 'event' ORDER BY id"))
    conn.execute("UPDATE entries SET body = replace(body, 'nonsense again', 'nonsense, edited') WHERE id = ?", (second,))
    conn.commit()
    report, _ = replay(path)
    assert not report.ok and any(f"entry {second}" in m for m in report.mismatches), report.mismatches
    conn.execute("DELETE FROM entries WHERE id = ?", (second,))
    conn.commit()
    conn.close()
    report, _ = replay(path)
    assert not report.ok and any("holds 1 derived entries; replay derived 2" in m for m in report.mismatches), \
        report.mismatches
