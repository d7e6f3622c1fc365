"""`cardshoe bench protocol`: wire codec speed on both sides.

Prints (never asserts):
- host: CARD frames decoded and verified per second (COBS, CRC, version, flags, key, HMAC
  tag, direction, replay window, type, card values opened, payload rules; a stream of
  CARD frames fed in 64-byte reads, as a serial port delivers them) by three decoders in
  the same process, in alternating rounds over the same stream: the codec's
  `cardshoe.protocol.Receiver` (struct over layouts derived from the construct
  declarations), the same Receiver with `reference=True` (construct parses every frame),
  and `PeerDecoder`, a minimal `struct` decoder written from SPEC alone doing the same
  checks; and the ratio of each to the peer (issue 15's goal: the codec >= 0.5x);
- host: ACK frames built per second by `encode_frame` and by the construct reference;
- firmware: time per CARD frame for `payloads.pack_card` + `Encoder.encode` (card values
  sealed with AES-128-CTR, HMAC, CRC, COBS) under the MicroPython unix port
  (`time.ticks_us`, heap 64k), the heap it allocates per frame, and its time to receive and
  verify one ACK; the sealing alone (`Encoder.seal`: cryptolib ECB blocks XORed in place)
  per CARD (2 AES blocks) and per 52-card NEW_SHOE manifest part (14 blocks), in time and
  bytes allocated.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import shutil
import statistics
import struct
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from cobs import cobs
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from cardshoe.protocol import Ack, Card, Direction, Frame, MessageType, Receiver, cobs_wrap, encode_frame
from cardshoe.protocol.frames import build_raw_frame_reference
from cardshoe.protocol.messages import build_payload_reference

KEY = bytes(range(32))
SERIAL = 1001
FIRMWARE_LIB = Path(__file__).resolve().parents[2] / "firmware" / "lib"

_FIRMWARE_BENCH = """
import gc, time, binascii, wire, payloads
N = {iterations}
key = binascii.unhexlify({key!r})
enc = wire.Encoder(key, {serial})
# wire's public names come from payloads.py through wire.__getattr__: looked up once here,
# not in the timed loops (the shoe uses its own consts).
CARD, ACK, OK = wire.CARD, wire.ACK, wire.OK
pbuf = bytearray(wire.MAX_PAYLOAD)
out = bytearray(wire.OUT_SIZE)
uid = bytes([4, 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6])
for i in range(20):  # warm up
    n = payloads.pack_card(pbuf, 1, i + 1, 0x1234ABCD, i % 52, 1, 0, 0, i, uid)
    enc.encode(CARD, 0, 7, i + 1, pbuf, out, n)
gc.collect()
t0 = time.ticks_us()
for i in range(N):
    n = payloads.pack_card(pbuf, 1, i + 1, 0x1234ABCD, i % 52, 1, 0, 0, i, uid)
    m = enc.encode(CARD, 0, 7, i + 1, pbuf, out, n)
t1 = time.ticks_us()
gc.collect()
gc.disable()
a0 = gc.mem_alloc()
for i in range(10):
    n = payloads.pack_card(pbuf, 1, i + 1, 0x1234ABCD, i % 52, 1, 0, 0, i, uid)
    enc.encode(CARD, 0, 7, i + 1, pbuf, out, n)
a1 = gc.mem_alloc()
gc.enable()
# ACK frames as the host sends them (the firmware encoder makes any type).
acks = bytearray()
ack = bytearray(8)
for i in range(1, 101):
    ack[0:8] = bytes([7, 0, 0, 0, i, 0, 0, 0])
    k = enc.encode(ACK, 0, 1, i, ack, out)
    acks.extend(out[:k])
rx = wire.Receiver(key, {serial}, 0, 0, False, enc)
gc.collect()
t2 = time.ticks_us()
count = 0
for r in rx.feed(acks):
    if r == OK:
        count += 1
t3 = time.ticks_us()
# The sealing alone: a CARD's 29 bytes of card values (2 blocks), a manifest part's 215 (14).
fbuf = bytearray(wire.MAX_FRAME)
seal_us = []
seal_alloc = []
for mtype, n in ((wire.CARD, 19 + 16), (wire.NEW_SHOE, 227)):
    gc.collect()
    s0 = time.ticks_us()
    for i in range(N):
        enc.seal(fbuf, 17, 17 + n, mtype, 7, i + 1)
    seal_us.append(time.ticks_diff(time.ticks_us(), s0))
    gc.collect()
    gc.disable()
    b0 = gc.mem_alloc()
    for i in range(10):
        enc.seal(fbuf, 17, 17 + n, mtype, 7, i + 1)
    seal_alloc.append(gc.mem_alloc() - b0)
    gc.enable()
print('{{"encode_us": %d, "frames": %d, "bytes": %d, "alloc": %d, "ack_us": %d, "acks": %d, '
      '"seal_card_us": %d, "seal_manifest_us": %d, "seal_card_alloc": %d, "seal_manifest_alloc": %d}}' % (
    time.ticks_diff(t1, t0), N, m, a1 - a0, time.ticks_diff(t3, t2), count,
    seal_us[0], seal_us[1], seal_alloc[0], seal_alloc[1]))
"""


def _micropython() -> str | None:
    beside = Path(sys.executable).with_name("micropython")
    return str(beside) if beside.exists() else shutil.which("micropython")


_HDR = struct.Struct("<BBBIIIH")
_CRC = struct.Struct("<I")
_CARD = struct.Struct("<IHIBBBBIB")
_SIZES = {0x01: 51, 0x03: 10, 0x04: 26, 0x05: 8, 0x06: 6, 0x07: 7, 0x08: 14}
_SEALED = {0x02: 6, 0x04: 19}


class PeerDecoder:
    """The peer: a minimal decoder of shoe frames written from protocol/SPEC.md alone
    (sections 1, 2, 3.1, 3.2, 3.5, 5), with plain `struct`, and no construct.

    It buffers at most MAX_ENCODED bytes, and applies every check of SPEC 3.1 in order,
    returning a reason string or a tuple of the header and CARD fields. It uses the same
    crypto shortcuts as the codec (HMAC from precomputed pad states, the CTR keystream
    from one reused AES-ECB encryptor per key), so that the ratio measures the codec's
    decoding, not a choice of crypto calls.
    """

    def __init__(self, keys: dict[int, bytes]) -> None:
        self.keys = keys
        self.windows: dict[int, tuple[int, int]] = {}
        self.buf = bytearray(258)
        self.n = 0
        self.discarding = False
        self.pads = {}
        self.ecbs = {}
        for serial, key in keys.items():
            block = key.ljust(64, b"\x00")
            self.pads[serial] = (hashlib.sha256(bytes(b ^ 0x36 for b in block)),
                                 hashlib.sha256(bytes(b ^ 0x5C for b in block)))
            card_key = hmac.new(key, b"cardshoe v2 card values", hashlib.sha256).digest()[:16]
            self.ecbs[serial] = Cipher(algorithms.AES(card_key), modes.ECB()).encryptor()

    def feed(self, data: bytes) -> list[object]:
        out: list[object] = []
        pos, end = 0, len(data)
        while pos < end:
            zero = data.find(b"\x00", pos)
            stop = end if zero < 0 else zero
            if not self.discarding and stop > pos:
                take = stop - pos
                if self.n + take > 258:
                    out.append("oversize")
                    self.n, self.discarding = 0, True
                else:
                    self.buf[self.n : self.n + take] = data[pos:stop]
                    self.n += take
            if zero < 0:
                break
            if self.discarding:
                self.discarding = False
            elif self.n:
                out.append(self.frame(bytes(self.buf[: self.n])))
            self.n = 0
            pos = zero + 1
        return out

    def frame(self, raw: bytes) -> object:
        try:
            f = cobs.decode(raw)
        except cobs.DecodeError:
            return "bad_cobs"
        n = len(f)
        if n < 29:
            return "truncated"
        version, mtype, flags, shoe, boot, seq, length = _HDR.unpack_from(f)
        if n < 29 + length:
            return "truncated"
        if n > 29 + length or length > 227:
            return "bad_length"
        if zlib.crc32(f[:-4]) != _CRC.unpack_from(f, n - 4)[0]:
            return "bad_crc"
        if version != 2:
            return "bad_version"
        if flags & 0x0E:
            return "bad_flags"
        pads = self.pads.get(shoe)
        if pads is None:
            return "unknown_shoe"
        end = 17 + length
        inner = pads[0].copy()
        inner.update(f[:end])
        outer = pads[1].copy()
        outer.update(inner.digest())
        if not hmac.compare_digest(outer.digest()[:8], f[end : end + 8]):
            return "bad_tag"
        if mtype & 0x80:
            return "bad_direction"
        if (boot, seq) <= self.windows.get(shoe, (0, 0)):
            return "replay"
        self.windows[shoe] = (boot, seq)
        if not 1 <= mtype <= 8:
            return "unknown_type"
        payload = f[17:end]
        start = _SEALED.get(mtype)
        if start is not None and length > start:
            k = length - start
            prefix = struct.pack("<IIB3x", boot, seq, mtype)
            stream = self.ecbs[shoe].update(b"".join(prefix + i.to_bytes(4, "big") for i in range((k + 15) // 16)))
            plain = int.from_bytes(payload[start:], "little") ^ int.from_bytes(stream[:k], "little")
            payload = payload[:start] + plain.to_bytes(k, "little")
        if mtype == 0x02:
            if length < 19:
                return "bad_payload"
            card = _CARD.unpack_from(payload)
            code, method, raw_len = card[3], card[4], card[8]
            if not (code <= 51 or code == 0xFF) or method not in (1, 2) or not 1 <= raw_len <= 16:
                return "bad_payload"
            if length != 19 + raw_len:
                return "bad_payload"
            return (mtype, flags, shoe, boot, seq) + card[:8] + (payload[19:],)
        if length != _SIZES[mtype]:
            return "bad_payload"
        return (mtype, flags, shoe, boot, seq, payload)


def card_stream(frames: int) -> bytes:
    """`frames` CARD frames of one boot, seq 1.., as the shoe sends them."""
    return b"".join(
        encode_frame(
            Card(shoe_no=1, index=i, card_deck=0x1234ABCD, code=i % 52, method=1, retries=0, flags=0,
                 t_ms=i * 700, raw=bytes.fromhex("04a1b2c3d4e5f6")),
            key=KEY, shoe=SERIAL, boot=7, seq=i,
        )
        for i in range(1, frames + 1)
    )


def _run_codec(stream: bytes, reference: bool) -> tuple[float, int]:
    rx = Receiver(lambda s: KEY if s == SERIAL else None, direction=Direction.SHOE_TO_HOST, auto_accept=True,
                  reference=reference)
    accepted = 0
    start = time.process_time()
    for pos in range(0, len(stream), 64):
        for item in rx.feed(stream[pos : pos + 64]):
            accepted += isinstance(item, Frame)
    return time.process_time() - start, accepted


def _run_peer(stream: bytes) -> tuple[float, int]:
    peer = PeerDecoder({SERIAL: KEY})
    accepted = 0
    start = time.process_time()
    for pos in range(0, len(stream), 64):
        for item in peer.feed(stream[pos : pos + 64]):
            accepted += isinstance(item, tuple)
    return time.process_time() - start, accepted


@dataclass
class DecodeFigures:
    """Frames per second of each decoder (the median of its rounds), the ratios to the peer
    (the median, lowest and highest of the rounds' ratios: each round's decoders ran back to
    back, under the same load) and what each accepted per round."""

    codec: float
    peer: float
    reference: float
    codec_ratio: tuple[float, float, float]
    reference_ratio: tuple[float, float, float]
    frames: int
    rounds: int
    accepted: dict[str, int]


def host_decode(frames: int, rounds: int = 25, reference_frames: int | None = None) -> DecodeFigures:
    """The three decoders over the same CARD stream, in alternating rounds (codec, peer,
    construct reference, then the other way round, ...), so that the shared machine's load
    falls on each alike. Times are this process's CPU time (`time.process_time`), so that
    waiting for a core another process holds is not counted."""
    stream = card_stream(frames)
    ref_stream = card_stream(reference_frames) if reference_frames else stream
    times: dict[str, list[float]] = {"codec": [], "peer": [], "reference": []}
    accepted: dict[str, int] = {}
    _run_codec(stream[: 64 * 50], False)  # warm the caches (keys, pads) of each
    _run_peer(stream[: 64 * 50])
    for i in range(rounds):
        for name in ("codec", "peer", "reference")[:: 1 if i % 2 == 0 else -1]:
            if name == "peer":
                elapsed, ok = _run_peer(stream)
                n = frames
            elif name == "codec":
                elapsed, ok = _run_codec(stream, False)
                n = frames
            else:
                elapsed, ok = _run_codec(ref_stream, True)
                n = reference_frames or frames
            times[name].append(n / elapsed)
            accepted[name] = ok
    med = {name: statistics.median(rates) for name, rates in times.items()}

    def ratios(name: str) -> tuple[float, float, float]:
        r = [a / b for a, b in zip(times[name], times["peer"])]
        return statistics.median(r), min(r), max(r)

    return DecodeFigures(med["codec"], med["peer"], med["reference"], ratios("codec"), ratios("reference"),
                         frames, rounds, accepted)


def ack_build(count: int, rounds: int = 5) -> tuple[float, float]:
    """ACK frames built per second by encode_frame and by the construct reference path
    (build_payload_reference + build_raw_frame_reference + COBS), alternating; CPU time."""
    fast: list[float] = []
    ref: list[float] = []
    for _ in range(rounds):
        start = time.process_time()
        for i in range(1, count + 1):
            encode_frame(Ack(7, i), key=KEY, shoe=SERIAL, boot=99, seq=i)
        fast.append(count / (time.process_time() - start))
        start = time.process_time()
        for i in range(1, count + 1):
            cobs_wrap(build_raw_frame_reference(MessageType.ACK, build_payload_reference(Ack(7, i)), key=KEY,
                                                shoe=SERIAL, boot=99, seq=i))
        ref.append(count / (time.process_time() - start))
    return statistics.median(fast), statistics.median(ref)


def firmware_encode(iterations: int) -> dict[str, int] | None:
    """Figures from the firmware codec under the unix port, or None without `micropython`."""
    exe = _micropython()
    if exe is None:
        return None
    code = f"import sys\nsys.path.insert(0, {str(FIRMWARE_LIB)!r})\n" + _FIRMWARE_BENCH.format(
        iterations=iterations, key=KEY.hex(), serial=SERIAL)
    proc = subprocess.run([exe, "-X", "heapsize=64k", "-c", code], capture_output=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"micropython failed: {proc.stdout.decode()}{proc.stderr.decode()}")
    figures: dict[str, int] = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """Run both measurements and print their figures."""
    parser = argparse.ArgumentParser(prog="cardshoe bench protocol", description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=2000, help="host: CARD frames per decode round")
    parser.add_argument("--rounds", type=int, default=25, help="host: alternating rounds of each decoder")
    parser.add_argument("--iterations", type=int, default=2000, help="firmware: CARD frames to encode")
    args = parser.parse_args(list(argv or []))

    d = host_decode(args.frames, args.rounds, reference_frames=max(1, args.frames // 5))
    print(f"host decode+verify of CARD frames (CPython {sys.version.split()[0]}, 64-byte reads, every check, "
          f"median of {d.rounds} alternating rounds of {d.frames} frames, process CPU time):")
    c, r = d.codec_ratio, d.reference_ratio
    print(f"  codec (struct over layouts derived from the construct declarations): {d.codec:,.0f} frames/s")
    print(f"  peer (minimal struct decoder from SPEC, same checks):              {d.peer:,.0f} frames/s")
    print(f"  construct reference path (Receiver(reference=True)):               {d.reference:,.0f} frames/s")
    print(f"  ratio codec / peer: {c[0]:.2f}x (rounds {c[1]:.2f}-{c[2]:.2f}); "
          f"construct reference / peer: {r[0]:.3f}x (rounds {r[1]:.3f}-{r[2]:.3f})")
    print(f"  accepted per round: {d.accepted}")
    fast, ref = ack_build(max(1, args.frames // 2))
    print(f"host ACK build (encode_frame): {fast:,.0f} frames/s; by construct (reference path): {ref:,.0f} frames/s")
    figures = firmware_encode(args.iterations)
    if figures is None:
        print("firmware encode: skipped, no `micropython` executable (pip install -e '.[test]')")
        return 0
    per_frame = figures["encode_us"] / figures["frames"]
    print(f"firmware encode: {per_frame:.1f} us per CARD frame (pack_card + Encoder.encode, "
          f"{figures['bytes']} bytes on the wire, {figures['frames']} frames, unix port, heap 64k)")
    print(f"firmware encode heap: {figures['alloc'] // 10} bytes allocated per frame "
          "(sha256 objects and digests of the HMAC; nothing per byte)")
    n = figures["frames"]
    print(f"firmware card-value sealing (AES-128-CTR on cryptolib ECB, SPEC 3.5): "
          f"{figures['seal_card_us'] / n:.1f} us per CARD (35-byte payload, 2 blocks), "
          f"{figures['seal_manifest_us'] / n:.1f} us per NEW_SHOE manifest part (227 bytes, 14 blocks); "
          f"heap allocated: {figures['seal_card_alloc'] // 10} and {figures['seal_manifest_alloc'] // 10} bytes per frame")
    print(f"firmware receive: {figures['ack_us'] / max(1, figures['acks']):.1f} us per ACK frame "
          f"verified ({figures['acks']} ACKs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
