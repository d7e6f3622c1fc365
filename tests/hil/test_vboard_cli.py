"""`cardshoe hil board`: a standalone virtual board driven from the command line."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from test_vboard import ECHO_SIM_MAIN
from vboard_helpers import MpRemote

from cardshoe.hil.vboard import FlashImage


def _lines(stream: IO[bytes], into: queue.Queue[str]) -> None:
    for raw in stream:
        into.put(raw.decode("utf-8", "replace").rstrip("\n"))


def _wait_for(lines: queue.Queue[str], wanted: str, timeout: float = 10.0) -> list[str]:
    seen = []
    while True:
        line = lines.get(timeout=timeout)
        seen.append(line)
        if line == wanted:
            return seen


def test_board_command_prints_its_serial_and_takes_bench_commands(tmp_path: Path) -> None:
    workdir = tmp_path / "bench"
    workdir.mkdir()
    flash = FlashImage(workdir / "flash.img")
    flash.create()
    flash.write("/main.py", ECHO_SIM_MAIN.encode())

    proc = subprocess.Popen(
        [sys.executable, "-m", "cardshoe.cli", "hil", "board", "--workdir", str(workdir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    errors: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stderr, errors), daemon=True).start()
    try:
        tty = proc.stdout.readline().decode().strip()
        assert tty == str(workdir / "tty")
        assert Path(tty).resolve().as_posix().startswith("/dev/pts/")
        _wait_for(errors, "sim< ready 1")  # main.py from the flash image ran and connected
        proc.stdin.write(b"exit\n")
        proc.stdin.flush()
        _wait_for(errors, "sim< echo exit")

        proc.stdin.write(b"!cut\n!on\n")
        proc.stdin.flush()
        _wait_for(errors, "sim< ready 2")  # the count in flash survived the power cut

        # The real mpremote works on the printed path.
        assert MpRemote(Path(tty))("exec", "print(open('boots.txt').read())").strip() == "2"
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=10)
    assert rc == 0
    assert not (workdir / "tty").exists()  # the device went away with the board
