"""The journal over real SQLite files: WAL, one writer, drain on close, errors surface."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from cardshoe.journal import Journal, JournalClosed, JournalError, JournalReader, append, canonical_json, set_window


def test_canonical_json_is_key_sorted_and_compact() -> None:
    assert canonical_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'


def test_entries_are_committed_in_order_and_readable_read_only(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        ids = [journal.write(lambda c, i=i: append(c, "input", {"n": i}, t_ns=1000 + i)) for i in range(5)]
        assert ids == sorted(ids)
        reader = journal.reader()
        got = [e.data()["n"] for e in reader.entries(("input",))]
        assert got == [0, 1, 2, 3, 4]
        assert reader.count("input") == 5
        # A read-only connection cannot write.
        with pytest.raises(sqlite3.OperationalError):
            reader._conn.execute("INSERT INTO meta VALUES ('x', 'y')")
        reader.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_close_drains_queued_writes_and_is_idempotent(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    futures = [journal.submit(lambda c, i=i: append(c, "event", {"i": i}, t_ns=i)) for i in range(300)]
    journal.close()
    journal.close()
    assert all(f.done() and f.exception() is None for f in futures)
    with JournalReader(tmp_path / "j.sqlite") as reader:
        assert reader.count("event") == 300
    with pytest.raises(JournalClosed):
        journal.submit(lambda c: None)


def test_a_failing_write_raises_to_its_caller_and_spares_its_batch(tmp_path: Path) -> None:
    gate = threading.Event()
    with Journal(tmp_path / "j.sqlite") as journal:
        # Hold the writer so the next three writes share one batch.
        blocker = journal.submit(lambda c: gate.wait(5))
        ok1 = journal.submit(lambda c: append(c, "input", {"ok": 1}, t_ns=1))
        bad = journal.submit(lambda c: append(c, "nonsense", {}, t_ns=2))
        ok2 = journal.submit(lambda c: append(c, "input", {"ok": 2}, t_ns=3))
        gate.set()
        blocker.result(5)
        assert ok1.result(5) and ok2.result(5)
        with pytest.raises(ValueError, match="kind"):
            bad.result(5)

        def half_then_fail(c: sqlite3.Connection) -> None:
            append(c, "input", {"half": True}, t_ns=4)
            c.execute("INSERT INTO no_such_table VALUES (1)")

        with pytest.raises(sqlite3.OperationalError):
            journal.write(half_then_fail)
        assert isinstance(journal.error, sqlite3.OperationalError)
        reader = journal.reader()
        assert [e.data() for e in reader.entries(("input",))] == [{"ok": 1}, {"ok": 2}]


def test_epoch_and_window_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        assert journal.start_epoch(floor=0) == 1
        journal.write(lambda c: set_window(c, 7, 3, 10))
        journal.write(lambda c: set_window(c, 7, 3, 11))
    with Journal(path) as journal:
        assert journal.start_epoch(floor=0) == 2
        assert journal.start_epoch(floor=1000) == 1000  # never below the floor (unix seconds)
        assert journal.start_epoch() > 1_700_000_000
        assert journal.counter("shoe_no") == 1
        assert journal.counter("shoe_no") == 2
        assert journal.reader().windows() == {7: (3, 11)}


def test_unreadable_journal_is_a_journal_error(tmp_path: Path) -> None:
    with pytest.raises(JournalError):
        JournalReader(tmp_path / "missing.sqlite")
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(JournalError):
        JournalReader(bad)
