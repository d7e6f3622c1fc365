"""The table service: the one place where inputs are applied, journaled and published.

Every input (an accepted shoe frame, a table-controller request) goes through
`TableService` under one lock: the core derives its events, the input and everything
derived from it are committed to the journal in one transaction, and only then are the
events published and the call returns (so the link acknowledges a frame only once it is
durable). The journal order is therefore the processing order, which is what lets
`cardshoe replay` and a restarted daemon rebuild the same state.

If the journal fails, the service stops: it refuses every further input (`ServiceFailed`)
so no frame is acknowledged and no request answered as if it had been recorded, and it
tells the daemon (`on_failed`), which ends the process with exit status 6 so that its
supervisor (the systemd unit) starts it again once the cause (a full disk) is gone. The
in-memory state may be ahead of the journal at that moment; a restart rebuilds it from
the journal, and the shoe resends what was never acknowledged.
"""

from __future__ import annotations

import logging
import pickle
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from cardshoe.daemon.bus import EventBus, Published
from cardshoe.daemon.core import Applied, Derived, TableCore
from cardshoe.journal import Entry, Journal, JournalError, append, canonical_json, checkpoint, now_ns, set_window

log = logging.getLogger(__name__)


#: Inputs between two checkpoints: a start replays at most this many (issue 15).
CHECKPOINT_EVERY = 1000


class ServiceFailed(RuntimeError):
    """The journal failed earlier; the service accepts nothing until restarted."""


@dataclass(frozen=True)
class FrameInput:
    """An accepted shoe frame as the link hands it over."""

    shoe: int
    boot: int
    seq: int
    type: int
    message: Mapping[str, Any]  # {"type": "CARD", ...message fields}
    raw: bytes


def feed(core: TableCore, entry: Entry) -> Applied | None:
    """Apply one journaled input entry to `core`; None for entries that are not inputs."""
    if entry.kind == "frame":
        assert entry.shoe is not None
        return core.apply_frame(entry.shoe, entry.data(), entry.t_ns)
    if entry.kind == "input":
        return core.apply_input(entry.data(), entry.t_ns)
    return None


class TableService:
    """Applies, journals and publishes inputs for one table, one at a time."""

    def __init__(
        self,
        core: TableCore,
        journal: Journal,
        bus: EventBus,
        *,
        clock: Callable[[], int] = now_ns,
        on_derived: Callable[[Iterable[Derived]], None] | None = None,
        on_failed: Callable[[BaseException], None] | None = None,
        checkpoint_every: int = CHECKPOINT_EVERY,
        on_published: Callable[[list[Published]], None] | None = None,
    ) -> None:
        self.core = core
        self.journal = journal
        self.bus = bus
        self.clock = clock
        self.lock = threading.RLock()
        self._on_derived = on_derived
        self._on_failed = on_failed
        # Whoever keeps figures from the journal as it grows (the live shift report).
        self._on_published = on_published
        self.failed: BaseException | None = None
        self.counters: dict[str, int] = {}
        self.checkpoint_every = checkpoint_every
        self.since_checkpoint = 0
        # Called before a round is opened (the gaming day's rollover when due, issue 25: no
        # round opens in a day after its hour).
        self.before_open: Callable[[], None] | None = None
        # The last closed gaming day's core (issue 25), for reads of its rounds after the rollover.
        self.previous_core: TableCore | None = None

    def _check(self) -> None:
        if self.failed is not None:
            raise ServiceFailed(f"journal failed: {self.failed}") from self.failed

    def _commit(self, write: Callable[[sqlite3.Connection], list[Published]]) -> list[Published]:
        try:
            published: list[Published] = self.journal.write(write)
            return published
        except BaseException as exc:
            first = self.failed is None
            self.failed = exc
            log.critical("journal write failed, the daemon stops accepting input: %s", exc)
            if first and self._on_failed is not None:
                self._on_failed(exc)
            raise ServiceFailed(f"journal failed: {exc}") from exc

    @staticmethod
    def _write_derived(conn: sqlite3.Connection, t_ns: int, derived: Iterable[Derived]) -> list[Published]:
        rows = []
        for d in derived:
            body = canonical_json(d.body)
            eid = append(conn, d.kind, body, t_ns=t_ns, round_id=d.round_id)
            rows.append(Published(eid, t_ns, d.kind, str(d.body.get("type", d.kind)), d.round_id, body))
        return rows

    def _after(self, applied: Applied, published: list[Published]) -> None:
        self.bus.publish(published)
        if self._on_published is not None:
            self._on_published(published)
        if self._on_derived is not None and applied.derived:
            self._on_derived(applied.derived)
        self.since_checkpoint += 1
        if self.checkpoint_every > 0 and self.since_checkpoint >= self.checkpoint_every:
            self.checkpoint()

    def checkpoint(self) -> int | None:
        """Journal a checkpoint of the core's state (see `cardshoe.journal.checkpoint`), so
        the next start replays only what follows it; its entry id, None if none was written.
        Made under the lock: no entry falls between the state and what it `covers`."""
        with self.lock:
            self.since_checkpoint = 0
            if self.failed is not None:
                return None
            try:
                made = checkpoint.make(self.core, covers=0)
            except (TypeError, pickle.PicklingError) as exc:  # no checkpoint: the next start replays it all
                log.error("checkpoint not written: %s", exc)
                return None
            t_ns = self.clock()

            def write(conn: sqlite3.Connection) -> list[Published]:
                covers = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM entries").fetchone()[0])
                body = canonical_json({**made.body, "covers": covers})
                eid = append(conn, "checkpoint", body, t_ns=t_ns, raw=made.blob)
                return [Published(eid, t_ns, "checkpoint", "checkpoint", None, body)]

            written = self._commit(write)
            self.core.checkpoint_written(written[0].id)
            return written[0].id

    # -- inputs ----------------------------------------------------------------------
    def submit_frame(self, frame: FrameInput) -> Applied:
        """Apply, journal (with the shoe's new window) and publish one accepted frame."""
        with self.lock:
            self._check()
            t_ns = self.clock()
            applied = self.core.apply_frame(frame.shoe, frame.message, t_ns)

            def write(conn: sqlite3.Connection) -> list[Published]:
                append(conn, "frame", dict(frame.message), t_ns=t_ns, shoe=frame.shoe, boot=frame.boot,
                       seq=frame.seq, type=frame.type, raw=frame.raw, round_id=applied.round_id)
                set_window(conn, frame.shoe, frame.boot, frame.seq)
                return self._write_derived(conn, t_ns, applied.derived)

            published = self._commit(write)
            self._after(applied, published)
            return applied

    def submit_input(self, body: Mapping[str, Any], *, t_ns: int | None = None) -> Applied:
        """Apply, journal and publish one controller input (refused ones are journaled too)."""
        if body.get("action") == "open_round" and self.before_open is not None:
            self.before_open()
        with self.lock:
            self._check()
            t = self.clock() if t_ns is None else t_ns
            applied = self.core.apply_input(body, t)
            rid = applied.round_id or (body.get("round_id") if isinstance(body.get("round_id"), str) else None)

            def write(conn: sqlite3.Connection) -> list[Published]:
                append(conn, "input", dict(body), t_ns=t, round_id=rid)
                return self._write_derived(conn, t, applied.derived)

            published = self._commit(write)
            self._after(applied, published)
            return applied

    def find_round(self, round_id: str) -> tuple[TableCore, Any] | None:
        """(the core, the round) of `round_id`: this day's, else the last closed day's (read
        only: a round of a closed day takes no input). Call under `lock`."""
        for core in (self.core, self.previous_core):
            if core is not None:
                found = core.rounds.get(round_id)
                if found is not None:
                    return core, found
        return None

    def now(self) -> int:
        """The time stamp the next input will carry if made now (for building operations)."""
        return self.clock()

    # -- observations (journaled, not inputs) ----------------------------------------
    def record(self, kind: str, body: Mapping[str, Any], *, shoe: int | None = None, raw: bytes | None = None,
               publish: bool = False) -> int | None:
        """Journal an observation (`reject`, `link`, `command`, `daemon`, `floor`); optionally
        publish it. Returns its entry id (None: the journal has failed, nothing was written)."""
        key = f"{kind}:{body.get('reason', body.get('type', ''))}"
        with self.lock:
            self.counters[key] = self.counters.get(key, 0) + 1
            if self.failed is not None:
                return None
            t_ns = self.clock()
            text = canonical_json(dict(body))
            rid = self.core.current_round_id()
            etype = str(body.get("type", kind))

            def write(conn: sqlite3.Connection) -> list[Published]:
                eid = append(conn, kind, text, t_ns=t_ns, shoe=shoe, raw=raw, round_id=rid)
                return [Published(eid, t_ns, kind, etype, rid, text)]

            try:
                published = self._commit(write)
            except ServiceFailed:
                return None  # already logged critically; observations never take the link down
            if publish:
                self.bus.publish(published)
            return published[0].id


__all__ = ["FrameInput", "ServiceFailed", "TableService", "feed", "JournalError"]
