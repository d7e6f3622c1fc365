"""The firmware codec allocates per frame, never per byte (measured under micropython)."""

from __future__ import annotations

import json

CODE = """
import gc, json, wire
key = bytes(range(32))
enc = wire.Encoder(key, 5)
rx = wire.Receiver(key, 5, from_shoe=True)
out = bytearray(wire.OUT_SIZE)
res = {}
seq = 0
for size in (0, 227):
    payload = bytearray(b'\\x01' * size)
    enc.encode(0x7F, 0, 1, 1, payload, out)
    gc.collect(); gc.disable(); a = gc.mem_alloc()
    for i in range(10):
        enc.encode(0x7F, 0, 1, 1, payload, out)
    res['encode_%d' % size] = (gc.mem_alloc() - a) // 10
    gc.enable()
    frames = []
    for i in range(11):
        seq += 1
        n = enc.encode(0x7F, 0, 1, seq, payload, out)
        frames.append(bytes(out[:n]))
    for r in rx.feed(frames[0]):
        pass
    gc.collect(); gc.disable(); a = gc.mem_alloc()
    for f in frames[1:]:
        for r in rx.feed(f):
            assert r == wire.UNKNOWN_TYPE, r
    res['decode_%d' % size] = (gc.mem_alloc() - a) // 10
    gc.enable()
noise = bytes(range(1, 256)) * 4
gc.collect(); gc.disable(); a = gc.mem_alloc()
for r in rx.feed(noise):
    pass
res['noise_1020'] = gc.mem_alloc() - a
gc.enable()
print(json.dumps(res))
"""


def test_allocation_does_not_grow_with_frame_size(micropython) -> None:  # type: ignore[no-untyped-def]
    res = json.loads(micropython(CODE).stdout)
    # 227 more payload bytes cost no more heap than an empty payload: nothing per byte.
    assert res["encode_227"] <= res["encode_0"] + 16, res
    assert res["decode_227"] <= res["decode_0"] + 16, res
    # A kilobyte of noise (one oversize rejection) allocates next to nothing.
    assert res["noise_1020"] < 256, res


REAL_TYPES = """
import gc, json, wire, struct, payloads
key = bytes(range(32))
enc = wire.Encoder(key, 5)
out = bytearray(wire.OUT_SIZE)
res = {}
def measure(name, mtype, payload, from_shoe):
    rx = wire.Receiver(key, 5, from_shoe=from_shoe)
    frames = []
    for seq in range(1, 12):
        n = enc.encode(mtype, 0, 1, seq, payload, out)
        frames.append(bytes(out[:n]))
    for r in rx.feed(frames[0]):
        assert r == wire.OK, r
    gc.collect(); gc.disable(); a = gc.mem_alloc()
    for f in frames[1:]:
        for r in rx.feed(f):
            assert r == wire.OK, r
    res[name] = (gc.mem_alloc() - a) // 10
    gc.enable()
card = bytearray(40)
n = payloads.pack_card(card, 1, 1, 7, 51, 1, 0, 0, 1234, b"\x01")
measure("card_raw1", wire.CARD, card[:n], True)
n = payloads.pack_card(card, 1, 1, 7, 51, 1, 0, 0, 1234, b"\x01" * 16)
measure("card_raw16", wire.CARD, card[:n], True)
def ns(count):
    p = bytearray(struct.pack("<IIBBBB", 1, 2, 1, 0, 1, count))
    for i in range(count):
        p += bytes([i, 7]) + b"\x11" * 7
    return p
measure("new_shoe_1", wire.NEW_SHOE, ns(1), False)
measure("new_shoe_23", wire.NEW_SHOE, ns(23), False)
print(json.dumps(res))
"""


def test_decoding_real_messages_allocates_nothing_per_byte_or_entry(micropython) -> None:  # type: ignore[no-untyped-def]
    # The payload rules run on accepted frames (type 0x7F above stops before them): a CARD
    # with 16 raw bytes, or a NEW_SHOE with 23 manifest entries, costs what the smallest does.
    res = json.loads(micropython(REAL_TYPES).stdout)
    assert res["card_raw16"] <= res["card_raw1"] + 16, res
    assert res["new_shoe_23"] <= res["new_shoe_1"] + 16, res
