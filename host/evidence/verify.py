"""Checking an evidence file offline (`cardshoe evidence verify`), with nothing but the file,
the shoe's key and (optionally) the table's public key.

Each check that fails is a `Failure` naming the check and what was wrong; a file verifies
when the list is empty. The checks, in order:

- `format`: the file is an evidence file of this format;
- `signature`: the Ed25519 signature over the body's canonical JSON, by the table's key (the
  one given, else the one the file names, which is then reported as unchecked provenance);
- `frame`: every frame's tag, with the shoe's key, and its header and decoded message are
  what the file records (the card values are opened with the same key, SPEC 3.5);
- `journal`: every frame recorded is the journal entry recorded with the same id (its bytes,
  its body, and the shoe, boot, seq and type the entry was written for), and no frame is
  recorded twice;
- `cards`: every card of the round is the card its authenticated frame carries;
- `operations`: every card in the round's operations is backed by an authenticated frame,
  and the operations replay (`cardshoe.rounds.Round.replay`: the game's dealing procedure
  places each card by its shoe index);
- `hands`: the hands by position rebuilt that way are the hands recorded;
- `round`: the round file rebuilt is the one recorded;
- `settlement`: the settlement recomputed (`cardshoe.settlement`) is the one recorded;
- `jackpot`: the pool before and after and the hits are the settlement's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from cardshoe.evidence.build import ALGORITHM, FORMAT, hands_json, jackpot_json, signed_bytes
from cardshoe.journal.store import canonical_json

KeyLookup = Callable[[int], "bytes | None"]


@dataclass(frozen=True)
class Failure:
    """One failed check: `check` is its name (above), `message` what was wrong."""

    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.check}: {self.message}"


@dataclass(frozen=True)
class Report:
    """The outcome: `failures` (empty when the file verifies) and what was checked."""

    failures: tuple[Failure, ...]
    frames: int
    cards: int
    signer: str | None
    signer_checked: bool

    @property
    def ok(self) -> bool:
        return not self.failures


def _verify_signature(doc: Mapping[str, Any], body: Mapping[str, Any],
                      table_pubkey: bytes | None) -> tuple[list[Failure], str | None]:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    sig = doc.get("signature")
    if not isinstance(sig, Mapping):
        return [Failure("signature", "the file carries no signature")], None
    if sig.get("algorithm") != ALGORITHM:
        return [Failure("signature", f"algorithm {sig.get('algorithm')!r} is not {ALGORITHM}")], None
    try:
        named = bytes.fromhex(str(sig.get("public_key", "")))
        value = bytes.fromhex(str(sig.get("value", "")))
    except ValueError:
        return [Failure("signature", "public_key and value must be hex")], None
    if table_pubkey is not None and named != table_pubkey:
        return [Failure("signature", f"signed by key {named.hex()[:16]}..., not the table's key "
                                     f"{table_pubkey.hex()[:16]}...")], named.hex()
    try:
        Ed25519PublicKey.from_public_bytes(table_pubkey or named).verify(value, signed_bytes(body))
    except (InvalidSignature, ValueError):
        return [Failure("signature", "the Ed25519 signature does not verify over the evidence: the file was "
                                     "altered after it was signed, or signed by another key")], named.hex()
    return [], named.hex()


def _only(serial: int, key: bytes) -> KeyLookup:
    """A key lookup that knows one shoe's key."""
    return lambda s: key if s == serial else None


def _verify_frames(body: Mapping[str, Any], keys: KeyLookup) -> tuple[list[Failure], dict[tuple[int, int], dict[str, Any]]]:
    """Every frame's tag and contents; the authenticated card frames by (shoe_no, index)."""
    from cardshoe.protocol.errors import FrameRejected
    from cardshoe.protocol.frames import decode_frame
    from cardshoe.protocol.messages import message_fields
    from cardshoe.protocol.spec import Direction

    failures: list[Failure] = []
    cards: dict[tuple[int, int], dict[str, Any]] = {}
    journal = {e.get("id"): e for e in body.get("journal", []) if isinstance(e, Mapping)}
    journaled: dict[tuple[int, int, int], Any] = {}  # (shoe, boot, seq) -> the first entry recording it
    for f in body.get("frames", []):
        where = f"frame entry {f.get('entry')} (shoe {f.get('shoe')} boot {f.get('boot')} seq {f.get('seq')})"
        serial = f.get("shoe")
        key = keys(int(serial)) if isinstance(serial, int) else None
        if key is None:
            failures.append(Failure("frame", f"{where}: no key for shoe {serial} to check its tag"))
            continue
        try:
            raw = bytes.fromhex(str(f.get("raw", "")))
            frame = decode_frame(raw, keys=_only(int(serial), key), direction=Direction.SHOE_TO_HOST)
        except ValueError:
            failures.append(Failure("frame", f"{where}: its bytes are not hex"))
            continue
        except FrameRejected as exc:
            failures.append(Failure("frame", f"{where}: refused with the shoe's key: {exc.reason.value}"
                                             f"{' (' + exc.detail + ')' if exc.detail else ''}"))
            continue
        if str(f.get("tag")) != frame.tag.hex():
            failures.append(Failure("frame", f"{where}: the tag recorded is not the frame's"))
        header = (frame.shoe, frame.boot, frame.seq, frame.type.name)
        if header != (f.get("shoe"), f.get("boot"), f.get("seq"), f.get("type")):
            failures.append(Failure("frame", f"{where}: the header recorded is not the frame's "
                                             f"(shoe {frame.shoe} boot {frame.boot} seq {frame.seq} {frame.type.name})"))
            continue
        message = {"type": frame.type.name, **message_fields(frame.message)}
        recorded = dict(f.get("message") or {})
        if frame.type.name == "HELLO":
            message["boot"] = frame.boot  # the daemon journals a HELLO with its boot
        if frame.type.name in ("CARD", "UNREAD"):
            # The card is what the authenticated bytes carry, whatever the record says of them.
            cards.setdefault((int(message["shoe_no"]), int(message["index"])), message)
        if canonical_json(message) != canonical_json(recorded):
            failures.append(Failure("frame", f"{where}: the message recorded is not the one its bytes carry"))
            continue
        entry = journal.get(f.get("entry"))
        if entry is None or entry.get("kind") != "frame" or entry.get("raw") != f.get("raw") \
                or canonical_json(entry.get("body")) != canonical_json(recorded):
            failures.append(Failure("journal", f"{where}: the journal entry recorded with that id is not this frame"))
        elif (entry.get("shoe"), entry.get("boot"), entry.get("seq"), entry.get("type")) != \
                (frame.shoe, frame.boot, frame.seq, int(frame.type)):
            # The entry's own columns name the frame it was written for: bytes and body of
            # another frame copied into it (the frame list's record with them) are refused.
            failures.append(Failure("journal", f"{where}: the journal entry recorded with that id was written for "
                                               f"shoe {entry.get('shoe')} boot {entry.get('boot')} seq "
                                               f"{entry.get('seq')}, not this frame"))
        first = journaled.setdefault((frame.shoe, frame.boot, frame.seq), f.get("entry"))
        if first != f.get("entry"):
            # The link accepts a (shoe, boot, seq) once (SPEC 3.2): one frame in two entries
            # is a copy standing in for a frame that was there.
            failures.append(Failure("journal", f"{where}: the same frame is recorded as journal entry {first} too"))
    return failures, cards


def _frame_card(msg: Mapping[str, Any]) -> tuple[int | None, int, str]:
    """(code, deck id, reader ID) as the round records a card frame (0xFF: no card)."""
    if msg["type"] == "UNREAD":
        return None, 0, ""
    code = int(msg["code"])
    return (None if code == 0xFF else code), int(msg["card_deck"]), str(msg["raw"])


def _text(code: int | None) -> str:
    from cardshoe.cards import card_text

    return "unread" if code is None else card_text(code)


def verify(doc: Mapping[str, Any], *, keys: KeyLookup, table_pubkey: bytes | None = None) -> Report:
    """Check an evidence file (parsed JSON); `keys` maps a shoe serial to its key."""
    from cardshoe import settlement
    from cardshoe.rounds import Round, RoundOperationError, ShoeCard, operation_from_json

    body = doc.get("evidence")
    if not isinstance(body, Mapping) or body.get("format") != FORMAT:
        return Report((Failure("format", f"not an evidence file of format {FORMAT}"),), 0, 0, None, False)
    failures, signer = _verify_signature(doc, body, table_pubkey)
    frame_failures, by_index = _verify_frames(body, keys)
    failures += frame_failures

    for card in body.get("cards", []):
        where = f"card shoe {card.get('shoe_no')} index {card.get('index')}"
        msg = by_index.get((card.get("shoe_no"), card.get("index")))
        if msg is None:
            failures.append(Failure("cards", f"{where}: no authenticated frame carries it"))
            continue
        code, deck, reader = _frame_card(msg)
        if (card.get("code"), card.get("deck_id"), card.get("reader_id")) != (code, deck, reader) \
                or card.get("card") != (None if code is None else _text(code)):
            failures.append(Failure("cards", f"{where}: recorded as {card.get('card')}, its frame carries "
                                             f"{_text(code)} (deck {deck}, reader ID {reader or '-'})"))

    ops: list[Any] = []
    try:
        ops = [operation_from_json(dict(o)) for o in body.get("operations", [])]
    except (TypeError, ValueError) as exc:
        failures.append(Failure("operations", f"an operation cannot be read: {exc}"))
    for op in ops:
        if isinstance(op, ShoeCard):
            msg = by_index.get((op.shoe_no, op.index))
            where = f"shoe card {op.index} of shoe {op.shoe_no}"
            if msg is None:
                failures.append(Failure("operations", f"{where}: no authenticated frame carries it"))
            elif (op.code, op.deck_id, op.reader_id) != _frame_card(msg):
                failures.append(Failure("operations", f"{where}: the round placed {_text(op.code)}, its frame "
                                                      f"carries {_text(_frame_card(msg)[0])}"))
    rebuilt: Round | None = None
    if ops:
        try:
            rebuilt = Round.replay(ops)
        except RoundOperationError as exc:
            failures.append(Failure("operations", f"the operations do not replay: {exc}"))
    if rebuilt is not None:
        if rebuilt.round_id != body.get("round_id"):
            failures.append(Failure("operations", f"the operations are of round {rebuilt.round_id}, "
                                                  f"not {body.get('round_id')}"))
        hands = hands_json(rebuilt)
        if canonical_json(hands) != canonical_json(body.get("hands")):
            diff = [pos for pos in sorted(set(hands["positions"]) | set((body.get("hands") or {}).get("positions", {})))
                    if hands["positions"].get(pos) != ((body.get("hands") or {}).get("positions") or {}).get(pos)]
            failures.append(Failure("hands", "the hands rebuilt from the frames by the dealing procedure differ "
                                             f"from those recorded at {', '.join(diff) or 'burns/security'}: "
                                    + "; ".join(f"{p} {hands['positions'].get(p)}" for p in diff)))
        table = body.get("table") or {}
        round_file = rebuilt.to_round_json(limits=table.get("limits") or {}, jackpot_reset=table.get("jackpot_reset"))
        recorded_round = body.get("round") or {}
        if isinstance(round_file.get("jackpot"), dict) and round_file["jackpot"].get("pool") is None \
                and isinstance(recorded_round.get("jackpot"), Mapping):
            # A pool given when the round was settled again after a failed settlement (TableCore).
            round_file["jackpot"]["pool"] = recorded_round["jackpot"].get("pool")
        if canonical_json(round_file) != canonical_json(recorded_round):
            failures.append(Failure("round", "the round file rebuilt from the operations is not the one recorded"))
        try:
            again = settlement.settle(settlement.parse_round(round_file)).to_json()
        except Exception as exc:  # noqa: BLE001 - any refusal is a failed check, named
            failures.append(Failure("settlement", f"the rebuilt round cannot be settled: {type(exc).__name__}: {exc}"))
        else:
            recorded = body.get("settlement")
            if canonical_json(again) != canonical_json(recorded):
                seats = {s["seat"]: s.get("net") for s in again.get("seats", [])}
                said = {s.get("seat"): s.get("net") for s in (recorded or {}).get("seats", []) if isinstance(s, Mapping)}
                wrong = [f"seat {s} net {said.get(s)} recorded, {seats.get(s)} recomputed"
                         for s in sorted(set(seats) | set(said), key=str) if seats.get(s) != said.get(s)]
                failures.append(Failure("settlement", "the settlement recomputed from the rebuilt round differs"
                                        + (": " + "; ".join(wrong) if wrong else "")))
            if canonical_json(jackpot_json(again)) != canonical_json(body.get("jackpot")):
                failures.append(Failure("jackpot", "the pool before/after or the hits recorded are not the "
                                                   "recomputed settlement's"))
    return Report(tuple(failures), len(body.get("frames", [])), len(body.get("cards", [])), signer,
                  table_pubkey is not None)
