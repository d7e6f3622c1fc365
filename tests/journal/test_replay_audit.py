"""`cardshoe replay` audits without touching (issue 10 item 7).

The journal is opened read-only with nothing created beside it, SQLite's integrity check
runs first, and the exit status is 0 identical / 1 different / 2 unreadable or corrupt,
always with a one-line reason and never a traceback. Journals here are real SQLite files
written by a real daemon (its serial port absent: the journal is all that matters).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from cardshoe.daemon.config import TableConfig
from cardshoe.daemon.daemon import Daemon
from cardshoe.journal import Journal, append
from cardshoe.journal import replay as replay_cli

PAD_ENTRIES = 400


def _make_journal(tmp_path: Path) -> Path:
    """A journal as a daemon leaves it (setup input, derived event, observations), then padding
    observations so the entries table spans many pages."""
    path = tmp_path / "j" / "journal.sqlite"
    config = TableConfig(port=str(tmp_path / "no-such-tty"), game="three-card-poker", seats=7, name="AUD",
                         journal=path)
    daemon = Daemon(config, keys={}.get)
    daemon.start()
    daemon.stop()
    with Journal(path) as journal:
        for i in range(PAD_ENTRIES):
            journal.write(lambda c, i=i: append(c, "link", {"type": "padding", "i": i, "text": "x" * 200}, t_ns=i))
    return path


def _run(path: Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = replay_cli.main([str(path), *extra])
    return status, out.getvalue(), err.getvalue()


def _listing(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir()}


def test_replay_of_a_closed_journal_creates_nothing_beside_it_and_says_identical(tmp_path: Path) -> None:
    path = _make_journal(tmp_path)
    before = _listing(path.parent)
    assert not Path(f"{path}-wal").exists()
    status, out, err = _run(path)
    assert status == 0, err
    assert out.splitlines()[0].startswith("identical: ")
    assert _listing(path.parent) == before  # no -wal, no -shm, the file untouched


def test_replay_of_a_live_journal_creates_nothing_and_reads_what_is_in_its_wal(tmp_path: Path) -> None:
    path = _make_journal(tmp_path)
    baseline = json.loads(_run(path, "--json")[1])["link_events"]
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    append(writer, "link", {"type": "in_wal"}, t_ns=1)  # chained as the daemon's writer chains it
    try:
        assert Path(f"{path}-wal").exists() and Path(f"{path}-shm").exists()
        names = set(os.listdir(path.parent))
        status, out, err = _run(path, "--json")
        assert status == 0, err
        assert set(os.listdir(path.parent)) == names
        assert json.loads(out)["link_events"] == baseline + 1  # the entry only in the -wal is read
    finally:
        writer.close()


def test_a_copied_journal_with_its_wal_but_no_shm_is_read_from_a_private_copy(tmp_path: Path) -> None:
    path = _make_journal(tmp_path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    append(writer, "link", {"type": "in_wal"}, t_ns=1)  # chained as the daemon's writer chains it
    copy = tmp_path / "copied"
    copy.mkdir()
    # As a journal copied off a running table PC: the database and its -wal, no -shm.
    shutil.copyfile(path, copy / "journal.sqlite")
    shutil.copyfile(f"{path}-wal", copy / "journal.sqlite-wal")
    writer.close()
    before = _listing(copy)
    status, out, err = _run(copy / "journal.sqlite", "--json")
    assert status == 0, err
    assert json.loads(out)["link_events"] == json.loads(_run(path, "--json")[1])["link_events"]
    assert _listing(copy) == before


def _corrupt_page(path: Path, table: str) -> None:
    conn = sqlite3.connect(path)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    if table == "entries":
        # A leaf in the middle of the entries, not the root: the rows themselves.
        pages = conn.execute("SELECT COUNT(*) FROM dbstat WHERE name = 'entries' AND pagetype = 'leaf'").fetchone()
        assert pages[0] > 4
        root = conn.execute("SELECT pageno FROM dbstat WHERE name = 'entries' AND pagetype = 'leaf'"
                            " ORDER BY pageno LIMIT 1 OFFSET 3").fetchone()[0]
    conn.close()
    with open(path, "r+b") as f:
        f.seek((root - 1) * page_size + 8)
        f.write(bytes([0xA5]) * 64)


def test_a_corrupt_meta_page_is_exit_2_with_one_line_not_identical(tmp_path: Path) -> None:
    path = _make_journal(tmp_path)
    _corrupt_page(path, "meta")
    status, out, err = _run(path)
    assert status == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "corrupt" in err and "Traceback" not in err


def test_corrupt_entry_pages_are_exit_2_with_one_line(tmp_path: Path) -> None:
    path = _make_journal(tmp_path)
    _corrupt_page(path, "entries")
    status, _, err = _run(path)
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("damage", ["text", "truncated", "empty", "directory"])
def test_what_is_not_a_journal_is_exit_2_with_one_line(tmp_path: Path, damage: str) -> None:
    path = _make_journal(tmp_path)
    if damage == "text":
        path.write_text("round,seat,card\n1,2,Ah\n")
    elif damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2 + 100])
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.unlink()
        path.mkdir()
    status, out, err = _run(path)
    assert status == 2, out
    assert len(err.strip().splitlines()) == 1 and err.startswith("cardshoe replay: "), err


def test_the_command_line_never_prints_a_traceback(tmp_path: Path) -> None:
    path = _make_journal(tmp_path)
    _corrupt_page(path, "entries")
    done = subprocess.run([sys.executable, "-m", "cardshoe.cli", "replay", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_difference_is_exit_1_and_its_first_line_says_so(tmp_path: Path) -> None:
    path = _make_journal(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE entries SET body = replace(body, '\"seats\":7', '\"seats\":6') WHERE kind = 'event'")
    conn.commit()
    conn.close()
    status, out, _ = _run(path)
    assert status == 1
    # The edited event breaks the hash chain (issue 21 item 3) and differs from what replay derives.
    assert out.splitlines()[0].startswith("DIFFERENT: 2 differences")
    assert sum("MISMATCH chain: entry" in line for line in out.splitlines()) == 1


def test_a_reader_of_a_closed_journal_creates_nothing_beside_it_while_it_reads(tmp_path: Path) -> None:
    """JournalReader's promise (docs: `cardshoe replay` is a read-only audit): nothing is
    created beside a closed journal, not even while it is open (a -wal and -shm made and
    removed again at close would still be writes beside the journal, and fail on read-only
    media). Kills: a closed journal opened as a writer would open it."""
    from cardshoe.journal.store import JournalReader

    path = _make_journal(tmp_path)
    before = _listing(path.parent)
    with JournalReader(path) as reader:
        assert reader.integrity_check() == []
        assert sum(1 for _ in reader.entries()) > PAD_ENTRIES
        assert _listing(path.parent) == before
    assert _listing(path.parent) == before
