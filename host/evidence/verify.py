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
- `jackpot`: the pool before and after and the hits are the settlement's;
- `chain`: the journal section's hash chain (`cardshoe.journal.chain`) follows entry by entry
  from `chain_prev`, with no gap; every frame entry of the section is a frame recorded, and
  every frame recorded an entry of it;
- `journal`: the section against the operations: every operation a controller input made is
  that input, accepted, in the section, in order, and every accepted input of the round is an
  operation; every operation the shoe made has its frame; the round opens and is settled there;
- `floor`: the floor's signed assignment (with `--floor-pubkey`, the floor's key; required
  then): of this round and table, at an entry of the section whose chain value it names (so
  every entry up to it, frames, wagers and decisions, is the one the floor settled from), for
  the round file rebuilt from the operations (its digest), with the pool and the hits of the
  settlement and of the settle input journaled after it.

A file is read with `cardshoe.strictjson` (`read`): a key given twice, anywhere, is refused
before any check, so no reader can be shown a different value from the one signed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from cardshoe.evidence.build import ALGORITHM, FORMATS, hands_json, jackpot_json, signed_bytes
from cardshoe.journal.store import canonical_json
from cardshoe.strictjson import Limits
from cardshoe.strictjson import loads as strict_loads

#: The bounds of an evidence file: a round's frames and journal (a few thousand entries).
EVIDENCE_FILE = Limits(max_bytes=64 << 20, max_depth=32, max_string=1 << 20, max_digits=20, max_items=200_000)


def read(data: bytes | str) -> Any:
    """An evidence file parsed strictly (`cardshoe.strictjson`): a duplicate key, anywhere,
    raises `JSONInputError` naming it."""
    return strict_loads(data, EVIDENCE_FILE)

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


def verify(doc: Mapping[str, Any], *, keys: KeyLookup, table_pubkey: bytes | None = None,
           floor_pubkey: bytes | None = None) -> Report:
    """Check an evidence file (parsed JSON, best by `read`); `keys` maps a shoe serial to its
    key. With `floor_pubkey` the file must carry the floor's assignment signed by that key."""
    from cardshoe import settlement
    from cardshoe.rounds import Round, RoundOperationError, ShoeCard, operation_from_json

    body = doc.get("evidence")
    if not isinstance(body, Mapping) or body.get("format") not in FORMATS:
        return Report((Failure("format", f"not an evidence file of format {' or '.join(FORMATS)}"),), 0, 0, None,
                      False)
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
    failures += _guarded("chain", lambda: _verify_chain(body))
    failures += _guarded("journal", lambda: _verify_journal_ops(body, ops))
    if body.get("floor") is not None or floor_pubkey is not None:
        failures += _guarded("floor", lambda: _verify_floor(body, rebuilt, floor_pubkey))
    return Report(tuple(failures), len(body.get("frames", [])), len(body.get("cards", [])), signer,
                  table_pubkey is not None)


def _guarded(check: str, run: Callable[[], list[Failure]]) -> list[Failure]:
    """Run a check on untrusted data: whatever shape it has, a failure named, never a crash."""
    try:
        return run()
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return [Failure(check, f"the file cannot be checked: {type(exc).__name__}: {exc}")]


def _entries(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    journal = body.get("journal")
    if not isinstance(journal, list) or not all(isinstance(e, Mapping) for e in journal):
        raise TypeError("journal: a list of entries")
    return journal


def _verify_chain(body: Mapping[str, Any]) -> list[Failure]:
    """The journal section's hash chain from `chain_prev`, and its frames against `frames`."""
    import hashlib

    from cardshoe.journal.chain import ChainLink, breaks

    journal = _entries(body)
    failures: list[Failure] = []
    frames = {f.get("entry") for f in body.get("frames", []) if isinstance(f, Mapping)}
    in_journal = {e.get("id") for e in journal if e.get("kind") == "frame" and e.get("raw") is not None}
    for eid in sorted(in_journal - frames, key=str):
        failures.append(Failure("chain", f"frame entry {eid} of the journal is not among the frames recorded"))
    for eid in sorted(frames - in_journal, key=str):
        failures.append(Failure("chain", f"frame {eid} recorded is not a frame entry of the journal"))
    prev = body.get("chain_prev")
    if prev is None:
        if body.get("format") != FORMATS[0]:
            failures.append(Failure("chain", "the file carries no chain_prev: its journal section cannot be checked"))
        return failures
    links = []
    for e in journal:
        raw = e.get("raw")
        digest = hashlib.sha256(bytes.fromhex(raw)).hexdigest() if isinstance(raw, str) else e.get("raw_sha256")
        links.append(ChainLink(int(e["id"]), int(e["t_ns"]), str(e["kind"]), e.get("shoe"), e.get("boot"),
                               e.get("seq"), e.get("type"), e.get("round_id"), canonical_json(e.get("body")),
                               digest, e.get("chain")))
    if not links:
        return failures + [Failure("chain", "the journal section is empty")]
    problems, _, _ = breaks(links, str(prev), links[0].id - 1)
    return failures + [Failure("chain", p) for p in problems]


#: The operations the table core makes from shoe frames rather than from a controller input.
_FROM_FRAMES = {"ShoeCard": ("CARD", "UNREAD"), "DeckIrregularity": ("DECK_STATUS",), "ShoePowerFailure": ("HELLO",),
                "DealComplete": ("KEY",), "ExposureDeclared": ("KEY",)}


def _verify_journal_ops(body: Mapping[str, Any], ops: list[Any]) -> list[Failure]:
    """The round's operations against the journal section's inputs and frames."""
    from cardshoe.rounds import OpenRound, Settle, operation_to_json

    journal = _entries(body)
    rid = body.get("round_id")
    failures: list[Failure] = []
    accepted: list[tuple[int, Mapping[str, Any]]] = []
    settles: list[tuple[int, Mapping[str, Any]]] = []
    opened = False
    frame_types: dict[str, int] = {}
    for i, e in enumerate(journal):
        if e.get("kind") == "frame" and isinstance(e.get("body"), Mapping):
            t = str(e["body"].get("type"))
            frame_types[t] = frame_types.get(t, 0) + 1
        if e.get("kind") != "input" or not isinstance(e.get("body"), Mapping):
            continue
        data = e["body"]
        refused = False
        for after in journal[i + 1:]:
            if after.get("kind") not in ("event", "settlement"):
                break
            if isinstance(after.get("body"), Mapping) and after["body"].get("type") == "input_refused":
                refused = True
        if refused:
            continue
        if data.get("action") == "open_round" and e.get("round_id") == rid:
            opened = True
        elif data.get("action") == "op" and data.get("round_id") == rid:
            accepted.append((int(e["id"]), data))
        elif data.get("action") == "settle" and data.get("round_id") == rid:
            settles.append((int(e["id"]), data))
    if not opened:
        failures.append(Failure("journal", f"the journal section holds no accepted open_round of round {rid}"))
    k = 0
    used: dict[str, int] = {}
    for op in ops:
        name = type(op).__name__
        if isinstance(op, OpenRound):
            continue
        if isinstance(op, Settle):
            # A void round is closed by the next round's opening, not by a settle input.
            if not any(type(o).__name__ == "VoidRound" for o in ops) and not any(
                    d.get("jackpot_pool") in (None, op.jackpot_pool) for _, d in settles):
                failures.append(Failure("journal", f"the round's Settle (pool {op.jackpot_pool}) is no accepted "
                                                   "settle input of the journal section"))
            continue
        if k < len(accepted) and canonical_json(operation_to_json(op)) == canonical_json(accepted[k][1].get("op")):
            k += 1
            continue
        source = getattr(op, "source", None)
        if name in _FROM_FRAMES and (source is None or str(getattr(source, "value", source)) != "table"):
            used[name] = used.get(name, 0) + 1
            continue
        failures.append(Failure("journal", f"operation {name} {canonical_json(operation_to_json(op))[:120]} is no "
                                           "accepted input of the journal section (or not in its order)"))
    for eid, data in accepted[k:]:
        failures.append(Failure("journal", f"input entry {eid} ({canonical_json(data.get('op'))[:120]}) was accepted "
                                           "but is not among the round's operations"))
    for name, n in used.items():
        have = sum(frame_types.get(t, 0) for t in _FROM_FRAMES[name])
        if n > have:
            failures.append(Failure("journal", f"{n} {name} operations, but {have} frames that could make them"))
    return failures


def _verify_floor(body: Mapping[str, Any], rebuilt: Any, floor_pubkey: bytes | None) -> list[Failure]:
    """The floor's signed assignment against the round, its journal section and settlement."""
    from cardshoe.floor.progressive import round_digest
    from cardshoe.floor.signing import verify_signed

    signed = body.get("floor")
    if signed is None:
        return [Failure("floor", "the file carries no assignment signed by the floor (a round the floor never "
                                 "settled, or one taken out)")]
    problem = verify_signed(signed, floor_pubkey)
    if problem is not None:
        return [Failure("floor", problem)]
    a = signed["assignment"]
    failures: list[Failure] = []
    rid = body.get("round_id")
    if a.get("round_id") != rid:
        failures.append(Failure("floor", f"the floor assigned round {a.get('round_id')}, not {rid}"))
    name = (body.get("table") or {}).get("name")
    if not str(a.get("table", "")).startswith(f"{name}."):
        failures.append(Failure("floor", f"the floor assigned table {a.get('table')}'s round, not table {name}'s"))
    journal = {int(e["id"]): e for e in _entries(body)}
    sent = journal.get(int(a.get("entry") or 0))
    if sent is None:
        failures.append(Failure("floor", f"the entry {a.get('entry')} the floor settled from is not in the journal "
                                         "section"))
    else:
        if sent.get("chain") != a.get("chain"):
            failures.append(Failure("floor", f"entry {a.get('entry')} of the journal section is not the one the floor "
                                             "settled from (its chain value differs): the journal up to it was "
                                             "changed"))
        sb: Mapping[str, Any] = sent["body"] if isinstance(sent.get("body"), Mapping) else {}
        if sent.get("kind") != "floor" or sb.get("type") != "settle_sent" or sb.get("round_id") != rid:
            failures.append(Failure("floor", f"entry {a.get('entry')} is not the round's settle_sent"))
    if rebuilt is not None:
        table = body.get("table") or {}
        round_file = rebuilt.to_round_json(limits=table.get("limits") or {}, jackpot_reset=table.get("jackpot_reset"))
        if round_digest(round_file) != a.get("digest"):
            failures.append(Failure("floor", "the round rebuilt from the operations is not the round the floor "
                                             "rebuilt from the journal (digest): cards, wagers or decisions differ"))
    else:
        failures.append(Failure("floor", "no round rebuilt from the operations to check against the floor's"))
    settles = [e for e in journal.values() if e.get("kind") == "input" and isinstance(e.get("body"), Mapping)
               and e["body"].get("action") == "settle" and e["body"].get("round_id") == rid
               and int(e["id"]) > int(a.get("entry") or 0)]
    if not any(canonical_json((e["body"].get("floor") or {}).get("signed")) == canonical_json(signed)
               and e["body"].get("jackpot_pool") == a.get("pool") for e in settles):
        failures.append(Failure("floor", "no settle input after the floor's entry settles the round with the "
                                         "floor's signed assignment and pool"))
    paid = body.get("settlement") or {}
    ledger = paid.get("jackpot") or {}
    if (ledger.get("pool_before"), ledger.get("pool_after")) != (a.get("pool"), a.get("pool_after")):
        failures.append(Failure("floor", f"the settlement's pool {ledger.get('pool_before')} -> "
                                         f"{ledger.get('pool_after')} is not the floor's {a.get('pool')} -> "
                                         f"{a.get('pool_after')}"))
    payouts = sorted((int(m.get("seat") or 0), int(m.get("amount", 0))) for m in ledger.get("movements", [])
                     if isinstance(m, Mapping) and m.get("kind") == "payout")
    hits = sorted((int(h.get("seat") or 0), int(h.get("amount", 0))) for h in a.get("hits", []))
    if payouts != hits:
        failures.append(Failure("floor", f"the settlement pays {payouts} from the pool; the floor's hits are {hits}"))
    jackpot = body.get("jackpot") or {}
    if (jackpot.get("pool_before"), jackpot.get("pool_after")) != (a.get("pool"), a.get("pool_after")):
        failures.append(Failure("floor", "the jackpot recorded is not the floor's pool before and after"))
    return failures
