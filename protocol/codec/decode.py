"""`cardshoe decode FILE|-`: the field engineer's dissector of a wire capture.

Reads a capture (raw bytes as recorded from the serial line, hex text, or the log that
pyserial's `spy://` handler writes: `cardshoe run --port 'spy:///dev/ttyACM0?file=line.log'`,
see `spylog`) and prints one JSON line per frame, in order: where it starts, what it is,
its header and fields, or the SPEC 3.1 reason it was rejected. Tags are checked with
`--key HEX` (one key for every shoe in the capture) or `--keys DIR` (the host key store,
`<dir>/<serial>.key`). Without
a key for a frame's shoe its tag cannot be checked: the line says `"result": "unverified"`
and still shows what the frame claims, never `"ok"`; its card values (card codes, deck IDs
read, barcodes, RFID UIDs, the missing-card map, the RFID manifest) are sealed (SPEC 3.5)
and shown only as `"sealed"`: a byte count, never a card. With the key they are opened,
and the cards a frame names are also given as text beside its fields: a CARD's `"card":
"Ah"` (null for no card of the deck) and `"read"` (the barcode as read), a NEW_SHOE's
manifest `"cards"`, a DECK_STATUS's `"never_dealt"`.

Both directions may be in one capture; each (shoe, direction) has its own replay window,
so a frame seen twice shows as `replay` the second time.
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import stat
import string
import struct
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from .errors import PayloadError, Reason
from .frames import Frame, Receiver, Rejection
from .messages import Card, DeckStatus, Message, NewShoe, message_fields, parse_payload
from .seal import SEALED_FROM
from .spec import FLAG_RESENT, MessageType, direction_of
from .spylog import Chunk, SpyLogError, looks_like_spy_log, parse_spy_log

#: The fields before a type's sealed card values (SPEC 3.5), readable without the key.
_CLEAR_FIELDS: dict[int, tuple[str, tuple[str, ...]]] = {
    MessageType.CARD: ("<IH", ("shoe_no", "index")),
    MessageType.DECK_STATUS: ("<IIBHHHBBBB", ("shoe_no", "deck_id", "reason", "dealt", "remaining", "integrity",
                                              "duplicates", "foreign", "unread", "missing")),
    MessageType.NEW_SHOE: ("<IIBBBB", ("shoe_no", "deck_id", "scheme", "part", "parts", "count")),
}


def clear_fields(mtype: int, payload: bytes) -> tuple[dict[str, Any], int]:
    """What a frame's payload says without the key: its fields outside the sealed card values,
    and how many bytes are sealed. Raises PayloadError when the payload is malformed."""
    start = SEALED_FROM.get(mtype)
    if start is None:
        return message_fields(parse_payload(mtype, payload)), 0
    fmt, names = _CLEAR_FIELDS[mtype]
    if len(payload) < start:
        raise PayloadError(f"{MessageType(mtype).name}: {len(payload)} bytes, fewer than its {start} clear ones")
    return dict(zip(names, struct.unpack_from(fmt, payload))), len(payload) - start

#: `0x` before a byte or at the start of a run (`0x00 0x01`, `0x0001`), never inside one.
_HEX_PREFIX = re.compile(r"(?<![0-9A-Fa-f])0[xX](?=[0-9A-Fa-f])")


class CaptureError(Exception):
    """The capture cannot be read or is not in the format asked for."""


def read_capture(data: bytes, fmt: str) -> bytes:
    """The wire bytes of a capture: `raw`, `hex` (whitespace, `:`, `0x` prefixes and `#` comments
    allowed), or `auto` (hex when the whole file is hex text, else raw)."""
    if fmt == "auto":
        fmt = "hex" if _looks_hex(data) else "raw"
    if fmt == "raw":
        return data
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise CaptureError("hex capture contains non-ASCII bytes") from None
    pieces = []
    for number, line in enumerate(text.splitlines(), start=1):
        digits = _hex_digits(line)
        bad = next((ch for ch in digits if ch not in string.hexdigits), None)
        if bad is not None:
            raise CaptureError(f"hex capture line {number}: {bad!r} is not a hex digit")
        pieces.append(digits)
    digits = "".join(pieces)
    if len(digits) % 2:
        raise CaptureError(f"hex capture has an odd number of digits ({len(digits)})")
    return bytes.fromhex(digits)


def _hex_digits(line: str) -> str:
    """A hex dump line without its comment, separators and `0x` prefixes."""
    body = line.split("#", 1)[0]
    return re.sub(r"[\s:]", "", _HEX_PREFIX.sub("", body))


def _looks_hex(data: bytes) -> bool:
    if not data.strip():
        return False
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return False
    body = "".join(_hex_digits(line) for line in text.splitlines())
    return bool(body) and all(ch in string.hexdigits for ch in body)


def key_store_lookup(directory: Path) -> Callable[[int], bytes | None]:
    """Keys from the host key store: `<dir>/<serial>.key`, 64 hex characters, mode 0600.

    The same rules as `cardshoe.keys.KeyStore` (read here, not imported, so the protocol
    package needs nothing from the daemon's): a key file that is malformed, unreadable or
    readable by others is a CaptureError, never used silently.
    """
    if not directory.is_dir():
        raise CaptureError(f"key directory {directory} does not exist")
    cache: dict[int, bytes | None] = {}

    def load(serial: int) -> bytes | None:
        path = directory / f"{serial}.key"
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CaptureError(f"key file {path}: {exc.strerror or exc}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise CaptureError(f"key file {path} is readable by others (mode {stat.S_IMODE(mode):o}); chmod 600 it")
        try:
            key = bytes.fromhex(path.read_text(encoding="ascii").strip())
        except (OSError, ValueError) as exc:
            raise CaptureError(f"key file {path} is not 64 hex characters: {exc}") from None
        if len(key) != 32:
            raise CaptureError(f"key file {path} holds {len(key)} bytes, not 32")
        return key

    def lookup(serial: int) -> bytes | None:
        if serial not in cache:
            cache[serial] = load(serial)
        return cache[serial]

    return lookup


def _header_json(header: Any) -> dict[str, Any]:
    known = header.type in MessageType._value2member_map_
    return {
        "type": header.type,
        "type_name": MessageType(header.type).name if known else None,
        "direction": "host_to_shoe" if direction_of(header.type) else "shoe_to_host",
        "flags": header.flags,
        "resent": bool(header.flags & FLAG_RESENT),
        "shoe": header.shoe,
        "boot": header.boot,
        "seq": header.seq,
        "length": header.length,
    }


def dissect(capture: bytes, keys: Callable[[int], bytes | None]) -> list[dict[str, Any]]:
    """One JSON-ready dict per frame of the capture (and one for a trailing partial frame).

    `keys(serial)` gives a shoe's key, or None: that shoe's frames are then `unverified`.
    A CaptureError from `keys` (an unusable key file) is raised once the capture is read.
    """

    key_errors: list[CaptureError] = []

    def checked_keys(serial: int) -> bytes | None:
        # The receiver treats a failing lookup as no key; the dissector names it instead.
        try:
            return keys(serial)
        except CaptureError as exc:
            key_errors.append(exc)
            raise

    rx = Receiver(checked_keys, direction=None, auto_accept=True)
    lines: list[dict[str, Any]] = []
    start = 0
    pos = 0
    while pos < len(capture):
        zero = capture.find(b"\x00", pos)
        end = len(capture) if zero < 0 else zero + 1
        for item in rx.feed(capture[pos:end]):
            lines.append(_describe(item, start))
        pos = end
        if zero >= 0:
            start = end
    if key_errors:
        raise key_errors[0]
    if rx.buffered:
        lines.append({"offset": start, "result": "incomplete",
                      "note": f"capture ends inside a frame ({rx.buffered} bytes, no closing delimiter)"})
    return lines


def _spy_chunks(data: bytes) -> list[Chunk]:
    try:
        return parse_spy_log(data)
    except SpyLogError as exc:
        raise CaptureError(str(exc)) from None


def dissect_spy_log(chunks: list[Chunk], keys: Callable[[int], bytes | None]) -> list[dict[str, Any]]:
    """The frames of a pyserial spy:// log (see spylog), each direction dissected on its own.

    Each line also says its `stream` (`rx`: read by the host, the shoe's frames; `tx`:
    written by the host) and the `time` in seconds of the read or write its first byte came
    in; `offset` counts within that stream. Lines are in the order of those reads and writes.
    """
    # Ordered by the read or write each frame's first byte came in, as the log lists them
    # (the log's times have millisecond steps: many reads share one).
    out: list[tuple[int, int, dict[str, Any]]] = []
    for order, stream in enumerate(("rx", "tx")):
        parts = [(n, c) for n, c in enumerate(chunks) if c.stream == stream]
        starts: list[int] = []
        total = 0
        for _, c in parts:
            starts.append(total)
            total += len(c.data)
        for line in dissect(b"".join(c.data for _, c in parts), keys):
            n, chunk = parts[bisect.bisect_right(starts, line["offset"]) - 1] if parts else (0, None)
            at = chunk.time if chunk is not None else 0.0
            out.append((n, order, {"stream": stream, "time": at, **line}))
    out.sort(key=lambda item: (item[0], item[1]))
    return [line for _, _, line in out]


#: SPEC 6: card code = rank index * 4 + suit, ranks 2..A, suits clubs, diamonds, hearts, spades.
_RANKS, _SUITS = "23456789TJQKA", "cdhs"


def card_text(code: int) -> str | None:
    """A card code as text ("Ah"); None for 0xFF (no card of the deck read) or any non-card."""
    return _RANKS[code >> 2] + _SUITS[code & 3] if 0 <= code < 52 else None


def card_texts(message: Message) -> dict[str, Any]:
    """The cards an opened frame names, as text beside its fields: a CARD's `card` (and what
    the reader read, `read`, when it is printable text: a barcode), a NEW_SHOE's manifest
    `cards` in order, a DECK_STATUS's `never_dealt` (its missing map) when any bit is set."""
    if isinstance(message, Card):
        out: dict[str, Any] = {"card": card_text(message.code)}
        try:
            text = message.raw.decode("ascii")
        except UnicodeDecodeError:
            text = ""
        if text and text.isprintable():
            out["read"] = text
        return out
    if isinstance(message, NewShoe) and message.entries:
        return {"cards": [card_text(e.code) for e in message.entries]}
    if isinstance(message, DeckStatus) and (message.reason == 3 or message.integrity & 8) and any(message.missing_map):
        # The map is meaningful at the end of the shoe (SPEC 5 DECK_STATUS), or with MISSING.
        bitmap = message.missing_map
        return {"never_dealt": [card_text(c) for c in range(52) if c // 8 < len(bitmap) and bitmap[c // 8] >> (c % 8) & 1]}
    return {}


def _describe(item: Frame | Rejection, offset: int) -> dict[str, Any]:
    if isinstance(item, Frame):
        out: dict[str, Any] = {"offset": offset, "result": "ok", "tag": "verified"}
        out.update(_header_json(item.header))
        out["fields"] = message_fields(item.message)
        out.update(card_texts(item.message))  # beside the fields: the codes stay as the wire has them
        out["raw"] = item.raw.hex()
        return out
    out = {"offset": offset, "result": item.reason.value}
    header = item.header
    if item.reason is Reason.UNKNOWN_SHOE and header is not None:
        # No key: show what the frame claims, and say plainly that nothing vouches for it.
        out = {"offset": offset, "result": "unverified", "tag": "unverified",
               "note": f"no key for shoe {header.shoe}: tag not checked, nothing here is authenticated"}
        out.update(_header_json(header))
        try:
            frame_payload = _payload_of(item.raw, header.length)
            out["fields"], sealed = clear_fields(header.type, frame_payload)
            if sealed:
                out["sealed"] = f"{sealed} bytes of card values, sealed: no key to open them"
        except PayloadError as exc:
            out["payload_error"] = str(exc)
    else:
        if header is not None:
            out.update(_header_json(header))
            out["tag"] = "bad" if item.reason is Reason.BAD_TAG else (
                "not checked" if item.reason in (Reason.BAD_VERSION, Reason.BAD_FLAGS) else "verified")
        if item.detail:
            out["detail"] = item.detail
    out["raw"] = item.raw.hex()
    return out


def _payload_of(raw: bytes, length: int) -> bytes:
    from cobs import cobs

    frame = cobs.decode(raw)
    return bytes(frame[17 : 17 + length])


def main(argv: Sequence[str] | None = None) -> int:
    """Dissect a capture into JSON lines; returns 0, 1 when the capture holds no valid frame
    (empty, or only rejected bytes), or 2 when the input cannot be read."""
    parser = argparse.ArgumentParser(prog="cardshoe decode", description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", help="capture file, or - for standard input")
    parser.add_argument("--format", choices=["auto", "raw", "hex", "spy"], default="auto",
                        help="raw bytes, hex text, or the log of pyserial's spy:// handler (default: auto-detect)")
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument("--key", help="the shoe key as 64 hex characters, used for every shoe")
    keys.add_argument("--keys", type=Path, metavar="DIR", help="key store directory of <serial>.key files")
    args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    try:
        if args.capture == "-":
            data = sys.stdin.buffer.read()
        else:
            data = Path(args.capture).read_bytes()
        single_key = None
        if args.key is not None:
            try:
                single_key = bytes.fromhex(args.key)
            except ValueError:
                raise CaptureError("--key is not hex") from None
            if len(single_key) != 32:
                raise CaptureError(f"--key holds {len(single_key)} bytes, not 32 (64 hex characters)")
        spy = args.format == "spy" or (args.format == "auto" and looks_like_spy_log(data))
        chunks = _spy_chunks(data) if spy else []
        capture = b"".join(c.data for c in chunks) if spy else read_capture(data, args.format)
        if single_key is not None:
            key = single_key
            keys_for: Callable[[int], bytes | None] = lambda serial: key
        elif args.keys is not None:
            keys_for = key_store_lookup(args.keys)
        else:
            keys_for = lambda serial: None
        lines = dissect_spy_log(chunks, keys_for) if spy else dissect(capture, keys_for)
    except OSError as exc:
        print(f"cardshoe decode: cannot read {args.capture}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except CaptureError as exc:
        print(f"cardshoe decode: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        print(json.dumps(line, ensure_ascii=False))
    # A capture with nothing in it that is a frame is not a success (exit 1, one line why):
    # an empty file or line noise usually means the wrong file, port or format.
    if not capture:
        print(f"cardshoe decode: {args.capture}: the capture is empty", file=sys.stderr)
        return 1
    if not any(line.get("result") in ("ok", "unverified") for line in lines):
        print(f"cardshoe decode: {args.capture}: no valid frame in {len(capture)} bytes "
              f"({len(lines)} rejected or incomplete)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
