"""`cardshoe days`: a table's gaming-day journal files (issue 25 item 4: retention and archive).

    cardshoe days list DIR [--table T07]
    cardshoe days archive DIR --to ARCHIVE --keep-days N [--table T07] [--remove]

The daemon writes a file per table and gaming day into `[journal] dir`
(`T07.2026-11-27.sqlite`) and makes each one read-only once its day is closed
(`cardshoe.daemon.gamingday`). `list` shows them: day, table, open or closed, read-only,
size, entries. `archive` copies the closed days older than the newest `N` days of each table
into ARCHIVE (kept read-only, with a `SHA256SUMS` line each): only a file that is closed, whose
SQLite integrity check passes, and which links to the day after it (`cardshoe replay` of the
two as a chain) is archived; the copy's digest is checked against the original's. With
`--remove` the original is deleted after its copy is verified (never the open day, never the
newest N). Nothing is ever overwritten: a copy already in ARCHIVE with another digest is an
error. Exit 0 when every file due was archived, 1 when one was refused (each said why).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sqlite3
import stat
import sys
from datetime import date
from pathlib import Path

from cardshoe.journal.days import check_chain, day_closed
from cardshoe.journal.store import JournalError, JournalReader

_DAY_FILE = re.compile(r"^(?P<table>.+)\.(?P<day>\d{4}-\d{2}-\d{2})\.sqlite$")


def day_files(directory: Path, table: str | None = None) -> dict[str, list[tuple[date, Path]]]:
    """The day files in `directory` by table, oldest first."""
    out: dict[str, list[tuple[date, Path]]] = {}
    for path in sorted(directory.iterdir()):
        m = _DAY_FILE.match(path.name)
        if m is None or (table is not None and m["table"] != table):
            continue
        try:
            day = date.fromisoformat(m["day"])
        except ValueError:
            continue
        out.setdefault(m["table"], []).append((day, path))
    return {t: sorted(v) for t, v in out.items()}


def sha256(path: Path) -> str:
    """The file's SHA-256 (hex)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _list(directory: Path, table: str | None) -> int:
    for name, files in day_files(directory, table).items():
        for day, path in files:
            with JournalReader(path) as reader:
                closed = day_closed(reader) is not None
                entries = reader.last_id()
            writable = bool(path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
            print(f"{day} {name} {'closed' if closed else 'OPEN  '} {'read-write' if writable else 'read-only '} "
                  f"{path.stat().st_size:>12} bytes {entries:>9} entries  {path.name}")
    return 0


def _archive(directory: Path, target: Path, keep: int, table: str | None, remove: bool) -> int:
    target.mkdir(parents=True, exist_ok=True)
    sums = target / "SHA256SUMS"
    refused = 0
    for name, files in day_files(directory, table).items():
        due = files[:-keep] if keep > 0 else files
        for i, (day, path) in enumerate(due):
            following = files[i + 1]  # due excludes the newest `keep` (>= 1): a next day exists
            why = _refusal(path, following[1])
            if why is not None:
                print(f"{path.name}: not archived: {why}")
                refused += 1
                continue
            copy = target / path.name
            if copy.exists():
                if _head(copy) != _head(path):
                    print(f"{path.name}: not archived: {copy} exists and holds another history")
                    refused += 1
                    continue
                digest = sha256(copy)
            else:
                _copy(path, Path(f"{copy}.part"))
                os.replace(f"{copy}.part", copy)
                os.chmod(copy, 0o400)
                digest = sha256(copy)
                with sums.open("a", encoding="utf-8") as f:
                    f.write(f"{digest}  {copy.name}\n")
            if _head(copy) != _head(path):
                print(f"{path.name}: the copy in {target} does not hold the original's entries; original kept")
                refused += 1
                continue
            if remove:
                path.unlink()
                for suffix in ("-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
            print(f"{path.name}: archived to {copy} (sha256 {digest[:16]}){', removed here' if remove else ''}")
    return 1 if refused else 0


def _copy(path: Path, dest: Path) -> None:
    """A consistent copy through SQLite's backup (a day's last entries may be in its -wal)."""
    with JournalReader(path) as reader:
        out = sqlite3.connect(dest)
        try:
            reader._conn.backup(out)
        finally:
            out.close()


def _head(path: Path) -> tuple[int, str | None, int]:
    """(the last entry's id, its chain value, the number of entries): what a copy must equal."""
    with JournalReader(path) as reader:
        top = reader.top()
        count = sum(1 for _ in reader.entries())
    return (0, None, 0) if top is None else (top.id, top.chain, count)


def _refusal(path: Path, following: Path) -> str | None:
    """Why a day file may not be archived yet, or None."""
    try:
        with JournalReader(path) as reader:
            if day_closed(reader) is None:
                return "its day is not closed (a daemon may still write it)"
            problems = reader.integrity_check()
            if problems:
                return f"SQLite integrity check: {'; '.join(problems)}"
        chain = check_chain([path, following])
    except JournalError as exc:
        return str(exc)
    if chain:
        return f"does not link to {following.name}: {chain[0]}"
    return None


def main(argv: list[str]) -> int:
    """`cardshoe days list|archive ...`."""
    parser = argparse.ArgumentParser(prog="cardshoe days", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="the day files of a folder")
    ls.add_argument("dir", type=Path)
    ls.add_argument("--table")
    ar = sub.add_parser("archive", help="copy the closed days older than the newest N into an archive")
    ar.add_argument("dir", type=Path)
    ar.add_argument("--to", type=Path, required=True, help="the archive folder")
    ar.add_argument("--keep-days", type=int, required=True, help="day files of each table kept here (at least 1)")
    ar.add_argument("--table")
    ar.add_argument("--remove", action="store_true", help="delete each original once its copy is verified")
    args = parser.parse_args(argv)
    if not args.dir.is_dir():
        print(f"cardshoe days: {args.dir} is not a folder", file=sys.stderr)
        return 2
    if args.command == "list":
        return _list(args.dir, args.table)
    if args.keep_days < 1:
        print("cardshoe days: --keep-days: at least 1 (the open day is never archived)", file=sys.stderr)
        return 2
    return _archive(args.dir, args.to, args.keep_days, args.table, args.remove)


__all__ = ["day_files", "main", "sha256"]
