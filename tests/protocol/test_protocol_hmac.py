"""The firmware's hand-written HMAC-SHA256 and COBS against the reference implementations."""

from __future__ import annotations

import hashlib
import hmac
import json

from cobs import cobs

from cardshoe.protocol import encode_raw_frame

KEYS = [b"", b"k", bytes(range(32)), bytes(range(64)), bytes(range(65)), bytes(200)]
DATA = [b"", b"abc", bytes(range(256)), b"\x00" * 1000]


def test_hmac256_matches_hmac_under_micropython(micropython) -> None:  # type: ignore[no-untyped-def]
    code = (
        "import binascii, json\nfrom wire import HMAC256\nout = []\n"
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
    got = json.loads(micropython(code).stdout)
    want = [encode_raw_frame(0x7F, bytes([fill]) * n, key=bytes(32), shoe=0x01010101, boot=0x01010101,
                             seq=0x01010101) for n in payload_sizes for fill in (1, 0, 255)]
    assert len(got) == len(want)
    for wire_hex, expected in zip(got, want):
        raw = bytes.fromhex(wire_hex)
        assert raw[0] == 0 and raw[-1] == 0 and 0 not in raw[1:-1]
        assert len(raw) <= 258 + 2
        # Byte for byte what the cobs package makes of the host codec's frame.
        assert raw == expected
        assert cobs.encode(cobs.decode(raw[1:-1])) == raw[1:-1]


# RFC 4231 section 4, HMAC-SHA-256 (test case 5's output is truncated to 128 bits by the RFC).
RFC4231 = [
    (b"\x0b" * 20, b"Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
    (b"Jefe", b"what do ya want for nothing?",
     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
    (b"\xaa" * 20, b"\xdd" * 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
    (bytes(range(1, 26)), b"\xcd" * 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
    (b"\x0c" * 20, b"Test With Truncation", "a3b6167473100ee06e0c796c2955552b"),
    (b"\xaa" * 131, b"Test Using Larger Than Block-Size Key - Hash Key First",
     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    (b"\xaa" * 131,
     b"This is a test using a larger than block-size key and a larger than block-size data. "
     b"The key needs to be hashed before being used by the HMAC algorithm.",
     "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
]


def test_hmac256_rfc4231_vectors_under_micropython(micropython) -> None:  # type: ignore[no-untyped-def]
    """The firmware's HMAC against the published RFC 4231 results, not against another implementation."""
    code = (
        "import binascii, json\nfrom wire import HMAC256\nout = []\n"
        f"for k, d in {[(k.hex(), d.hex()) for k, d, _ in RFC4231]!r}:\n"
        "    out.append(binascii.hexlify(HMAC256(binascii.unhexlify(k)).digest(binascii.unhexlify(d))).decode())\n"
        "print(json.dumps(out))\n"
    )
    got = json.loads(micropython(code).stdout)
    assert len(got) == len(RFC4231)
    for digest, (_, _, want) in zip(got, RFC4231):
        assert digest[: len(want)] == want
