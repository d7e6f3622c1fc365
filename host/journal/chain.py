"""The journal's hash chain: each entry sealed to the one before it (issue 21 item 3).

Every entry carries `chain`, the SHA-256 (hex) of the previous entry's `chain` and this
entry's fields, so an entry edited, removed or inserted after the fact breaks every link
after it, and two copies of a journal agree up to an entry exactly when their chains agree
there. The first entry chains from the journal's *genesis*: SHA-256 of a fixed domain string
and the id the journal was created with (`meta` `chain_genesis`), so a chain cannot be spliced
into another journal. The floor keeps every chain value it was shipped: once an entry is on
the floor, the table cannot change it, nor the entries before it, without the floor seeing
the break (docs/floor.md, "Tamper-evident journals").

The hashed text is the JSON array (no spaces, UTF-8, non-ASCII characters as themselves,
Python `json`'s escapes) of

    [prev, id, t_ns, kind, shoe, boot, seq, type, round_id, body, raw_sha256]

where `body` is the entry's canonical JSON text as stored and `raw_sha256` the SHA-256 (hex)
of its raw bytes, or null. Hashing the raw bytes' digest rather than the bytes lets an entry
whose bytes are not sent (a checkpoint's pickled state) still be checked by whoever holds
the digest. Pure functions: the journal's writer, `cardshoe replay`, the floor and the
evidence verifier all use these.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Iterable

__all__ = ["DOMAIN", "genesis", "raw_sha256", "entry_hash", "ChainLink", "breaks"]

DOMAIN = b"cardshoe.journal.chain/1\x00"


def genesis(journal_id: str) -> str:
    """The value the first entry of the journal created with id `journal_id` chains from."""
    return hashlib.sha256(DOMAIN + journal_id.encode("utf-8")).hexdigest()


def raw_sha256(raw: bytes | None) -> str | None:
    """The digest of an entry's raw bytes as the chain takes it (None: no bytes)."""
    return None if raw is None else hashlib.sha256(raw).hexdigest()


def entry_hash(prev: str, entry_id: int, t_ns: int, kind: str, shoe: int | None, boot: int | None,
               seq: int | None, type_: int | None, round_id: str | None, body: str, raw_digest: str | None) -> str:
    """The chain value of one entry following the entry whose chain value is `prev`."""
    text = json.dumps([prev, entry_id, t_ns, kind, shoe, boot, seq, type_, round_id, body, raw_digest],
                      separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ChainLink:
    """What the chain covers of one entry: its fields, its raw bytes' digest and its chain value."""

    id: int
    t_ns: int
    kind: str
    shoe: int | None
    boot: int | None
    seq: int | None
    type: int | None
    round_id: str | None
    body: str
    raw_digest: str | None
    chain: str | None

    def expected(self, prev: str) -> str:
        """This entry's chain value if it follows `prev`."""
        return entry_hash(prev, self.id, self.t_ns, self.kind, self.shoe, self.boot, self.seq, self.type,
                          self.round_id, self.body, self.raw_digest)


def breaks(links: Iterable[ChainLink], prev: str, prev_id: int) -> tuple[list[str], str, int]:
    """Check entries in id order after the entry `prev_id` whose chain value is `prev`.

    Returns (problems, the last chain value, the last id). Each problem names the entry: a gap
    in the ids (an entry removed), a chain value that does not follow (an entry edited or
    inserted), an entry with none. After a break the entry's own value is taken as the next
    `prev`, so each break is reported once, not at every entry after it."""
    problems: list[str] = []
    for link in links:
        if link.id != prev_id + 1:
            problems.append(f"entry {link.id}: follows entry {prev_id} (a gap: entries "
                            f"{prev_id + 1}..{link.id - 1} missing)")
        if link.chain is None:
            problems.append(f"entry {link.id}: has no chain value")
        elif link.chain != link.expected(prev):
            problems.append(f"entry {link.id}: its chain value does not follow from entry {prev_id}'s (the entry, "
                            "or one before it, was edited, removed or inserted after it was written)")
        prev = link.chain if link.chain is not None else prev
        prev_id = link.id
    return problems, prev, prev_id
