"""Store and forward: a table's journal shipped to the floor, resumed from the floor's mark.

The journal stays the source of truth. The shipper reads it (read-only, beside the writer)
from the floor's high-water mark on, sends batches in id order and takes the floor's new mark
from each answer. Any failure (the network, the floor, the floor's database) ends the
exchange; the next one asks the floor for its mark again, so whatever was lost in flight is
sent again and whatever arrived is not (the floor inserts idempotently on (table, entry id)):
at-least-once delivery, exactly-once effect. The table does not wait for the shipper: base
games go on while the floor is away, and the backlog drains when it returns.

Checkpoints' pickled states (`raw` of a `checkpoint` entry) are not shipped: they are the
table's own restart aid, rebuilt from the other entries, and large. Their entries are, with
their bodies (digest, covers) and the raw bytes' digest, so the hash chain still checks.

Every exchange also sends the journal's head (its last entry's id and chain value), so the
floor sees a journal that no longer agrees with its copy (restored from a backup, edited)
even when nothing new is sent. A journal restored with `cardshoe run --journal-restored` has a
new id and names the old one (`meta` `journal_parent`): before its first entry is sent, the
shipper finds the last entry both hold (a bisection on chain values) and opens the new stream
there (`POST /tables/{table}/fork`), so nothing of either history is lost on the floor.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable

from cardshoe.journal import Entry, JournalReader
from cardshoe.journal.chain import raw_sha256
from cardshoe.journal.store import JournalError

from .client import FloorClient, FloorRefused, FloorUnreachable
from .store import ShippedEntry

__all__ = ["Shipper", "BATCH", "shipped", "find_fork"]

log = logging.getLogger("cardshoe.floor.shipper")

#: Entries per exchange.
BATCH = 500


def shipped(entry: Entry) -> ShippedEntry:
    """A journal entry as it is shipped (a checkpoint's state left out, its digest kept)."""
    if entry.kind == "checkpoint":
        return ShippedEntry(entry.id, entry.t_ns, entry.kind, entry.shoe, entry.boot, entry.seq, entry.type,
                            entry.round_id, entry.body, None, entry.chain, raw_sha256(entry.raw))
    return ShippedEntry(entry.id, entry.t_ns, entry.kind, entry.shoe, entry.boot, entry.seq, entry.type,
                        entry.round_id, entry.body, entry.raw, entry.chain)


def find_fork(reader: JournalReader, client: FloorClient, parent: str, limit: int) -> tuple[int, str]:
    """The last entry (at most `limit`) that this journal and the floor's copy of `parent` both
    hold alike, and its chain value. Chain values agree up to a point and differ after it, so a
    bisection finds it."""
    def local(at: int) -> str | None:
        if at == 0:
            return reader.genesis()
        found = reader.entry(at)
        return None if found is None else found.chain

    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if local(mid) is not None and client.chain_at(parent, mid) == local(mid):
            lo = mid
        else:
            hi = mid - 1
    value = local(lo)
    assert value is not None
    return lo, value


class Shipper:
    """Ships the journal at `journal` through `client` on a thread of its own."""

    def __init__(self, journal: Path, client: FloorClient, *, linger_s: float = 0.5, heartbeat_s: float = 2.0,
                 backoff_s: tuple[float, float] = (0.2, 5.0), batch: int = BATCH,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.journal = journal
        self.client = client
        self.linger_s = linger_s
        self.heartbeat_s = heartbeat_s
        self.backoff_s = backoff_s
        self.batch = batch
        self.on_error = on_error
        self.shipped = 0
        """Entries sent (a resend counts again): the floor's count may be lower, never higher."""
        self.exchanges = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
        # A journal that grows no more (a gaming day closed, issue 25): ship it to its end, then stop.
        self._final = threading.Event()
        self.finished = threading.Event()
        """Set once a `finish()`ed journal is on the floor to its last entry."""
        self._thread: threading.Thread | None = None
        self._hwm: int | None = None

    def start(self) -> None:
        """Start the shipping thread."""
        self._thread = threading.Thread(target=self._run, name="floor-shipper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the exchange in flight (bounded by the client's timeout)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(self.client.timeout_s * 2 + 5)

    def finish(self) -> None:
        """The journal is closed (its gaming day ended): ship what is left, then end; `finished`
        is set once the floor holds its last entry. The next day's stream waits for it, so the
        floor receives a table's days in order."""
        self._final.set()
        self._wake.set()

    def wake(self) -> None:
        """New entries: ship now rather than at the next idle tick."""
        self._wake.set()

    def _resume(self, reader: JournalReader) -> int:
        """The floor's mark for this journal, opening its stream first if it is a restored one."""
        info = self.client.stream_info()
        parent = reader.meta("journal_parent")
        if info.get("known") or parent is None:
            return int(info["high_water"])
        stream = f"{self.client.name}.{parent}"
        held = self.client.stream_info(stream)
        limit = min(int(reader.meta("journal_forked_at") or 0), int(held["high_water"]))
        at, value = find_fork(reader, self.client, stream, limit) if held.get("known") else (0, reader.genesis())
        if not held.get("known") and at == 0:
            log.info("floor: %s holds nothing of %s; opening %s from its first entry", self.client.url, stream,
                     self.client.table)
        made = self.client.fork(stream, at, value)
        log.warning("floor: this journal was restored from a backup of %s; the floor continues it as %s from "
                    "entry %d", stream, self.client.table, at)
        return int(made["high_water"])

    def step(self, reader: JournalReader) -> int:
        """One exchange: the backlog's next batch (or a heartbeat); returns entries sent."""
        if self._hwm is None:
            self._hwm = self._resume(reader)
        rows = []
        for entry in reader.entries(after_id=self._hwm):
            rows.append(shipped(entry))
            if len(rows) >= self.batch:
                break
        top = reader.top()
        head = None if top is None else (top.id, top.chain)
        if rows and head is not None and head[0] < rows[-1].id:
            head = (rows[-1].id, rows[-1].chain)  # written between the two reads
        self._hwm = self.client.ship(rows, head)
        self.shipped += len(rows)
        self.exchanges += 1
        return len(rows)

    def _run(self) -> None:
        delay = self.backoff_s[0]
        reader: JournalReader | None = None
        try:
            while not self._stop.is_set():
                try:
                    if reader is None:
                        reader = JournalReader(self.journal)
                    sent = self.step(reader)
                    delay = self.backoff_s[0]
                except (FloorUnreachable, FloorRefused, JournalError, OSError, ValueError, KeyError) as exc:
                    # Whatever failed, the next exchange starts from the floor's own mark.
                    self._hwm = None
                    if self.on_error is not None:
                        self.on_error(str(exc))
                    log.warning("floor shipping: %s (again in %.1f s)", exc, delay)
                    self._stop.wait(delay)
                    delay = min(delay * 2, self.backoff_s[1])
                    continue
                if sent >= self.batch:
                    continue  # a backlog: straight on
                if self._final.is_set() and reader is not None:
                    top = reader.top()
                    if self._hwm is not None and (top is None or self._hwm >= top.id):
                        self.finished.set()
                        return
                # New entries wake the shipper, which then lingers a moment to send them with
                # the ones that follow: a request per `linger_s` at most, not one per card (a
                # floor of hundreds of tables). With nothing new, a heartbeat every `heartbeat_s`
                # keeps the floor's pool on the table's display and its online state fresh.
                if self._wake.wait(self.heartbeat_s) and not self._stop.is_set():
                    self._stop.wait(self.linger_s)
                self._wake.clear()
        finally:
            if reader is not None:
                reader.close()
