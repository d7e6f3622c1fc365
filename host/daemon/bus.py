"""The event bus: journaled events fanned out to live subscribers (the SSE stream).

Events are published only after their journal entries are committed, with the entry
id as the event id, so a subscriber that reconnects with `Last-Event-ID` reads what it
missed from the journal and then continues live without a gap or a repeat.

Each subscriber has a bounded queue. One that falls behind is cut off (it gets an
`overflow` marker and its stream ends) rather than holding memory without limit; it
reconnects and catches up from the journal.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from typing import Any

from cardshoe.journal import Entry

SUBSCRIBER_QUEUE = 2048


@dataclass(frozen=True)
class Published:
    """One event as the stream shows it."""

    id: int
    t_ns: int
    kind: str  # journal entry kind: event, settlement or link
    type: str  # the event's type: card, hand_complete, flag, settlement, link_lost, ...
    round_id: str | None
    body: str  # the canonical JSON stored in the journal

    @classmethod
    def from_entry(cls, entry: Entry) -> Published:
        """The published form of a journal entry."""
        data = entry.data()
        kind_type = data.get("type", entry.kind) if isinstance(data, dict) else entry.kind
        return cls(entry.id, entry.t_ns, entry.kind, str(kind_type), entry.round_id, entry.body)


#: Rejection reasons that are security events (shown live, not only counted): a frame made
#: without the shoe's key, from a shoe with no key, reflected, or replayed from an old boot.
SECURITY_REASONS = frozenset({"bad_tag", "unknown_shoe", "bad_direction"})


def _security_key(key: str) -> bool:
    reason, _, note = key.partition(":")
    return reason in SECURITY_REASONS or (reason == "replay" and note == "old boot")


def streamable(kind: str, body: dict[str, Any]) -> bool:
    """Whether a journal entry belongs on the event stream (live and when caught up)."""
    if kind in ("event", "settlement", "link", "daemon"):
        return True
    if kind == "reject":
        if body.get("type") == "rejections_summary":
            # Counted rejections (see `cardshoe.daemon.rejections`): shown if any was a security one.
            return any(_security_key(str(k)) for k in dict(body.get("counts") or {}))
        return body.get("reason") in SECURITY_REASONS or (body.get("reason") == "replay" and
                                                           body.get("note") == "old boot")
    if kind == "command":
        # Refused commands, loads that failed or were reconciled, and the shoe's way into
        # maintenance (asked, then answered).
        if body.get("type") in ("maintenance_requested", "shoe_load_failed", "new_shoe_refused",
                                "new_shoe_already_loaded"):
            return True
        return body.get("type") == "command_reply" and (body.get("status") != 0 or body.get("command") == "MAINTENANCE")
    return False


OVERFLOW = Published(-1, 0, "overflow", "overflow", None, '{"type":"overflow"}')


class Subscription:
    """A subscriber's queue on its own event loop."""

    def __init__(self, bus: EventBus, loop: asyncio.AbstractEventLoop) -> None:
        self._bus = bus
        self._loop = loop
        self.queue: asyncio.Queue[Published] = asyncio.Queue(SUBSCRIBER_QUEUE + 1)
        self.overflowed = False

    def _offer(self, item: Published) -> None:
        # Runs on the subscriber's loop.
        if self.overflowed:
            return
        if self.queue.qsize() >= SUBSCRIBER_QUEUE:
            self.overflowed = True
            self.queue.put_nowait(OVERFLOW)
            return
        self.queue.put_nowait(item)

    def deliver(self, item: Published) -> None:
        """Hand `item` to the subscriber from any thread."""
        try:
            self._loop.call_soon_threadsafe(self._offer, item)
        except RuntimeError:
            self._bus.unsubscribe(self)  # its loop is gone

    def close(self) -> None:
        """Stop receiving."""
        self._bus.unsubscribe(self)


class EventBus:
    """Thread-safe fan-out of published events to subscribers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: set[Subscription] = set()
        self.published = 0

    def subscribe(self, loop: asyncio.AbstractEventLoop) -> Subscription:
        """A new subscription delivering on `loop`."""
        sub = Subscription(self, loop)
        with self._lock:
            self._subs.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Remove `sub` (no error if already gone)."""
        with self._lock:
            self._subs.discard(sub)

    def publish(self, items: list[Published]) -> None:
        """Deliver `items`, in order, to every subscriber."""
        with self._lock:
            subs = list(self._subs)
            self.published += len(items)
        for sub in subs:
            for item in items:
                sub.deliver(item)

    @property
    def subscribers(self) -> int:
        """How many subscribers are connected."""
        with self._lock:
            return len(self._subs)


def sse_format(item: Published) -> str:
    """One server-sent event: `id`, `event` (the type) and the JSON data on one line."""
    lines = []
    if item.id >= 0:
        lines.append(f"id: {item.id}")
    lines.append(f"event: {item.type}")
    payload: dict[str, Any] = {"id": item.id, "t_ns": item.t_ns, "kind": item.kind, "round_id": item.round_id}
    # The stored body is canonical JSON already; splice it in without re-encoding.
    head = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    lines.append(f"data: {head[:-1]},\"data\":{item.body}}}")
    return "\n".join(lines) + "\n\n"
