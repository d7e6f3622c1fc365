"""Every boot step under the watchdog, and the deliberate ways to the REPL (issue 9, item 1),
on the virtual board (the real firmware; its watchdog is the board's `machine.WDT`).

A boot that raises (here: a module the flash lost) must never end at the REPL, where a Pico
reads the host's bytes as code. Since issue 26 it does not wait for the watchdog either:
main.py writes the crash record (data/crash.bin: booting, the exception, crashes in a row)
and resets at once, boot after boot; on main at 60da493 it printed the traceback, sat at
the REPL and was reset by the watchdog 8 s later. A dealer key held at power-on must leave
the board at the REPL with the watchdog stopped.
"""

from __future__ import annotations

import struct
import time
from pathlib import Path

from cardshoe.hil.provision import provision_offline
from cardshoe.hil.vboard import VirtualBoard

from vboard_helpers import MpRemote

WDT_S = 8.0  # firmware/main.py arms machine.WDT for 8000 ms


def _wait(pred: object, timeout: float, what: str, board: VirtualBoard) -> None:
    end = time.monotonic() + timeout
    while not pred():  # type: ignore[operator]
        assert time.monotonic() < end, f"{what}: not within {timeout}s: {board.transcript()[-400:]!r}"
        time.sleep(0.05)


def test_a_boot_that_raises_is_recorded_and_resets_at_once_never_the_repl(board: VirtualBoard, tmp_path: Path) -> None:
    provision_offline(board, tmp_path / "keys", 0x5EED, tmp_path / "build")
    board.flash.remove("/app/run.mpy")  # the boot's loader is gone: `from app import run` raises
    start = time.monotonic()
    board.power_on()
    # Three boots well inside one watchdog period: each reset is the firmware's own.
    _wait(lambda: board.boots >= 3, WDT_S, "three boots", board)
    assert time.monotonic() - start < WDT_S and board.watchdog_resets == 0
    board.power_off()
    record = board.flash.read("/data/crash.bin")
    boot, where, error, count, cmd_type, _epoch, _seq, text = struct.unpack_from("<IBBBBII32s", record, 4)
    # While booting (1), ImportError (4), two or more in a row, no host command.
    assert (where, error, cmd_type) == (1, 4, 0) and count >= 2, (where, error, count, cmd_type)
    assert text.rstrip(b"\0").startswith(b"ImportError main:"), text
    transcript = board.transcript()
    assert b'Type "help()"' not in transcript and b">>> " not in transcript, transcript[-400:]


def test_a_key_held_at_boot_leaves_the_repl_with_the_watchdog_stopped(board: VirtualBoard, tmp_path: Path) -> None:
    provision_offline(board, tmp_path / "keys", 0x5EED, tmp_path / "build")
    mark = board.output_mark()
    board.power_on(key_held=True)
    board.wait_output(b"cardshoe: REPL, key held", timeout=20, since=mark)
    time.sleep(WDT_S + 1.5)  # longer than the watchdog's timeout: a running one would have reset it
    assert board.watchdog_resets == 0 and board.boots == 1
    assert MpRemote.for_board(board)("exec", "print(6 * 7)").strip() == "42"
