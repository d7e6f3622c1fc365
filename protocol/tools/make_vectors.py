#!/usr/bin/env python3
"""Generate protocol/vectors/frames.json and barcodes.json from the SPEC declarations.

    .venv/bin/python protocol/tools/make_vectors.py [--check]

Valid frames are built by the host codec's construct declarations. Invalid ones are
made by hand from valid ones (a flipped byte, a cut, a forged tag), and each names the
rejection reason the SPEC requires *by construction*: the script does not ask a decoder
what the answer is. As a consistency check it then runs every vector through the host
receiver and stops if they disagree, so a vector file is never written wrong.
`--check` regenerates in memory and fails if the checked-in files differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

from cobs import cobs

from cardshoe.protocol import (
    FLAG_RESENT,
    MAX_ENCODED,
    MAX_PAYLOAD,
    Ack,
    Card,
    CardsFrom,
    Clear,
    Config,
    Crash,
    DeckStatus,
    Direction,
    Fault,
    Frame,
    Heartbeat,
    Hello,
    Key,
    Maintenance,
    ManifestEntry,
    Message,
    MessageType,
    NewShoe,
    Ping,
    Receiver,
    Rejection,
    ReplayWindow,
    Reply,
    ResendFrom,
    Time,
    Unread,
    make_barcode,
    message_fields,
    parse_barcode,
    BarcodeError,
)
from cardshoe.protocol.barcode import ALPHABET, check_character
# The construct declarations themselves (SPEC 8), not the struct layouts derived from them.
from cardshoe.protocol.frames import compute_tag_reference as compute_tag
from cardshoe.protocol.messages import build_payload_reference as build_payload
from cardshoe.protocol.seal import seal_payload_reference as seal_payload

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "vectors"

KEY = hashlib.sha256(b"cardshoe protocol test key, never provisioned").digest()
OTHER_KEY = hashlib.sha256(b"a forger's key").digest()
SERIAL = 1001
BOOT = 7  # the shoe's boot counter in the shoe-to-host vectors
EPOCH = 3  # the host's epoch in the host-to-shoe vectors


def frame_bytes(
    mtype: int, payload: bytes, *, shoe: int = SERIAL, boot: int = BOOT, seq: int = 1,
    flags: int = 0, version: int = 2, key: bytes = KEY, length: int | None = None, seal: bool = True,
) -> bytes:
    """A decoded frame built field by field (so invalid headers can be made too).

    `payload` is plain; its card values are sealed with `key` (SPEC 3.5) unless `seal` is False.
    """
    if seal:
        payload = seal_payload(key, mtype, boot, seq, payload)
    header = struct.pack(
        "<BBBIIIH", version, mtype, flags, shoe, boot, seq, len(payload) if length is None else length
    )
    body = header + payload
    body += compute_tag(key, body)
    return body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


def wire(frame: bytes) -> bytes:
    return b"\x00" + bytes(cobs.encode(frame)) + b"\x00"


def msg_frame(message: Message, **kw: Any) -> bytes:
    return frame_bytes(message.TYPE, build_payload(message), **kw)


def ok(message: Message, *, shoe: int = SERIAL, boot: int = BOOT, seq: int = 1, flags: int = 0) -> dict[str, Any]:
    payload = build_payload(message)
    return {
        "result": "ok",
        "type": int(message.TYPE),
        "type_name": message.TYPE.name,
        "flags": flags,
        "shoe": shoe,
        "boot": boot,
        "seq": seq,
        "payload": payload.hex(),
        "fields": message_fields(message),
    }


def rejected(reason: str, frame: bytes | None = None) -> dict[str, Any]:
    """A rejection; from bad_version on the header fields are known and recorded."""
    out: dict[str, Any] = {"result": reason}
    if frame is not None:
        _, mtype, flags, shoe, boot, seq, _ = struct.unpack_from("<BBBIIIH", frame)
        out.update(type=mtype, flags=flags, shoe=shoe, boot=boot, seq=seq)
    return out


# --- sample messages ----------------------------------------------------------

UID4 = bytes.fromhex("8a3b19c4")
UID7 = bytes.fromhex("04a1b2c3d4e5f6")
UID10 = bytes.fromhex("08112233445566778899")
FW_HASH = hashlib.sha256(b"firmware manifest").digest()


def card(code: int = 51, raw: bytes = UID7, **kw: Any) -> Card:
    base: dict[str, Any] = dict(shoe_no=12, index=1, card_deck=0x1234ABCD, code=code, method=1,
                                retries=0, flags=0, t_ms=60_000, raw=raw)
    base.update(kw)
    return Card(**base)


def uid_for(code: int, size: int) -> bytes:
    return hashlib.sha256(b"uid %d %d" % (size, code)).digest()[:size]


def manifest_parts(shoe_no: int, deck_id: int, size: int) -> list[NewShoe]:
    """A 52-card RFID manifest in as few NEW_SHOE parts as fit MAX_PAYLOAD."""
    per_part = (MAX_PAYLOAD - 12) // (2 + size)
    entries = [ManifestEntry(code, uid_for(code, size)) for code in range(52)]
    chunks = [entries[i : i + per_part] for i in range(0, 52, per_part)]
    return [NewShoe(shoe_no, deck_id, 1, i, len(chunks), tuple(chunk)) for i, chunk in enumerate(chunks)]


def vec(name: str, description: str, stream: bytes, expect: list[dict[str, Any]],
        window: tuple[int, int] = (0, 0), buffered: int = 0, receiver: str = "host") -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "receiver": receiver,
        "window": {"boot": window[0], "seq": window[1]},
        "wire": stream.hex(),
        "expect": expect,
        "buffered": buffered,
    }


def single(name: str, description: str, message: Message, *, seq: int = 1, flags: int = 0,
           window: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    host_bound = message.TYPE < 0x80
    boot = BOOT if host_bound else EPOCH
    frame = msg_frame(message, boot=boot, seq=seq, flags=flags)
    return vec(name, description, wire(frame), [ok(message, boot=boot, seq=seq, flags=flags)], window,
               receiver="host" if host_bound else "shoe")


def valid_vectors() -> list[dict[str, Any]]:
    v: list[dict[str, Any]] = []
    v.append(single("hello", "HELLO after a power-on boot with a shoe session loaded",
                    Hello(1, 2, 3, FW_HASH, 1, 3, 12, 0x1234ABCD, 17, 0, 1 << 3)))
    v.append(single("hello_fresh", "HELLO of a shoe with no shoe loaded",
                    Hello(0, 1, 0, bytes(32), 0, 1, 0, 0, 0, 0, 0)))
    v.append(single("card_rfid_uid4", "A♠ read by RFID, 4-byte UID", card(51, UID4), seq=2))
    v.append(single("card_rfid_uid7", "2♣ read by RFID, 7-byte NTAG UID, 2 retries",
                    card(0, UID7, retries=2, index=2), seq=3))
    v.append(single("card_rfid_uid10", "K♥ read by RFID, 10-byte UID", card(46, UID10, index=3), seq=4))
    v.append(single("card_barcode", "Q♦ read by barcode, raw is the printed text",
                    card(41, make_barcode(0x1234ABCD, 41).encode(), method=2, index=4), seq=5))
    v.append(single("card_foreign", "a tag not in the manifest: code 0xFF, deck 0, FOREIGN",
                    card(0xFF, bytes.fromhex("deadbeef"), card_deck=0, flags=2, index=5), seq=6))
    v.append(single("card_duplicate", "a card already dealt this session: DUPLICATE",
                    card(51, UID4, flags=1, index=6), seq=7))
    v.append(single("card_raw_16", "raw ID of the longest length, 16 bytes (payload 35)",
                    card(10, bytes(range(1, 17)), index=7), seq=8))
    v.append(single("card_resent", "a retransmission: flag RESENT", card(51, UID4), seq=9, flags=FLAG_RESENT))
    v.append(single("card_hint_flag", "flag bit 4 (a hint) is ignored by a version 2 receiver",
                    card(51, UID4), seq=10, flags=0x10))
    v.append(single("unread", "a card left with no ID", Unread(12, 8, 61_000), seq=11))
    v.append(single("deck_status_loaded", "DECK_STATUS after NEW_SHOE",
                    DeckStatus(12, 0x1234ABCD, 1, 0, 52, 0, 0, 0, 0, 0, bytes.fromhex("ffffffffffff0f"))))
    v.append(single("deck_status_end", "end of shoe with A♠ never dealt and one unread",
                    DeckStatus(12, 0x1234ABCD, 3, 52, 0, 4 | 8, 0, 0, 1, 1, bytes.fromhex("00000000000008"))))
    v.append(single("fault_jam", "JAM raised", Fault(2, 1, 0, 62_000)))
    v.append(single("fault_tamper_cleared", "TAMPER cleared", Fault(3, 0, 0, 63_000)))
    for key, name in ((1, "new_round"), (2, "deal_complete"), (3, "exposure"), (4, "end_shoe")):
        v.append(single(f"key_{name}", f"dealer key {name.upper()}", Key(key, 0, 64_000 + key)))
    v.append(single("heartbeat", "HEARTBEAT with an empty outbox", Heartbeat(0xFFFFFFFF, 52, 0)))
    v.append(single("reply_ok", "REPLY OK to the host's command (3, 5)", Reply(EPOCH, 5, 0, 0, 1)))
    v.append(single("reply_refused", "REPLY REFUSED bad manifest", Reply(EPOCH, 6, 1, 2, 0xFFFFFFF0)))
    v.append(single("crash_new_shoe", "CRASH after HELLO: boot 6 crashed streaming, in NEW_SHOE (3, 17)",
                    Crash(6, 2, 2, 1, 0x83, EPOCH, 17, b"RuntimeError store:255".ljust(32, b"\0")), seq=2))
    v.append(single("crash_boot", "CRASH of a boot that crashed before it was counted, third in a row",
                    Crash(0, 1, 4, 3, 0, 0, 0, b"ImportError main:62".ljust(32, b"\0")), seq=2))
    v.append(single("seq_max", "the largest boot counter and seq", Heartbeat(1, 0, 0),
                    seq=0xFFFFFFFF, window=(BOOT, 0xFFFFFFFE)))

    v.append(single("ack", "ACK of shoe boot 7 up to seq 11", Ack(BOOT, 11)))
    v.append(single("resend_from", "RESEND_FROM boot 7 seq 4", ResendFrom(BOOT, 4)))
    v.append(single("new_shoe_barcode", "NEW_SHOE for a barcode deck: parts 1, count 0",
                    NewShoe(13, 0x00C0FFEE, 2, 0, 1, ())))
    v.append(single("config", "CONFIG with the SPEC's defaults", Config(2000, 300, 5000, 20)))
    v.append(single("time", "TIME 2026-11-25T22:00:00Z", Time(1795644000000)))
    v.append(single("ping", "PING", Ping(0xCAFEF00D)))
    v.append(single("maintenance", "MAINTENANCE with its magic", Maintenance()))
    v.append(single("clear", "CLEAR every integrity bit and TAMPER", Clear(0x1F, 1 << 3)))
    v.append(single("cards_from", "CARDS_FROM shoe 12 index 9", CardsFrom(12, 9)))
    v.append(single("command_resent", "a resent command: RESENT set", Ping(1), seq=2, flags=FLAG_RESENT,
                    window=(EPOCH, 1)))

    # The 52-card manifests, one stream per UID size, parts in order.
    for size in (4, 7, 10):
        parts = manifest_parts(20 + size, 0x0000D1CE, size)
        stream = b"".join(wire(msg_frame(p, boot=EPOCH, seq=i + 1)) for i, p in enumerate(parts))
        v.append(vec(f"new_shoe_manifest_uid{size}",
                     f"a 52-card RFID manifest with {size}-byte UIDs in {len(parts)} NEW_SHOE parts",
                     stream, [ok(p, boot=EPOCH, seq=i + 1) for i, p in enumerate(parts)], receiver="shoe"))

    # MAX_PAYLOAD exactly: 17 ten-byte UIDs and one nine-byte UID make 215 bytes of entries.
    entries = tuple(ManifestEntry(c, uid_for(c, 10)) for c in range(17)) + (ManifestEntry(17, uid_for(17, 9)),)
    biggest = NewShoe(30, 0x0000D1CE, 1, 0, 4, entries)
    assert len(build_payload(biggest)) == MAX_PAYLOAD
    v.append(single("new_shoe_max_payload",
                    "payload of exactly MAX_PAYLOAD (227) bytes; the codec takes it (uid_len 9 is "
                    "1-16), the shoe then refuses the manifest", biggest))
    return v


def invalid_vectors() -> list[dict[str, Any]]:
    v: list[dict[str, Any]] = []
    good = msg_frame(card(51, UID4), seq=5)
    good_ok = ok(card(51, UID4), seq=5)
    payload = build_payload(card(51, UID4))

    # 1 oversize
    v.append(vec("oversize", "259 bytes before a delimiter: one oversize, then resync at the next frame",
                 b"\x00" + b"\x55" * (MAX_ENCODED + 1) + wire(good), [{"result": "oversize"}, good_ok]))
    v.append(vec("oversize_long_run", "1000 noise bytes: still one oversize, the buffer stays bounded",
                 b"\x00" + bytes((i % 255) + 1 for i in range(1000)) + wire(good), [{"result": "oversize"}, good_ok]))
    v.append(vec("max_encoded_not_oversize",
                 "exactly MAX_ENCODED bytes are buffered, not oversize: 258 x 0x01 decode to 257 zero "
                 "bytes, whose length field 0 does not match 257 (bad_length)",
                 b"\x00" + b"\x01" * MAX_ENCODED + b"\x00", [{"result": "bad_length"}]))
    too_long = frame_bytes(0x7F, bytes(range(1, MAX_PAYLOAD + 2)), seq=5)
    v.append(vec("payload_over_max", "a frame of 257 bytes with length 228 > MAX_PAYLOAD",
                 wire(too_long), [{"result": "bad_length"}]))
    # 2 bad_cobs
    v.append(vec("bad_cobs", "a code byte that points past the end of the frame",
                 b"\x00\x05\x11\x22\x00", [{"result": "bad_cobs"}]))
    enc = cobs.encode(good)
    first_code = enc[0]
    cut = enc[: first_code - 1]  # inside the first block: its code points past the end
    v.append(vec("cut_mid_block", "a frame cut inside a COBS block (its trailing bytes lost)",
                 b"\x00" + cut + b"\x00", [{"result": "bad_cobs"}]))
    # 3 truncated
    v.append(vec("truncated_short", "a decoded frame of 20 bytes, fewer than the minimum 29",
                 wire(good[:20]), [{"result": "truncated"}]))
    v.append(vec("truncated_payload", "the header says 23 payload bytes; 5 are missing",
                 wire(good[:-9]), [{"result": "truncated"}]))
    v.append(vec("minimum_garbage", "a single stray byte between delimiters",
                 b"\x00\x01\x00", [{"result": "truncated"}]))
    # 4 bad_length
    v.append(vec("bad_length_extra", "two bytes more than 29 + length",
                 wire(good + b"\x01\x02"), [{"result": "bad_length"}]))
    # 5 bad_crc
    flipped = bytearray(good)
    flipped[HEADER := 17 + 10] ^= 0x01  # the card code byte: A♠ becomes another card
    v.append(vec("bad_crc_payload", "one bit of the card code flipped on the line",
                 wire(bytes(flipped)), [{"result": "bad_crc"}]))
    flipped = bytearray(good)
    flipped[-1] ^= 0x80
    v.append(vec("bad_crc_crc", "a bit of the CRC itself flipped", wire(bytes(flipped)), [{"result": "bad_crc"}]))
    flipped = bytearray(good)
    flipped[17 + len(payload)] ^= 0x04
    v.append(vec("bad_crc_tag", "a bit of the tag flipped: noise, not an attack (the CRC covers the tag)",
                 wire(bytes(flipped)), [{"result": "bad_crc"}]))
    # 6 bad_version
    f = frame_bytes(MessageType.CARD, payload, seq=5, version=1, seal=False)
    v.append(vec("bad_version", "protocol version 1 (a shoe not yet reflashed: card values in clear)",
                 wire(f), [rejected("bad_version", f)]))
    f = frame_bytes(MessageType.CARD, payload, seq=5, version=3)
    v.append(vec("bad_version_three", "protocol version 3", wire(f), [rejected("bad_version", f)]))
    f = frame_bytes(MessageType.CARD, payload, seq=5, version=0)
    v.append(vec("bad_version_zero", "protocol version 0", wire(f), [rejected("bad_version", f)]))
    # 7 bad_flags
    for bit in (0x02, 0x04, 0x08):
        f = frame_bytes(MessageType.CARD, payload, seq=5, flags=bit | FLAG_RESENT)
        v.append(vec(f"bad_flags_{bit:02x}", f"reserved flag bit 0x{bit:02X} set", wire(f), [rejected("bad_flags", f)]))
    # 8 unknown_shoe
    f = frame_bytes(MessageType.CARD, payload, seq=5, shoe=4242)
    v.append(vec("unknown_shoe", "a shoe serial the host has no key for", wire(f), [rejected("unknown_shoe", f)]))
    f = msg_frame(Ping(7), shoe=4242, boot=EPOCH, seq=5)
    v.append(vec("unknown_shoe_to_shoe", "a command addressed to another shoe", wire(f),
                 [rejected("unknown_shoe", f)], receiver="shoe"))
    # 9 bad_tag
    f = frame_bytes(MessageType.CARD, payload, seq=5, key=OTHER_KEY)
    v.append(vec("bad_tag_forged", "a forged A♠ made without the shoe's key", wire(f), [rejected("bad_tag", f)]))
    # Counter mode is malleable: knowing the plain A♠, a forger flips the sealed code byte to
    # K♠ without the card key. The tag, over the sealed bytes, is what refuses it (SPEC 3.5).
    forged = bytearray(good)
    forged[17 + 10] ^= 51 ^ 50
    body = bytes(forged[: -4])
    forged_frame = body + struct.pack("<I", zlib.crc32(body))
    v.append(vec("bad_tag_edited", "a genuine A♠ whose sealed code byte was flipped to K♠, CRC fixed up",
                 wire(forged_frame), [rejected("bad_tag", forged_frame)]))
    edited = bytearray(good)
    struct.pack_into("<I", edited, 11, 6)  # seq 5 -> 6, to slip past the window
    body = bytes(edited[:-4])
    edited_frame = body + struct.pack("<I", zlib.crc32(body))
    v.append(vec("bad_tag_seq_edited", "a recorded frame whose seq was edited to look new",
                 wire(edited_frame), [rejected("bad_tag", edited_frame)], window=(BOOT, 5)))
    # Every one of the 8 tag bytes is compared: a tag wrong in one byte only (CRC fixed up,
    # so it is not noise) is refused, whichever byte it is.
    one_byte: list[bytes] = []
    for i in range(8):
        wrong = bytearray(good)
        wrong[17 + len(payload) + i] ^= 0x01
        body = bytes(wrong[:-4])
        one_byte.append(body + struct.pack("<I", zlib.crc32(body)))
    v.append(vec("bad_tag_last_byte", "a tag wrong in its last byte only, CRC fixed up",
                 wire(one_byte[7]), [rejected("bad_tag", one_byte[7])]))
    v.append(vec("bad_tag_each_byte", "eight frames, each with one tag byte wrong (byte 0 to 7), CRC fixed up",
                 b"".join(wire(f) for f in one_byte), [rejected("bad_tag", f) for f in one_byte]))
    # 10 bad_direction
    f = msg_frame(Ack(BOOT, 3), boot=EPOCH, seq=9)
    v.append(vec("bad_direction_to_host", "a host ACK reflected back at the host", wire(f),
                 [rejected("bad_direction", f)]))
    f = msg_frame(card(51, UID4), seq=9)
    v.append(vec("bad_direction_to_shoe", "a shoe CARD reflected back at the shoe", wire(f),
                 [rejected("bad_direction", f)], receiver="shoe"))
    f = frame_bytes(0x80, b"", seq=9)
    v.append(vec("bad_direction_0x80", "undefined type 0x80 from a shoe: bit 7 says host", wire(f),
                 [rejected("bad_direction", f)]))
    # 11 replay
    v.append(vec("replay_same", "the last accepted frame again", wire(good), [rejected("replay", good)],
                 window=(BOOT, 5)))
    v.append(vec("replay_older", "a frame older than the last accepted", wire(good), [rejected("replay", good)],
                 window=(BOOT, 40)))
    v.append(vec("replay_old_boot", "a frame of an earlier boot (the royal flush recorded last week)",
                 wire(good), [rejected("replay", good)], window=(BOOT + 1, 1)))
    v.append(vec("replay_in_stream", "the same frame twice in a stream: the second is replay",
                 wire(good) + wire(good), [good_ok, rejected("replay", good)]))
    resent = msg_frame(card(51, UID4), seq=5, flags=FLAG_RESENT)
    v.append(vec("replay_resent_duplicate", "a resend of an accepted frame is replay (answered by ACK)",
                 wire(good) + wire(resent), [good_ok, rejected("replay", resent)]))
    f = msg_frame(Ping(5), boot=EPOCH, seq=4)
    v.append(vec("replay_command", "a command already accepted by the shoe", wire(f), [rejected("replay", f)],
                 window=(EPOCH, 4), receiver="shoe"))
    f = msg_frame(Maintenance(), boot=EPOCH, seq=9)
    v.append(vec("replay_command_old_epoch",
                 "a recorded command of an earlier daemon run (epoch 3), after the daemon restarted "
                 "(epoch 4): refused even with a seq above the window's", wire(f), [rejected("replay", f)],
                 window=(EPOCH + 1, 1), receiver="shoe"))
    v.append(vec("gap_accepted_by_codec", "seq 9 after 5: new, so the codec accepts; the gap is the link's",
                 wire(msg_frame(card(51, UID4), seq=9)), [ok(card(51, UID4), seq=9)], window=(BOOT, 5)))
    v.append(vec("new_boot", "seq 1 of a newer boot after a high seq of the old one",
                 wire(msg_frame(card(51, UID4), boot=BOOT + 1, seq=1)),
                 [ok(card(51, UID4), boot=BOOT + 1, seq=1)], window=(BOOT, 900)))
    # 12 unknown_type
    for mtype, size in ((0x7F, 0), (0x0A, 12), (0x00, 0)):
        f = frame_bytes(mtype, bytes(range(1, size + 1)), seq=5)
        v.append(vec(f"unknown_type_{mtype:02x}", f"authenticated type 0x{mtype:02X}, length {size}",
                     wire(f), [rejected("unknown_type", f)]))
    f = frame_bytes(0x7F, bytes((i % 255) + 1 for i in range(MAX_PAYLOAD)), seq=5)
    v.append(vec("unknown_type_max_payload", "authenticated unknown type with MAX_PAYLOAD bytes",
                 wire(f), [rejected("unknown_type", f)]))
    f = frame_bytes(0x8A, b"\x01\x02", boot=EPOCH, seq=5)
    v.append(vec("unknown_type_to_shoe", "an unknown command 0x8A", wire(f), [rejected("unknown_type", f)],
                 receiver="shoe"))
    f = frame_bytes(0x7F, b"", seq=5)
    v.append(vec("unknown_type_advances", "an unknown type moves the window: its resend is replay",
                 wire(f) + wire(f), [rejected("unknown_type", f), rejected("replay", f)]))
    # 13 bad_payload
    bads: list[tuple[str, str, int, bytes, str]] = [
        ("card_code_52", "card code 52", MessageType.CARD, payload[:10] + b"\x34" + payload[11:], "host"),
        ("card_method_3", "read method 3", MessageType.CARD, payload[:11] + b"\x03" + payload[12:], "host"),
        ("card_raw_len_0", "raw_len 0", MessageType.CARD, payload[:18] + b"\x00", "host"),
        ("card_raw_len_17", "raw_len 17", MessageType.CARD, payload[:18] + b"\x11" + bytes(range(1, 18)), "host"),
        ("card_raw_short", "raw_len 4 but 3 bytes of raw", MessageType.CARD, payload[:-1], "host"),
        ("card_empty", "CARD with length 0", MessageType.CARD, b"", "host"),
        ("hello_50", "HELLO one byte short", MessageType.HELLO, bytes(50), "host"),
        ("deck_status_29", "DECK_STATUS of 29 bytes (the size an early SPEC draft gave)",
         MessageType.DECK_STATUS, bytes(29), "host"),
        ("heartbeat_8", "HEARTBEAT one byte long", MessageType.HEARTBEAT, bytes(8), "host"),
        ("crash_47", "CRASH one byte short", MessageType.CRASH, bytes(47), "host"),
        ("crash_49", "CRASH one byte long", MessageType.CRASH, bytes(49), "host"),
        ("ack_7", "ACK one byte short", MessageType.ACK, bytes(7), "shoe"),
        ("maintenance_magic", "MAINTENANCE with a wrong magic", MessageType.MAINTENANCE, b"MNTD", "shoe"),
        ("new_shoe_part", "NEW_SHOE part 2 of 2", MessageType.NEW_SHOE,
         struct.pack("<IIBBBB", 1, 2, 1, 2, 2, 0), "shoe"),
        ("new_shoe_parts_0", "NEW_SHOE parts 0", MessageType.NEW_SHOE, struct.pack("<IIBBBB", 1, 2, 1, 0, 0, 0), "shoe"),
        ("new_shoe_scheme", "NEW_SHOE scheme 3", MessageType.NEW_SHOE, struct.pack("<IIBBBB", 1, 2, 3, 0, 1, 0), "shoe"),
        ("new_shoe_count", "NEW_SHOE count 2 with one entry", MessageType.NEW_SHOE,
         struct.pack("<IIBBBB", 1, 2, 1, 0, 1, 2) + b"\x00\x04" + UID4, "shoe"),
        ("new_shoe_trailing", "NEW_SHOE with a byte after its entries", MessageType.NEW_SHOE,
         struct.pack("<IIBBBB", 1, 2, 1, 0, 1, 1) + b"\x00\x04" + UID4 + b"\x00", "shoe"),
        ("new_shoe_uid_len_0", "NEW_SHOE entry with uid_len 0", MessageType.NEW_SHOE,
         struct.pack("<IIBBBB", 1, 2, 1, 0, 1, 1) + b"\x00\x00", "shoe"),
        ("new_shoe_short", "NEW_SHOE of 11 bytes", MessageType.NEW_SHOE, bytes(11), "shoe"),
    ]
    for name, description, mtype, body_payload, receiver in bads:
        f = frame_bytes(mtype, body_payload, boot=BOOT if receiver == "host" else EPOCH, seq=5)
        v.append(vec(f"bad_payload_{name}", description, wire(f), [rejected("bad_payload", f)], receiver=receiver))
    return v


def stream_vectors() -> list[dict[str, Any]]:
    v: list[dict[str, Any]] = []
    cards = [card(c, uid_for(c, 7), index=i + 1) for i, c in enumerate((51, 47, 43))]
    frames = [msg_frame(c, seq=i + 1) for i, c in enumerate(cards)]
    oks = [ok(c, seq=i + 1) for i, c in enumerate(cards)]
    v.append(vec("garbage_between_frames", "noise bytes between two frames cost one rejection, no frame",
                 wire(frames[0]) + b"\x41\x42\x43" + wire(frames[1]), [oks[0], {"result": "bad_cobs"}, oks[1]]))
    v.append(vec("empty_frames_ignored", "runs of delimiters are ignored without comment",
                 b"\x00\x00\x00" + wire(frames[0]) + b"\x00\x00" + wire(frames[1]), [oks[0], oks[1]]))
    v.append(vec("lost_delimiter", "the trailing delimiter of a frame lost: the next frame's leading one ends it",
                 wire(frames[0])[:-1] + wire(frames[1]), [oks[0], oks[1]]))
    cut = wire(frames[1])[: len(wire(frames[1])) // 2]
    v.append(vec("capture_ends_mid_frame", "a capture that ends inside a frame: nothing yet, bytes buffered",
                 wire(frames[0]) + cut, [oks[0]], buffered=len(cut) - 1))
    # Line noise inside frame 2: a data byte (not a COBS code byte) changed.
    enc = bytearray(cobs.encode(frames[1]))
    pos = 1 if enc[0] > 2 else 2 + enc[1]  # a byte inside the first block
    enc[pos] = enc[pos] % 255 + 1 if enc[pos] != 0xFF else 0x01
    noisy = b"\x00" + bytes(enc) + b"\x00"
    stream = (wire(frames[0]) + b"\xff\xff\xff\xff" + noisy + b"\x01\x01\x01" + b"\x00\x00"
              + wire(frames[2]) + b"\x07")
    v.append(vec("noisy_stream", "three frames with noise: bad_cobs noise, a frame hit by noise (bad_crc), "
                 "noise decoding to zeros (truncated), the third frame intact, a stray byte buffered",
                 stream, [oks[0], {"result": "bad_cobs"}, {"result": "bad_crc"}, {"result": "truncated"}, oks[2]],
                 buffered=1))
    v.append(vec("resync_after_oversize_mid_frame",
                 "a frame whose delimiters were lost into a long noise run is dropped with it; the next is read",
                 b"\x00" + b"\x33" * 250 + cobs.encode(frames[0]) + b"\x00" + wire(frames[1]),
                 [{"result": "oversize"}, oks[1]]))
    return v


def barcode_vectors() -> dict[str, Any]:
    items: list[dict[str, Any]] = []

    def valid(text: str, meaning: str) -> None:
        p = parse_barcode(text)
        rank, suit = "23456789TJQKA"[p.code // 4], "cdhs"[p.code % 4]
        items.append({"text": text, "valid": True, "deck_id": p.deck_id, "code": p.code,
                      "card": rank + suit, "meaning": meaning})

    def invalid(text: str, reason: str, meaning: str) -> None:
        try:
            parse_barcode(text)
        except BarcodeError as exc:
            assert exc.reason == reason, (text, exc.reason, reason)
        else:
            raise AssertionError(f"{text!r} should be invalid")
        items.append({"text": text, "valid": False, "reason": reason, "meaning": meaning})

    ace = make_barcode(0x1234ABCD, 51)
    valid(ace, "A♠ of deck 0x1234ABCD (the SPEC's example)")
    valid(make_barcode(0x00C0FFEE, 0), "2♣ of deck 0x00C0FFEE (the SPEC's example)")
    valid(make_barcode(0x00C0FFEE, 35), "T♠ of deck 0x00C0FFEE")
    valid(make_barcode(0, 25), "8♦ of deck 0")
    valid(make_barcode(0xFFFFFFFF, 46), "K♥ of deck 0xFFFFFFFF")
    valid(ace + "\r", "terminated by CR")
    valid(ace + "\n", "terminated by LF")
    valid(ace + "\r\n", "terminated by CR LF")
    for code in range(52):
        items.append({"text": make_barcode(0x0A0B0C0D, code), "valid": True, "deck_id": 0x0A0B0C0D, "code": code,
                      "card": "23456789TJQKA"[code // 4] + "cdhs"[code % 4], "meaning": "every card of one deck"})
    invalid(ace[:-1], "length", "12 characters: check character lost")
    invalid(ace + "U", "length", "14 characters")
    invalid("", "length", "empty line")
    invalid(ace.lower(), "alphabet", "lower case is outside the alphabet")
    invalid(ace[:5] + "-" + ace[6:], "alphabet", "a character outside 0-9A-Z")
    wrong = ALPHABET[(ALPHABET.index(ace[-1]) + 1) % 36]
    invalid(ace[:-1] + wrong, "check", "wrong check character")
    sub = ace[:6] + ("0" if ace[6] != "0" else "1") + ace[7:]
    invalid(sub, "check", "one deck ID digit misread")
    swap = ace[:3] + ace[4] + ace[3] + ace[5:]
    assert swap != ace
    invalid(swap, "check", "two adjacent digits swapped")
    rs = ace[:10] + ace[11] + ace[10] + ace[12]
    invalid(rs, "check", "rank and suit swapped")
    body = "XS1234ABCDAS"
    invalid(body + check_character(body), "prefix", "good check character, wrong prefix")
    body = "CS1234ABCGAS"
    invalid(body + check_character(body), "deck_id", "good check character, deck ID not hex")
    body = "CS1234ABCD1S"
    invalid(body + check_character(body), "rank", "good check character, rank 1")
    body = "CS1234ABCDAX"
    invalid(body + check_character(body), "suit", "good check character, suit X")
    return {
        "description": "Barcode payloads of SPEC section 6, valid and not. A valid one names the card; "
                       "an invalid one is a misread with the reason cardshoe.protocol.parse_barcode gives.",
        "alphabet": ALPHABET,
        "barcodes": items,
    }


def check_with_host(doc: dict[str, Any]) -> None:
    """Refuse to write vectors the host codec disagrees with (names the vector)."""
    key = bytes.fromhex(doc["key"])
    for v in doc["vectors"]:
        direction = Direction.SHOE_TO_HOST if v["receiver"] == "host" else Direction.HOST_TO_SHOE
        rx = Receiver(lambda s: key if s == doc["shoe"] else None, direction=direction, auto_accept=True,
                      reference=True)
        window = v["window"]
        rx.windows[doc["shoe"]] = ReplayWindow(window["boot"], window["seq"])
        results = rx.feed(bytes.fromhex(v["wire"]))
        got = [r.reason.value if isinstance(r, Rejection) else "ok" for r in results]
        want = [e["result"] for e in v["expect"]]
        if got != want or rx.buffered != v["buffered"]:
            raise SystemExit(f"vector {v['name']}: host codec gives {got} buffered {rx.buffered}, "
                             f"the vector says {want} buffered {v['buffered']}")
        for r, e in zip(results, v["expect"]):
            if isinstance(r, Frame):
                assert message_fields(r.message) == e["fields"], v["name"]


def build() -> tuple[dict[str, Any], dict[str, Any]]:
    vectors = valid_vectors() + invalid_vectors() + stream_vectors()
    names = [v["name"] for v in vectors]
    assert len(names) == len(set(names)), "vector names must be unique"
    doc = {
        "description": "Golden vectors of protocol/SPEC.md version 2. Feed `wire` to a fresh receiver "
                       "at the `receiver` end (host: receives shoe frames and has a key only for `shoe`; "
                       "shoe: the shoe with serial `shoe`), whose replay window starts at `window` and "
                       "moves past every authenticated new frame; expect the results in order and "
                       "`buffered` bytes held at the end. Rejections from bad_version on also give the "
                       "header fields. Generated by protocol/tools/make_vectors.py; do not edit by hand.",
        "version": 2,
        "key": KEY.hex(),
        "shoe": SERIAL,
        "limits": {"MAX_FRAME": 256, "MAX_ENCODED": MAX_ENCODED, "MAX_PAYLOAD": MAX_PAYLOAD},
        "vectors": vectors,
    }
    check_with_host(doc)
    return doc, barcode_vectors()


def dump(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the checked-in vectors differ")
    args = parser.parse_args(argv)
    frames, barcodes = build()
    outputs = {VECTORS / "frames.json": dump(frames), VECTORS / "barcodes.json": dump(barcodes)}
    if args.check:
        stale = [str(p) for p, text in outputs.items() if not p.exists() or p.read_text() != text]
        if stale:
            print("out of date: " + ", ".join(stale), file=sys.stderr)
            return 1
        print("vectors up to date")
        return 0
    VECTORS.mkdir(parents=True, exist_ok=True)
    for path, text in outputs.items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT.parent)}")
    print(f"{len(frames['vectors'])} frame vectors, {len(barcodes['barcodes'])} barcodes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
