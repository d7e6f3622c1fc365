"""Building and signing a round's evidence file (issue 14 item 5).

An evidence file is one JSON object, self-contained, so that a surveillance office can check
it offline with the shoe's key and the table's public key alone (`cardshoe evidence verify`):

```text
{"evidence": BODY, "signature": {"algorithm": "Ed25519", "public_key": HEX, "value": HEX}}
```

The signature is over the UTF-8 bytes of BODY's canonical JSON (`cardshoe.journal.canonical_json`:
sorted keys, no spaces). BODY (`FORMAT`) holds:

- `table`: the table's settings the round was played under (game, seats, dealing, limits, reset);
- `round_id`, `reason` (`progressive_hit` or `request`), `made_ns` (host time it was made);
- `shoe`: the shoe serial(s), shoe session, deck id and boot(s) the round's cards came from;
- `frames`: every shoe frame journaled while the round was open, as received (`raw`: the
  COBS-encoded bytes between delimiters, hex) with its `tag`, header (`shoe`, `boot`, `seq`,
  `type`), the journal entry id and host time, and the message the daemon decoded from it;
- `cards`: the round's cards by shoe index: card, code, deck id read, reader ID (RFID UID or
  barcode), read method, shoe and host times, the place the dealing procedure gave it;
- `journal`: every journal entry from the round's opening to its settlement (bodies as JSON,
  raw bytes as hex; a checkpoint's state is left out, its body kept);
- `operations`: the round's recorded operations (`cardshoe.rounds`), from which it is rebuilt;
- `hands`: the hands by position (`seat 1`, `dealer`, `community`), burns and security card;
- `round`: the round in the round-file format; `settlement`: its settlement;
- `jackpot`: the pool before and after (from the settlement's ledger, i.e. the pool as this
  table knew it when the round was settled), the reset, the movements, and the winning
  progressive wagers (`hits`);
- `chain_prev`: the hash chain value of the journal entry before the first of `journal`
  (each entry of `journal` carries its own `chain`, and `raw_sha256` where its bytes are left
  out), so the segment is checked entry by entry (`cardshoe.journal.chain`);
- `floor`: on a linked table, the floor's signed assignment of the round (`{assignment,
  signature}`, `cardshoe.floor.signing`), as the table journaled it with the settlement; it
  names the journal entry the floor rebuilt the round from and that entry's chain value, the
  rebuilt round file's digest, the pool and the hits, so `cardshoe evidence verify
  --floor-pubkey` refutes a file changed anywhere, even one signed again with the table's key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from cobs import cobs

from cardshoe.cards import card_text
from cardshoe.journal.chain import raw_sha256
from cardshoe.journal.store import Entry, JournalReader, canonical_json
from cardshoe.protocol.spec import CRC_SIZE, TAG_SIZE
from cardshoe.rounds import Round, operation_to_json

FORMAT = "cardshoe.evidence/2"
"""2: `chain_prev`, each journal entry's `chain` (and `raw_sha256`), and `floor`. Files of
format 1 are still verified, without the checks those fields make possible."""
FORMATS = ("cardshoe.evidence/1", FORMAT)
ALGORITHM = "Ed25519"


class EvidenceError(Exception):
    """Evidence cannot be made for this round (unknown, not settled); the message says why."""


@dataclass(frozen=True)
class RoundRecord:
    """What the table core holds of one settled round (taken under the service lock)."""

    table: dict[str, Any]
    round_: Round
    round_file: dict[str, Any]
    settlement: dict[str, Any]


def record_of(core: Any, round_id: str) -> RoundRecord:
    """The settled round `round_id` of a `TableCore`, or EvidenceError."""
    round_ = core.rounds.get(round_id)
    if round_ is None:
        raise EvidenceError(f"round: no round {round_id!r} at this table")
    paid = core.settlements.get(round_id)
    if paid is None:
        raise EvidenceError(f"round: {round_id} is not settled yet; evidence is made of a settled round")
    return RoundRecord(table=core.setup.to_json(), round_=round_, round_file=core.export(round_),
                       settlement=dict(paid["settlement"]))


def progressive_hits(settlement: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The progressive wagers a settlement pays (a line of the progressive pay table, a share
    of the pool, a fixed amount, an Envy Bonus, Magic Card or Lucky Player): empty when none."""
    hits = []
    for seat in settlement.get("seats", []):
        for wager in seat.get("wagers", []):
            if wager.get("wager") == "progressive" and int(wager.get("paid", 0)) > 0 and wager.get("lines"):
                hits.append({"seat": seat["seat"], "paid": wager["paid"], "net": wager["net"],
                             "lines": wager["lines"], "rules": wager.get("rules", [])})
    return hits


def frame_tag(raw: bytes) -> bytes:
    """The HMAC tag of a frame given as its COBS-encoded bytes (SPEC 2: ... | tag | CRC-32)."""
    frame: bytes = cobs.decode(bytes(raw).strip(b"\x00"))
    return frame[-(CRC_SIZE + TAG_SIZE):-CRC_SIZE]


def round_entries(reader: JournalReader, round_id: str) -> list[Entry]:
    """Every journal entry from the round's first (its opening) to its last (its settlement)."""
    ids = [e.id for e in reader.entries(round_id=round_id)]
    if not ids:
        raise EvidenceError(f"round: the journal holds no entry of round {round_id!r}")
    first, last = min(ids), max(ids)
    out = []
    for entry in reader.entries(after_id=first - 1):
        if entry.id > last:
            break
        out.append(entry)
    return out


def _entry_json(entry: Entry) -> dict[str, Any]:
    left_out = entry.raw is not None and entry.kind == "checkpoint"
    raw = None if entry.raw is None or left_out else entry.raw.hex()
    out = {"id": entry.id, "t_ns": entry.t_ns, "kind": entry.kind, "shoe": entry.shoe, "boot": entry.boot,
           "seq": entry.seq, "type": entry.type, "round_id": entry.round_id, "body": entry.data(), "raw": raw,
           "chain": entry.chain}
    if left_out:
        out["raw_sha256"] = raw_sha256(entry.raw)
    return out


def chain_before(reader: JournalReader, first_id: int) -> str | None:
    """The chain value the entry `first_id` follows (the journal's genesis before entry 1)."""
    if first_id <= 1:
        return reader.genesis() if reader.chained else None
    before = reader.entry(first_id - 1)
    return None if before is None else before.chain


def floor_assignment(entries: Iterable[Entry], round_id: str) -> dict[str, Any] | None:
    """The floor's signed assignment the table journaled with the round's settlement, or None."""
    found = None
    for e in entries:
        if e.kind == "input" and e.round_id == round_id:
            body = e.data()
            floor = body.get("floor") if isinstance(body, dict) and body.get("action") == "settle" else None
            if isinstance(floor, dict) and isinstance(floor.get("signed"), dict):
                found = floor["signed"]
    return found


def _frame_json(entry: Entry) -> dict[str, Any]:
    assert entry.raw is not None
    message = entry.data()
    try:
        tag = frame_tag(entry.raw).hex()
    except cobs.DecodeError:
        tag = None  # the journal holds only frames the link accepted; kept for the verifier to refuse
    return {"entry": entry.id, "t_ns": entry.t_ns, "shoe": entry.shoe, "boot": entry.boot, "seq": entry.seq,
            "type": message.get("type"), "raw": entry.raw.hex(), "tag": tag, "message": message}


def _card_json(index: int, round_: Round) -> dict[str, Any]:
    card = round_.cards[index]
    place = round_.placements.get(index)
    return {"shoe_no": card.shoe_no, "index": index, "code": card.code,
            "card": None if card.code is None else card_text(card.code), "deck_id": card.deck_id,
            "reader_id": card.reader_id, "read_method": card.read_method, "shoe_ms": card.shoe_ms,
            "time_ms": card.time_ms, "duplicate": card.duplicate, "foreign": card.foreign,
            "place": None if place is None else place.label()}


def _texts(codes: Iterable[int | None]) -> list[str | None]:
    return [None if c is None else card_text(c) for c in codes]


def hands_json(round_: Round) -> dict[str, Any]:
    """The hands by position (`seat 1`, `dealer`, `community`), burns and security card."""
    hands = {pos.label(): _texts(cards) for pos, cards in round_.hands().items()}
    return {"positions": hands, "burns": _texts(round_.burns), "security": _texts(round_.security)}


def jackpot_json(settlement: Mapping[str, Any]) -> dict[str, Any] | None:
    """The pool before and after, reset, movements and hits of a settlement (None: no jackpot)."""
    ledger = settlement.get("jackpot")
    if not isinstance(ledger, Mapping):
        return None
    return {"pool_before": ledger["pool_before"], "pool_after": ledger["pool_after"], "reset": ledger["reset"],
            "movements": ledger["movements"], "hits": progressive_hits(settlement)}


def build(record: RoundRecord, entries: list[Entry], *, reason: str, made_ns: int,
          chain_prev: str | None = None) -> dict[str, Any]:
    """The evidence BODY of a settled round from its record and its journal entries
    (`chain_prev`: the chain value of the entry before the first, `chain_before`)."""
    round_ = record.round_
    frames = [_frame_json(e) for e in entries if e.kind == "frame" and e.raw is not None]
    cards = [_card_json(i, round_) for i in sorted(round_.cards)]
    shoes = sorted({(f["shoe"], f["boot"]) for f in frames
                    if f["type"] in ("CARD", "UNREAD") and f["message"].get("shoe_no") == round_.shoe_no})
    return {
        # A journal read without its chain (schema 1, not upgraded) gives a file of format 1.
        "format": FORMAT if chain_prev is not None else FORMATS[0],
        "table": record.table,
        "round_id": round_.round_id,
        "reason": reason,
        "made_ns": made_ns,
        "shoe": {"serials": sorted({s for s, _ in shoes}), "boots": [{"shoe": s, "boot": b} for s, b in shoes],
                 "shoe_no": round_.shoe_no, "deck_ids": sorted({c["deck_id"] for c in cards})},
        "frames": frames,
        "cards": cards,
        "journal": [_entry_json(e) for e in entries],
        "operations": [operation_to_json(op) for op in round_.operations],
        "hands": hands_json(round_),
        "round": record.round_file,
        "settlement": record.settlement,
        "jackpot": jackpot_json(record.settlement),
        "chain_prev": chain_prev,
        "floor": floor_assignment(entries, round_.round_id),
    }


def signed_bytes(body: Mapping[str, Any]) -> bytes:
    """The bytes the signature covers: BODY's canonical JSON in UTF-8."""
    return canonical_json(body).encode("utf-8")


def public_key_of(seed: bytes) -> bytes:
    """The 32-byte Ed25519 public key of a table's private seed."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = Ed25519PrivateKey.from_private_bytes(seed)
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def sign(body: Mapping[str, Any], seed: bytes) -> dict[str, Any]:
    """The evidence file: BODY with the table's Ed25519 signature over its canonical JSON."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_private_bytes(seed)
    value = key.sign(signed_bytes(body))
    return {"evidence": dict(body),
            "signature": {"algorithm": ALGORITHM, "public_key": public_key_of(seed).hex(), "value": value.hex()}}


def export(core: Any, reader: JournalReader, round_id: str, seed: bytes, *, reason: str,
           made_ns: int) -> dict[str, Any]:
    """The signed evidence file of settled round `round_id` (`core` the table core rebuilt from
    the journal `reader` reads, or the live one under its service lock)."""
    record = record_of(core, round_id)
    entries = round_entries(reader, round_id)
    body = build(record, entries, reason=reason, made_ns=made_ns, chain_prev=chain_before(reader, entries[0].id))
    return sign(body, seed)
