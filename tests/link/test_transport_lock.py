"""The serial transport locks its device: two daemons never share one shoe (issue 16).

host/link/transport.py: a device path is opened exclusively (flock), so a second daemon
started on the same shoe by mistake cannot open it (two journals acknowledging one shoe's
frames would each lose the other's cards) and waits; it takes the port once the first lets
it go. Over a real pseudo-terminal. Kills: the exclusive open dropped (scripts/mutations.toml).
"""

from __future__ import annotations

import queue
import time
from pathlib import Path

from cardshoe.link.transport import LinkState, SerialTransport

from link_ptys import PluggablePty


def test_a_second_transport_cannot_open_a_shoe_already_open(tmp_path: Path) -> None:
    pty = PluggablePty(tmp_path / "tty")
    states_a: queue.Queue[LinkState] = queue.Queue()
    states_b: queue.Queue[LinkState] = queue.Queue()
    a = SerialTransport(str(pty.path), lambda data: None, states_a.put, backoff_max_s=0.1)
    b = SerialTransport(str(pty.path), lambda data: None, states_b.put, backoff_max_s=0.1)
    a.start()
    try:
        assert states_a.get(timeout=10).up
        b.start()
        end = time.monotonic() + 1.0  # several of b's retries (every 0.1 s at most)
        while time.monotonic() < end:
            assert not b.connected, "a second transport opened a port the first holds"
            time.sleep(0.05)
        # b may report the port it cannot open (a down state naming why: the daemon's
        # port_unavailable alarm), never an up one.
        while not states_b.empty():
            assert not states_b.get_nowait().up, "a second transport reported the held port up"
        a.stop()
        end = time.monotonic() + 10
        while True:
            state = states_b.get(timeout=max(0.1, end - time.monotonic()))
            if state.up:
                break
        assert b.connected
    finally:
        a.stop()
        b.stop()
        pty.close()
