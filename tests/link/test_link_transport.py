"""The serial transport over a real pseudo-terminal: bytes both ways, unplug and replug."""

from __future__ import annotations

import queue
import time
from pathlib import Path

from cardshoe.link.transport import LinkState, SerialTransport

from link_ptys import PluggablePty


def _wait(q: "queue.Queue[object]", timeout: float = 5.0) -> object:
    return q.get(timeout=timeout)


def test_bytes_flow_both_ways_and_unplug_replug_is_reported(tmp_path: Path) -> None:
    pty = PluggablePty(tmp_path / "tty")
    received: queue.Queue[bytes] = queue.Queue()
    states: queue.Queue[LinkState] = queue.Queue()
    transport = SerialTransport(str(pty.path), received.put, states.put, backoff_max_s=0.2)
    transport.start()
    try:
        up = _wait(states)
        assert isinstance(up, LinkState) and up.up
        pty.write(b"\x00hello\x00")
        got = b""
        while len(got) < 7:
            got += received.get(timeout=5)
        assert got == b"\x00hello\x00"
        assert transport.write(b"to-shoe")
        echo = b""
        deadline = time.monotonic() + 5
        while len(echo) < 7 and time.monotonic() < deadline:
            echo += pty.read(0.2)
        assert echo == b"to-shoe"

        pty.unplug()
        down = _wait(states)
        assert isinstance(down, LinkState) and not down.up and "lost" in down.detail
        assert not transport.write(b"nobody")
        pty.replug()
        back = _wait(states)
        assert isinstance(back, LinkState) and back.up and back.t_ns >= down.t_ns
        assert transport.reconnects == 1
        pty.write(b"again")
        got = b""
        while len(got) < 5:
            got += received.get(timeout=5)
        assert got == b"again"
    finally:
        transport.stop()
        pty.close()


def test_loop_url_is_a_transport_too() -> None:
    received: queue.Queue[bytes] = queue.Queue()
    states: queue.Queue[LinkState] = queue.Queue()
    transport = SerialTransport("loop://", received.put, states.put)
    transport.start()
    try:
        assert isinstance(_wait(states), LinkState)
        assert transport.write(b"abc")
        got = b""
        while len(got) < 3:
            got += received.get(timeout=5)
        assert got == b"abc"
    finally:
        transport.stop()
