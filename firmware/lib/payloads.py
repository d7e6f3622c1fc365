# cardshoe wire codec, payload half: the SPEC section 5 payloads in plain struct.
#
# The packers of shoe-to-host payloads and the readers of host-to-shoe payloads, kept
# apart from wire.py (framing, HMAC, replay window) because the shoe's main loop packs
# its frames from its log records and reads commands in place (app/shoe.py, app/link.py):
# this module is deployed but never imported while streaming, so its code costs the
# shoe's heap nothing. The golden vectors drive it under micropython and CPython, with
# wire.py, as the firmware codec (tests/protocol/mp_harness.py).
#
#   Payload packers (shoe to host), each `pack_x(buf, fields...) -> n` into a caller's
#   buffer of at least MAX_PAYLOAD bytes:
#     pack_hello(buf, fw_major, fw_minor, fw_patch, fw_hash, reset_cause, readers,
#                shoe_no, deck_id, dealt, integrity, faults)
#     pack_card(buf, shoe_no, index, card_deck, code, method, retries, flags, t_ms, raw)
#     pack_unread(buf, shoe_no, index, t_ms)
#     pack_deck_status(buf, shoe_no, deck_id, reason, dealt, remaining, integrity,
#                      duplicates, foreign, unread, missing, missing_map)
#     pack_fault(buf, code, active, detail, t_ms)
#     pack_key(buf, key, arg, t_ms)
#     pack_heartbeat(buf, t_ms, dealt, outbox)
#     pack_reply(buf, epoch, seq, status, detail, oldest)
#     pack_crash(buf, boot, where, error, count, cmd_type, cmd_epoch, cmd_seq, text)
#   Payload readers (host to shoe), on the payload memoryview of an OK frame:
#     unpack_ack(p) -> (boot, seq)          unpack_resend_from(p) -> (boot, seq)
#     unpack_new_shoe(p) -> (shoe_no, deck_id, scheme, part, parts, count)
#     manifest_entries(p) -> iterator of (code, uid memoryview)
#     unpack_config(p) -> (heartbeat_ms, resend_ms, resend_max_ms, debounce_ms)
#     unpack_time(p) -> unix_ms             unpack_ping(p) -> nonce
#     unpack_clear(p) -> (integrity_mask, fault_mask)
#     unpack_cards_from(p) -> (shoe_no, index)
import struct

# The codec's public names, served as wire.NAME too (wire.__getattr__): wire.py holds them as
# private consts so that the streaming shoe's heap holds no dict entry or name for them.
VERSION = 2
HEADER_SIZE = 17
TAG_SIZE = 8
CRC_SIZE = 4
MIN_FRAME = 29
MAX_FRAME = 256
MAX_PAYLOAD = 227
MAX_ENCODED = 258
OUT_SIZE = 260
FLAG_RESENT = 0x01
MAINTENANCE_MAGIC = 0x43544E4D
NO_CARD = 0xFF
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

# Result strings (SPEC 3.1), as wire's receiver returns them.
OK = "ok"
OVERSIZE = "oversize"
BAD_COBS = "bad_cobs"
TRUNCATED = "truncated"
BAD_LENGTH = "bad_length"
BAD_CRC = "bad_crc"
BAD_VERSION = "bad_version"
BAD_FLAGS = "bad_flags"
UNKNOWN_SHOE = "unknown_shoe"
BAD_TAG = "bad_tag"
BAD_DIRECTION = "bad_direction"
REPLAY = "replay"
UNKNOWN_TYPE = "unknown_type"
BAD_PAYLOAD = "bad_payload"

_MAX_RAW = 16
_U32 = "<I"

_HELLO = "<BBB32sBBIIHHH"
_CARD = "<IHIBBBBIB"
_UNREAD = "<IHI"
_DECK_STATUS = "<IIBHHHBBBB7s"
_FAULT = "<BBHI"
_KEY = "<BBI"
_HEARTBEAT = "<IHB"
_REPLY = "<IIBBI"
_CRASH = "<IBBBBII32s"
_BOOT_SEQ = "<II"
_NEW_SHOE = "<IIBBBB"
_CONFIG = "<HHHH"
_TIME = "<Q"
_CLEAR = "<HH"
_CARDS_FROM = "<IH"


# --- shoe to host payloads -------------------------------------------------------

def pack_hello(buf, fw_major, fw_minor, fw_patch, fw_hash, reset_cause, readers,
               shoe_no, deck_id, dealt, integrity, faults):
    struct.pack_into(_HELLO, buf, 0, fw_major, fw_minor, fw_patch, fw_hash, reset_cause,
                     readers, shoe_no, deck_id, dealt, integrity, faults)
    return 51


def pack_card(buf, shoe_no, index, card_deck, code, method, retries, flags, t_ms, raw):
    n = len(raw)
    if not 1 <= n <= _MAX_RAW:
        raise ValueError("raw reader ID must be 1-16 bytes")
    struct.pack_into(_CARD, buf, 0, shoe_no, index, card_deck, code, method, retries,
                     flags, t_ms, n)
    for i in range(n):
        buf[19 + i] = raw[i]
    return 19 + n


def pack_unread(buf, shoe_no, index, t_ms):
    struct.pack_into(_UNREAD, buf, 0, shoe_no, index, t_ms)
    return 10


def pack_deck_status(buf, shoe_no, deck_id, reason, dealt, remaining, integrity,
                     duplicates, foreign, unread, missing, missing_map):
    struct.pack_into(_DECK_STATUS, buf, 0, shoe_no, deck_id, reason, dealt, remaining,
                     integrity, duplicates, foreign, unread, missing, missing_map)
    return 26


def pack_fault(buf, code, active, detail, t_ms):
    struct.pack_into(_FAULT, buf, 0, code, active, detail, t_ms)
    return 8


def pack_key(buf, key, arg, t_ms):
    struct.pack_into(_KEY, buf, 0, key, arg, t_ms)
    return 6


def pack_heartbeat(buf, t_ms, dealt, outbox):
    struct.pack_into(_HEARTBEAT, buf, 0, t_ms, dealt, outbox)
    return 7


def pack_reply(buf, epoch, seq, status, detail, oldest):
    struct.pack_into(_REPLY, buf, 0, epoch, seq, status, detail, oldest)
    return 14


def pack_crash(buf, boot, where, error, count, cmd_type, cmd_epoch, cmd_seq, text):
    struct.pack_into(_CRASH, buf, 0, boot, where, error, count, cmd_type, cmd_epoch, cmd_seq, text)
    return 48


# --- host to shoe payloads -------------------------------------------------------

def unpack_ack(p):
    return struct.unpack_from(_BOOT_SEQ, p, 0)


def unpack_resend_from(p):
    return struct.unpack_from(_BOOT_SEQ, p, 0)


def unpack_new_shoe(p):
    return struct.unpack_from(_NEW_SHOE, p, 0)


def manifest_entries(p):
    pos = 12
    for _ in range(p[11]):
        uid_len = p[pos + 1]
        yield p[pos], p[pos + 2:pos + 2 + uid_len]
        pos += 2 + uid_len


def unpack_config(p):
    return struct.unpack_from(_CONFIG, p, 0)


def unpack_time(p):
    return struct.unpack_from(_TIME, p, 0)[0]


def unpack_ping(p):
    return struct.unpack_from(_U32, p, 0)[0]


def unpack_clear(p):
    return struct.unpack_from(_CLEAR, p, 0)


def unpack_cards_from(p):
    return struct.unpack_from(_CARDS_FROM, p, 0)
