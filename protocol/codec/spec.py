"""The wire protocol of protocol/SPEC.md, declared with construct.

These declarations are the host's reference decoder and the generator of the golden
vectors. They are never compiled: construct's compiler leaves out checks, and every
byte parsed here comes from a serial line.
"""

from __future__ import annotations

import dataclasses
import enum
import zlib
from typing import Any

from construct import (
    Array,
    Bytes,
    Check,
    Checksum,
    Const,
    Enum,
    Int8ul,
    Int16ul,
    Int32ul,
    Int64ul,
    RawCopy,
    Rebuild,
    Struct,
    Terminated,
    len_,
    this,
)

VERSION = 2
HEADER_SIZE = 17
TAG_SIZE = 8
CRC_SIZE = 4
MAX_FRAME = 256
#: COBS adds one code byte per 254 data bytes: ceil(256 / 254) = 2 (SPEC section 1).
MAX_ENCODED = MAX_FRAME + 2
MAX_PAYLOAD = MAX_FRAME - HEADER_SIZE - TAG_SIZE - CRC_SIZE
MIN_FRAME = HEADER_SIZE + TAG_SIZE + CRC_SIZE
DELIMITER = 0x00

FLAG_RESENT = 0x01
#: Flag bits 1-3 change how a frame is read; a receiver of version 2 refuses them.
FLAGS_MUST_BE_ZERO = 0x0E
#: Bit 7 of the type is the direction: clear shoe to host, set host to shoe.
DIRECTION_BIT = 0x80

MAINTENANCE_MAGIC = 0x43544E4D  # b"MNTC" little-endian
NO_CARD = 0xFF
MAX_RAW_ID = 16


class Direction(enum.IntEnum):
    """Who sent a frame; bit 7 of its type (SPEC section 2)."""

    SHOE_TO_HOST = 0
    HOST_TO_SHOE = 1


class MessageType(enum.IntEnum):
    """Message types of version 2 (SPEC section 5)."""

    HELLO = 0x01
    CARD = 0x02
    UNREAD = 0x03
    DECK_STATUS = 0x04
    FAULT = 0x05
    KEY = 0x06
    HEARTBEAT = 0x07
    REPLY = 0x08
    CRASH = 0x09
    ACK = 0x81
    RESEND_FROM = 0x82
    NEW_SHOE = 0x83
    CONFIG = 0x84
    TIME = 0x85
    PING = 0x86
    MAINTENANCE = 0x87
    CLEAR = 0x88
    CARDS_FROM = 0x89


def direction_of(mtype: int) -> Direction:
    """The direction a message type travels in (bit 7 of the type)."""
    return Direction.HOST_TO_SHOE if mtype & DIRECTION_BIT else Direction.SHOE_TO_HOST


class ResetCause(enum.IntEnum):
    UNKNOWN = 0
    POWER_ON = 1
    WATCHDOG = 2
    SOFT_RESET = 3
    HARD_RESET = 4
    DEEP_SLEEP = 5
    CRASH = 6  # the firmware reset itself after an exception: a CRASH frame follows HELLO


class Readers(enum.IntFlag):
    RFID = 1
    BARCODE = 2


class ReadMethod(enum.IntEnum):
    RFID = 1
    BARCODE = 2


class CardFlags(enum.IntFlag):
    DUPLICATE = 1
    FOREIGN = 2
    NOT_DURABLE = 4  # framed from the shoe's RAM: its flash refused the record (FAULT STORAGE)


class Integrity(enum.IntFlag):
    DUPLICATE = 1
    FOREIGN = 2
    UNREAD = 4
    MISSING = 8
    EXTRA = 16


class DeckReason(enum.IntEnum):
    REQUEST = 0
    LOADED = 1
    INTEGRITY = 2
    END_OF_SHOE = 3


class FaultCode(enum.IntEnum):
    READER = 1
    JAM = 2
    TAMPER = 3
    SENSOR = 4
    LOW_MEMORY = 5
    OUTBOX_FULL = 6
    STORAGE = 7
    MANIFEST = 8


class DealerKey(enum.IntEnum):
    NEW_ROUND = 1
    DEAL_COMPLETE = 2
    EXPOSURE = 3
    END_SHOE = 4


class ReplyStatus(enum.IntEnum):
    OK = 0
    REFUSED = 1
    UNSUPPORTED = 2


class RefusedDetail(enum.IntEnum):
    BAD_STATE = 1
    BAD_MANIFEST = 2
    STORAGE = 3


class Scheme(enum.IntEnum):
    RFID = 1
    BARCODE = 2


def as_int(value: Any) -> int:
    """The integer behind a construct `Enum` field (a named string when the value is known)."""
    return int(value)


def crc32(data: bytes) -> int:
    """CRC-32 as zlib and MicroPython's binascii compute it."""
    return zlib.crc32(data) & 0xFFFFFFFF


# --- header and frame -------------------------------------------------------------

HEADER = Struct(
    "version" / Const(VERSION, Int8ul) * "protocol version; anything else is bad_version",
    "type" / Enum(Int8ul, MessageType) * "message type; bit 7 set: host to shoe",
    "flags" / Int8ul * "bit 0 RESENT; bits 1-3 must be 0; bits 4-7 ignored",
    Check(lambda ctx: ctx.flags & FLAGS_MUST_BE_ZERO == 0),
    "shoe" / Int32ul * "the shoe's serial number, in both directions",
    "boot" / Int32ul * "shoe: its boot counter; host: its epoch",
    "seq" / Int32ul * "per-boot (per-epoch) sequence number from 1",
    "length" / Int16ul * "payload length, 0..MAX_PAYLOAD",
)
"""The 17-byte frame header, `<BBBIIIH` (SPEC section 2)."""

FRAME = Struct(
    "body"
    / RawCopy(
        Struct(
            "header" / HEADER,
            "payload" / Bytes(this.header.length) * "the message (SPEC section 5)",
            "tag" / Bytes(TAG_SIZE) * "HMAC-SHA256(key, header || payload)[0:8]",
        )
    ),
    "crc" / Checksum(Int32ul, crc32, this.body.data) * "CRC-32 of header || payload || tag",
    Terminated,
)
"""A decoded frame (before COBS): header, payload, tag, CRC (SPEC section 2)."""

HEADER_FIELDS = Struct(
    "version" / Int8ul,
    "type" / Int8ul,
    "flags" / Int8ul,
    "shoe" / Int32ul,
    "boot" / Int32ul,
    "seq" / Int32ul,
    "length" / Int16ul,
)
"""The header's fields read without its checks, to report a frame that the checks refuse."""


@dataclasses.dataclass(frozen=True)
class FrameHeader:
    """The header fields of a frame whose CRC was good (SPEC section 2)."""

    version: int
    type: int
    flags: int
    shoe: int
    boot: int
    seq: int
    length: int


ENVELOPE = Struct(
    "body" / RawCopy(Bytes(this._params.total - CRC_SIZE)),
    "crc" / Checksum(Int32ul, crc32, this.body.data),
)
"""The CRC alone, checked before anything in the header is believed (SPEC 3.1 check 5).

Parse with `ENVELOPE.parse(frame, total=len(frame))`.
"""


# --- payloads, shoe to host --------------------------------------------------------

HELLO = Struct(
    "fw_major" / Int8ul,
    "fw_minor" / Int8ul,
    "fw_patch" / Int8ul,
    "fw_hash" / Bytes(32) * "SHA-256 of the firmware files in the manifest",
    "reset_cause" / Enum(Int8ul, ResetCause),
    "readers" / Int8ul * "bitmask: 1 RFID, 2 barcode",
    "shoe_no" / Int32ul * "loaded shoe session, 0 when none",
    "deck_id" / Int32ul,
    "dealt" / Int16ul,
    "integrity" / Int16ul * "Integrity bitmask",
    "faults" / Int16ul * "1 << code of every fault active at boot",
    Terminated,
)
"""HELLO 0x01: the first frame of every boot, 51 bytes."""

CARD = Struct(
    "shoe_no" / Int32ul,
    "index" / Int16ul * "1-based position in the shoe session, unread cards counted",
    "card_deck" / Int32ul * "deck ID read; 0 when the ID maps to no card",
    "code" / Int8ul * "card code 0..51, or 0xFF for no card",
    Check(lambda ctx: ctx.code <= 51 or ctx.code == NO_CARD),
    "method" / Enum(Int8ul, ReadMethod),
    Check(lambda ctx: as_int(ctx.method) in (1, 2)),
    "retries" / Int8ul,
    "flags" / Int8ul * "CardFlags: 1 DUPLICATE, 2 FOREIGN",
    "t_ms" / Int32ul * "shoe milliseconds since boot when the exit sensor fired",
    "raw_len" / Rebuild(Int8ul, len_(this.raw)),
    Check(lambda ctx: 1 <= ctx.raw_len <= MAX_RAW_ID),
    "raw" / Bytes(this.raw_len) * "RFID UID or barcode text as read",
    Terminated,
)
"""CARD 0x02: one card left the shoe with an ID, 20-35 bytes."""

UNREAD = Struct(
    "shoe_no" / Int32ul,
    "index" / Int16ul,
    "t_ms" / Int32ul,
    Terminated,
)
"""UNREAD 0x03: a card left the shoe with no ID read, 10 bytes."""

DECK_STATUS = Struct(
    "shoe_no" / Int32ul,
    "deck_id" / Int32ul,
    "reason" / Enum(Int8ul, DeckReason),
    "dealt" / Int16ul * "every card that left, read or not",
    "remaining" / Int16ul * "52 - dealt, floored at 0",
    "integrity" / Int16ul * "Integrity bitmask",
    "duplicates" / Int8ul,
    "foreign" / Int8ul,
    "unread" / Int8ul,
    "missing" / Int8ul,
    "missing_map" / Bytes(7) * "bit i set: card code i not dealt",
    Terminated,
)
"""DECK_STATUS 0x04: the deck's counts and integrity, 26 bytes."""

FAULT = Struct(
    "code" / Enum(Int8ul, FaultCode),
    "active" / Int8ul * "1 raised, 0 cleared",
    "detail" / Int16ul,
    "t_ms" / Int32ul,
    Terminated,
)
"""FAULT 0x05, 8 bytes."""

KEY = Struct(
    "key" / Enum(Int8ul, DealerKey),
    "arg" / Int8ul,
    "t_ms" / Int32ul,
    Terminated,
)
"""KEY 0x06: a dealer key press, 6 bytes."""

HEARTBEAT = Struct(
    "t_ms" / Int32ul,
    "dealt" / Int16ul,
    "outbox" / Int8ul * "frames waiting for an ACK",
    Terminated,
)
"""HEARTBEAT 0x07, 7 bytes."""

REPLY = Struct(
    "epoch" / Int32ul * "the answered command's epoch",
    "seq" / Int32ul * "the answered command's seq",
    "status" / Enum(Int8ul, ReplyStatus),
    "detail" / Int8ul,
    "oldest" / Int32ul * "the first seq of this boot the shoe still holds (SPEC 3.4 item 6)",
    Terminated,
)
"""REPLY 0x08: answers a host command, 14 bytes."""


class CrashWhere(enum.IntEnum):
    BOOT = 1
    STREAMING = 2


class CrashError(enum.IntEnum):
    UNKNOWN = 0
    MEMORY_ERROR = 1
    RUNTIME_ERROR = 2  # "maximum recursion depth exceeded" among others
    OS_ERROR = 3
    IMPORT_ERROR = 4
    KEYBOARD_INTERRUPT = 5
    OTHER = 6


CRASH = Struct(
    "boot" / Int32ul * "the boot that crashed; 0 when it crashed before its boot was counted",
    "where" / Enum(Int8ul, CrashWhere) * "1 booting, 2 streaming",
    "error" / Enum(Int8ul, CrashError) * "the exception's class",
    "count" / Int8ul * "crashes in a row, this one included (saturates at 255)",
    "cmd_type" / Int8ul * "the host command being executed (0x83-0x89), 0 none",
    "cmd_epoch" / Int32ul * "its epoch",
    "cmd_seq" / Int32ul * "its seq",
    "text" / Bytes(32) * "the exception's class and innermost module:line, ASCII, NUL-padded",
    Terminated,
)
"""CRASH 0x09: why the last boot reset (sent once, right after HELLO), 48 bytes."""


# --- payloads, host to shoe --------------------------------------------------------

ACK = Struct(
    "boot" / Int32ul * "the shoe boot acknowledged",
    "seq" / Int32ul * "every shoe frame up to and including seq is durable",
    Terminated,
)
"""ACK 0x81: cumulative acknowledgement, 8 bytes."""

RESEND_FROM = Struct(
    "boot" / Int32ul,
    "seq" / Int32ul,
    Terminated,
)
"""RESEND_FROM 0x82, 8 bytes."""

MANIFEST_ENTRY = Struct(
    "code" / Int8ul,
    "uid_len" / Rebuild(Int8ul, len_(this.uid)),
    Check(lambda ctx: 1 <= ctx.uid_len <= MAX_RAW_ID),
    "uid" / Bytes(this.uid_len),
)
"""One entry of an RFID manifest: card code and tag UID."""

NEW_SHOE = Struct(
    "shoe_no" / Int32ul,
    "deck_id" / Int32ul,
    "scheme" / Enum(Int8ul, Scheme),
    Check(lambda ctx: as_int(ctx.scheme) in (1, 2)),
    "part" / Int8ul,
    "parts" / Int8ul,
    Check(lambda ctx: ctx.parts >= 1 and ctx.part < ctx.parts),
    "count" / Rebuild(Int8ul, len_(this.entries)),
    "entries" / Array(this.count, MANIFEST_ENTRY),
    Terminated,
)
"""NEW_SHOE 0x83: load a deck (one part of its manifest), 12-227 bytes."""

CONFIG = Struct(
    "heartbeat_ms" / Int16ul,
    "resend_ms" / Int16ul,
    "resend_max_ms" / Int16ul,
    "debounce_ms" / Int16ul,
    Terminated,
)
"""CONFIG 0x84, 8 bytes."""

TIME = Struct(
    "unix_ms" / Int64ul,
    Terminated,
)
"""TIME 0x85, 8 bytes."""

PING = Struct(
    "nonce" / Int32ul,
    Terminated,
)
"""PING 0x86, 4 bytes."""

MAINTENANCE = Struct(
    "magic" / Const(MAINTENANCE_MAGIC, Int32ul) * 'b"MNTC": guards against a corrupted type byte',
    Terminated,
)
"""MAINTENANCE 0x87: return to the REPL, 4 bytes."""

CLEAR = Struct(
    "integrity_mask" / Int16ul,
    "fault_mask" / Int16ul,
    Terminated,
)
"""CLEAR 0x88, 4 bytes."""

CARDS_FROM = Struct(
    "shoe_no" / Int32ul,
    "index" / Int16ul,
    Terminated,
)
"""CARDS_FROM 0x89: resend logged cards from index, 6 bytes."""


PAYLOADS: dict[MessageType, Any] = {
    MessageType.HELLO: HELLO,
    MessageType.CARD: CARD,
    MessageType.UNREAD: UNREAD,
    MessageType.DECK_STATUS: DECK_STATUS,
    MessageType.FAULT: FAULT,
    MessageType.KEY: KEY,
    MessageType.HEARTBEAT: HEARTBEAT,
    MessageType.REPLY: REPLY,
    MessageType.CRASH: CRASH,
    MessageType.ACK: ACK,
    MessageType.RESEND_FROM: RESEND_FROM,
    MessageType.NEW_SHOE: NEW_SHOE,
    MessageType.CONFIG: CONFIG,
    MessageType.TIME: TIME,
    MessageType.PING: PING,
    MessageType.MAINTENANCE: MAINTENANCE,
    MessageType.CLEAR: CLEAR,
    MessageType.CARDS_FROM: CARDS_FROM,
}
"""The payload declaration of every message type."""
