"""The journal: one SQLite database in WAL mode, written by one thread.

Everything the daemon learns or decides is an *entry* in one ordered table: every
accepted frame, every rejected frame's reason, every table-controller input, every
derived event, every settlement, every link loss and return, each with the host's time.
The order of entries is the order in which the daemon processed them, so replaying the
inputs in entry order rebuilds the same state (see `cardshoe.journal.replay`).

Writes follow datasette's one-writer pattern: callers queue a callable, the writer
thread runs it on the only write connection inside a transaction and hands the result
(or the exception) back through a `Future`. Several queued callables share one
`BEGIN IMMEDIATE ... COMMIT` (group commit), each under its own SAVEPOINT so that one
failing callable does not undo its neighbours. A failed COMMIT fails every callable of
the batch. Errors are never swallowed: they reach the caller, and the journal remembers
the first one (`Journal.error`) so the daemon can stop acknowledging frames.

Readers (the HTTP API, replay) use separate read-only connections (`mode=ro`).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import tempfile
import sqlite3
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, TypeVar

from cardshoe.journal import chain
from cardshoe.private import open_private, private_dirs, tighten

T = TypeVar("T")

SCHEMA_VERSION = 2
"""2: each entry carries `chain` (`cardshoe.journal.chain`). A schema 1 journal is upgraded when
a daemon opens it for writing: its entries are chained as they stand then (`meta`
`chain_sealed_to` names the last of them), see `_upgrade_1_to_2`."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- One row per thing that happened, in processing order.
CREATE TABLE IF NOT EXISTS entries (
    id       INTEGER PRIMARY KEY,
    t_ns     INTEGER NOT NULL,          -- host wall-clock time, unix nanoseconds
    kind     TEXT NOT NULL,             -- see KINDS
    shoe     INTEGER,                   -- shoe serial, when the entry concerns a shoe
    boot     INTEGER,                   -- frame entries: the frame's boot counter
    seq      INTEGER,                   -- frame entries: the frame's sequence number
    type     INTEGER,                   -- frame entries: the message type
    round_id TEXT,                      -- the round the entry belongs to, if any
    body     TEXT NOT NULL,             -- canonical JSON
    raw      BLOB,                      -- frame and reject entries: the bytes as received
    chain    TEXT                       -- the hash chain (cardshoe.journal.chain), hex
);
CREATE INDEX IF NOT EXISTS entries_kind ON entries(kind, id);
CREATE INDEX IF NOT EXISTS entries_round ON entries(round_id, id);
-- The last accepted (boot, seq) per shoe: the replay window survives restarts (SPEC 3.1).
CREATE TABLE IF NOT EXISTS windows (
    shoe INTEGER PRIMARY KEY,
    boot INTEGER NOT NULL,
    seq  INTEGER NOT NULL
);
"""

#: Entry kinds. `frame` and `input` are the inputs replay feeds back; `event` and
#: `settlement` are what the daemon derived from them; the rest are observations.
KINDS = frozenset({"frame", "reject", "input", "event", "settlement", "link", "command", "daemon", "checkpoint",
                   "floor"})


class JournalError(Exception):
    """A journal write or read failed; the journal can no longer be trusted to be complete."""


class JournalClosed(JournalError):
    """A write was submitted after `Journal.close()`."""


class JournalUnreadable(JournalError):
    """The file cannot be opened or read as a journal: missing, not SQLite (a text file), truncated,
    corrupt (SQLite's integrity check fails), or of another schema. A person must look at it."""


class JournalReadOnly(JournalError):
    """The journal can be read but not written (a read-only file, directory or file system)."""


class JournalWriteFailed(JournalError):
    """A write failed for a cause that may pass (disk full, an I/O error)."""


class JournalLocked(JournalError):
    """Another daemon holds the journal's lock; `holder` says which (pid, host, port, since)."""

    def __init__(self, message: str, holder: str) -> None:
        super().__init__(message)
        self.holder = holder


def classify(path: Path, exc: BaseException) -> JournalError:
    """The `JournalError` type a SQLite or OS error on the journal at `path` stands for."""
    if isinstance(exc, JournalError):
        return exc
    text = str(exc)
    low = text.lower()
    if "readonly" in low or "read-only" in low or isinstance(exc, PermissionError):
        return JournalReadOnly(f"journal {path} is read-only: {text}")
    if "disk is full" in low or "disk i/o" in low or isinstance(exc, OSError):
        return JournalWriteFailed(f"journal {path}: write failed: {text}")
    return JournalUnreadable(f"journal {path} is not a readable journal: {text}")


def canonical_json(value: Any) -> str:
    """The one JSON text of `value` the journal stores and replay compares byte for byte."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def now_ns() -> int:
    """The host's wall-clock time in unix nanoseconds, the time stamped on every entry."""
    return time.time_ns()


@dataclass(frozen=True)
class Entry:
    """One row of the journal."""

    id: int
    t_ns: int
    kind: str
    shoe: int | None
    boot: int | None
    seq: int | None
    type: int | None
    round_id: str | None
    body: str
    raw: bytes | None
    chain: str | None = None
    """The entry's hash chain value (`cardshoe.journal.chain`); None in a schema 1 journal."""

    def data(self) -> Any:
        """The body parsed from its canonical JSON."""
        return json.loads(self.body)


def append(
    conn: sqlite3.Connection,
    kind: str,
    body: Mapping[str, Any] | str,
    *,
    t_ns: int,
    shoe: int | None = None,
    boot: int | None = None,
    seq: int | None = None,
    type: int | None = None,
    round_id: str | None = None,
    raw: bytes | None = None,
) -> int:
    """Append one entry inside the caller's transaction, chained to the last one; returns its id.

    Ids follow each other with no gap (the last id + 1), which is what lets the floor tell a
    removed entry from one not yet sent. Only for use inside a callable run by the writer
    thread (`Journal.write`)."""
    if kind not in KINDS:
        raise ValueError(f"kind: unknown journal entry kind {kind!r}")
    text = body if isinstance(body, str) else canonical_json(body)
    last = conn.execute("SELECT id, chain FROM entries ORDER BY id DESC LIMIT 1").fetchone()
    if last is None:
        prev_id, prev = 0, chain.genesis(_genesis_id(conn))
    else:
        prev_id, prev = int(last[0]), last[1]
        if prev is None:
            raise JournalError(f"journal: entry {prev_id} has no chain value (a schema 1 journal not upgraded)")
    eid = prev_id + 1
    sealed = chain.entry_hash(str(prev), eid, t_ns, kind, shoe, boot, seq, type, round_id, text,
                              chain.raw_sha256(raw))
    conn.execute(
        "INSERT INTO entries (id, t_ns, kind, shoe, boot, seq, type, round_id, body, raw, chain)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (eid, t_ns, kind, shoe, boot, seq, type, round_id, text, raw, sealed),
    )
    return eid


def _genesis_id(conn: sqlite3.Connection) -> str:
    """The id the journal's chain starts from (`meta` `chain_genesis`, else its `journal_id`)."""
    for key in ("chain_genesis", "journal_id"):
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return str(row[0])
    raise JournalError("journal: no journal_id to start the hash chain from")


def _upgrade_1_to_2(conn: sqlite3.Connection) -> None:
    """Schema 1 -> 2: add `chain` and chain every entry as it stands now.

    A schema 1 journal was written without the chain, so nothing says its entries are the ones
    first written: the chain made here seals them as they are at the upgrade, and `meta`
    `chain_sealed_to` names the last entry sealed so (`cardshoe replay` says so). From then on
    each entry is chained as it is written. Runs in one transaction: a journal is upgraded
    whole or not at all."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if "chain" not in {str(r[1]) for r in conn.execute("PRAGMA table_info(entries)")}:
            conn.execute("ALTER TABLE entries ADD COLUMN chain TEXT")
        prev = chain.genesis(_genesis_id(conn))
        top = 0
        rows = conn.execute(f"SELECT {_ENTRY_COLUMNS_V1} FROM entries ORDER BY id").fetchall()
        for r in rows:
            prev = chain.entry_hash(prev, int(r[0]), int(r[1]), str(r[2]), r[3], r[4], r[5], r[6], r[7], str(r[8]),
                                    chain.raw_sha256(None if r[9] is None else bytes(r[9])))
            conn.execute("UPDATE entries SET chain = ? WHERE id = ?", (prev, r[0]))
            top = int(r[0])
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('chain_sealed_to', ?)", (str(top),))
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def set_window(conn: sqlite3.Connection, shoe: int, boot: int, seq: int) -> None:
    """Record `(boot, seq)` as the last accepted pair from `shoe` (inside a write)."""
    conn.execute(
        "INSERT INTO windows (shoe, boot, seq) VALUES (?, ?, ?)"
        " ON CONFLICT(shoe) DO UPDATE SET boot = excluded.boot, seq = excluded.seq",
        (shoe, boot, seq),
    )


def _row_entry(row: tuple[Any, ...]) -> Entry:
    return Entry(*row)


_ENTRY_COLUMNS_V1 = "id, t_ns, kind, shoe, boot, seq, type, round_id, body, raw"
_ENTRY_COLUMNS = _ENTRY_COLUMNS_V1 + ", chain"


#: The files SQLite keeps beside a journal in WAL mode.
_SIDE_FILES = ("-wal", "-shm")


def lock_path(path: Path) -> Path:
    """The lock file beside a journal: `JOURNAL.lock`, holding who has it open for writing."""
    return Path(f"{path}.lock")


def lock_journal(path: Path, holder: str = "") -> int:
    """Take the journal's exclusive lock (flock on `JOURNAL.lock`), or raise `JournalLocked`.

    One journal, one writer: two daemons on one journal would interleave two tables' inputs
    and neither's replay would rebuild. The lock is the kernel's, so it goes when the holder
    dies, however it dies; the file stays, holding the last holder's description."""
    import fcntl
    import socket

    target = lock_path(path)
    try:
        private_dirs(target.parent)
        fd = open_private(target, os.O_RDWR)  # 0600: the daemon user's alone (SPEC 3.6)
    except OSError as exc:
        raise classify(path, exc) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        text = os.pread(fd, 512, 0).decode("utf-8", "replace").strip() or "another process"
        os.close(fd)
        raise JournalLocked(f"journal {path} is in use by {text} (lock {target})", text) from None
    except OSError as exc:
        os.close(fd)
        raise classify(path, exc) from exc
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    who = f"pid {os.getpid()} on {socket.gethostname()} since {stamp}" + (f" ({holder})" if holder else "")
    os.ftruncate(fd, 0)
    os.pwrite(fd, who.encode() + b"\n", 0)
    return fd


class _Stop:
    """The shutdown sentinel: queued before it, every write still runs."""


_STOP = _Stop()
_BATCH_MAX = 64


class Journal:
    """The daemon's journal at `path` (created if absent).

    `write(fn)` runs `fn(conn)` on the writer thread inside a transaction and returns its
    result once committed, or raises what it raised. `close()` drains the queue, stops the
    writer, and may be called more than once."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL", holder: str = "") -> None:
        self.path = Path(path)
        if synchronous not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous: {synchronous!r} is not FULL, NORMAL or EXTRA")
        self._lock_fd = lock_journal(self.path, holder)
        self._synchronous = synchronous
        self._queue: queue.SimpleQueue[tuple[Callable[[sqlite3.Connection], Any], Future[Any]] | _Stop] = (
            queue.SimpleQueue()
        )
        self._closed = False
        self._close_lock = threading.Lock()
        self.error: BaseException | None = None
        ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="journal-writer", daemon=True)
        self._thread.start()
        try:
            ready.result()  # raises if the database could not be opened
        except BaseException:
            os.close(self._lock_fd)
            raise

    # -- writer thread -------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        try:
            return self._open_checked()
        except (sqlite3.Error, OSError) as exc:
            raise classify(self.path, exc) from exc

    def _open_checked(self) -> sqlite3.Connection:
        private_dirs(self.path.parent)
        if self.path.exists() and not os.access(self.path, os.W_OK):
            raise JournalReadOnly(f"journal {self.path} is read-only (no write permission)")
        # The journal is the daemon user's alone, whatever the umask (SPEC 3.6): made 0600
        # before SQLite opens it, so its -wal and -shm (made with the database's mode) are
        # too; one left readable by an earlier version is tightened.
        os.close(open_private(self.path, os.O_RDWR))
        for part in _SIDE_FILES:
            tighten(Path(f"{self.path}{part}"))
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=True)
        # A text file, a truncated or corrupt database: refused here, in one line, rather
        # than half-read by the replay that rebuilds the table.
        problems = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)").fetchall()]
        if problems != ["ok"]:
            conn.close()
            raise JournalUnreadable(f"journal {self.path} is corrupt: {'; '.join(problems)}")
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"journal: {self.path} refused WAL mode (got {mode!r})")
        conn.execute(f"PRAGMA synchronous={self._synchronous}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.executescript(_SCHEMA)
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        created = row is None
        if row is not None and str(row[0]) not in ("1", str(SCHEMA_VERSION)):
            raise JournalUnreadable(f"journal {self.path} has schema {row[0]!r}, this daemon reads {SCHEMA_VERSION}")
        # A name for this journal file, made once: the floor keeps each journal of a table apart
        # (entry ids and round ids start again in a new journal, e.g. a new gaming day). The
        # hash chain starts from the id the journal was created with, kept apart from
        # `journal_id` (which a restored journal changes, see `Journal.restored`).
        if conn.execute("SELECT value FROM meta WHERE key = 'journal_id'").fetchone() is None:
            import secrets

            conn.execute("INSERT INTO meta (key, value) VALUES ('journal_id', ?)", (secrets.token_hex(6),))
        if created:
            # Fixed at creation: the scope of this journal's round ids (`{table}-{scope}-{n}`),
            # unique across the table's journals. A journal made before it has none and keeps
            # its ids (`{table}-{n}`), so its replay gives the ids it gave.
            journal_id = str(conn.execute("SELECT value FROM meta WHERE key = 'journal_id'").fetchone()[0])
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('round_scope', ?)", (journal_id[:8],))
        if conn.execute("SELECT value FROM meta WHERE key = 'chain_genesis'").fetchone() is None:
            conn.execute("INSERT INTO meta (key, value) SELECT 'chain_genesis', value FROM meta"
                         " WHERE key = 'journal_id'")
        if row is None:
            conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        elif str(row[0]) == "1":
            _upgrade_1_to_2(conn)
        return conn

    def _run(self, ready: Future[None]) -> None:
        try:
            conn = self._open()
        except BaseException as exc:  # noqa: BLE001 - handed to the constructor
            ready.set_exception(exc)
            return
        ready.set_result(None)
        try:
            stopping = False
            while not stopping:
                batch: list[tuple[Callable[[sqlite3.Connection], Any], Future[Any]]] = []
                item = self._queue.get()
                while True:
                    if isinstance(item, _Stop):
                        stopping = True
                        break
                    batch.append(item)
                    if len(batch) >= _BATCH_MAX:
                        break
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                if batch:
                    self._run_batch(conn, batch)
        finally:
            conn.close()

    def _run_batch(
        self, conn: sqlite3.Connection, batch: list[tuple[Callable[[sqlite3.Connection], Any], Future[Any]]]
    ) -> None:
        results: list[tuple[Future[Any], bool, Any]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            self._fail_all(batch, exc)
            return
        for fn, fut in batch:
            if not fut.set_running_or_notify_cancel():
                continue
            conn.execute("SAVEPOINT one")
            try:
                value = fn(conn)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's future
                conn.execute("ROLLBACK TO one")
                conn.execute("RELEASE one")
                results.append((fut, False, exc))
                continue
            conn.execute("RELEASE one")
            results.append((fut, True, value))
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # the COMMIT error is the one that matters; it is raised to every caller
            error = classify(self.path, exc)
            if self.error is None:
                self.error = error
            for fut, _, _ in results:
                fut.set_exception(error)
            return
        for fut, ok, value in results:
            if ok:
                fut.set_result(value)
            else:
                if self.error is None and isinstance(value, sqlite3.Error):
                    self.error = value
                fut.set_exception(value)

    def _fail_all(
        self, batch: list[tuple[Callable[[sqlite3.Connection], Any], Future[Any]]], exc: BaseException
    ) -> None:
        error = classify(self.path, exc)
        if self.error is None:
            self.error = error
        for _, fut in batch:
            if fut.set_running_or_notify_cancel():
                fut.set_exception(error)

    # -- public ----------------------------------------------------------------------
    def submit(self, fn: Callable[[sqlite3.Connection], T]) -> Future[T]:
        """Queue `fn(conn)` for the writer thread; the future completes after COMMIT."""
        with self._close_lock:
            if self._closed:
                raise JournalClosed(f"journal: {self.path} is closed")
            fut: Future[T] = Future()
            self._queue.put((fn, fut))
        return fut

    def write(self, fn: Callable[[sqlite3.Connection], T], timeout: float | None = 30.0) -> T:
        """Run `fn(conn)` in a committed transaction and return its result (or raise its error)."""
        return self.submit(fn).result(timeout)

    def close(self) -> None:
        """Let queued writes finish, then stop the writer. Safe to call more than once."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join()
        os.close(self._lock_fd)  # the lock goes with the descriptor

    @property
    def closed(self) -> bool:
        """True once `close()` was called."""
        return self._closed

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- daemon state kept in the journal ------------------------------------------
    def start_epoch(self, floor: int | None = None) -> int:
        """Increment and return the host epoch (SPEC 3.3): one per daemon start.

        The epoch is at least `floor` (default: the unix time in seconds), so it keeps
        growing even when a table PC starts on a new journal: a shoe refuses host frames
        of an epoch not newer than the last it accepted, and it remembers that one."""

        low = int(time.time()) if floor is None else floor

        def bump(conn: sqlite3.Connection) -> int:
            row = conn.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
            epoch = max((int(row[0]) if row else 0) + 1, low)
            if epoch > 0xFFFFFFFF:
                raise JournalError(f"journal: host epoch {epoch} does not fit the frame's u32 boot field")
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('epoch', ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (str(epoch),),
            )
            return epoch

        return self.write(bump)

    def counter(self, name: str) -> int:
        """Increment and return a named counter kept in `meta` (e.g. the table's shoe numbers)."""

        def bump(conn: sqlite3.Connection) -> int:
            key = f"counter:{name}"
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            value = (int(row[0]) if row else 0) + 1
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, str(value)),
            )
            return value

        return self.write(bump)

    def shoe_no(self, low: int, high: int, avoid: frozenset[int] = frozenset()) -> int:
        """The next shoe session number of this journal: its base plus its counter, both kept in
        `meta`. The base is drawn once, at random from [low, high), the first time a journal
        numbers a session; so numbers are unique across a table's journals (but for a chance of
        about the number of sessions in 2^32) and never restart at 1 in a new journal. A number
        in `avoid` (the session the shoe reports as its current one) is skipped."""
        import secrets

        def bump(conn: sqlite3.Connection) -> int:
            row = conn.execute("SELECT value FROM meta WHERE key = 'shoe_no_base'").fetchone()
            base = int(row[0]) if row else low + secrets.randbelow(high - low)
            row = conn.execute("SELECT value FROM meta WHERE key = 'counter:shoe_no'").fetchone()
            count = int(row[0]) if row else 0
            while True:
                count += 1
                if base + count > 0xFFFFFFFF:
                    raise JournalError("journal: the shoe session numbers of this journal are used up")
                if base + count not in avoid:
                    break
            conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [("shoe_no_base", str(base)), ("counter:shoe_no", str(count))])
            return base + count

        return self.write(bump)

    def reader(self) -> JournalReader:
        """A read-only view of this journal on its own connection."""
        return JournalReader(self.path)

    def restored(self) -> tuple[str, str, int]:
        """Mark this journal as restored from a backup: it gets a new `journal_id`, and `meta`
        `journal_parent` / `journal_forked_at` name the id it had and its last entry now.

        The entries after the backup's last one, which the lost copy held, may be on the floor
        already under the old id; the entries this journal writes from now on are another
        history, so they are shipped as a stream of their own that continues the old one from
        the last entry both hold (docs/floor.md, "A restored journal"). The hash chain goes on
        unbroken (it starts from `chain_genesis`, not from `journal_id`). Returns (the old id,
        the new id, the last entry id)."""
        import secrets

        def rotate(conn: sqlite3.Connection) -> tuple[str, str, int]:
            old = conn.execute("SELECT value FROM meta WHERE key = 'journal_id'").fetchone()
            top = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM entries").fetchone()[0])
            new = secrets.token_hex(6)
            for key, value in (("journal_parent", str(old[0])), ("journal_forked_at", str(top)),
                               ("journal_id", new)):
                conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)"
                             " ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))
            return str(old[0]), new, top

        return self.write(rotate)


#: Entries read from SQLite at a time by `JournalReader.entries`.
ENTRY_PAGE = 500


class JournalReader:
    """Read-only access to a journal file; never writes, safe beside the writer.

    Nothing is created beside the journal: a journal with no `-wal` file (closed cleanly,
    or a copy) is opened `immutable` (no locks, no `-shm`); a live one (its `-wal` and
    `-shm` exist, a daemon has it open) read-only through them. A `-wal` left without its
    `-shm` (rare: a crash, then the `-shm` removed) is read from a private copy, since
    reading it in place would create a `-shm`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._copy: str | None = None
        if not self.path.is_file():
            raise JournalUnreadable(f"journal {self.path} does not exist" if not self.path.exists()
                                    else f"journal {self.path} is not a file")
        wal, shm = Path(f"{self.path}-wal"), Path(f"{self.path}-shm")
        try:
            if not wal.exists():
                uri = self.path.resolve().as_uri() + "?mode=ro&immutable=1"
            elif shm.exists():
                uri = self.path.resolve().as_uri() + "?mode=ro"
            else:
                self._copy = tempfile.mkdtemp(prefix="cardshoe-audit-")
                copy = Path(self._copy) / "journal.sqlite"
                shutil.copyfile(self.path, copy)
                shutil.copyfile(wal, f"{copy}-wal")
                uri = copy.as_uri() + "?mode=ro"
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._conn.execute("SELECT 1 FROM entries LIMIT 1").fetchall()
            columns = {str(r[1]) for r in self._conn.execute("PRAGMA table_info(entries)")}
        except (sqlite3.Error, OSError) as exc:
            self._drop_copy()
            raise JournalUnreadable(f"journal {self.path} cannot be read: {exc}") from exc
        self._lock = threading.Lock()
        # A schema 1 journal (not upgraded: only read) has no chain: read as None.
        self.chained = "chain" in columns
        self._columns = _ENTRY_COLUMNS if self.chained else _ENTRY_COLUMNS_V1 + ", NULL"

    def _drop_copy(self) -> None:
        if self._copy is not None:
            shutil.rmtree(self._copy, ignore_errors=True)
            self._copy = None

    def integrity_check(self) -> list[str]:
        """SQLite's integrity check of the whole file: `[]` when sound, else its first problems."""
        with self._lock:
            rows = [str(r[0]) for r in self._conn.execute("PRAGMA integrity_check(5)").fetchall()]
        return [] if rows == ["ok"] else rows

    def close(self) -> None:
        """Close the read connection (and drop a private copy, if one was made)."""
        self._conn.close()
        self._drop_copy()

    def __enter__(self) -> JournalReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def meta(self, key: str) -> str | None:
        """A value from the `meta` table, or None."""
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def windows(self) -> dict[int, tuple[int, int]]:
        """The last accepted (boot, seq) of every shoe."""
        with self._lock:
            rows = self._conn.execute("SELECT shoe, boot, seq FROM windows").fetchall()
        return {int(s): (int(b), int(q)) for s, b, q in rows}

    def entries(
        self, kinds: tuple[str, ...] | None = None, *, after_id: int = 0, round_id: str | None = None
    ) -> Iterator[Entry]:
        """Entries in journal order, optionally of the given kinds / round, after `after_id`."""
        sql = f"SELECT {self._columns} FROM entries WHERE id > ?"
        params: list[Any] = [after_id]
        if kinds is not None:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params.extend(kinds)
        if round_id is not None:
            sql += " AND round_id = ?"
            params.append(round_id)
        sql += f" ORDER BY id LIMIT {ENTRY_PAGE}"
        # Read in pages, so the first entry comes in milliseconds and memory stays bounded
        # whatever the journal's size (issue 15: a 50k-card backlog, a full replay).
        while True:
            with self._lock:
                rows = self._conn.execute(sql, params).fetchall()
            for row in rows:
                yield _row_entry(row)
            if len(rows) < ENTRY_PAGE:
                return
            params[0] = rows[-1][0]

    def entry(self, entry_id: int) -> Entry | None:
        """The entry with this id, or None."""
        with self._lock:
            row = self._conn.execute(f"SELECT {self._columns} FROM entries WHERE id = ?", (entry_id,)).fetchone()
        return None if row is None else _row_entry(row)

    def last_id(self) -> int:
        """The id of the journal's latest entry (0 for an empty journal)."""
        with self._lock:
            row = self._conn.execute("SELECT COALESCE(MAX(id), 0) FROM entries").fetchone()
        return int(row[0])

    def last(self, kind: str) -> Entry | None:
        """The latest entry of `kind`, or None."""
        with self._lock:
            row = self._conn.execute(f"SELECT {self._columns} FROM entries WHERE kind = ? ORDER BY id DESC LIMIT 1",
                                     (kind,)).fetchone()
        return None if row is None else _row_entry(row)

    def top(self) -> Entry | None:
        """The journal's last entry (its id and chain value are the journal's head), or None."""
        with self._lock:
            row = self._conn.execute(f"SELECT {self._columns} FROM entries ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else _row_entry(row)

    def genesis(self) -> str:
        """The value the journal's first entry chains from (`cardshoe.journal.chain.genesis`)."""
        found = self.meta("chain_genesis") or self.meta("journal_id")
        if found is None:
            raise JournalUnreadable(f"journal {self.path} has no journal_id")
        return chain.genesis(found)

    def count(self, kind: str, **where: Any) -> int:
        """How many entries of `kind` (optionally with column = value conditions)."""
        sql = "SELECT COUNT(*) FROM entries WHERE kind = ?"
        params: list[Any] = [kind]
        for column, value in where.items():
            if column not in ("shoe", "boot", "seq", "type", "round_id"):
                raise ValueError(f"where: unknown column {column!r}")
            sql += f" AND {column} = ?"
            params.append(value)
        with self._lock:
            return int(self._conn.execute(sql, params).fetchone()[0])
