"""The journal's hash chain (issue 21 item 3): each entry sealed to the one before it, checked
by `cardshoe replay`; an old journal (schema 1) upgraded with a note of what the chain cannot
vouch for; a restored journal's new id with the chain unbroken.

The chain values are recomputed here from the chain's written definition (SHA-256 of the JSON
array [prev, id, t_ns, kind, shoe, boot, seq, type, round_id, body, raw_sha256], the first
entry following SHA-256("cardshoe.journal.chain/1\\0" + the journal's first id)), not with the
code under test."""

from __future__ import annotations

import hashlib
import io
import json
import sqlite3
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from cardshoe.journal import Journal, JournalReader, append
from cardshoe.journal import replay as replay_cli


def _journal(path: Path, n: int = 6) -> Path:
    with Journal(path) as journal:
        for i in range(n):
            journal.write(lambda c, i=i: append(c, "link", {"type": "padding", "i": i, "é": "ü"}, t_ns=1000 + i,
                                                raw=bytes([i]) if i % 2 else None, shoe=7 if i == 3 else None))
    return path


def _expected_chain(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    genesis_id = conn.execute("SELECT value FROM meta WHERE key = 'chain_genesis'").fetchone()[0]
    prev = hashlib.sha256(b"cardshoe.journal.chain/1\x00" + genesis_id.encode()).hexdigest()
    out = []
    for r in conn.execute("SELECT id, t_ns, kind, shoe, boot, seq, type, round_id, body, raw FROM entries ORDER BY id"):
        raw = None if r[9] is None else hashlib.sha256(bytes(r[9])).hexdigest()
        text = json.dumps([prev, *r[:9], raw], separators=(",", ":"), ensure_ascii=False)
        prev = hashlib.sha256(text.encode()).hexdigest()
        out.append(prev)
    conn.close()
    return out


def _replay(path: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = replay_cli.main([str(path)])
    return status, out.getvalue() + err.getvalue()


def test_each_entry_carries_the_chain_of_its_written_definition_with_ids_that_follow(tmp_path: Path) -> None:
    path = _journal(tmp_path / "j.sqlite")
    with JournalReader(path) as reader:
        entries = list(reader.entries())
    assert [e.id for e in entries] == list(range(1, 7))
    assert [e.chain for e in entries] == _expected_chain(path)
    status, out = _replay(path)
    assert status == 0 and "hash chain: 6 entries checked" in out, out


def test_replay_names_an_edited_a_removed_and_an_inserted_entry(tmp_path: Path) -> None:
    for how, sql, at in (("edited", "UPDATE entries SET body = '{\"i\":9}' WHERE id = 3", "entry 3"),
                         ("removed", "DELETE FROM entries WHERE id = 4", "entry 5"),
                         ("inserted", "INSERT INTO entries (id, t_ns, kind, body, chain) SELECT 7, 1, 'link', '{}', "
                                      "chain FROM entries WHERE id = 6", "entry 7")):
        path = _journal(tmp_path / f"{how}.sqlite")
        conn = sqlite3.connect(path)
        conn.execute(sql)
        conn.commit()
        conn.close()
        status, out = _replay(path)
        assert status == 1 and out.startswith("DIFFERENT"), (how, out)
        assert f"MISMATCH chain: {at}:" in out, (how, out)
        if how == "removed":
            assert "a gap: entries 4..4 missing" in out


def test_an_edit_that_recomputes_the_chain_after_it_is_not_seen_by_replay_alone(tmp_path: Path) -> None:
    # The chain binds a journal to what was shipped: an edit with every value after it made
    # again is consistent on its own. What stops it is the copy the floor holds (tests/floor).
    path = _journal(tmp_path / "j.sqlite")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE entries SET body = '{\"i\":9}' WHERE id = 3")
    conn.commit()
    conn.close()
    values = _expected_chain(path)
    conn = sqlite3.connect(path)
    for i, v in enumerate(values, 1):
        conn.execute("UPDATE entries SET chain = ? WHERE id = ?", (v, i))
    conn.commit()
    conn.close()
    assert _replay(path)[0] == 0


def _schema_1_journal(path: Path) -> None:
    """A journal as issue 14's daemon wrote it: no chain column, schema 1."""
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE entries (id INTEGER PRIMARY KEY, t_ns INTEGER NOT NULL, kind TEXT NOT NULL, shoe INTEGER,
            boot INTEGER, seq INTEGER, type INTEGER, round_id TEXT, body TEXT NOT NULL, raw BLOB);
        CREATE TABLE windows (shoe INTEGER PRIMARY KEY, boot INTEGER NOT NULL, seq INTEGER NOT NULL);
        INSERT INTO meta VALUES ('schema', '1'), ('journal_id', 'a1b2c3d4e5f6');
        INSERT INTO entries (t_ns, kind, body, raw) VALUES (1, 'link', '{"type":"old","i":1}', NULL);
        INSERT INTO entries (t_ns, kind, body, raw) VALUES (2, 'link', '{"type":"old","i":2}', X'0102');
    """)
    conn.commit()
    conn.close()


def test_a_schema_1_journal_is_read_unchained_and_upgraded_by_its_writer_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    _schema_1_journal(path)
    status, out = _replay(path)  # read-only: not upgraded, not a difference
    assert status == 0 and "schema 1 journal" in out, out
    with Journal(path) as journal:  # a daemon opens it for writing: upgraded, then chained on
        journal.write(lambda c: append(c, "link", {"type": "new"}, t_ns=3))
    conn = sqlite3.connect(path)
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    conn.close()
    assert (meta["schema"], meta["chain_sealed_to"], meta["chain_genesis"]) == ("2", "2", "a1b2c3d4e5f6")
    with JournalReader(path) as reader:
        assert [e.chain for e in reader.entries()] == _expected_chain(path)
    status, out = _replay(path)
    assert status == 0 and "entries 1..2 were written before the hash chain" in out, out


def test_a_restored_journal_gets_a_new_id_and_its_chain_goes_on(tmp_path: Path) -> None:
    path = _journal(tmp_path / "j.sqlite", 3)
    with Journal(path) as journal:
        old, new, top = journal.restored()
        journal.write(lambda c: append(c, "link", {"type": "after"}, t_ns=9))
    with JournalReader(path) as reader:
        assert (reader.meta("journal_parent"), reader.meta("journal_forked_at"), reader.meta("journal_id")) == \
            (old, "3", new)
        assert reader.meta("chain_genesis") == old != new and top == 3
        assert [e.chain for e in reader.entries()] == _expected_chain(path)
    assert _replay(path)[0] == 0
