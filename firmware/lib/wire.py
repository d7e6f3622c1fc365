# cardshoe wire codec, firmware side: protocol/SPEC.md version 2 in plain MicroPython.
#
# Plain struct, binascii.crc32, hashlib.sha256 (HMAC256 below), a hand-written
# COBS, and AES-128 in counter mode built on cryptolib's ECB (SPEC 3.5: the rp2 and unix
# ports have ECB and CBC, not CTR). Buffers are allocated once per object; nothing is
# allocated per byte. Runs unchanged under CPython (with tests/cpython/cryptolib.py on the
# path), so the host tests and the benchmark drive this same file.
#
# API
#   Constants (here private consts; the public names are served from payloads.py by this
#   module's __getattr__, for the host's tests and tools: the shoe never asks for them): VERSION, HEADER_SIZE, TAG_SIZE, MIN_FRAME, MAX_FRAME, MAX_PAYLOAD,
#     MAX_ENCODED, OUT_SIZE (= MAX_ENCODED + 2: an encoded frame with both delimiters),
#     FLAG_RESENT; message types HELLO CARD UNREAD DECK_STATUS FAULT KEY HEARTBEAT REPLY
#     CRASH (shoe to host) and ACK RESEND_FROM NEW_SHOE CONFIG TIME PING MAINTENANCE CLEAR
#     CARDS_FROM (host to shoe); MAINTENANCE_MAGIC; NO_CARD (0xFF).
#   Result strings (SPEC 3.1): OK ("ok"), OVERSIZE BAD_COBS TRUNCATED BAD_LENGTH BAD_CRC
#     BAD_VERSION BAD_FLAGS UNKNOWN_SHOE BAD_TAG BAD_DIRECTION REPLAY UNKNOWN_TYPE BAD_PAYLOAD.
#
#   enc = Encoder(key, serial)
#   n = enc.encode(mtype, flags, boot, seq, payload, out, plen=-1, off=0)
#       Writes 0x00 COBS(frame) 0x00 into `out` (a bytearray of at least OUT_SIZE) and
#       returns the byte count. The payload is payload[off:off + plen] of any buffer
#       (`plen` by default the rest of it): a caller passes its whole preallocated buffer
#       rather than a slice (a new view per frame). ValueError if too long.
#
#   rx = Receiver(key, serial, last_boot=0, last_seq=0, from_shoe=False, enc=None)
#   for result in rx.feed(data, n=-1):   # data[:n] (all by default), bytes/bytearray/memoryview from the line
#       if result is OK: rx.mtype, rx.flags, rx.boot, rx.seq, rx.payload (a memoryview
#           into the receiver's buffer, valid until the next result) describe the frame.
#       else: result is the rejection reason (the caller counts what it needs). From BAD_VERSION
#           on, rx.mtype/flags/boot/seq are the rejected frame's (for REPLAY: answer a
#           resent command again without acting on it).
#       Iterate feed() to its end: bytes after the point where iteration stops are not read.
#   result = rx.take(data, n): the same without a generator (the shoe's link): the next result
#       in data[:n], None once it is all read; call again with the same data until None.
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
import hashlib
import struct

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


_VERSION = const(2)
_HEADER_SIZE = const(17)
_TAG_SIZE = const(8)
_CRC_SIZE = const(4)
_MIN_FRAME = const(29)
_MAX_FRAME = const(256)
_MAX_PAYLOAD = const(227)
_MAX_ENCODED = const(258)
_OUT_SIZE = const(260)
_FLAG_RESENT = const(0x01)
_FLAGS_MUST_BE_ZERO = const(0x0E)
_DIRECTION_BIT = const(0x80)
_MAINTENANCE_MAGIC = const(0x43544E4D)
_NO_CARD = const(0xFF)
_MAX_RAW = const(16)

_HELLO = const(0x01)
_CARD = const(0x02)
_UNREAD = const(0x03)
_DECK_STATUS = const(0x04)
_FAULT = const(0x05)
_KEY = const(0x06)
_HEARTBEAT = const(0x07)
_REPLY = const(0x08)
_CRASH = const(0x09)
_ACK = const(0x81)
_RESEND_FROM = const(0x82)
_NEW_SHOE = const(0x83)
_CONFIG = const(0x84)
_TIME = const(0x85)
_PING = const(0x86)
_MAINTENANCE = const(0x87)
_CLEAR = const(0x88)
_CARDS_FROM = const(0x89)


_HEADER = "<BBBIIIH"
_U32 = "<I"

# Fixed payload sizes by type (CARD, 20-35, and NEW_SHOE, 12-227, have their own rules):
# HELLO (0x01) to CRASH (0x09) at their type, ACK (0x81) to CARDS_FROM (0x89) from 10 on; 255
# (above any payload) where a type has none. A bytes constant, not a dict: less heap.
_SIZES = b"\xff\x33\xff\x0a\x1a\x08\x06\x07\x0e\x30\x08\x08\xff\x08\x08\x04\x04\x04\x06"


_BLOCK = const(64)


# HMAC-SHA256 (RFC 2104): MicroPython has hashlib.sha256 but no hmac module. The padded
# keys are made once; a digest costs two sha256 objects and no other allocation than the
# two 32-byte digests. Here, not in a module of its own: a module costs the streaming heap
# its object, globals and names (the tests compare it with CPython's hmac).
class HMAC256:
    """HMAC-SHA256 with a fixed key.

    HMAC256(key).digest(data) -> 32 bytes; `data` is any buffer (bytes, bytearray, memoryview).
    """

    def __init__(self, key):
        if len(key) > _BLOCK:
            key = hashlib.sha256(key).digest()
        self._ipad = bytearray(_BLOCK)
        self._opad = bytearray(_BLOCK)
        for i in range(_BLOCK):
            k = key[i] if i < len(key) else 0
            self._ipad[i] = k ^ 0x36
            self._opad[i] = k ^ 0x5C

    def digest(self, data):
        h = hashlib.sha256(self._ipad)
        h.update(data)
        inner = h.digest()
        h = hashlib.sha256(self._opad)
        h.update(inner)
        return h.digest()


def payload_ok(mtype, p):
    """The SPEC 5 payload rules: exact size, and the few fields the codec range-checks."""
    n = len(p)
    if mtype == _CARD:
        if n < 20:
            return False
        raw_len = p[18]
        return (1 <= raw_len <= _MAX_RAW and n == 19 + raw_len
                and (p[10] <= 51 or p[10] == _NO_CARD) and p[11] in (1, 2))
    if mtype == _NEW_SHOE:
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
    if mtype <= _CRASH:
        size = _SIZES[mtype]
    elif _ACK <= mtype <= _CARDS_FROM:
        size = _SIZES[mtype - _ACK + 10]
    else:
        return False
    if n != size:
        return False
    if mtype == _MAINTENANCE:
        return struct.unpack_from(_U32, p, 0)[0] == _MAINTENANCE_MAGIC
    return True


def _u32(b, o):
    """The little-endian u32 at b[o] (no tuple, unlike struct.unpack_from)."""
    return b[o] | b[o + 1] << 8 | b[o + 2] << 16 | b[o + 3] << 24


def __getattr__(name):
    # The public names (message types, sizes, result strings: "API" above) for the host's
    # tests and tools: they live in payloads.py, which the shoe never loads, as each global
    # here would cost the streaming heap a dict entry and its name (the constants here are
    # private `const`s, folded into the code).
    import payloads

    return getattr(payloads, name)


class Encoder:
    """Frames and COBS-encodes this shoe's messages (or, for tests, any message)."""

    def __init__(self, key, serial):
        self.serial = serial
        self.mac = HMAC256(key)
        # The card key: HMAC-SHA256(shoe key, label), first 16 bytes (SPEC 3.5).
        self._aes = aes(self.mac.digest(b"cardshoe v2 card values")[:16], 1)
        self._ctr = bytearray(16)
        self._ks = bytearray(16)
        self._frame = bytearray(_MAX_FRAME)
        self._fmv = memoryview(self._frame)
        # The frame's first n bytes for the tag and for the CRC: a slice of a memoryview is
        # a new object, so each is kept while frames keep their length (a shoe's _CARD
        # frames do): the steady state allocates no view.
        self._tag_n = -1
        self._tag_mv = None
        self._crc_n = -1
        self._crc_mv = None

    def seal(self, buf, start, end, mtype, boot, seq):
        """XOR the AES-128-CTR keystream of frame (type, boot, seq) over the card values of
        the payload buf[start:end] (SPEC 3.5): _CARD from byte 6 (card_deck), _DECK_STATUS
        from 19 (missing_map), _NEW_SHOE from 12 (its entries); other types have none.
        Counter block i is `<IIB` boot, seq, type, three zero bytes, then i as a big-endian
        u32, encrypted by cryptolib's ECB. Sealing and opening are the same XOR; the two
        16-byte buffers are made once, so it allocates nothing."""
        if mtype == _CARD:
            start += 6
        elif mtype == _DECK_STATUS:
            start += 19
        elif mtype == _NEW_SHOE:
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

    def encode(self, mtype, flags, boot, seq, payload, out, plen=-1, off=0):
        if plen < 0:
            plen = len(payload) - off
        if plen > _MAX_PAYLOAD:
            raise ValueError("payload longer than _MAX_PAYLOAD")
        if len(out) < _OUT_SIZE:
            raise ValueError("out buffer smaller than _OUT_SIZE")
        f = self._frame
        fmv = self._fmv
        struct.pack_into(_HEADER, f, 0, _VERSION, mtype, flags, self.serial, boot, seq, plen)
        # Byte by byte from `off`: a slice of the caller's buffer would be a new view.
        for i in range(plen):
            f[_HEADER_SIZE + i] = payload[off + i]
        end = _HEADER_SIZE + plen
        self.seal(f, _HEADER_SIZE, end, mtype, boot, seq)
        if end != self._tag_n:
            self._tag_n = end
            self._tag_mv = fmv[:end]
        tag = self.mac.digest(self._tag_mv)
        for i in range(_TAG_SIZE):
            f[end + i] = tag[i]
        end += _TAG_SIZE
        if end != self._crc_n:
            self._crc_n = end
            self._crc_mv = fmv[:end]
        struct.pack_into(_U32, f, end, binascii.crc32(self._crc_mv) & 0xFFFFFFFF)
        end += _CRC_SIZE
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
    """Bounded frame receiver: resyncs at each 0x00, never holds more than _MAX_ENCODED."""

    def __init__(self, key, serial, last_boot=0, last_seq=0, from_shoe=False, enc=None):
        self.serial = serial
        self.last_boot = last_boot
        self.last_seq = last_seq
        # The encoder's HMAC and AES context serve here too (the shoe passes its own).
        self._enc = enc or Encoder(key, serial)
        self._want_host = not from_shoe
        self._buf = bytearray(_MAX_ENCODED)
        self._mv = memoryview(self._buf)
        self._n = 0
        self._at = 0  # where take() goes on in its data
        self._discarding = False
        self.high_water = 0
        self.mtype = 0
        self.flags = 0
        self.boot = 0
        self.seq = 0
        self.payload = self._mv[0:0]
        # Views of the first body+TAG bytes (CRC), the body (tag) and the payload, kept
        # while frames keep their length (the host's ACKs do): no view per frame.
        self._body_n = -1
        self._crc_mv = self._tag_mv = self.payload

    @property
    def buffered(self):
        return self._n

    def reset(self):
        self._at = 0
        self._n = 0
        self._discarding = False

    def feed(self, data, n=-1):
        # data[:n] (all of it by default), by index: a caller's slice would be a new view.
        if n < 0:
            n = len(data)
        self._at = 0
        while True:
            result = self.take(data, n)
            if result is None:
                return
            yield result

    def take(self, data, n):
        """feed() without a generator (one per read would be garbage): the next result in
        data[:n], or None once all of it is read. Call again with the same data until None;
        the next data starts at its first byte."""
        buf = self._buf
        i = self._at
        while i < n:
            b = data[i]
            i += 1
            if b == 0:
                if self._discarding:
                    self._discarding = False
                elif self._n:
                    k = self._n
                    self._n = 0
                    self._at = i
                    return self._check(k)
                continue
            if self._discarding:
                continue
            if self._n == _MAX_ENCODED:
                self._n = 0
                self._discarding = True
                self._at = i
                return "oversize"
            buf[self._n] = b
            self._n += 1
            if self._n > self.high_water:
                self.high_water = self._n
        self._at = 0
        return None

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
                return "bad_cobs"
            while i < end:
                buf[o] = buf[i]
                o += 1
                i += 1
            if i < n and code < 0xFF:
                buf[o] = 0
                o += 1
        if o < _MIN_FRAME:
            return "truncated"
        length = buf[15] | (buf[16] << 8)
        if o < _MIN_FRAME + length:
            return "truncated"
        if o > _MIN_FRAME + length or length > _MAX_PAYLOAD:
            return "bad_length"
        body = _HEADER_SIZE + length
        if body != self._body_n:
            self._body_n = body
            self._crc_mv = mv[:body + _TAG_SIZE]
            self._tag_mv = mv[:body]
            self.payload = mv[_HEADER_SIZE:body]
        # Fields read byte by byte: struct.unpack_from would make a tuple per frame.
        if binascii.crc32(self._crc_mv) & 0xFFFFFFFF != _u32(buf, body + _TAG_SIZE):
            return "bad_crc"
        self.mtype = buf[1]
        self.flags = buf[2]
        shoe = _u32(buf, 3)
        self.boot = _u32(buf, 7)
        self.seq = _u32(buf, 11)
        if buf[0] != _VERSION:
            return "bad_version"
        if self.flags & _FLAGS_MUST_BE_ZERO:
            return "bad_flags"
        if shoe != self.serial:
            return "unknown_shoe"
        tag = self._enc.mac.digest(self._tag_mv)
        diff = 0
        for k in range(_TAG_SIZE):
            diff |= tag[k] ^ buf[body + k]
        if diff:
            return "bad_tag"
        if bool(self.mtype & _DIRECTION_BIT) != self._want_host:
            return "bad_direction"
        if self.boot < self.last_boot or (self.boot == self.last_boot and self.seq <= self.last_seq):
            return "replay"
        self.last_boot = self.boot
        self.last_seq = self.seq
        if not (_HELLO <= self.mtype <= _CRASH or _ACK <= self.mtype <= _CARDS_FROM):
            return "unknown_type"
        self._enc.seal(buf, _HEADER_SIZE, body, self.mtype, self.boot, self.seq)
        if not payload_ok(self.mtype, self.payload):
            return "bad_payload"
        return "ok"
