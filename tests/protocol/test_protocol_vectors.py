"""Every golden vector through both codecs: the host's construct codec and the firmware's
wire.py under the real micropython (and under CPython, unchanged)."""

from __future__ import annotations

from typing import Any

import pytest

from protocol_helpers import FirmwareCodec, feed_command, load_vectors
from cardshoe.protocol import (
    MAX_ENCODED,
    Direction,
    Frame,
    FrameRejected,
    MessageType,
    Receiver,
    Rejection,
    ReplayWindow,
    decode_frame,
    encode_raw_frame,
    message_fields,
)

DOC = load_vectors()
KEY = bytes.fromhex(DOC["key"])
SERIAL = DOC["shoe"]
VECTORS = DOC["vectors"]
HEADER_KNOWN = {"bad_version", "bad_flags", "unknown_shoe", "bad_tag", "bad_direction", "replay",
                "unknown_type", "bad_payload"}


def single_frame(v: dict[str, Any]) -> bool:
    """A vector whose wire is exactly one valid frame with its two delimiters."""
    raw = bytes.fromhex(v["wire"])
    return (len(v["expect"]) == 1 and v["expect"][0]["result"] == "ok" and raw[:1] == raw[-1:] == b"\x00"
            and b"\x00" not in raw[1:-1])


SINGLES = [v for v in VECTORS if single_frame(v)]


def keys(serial: int) -> bytes | None:
    return KEY if serial == SERIAL else None


def host_receiver(vector: dict[str, Any]) -> Receiver:
    direction = Direction.SHOE_TO_HOST if vector["receiver"] == "host" else Direction.HOST_TO_SHOE
    rx = Receiver(keys, direction=direction, auto_accept=True)
    rx.windows[SERIAL] = ReplayWindow(vector["window"]["boot"], vector["window"]["seq"])
    return rx


def test_vector_file_covers_every_reason_and_type() -> None:
    results = {e["result"] for v in VECTORS for e in v["expect"]}
    assert results == {"ok", "oversize", "bad_cobs", "truncated", "bad_length", "bad_crc", "bad_version",
                       "bad_flags", "unknown_shoe", "bad_tag", "bad_direction", "replay", "unknown_type",
                       "bad_payload"}
    types = {e["type"] for v in VECTORS for e in v["expect"] if e["result"] == "ok"}
    assert types == {int(t) for t in MessageType}
    payload_sizes = {len(e["payload"]) // 2 for v in VECTORS for e in v["expect"] if e["result"] == "ok"}
    assert 227 in payload_sizes


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_host_codec(vector: dict[str, Any]) -> None:
    rx = host_receiver(vector)
    results = rx.feed(bytes.fromhex(vector["wire"]))
    assert [r.reason.value if isinstance(r, Rejection) else "ok" for r in results] == [
        e["result"] for e in vector["expect"]
    ]
    for got, want in zip(results, vector["expect"]):
        if isinstance(got, Frame):
            assert got.type.name == want["type_name"]
            assert (got.type, got.flags, got.shoe, got.boot, got.seq) == (
                want["type"], want["flags"], want["shoe"], want["boot"], want["seq"])
            assert got.payload.hex() == want["payload"]
            assert message_fields(got.message) == want["fields"]
        elif want["result"] in HEADER_KNOWN:
            assert got.header is not None
            h = got.header
            assert (h.type, h.flags, h.shoe, h.boot, h.seq) == (
                want["type"], want["flags"], want["shoe"], want["boot"], want["seq"])
    assert rx.buffered == vector["buffered"]
    assert rx.high_water <= MAX_ENCODED and rx.capacity == MAX_ENCODED


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_host_codec_byte_by_byte(vector: dict[str, Any]) -> None:
    """Chunking must not matter: the same results one byte at a time."""
    rx = host_receiver(vector)
    results = [r for b in bytes.fromhex(vector["wire"]) for r in rx.feed(bytes([b]))]
    assert [r.reason.value if isinstance(r, Rejection) else "ok" for r in results] == [
        e["result"] for e in vector["expect"]
    ]


@pytest.mark.parametrize("vector", SINGLES, ids=lambda v: v["name"])
def test_host_encoder_reproduces_valid_vectors(vector: dict[str, Any]) -> None:
    want = vector["expect"][0]
    wire = encode_raw_frame(want["type"], bytes.fromhex(want["payload"]), key=KEY, shoe=want["shoe"],
                            boot=want["boot"], seq=want["seq"], flags=want["flags"])
    assert wire.hex() == vector["wire"]


@pytest.mark.parametrize("vector", [v for v in VECTORS if len(v["expect"]) == 1 and v["wire"].count("00") >= 2
                                    and v["buffered"] == 0], ids=lambda v: v["name"])
def test_decode_frame_one_shot(vector: dict[str, Any]) -> None:
    raw = bytes.fromhex(vector["wire"])
    body = raw.strip(b"\x00")
    if b"\x00" in body or len(body) > MAX_ENCODED:
        pytest.skip("not a single frame between two delimiters")
    want = vector["expect"][0]
    direction = Direction.SHOE_TO_HOST if vector["receiver"] == "host" else Direction.HOST_TO_SHOE
    window = ReplayWindow(vector["window"]["boot"], vector["window"]["seq"])
    if want["result"] == "ok":
        frame = decode_frame(raw, keys=keys, direction=direction, window=window)
        assert message_fields(frame.message) == want["fields"]
    else:
        with pytest.raises(FrameRejected) as info:
            decode_frame(raw, keys=keys, direction=direction, window=window)
        assert info.value.reason.value == want["result"]


def test_firmware_codec_decodes_every_vector(firmware_codec: FirmwareCodec) -> None:
    commands = [f"K {DOC['key']} {SERIAL}"] + [
        feed_command(v["name"], v["receiver"], v["window"]["boot"], v["window"]["seq"], bytes.fromhex(v["wire"]),
                     chunk=17)
        for v in VECTORS
    ]
    answers = firmware_codec(commands)[1:]
    failures = []
    for vector, answer in zip(VECTORS, answers):
        assert answer["name"] == vector["name"]
        got = answer["results"]
        want = vector["expect"]
        if [g[0] for g in got] != [w["result"] for w in want] or answer["buffered"] != vector["buffered"]:
            failures.append((vector["name"], [g[0] for g in got], [w["result"] for w in want]))
            continue
        assert answer["high_water"] <= MAX_ENCODED
        for g, w in zip(got, want):
            if w["result"] == "ok":
                assert g[1:6] == [w["type"], w["flags"], w["boot"], w["seq"], w["payload"]], vector["name"]
                if g[6] is not None:  # host-to-shoe payloads read by the firmware's unpackers
                    f = w["fields"]
                    expected = [v for k, v in f.items() if k != "entries"]
                    if w["type"] == MessageType.NEW_SHOE:
                        expected += [[[e["code"], e["uid"]] for e in f["entries"]]]
                    assert g[6] == expected, vector["name"]
            elif w["result"] in HEADER_KNOWN:
                assert g[1:5] == [w["type"], w["flags"], w["boot"], w["seq"]], vector["name"]
    assert not failures


def test_firmware_encoder_reproduces_valid_vectors(firmware_codec: FirmwareCodec) -> None:
    singles = SINGLES
    assert {v["expect"][0]["type"] for v in singles} == {int(t) for t in MessageType}
    commands = [f"K {DOC['key']} {SERIAL}"]
    for v in singles:
        w = v["expect"][0]
        commands.append(f"E {w['type']} {w['flags']} {w['boot']} {w['seq']} {w['payload']}")
    answers = firmware_codec(commands)[1:]
    assert [a for a in answers] == [v["wire"] for v in singles]


def test_firmware_packers_reproduce_shoe_payloads(firmware_codec: FirmwareCodec) -> None:
    oks = [e for v in VECTORS for e in v["expect"] if e["result"] == "ok" and e["type"] < 0x80]
    commands = ["K 00 0"]
    for e in oks:
        args = [f"x{value}" if isinstance(value, str) else str(value) for value in e["fields"].values()]
        commands.append(f"P {e['type']} " + " ".join(args))
    answers = firmware_codec(commands)[1:]
    assert answers == [e["payload"] for e in oks]
    assert {e["type"] for e in oks} == {int(t) for t in MessageType if t < 0x80}


def test_checked_in_vectors_match_the_generator() -> None:
    """protocol/vectors/*.json are exactly what protocol/tools/make_vectors.py generates."""
    import subprocess
    import sys

    from micropython_runner import REPO

    proc = subprocess.run([sys.executable, str(REPO / "protocol" / "tools" / "make_vectors.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
