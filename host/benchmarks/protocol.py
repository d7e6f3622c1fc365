"""`cardshoe bench protocol`: wire codec speed on both sides.

Prints (never asserts):
- host: frames decoded and verified per second by `cardshoe.protocol.Receiver` (COBS,
  CRC, HMAC tag, replay window, construct payload parse) over a stream of CARD frames
  fed in 64-byte reads, as a serial port delivers them;
- firmware: time per CARD frame for `payloads.pack_card` + `Encoder.encode` (card values
  sealed with AES-128-CTR, HMAC, CRC, COBS) under the MicroPython unix port
  (`time.ticks_us`, heap 64k), the heap it allocates per frame, and its time to receive and
  verify one ACK; the sealing alone (`Encoder.seal`: cryptolib ECB blocks XORed in place)
  per CARD (2 AES blocks) and per 52-card NEW_SHOE manifest part (14 blocks), in time and
  bytes allocated.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from cardshoe.protocol import Card, Direction, Frame, Receiver, encode_frame

KEY = bytes(range(32))
SERIAL = 1001
FIRMWARE_LIB = Path(__file__).resolve().parents[2] / "firmware" / "lib"

_FIRMWARE_BENCH = """
import gc, time, binascii, wire, payloads
N = {iterations}
key = binascii.unhexlify({key!r})
enc = wire.Encoder(key, {serial})
pbuf = bytearray(wire.MAX_PAYLOAD)
out = bytearray(wire.OUT_SIZE)
uid = bytes([4, 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6])
for i in range(20):  # warm up
    n = payloads.pack_card(pbuf, 1, i + 1, 0x1234ABCD, i % 52, 1, 0, 0, i, uid)
    enc.encode(wire.CARD, 0, 7, i + 1, pbuf, out, n)
gc.collect()
t0 = time.ticks_us()
for i in range(N):
    n = payloads.pack_card(pbuf, 1, i + 1, 0x1234ABCD, i % 52, 1, 0, 0, i, uid)
    m = enc.encode(wire.CARD, 0, 7, i + 1, pbuf, out, n)
t1 = time.ticks_us()
gc.collect()
gc.disable()
a0 = gc.mem_alloc()
for i in range(10):
    n = payloads.pack_card(pbuf, 1, i + 1, 0x1234ABCD, i % 52, 1, 0, 0, i, uid)
    enc.encode(wire.CARD, 0, 7, i + 1, pbuf, out, n)
a1 = gc.mem_alloc()
gc.enable()
# ACK frames as the host sends them (the firmware encoder makes any type).
acks = bytearray()
ack = bytearray(8)
for i in range(1, 101):
    ack[0:8] = bytes([7, 0, 0, 0, i, 0, 0, 0])
    k = enc.encode(wire.ACK, 0, 1, i, ack, out)
    acks.extend(out[:k])
rx = wire.Receiver(key, {serial}, 0, 0, False, enc)
gc.collect()
t2 = time.ticks_us()
count = 0
for r in rx.feed(acks):
    if r == wire.OK:
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


def host_decode(frames: int) -> tuple[float, int]:
    """(frames per second, frames accepted) for the host receiver over `frames` CARD frames."""
    stream = b"".join(
        encode_frame(
            Card(shoe_no=1, index=i, card_deck=0x1234ABCD, code=i % 52, method=1, retries=0, flags=0,
                 t_ms=i * 700, raw=bytes.fromhex("04a1b2c3d4e5f6")),
            key=KEY, shoe=SERIAL, boot=7, seq=i,
        )
        for i in range(1, frames + 1)
    )
    rx = Receiver(lambda s: KEY if s == SERIAL else None, direction=Direction.SHOE_TO_HOST, auto_accept=True)
    accepted = 0
    start = time.perf_counter()
    for pos in range(0, len(stream), 64):
        for item in rx.feed(stream[pos : pos + 64]):
            accepted += isinstance(item, Frame)
    elapsed = time.perf_counter() - start
    return frames / elapsed, accepted


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
    parser.add_argument("--frames", type=int, default=5000, help="host: CARD frames to decode")
    parser.add_argument("--iterations", type=int, default=2000, help="firmware: CARD frames to encode")
    args = parser.parse_args(list(argv or []))

    rate, accepted = host_decode(args.frames)
    print(f"host decode+verify: {rate:,.0f} frames/s ({accepted} CARD frames, CPython "
          f"{sys.version.split()[0]}, construct, 64-byte reads)")
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
