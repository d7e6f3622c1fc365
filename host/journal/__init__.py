"""The daemon's durable journal (SQLite, WAL, one writer thread) and its replay.

- `Journal` / `JournalReader` / `append` / `set_window` / `canonical_json`: see `store`.
- `cardshoe replay JOURNAL`: see `cardshoe.journal.replay`.
"""

from cardshoe.journal.store import (
    KINDS,
    Entry,
    Journal,
    JournalClosed,
    JournalError,
    JournalLocked,
    JournalReader,
    JournalReadOnly,
    JournalUnreadable,
    JournalWriteFailed,
    append,
    canonical_json,
    now_ns,
    set_window,
)

__all__ = [
    "KINDS",
    "Entry",
    "Journal",
    "JournalClosed",
    "JournalError",
    "JournalLocked",
    "JournalReader",
    "JournalReadOnly",
    "JournalUnreadable",
    "JournalWriteFailed",
    "append",
    "canonical_json",
    "now_ns",
    "set_window",
]
