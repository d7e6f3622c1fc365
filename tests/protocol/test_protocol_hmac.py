"""The firmware's hand-written HMAC-SHA256 and COBS against the reference implementations."""

from __future__ import annotations

import hashlib
import hmac
import json

from cobs import cobs

KEYS = [b"", b"k", bytes(range(32)), bytes(range(64)), bytes(range(65)), bytes(200)]
DATA = [b"", b"abc", bytes(range(256)), b"\x00" * 1000]


def test_hmac256_matches_hmac_under_micropython(micropython) -> None:  # type: ignore[no-untyped-def]
    code = (
        "import binascii, json\nfrom hmac256 import HMAC256\nout = []\n"
        f"for k in {[k.hex() for k in KEYS]!r}:\n"
        f"    for d in {[d.hex() for d in DATA]!r}:\n"
        "        out.append(binascii.hexlify(HMAC256(binascii.unhexlify(k)).digest(memoryview(binascii.unhexlify(d)))).decode())\n"
        "print(json.dumps(out))\n"
    )
    got = json.loads(micropython(code).stdout)
    want = [hmac.new(k, d, hashlib.sha256).hexdigest() for k in KEYS for d in DATA]
    assert got == want


def test_firmware_cobs_matches_the_cobs_package_at_block_boundaries(micropython) -> None:  # type: ignore[no-untyped-def]
    # Frames whose bytes hit the 254-byte COBS block edge: encode in the firmware, compare.
    payload_sizes = [0, 1, 200, 226, 227]
    code = (
        "import binascii, json, wire\nenc = wire.Encoder(bytes(32), 0x01010101)\n"
        "out = bytearray(wire.OUT_SIZE)\nres = []\n"
        f"for n in {payload_sizes!r}:\n"
        "    for fill in (1, 0, 255):\n"
        "        m = enc.encode(0x7F, 0, 0x01010101, 0x01010101, bytes([fill]) * n, out)\n"
        "        res.append(binascii.hexlify(out[:m]).decode())\n"
        "print(json.dumps(res))\n"
    )
    for wire_hex in json.loads(micropython(code).stdout):
        raw = bytes.fromhex(wire_hex)
        assert raw[0] == 0 and raw[-1] == 0 and 0 not in raw[1:-1]
        assert len(raw) <= 258 + 2
        assert cobs.encode(cobs.decode(raw[1:-1])) == raw[1:-1]
