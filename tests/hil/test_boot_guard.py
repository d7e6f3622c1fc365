"""Every boot step under the watchdog, and the deliberate ways to the REPL (issue 9, item 1),
on the virtual board (the real firmware; its watchdog is the board's `machine.WDT`).

A boot that raises (here: a module the flash lost) must end in a watchdog reset, not at
the REPL where a Pico would wait for someone to pull the power. A dealer key held at
power-on must leave the board at the REPL with the watchdog stopped.
"""

from __future__ import annotations

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


def test_a_boot_that_raises_ends_in_a_watchdog_reset_not_at_the_repl(board: VirtualBoard, tmp_path: Path) -> None:
    provision_offline(board, tmp_path / "keys", 0x5EED, tmp_path / "build")
    board.flash.remove("/app/run.mpy")  # the boot's loader is gone: `from app import run` raises
    mark = board.output_mark()
    board.power_on()
    board.wait_output(b"ImportError", timeout=20, since=mark)
    _wait(lambda: board.watchdog_resets >= 1 and board.boots >= 2, WDT_S * 3, "a watchdog reset and a new boot", board)


def test_a_key_held_at_boot_leaves_the_repl_with_the_watchdog_stopped(board: VirtualBoard, tmp_path: Path) -> None:
    provision_offline(board, tmp_path / "keys", 0x5EED, tmp_path / "build")
    mark = board.output_mark()
    board.power_on(key_held=True)
    board.wait_output(b"cardshoe: REPL, key held", timeout=20, since=mark)
    time.sleep(WDT_S + 1.5)  # longer than the watchdog's timeout: a running one would have reset it
    assert board.watchdog_resets == 0 and board.boots == 1
    assert MpRemote.for_board(board)("exec", "print(6 * 7)").strip() == "42"
