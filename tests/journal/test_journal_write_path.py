"""The journal's WAL checkpoints (issue 15) run on a thread of their own, beside the
commits, never inside one (where SQLite runs them by default: in the COMMIT that crosses
1000 pages, before that frame's ACK and event). Real SQLite files, read back through a
second connection."""

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


def test_checkpoints_run_beside_the_commits_not_in_them(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        # SQLite's own checkpoint would run inside the COMMIT that crosses 1000 pages.
        assert journal.write(lambda c: c.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == 0
        big = "x" * 3000
        for i in range(250):  # > CHECKPOINT_COMMITS commits of about a page each
            journal.write(lambda c, i=i: append(c, "input", {"i": i, "pad": big}, t_ns=i))
        deadline = threading.Event()
        for _ in range(100):
            if journal.checkpoints:
                break
            deadline.wait(0.05)
        assert journal.checkpoints >= 1
    # Every commit is in the file after the journal is closed (the checkpoints lost nothing).
    assert len(_kinds_in_file(path)) == 250


def test_checkpoints_left_to_sqlite_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Journal, "checkpoint_beside", False)
    with Journal(tmp_path / "j.sqlite") as journal:
        assert journal.write(lambda c: c.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == 1000


def test_an_idle_journal_is_checkpointed_beside_a_few_commits(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        for i in range(3):  # far fewer than CHECKPOINT_COMMITS: only the idle rule applies
            journal.write(lambda c, i=i: append(c, "input", {"i": i}, t_ns=i))
        for _ in range(100):
            if journal.checkpoints:
                break
            threading.Event().wait(0.05)
        assert journal.checkpoints == 1
    assert len(_kinds_in_file(path)) == 3
