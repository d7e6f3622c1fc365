"""Identification and deck integrity on the device, under micropython with a 64 KB heap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardshoe import protocol as P

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "barcodes.json"

# The whole shoe runs in a 64 KB heap, as issue 3 asks: the firmware boots the way main.py
# boots it (app.run.boot_shoe: boot-only code dropped, the rest loaded one module at a time).
HEAP = "64k"

SETUP = """
import shoetest as T
root = T.mount(T.BlockDev(path=IMG))
T.provision(root)
shoe, board = T.new_shoe(root)
T.spin(shoe)
T.out(board)
"""


def load_rfid(wire, shoe_no=5, deck_id=7):  # type: ignore[no-untyped-def]
    """Host frames (hex) loading a 52-card RFID manifest in 4 parts (UIDs of shoetest.uid_of)."""
    frames = []
    for part in range(4):
        entries = tuple(
            P.ManifestEntry(code=c, uid=bytes((0x04, 7, c, 0xA0, 0xB1, 0xC2, c ^ 0x5A))) for c in range(part * 13, part * 13 + 13)
        )
        frames.append(wire.frame(P.NewShoe(shoe_no=shoe_no, deck_id=deck_id, scheme=1, part=part, parts=4, entries=entries)))
    return frames


def cards_of(batches):  # type: ignore[no-untyped-def]
    out = []
    for batch in batches:
        for f in batch:
            if isinstance(f.message, (P.Card, P.Unread)):
                out.append(f.message)
    return out


def statuses(batches):  # type: ignore[no-untyped-def]
    return [f.message for b in batches for f in b if isinstance(f.message, P.DeckStatus)]


def test_barcode_parser_agrees_with_the_protocol_vectors(mpy) -> None:  # type: ignore[no-untyped-def]
    if not VECTORS.exists():
        pytest.skip("protocol/vectors/barcodes.json not written yet")
    items = json.loads(VECTORS.read_text())["barcodes"]
    texts = [v["text"] for v in items]
    code = "from app.barcode import parse_barcode\n"
    code += f"for t in {texts!r}:\n    b = t.encode()\n    print(parse_barcode(b, len(b)))\n"
    lines = mpy(code).splitlines()
    assert len(lines) == len(items)
    for v, line in zip(items, lines):
        want = f"({v['deck_id']}, {v['code']})" if v["valid"] else "None"
        assert line == want, v


def test_identification_and_integrity_of_an_rfid_shoe(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    # HELLO is seq 1, the four REPLYs 2-5, DECK_STATUS "loaded" 6: the host acknowledges them.
    host = load_rfid(wire) + [wire.frame(P.Ack(boot=1, seq=6))]
    body = SETUP + """
for _ in range(5):
    T.host(board)
    T.spin(shoe)
T.out(board)
board.rfid(T.uid_of(10)); board.rfid(T.uid_of(10)); board.exit()      # one card read twice: one card
board.rfid(T.uid_of(11)); board.exit()
board.exit()                                                          # unread
board.rfid(T.uid_of(10)); board.exit()                                # the same code again: duplicate
board.rfid(b"\\x04\\x99\\x99\\x99\\x99\\x99\\x99"); board.exit()      # a UID not in the manifest: foreign
board.barcode(T.barcode_of(0x1234, 12)); board.exit()                 # another deck's barcode: foreign
board.barcode(b'CS0000000XQS1'); board.barcode(T.barcode_of(7, 13)); board.exit()  # misread then good
T.spin(shoe)
T.out(board)
d = shoe.deck
print('COUNTS', d.dealt, d.remaining, d.duplicates, d.foreign, d.unread, d.integ)
"""
    stdout = mpy(body, host=host, heapsize=HEAP)
    batches = wire.decode(stdout)
    cards = cards_of(batches)
    assert [c.index for c in cards] == [1, 2, 3, 4, 5, 6, 7]
    c1, c2, u3, c4, c5, c6, c7 = cards
    assert (c1.code, c1.flags, c1.card_deck, c1.method) == (10, 0, 7, 1)
    assert c1.raw == bytes((0x04, 7, 10, 0xA0, 0xB1, 0xC2, 10 ^ 0x5A))
    assert (c2.code, c2.flags) == (11, 0)
    assert isinstance(u3, P.Unread)
    assert (c4.code, c4.flags) == (10, 1)  # DUPLICATE
    assert (c5.code, c5.card_deck, c5.flags) == (0xFF, 0, 2)  # FOREIGN tag
    assert (c6.code, c6.card_deck, c6.flags, c6.method) == (12, 0x1234, 2, 2)  # another deck
    assert (c7.code, c7.card_deck, c7.flags, c7.retries) == (13, 7, 0, 1)  # one misread before
    assert "COUNTS 7 45 1 2 1 7" in stdout  # integrity DUPLICATE|FOREIGN|UNREAD
    changed = [s for s in statuses(batches) if s.reason == 2]
    assert changed and changed[-1].integrity == 7


def test_end_of_shoe_reports_missing_cards(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    # No host ACKs here, so frames stop at a full outbox and the cards wait in the flash
    # log (the power-cut test covers framing a whole shoe); the counts are the shoe's own.
    host = load_rfid(wire)
    body = SETUP + """
for _ in range(4):
    T.host(board)
    T.spin(shoe)
for c in range(50):       # codes 50 and 51 (Ah, As) never dealt
    board.rfid(T.uid_of(c)); board.exit()
    T.spin(shoe, 2)
board.key(4)
T.spin(shoe, 40)
d = shoe.deck
print('END', d.dealt, d.remaining, d.missing, d.integ, bytes(d.missing_map()).hex(), shoe.store.ended)
print('WAITING', shoe.store.logged - shoe.next_frame + 1, shoe.active_faults())
"""
    stdout = mpy(body, host=host, heapsize=HEAP)
    line = next(x for x in stdout.splitlines() if x.startswith("END "))
    dealt, remaining, missing, integ, mmap, ended = line.split()[1:]
    assert (dealt, remaining, missing, integ, ended) == ("50", "2", "2", "8", "1")
    bits = bytes.fromhex(mmap)
    assert {i for i in range(52) if bits[i // 8] & (1 << (i % 8))} == {50, 51}
    # The outbox filled: the cards wait in the log, the OUTBOX_FULL fault (bit 6) is raised.
    waiting, faults = next(x for x in stdout.splitlines() if x.startswith("WAITING ")).split()[1:]
    assert int(waiting) > 0 and int(faults) & (1 << 6)


def test_more_than_52_cards_is_extra(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    host = [wire.frame(P.NewShoe(shoe_no=9, deck_id=0xABCD, scheme=2, part=0, parts=1))]
    body = SETUP + """
T.host(board)
T.spin(shoe)
for c in range(52):
    board.barcode(T.barcode_of(0xABCD, c)); board.exit()
    T.spin(shoe, 2)
board.barcode(T.barcode_of(0xABCD, 0)); board.exit()
T.spin(shoe, 20)
print('INTEG', shoe.deck.integ, shoe.deck.dealt, shoe.deck.remaining, shoe.deck.duplicates, shoe.store.logged)
"""
    stdout = mpy(body, host=host, heapsize=HEAP)
    assert "INTEG 17 53 0 1 53" in stdout  # DUPLICATE | EXTRA, every card in the log


def test_cards_with_no_shoe_loaded_raise_the_manifest_fault(mpy, wire) -> None:  # type: ignore[no-untyped-def]
    body = SETUP + """
board.rfid(T.uid_of(3)); board.exit()
T.spin(shoe)
T.out(board)
"""
    batches = wire.decode(mpy(body, heapsize=HEAP))
    faults = [f.message for b in batches for f in b if isinstance(f.message, P.Fault)]
    assert [(f.code, f.active) for f in faults] == [(8, 1)]
    (card,) = cards_of(batches)
    assert (card.shoe_no, card.index, card.flags) == (0, 1, 2)
