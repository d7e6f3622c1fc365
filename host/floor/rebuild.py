"""A table's rounds rebuilt from the entries the floor holds, with the same pure core as replay.

The floor never settles a round from a file a table sends (issue 21 item 2). It feeds the
table stream's journaled inputs (accepted shoe frames and controller inputs), in journal
order, to a `TableCore`, exactly as `cardshoe replay` and a starting daemon do
(`cardshoe.daemon.service.feed`), and takes the round from that core. Every frame is checked
first against its own bytes with the shoe's key registered for the table on the floor
(`cardshoe.journal.frames.check_frame`): a frame whose tag does not verify, or whose journaled
message is not the one its bytes carry, makes every later round of the stream unsettleable
until a person looks (`FramesUnverified`).

A stream's core is kept between settlements (fed only what arrived since), in a bounded
cache: it is derived from the store alone, so a process that has none (a restart, a second
API process) builds it again from the entries, never from a table's checkpoint (a pickle a
table made is never loaded on the floor). The cache is dropped whenever the store's server
changes (`FloorStore.server_epoch`: a failover, a restart), since entries one server showed
(committed on a primary that crashed before its standby had them) may not be on the next.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

from cardshoe.journal.frames import KeyLookup, check_frame

from .progressive import FloorRefusal
from .store import FloorStore, ShippedEntry

__all__ = ["Rebuilder", "RoundIncomplete", "FramesUnverified", "RoundNotSettleable", "table_of_stream"]

#: Entries read from the store at a time while feeding a core.
PAGE = 2000


class RoundIncomplete(FloorRefusal):
    """The floor has not received the round in full: the table waits and asks again."""


class FramesUnverified(FloorRefusal):
    """A frame of the table's journal does not verify with its shoe's key on the floor."""


class RoundNotSettleable(FloorRefusal):
    """The round as the floor rebuilt it cannot be settled (unknown, settled already, waiting for a person)."""


def table_of_stream(stream: str) -> str:
    """The table's name in a stream key `NAME.JOURNAL_ID`."""
    return stream.rsplit(".", 1)[0]


@dataclass
class StreamCore:
    """A table core fed from a stream's stored entries up to `upto`."""

    core: Any
    upto: int = 0
    bad_frames: list[tuple[int, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def new_core() -> Any:
    """A fresh table core, as replay starts one (the journal's first input is the table's setup)."""
    from cardshoe.daemon.core import TableCore, TableSetup

    return TableCore(TableSetup(name="table", game="three-card-poker", seats=7))


def feed_entries(state: StreamCore, entries: list[ShippedEntry], keys: KeyLookup | None, table: str) -> None:
    """Apply stored entries (frames checked first) to `state`'s core, as replay feeds a journal."""
    from cardshoe.daemon.service import feed
    from cardshoe.journal.store import Entry

    for e in entries:
        if e.kind == "frame":
            problem = "no shoe keys registered for table " + table + " on the floor" if keys is None else \
                check_frame(e.shoe, e.boot, e.seq, e.type, e.body, e.raw, keys)
            if problem is not None:
                state.bad_frames.append((e.id, problem))
                continue  # never acted on: the round it belongs to is refused
        if e.kind in ("frame", "input"):
            feed(state.core, Entry(e.id, e.t_ns, e.kind, e.shoe, e.boot, e.seq, e.type, e.round_id, e.body, e.raw))
        state.upto = max(state.upto, e.id)


class Rebuilder:
    """Table cores rebuilt from a store's entries; `keys_for(table name)` gives the table's shoe
    keys registered on the floor (None: none registered, so no frame of it verifies)."""

    def __init__(self, store: FloorStore, keys_for: Callable[[str], KeyLookup | None], *,
                 cache_size: int = 512) -> None:
        self.store = store
        self.keys_for = keys_for
        self.cache_size = cache_size
        self._cache: OrderedDict[str, StreamCore] = OrderedDict()
        self._lock = threading.Lock()
        self._epoch = store.server_epoch

    def _feed(self, state: StreamCore, stream: str, upto: int) -> None:
        keys = self.keys_for(table_of_stream(stream))
        while state.upto < upto:
            page = self.store.entries(stream, after_id=state.upto, upto=upto, kinds=("frame", "input"),
                                      lineage=True, limit=PAGE)
            feed_entries(state, page, keys, table_of_stream(stream))
            if len(page) < PAGE:
                state.upto = upto  # every entry up to `upto` is held (the caller checked the mark)

    def _cached(self, stream: str) -> StreamCore:
        with self._lock:
            if self._epoch != self.store.server_epoch:
                self._cache.clear()  # the server changed: what the cores were fed may not be on it
                self._epoch = self.store.server_epoch
            state = self._cache.get(stream)
            if state is None:
                state = self._cache[stream] = StreamCore(new_core())
            self._cache.move_to_end(stream)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return state

    def advance(self, stream: str, upto: int) -> None:
        """Feed the cached core of `stream` up to `upto` (entries the floor holds), ahead of the
        settlement that will need them: called after shipping, off the settlement's path."""
        state = self._cached(stream)
        if not state.lock.acquire(blocking=False):
            return  # a settlement (or another advance) is feeding it
        try:
            if state.upto < upto:
                self._feed(state, stream, upto)
        finally:
            state.lock.release()

    def state(self, stream: str, upto: int, round_id: str | None = None) -> StreamCore:
        """A core fed with `stream`'s entries up to `upto` (cached; the caller holds the returned
        state's lock while it uses it). A cached core fed past `upto` serves for `round_id` when
        no frame or input after `upto` touched that round (every change to a round is an input
        or frame tagged with its id); otherwise the core is rebuilt apart, up to `upto`."""
        state = self._cached(stream)
        state.lock.acquire()
        if state.upto > upto:
            later = [] if round_id is None else self.store.entries(
                stream, after_id=upto, upto=state.upto, round_id=round_id, kinds=("frame", "input"), lineage=True,
                limit=1)
            if round_id is None or later:
                state.lock.release()
                state = StreamCore(new_core())
                state.lock.acquire()
            else:
                return state
        try:
            self._feed(state, stream, upto)
        except BaseException:
            state.lock.release()
            raise
        return state

    def round_file(self, stream: str, round_id: str, upto: int, time_ns: int) -> dict[str, Any]:
        """The round file of `round_id` as the Settle operation at `time_ns` leaves it, rebuilt
        from `stream`'s entries up to `upto` (the table's `settle_sent`). Raises
        FramesUnverified or RoundNotSettleable naming why."""
        from cardshoe import rounds

        state = self.state(stream, upto, round_id)
        try:
            bad = [b for b in state.bad_frames if b[0] <= upto]
            if bad:
                eid, problem = bad[0]
                raise FramesUnverified("frames", f"table {stream}: frame entry {eid} does not verify on the floor: "
                                       f"{problem}" + (f" (and {len(state.bad_frames) - 1} more)"
                                                      if len(state.bad_frames) > 1 else "")
                                       + "; no round of this journal is settled from then on until a person looks")
            core = state.core
            round_ = core.rounds.get(round_id)
            if round_ is None:
                raise RoundNotSettleable("round_id", f"table {stream} has no round {round_id!r} in its journal up "
                                                     f"to entry {upto}")
            if round_.status is rounds.RoundStatus.SETTLED:
                raise RoundNotSettleable("round_id", f"round {round_id} of table {stream} was settled in its "
                                                     f"journal before entry {upto}")
            trial = copy.deepcopy(round_)
            try:
                trial.do(rounds.Settle(jackpot_pool=0, time_ms=time_ns // 1_000_000))
                data: dict[str, Any] = core.export(trial)
            except (rounds.RoundOperationError, ValueError) as exc:
                raise RoundNotSettleable("round", f"round {round_id} of table {stream} as its journal holds it "
                                                  f"cannot be settled: {exc}") from None
            if trial.status is not rounds.RoundStatus.SETTLED:
                raise RoundNotSettleable("round", f"round {round_id} of table {stream} does not close: it waits "
                                                  "for a person at the table")
            return data
        finally:
            state.lock.release()
