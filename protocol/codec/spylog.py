"""Captures of the serial line written by pyserial's `spy://` URL handler.

`cardshoe run --port 'spy:///dev/ttyACM0?file=line.log'` has pyserial log every read and
write of the daemon's port (serial/urlhandler/protocol_spy.py, its default hex dump
format), one line per 16 bytes:

    000003.001 TX   0000  48 45 4C 4C 4F                                    HELLO
    000003.102 RX   0000  48 45 4C 4C 4F 20 57 4F  52 4C 44                 HELLO WORLD

seconds since the port was opened, RX (read by the host: the shoe's frames) or TX
(written by the host), the offset within that read or write, up to 16 bytes in hex in a
49-character field, and their ASCII. Control lines (`Q-RX`, `BRK`, `RTS` ...) and
`RX <empty>` carry no bytes and are skipped; the `color` option's escape codes are removed.
The `raw` option's format (bytes of both directions interleaved, no labels) cannot be
separated by direction and is not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SpyLogError", "Chunk", "looks_like_spy_log", "parse_spy_log"]

_LINE = re.compile(r"(\d+\.\d{3}) (.{4}) (.*)")
_DATA = re.compile(r"([0-9A-F]{4,})  (.*)")
_COLOR = re.compile(r"\x1b\[[0-9;]*m")
_HEX_FIELD = 16 * 3 + 1  # 16 bytes "XX " and one space after the eighth
_BYTE = re.compile(r"[0-9A-F]{2}")


class SpyLogError(ValueError):
    """A line of the log is not in pyserial's spy hex dump format."""


@dataclass(frozen=True)
class Chunk:
    """The bytes of one read (``rx``) or write (``tx``) of the port, at ``time`` seconds."""

    time: float
    stream: str
    data: bytes


def looks_like_spy_log(data: bytes) -> bool:
    """Whether `data` starts like a spy hex dump (its first non-empty line)."""
    for raw in data[:4096].splitlines():
        text = _COLOR.sub("", raw.decode("ascii", "replace")).strip("\r")
        if text.strip():
            match = _LINE.fullmatch(text)
            return match is not None
    return False


def parse_spy_log(data: bytes) -> list[Chunk]:
    """The reads and writes of a spy log, in order; SpyLogError names a line it cannot read."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as exc:
        raise SpyLogError(f"spy log: byte 0x{data[exc.start]:02x} at offset {exc.start} is not ASCII") from None
    chunks: list[Chunk] = []
    current: tuple[float, str, bytearray] | None = None
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = _COLOR.sub("", raw_line).rstrip("\r")
        if not line.strip():
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise SpyLogError(f"spy log line {number}: not 'SECONDS LABEL ...' as pyserial's spy:// writes")
        seconds, label, rest = float(match.group(1)), match.group(2).strip(), match.group(3)
        if label not in ("RX", "TX"):
            continue  # a control line: no bytes
        data_match = _DATA.fullmatch(rest.lstrip(" "))
        if data_match is None:
            if rest.strip() == "<empty>":
                continue
            raise SpyLogError(f"spy log line {number}: {label} without an offset and hex bytes")
        offset = int(data_match.group(1), 16)
        field = data_match.group(2)[:_HEX_FIELD]
        tokens = field.split()
        if not tokens or not all(_BYTE.fullmatch(t) for t in tokens) or len(tokens) > 16:
            raise SpyLogError(f"spy log line {number}: {field.strip()!r} is not 1 to 16 hex bytes")
        stream = label.lower()
        if offset == 0 or current is None or current[1] != stream:
            if current is not None:
                chunks.append(Chunk(current[0], current[1], bytes(current[2])))
            current = (seconds, stream, bytearray())
        elif offset != len(current[2]):
            raise SpyLogError(f"spy log line {number}: offset {offset:04X} does not follow "
                              f"{len(current[2]):04X} (a line is missing)")
        current[2].extend(bytes.fromhex("".join(tokens)))
    if current is not None:
        chunks.append(Chunk(current[0], current[1], bytes(current[2])))
    return chunks
