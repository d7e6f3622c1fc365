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
