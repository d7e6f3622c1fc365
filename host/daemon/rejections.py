"""Rejected frames journaled as counted summaries with a few samples (issue 10 item 5).

Anyone on the cable can send frames that are rejected (line noise, a fuzzer, someone
guessing tags), as fast as the line carries them. Journaling each one whole turned 40 KB
of noise into 20,000 journal entries and a genuine card waiting seconds behind their
commits. So, per interval (`interval_s`, 1 s):

- the first `per_reason` rejections of each reason (with the link's note: `replay:gap` and
  `replay:old boot` are apart), up to `samples` in all, are journaled whole (their reason,
  header and raw bytes, as before) and, for the security reasons, logged at WARNING and
  shown on the stream. Budgets are per reason so that line noise does not use up the
  samples a tag-guessing attempt behind it needs, and the security reasons (`security`:
  bad tag, unknown shoe, bad direction, a replay of an old boot) are outside the total, so
  several kinds of noise together cannot use them up either;
- every later one is only counted, in memory: by reason (and the link's note), and by
  the shoe serial its header names (the first `MAX_SHOES` distinct serials, the rest as
  one "other" count, since the serial of an unauthenticated frame is the sender's choice);
- when the interval ends, one `rejections_summary` entry holds those counts.

The journal therefore grows by at most `samples` samples (each at most a maximum frame
of raw bytes plus its JSON) and one summary (a bounded number of keys) per interval,
whatever arrives: `bytes_per_interval_bound()`. Nothing is lost from the count: the
summary's `unsampled` plus the samples are every rejection.

Pure: the caller passes the time; the daemon journals what `admit` and `take` return.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cardshoe.protocol.errors import Reason
from cardshoe.protocol.spec import MAX_ENCODED

#: Distinct shoe serials counted one by one in a summary; the rest are "other".
MAX_SHOES = 8
#: A sample's JSON body beside its raw bytes, at most (reason, note, detail, header fields).
SAMPLE_BODY_MAX = 512


@dataclass
class _Interval:
    start_ns: int
    sampled: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)
    unsampled: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    shoes: dict[str, int] = field(default_factory=dict)
    other_shoes: int = 0


class RejectionLimiter:
    """Decides which rejections are journaled whole and counts the rest, per interval."""

    def __init__(self, interval_s: float = 1.0, samples: int = 24, per_reason: int = 8,
                 security: frozenset[str] = frozenset()) -> None:
        if interval_s <= 0 or samples < 0 or per_reason < 0:
            raise ValueError("interval_s must be positive, samples and per_reason not negative")
        self.interval_ns = int(interval_s * 1e9)
        self.samples = samples
        self.per_reason = per_reason
        self.security = security
        """Keys (`reason` or `reason:note`) sampled outside the `samples` total."""
        self._now: _Interval | None = None
        self.total = 0
        self.total_unsampled = 0

    def admit(self, key: str, shoe: int | None, now_ns: int) -> tuple[bool, dict[str, Any] | None]:
        """Count one rejection (`key`: reason, or reason:note). Returns (journal it whole?,
        the summary of an interval that ended before it, to be journaled first, or None)."""
        ended = self.take(now_ns)
        if self._now is None:
            self._now = _Interval(now_ns)
        cur = self._now
        self.total += 1
        cur.counts[key] = cur.counts.get(key, 0) + 1
        name = "none" if shoe is None else str(shoe)
        if name in cur.shoes or len(cur.shoes) < MAX_SHOES:
            cur.shoes[name] = cur.shoes.get(name, 0) + 1
        else:
            cur.other_shoes += 1
        reason = key.split(":", 1)[0]
        priority = key in self.security or reason in self.security
        if cur.by_reason.get(key, 0) < self.per_reason and (priority or cur.sampled < self.samples):
            cur.sampled += 0 if priority else 1
            cur.by_reason[key] = cur.by_reason.get(key, 0) + 1
            return True, ended
        cur.unsampled[reason] = cur.unsampled.get(reason, 0) + 1
        self.total_unsampled += 1
        return False, ended

    def take(self, now_ns: int, *, force: bool = False) -> dict[str, Any] | None:
        """The summary of the interval in progress if it has ended (or `force`) and counted
        rejections beyond its samples; the interval is then closed. None otherwise."""
        cur = self._now
        if cur is None or (not force and now_ns - cur.start_ns < self.interval_ns):
            return None
        self._now = None
        if not cur.unsampled:
            return None  # every rejection of it is journaled whole already
        return {"type": "rejections_summary", "reason": "summary", "from_ns": cur.start_ns, "to_ns": now_ns,
                "samples": sum(cur.by_reason.values()), "unsampled": dict(sorted(cur.unsampled.items())),
                "counts": dict(sorted(cur.counts.items())), "shoes": dict(sorted(cur.shoes.items())),
                "other_shoes": cur.other_shoes}

    def bytes_per_interval_bound(self) -> int:
        """The most journal bytes (bodies and raw) one interval's rejections can add."""
        keys = len(Reason) * 4  # a reason with each of the link's notes, at most
        summary = 256 + keys * 40 + (MAX_SHOES + 1) * 32 + len(Reason) * 32
        return (self.samples + len(self.security) * self.per_reason) * (MAX_ENCODED + SAMPLE_BODY_MAX) + summary
