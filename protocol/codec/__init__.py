"""The host codec of the shoe-host wire protocol (protocol/SPEC.md), declared with construct.

The declarations in `cardshoe.protocol.spec` (construct Structs with field docs, Const
version, Enum types, Check rules, Checksum CRC; never compiled) are the SPEC in code.
`cardshoe.protocol.layout` derives `struct` layouts from them at import, which the
receiver, `parse_payload`, `build_payload` and `build_raw_frame` use (with the
declarations' own Check functions); construct itself remains the reference path
(`Receiver(reference=True)`, `decode_frame(..., reference=True)`, `parse_payload_reference`,
`build_payload_reference`, `build_raw_frame_reference`), held to the same results by the tests.
On top of them:

Encoding
    encode_frame(message, *, key, shoe, boot, seq, flags=0) -> bytes
        wire bytes `0x00 COBS(frame) 0x00` of a message dataclass (Hello, Card, Ack, ...).
    encode_raw_frame(mtype, payload, *, key, shoe, boot, seq, flags=0) -> bytes
        the same from a type number and payload bytes (tests, vectors, unknown types).
    build_payload(message) -> bytes / parse_payload(mtype, payload) -> Message

Receiving
    Receiver(keys, direction=Direction.SHOE_TO_HOST, windows={}, auto_accept=False, reference=False)
        .feed(data) -> list[Frame | Rejection]   in order; the buffer never exceeds MAX_ENCODED
        .counts[Reason] rejections counted by reason; .accepted; .buffered; .high_water
        .window_for(shoe, mtype) -> ReplayWindow; .reset()
    keys: Callable[[int], bytes | None] maps a shoe serial to its 32-byte key.
    Frame: .header (FrameHeader), .message (dataclass), .type/.flags/.shoe/.boot/.seq/.resent,
        .payload, .tag, .raw (encoded bytes between delimiters).
    Rejection: .reason (Reason, a str enum with the SPEC 3.1 strings), .raw, .header
        (FrameHeader or None: set once the CRC was good), .detail (human text).
    ReplayWindow(boot=0, seq=0): .is_new(boot, seq), .is_next(boot, seq), .accept(boot, seq).
        The receiver checks `replay` against it but moves it only with auto_accept=True;
        the daemon persists (boot, seq) and calls .accept() after its journal commit.
    decode_frame(raw, *, keys, direction=..., window=None) -> Frame, or raises FrameRejected.

Errors (all ProtocolError): PayloadError (ValueError), FrameError (ValueError),
FrameRejected (.reason, .raw, .detail, .header), BarcodeError (ValueError).

Card values (SPEC 3.5): encode_frame/build_raw_frame seal them, the Receiver opens them
after the tag; seal_payload(key, mtype, boot, seq, payload) does either by hand.

Barcodes (SPEC 6): check_character(text12) -> str, make_barcode(deck_id, code) -> str,
parse_barcode(text) -> BarcodePayload(deck_id, code), raising BarcodeError (.reason).

The dissector `cardshoe decode` is `cardshoe.protocol.decode.main(argv)`; the golden
vectors are made by protocol/tools/make_vectors.py.

Example::

    from cardshoe.protocol import Card, Receiver, encode_frame, Frame
    key = bytes(32)
    wire = encode_frame(Card(shoe_no=1, index=1, card_deck=7, code=51, method=1, retries=0,
                             flags=0, t_ms=1234, raw=bytes.fromhex("04a1b2c3d4e5f6")),
                        key=key, shoe=1001, boot=3, seq=2)
    rx = Receiver(keys=lambda serial: key if serial == 1001 else None)
    (frame,) = rx.feed(wire)
    assert isinstance(frame, Frame) and frame.message.code == 51
    rx.window_for(frame.shoe, frame.type).accept(frame.boot, frame.seq)
    assert rx.feed(wire)[0].reason == "replay"
"""

from .barcode import BarcodeError, BarcodePayload, check_character, make_barcode, parse_barcode
from .errors import FrameError, FrameRejected, PayloadError, ProtocolError, Reason
from .frames import (
    Frame,
    KeyLookup,
    Received,
    Receiver,
    Rejection,
    ReplayWindow,
    build_raw_frame,
    cobs_wrap,
    compute_tag,
    decode_frame,
    encode_frame,
    encode_raw_frame,
)
from .messages import (
    MESSAGE_CLASSES,
    Ack,
    Card,
    CardsFrom,
    Clear,
    Config,
    Crash,
    DeckStatus,
    Fault,
    Heartbeat,
    Hello,
    Key,
    Maintenance,
    ManifestEntry,
    Message,
    NewShoe,
    Ping,
    Reply,
    ResendFrom,
    Time,
    Unread,
    build_payload,
    message_fields,
    parse_payload,
)
from .seal import CARD_KEY_LABEL, SEALED_FROM, card_key, open_payload, seal_payload
from .spec import (
    FLAG_RESENT,
    HEADER_SIZE,
    MAINTENANCE_MAGIC,
    MAX_ENCODED,
    MAX_FRAME,
    MAX_PAYLOAD,
    MIN_FRAME,
    NO_CARD,
    TAG_SIZE,
    VERSION,
    CardFlags,
    CrashError,
    CrashWhere,
    DealerKey,
    DeckReason,
    Direction,
    FaultCode,
    FrameHeader,
    Integrity,
    MessageType,
    ReadMethod,
    Readers,
    RefusedDetail,
    ReplyStatus,
    ResetCause,
    Scheme,
    direction_of,
)

__all__ = [
    "FLAG_RESENT", "HEADER_SIZE", "MAINTENANCE_MAGIC", "MAX_ENCODED", "MAX_FRAME", "MAX_PAYLOAD",
    "MIN_FRAME", "NO_CARD", "TAG_SIZE", "VERSION", "MESSAGE_CLASSES",
    "Ack", "BarcodeError", "BarcodePayload", "Card", "CardFlags", "CardsFrom", "Clear", "Config",
    "Crash", "CrashError", "CrashWhere", "DealerKey", "DeckReason", "DeckStatus", "Direction", "Fault", "FaultCode", "Frame", "FrameError",
    "FrameHeader", "FrameRejected", "Heartbeat", "Hello", "Integrity", "Key", "KeyLookup",
    "Maintenance", "ManifestEntry", "Message", "MessageType", "NewShoe", "PayloadError", "Ping",
    "ProtocolError", "ReadMethod", "Readers", "Reason", "Received", "Receiver", "RefusedDetail",
    "Rejection", "ReplayWindow", "Reply", "ReplyStatus", "ResendFrom", "ResetCause", "Scheme",
    "Time", "Unread", "build_payload", "build_raw_frame", "check_character", "cobs_wrap",
    "compute_tag", "decode_frame", "direction_of", "encode_frame", "encode_raw_frame",
    "make_barcode", "message_fields", "parse_barcode", "parse_payload",
    "CARD_KEY_LABEL", "SEALED_FROM", "card_key", "open_payload", "seal_payload",
]
