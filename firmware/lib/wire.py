# cardshoe wire codec, firmware side: protocol/SPEC.md version 2 in plain MicroPython.
#
# Plain struct, binascii.crc32, hashlib.sha256 (HMAC by hmac256.py), a hand-written
# COBS, and AES-128 in counter mode built on cryptolib's ECB (SPEC 3.5: the rp2 and unix
# ports have ECB and CBC, not CTR). Buffers are allocated once per object; nothing is
# allocated per byte. Runs unchanged under CPython (with tests/cpython/cryptolib.py on the
# path), so the host tests and the benchmark drive this same file.
#
# API
#   Constants: VERSION, HEADER_SIZE, TAG_SIZE, MIN_FRAME, MAX_FRAME, MAX_PAYLOAD,
#     MAX_ENCODED, OUT_SIZE (= MAX_ENCODED + 2: an encoded frame with both delimiters),
#     FLAG_RESENT; message types HELLO CARD UNREAD DECK_STATUS FAULT KEY HEARTBEAT REPLY
#     (shoe to host) and ACK RESEND_FROM NEW_SHOE CONFIG TIME PING MAINTENANCE CLEAR
#     CARDS_FROM (host to shoe); MAINTENANCE_MAGIC; NO_CARD (0xFF).
#   Result strings (SPEC 3.1): OK ("ok"), OVERSIZE BAD_COBS TRUNCATED BAD_LENGTH BAD_CRC
#     BAD_VERSION BAD_FLAGS UNKNOWN_SHOE BAD_TAG BAD_DIRECTION REPLAY UNKNOWN_TYPE BAD_PAYLOAD.
#
#   enc = Encoder(key, serial)
#   n = enc.encode(mtype, flags, boot, seq, payload, out, plen=-1)
#       Writes 0x00 COBS(frame) 0x00 into `out` (a bytearray of at least OUT_SIZE) and
#       returns the byte count. `payload` is any buffer; `plen` (default len(payload))
#       lets a caller pass its whole preallocated payload buffer. ValueError if too long.
#
#   rx = Receiver(key, serial, last_boot=0, last_seq=0, from_shoe=False, enc=None)
#   for result in rx.feed(data):   # data: bytes/bytearray/memoryview from the line
#       if result is OK: rx.mtype, rx.flags, rx.boot, rx.seq, rx.payload (a memoryview
#           into the receiver's buffer, valid until the next result) describe the frame.
#       else: result is the rejection reason (the caller counts what it needs). From BAD_VERSION
#           on, rx.mtype/flags/boot/seq are the rejected frame's (for REPLAY: answer a
#           resent command again without acting on it).
#       Iterate feed() to its end: bytes after the point where iteration stops are not read.
#   rx.last_boot, rx.last_seq: the replay window (the host's epoch and seq). It moves past
#       every authenticated new frame (OK, UNKNOWN_TYPE, BAD_PAYLOAD); the app persists it
#       with each state-changing command and passes it back at boot.
#   rx.buffered, rx.high_water (never above MAX_ENCODED), rx.reset().
#   from_shoe=True makes a receiver of shoe frames (the host's role; tests and the bench).
#
#   Card values (SPEC 3.5): the encoder seals the card values of CARD, DECK_STATUS and
#   NEW_SHOE before the tag, and the receiver opens them in place after the tag, the
#   window and the type are checked (rx.payload is the opened payload); enc.seal() does it.
#   Pass the shoe's Encoder to its Receiver (enc=) so the two share one HMAC and AES context.
#
#   The payload packers and readers are in payloads.py (not loaded on the shoe).
#   payload_ok(mtype, p) -> bool: the SPEC 5 bad_payload rules (the receiver applies them).
import binascii
import struct

from hmac256 import HMAC256

# AES: MicroPython's cryptolib, ECB (mode 1), from which the counter mode is built (SPEC
# 3.5). A MicroPython built without cryptolib cannot import this module: the shoe stops at
# boot rather than send card values in clear (firmware/README.md). Under CPython the tests
# put a stand-in of the same name on the path (tests/cpython/cryptolib.py).
from cryptolib import aes

try:
    from micropython import const
except ImportError:  # CPython: the tests and the benchmark

    def const(x):
        return x


VERSION = const(2)
HEADER_SIZE = const(17)
TAG_SIZE = const(8)
CRC_SIZE = const(4)
MIN_FRAME = const(29)
MAX_FRAME = const(256)
MAX_PAYLOAD = const(227)
MAX_ENCODED = const(258)
OUT_SIZE = const(260)
FLAG_RESENT = const(0x01)
_FLAGS_MUST_BE_ZERO = const(0x0E)
_DIRECTION_BIT = const(0x80)
MAINTENANCE_MAGIC = const(0x43544E4D)
NO_CARD = const(0xFF)
_MAX_RAW = const(16)

HELLO = const(0x01)
CARD = const(0x02)
UNREAD = const(0x03)
DECK_STATUS = const(0x04)
FAULT = const(0x05)
KEY = const(0x06)
HEARTBEAT = const(0x07)
REPLY = const(0x08)
ACK = const(0x81)
RESEND_FROM = const(0x82)
NEW_SHOE = const(0x83)
CONFIG = const(0x84)
TIME = const(0x85)
PING = const(0x86)
MAINTENANCE = const(0x87)
CLEAR = const(0x88)
CARDS_FROM = const(0x89)

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

_HEADER = "<BBBIIIH"
_U32 = "<I"

# Fixed payload sizes; CARD (20-35) and NEW_SHOE (12-227) are checked by their own rules.
_SIZES = {
    HELLO: 51, UNREAD: 10, DECK_STATUS: 26, FAULT: 8, KEY: 6, HEARTBEAT: 7, REPLY: 14,
    ACK: 8, RESEND_FROM: 8, CONFIG: 8, TIME: 8, PING: 4, MAINTENANCE: 4, CLEAR: 4,
    CARDS_FROM: 6,
}


def payload_ok(mtype, p):
    """The SPEC 5 payload rules: exact size, and the few fields the codec range-checks."""
    n = len(p)
    if mtype == CARD:
        if n < 20:
            return False
        raw_len = p[18]
        return (1 <= raw_len <= _MAX_RAW and n == 19 + raw_len
                and (p[10] <= 51 or p[10] == NO_CARD) and p[11] in (1, 2))
    if mtype == NEW_SHOE:
        if n < 12 or p[8] not in (1, 2) or p[10] < 1 or p[9] >= p[10]:
            return False
        pos = 12
        for _ in range(p[11]):
            if pos + 2 > n:
                return False
            uid_len = p[pos + 1]
            if not 1 <= uid_len <= _MAX_RAW:
                return False
            pos += 2 + uid_len
        return pos == n
    size = _SIZES.get(mtype, -1)
    if n != size:
        return False
    if mtype == MAINTENANCE:
        return struct.unpack_from(_U32, p, 0)[0] == MAINTENANCE_MAGIC
    return True


class Encoder:
    """Frames and COBS-encodes this shoe's messages (or, for tests, any message)."""

    def __init__(self, key, serial):
        self.serial = serial
        self.mac = HMAC256(key)
        # The card key: HMAC-SHA256(shoe key, label), first 16 bytes (SPEC 3.5).
        self._aes = aes(self.mac.digest(b"cardshoe v2 card values")[:16], 1)
        self._ctr = bytearray(16)
        self._ks = bytearray(16)
        self._frame = bytearray(MAX_FRAME)
        self._fmv = memoryview(self._frame)

    def seal(self, buf, start, end, mtype, boot, seq):
        """XOR the AES-128-CTR keystream of frame (type, boot, seq) over the card values of
        the payload buf[start:end] (SPEC 3.5): CARD from byte 6 (card_deck), DECK_STATUS
        from 19 (missing_map), NEW_SHOE from 12 (its entries); other types have none.
        Counter block i is `<IIB` boot, seq, type, three zero bytes, then i as a big-endian
        u32, encrypted by cryptolib's ECB. Sealing and opening are the same XOR; the two
        16-byte buffers are made once, so it allocates nothing."""
        if mtype == CARD:
            start += 6
        elif mtype == DECK_STATUS:
            start += 19
        elif mtype == NEW_SHOE:
            start += 12
        else:
            return
        ctr = self._ctr
        ks = self._ks
        struct.pack_into("<IIB", ctr, 0, boot, seq, mtype)
        i = 0
        while start < end:
            if not i & 15:
                ctr[15] = i >> 4  # at most 14 blocks: bytes 12-14 of the counter stay 0
                self._aes.encrypt(ctr, ks)
            buf[start] ^= ks[i & 15]
            start += 1
            i += 1

    def encode(self, mtype, flags, boot, seq, payload, out, plen=-1):
        if plen < 0:
            plen = len(payload)
        if plen > MAX_PAYLOAD:
            raise ValueError("payload longer than MAX_PAYLOAD")
        if len(out) < OUT_SIZE:
            raise ValueError("out buffer smaller than OUT_SIZE")
        f = self._frame
        fmv = self._fmv
        struct.pack_into(_HEADER, f, 0, VERSION, mtype, flags, self.serial, boot, seq, plen)
        fmv[HEADER_SIZE:HEADER_SIZE + plen] = memoryview(payload)[:plen]
        end = HEADER_SIZE + plen
        self.seal(f, HEADER_SIZE, end, mtype, boot, seq)
        tag = self.mac.digest(fmv[:end])
        for i in range(TAG_SIZE):
            f[end + i] = tag[i]
        end += TAG_SIZE
        struct.pack_into(_U32, f, end, binascii.crc32(fmv[:end]) & 0xFFFFFFFF)
        end += CRC_SIZE
        # COBS as the PyPI `cobs` package does it: a full 254-byte run at the very end
        # gets no extra empty block.
        out[0] = 0
        code_at = 1
        o = 2
        code = 1
        for i in range(end):
            b = f[i]
            if b == 0:
                out[code_at] = code
                code_at = o
                o += 1
                code = 1
            else:
                out[o] = b
                o += 1
                code += 1
                if code == 0xFF and i + 1 < end:
                    out[code_at] = code
                    code_at = o
                    o += 1
                    code = 1
        out[code_at] = code
        out[o] = 0
        return o + 1


class Receiver:
    """Bounded frame receiver: resyncs at each 0x00, never holds more than MAX_ENCODED."""

    def __init__(self, key, serial, last_boot=0, last_seq=0, from_shoe=False, enc=None):
        self.serial = serial
        self.last_boot = last_boot
        self.last_seq = last_seq
        # The encoder's HMAC and AES context serve here too (the shoe passes its own).
        self._enc = enc or Encoder(key, serial)
        self._want_host = not from_shoe
        self._buf = bytearray(MAX_ENCODED)
        self._mv = memoryview(self._buf)
        self._n = 0
        self._discarding = False
        self.high_water = 0
        self.mtype = 0
        self.flags = 0
        self.boot = 0
        self.seq = 0
        self.payload = self._mv[0:0]

    @property
    def buffered(self):
        return self._n

    def reset(self):
        self._n = 0
        self._discarding = False

    def feed(self, data):
        buf = self._buf
        for b in data:
            if b == 0:
                if self._discarding:
                    self._discarding = False
                elif self._n:
                    n = self._n
                    self._n = 0
                    yield self._check(n)
                continue
            if self._discarding:
                continue
            if self._n == MAX_ENCODED:
                self._n = 0
                self._discarding = True
                yield OVERSIZE
                continue
            buf[self._n] = b
            self._n += 1
            if self._n > self.high_water:
                self.high_water = self._n

    def _check(self, n):
        buf = self._buf
        mv = self._mv
        # COBS decode in place: the write index never passes the read index.
        i = 0
        o = 0
        while i < n:
            code = buf[i]
            i += 1
            end = i + code - 1
            if end > n:
                return BAD_COBS
            while i < end:
                buf[o] = buf[i]
                o += 1
                i += 1
            if i < n and code < 0xFF:
                buf[o] = 0
                o += 1
        if o < MIN_FRAME:
            return TRUNCATED
        length = buf[15] | (buf[16] << 8)
        if o < MIN_FRAME + length:
            return TRUNCATED
        if o > MIN_FRAME + length or length > MAX_PAYLOAD:
            return BAD_LENGTH
        body = HEADER_SIZE + length
        if binascii.crc32(mv[:body + TAG_SIZE]) & 0xFFFFFFFF != struct.unpack_from(_U32, buf, body + TAG_SIZE)[0]:
            return BAD_CRC
        _, self.mtype, self.flags, shoe, self.boot, self.seq, _ = struct.unpack_from(_HEADER, buf, 0)
        if buf[0] != VERSION:
            return BAD_VERSION
        if self.flags & _FLAGS_MUST_BE_ZERO:
            return BAD_FLAGS
        if shoe != self.serial:
            return UNKNOWN_SHOE
        tag = self._enc.mac.digest(mv[:body])
        diff = 0
        for k in range(TAG_SIZE):
            diff |= tag[k] ^ buf[body + k]
        if diff:
            return BAD_TAG
        if bool(self.mtype & _DIRECTION_BIT) != self._want_host:
            return BAD_DIRECTION
        if self.boot < self.last_boot or (self.boot == self.last_boot and self.seq <= self.last_seq):
            return REPLAY
        self.last_boot = self.boot
        self.last_seq = self.seq
        if not (HELLO <= self.mtype <= REPLY or ACK <= self.mtype <= CARDS_FROM):
            return UNKNOWN_TYPE
        self._enc.seal(buf, HEADER_SIZE, body, self.mtype, self.boot, self.seq)
        self.payload = mv[HEADER_SIZE:body]
        if not payload_ok(self.mtype, self.payload):
            return BAD_PAYLOAD
        return OK
