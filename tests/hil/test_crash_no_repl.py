"""Never the REPL after a crash (issue 26, item 3), on the virtual board.

The board behaves as a Pico does after main.py ends: its REPL reads the USB line (0x01 the
raw REPL, 0x04 runs what came since, 0x05 paste mode; the board's own `-i`). On main at
60da493 an exception out of the firmware left the shoe there until the watchdog fired (8 s),
and whoever was on the cable could type into it: a raw-REPL sequence sent after the crash
made the board write a file. Now main.py writes the crash record and resets at once
(machine.reset(): the board restarts main.py with reset cause 4, the shoe's HELLO says 6),
so the same bytes reach only the next boot's link, as noise.

A firmware fault is put in on purpose (tests/firmware_faults.py): CONFIG raises, as a bug
would. The boot variant (a module the flash lost) is tests/hil/test_boot_guard.py.
"""

from __future__ import annotations

import os
import select
import time
import tty
from pathlib import Path

from cardshoe import protocol as P
from cardshoe.hil.provision import provision_offline
from cardshoe.hil.vboard import VirtualBoard
from firmware_faults import crashing_build

SERIAL = 0x5EED
# What someone on the cable types after the crash: the raw REPL (what mpremote does), a
# line for the friendly REPL, and paste mode; each would leave a file on the flash.
INJECT = (b"\r\x03\x03\x01"
          b"f=open('marker_raw','w');f.write('x');f.close()\x04"
          b"\x02\r\nopen('marker_line','w').close()\r\n"
          b"\x05open('marker_paste','w').close()\r\n\x04\r\n")


class Line:
    """The host end of the board's USB serial, reopened when the board re-enumerates."""

    def __init__(self, board: VirtualBoard, key: bytes) -> None:
        self.board = board
        self.fd = -1
        self.rx = P.Receiver(keys=lambda s: key if s == SERIAL else None, direction=P.Direction.SHOE_TO_HOST)
        self.frames: list[P.Frame] = []

    def _open(self) -> bool:
        if self.fd >= 0:
            return True
        try:
            self.fd = os.open(self.board.tty_path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            return False
        tty.setraw(self.fd)
        return True

    def _drop(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.fd = -1

    def write(self, data: bytes) -> None:
        if self._open():
            try:
                os.write(self.fd, data)
            except OSError:
                self._drop()

    def pump(self, timeout: float) -> None:
        if not self._open():
            time.sleep(timeout)
            return
        if select.select([self.fd], [], [], timeout)[0]:
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                data = b""
            if not data:
                self._drop()
                return
            self.frames += [f for f in self.rx.feed(data) if isinstance(f, P.Frame)]

    def wait(self, pred, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
        end = time.monotonic() + timeout
        while not pred():
            assert time.monotonic() < end, f"{what}: not within {timeout}s; {self.board.transcript()[-600:]!r}"
            self.pump(0.05)

    def close(self) -> None:
        self._drop()


def test_raw_repl_bytes_sent_after_a_crash_execute_nothing(board: VirtualBoard, tmp_path: Path) -> None:
    provision_offline(board, tmp_path / "keys", SERIAL, tmp_path / "build")
    crashing = crashing_build(tmp_path / "crashing", "CONFIG", "RuntimeError")
    board.flash.write("/app/commands.mpy", (crashing.root / "app" / "commands.mpy").read_bytes())
    key = bytes.fromhex((tmp_path / "keys" / f"{SERIAL}.key").read_text().strip())
    board.power_on()
    line = Line(board, key)
    try:
        line.wait(lambda: any(isinstance(f.message, P.Hello) for f in line.frames), 30, "HELLO")
        config = P.Config(heartbeat_ms=2000, resend_ms=300, resend_max_ms=5000, debounce_ms=5)
        line.write(P.encode_frame(config, key=key, shoe=SERIAL, boot=1, seq=1))
        # From the crash on, for 4 s (half the watchdog's 8 s), again and again.
        end = time.monotonic() + 4.0
        while time.monotonic() < end:
            line.write(INJECT)
            line.pump(0.02)
        line.wait(lambda: any(isinstance(f.message, P.Crash) for f in line.frames), 30, "the next boot's CRASH")
        hello = [f.message for f in line.frames if isinstance(f.message, P.Hello)][-1]
        crash = next(f.message for f in line.frames if isinstance(f.message, P.Crash))
    finally:
        line.close()
    assert hello.reset_cause == P.ResetCause.CRASH
    assert (crash.where, crash.cmd_type, crash.cmd_seq, crash.count) == (2, P.MessageType.CONFIG, 1, 1)
    assert board.watchdog_resets == 0 and board.boots >= 2  # reset by the firmware, at once
    board.power_off()
    names = {e.name for e in board.flash.listdir("/")}
    assert not {n for n in names if n.startswith("marker")}, names
    assert b'Type "help()"' not in board.transcript() and b"raw REPL" not in board.transcript()
