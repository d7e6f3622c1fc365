"""Frames on the wire: the encoder, the bounded receiver and the replay window (SPEC 1-3)."""

from __future__ import annotations

import hashlib
import hmac
import struct
import zlib
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field, fields
from typing import Any, Union

from cobs import cobs
from construct import CheckError, ChecksumError, ConstError, ConstructError

from .errors import FrameError, FrameRejected, PayloadError, Reason
from .layout import CRC_STRUCT, HEADER_STRUCT, HEADER_VERSION
from .layout import parse_fast
from .messages import (
    FAST_PAYLOADS, Message, build_payload, parse_payload, parse_payload_reference, plain_dataclass,
)
from .seal import seal_payload, seal_payload_reference
from .spec import (
    CRC_SIZE,
    FLAGS_MUST_BE_ZERO,
    ENVELOPE,
    FRAME,
    HEADER,
    HEADER_SIZE,
    MAX_ENCODED,
    MAX_PAYLOAD,
    MIN_FRAME,
    TAG_SIZE,
    HEADER_FIELDS,
    VERSION,
    DIRECTION_BIT,
    Direction,
    FrameHeader,
    MessageType,
    direction_of,
)

KeyLookup = Callable[[int], Union[bytes, None]]
"""Shoe serial -> its 32-byte key, or None when the host has no key for that shoe."""


_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))


_PADS: dict[bytes, tuple[Any, Any]] = {}


def _hmac_pads(key: bytes) -> tuple[Any, Any]:
    """SHA-256 states after the inner and outer padded key of RFC 2104, made once per key:
    copying them per frame costs a third of `hmac.new` (which pads and hashes the key anew).
    A plain dict, cleared when it holds 256 keys: an lru_cache lookup costs more."""
    found = _PADS.get(key)
    if found is None:
        block = hashlib.sha256(key).digest() if len(key) > 64 else key
        block = block.ljust(64, b"\x00")
        if len(_PADS) >= 256:
            _PADS.clear()
        found = _PADS[key] = (hashlib.sha256(block.translate(_IPAD)), hashlib.sha256(block.translate(_OPAD)))
    return found


def compute_tag(key: bytes, header_and_payload: bytes) -> bytes:
    """The frame's tag: HMAC-SHA256(key, header || payload), first 8 bytes (SPEC 3.2).

    RFC 2104 from precomputed pad states; `compute_tag_reference` is the `hmac` module's."""
    pads = _PADS.get(key) if type(key) is bytes else None
    inner_start, outer_start = pads if pads is not None else _hmac_pads(bytes(key))
    inner = inner_start.copy()
    inner.update(header_and_payload)
    outer = outer_start.copy()
    outer.update(inner.digest())
    tag: bytes = outer.digest()[:TAG_SIZE]
    return tag


def compute_tag_reference(key: bytes, header_and_payload: bytes) -> bytes:
    """compute_tag by the standard library's `hmac` (the reference)."""
    return hmac.new(key, header_and_payload, hashlib.sha256).digest()[:TAG_SIZE]


def build_raw_frame(
    mtype: int, payload: bytes, *, key: bytes, shoe: int, boot: int, seq: int, flags: int = 0
) -> bytes:
    """The decoded frame (header, payload, tag, CRC) of a payload given as bytes.

    `payload` is the plain payload: its card values are sealed here (SPEC 3.5) before the
    tag is computed over header and sealed payload. Raises FrameError when a field does
    not fit its header slot. Packed with the header layout derived from spec.HEADER; a
    header it refuses goes to construct (`build_raw_frame_reference`) for the error.
    """
    if len(payload) > MAX_PAYLOAD:
        raise FrameError(f"payload of {len(payload)} bytes exceeds MAX_PAYLOAD ({MAX_PAYLOAD})")
    if flags & FLAGS_MUST_BE_ZERO:
        return build_raw_frame_reference(mtype, payload, key=key, shoe=shoe, boot=boot, seq=seq, flags=flags)
    try:
        header = HEADER_STRUCT.pack(HEADER_VERSION, mtype, flags, shoe, boot, seq, len(payload))
        sealed = seal_payload(key, mtype, boot, seq, payload)
    except (struct.error, TypeError, ValueError, OverflowError):
        return build_raw_frame_reference(mtype, payload, key=key, shoe=shoe, boot=boot, seq=seq, flags=flags)
    body = header + sealed
    body += compute_tag(key, body)
    return body + CRC_STRUCT.pack(zlib.crc32(body))


def build_raw_frame_reference(
    mtype: int, payload: bytes, *, key: bytes, shoe: int, boot: int, seq: int, flags: int = 0
) -> bytes:
    """build_raw_frame by the construct declarations (the reference)."""
    if len(payload) > MAX_PAYLOAD:
        raise FrameError(f"payload of {len(payload)} bytes exceeds MAX_PAYLOAD ({MAX_PAYLOAD})")
    header = {
        "version": VERSION,
        "type": mtype,
        "flags": flags,
        "shoe": shoe,
        "boot": boot,
        "seq": seq,
        "length": len(payload),
    }
    try:
        header_bytes = HEADER.build(header)
        payload = seal_payload_reference(key, mtype, boot, seq, payload)
        tag = compute_tag_reference(key, header_bytes + payload)
        return bytes(FRAME.build({"body": {"value": {"header": header, "payload": payload, "tag": tag}}}))
    except ConstructError as exc:
        raise FrameError(" ".join(str(exc).split())) from exc


def cobs_wrap(frame: bytes) -> bytes:
    """`0x00 || COBS(frame) || 0x00`: a decoded frame as wire bytes."""
    return b"\x00" + bytes(cobs.encode(frame)) + b"\x00"


def encode_raw_frame(
    mtype: int, payload: bytes, *, key: bytes, shoe: int, boot: int, seq: int, flags: int = 0
) -> bytes:
    """Wire bytes of a frame whose payload is given as bytes (no payload check)."""
    return cobs_wrap(build_raw_frame(mtype, payload, key=key, shoe=shoe, boot=boot, seq=seq, flags=flags))


def encode_frame(
    message: Message, *, key: bytes, shoe: int, boot: int, seq: int, flags: int = 0
) -> bytes:
    """Wire bytes of `message`, both 0x00 delimiters included.

    `shoe` is the shoe's serial (the sender's for shoe frames, the addressee's for host
    frames); `boot` is the shoe's boot counter or the host's epoch; `flags` is 0 or
    FLAG_RESENT. Raises PayloadError or FrameError when the message cannot be sent.
    """
    payload = build_payload(message)
    return encode_raw_frame(message.TYPE, payload, key=key, shoe=shoe, boot=boot, seq=seq, flags=flags)


@dataclass(frozen=True)
class Frame:
    """An accepted frame: authenticated, new, of a known type, with a valid payload."""

    header: FrameHeader
    message: Message
    payload: bytes
    """The payload with its card values opened (SPEC 3.5); `raw` has them sealed."""
    tag: bytes
    raw: bytes
    """The encoded bytes between the delimiters, as received."""

    @property
    def type(self) -> MessageType:
        return MessageType(self.header.type)

    @property
    def flags(self) -> int:
        return self.header.flags

    @property
    def shoe(self) -> int:
        return self.header.shoe

    @property
    def boot(self) -> int:
        return self.header.boot

    @property
    def seq(self) -> int:
        return self.header.seq

    @property
    def resent(self) -> bool:
        return bool(self.header.flags & 1)


@dataclass(frozen=True)
class Rejection:
    """A rejected frame: the SPEC 3.1 reason, the bytes, and the header when it could be read.

    `header` is set from check 6 on (the CRC was good), so a `replay`, `unknown_type` or
    `bad_payload` rejection still names the shoe, boot and seq. `raw` is the encoded bytes
    between delimiters (for `oversize`, the first MAX_ENCODED of them).
    """

    reason: Reason
    raw: bytes
    header: FrameHeader | None = None
    detail: str = ""


@dataclass
class ReplayWindow:
    """The last accepted (boot, seq) from one sender (SPEC 3.1 check 11).

    Kept apart from the receiver so the daemon can persist it in its journal and restore
    it at start: a restart must not reopen the window.
    """

    boot: int = 0
    seq: int = 0

    def is_new(self, boot: int, seq: int) -> bool:
        """True when (boot, seq) is greater than the last accepted pair."""
        return (boot, seq) > (self.boot, self.seq)

    def is_next(self, boot: int, seq: int) -> bool:
        """True when (boot, seq) is the frame the link expects next (SPEC 4): seq + 1 of the
        same boot, or seq 1 of a newer boot. A new frame that is not next is a gap."""
        if boot == self.boot:
            return seq == self.seq + 1
        return boot > self.boot and seq == 1

    def accept(self, boot: int, seq: int) -> None:
        """Record (boot, seq) as accepted; the window never moves backwards."""
        if (boot, seq) > (self.boot, self.seq):
            self.boot, self.seq = boot, seq


Received = Union[Frame, Rejection]


@dataclass
class Receiver:
    """Bounded frame receiver: feed it bytes, get accepted frames and rejections in order.

    `keys(shoe)` gives a shoe's key or None (`unknown_shoe`; a lookup that raises is
    `unknown_shoe` too, with the error as detail). `direction` is the direction
    of the frames this end receives (SHOE_TO_HOST on the host); frames of the other
    direction are `bad_direction`. None accepts both (the dissector), with a separate
    window per direction. `windows` maps a shoe serial to its ReplayWindow; frames are
    checked against the window as it stands when they are decoded, and the receiver moves
    it only when `auto_accept` is set (then past every authenticated, new frame, including
    `unknown_type` and `bad_payload` ones, as SPEC 7 asks). Otherwise the link layer calls
    `window.accept()` once the frame is journaled, after checking `is_next()`.

    The buffer of bytes awaiting a delimiter is preallocated at MAX_ENCODED and never grows.
    """

    keys: KeyLookup
    direction: Direction | None = Direction.SHOE_TO_HOST
    windows: MutableMapping[int, ReplayWindow] = field(default_factory=dict)
    auto_accept: bool = False
    reference: bool = False
    """Decode by the construct declarations alone (`_check_reference`): the reference the
    fast path is tested against, and what `cardshoe bench protocol` compares it with."""
    reverse_windows: MutableMapping[int, ReplayWindow] = field(default_factory=dict, init=False)
    """Windows of host-to-shoe frames when `direction` is None (the dissector)."""
    counts: dict[Reason, int] = field(default_factory=dict, init=False)
    """Rejections counted by reason."""
    accepted: int = field(default=0, init=False)
    high_water: int = field(default=0, init=False)
    """The most bytes ever held in the buffer; never above MAX_ENCODED."""

    def __post_init__(self) -> None:
        self._buf = bytearray(MAX_ENCODED)
        self._n = 0
        self._discarding = False

    @property
    def buffered(self) -> int:
        """Bytes held, waiting for a delimiter."""
        return self._n

    @property
    def capacity(self) -> int:
        """Size of the receive buffer: MAX_ENCODED, always."""
        return len(self._buf)

    def reset(self) -> None:
        """Drop any partial frame (e.g. after the port reconnects)."""
        self._n = 0
        self._discarding = False

    def window_for(self, shoe: int, mtype: int) -> ReplayWindow:
        """The replay window for frames of `mtype`'s direction from/to `shoe`."""
        table = self.windows
        if self.direction is None and direction_of(mtype) is Direction.HOST_TO_SHOE:
            table = self.reverse_windows
        window = table.get(shoe)
        if window is None:
            window = table[shoe] = ReplayWindow()
        return window

    def feed(self, data: bytes | bytearray | memoryview) -> list[Received]:
        """Take bytes from the line; return what completed, in order."""
        out: list[Received] = []
        view = bytes(data)
        pos, end = 0, len(view)
        while pos < end:
            zero = view.find(b"\x00", pos)
            stop = end if zero < 0 else zero
            if not self._discarding and stop > pos:
                room = MAX_ENCODED - self._n
                take = min(room, stop - pos)
                self._buf[self._n : self._n + take] = view[pos : pos + take]
                self._n += take
                self.high_water = max(self.high_water, self._n)
                if stop - pos > room:
                    # One rejection for the whole run; the rest is dropped unseen.
                    out.append(self._reject(Rejection(Reason.OVERSIZE, bytes(self._buf[: self._n]))))
                    self._n = 0
                    self._discarding = True
            if zero < 0:
                break
            if self._discarding:
                self._discarding = False
            elif self._n:
                raw, self._n = bytes(self._buf[: self._n]), 0
                out.append(self._decode(raw))
            self._n = 0
            pos = zero + 1
        return out

    def _reject(self, rejection: Rejection) -> Rejection:
        self.counts[rejection.reason] = self.counts.get(rejection.reason, 0) + 1
        return rejection

    def _decode(self, raw: bytes) -> Received:
        try:
            return self._check_reference(raw) if self.reference else self._check(raw)
        except FrameRejected as exc:
            header = exc.header if isinstance(exc.header, FrameHeader) else None
            return self._reject(Rejection(exc.reason, raw, header, exc.detail))

    def _check(self, raw: bytes, window: ReplayWindow | None = None) -> Frame:
        """SPEC 3.1 checks 2-13, in order; raises FrameRejected at the first failure.

        `struct` over the layouts derived from the construct declarations (`layout`),
        one pass; `_check_reference` does the same by construct, and the tests hold the
        two to the same results (reason, header, detail, frame) on every golden vector
        and on generated frames, valid and damaged.
        """
        try:
            frame = cobs.decode(raw)
        except cobs.DecodeError as exc:
            raise FrameRejected(Reason.BAD_COBS, raw, str(exc)) from None
        n = len(frame)
        if n < MIN_FRAME:
            raise FrameRejected(Reason.TRUNCATED, raw, f"{n} bytes, fewer than {MIN_FRAME}")
        fields = HEADER_STRUCT.unpack_from(frame)
        version, mtype, flags, shoe, boot, seq, length = fields
        if n < MIN_FRAME + length:
            raise FrameRejected(Reason.TRUNCATED, raw, f"{n} bytes, header says {MIN_FRAME + length}")
        if n > MIN_FRAME + length or length > MAX_PAYLOAD:
            raise FrameRejected(Reason.BAD_LENGTH, raw, f"{n} bytes, length field {length}")
        if zlib.crc32(frame[:-CRC_SIZE]) != CRC_STRUCT.unpack_from(frame, n - CRC_SIZE)[0]:
            raise FrameRejected(Reason.BAD_CRC, raw)
        header: FrameHeader = object.__new__(FrameHeader)  # as messages.make: fields checked above
        header.__dict__.update(zip(_HEADER_NAMES, fields))
        if version != HEADER_VERSION:
            raise _with_header(FrameRejected(Reason.BAD_VERSION, raw, f"version {version}"), header)
        if flags & FLAGS_MUST_BE_ZERO:
            raise _with_header(FrameRejected(Reason.BAD_FLAGS, raw, f"flags 0x{flags:02X}"), header)
        try:
            key = self.keys(shoe)
        except Exception as exc:  # noqa: BLE001 - the serial is not yet authenticated
            # As in _check_reference: a failing key store is this frame's unknown_shoe.
            raise _with_header(
                FrameRejected(Reason.UNKNOWN_SHOE, raw, f"key lookup for shoe {shoe} failed: {exc}"), header
            ) from None
        if key is None:
            raise _with_header(FrameRejected(Reason.UNKNOWN_SHOE, raw, f"no key for shoe {shoe}"), header)
        end = HEADER_SIZE + length
        tag = frame[end : end + TAG_SIZE]
        if not hmac.compare_digest(compute_tag(key, frame[:end]), tag):
            raise _with_header(FrameRejected(Reason.BAD_TAG, raw), header)
        direction = self.direction
        if direction is not None and (mtype & DIRECTION_BIT) != _DIRECTION_BITS[direction]:
            raise _with_header(FrameRejected(Reason.BAD_DIRECTION, raw, f"type 0x{mtype:02X}"), header)
        if window is None:
            window = self.windows.get(shoe) if direction is not None else None
            if window is None:
                window = self.window_for(shoe, mtype)
        if not (boot, seq) > (window.boot, window.seq):
            raise _with_header(
                FrameRejected(Reason.REPLAY, raw, f"({boot}, {seq}) not after ({window.boot}, {window.seq})"),
                header,
            )
        if self.auto_accept:
            window.accept(boot, seq)
        if mtype not in _KNOWN_TYPES:
            raise _with_header(FrameRejected(Reason.UNKNOWN_TYPE, raw, f"type 0x{mtype:02X}"), header)
        # Card values are opened only now: the tag proved the sealed bytes are the shoe's.
        payload = seal_payload(key, mtype, boot, seq, frame[HEADER_SIZE:end])
        fast = FAST_PAYLOADS.get(mtype)
        message = parse_fast(*fast, payload) if fast is not None else None
        if message is None:  # NEW_SHOE, or a payload that breaks a rule: construct names it
            try:
                message = parse_payload(mtype, payload)
            except PayloadError as exc:
                raise _with_header(FrameRejected(Reason.BAD_PAYLOAD, raw, str(exc)), header) from None
        self.accepted += 1
        result: Frame = object.__new__(Frame)  # as messages.make
        result.__dict__.update(header=header, message=message, payload=payload, tag=tag, raw=raw)
        return result

    def _check_reference(self, raw: bytes, window: ReplayWindow | None = None) -> Frame:
        """_check by the construct declarations alone: the reference the fast path is tested against."""
        try:
            frame = cobs.decode(raw)
        except cobs.DecodeError as exc:
            raise FrameRejected(Reason.BAD_COBS, raw, str(exc)) from None
        if len(frame) < MIN_FRAME:
            raise FrameRejected(Reason.TRUNCATED, raw, f"{len(frame)} bytes, fewer than {MIN_FRAME}")
        length = int.from_bytes(frame[HEADER_SIZE - 2 : HEADER_SIZE], "little")
        if len(frame) < MIN_FRAME + length:
            raise FrameRejected(Reason.TRUNCATED, raw, f"{len(frame)} bytes, header says {MIN_FRAME + length}")
        if len(frame) > MIN_FRAME + length or length > MAX_PAYLOAD:
            raise FrameRejected(Reason.BAD_LENGTH, raw, f"{len(frame)} bytes, length field {length}")
        try:
            ENVELOPE.parse(frame, total=len(frame))
        except ChecksumError:
            raise FrameRejected(Reason.BAD_CRC, raw) from None
        fields = HEADER_FIELDS.parse(frame[:HEADER_SIZE])
        header = FrameHeader(
            version=fields.version, type=fields.type, flags=fields.flags, shoe=fields.shoe,
            boot=fields.boot, seq=fields.seq, length=fields.length,
        )
        try:
            HEADER.parse(frame[:HEADER_SIZE])
        except ConstError:
            raise _with_header(FrameRejected(Reason.BAD_VERSION, raw, f"version {header.version}"), header) from None
        except CheckError:
            raise _with_header(FrameRejected(Reason.BAD_FLAGS, raw, f"flags 0x{header.flags:02X}"), header) from None
        try:
            key = self.keys(header.shoe)
        except Exception as exc:  # noqa: BLE001 - the serial is not yet authenticated
            # Anyone can put any serial in a header (the CRC is not keyed), so a key store
            # that fails for one serial must not stop the line or lose the frames around
            # it: no usable key means nothing is trusted, as for a shoe with no key.
            raise _with_header(
                FrameRejected(Reason.UNKNOWN_SHOE, raw, f"key lookup for shoe {header.shoe} failed: {exc}"), header
            ) from None
        if key is None:
            raise _with_header(FrameRejected(Reason.UNKNOWN_SHOE, raw, f"no key for shoe {header.shoe}"), header)
        signed = frame[: HEADER_SIZE + length]
        tag = frame[HEADER_SIZE + length : HEADER_SIZE + length + TAG_SIZE]
        if not hmac.compare_digest(compute_tag_reference(key, signed), tag):
            raise _with_header(FrameRejected(Reason.BAD_TAG, raw), header)
        if self.direction is not None and direction_of(header.type) is not self.direction:
            raise _with_header(FrameRejected(Reason.BAD_DIRECTION, raw, f"type 0x{header.type:02X}"), header)
        if window is None:
            window = self.window_for(header.shoe, header.type)
        if not window.is_new(header.boot, header.seq):
            raise _with_header(
                FrameRejected(Reason.REPLAY, raw, f"({header.boot}, {header.seq}) not after ({window.boot}, {window.seq})"),
                header,
            )
        if self.auto_accept:
            window.accept(header.boot, header.seq)
        if header.type not in MessageType._value2member_map_:
            raise _with_header(FrameRejected(Reason.UNKNOWN_TYPE, raw, f"type 0x{header.type:02X}"), header)
        # Card values are opened only now: the tag proved the sealed bytes are the shoe's.
        payload = seal_payload_reference(key, header.type, header.boot, header.seq, frame[HEADER_SIZE : HEADER_SIZE + length])
        try:
            message = parse_payload_reference(header.type, payload)
        except PayloadError as exc:
            raise _with_header(FrameRejected(Reason.BAD_PAYLOAD, raw, str(exc)), header) from None
        self.accepted += 1
        return Frame(header=header, message=message, payload=payload, tag=tag, raw=raw)


_HEADER_NAMES = tuple(f.name for f in fields(FrameHeader))
plain_dataclass(FrameHeader)
plain_dataclass(Frame)
_KNOWN_TYPES = frozenset(int(t) for t in MessageType)
_DIRECTION_BITS = {Direction.SHOE_TO_HOST: 0, Direction.HOST_TO_SHOE: DIRECTION_BIT}


def _with_header(exc: FrameRejected, header: FrameHeader) -> FrameRejected:
    exc.header = header
    return exc


def decode_frame(
    raw: bytes,
    *,
    keys: KeyLookup,
    direction: Direction | None = Direction.SHOE_TO_HOST,
    window: ReplayWindow | None = None,
    reference: bool = False,
) -> Frame:
    """Check and decode one frame given as the encoded bytes between delimiters
    (delimiters around it are tolerated). Raises FrameRejected with the SPEC 3.1 reason.
    `reference` decodes by the construct declarations alone (see Receiver).
    """
    body = bytes(raw).strip(b"\x00")
    if len(body) > MAX_ENCODED:
        raise FrameRejected(Reason.OVERSIZE, body[:MAX_ENCODED])
    if b"\x00" in body:
        raise FrameRejected(Reason.BAD_COBS, body, "delimiter inside the frame")
    rx = Receiver(keys, direction=direction)
    check = rx._check_reference if reference else rx._check
    try:
        return check(body, window=ReplayWindow(window.boot, window.seq) if window else None)
    except FrameRejected as exc:
        exc.raw = body
        raise


