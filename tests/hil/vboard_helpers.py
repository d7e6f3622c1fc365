"""Helpers for the bench tests (imported by conftest.py and the tests)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from cardshoe.hil.vboard import VirtualBoard


def _mpremote_executable() -> str:
    beside = Path(sys.executable).with_name("mpremote")
    if beside.exists():
        return str(beside)
    found = shutil.which("mpremote")
    if not found:
        pytest.skip("mpremote is not installed")
    return found


class MpRemote:
    """Runs the real `mpremote connect <tty> ...` and fails the test on error."""

    def __init__(self, tty: Path, transcript: Callable[[], bytes] | None = None) -> None:
        self.tty = tty
        self.transcript = transcript
        self.executable = _mpremote_executable()

    @classmethod
    def for_board(cls, board: VirtualBoard) -> MpRemote:
        """mpremote on a board's serial symlink; failures show the board's console."""
        return cls(board.tty_path, board.transcript)

    def __call__(self, *args: str, check: bool = True, timeout: float = 30.0) -> str:
        proc = subprocess.run(
            [self.executable, "connect", str(self.tty), *args],
            capture_output=True,
            timeout=timeout,
        )
        out = proc.stdout.decode("utf-8", "replace")
        if check and proc.returncode != 0:
            console = self.transcript()[-2000:] if self.transcript is not None else b"(not available)"
            pytest.fail(
                f"mpremote {' '.join(args)} exited {proc.returncode}\nstdout:\n{out}\n"
                f"stderr:\n{proc.stderr.decode('utf-8', 'replace')}\n"
                f"board console:\n{console!r}"
            )
        return out
