"""The firmware codec in the shoe's steady state (issue 15), under micropython: a frame
encoded from an offset in a caller's buffer, host frames read with `take` (no generator),
and nothing allocated per frame beyond the HMAC's own objects (MicroPython's sha256 cannot
be reset or copied: firmware/README.md "Memory"). The HMAC's cost is measured in the same
process, not written down here."""

from __future__ import annotations

import json

TAKE = """
import json, wire
key = bytes(range(32))
enc = wire.Encoder(key, 5)
out = bytearray(wire.OUT_SIZE)
frames = b''
for seq in range(1, 4):
    n = enc.encode(wire.ACK, 0, 1, seq, bytes((1, 0, 0, 0, seq, 0, 0, 0)), out)
    frames += bytes(out[:n])
stream = b'\\x01\\x02\\x00' + frames + b'\\x07' * 3   # noise, three frames, a partial tail
def by_feed():
    rx = wire.Receiver(key, 5)
    return [r for r in rx.feed(stream)] + [rx.buffered]
def by_take(n):
    rx = wire.Receiver(key, 5)
    got = []
    while True:
        r = rx.take(stream, n)
        if r is None:
            break
        got.append(r)
    return got + [rx.buffered, rx.take(b'\\x00', 1)]   # a new data: read from its first byte
short = len(stream) - 3 - 10   # the tail and the last 10 bytes of the third frame left out
print(json.dumps({'feed': by_feed(), 'take': by_take(len(stream)), 'short': by_take(short)}))
"""


def test_take_reads_what_feed_reads_and_stops_at_n(micropython) -> None:  # type: ignore[no-untyped-def]
    res = json.loads(micropython(TAKE).stdout)
    # SPEC 3.1: the noise before the first frame is rejected, each frame is checked alone,
    # and the tail stays buffered (3 bytes) for the next read.
    assert res["feed"][0] != "ok" and res["feed"][1:] == ["ok", "ok", "ok", 3]
    assert res["take"][:-1] == res["feed"]
    # After None the next call reads a new data from its first byte: its delimiter ends the
    # 3 buffered bytes 07 07 07, whose COBS code 7 promises 6 bytes that are not there.
    assert res["take"][-1] == "bad_cobs"
    # data[:n] only: the third frame is not within n bytes, so two frames and its part buffered.
    assert res["short"][1:3] == ["ok", "ok"] and len(res["short"]) == 5 and res["short"][3] > 3


OFFSET = """
import wire
enc = wire.Encoder(bytes(range(32)), 5)
a = bytearray(wire.OUT_SIZE); b = bytearray(wire.OUT_SIZE)
payload = bytes((7, 0, 0, 0, 3, 0, 2, 9, 51, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xAA))
buf = bytearray(60)
buf[20:20 + len(payload)] = payload
na = enc.encode(wire.CARD, 0, 1, 9, payload, a)
nb = enc.encode(wire.CARD, 0, 1, 9, buf, b, len(payload), 20)
print(na == nb and a[:na] == b[:nb])
"""


def test_a_payload_at_an_offset_encodes_as_the_same_bytes(micropython) -> None:  # type: ignore[no-untyped-def]
    assert micropython(OFFSET).stdout.strip() == "True"


STEADY = """
import gc, json, wire
key = bytes(range(32))
shoe = wire.Encoder(key, 5)
rx = wire.Receiver(key, 5, enc=shoe)
host = wire.Encoder(key, 5)
out = bytearray(wire.OUT_SIZE)
ackf = bytearray(wire.OUT_SIZE)
card = bytearray(52)
card[:20] = bytes((7, 0, 0, 0, 3, 0, 2, 9, 51, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xAA, 0))
ack = bytearray(8)
def cost(f):
    gc.collect(); gc.disable(); a = gc.mem_alloc(); f(); d = gc.mem_alloc() - a; gc.enable(); return d
res = {'hmac': cost(lambda: shoe.mac.digest(card))}
encs = []; takes = []
for seq in range(1, 6):
    encs.append(cost(lambda: shoe.encode(wire.CARD, 0, 1, seq, card, out, 19, 0)))
    ack[4] = seq; ack[0] = 1
    n = host.encode(wire.ACK, 0, 1, seq, ack, ackf)
    def read():
        r = rx.take(ackf, n)
        assert r == 'ok', r
        assert rx.take(ackf, n) is None
    takes.append(cost(read))
res['encode'] = encs[2:]   # after the first frames of this length (their views are made once)
res['take'] = takes[2:]
print(json.dumps(res))
"""


def test_the_steady_state_allocates_only_the_hmacs_objects(micropython) -> None:  # type: ignore[no-untyped-def]
    res = json.loads(micropython(STEADY).stdout)
    assert res["hmac"] > 0  # the floor with MicroPython's hashlib: two sha256 objects, two digests
    assert res["encode"] == [res["hmac"]] * 3, res  # a CARD frame: sealed, tagged, CRC, COBS
    assert res["take"] == [res["hmac"]] * 3, res  # the host's ACK: decoded, checked, window moved
