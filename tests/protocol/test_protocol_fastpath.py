"""The host codec's fast path (struct over layouts derived from the construct declarations)
against its construct reference path: the same results, byte for byte and reason for
reason, on every golden vector and on generated frames, valid and damaged (issue 15).

The layouts are also checked against SPEC section 2 and 5's struct formats, written here
from the SPEC's tables, not taken from the code.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pytest
from cobs import cobs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol_helpers import load_vectors
from protocol_strategies import frame_flags, host_messages, shoe_messages
from cardshoe.protocol import (
    Ack,
    Card,
    DeckStatus,
    Direction,
    Frame,
    FrameError,
    FrameRejected,
    Hello,
    Maintenance,
    MessageType,
    PayloadError,
    Receiver,
    Rejection,
    ReplayWindow,
    build_payload,
    build_raw_frame,
    cobs_wrap,
    compute_tag,
    decode_frame,
    encode_frame,
    message_fields,
    parse_payload,
    seal_payload,
)
from cardshoe.protocol.frames import build_raw_frame_reference, compute_tag_reference
from cardshoe.protocol.layout import HEADER_STRUCT, PAYLOAD_LAYOUTS
from cardshoe.protocol.messages import Message, build_payload_reference, parse_payload_reference
from cardshoe.protocol.seal import seal_payload_reference

DOC = load_vectors()
VKEY = bytes.fromhex(DOC["key"])
VSERIAL = DOC["shoe"]
KEY = bytes(range(7, 39))
SERIAL = 31337

# SPEC section 2 and section 5's tables (fixed part of CARD and NEW_SHOE).
SPEC_HEADER = "<BBBIIIH"
SPEC_PAYLOADS = {
    0x01: "<BBB32sBBIIHHH", 0x02: "<IHIBBBBIB", 0x03: "<IHI", 0x04: "<IIBHHHBBBB7s", 0x05: "<BBHI",
    0x06: "<BBI", 0x07: "<IHB", 0x08: "<IIBBI", 0x09: "<IBBBBII32s", 0x81: "<II", 0x82: "<II", 0x84: "<HHHH", 0x85: "<Q",
    0x86: "<I", 0x87: "<I", 0x88: "<HH", 0x89: "<IH",
}


def _same_format(derived: struct.Struct, spec: str) -> bool:
    """Same size and the same values from the same bytes (construct writes I as L)."""
    probe = bytes(range(1, derived.size + 1))
    return derived.size == struct.calcsize(spec) and derived.unpack(probe) == struct.unpack(spec, probe)


def test_layouts_are_the_spec_formats() -> None:
    assert _same_format(HEADER_STRUCT, SPEC_HEADER)
    # NEW_SHOE (an array of entries) is left to construct; every other type has a layout.
    assert set(PAYLOAD_LAYOUTS) == set(SPEC_PAYLOADS)
    for mtype, fmt in SPEC_PAYLOADS.items():
        assert _same_format(PAYLOAD_LAYOUTS[mtype].fmt, fmt), MessageType(mtype).name
    card = PAYLOAD_LAYOUTS[MessageType.CARD]
    assert (card.tail, card.tail_field, card.terminated) == ("raw", "raw_len", True)
    assert len(card.checks) == 3  # code, method, raw_len: SPEC 5's payload rules
    assert dict(PAYLOAD_LAYOUTS[MessageType.MAINTENANCE].consts) == {"magic": 0x43544E4D}


def _summary(item: Frame | Rejection) -> tuple[Any, ...]:
    if isinstance(item, Frame):
        # Field values' types too: the fast path must hand out plain ints and bytes.
        fields = tuple((k, type(v).__name__ if not isinstance(v, int) else "int", v)
                       for k, v in vars(item.message).items())
        return ("ok", item.header, type(item.message), item.message, fields, message_fields(item.message),
                item.payload, item.tag, item.raw)
    return (item.reason, item.raw, item.header, item.detail)


def _both(wire: bytes, key: bytes, serial: int, direction: Direction | None, window: tuple[int, int],
          chunk: int = 64) -> tuple[list[Any], list[Any]]:
    out = []
    for reference in (False, True):
        rx = Receiver(lambda s: key if s == serial else None, direction=direction, auto_accept=True,
                      reference=reference)
        rx.windows[serial] = ReplayWindow(*window)
        got: list[Any] = []
        for pos in range(0, len(wire), chunk):
            got += [_summary(r) for r in rx.feed(wire[pos : pos + chunk])]
        out.append(got + [("buffered", rx.buffered, dict(rx.counts), rx.accepted, rx.windows[serial])])
    return out[0], out[1]


@pytest.mark.parametrize("vector", DOC["vectors"], ids=[v["name"] for v in DOC["vectors"]])
def test_fast_path_is_the_reference_on_every_vector(vector: dict[str, Any]) -> None:
    direction = Direction.SHOE_TO_HOST if vector["receiver"] == "host" else Direction.HOST_TO_SHOE
    window = (vector["window"]["boot"], vector["window"]["seq"])
    wire = bytes.fromhex(vector["wire"])
    for chunk in (64, len(wire) or 1):
        fast, reference = _both(wire, VKEY, VSERIAL, direction, window, chunk)
        assert fast == reference
        assert [r[0] if r[0] == "ok" else r[0].value for r in fast[:-1]] == [e["result"] for e in vector["expect"]]
    fast, reference = _both(wire, VKEY, VSERIAL, None, window)  # the dissector's receiver
    assert fast == reference


@st.composite
def damaged_frames(draw: st.DrawFn) -> bytes:
    """Frames of every kind, then damaged in ways that reach each check: raw bytes flipped
    (bad_cobs .. bad_crc), or the decoded frame edited and its CRC (and sometimes its tag,
    so the damage reaches the payload rules) made good again."""
    kind = draw(st.integers(0, 3))
    boot, seq = draw(st.integers(0, 3)), draw(st.integers(0, 6))
    key = draw(st.sampled_from([KEY, KEY, bytes(32)]))
    shoe = draw(st.sampled_from([SERIAL, SERIAL, SERIAL, 1]))
    if kind == 0:
        mtype = draw(st.one_of(st.sampled_from([int(t) for t in MessageType]), st.integers(0, 255)))
        payload = draw(st.binary(max_size=227 if draw(st.booleans()) else 40))
        frame = build_raw_frame(mtype, payload, key=key, shoe=shoe, boot=boot, seq=seq,
                                flags=draw(st.integers(0, 255)) & ~0x0E)
    else:
        message = draw(st.one_of(shoe_messages, host_messages))
        frame = build_raw_frame(message.TYPE, build_payload(message), key=key, shoe=shoe, boot=boot, seq=seq,
                                flags=draw(frame_flags))
    data = bytearray(frame)
    how = draw(st.integers(0, 3))
    if how == 0:
        return cobs_wrap(bytes(data))
    if how == 1:  # line noise on the wire bytes
        wire = bytearray(cobs_wrap(bytes(data)))
        for _ in range(draw(st.integers(1, 3))):
            at = draw(st.integers(0, len(wire) - 1))
            wire[at] ^= 1 << draw(st.integers(0, 7))
        return bytes(wire)
    # An edit under a good CRC: header fields, payload bytes, length, flags.
    body = data[:-4]
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(body) - 1))
        body[at] = draw(st.integers(0, 255))
    if how == 3 and len(body) >= 25:  # and a good tag over it: the damage reaches the payload rules
        length = int.from_bytes(body[15:17], "little")
        if 17 + length + 8 == len(body):
            body[17 + length :] = compute_tag_reference(key, bytes(body[: 17 + length]))
    if draw(st.booleans()) and len(body) > 25:
        del body[draw(st.integers(0, len(body) - 1))]
    return cobs_wrap(bytes(body) + zlib.crc32(body).to_bytes(4, "little"))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(damaged_frames(), st.binary(min_size=250, max_size=600).map(lambda b: b.replace(b"\x00", b"\x01"))),
                min_size=1, max_size=5), st.sampled_from([Direction.SHOE_TO_HOST,
       Direction.HOST_TO_SHOE, None]), st.integers(1, 70))
def test_fast_path_is_the_reference_on_generated_frames(
    frames: list[bytes], direction: Direction | None, chunk: int
) -> None:
    fast, reference = _both(b"".join(frames), KEY, SERIAL, direction, (1, 2), chunk)
    assert fast == reference


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([int(t) for t in MessageType] + [0, 0x7F, 0xFF]), st.binary(max_size=60))
def test_parse_payload_is_the_reference(mtype: int, payload: bytes) -> None:
    _same_parse(mtype, payload)


@settings(max_examples=300, deadline=None)
@given(st.one_of(shoe_messages, host_messages), st.data())
def test_parse_payload_is_the_reference_on_edited_payloads(message: Message, data: st.DataObject) -> None:
    payload = bytearray(build_payload(message))
    if payload:
        for _ in range(data.draw(st.integers(0, 3))):
            payload[data.draw(st.integers(0, len(payload) - 1))] = data.draw(st.integers(0, 255))
    payload += data.draw(st.binary(max_size=2))
    _same_parse(message.TYPE, bytes(payload[: data.draw(st.integers(0, len(payload)))]))


def _same_parse(mtype: int, payload: bytes) -> None:
    try:
        want: Any = parse_payload_reference(mtype, payload)
    except PayloadError as exc:
        want = str(exc)
    try:
        got: Any = parse_payload(mtype, payload)
    except PayloadError as exc:
        got = str(exc)
    assert got == want
    if not isinstance(want, str):
        assert type(got) is type(want) and message_fields(got) == message_fields(want)
        assert all(type(v) in (int, bytes, tuple) for v in vars(got).values())


def _card(**change: Any) -> Card:
    base = dict(shoe_no=1, index=2, card_deck=3, code=51, method=1, retries=0, flags=0, t_ms=9, raw=b"\x04" * 7)
    base.update(change)
    return Card(**base)


BAD_MESSAGES = [
    _card(code=52), _card(code=0xFF), _card(method=3), _card(method=0), _card(raw=b""), _card(raw=bytes(17)),
    _card(raw=bytearray(4)), _card(shoe_no=1 << 32), _card(index=-1), _card(t_ms=1.5), _card(retries="1"),
    _card(code=True),
    DeckStatus(1, 2, 0, 3, 49, 0, 0, 0, 0, 0, bytes(6)), DeckStatus(1, 2, 9, 3, 49, 0, 0, 0, 0, 0, bytes(8)),
    Hello(1, 2, 3, bytes(31), 1, 1, 0, 0, 0, 0, 0), Maintenance(magic=0x43544E4E), Ack(1, -1),
]


@pytest.mark.parametrize("message", BAD_MESSAGES, ids=[repr(m)[:60] for m in BAD_MESSAGES])
def test_build_payload_is_the_reference_on_bad_values(message: Message) -> None:
    _same_build(message)


@settings(max_examples=300, deadline=None)
@given(st.one_of(shoe_messages, host_messages))
def test_build_payload_is_the_reference(message: Message) -> None:
    _same_build(message)


def _same_build(message: Message) -> None:
    try:
        want: Any = build_payload_reference(message)
    except PayloadError as exc:
        want = str(exc)
    try:
        got: Any = build_payload(message)
    except PayloadError as exc:
        got = str(exc)
    assert got == want


@settings(max_examples=300, deadline=None)
@given(st.integers(-1, 256), st.binary(max_size=230), st.integers(-1, 1 << 32), st.integers(-1, 1 << 32),
       st.integers(-1, 1 << 32), st.integers(-1, 256), st.sampled_from([KEY, bytes(32), b"k", bytes(range(100))]))
def test_build_raw_frame_is_the_reference(mtype: int, payload: bytes, shoe: int, boot: int, seq: int,
                                          flags: int, key: bytes) -> None:
    results = []
    for build in (build_raw_frame, build_raw_frame_reference):
        try:
            results.append(build(mtype, payload, key=key, shoe=shoe, boot=boot, seq=seq, flags=flags))
        except FrameError as exc:
            results.append(str(exc))
    assert results[0] == results[1]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=130), st.binary(max_size=300))
def test_compute_tag_is_hmac(key: bytes, data: bytes) -> None:
    assert compute_tag(key, data) == compute_tag_reference(key, data)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([int(t) for t in MessageType]), st.integers(0, 0xFFFFFFFF), st.integers(0, 0xFFFFFFFF),
       st.binary(max_size=400))
def test_seal_payload_is_ctr_mode(mtype: int, boot: int, seq: int, payload: bytes) -> None:
    assert seal_payload(KEY, mtype, boot, seq, payload) == seal_payload_reference(KEY, mtype, boot, seq, payload)


def test_decode_frame_reference_flag() -> None:
    wire = encode_frame(_card(), key=KEY, shoe=SERIAL, boot=3, seq=4)
    keys = {SERIAL: KEY}.get
    fast = decode_frame(wire, keys=keys)
    reference = decode_frame(wire, keys=keys, reference=True)
    assert _summary(fast) == _summary(reference)
    for ref in (False, True):
        with pytest.raises(FrameRejected) as info:
            decode_frame(wire, keys=keys, window=ReplayWindow(3, 4), reference=ref)
        assert info.value.reason == "replay"


def test_header_checks_on_every_version_and_flags_byte() -> None:
    # Every flags byte with good and bad versions, under a good CRC and tag: the two paths
    # agree on which of bad_version and bad_flags comes first (SPEC 3.1 checks 6, 7).
    payload = build_payload(_card())
    wire = b""
    for version in (0, 1, 2, 3, 0xFF):
        for flags in range(256):
            body = struct.pack("<BBBIIIH", version, 0x02, flags, SERIAL, 5, flags + 1, len(payload))
            body += seal_payload(KEY, 0x02, 5, flags + 1, payload)
            body += compute_tag_reference(KEY, body)
            wire += cobs_wrap(body + zlib.crc32(body).to_bytes(4, "little"))
    fast, reference = _both(wire, KEY, SERIAL, Direction.SHOE_TO_HOST, (0, 0), 4096)
    assert fast == reference
    reasons = {r[0] if r[0] == "ok" else r[0].value for r in fast[:-1]}
    assert reasons == {"ok", "bad_version", "bad_flags"}


def test_classes_made_without_init_are_plain() -> None:
    # The fast path makes messages without __init__; a class whose __init__ does more
    # (a __post_init__ check, __slots__) is refused at import rather than skipped silently.
    import dataclasses

    from cardshoe.protocol.messages import plain_dataclass

    @dataclasses.dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            raise ValueError

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        x: int

    for cls in (Checked, Slotted, int):
        with pytest.raises(AssertionError):
            plain_dataclass(cls)
    plain_dataclass(Card)


def test_card_raw_len_against_every_raw_length() -> None:
    # Every raw_len byte against every actual length of raw: the fast path takes the tail's
    # length from the field and refuses what construct refuses (SPEC 5: 19 + raw_len exactly).
    prefix = build_payload(_card(raw=b"\x01"))[:18]
    for raw_len in range(256):
        for actual in range(0, 20):
            _same_parse(MessageType.CARD, prefix + bytes([raw_len]) + bytes(range(1, actual + 1)))


@settings(max_examples=300, deadline=None)
@given(st.one_of(shoe_messages, host_messages))
def test_valid_payloads_take_the_fast_path(message: Message) -> None:
    # A valid payload of a type with a layout is parsed by the layout itself, not handed to
    # construct (which would give the same answer, only slowly).
    from cardshoe.protocol.layout import parse_fast
    from cardshoe.protocol.messages import FAST_PAYLOADS

    fast = FAST_PAYLOADS.get(message.TYPE)
    if fast is None:
        assert message.TYPE == MessageType.NEW_SHOE
        return
    assert parse_fast(*fast, build_payload(message)) == message
