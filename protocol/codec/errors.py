"""Exception types of the wire codec, and the rejection reasons of SPEC section 3.1."""

from __future__ import annotations

import enum


class Reason(str, enum.Enum):
    """Why a receiver rejected a frame: exactly the strings of SPEC section 3.1, in check order."""

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

    def __str__(self) -> str:
        return self.value


class ProtocolError(Exception):
    """Base of every error raised by the wire codec."""


class PayloadError(ProtocolError, ValueError):
    """A payload that does not fit its message type (building or parsing)."""


class FrameError(ProtocolError, ValueError):
    """A frame that cannot be encoded as asked (e.g. payload longer than MAX_PAYLOAD)."""


class FrameRejected(ProtocolError):
    """A received frame was rejected; `reason` is the SPEC section 3.1 reason."""

    def __init__(self, reason: Reason, raw: bytes, detail: str = "") -> None:
        super().__init__(f"{reason.value}: {detail}" if detail else reason.value)
        self.reason = reason
        self.raw = raw
        self.detail = detail
        self.header: object | None = None
        """The FrameHeader, when the CRC was good enough to read one."""
