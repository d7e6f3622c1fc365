"""Garbage, truncated, oversize and corrupted input: neither decoder crashes, neither buffer
grows beyond MAX_ENCODED, and the two decoders give the same results for the same bytes."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol_helpers import feed_command, run_firmware_micropython
from protocol_strategies import frame_flags, host_messages, shoe_messages
from cardshoe.protocol import (
    MAX_ENCODED, Direction, Frame, Message, Receiver, Rejection, encode_frame, encode_raw_frame,
)

KEY = bytes(range(7, 39))
SERIAL = 31337
HEADER_KNOWN = {"bad_version", "bad_flags", "unknown_shoe", "bad_tag", "bad_direction", "replay",
                "unknown_type", "bad_payload"}


def keys(serial: int) -> bytes | None:
    return KEY if serial == SERIAL else None


@st.composite
def frame_bytes(draw: st.DrawFn, messages: st.SearchStrategy[Message]) -> bytes:
    """A valid frame (or, sometimes, of an unknown type or another shoe or key)."""
    kind = draw(st.integers(0, 9))
    boot, seq = draw(st.integers(0, 3)), draw(st.integers(0, 6))
    if kind == 0:
        return encode_raw_frame(draw(st.integers(0, 255)), draw(st.binary(max_size=227 if draw(st.booleans()) else 40)),
                                key=KEY, shoe=SERIAL, boot=boot, seq=seq, flags=draw(st.integers(0, 255)) & ~0x0E)
    if kind == 1:
        return encode_frame(draw(messages), key=draw(st.sampled_from([KEY, bytes(32)])),
                            shoe=draw(st.sampled_from([SERIAL, 1])), boot=boot, seq=seq)
    return encode_frame(draw(messages), key=KEY, shoe=SERIAL, boot=boot, seq=seq, flags=draw(frame_flags))


@st.composite
def mutated(draw: st.DrawFn, messages: st.SearchStrategy[Message]) -> bytes:
    """Frames and noise, then bit flips, cuts, insertions and deletions."""
    pieces = draw(st.lists(st.one_of(frame_bytes(messages), st.binary(max_size=40),
                                     st.binary(min_size=250, max_size=700).map(lambda b: b.replace(b"\x00", b"\x01"))),
                           min_size=1, max_size=6))
    data = bytearray(b"".join(pieces))
    for _ in range(draw(st.integers(0, 4))):
        if not data:
            break
        op = draw(st.integers(0, 3))
        at = draw(st.integers(0, len(data) - 1))
        if op == 0:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == 1:
            del data[at : at + draw(st.integers(1, 30))]
        elif op == 2:
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            data = data[:at]
    return bytes(data)


def host_results(data: bytes, direction: Direction, chunks: list[int] | None = None) -> tuple[list[Any], Receiver]:
    rx = Receiver(keys, direction=direction, auto_accept=True)
    out: list[Any] = []
    pos = 0
    sizes = chunks or [len(data) or 1]
    i = 0
    while pos < len(data):
        size = max(1, sizes[i % len(sizes)])
        for r in rx.feed(data[pos : pos + size]):
            assert rx.buffered <= MAX_ENCODED
            if isinstance(r, Frame):
                out.append(["ok", r.type, r.flags, r.boot, r.seq, r.payload.hex()])
            elif r.reason.value in HEADER_KNOWN:
                assert r.header is not None
                out.append([r.reason.value, r.header.type, r.header.flags, r.header.boot, r.header.seq])
            else:
                out.append([r.reason.value])
        pos += size
        i += 1
    assert rx.high_water <= MAX_ENCODED and rx.capacity == MAX_ENCODED
    return out, rx


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.binary(max_size=3000), mutated(shoe_messages)), st.lists(st.integers(1, 300), min_size=1, max_size=5))
def test_host_receiver_survives_anything(data: bytes, chunks: list[int]) -> None:
    whole, _ = host_results(data, Direction.SHOE_TO_HOST)
    pieces, _ = host_results(data, Direction.SHOE_TO_HOST, chunks)
    assert pieces == whole  # chunking never changes the outcome


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=MAX_ENCODED + 1, max_size=5000).map(lambda b: b.replace(b"\x00", b"\x02")))
def test_oversize_run_is_one_rejection_and_bounded(run: bytes) -> None:
    results, rx = host_results(b"\x00" + run + b"\x00", Direction.SHOE_TO_HOST, [97])
    assert results == [["oversize"]]
    assert rx.high_water == MAX_ENCODED and rx.buffered == 0


def _differential(streams: list[bytes], receiver: str) -> None:
    direction = Direction.SHOE_TO_HOST if receiver == "host" else Direction.HOST_TO_SHOE
    commands = [f"K {KEY.hex()} {SERIAL}"] + [
        feed_command(f"s{i}", receiver, 0, 0, data, chunk=61) for i, data in enumerate(streams)
    ]
    answers = run_firmware_micropython(commands)[1:]
    for data, answer in zip(streams, answers):
        want, rx = host_results(data, direction)
        got = [r[:6] for r in answer["results"]]
        assert got == want, data.hex()
        assert answer["buffered"] == rx.buffered
        assert answer["high_water"] <= MAX_ENCODED


diff_settings = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                                 HealthCheck.data_too_large])


@diff_settings
@given(st.lists(st.one_of(mutated(shoe_messages), st.binary(max_size=600)), min_size=30, max_size=30))
def test_firmware_and_host_agree_on_shoe_frames(streams: list[bytes]) -> None:
    _differential(streams, "host")


@diff_settings
@given(st.lists(st.one_of(mutated(host_messages), st.binary(max_size=600)), min_size=30, max_size=30))
def test_firmware_and_host_agree_on_host_frames(streams: list[bytes]) -> None:
    _differential(streams, "shoe")
