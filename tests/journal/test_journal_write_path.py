"""The journal's write path (issue 15): a blocking write with nothing queued commits on its
caller's thread; one made while writes are queued waits behind them; WAL checkpoints run
beside the commits, never inside one. Real SQLite files; durability is read back from disk
through a second connection, not taken from the journal's word."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from cardshoe.journal import Journal, append


def _kinds_in_file(path: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [str(r[0]) for r in conn.execute("SELECT body FROM entries ORDER BY id")]
    finally:
        conn.close()


def test_a_write_with_nothing_queued_commits_on_the_callers_thread(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        ran_on: list[str] = []

        def write(c: sqlite3.Connection) -> int:
            ran_on.append(threading.current_thread().name)
            return append(c, "input", {"n": 1}, t_ns=1)

        eid = journal.write(write)
        assert ran_on == [threading.current_thread().name]
        assert journal.inline_writes == 1
        # Committed when write() returns: another connection sees it at once.
        assert _kinds_in_file(path) == ['{"n":1}']
        assert eid == 1


def test_inline_off_queues_every_write_to_the_writer_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Journal, "inline", False)
    with Journal(tmp_path / "j.sqlite") as journal:
        ran_on: list[str] = []
        journal.write(lambda c: ran_on.append(threading.current_thread().name))
        assert ran_on == ["journal-writer"] and journal.inline_writes == 0


def test_a_write_made_while_others_are_queued_commits_after_them(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    gate = threading.Event()
    with Journal(path) as journal:
        blocker = journal.submit(lambda c: gate.wait(5))
        queued = [journal.submit(lambda c, i=i: append(c, "input", {"q": i}, t_ns=i)) for i in range(3)]
        done: list[int] = []
        t = threading.Thread(target=lambda: done.append(journal.write(lambda c: append(c, "input", {"w": 1}, t_ns=9))))
        t.start()
        t.join(0.3)
        assert t.is_alive(), "the write overtook the queued ones"
        gate.set()
        t.join(5)
        blocker.result(5)
        assert [f.result(5) for f in queued] == [1, 2, 3]
        assert done == [4]
        assert journal.inline_writes == 0
    assert _kinds_in_file(path) == ['{"q":0}', '{"q":1}', '{"q":2}', '{"w":1}']


def test_a_failing_inline_write_raises_to_its_caller_and_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        def bad(c: sqlite3.Connection) -> None:
            append(c, "input", {"half": 1}, t_ns=1)
            raise ValueError("refused")

        with pytest.raises(ValueError, match="refused"):
            journal.write(bad)
        journal.write(lambda c: append(c, "input", {"ok": 1}, t_ns=2))
    assert _kinds_in_file(path) == ['{"ok":1}']


def test_writes_from_many_threads_are_all_committed_once(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        def worker(k: int) -> None:
            for i in range(40):
                journal.write(lambda c, i=i: append(c, "input", {"k": k, "i": i}, t_ns=i))
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    bodies = _kinds_in_file(path)
    assert len(bodies) == 160 and len(set(bodies)) == 160


def test_checkpoints_run_beside_the_commits_not_in_them(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        # SQLite's own checkpoint would run inside the COMMIT that crosses 1000 pages.
        assert journal.write(lambda c: c.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == 0
        big = "x" * 3000
        for i in range(150):  # > CHECKPOINT_COMMITS commits of about a page each
            journal.write(lambda c, i=i: append(c, "input", {"i": i, "pad": big}, t_ns=i))
        deadline = threading.Event()
        for _ in range(100):
            if journal.checkpoints:
                break
            deadline.wait(0.05)
        assert journal.checkpoints >= 1
    assert len(_kinds_in_file(path)) == 150


def test_checkpoints_left_to_sqlite_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Journal, "checkpoint_beside", False)
    with Journal(tmp_path / "j.sqlite") as journal:
        assert journal.write(lambda c: c.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == 1000
