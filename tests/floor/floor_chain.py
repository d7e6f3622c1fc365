"""Hash-chained entries for the floor tests, computed from the chain's written definition
(`cardshoe.journal.chain`'s docstring, docs/floor.md): SHA-256 of the JSON array
[prev, id, t_ns, kind, shoe, boot, seq, type, round_id, body, raw_sha256], the first entry
following SHA-256("cardshoe.journal.chain/1\\0" + the journal id ending the stream's key).
Written here from that text, not with the code under test, so a change to the format fails."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Sequence

from cardshoe.floor.store import ShippedEntry


def genesis(stream: str) -> str:
    return hashlib.sha256(b"cardshoe.journal.chain/1\x00" + stream.rsplit(".", 1)[-1].encode()).hexdigest()


def link(prev: str, e: ShippedEntry) -> str:
    raw = None if e.raw is None else hashlib.sha256(e.raw).hexdigest()
    text = json.dumps([prev, e.id, e.t_ns, e.kind, e.shoe, e.boot, e.seq, e.type, e.round_id, e.body,
                       raw if raw is not None else e.raw_sha256], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def chained(stream: str, entries: Sequence[ShippedEntry], prev: str | None = None) -> list[ShippedEntry]:
    """`entries` (ids following each other) with their chain values, from the stream's genesis."""
    value = genesis(stream) if prev is None else prev
    out = []
    for e in sorted(entries, key=lambda x: x.id):
        value = link(value, e)
        out.append(replace(e, chain=value))
    return out
