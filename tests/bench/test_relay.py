"""The fault relay over real pseudo-terminals: clean passage, each fault, and the device vanishing."""

from __future__ import annotations

import os
import random
import time
import tty
from pathlib import Path
from typing import Iterator

import pytest

from cardshoe.hil.relay import FaultRelay, LineFaults


class Upstream:
    """A stand-in for the board's serial device: a pty whose slave path the relay opens."""

    def __init__(self, link: Path) -> None:
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.device = os.ttyname(slave)
        os.close(slave)
        os.symlink(self.device, link)
        self.link = link

    def close(self) -> None:
        self.link.unlink()
        os.close(self.master)


def _read(fd: int, n: int, timeout: float = 5.0) -> bytes:
    os.set_blocking(fd, False)
    out = b""
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        try:
            out += os.read(fd, 4096)
        except BlockingIOError:
            time.sleep(0.01)
    return out


def _wait(pred, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[tuple[Upstream, Path]]:
    up = Upstream(tmp_path / "board-tty")
    yield up, tmp_path / "relay-tty"
    try:
        up.close()
    except OSError:
        pass


def _open(link: Path) -> int:
    _wait(link.exists)
    fd = os.open(link, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    return fd


def test_without_faults_every_byte_passes_both_ways(rig: tuple[Upstream, Path]) -> None:
    up, link = rig
    relay = FaultRelay(up.link, link, LineFaults(), random.Random(1))
    try:
        host = _open(link)
        data = bytes(range(256)) * 4
        os.write(up.master, data)
        assert _read(host, len(data)) == data
        os.write(host, data[::-1])
        assert _read(up.master, len(data)) == data[::-1]
        os.close(host)
    finally:
        relay.close()
    assert not link.exists()


def test_dropped_frames_lose_whole_frames_and_keep_the_delimiters(rig: tuple[Upstream, Path]) -> None:
    up, link = rig
    relay = FaultRelay(up.link, link, LineFaults(drop_frames=0.5, directions="to_host"), random.Random(3))
    try:
        host = _open(link)
        frames = [bytes([0]) + bytes([i + 1]) * 10 for i in range(40)] + [b"\x00"]
        os.write(up.master, b"".join(frames))
        got = _read(host, 41 + 10 * (40 - relay.counts.dropped_frames), timeout=2.0)
        kept = [p for p in got.split(b"\x00") if p]
        assert got.count(b"\x00") == 41
        assert all(len(p) == 10 and len(set(p)) == 1 for p in kept), "a frame is lost whole or kept whole"
        assert 0 < relay.counts.dropped_frames < 40
        assert len(kept) == 40 - relay.counts.dropped_frames
        os.close(host)
    finally:
        relay.close()


def test_corruption_flips_one_bit_in_the_bytes_it_hits(rig: tuple[Upstream, Path]) -> None:
    up, link = rig
    relay = FaultRelay(up.link, link, LineFaults(corrupt=0.1), random.Random(5))
    try:
        host = _open(link)
        data = bytes(2000)
        os.write(up.master, data)
        got = _read(host, len(data))
        assert len(got) == len(data)
        changed = [b for b in got if b]
        assert len(changed) == relay.counts.corrupted_bytes > 100
        assert all(bin(b).count("1") == 1 for b in changed)
        os.close(host)
    finally:
        relay.close()


def test_a_garbage_burst_reaches_the_host_between_frames(rig: tuple[Upstream, Path]) -> None:
    up, link = rig
    relay = FaultRelay(up.link, link, LineFaults(), random.Random(1))
    try:
        host = _open(link)
        _wait(lambda: relay.connected)
        relay.garbage(b"\xAA" * 50)
        assert _read(host, 50) == b"\xAA" * 50
        assert relay.counts.garbage_bytes == 50
        os.close(host)
    finally:
        relay.close()


def test_when_the_board_vanishes_so_does_the_relay_device_and_both_come_back(rig: tuple[Upstream, Path]) -> None:
    up, link = rig
    relay = FaultRelay(up.link, link, LineFaults(), random.Random(1))
    try:
        _wait(link.exists)
        up.close()  # unplug: the board's device is gone
        _wait(lambda: not link.exists())
        up2 = Upstream(up.link)  # replug, as a new /dev/pts/N
        _wait(link.exists)
        host = _open(link)
        os.write(up2.master, b"hello")
        assert _read(host, 5) == b"hello"
        assert relay.counts.disconnects == 1
        os.close(host)
        up2.close()
    finally:
        relay.close()


def test_rates_outside_0_1_are_refused() -> None:
    with pytest.raises(ValueError, match="corrupt"):
        LineFaults(corrupt=1.5)
    with pytest.raises(ValueError, match="directions"):
        LineFaults(directions="sideways")
