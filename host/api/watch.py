"""What the table page needs from the journal beyond the core's state, read as it grows.

- each shoe's **integrity** bits as it last reported them (HELLO or DECK_STATUS: duplicate,
  foreign, unread, missing, extra cards; SPEC 5), which the core acts on but does not keep;
- the **referrals outside a round** (`key_outside_round`, `deck_fault_outside_round`,
  `card_outside_round`: rule 6.1, readings 71, 72) and after a void (`card_after_void`,
  `key_after_void`: reading 76) still open, i.e. not yet acknowledged by a
  supervisor (`referral_acknowledged`, journaled by `POST /referrals/{id}/acknowledge`);
- a round's **refused inputs** (`input_refused`, `settlement_failed`, `internal_error`), so a
  settle the engine refused reads as refused on the page, with its reason.

The journal is read incrementally (only what was appended since the last look), from at most
`WINDOW` entries back at the first look, so a long journal costs one bounded read at start.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from cardshoe.journal import JournalReader

from .cardtext import event_text

#: The first look reads at most this many entries back (a shoe reports its integrity at every
#: load and change, so its last report is far nearer than this).
WINDOW = 20_000
#: Open referrals kept (the oldest unacknowledged beyond this are dropped from the list).
MAX_REFERRALS = 50
#: Refusals of one round shown.
MAX_REFUSALS = 20

#: Referred to the shift manager with no flag of a round to decide them (readings 71, 72, 76).
REFERRAL_TYPES = ("key_outside_round", "deck_fault_outside_round", "card_outside_round",
                  "card_after_void", "key_after_void")
REFUSAL_TYPES = ("input_refused", "settlement_failed", "internal_error")
#: SPEC 5 DECK_STATUS / HELLO `integrity` bits.
INTEGRITY_BITS = ((1, "duplicate"), (2, "foreign"), (4, "unread"), (8, "missing"), (16, "extra"))


def integrity_names(bits: int) -> list[str]:
    """The names of the integrity bits set in `bits`."""
    return [name for bit, name in INTEGRITY_BITS if bits & bit]


class JournalWatch:
    """Integrity and open referrals, kept up to date from the journal at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._reader: JournalReader | None = None
        self.journal_id: str | None = None
        self.last_id = 0
        self.integrity: dict[int, dict[str, Any]] = {}
        self.referrals: dict[int, dict[str, Any]] = {}
        self.acknowledged: dict[int, dict[str, Any]] = {}

    def _open(self) -> JournalReader:
        if self._reader is None:
            self._reader = JournalReader(self.path)
            self.journal_id = self._reader.meta("journal_id")
            self.last_id = max(0, self._reader.last_id() - WINDOW)
        return self._reader

    def scan(self) -> None:
        """Read what the journal gained since the last look."""
        with self._lock:
            reader = self._open()
            for entry in reader.entries(("event", "daemon"), after_id=self.last_id):
                self.last_id = entry.id
                body = entry.data()
                if not isinstance(body, dict):
                    continue
                kind = body.get("type")
                if entry.kind == "event" and kind in ("shoe_hello", "deck_status") and isinstance(body.get("shoe"), int):
                    bits = int(body.get("integrity") or 0)
                    report: dict[str, Any] = {"bits": bits, "names": integrity_names(bits), "from": kind,
                                              "t_ns": entry.t_ns}
                    for counter in ("duplicates", "foreign", "unread", "missing"):
                        if counter in body:
                            report[counter] = body[counter]
                    self.integrity[body["shoe"]] = report
                elif entry.kind == "event" and kind in REFERRAL_TYPES:
                    self.referrals[entry.id] = {"id": entry.id, "t_ns": entry.t_ns, **event_text(body)}
                    while len(self.referrals) > MAX_REFERRALS:
                        del self.referrals[next(iter(self.referrals))]
                elif entry.kind == "daemon" and kind == "referral_acknowledged" and isinstance(body.get("entry"), int):
                    self.acknowledged[body["entry"]] = {"by": body.get("by"), "t_ns": entry.t_ns}
                    self.referrals.pop(body["entry"], None)

    def open_referrals(self) -> list[dict[str, Any]]:
        """The referrals outside a round not yet acknowledged, newest first."""
        self.scan()
        with self._lock:
            return [dict(r) for r in reversed(self.referrals.values())]

    def referral(self, entry_id: int) -> dict[str, Any] | None:
        """The referral journaled as entry `entry_id` (open or acknowledged), or None."""
        self.scan()
        with self._lock:
            if entry_id in self.referrals:
                return dict(self.referrals[entry_id])
        reader = self._open()
        entry = reader.entry(entry_id)
        if entry is None or entry.kind != "event":
            return None
        body = entry.data()
        if not isinstance(body, dict) or body.get("type") not in REFERRAL_TYPES:
            return None
        return {"id": entry.id, "t_ns": entry.t_ns, **event_text(body)}

    def shoe_integrity(self) -> dict[int, dict[str, Any]]:
        """Each shoe's integrity as last reported."""
        self.scan()
        with self._lock:
            return {k: dict(v) for k, v in self.integrity.items()}

    def round_refusals(self, round_id: str) -> list[dict[str, Any]]:
        """The refused inputs of round `round_id` (at most `MAX_REFUSALS`, oldest first), each
        `{id, t_ns, type, op or action, error, field, message, rule}` and `after`: the id of
        the round's last accepted event before it (a refusal after the round's latest change
        is still news)."""
        reader = self._open()
        out: list[dict[str, Any]] = []
        last_accepted = 0
        for entry in reader.entries(("event", "settlement"), round_id=round_id):
            body = entry.data()
            kind = body.get("type") if isinstance(body, dict) else None
            if kind in REFUSAL_TYPES:
                item = {k: body[k] for k in ("type", "op", "action", "error", "field", "message", "rule") if k in body}
                out.append({"id": entry.id, "t_ns": entry.t_ns, "after": last_accepted, **item})
            else:
                last_accepted = entry.id
        return [dict(r, latest=r["id"] > last_accepted) for r in out[-MAX_REFUSALS:]]

    def close(self) -> None:
        """Close the journal reader."""
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None


__all__ = ["INTEGRITY_BITS", "JournalWatch", "REFERRAL_TYPES", "REFUSAL_TYPES", "integrity_names"]
