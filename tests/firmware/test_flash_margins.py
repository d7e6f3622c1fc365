"""`cardshoe flash`'s margins (issue 26, item 6), seen on an emulated Pico, slower than a real one.

- Its probe for a streaming shoe listens for two heartbeat periods (4.5 s): a 2.5 s probe
  missed the 2 s heartbeat once. A board at its REPL answers the probe's carriage return
  with its prompt, and the probe ends at once (no wait for a board that is not a shoe).
- Its first mpremote contact is tried again while the board's raw REPL does not answer yet
  (straight after `cardshoe maintenance`, it failed once with "could not enter raw repl"
  and worked two seconds later).
- It says where the code goes: a ROMFS image, or .mpy files on the flash, and why
  (tests/firmware/test_flashing.py checks the lines of a board with and without ROMFS).
"""

from __future__ import annotations

import os
import threading
import time
import tty
from pathlib import Path

import pytest

from cardshoe import flashing
from cardshoe import protocol as P
from cardshoe.keys import KeyStore

SERIAL = 7001


def _pty_shoe(delay: float, frames: bytes, reply_to_cr: bytes = b"",
              stop: threading.Event | None = None) -> tuple[str, threading.Thread, list[int]]:
    """A pty whose far end writes `frames` after `delay` s, and `reply_to_cr` when it reads a CR."""
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    keep = [master, slave]
    stop = stop or threading.Event()

    def run() -> None:
        start = time.monotonic()
        sent = False
        while time.monotonic() - start < delay + 3 and not stop.is_set():
            if not sent and time.monotonic() - start >= delay:
                os.write(master, frames)
                sent = True
            import select

            if select.select([master], [], [], 0.05)[0]:
                data = os.read(master, 256)
                if b"\r" in data and reply_to_cr:
                    os.write(master, reply_to_cr)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return path, thread, keep


def test_the_probe_hears_a_shoe_whose_heartbeat_comes_after_one_period(tmp_path: Path) -> None:
    keys = KeyStore(tmp_path / "keys")
    key = keys.create(SERIAL)
    # One heartbeat missed (noise, a slow board): the next, 3 s in. The 2.5 s probe said
    # "not streaming" and mpremote then timed out on the shoe after two minutes.
    heartbeat = P.encode_frame(P.Heartbeat(60_000, 0, 0), key=key, shoe=SERIAL, boot=3, seq=9)
    path, thread, fds = _pty_shoe(3.0, heartbeat)
    try:
        started = time.monotonic()
        assert flashing.streaming_shoe(path, keys) == SERIAL
        assert 2.9 < time.monotonic() - started < flashing.PROBE_S
    finally:
        thread.join()
        for fd in fds:
            os.close(fd)


def test_the_probe_ends_at_once_at_a_repl(tmp_path: Path) -> None:
    keys = KeyStore(tmp_path / "keys")
    stop = threading.Event()
    path, thread, fds = _pty_shoe(60.0, b"", reply_to_cr=b"\r\n>>> ", stop=stop)
    try:
        started = time.monotonic()
        assert flashing.streaming_shoe(path, keys) is None
        assert time.monotonic() - started < 1.5
    finally:
        stop.set()
        thread.join()
        for fd in fds:
            os.close(fd)


# A main.py that keeps the REPL away for a while (Ctrl-C off, as the firmware's boot has it)
# and then ends there: a board on its way to the REPL, as after `cardshoe maintenance`.
SLOW_TO_THE_REPL = b"""
import micropython, time
micropython.kbd_intr(-1)
time.sleep(20)  # longer than the probe (4.5 s) and mpremote's own wait for the raw REPL (about 12 s)
micropython.kbd_intr(3)
"""


def test_flash_waits_for_the_raw_repl_with_retries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vboard = pytest.importorskip("cardshoe.hil.vboard")
    with vboard.VirtualBoard(tmp_path / "vb") as vb:
        vb.flash.create()
        vb.flash.write("/main.py", SLOW_TO_THE_REPL)
        vb.power_on()
        rc = flashing.main(["--port", str(vb.tty_path), "--serial", "7002", "--keys", str(tmp_path / "keys")])
        out = capsys.readouterr()
    assert rc == 0, out.err
    assert "raw REPL did not answer" in out.out and "trying again" in out.out, out.out
    assert "verified: shoe 7002" in out.out
