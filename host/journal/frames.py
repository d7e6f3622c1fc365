"""A journaled frame checked against its own bytes with the shoe's key.

The daemon journals each accepted frame twice over: `raw` (the encoded bytes as received) and
`body` (the message it decoded from them, which replay feeds to the table core). Whoever
rebuilds a round without trusting the table (the floor, `cardshoe floor audit`, the evidence
verifier) checks that the bytes carry a valid tag under the shoe's key, and that the header
and message journaled are the ones the bytes carry: an edited body, or a body with bytes that
never came from the shoe, is refused here.
"""

from __future__ import annotations

import json
from typing import Any, Callable

__all__ = ["KeyLookup", "frame_message", "check_frame"]

KeyLookup = Callable[[int], "bytes | None"]


def frame_message(frame: Any) -> dict[str, Any]:
    """The message of an accepted `cardshoe.protocol` frame as the daemon journals it."""
    from cardshoe.protocol.messages import message_fields

    message = {"type": frame.type.name, **message_fields(frame.message)}
    if frame.type.name == "HELLO":
        message["boot"] = frame.boot  # the daemon journals a HELLO with its boot
    return message


def check_frame(shoe: int | None, boot: int | None, seq: int | None, type_: int | None, body: str,
                raw: bytes | None, keys: KeyLookup) -> str | None:
    """What is wrong with a journaled frame entry, or None when its bytes carry what it says."""
    from cardshoe.protocol.errors import FrameRejected
    from cardshoe.protocol.frames import decode_frame
    from cardshoe.protocol.spec import Direction

    if shoe is None or raw is None:
        return "a frame entry without its shoe serial or its bytes"
    key = keys(shoe)
    if key is None:
        return f"no key for shoe {shoe} to check its tag"
    try:
        frame = decode_frame(raw, keys=lambda s: key if s == shoe else None, direction=Direction.SHOE_TO_HOST)
    except FrameRejected as exc:
        return f"refused with shoe {shoe}'s key: {exc.reason.value}" + (f" ({exc.detail})" if exc.detail else "")
    if (frame.shoe, frame.boot, frame.seq, int(frame.type)) != (shoe, boot, seq, type_):
        return (f"the header journaled (shoe {shoe} boot {boot} seq {seq} type {type_}) is not the frame's "
                f"(shoe {frame.shoe} boot {frame.boot} seq {frame.seq} type {int(frame.type)})")
    try:
        journaled = json.loads(body)
    except ValueError:
        return "its body is not JSON"
    if _canon(frame_message(frame)) != _canon(journaled):
        return "the message journaled is not the one its bytes carry"
    return None


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
