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
their bodies (digest, covers).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable

from cardshoe.journal import JournalReader
from cardshoe.journal.store import JournalError

from .client import FloorClient, FloorRefused, FloorUnreachable
from .store import ShippedEntry

__all__ = ["Shipper", "BATCH"]

log = logging.getLogger("cardshoe.floor.shipper")

#: Entries per exchange.
BATCH = 500


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

    def wake(self) -> None:
        """New entries: ship now rather than at the next idle tick."""
        self._wake.set()

    def step(self, reader: JournalReader) -> int:
        """One exchange: the backlog's next batch (or a heartbeat); returns entries sent."""
        if self._hwm is None:
            self._hwm = self.client.high_water()
        rows = []
        for entry in reader.entries(after_id=self._hwm):
            rows.append(ShippedEntry(entry.id, entry.t_ns, entry.kind, entry.shoe, entry.boot, entry.seq, entry.type,
                                     entry.round_id, entry.body, None if entry.kind == "checkpoint" else entry.raw))
            if len(rows) >= self.batch:
                break
        self._hwm = self.client.ship(rows)
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
