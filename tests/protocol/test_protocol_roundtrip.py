"""Random messages encoded by one codec and decoded by the other, in both directions, across
the two interpreters: construct under CPython, wire.py under the real micropython."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol_helpers import feed_command, run_firmware_micropython
from protocol_strategies import frame_flags, host_messages, shoe_messages, u32
from cardshoe.protocol import (
    Direction, Frame, Message, NewShoe, Receiver, build_payload, encode_frame, message_fields,
)

KEY = bytes(range(100, 132))
SERIAL = 77001
BATCH = 40

cross = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def keys(serial: int) -> bytes | None:
    return KEY if serial == SERIAL else None


@cross
@given(st.lists(st.tuples(host_messages, u32, frame_flags), min_size=BATCH, max_size=BATCH))
def test_host_encodes_firmware_decodes(batch: list[tuple[Message, int, int]]) -> None:
    commands = [f"K {KEY.hex()} {SERIAL}"]
    stream = b""
    for seq, (message, epoch, flags) in enumerate(batch, start=1):
        wire = encode_frame(message, key=KEY, shoe=SERIAL, boot=epoch, seq=seq, flags=flags)
        commands.append(feed_command(f"m{seq}", "shoe", 0, 0, wire))
        stream += encode_frame(message, key=KEY, shoe=SERIAL, boot=1, seq=seq, flags=flags)
    commands.append(feed_command("all", "shoe", 0, 0, stream))
    answers = run_firmware_micropython(commands)[1:]
    for (message, epoch, flags), answer in zip(batch, answers):
        (result,) = answer["results"]
        assert result[0] == "ok", (message, result)
        assert result[1:5] == [message.TYPE, flags, epoch, answer_seq(answer)]
        assert result[5] == build_payload(message).hex()
        assert result[6] == firmware_fields(message)
    assert [r[0] for r in answers[-1]["results"]] == ["ok"] * BATCH
    assert answers[-1]["window"] == [1, BATCH]


def answer_seq(answer: dict) -> int:  # type: ignore[type-arg]
    return int(answer["name"][1:])


def firmware_fields(message: Message) -> list:  # type: ignore[type-arg]
    """The message's fields in the order the firmware's unpackers give them."""
    values = message_fields(message)
    if isinstance(message, NewShoe):
        entries = values.pop("entries")
        return list(values.values()) + [[[e["code"], e["uid"]] for e in entries]]
    return list(values.values())


@cross
@given(st.lists(st.tuples(shoe_messages, u32, frame_flags), min_size=BATCH, max_size=BATCH))
def test_firmware_encodes_host_decodes(batch: list[tuple[Message, int, int]]) -> None:
    commands = [f"K {KEY.hex()} {SERIAL}"]
    for seq, (message, boot, flags) in enumerate(batch, start=1):
        args = []
        for f in dataclasses.fields(message):
            value = getattr(message, f.name)
            args.append(f"x{value.hex()}" if isinstance(value, bytes) else str(value))
        commands.append(f"S {message.TYPE} {flags} {boot} {seq} " + " ".join(args))
    answers = run_firmware_micropython(commands)[1:]
    for seq, ((message, boot, flags), wire_hex) in enumerate(zip(batch, answers), start=1):
        rx = Receiver(keys, direction=Direction.SHOE_TO_HOST)
        (frame,) = rx.feed(bytes.fromhex(wire_hex))
        assert isinstance(frame, Frame), frame
        assert frame.message == message
        assert (frame.boot, frame.seq, frame.flags, frame.shoe) == (boot, seq, flags, SERIAL)
        # And byte for byte what the host's encoder makes.
        assert wire_hex == encode_frame(message, key=KEY, shoe=SERIAL, boot=boot, seq=seq, flags=flags).hex()


def test_a_failing_key_lookup_is_unknown_shoe_and_loses_nothing() -> None:
    """The serial in a header is not authenticated, so a key store that raises for one serial
    (a bad key file) must not stop the receiver or lose the frames around that one."""
    from cardshoe.protocol import Heartbeat, Rejection

    def flaky(serial: int) -> bytes | None:
        if serial == 666:
            raise OSError("permission denied: 666.key")
        return keys(serial)

    rx = Receiver(flaky, direction=Direction.SHOE_TO_HOST, auto_accept=True)
    stream = (encode_frame(Heartbeat(1, 2, 3), key=KEY, shoe=SERIAL, boot=1, seq=1)
              + encode_frame(Heartbeat(1, 2, 3), key=KEY, shoe=666, boot=1, seq=2)
              + encode_frame(Heartbeat(1, 2, 3), key=KEY, shoe=SERIAL, boot=1, seq=3))
    first, bad, last = rx.feed(stream)
    assert isinstance(first, Frame) and first.seq == 1
    assert isinstance(bad, Rejection) and bad.reason.value == "unknown_shoe" and "666.key" in bad.detail
    assert isinstance(last, Frame) and last.seq == 3
    assert rx.buffered == 0
