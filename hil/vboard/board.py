"""The virtual board: the MicroPython unix port behaving like a Pico on a USB serial port.

One thread (the engine) owns every file descriptor and the interpreter process, and
runs the bench operations it is handed, so nothing races on a descriptor:

    host (pyserial, mpremote)                        micropython -i vboard_boot.py
        |                                                   |
    <workdir>/tty -> /dev/pts/N  [HostPort pty]  <-engine->  [console pty]  (raw, binary-clean)

The engine relays bytes both ways and plays the parts of a board that the unix port does
not have:
- soft reboot: the unix port exits on Ctrl-D; the engine prints `soft reboot\\r\\n` and
  starts it again, running main.py, or, if the exit came from the raw REPL (as mpremote's
  soft reset does), bringing the fresh interpreter back to the raw REPL as a board does;
- the interrupt character: a board's USB stack turns ^C into KeyboardInterrupt unless
  the program disabled it (`micropython.kbd_intr(-1)`). The engine passes every byte
  as data; the board's launcher (`xip.py`) plays the USB stack inside the interpreter's
  process and schedules KeyboardInterrupt as a Pico does. No signal is ever sent for ^C;
- the watchdog: `machine.WDT` (added by the boot script, served by the launcher) resets
  the board when the firmware stops feeding it, as the RP2040's does;
- USB presence: output is dropped while no host has the device open (as a Pico drops
  it while DTR is low); the device vanishes on unplug(), and, by default, while the
  board is off or resetting, because a Pico's USB serial is the microcontroller itself.
"""

from __future__ import annotations

import atexit
import collections
import errno
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from .errors import BoardStateError, VirtualBoardError
from . import xip
from .flash import BOOT_SCRIPT, PICO_BLOCK_SIZE, PICO_FLASH_SIZE, FlashImage, find_micropython
from .ptys import HostPort, open_raw_pty
from .sim import Sim

T = TypeVar("T")

RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n"
FRIENDLY_BANNER = b'Type "help()" for more information.'
SOFT_REBOOT = b"soft reboot\r\n"
_FRIENDLY_PROMPT = b">>> "
_CTRL_A = b"\x01"

_BUFFER_CAP = 64 * 1024  # host-bound output beyond this is dropped; host input beyond it waits
_TRANSCRIPT_CAP = 64 * 1024
_RAW_GATE_TIMEOUT_S = 10.0  # give up hiding the restart's friendly REPL after this
_UNPLUGGED_POLL_MS = 20  # how often to look for a host opening the device
_RESTART_BURST = 10  # more soft reboots than this within _RESTART_WINDOW_S are slowed down
_RESTART_WINDOW_S = 2.0
_RESTART_BACKOFF_S = 0.5
_UNIX_SOCKET_PATH_MAX = 100  # sun_path is 108 bytes on Linux; keep a margin

# CARDSHOE_RESET_CAUSE for the firmware's HELLO (SPEC: 1 power on, 3 soft reset, 4 hard reset).
RESET_POWER_ON = 1
RESET_WATCHDOG = 2
RESET_SOFT = 3
RESET_HARD = 4

KIND_MAIN = "main"  # boot and run main.py (then the REPL)
KIND_REPL = "repl"  # boot to the REPL without main.py (safe boot)
KIND_RAW = "raw"  # boot to the REPL and enter the raw REPL (after a raw-REPL soft reset)


@dataclass
class _Interpreter:
    proc: subprocess.Popen[bytes]
    pidfd: int | None
    master: int
    slave: int
    kind: str
    started: float
    gate: bytearray | None = None  # output held back until the raw REPL banner (KIND_RAW)
    sent_ctrl_a: bool = False


@dataclass
class _Command:
    fn: Callable[[], object]
    done: threading.Event = field(default_factory=threading.Event)
    result: object = None
    error: BaseException | None = None


class VirtualBoard:
    """A MicroPython unix-port "Pico" with littlefs flash, USB serial and a sim channel.

    `workdir` holds the flash image (`flash.img`), the serial symlink (`tty`) and the sim
    socket (`sim.sock`). The board starts powered off; `power_on()` boots it.
    """

    def __init__(
        self,
        workdir: str | os.PathLike[str],
        *,
        heapsize: str = "192k",
        flash_size: int = PICO_FLASH_SIZE,
        block_size: int = PICO_BLOCK_SIZE,
        serial_follows_power: bool = True,
        micropython: str | None = None,
        uid: bytes | None = None,
        romfs_size: int | None = None,
        stack: str = "pico",
    ) -> None:
        if romfs_size is None:  # a stock Pico build has none; CARDSHOE_VBOARD_ROMFS=131072 gives one
            romfs_size = int(os.environ.get("CARDSHOE_VBOARD_ROMFS", "0"))
        if romfs_size < 0 or romfs_size % PICO_BLOCK_SIZE:
            raise ValueError(f"romfs_size {romfs_size} must be 0 or a multiple of {PICO_BLOCK_SIZE}")
        self.workdir = Path(workdir).resolve()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.heapsize = heapsize
        self.serial_follows_power = serial_follows_power
        self.tty_path = self.workdir / "tty"
        self.micropython = micropython or find_micropython()
        # The launcher (xip.py) runs the unix port in process: it maps a ROM partition and
        # plays the USB stack's ^C and the watchdog. Without it (another `micropython`)
        # the board has no ROM partition, no watchdog, and ^C is only data.
        self.launcher = micropython is None and xip.available()
        self.romfs_size = romfs_size if self.launcher else 0
        self.romfs_path = self.workdir / "romfs.img"
        self.uid = uid if uid is not None else os.urandom(8)
        if stack not in ("pico", "unix"):
            raise ValueError(f"stack {stack!r}: 'pico' (a Pico's C stack, the default) or 'unix' (the port's own)")
        self.stack = stack
        self._engine: _Engine | None = None
        self.flash = FlashImage(
            self.workdir / "flash.img",
            size=flash_size,
            block_size=block_size,
            micropython=self.micropython,
            busy=lambda: self.powered,
        )
        self._short_dir: str | None = None
        self.sim_path = self._sim_socket_path()
        self.sim = Sim(self.sim_path)
        self._engine = _Engine(self)
        self._engine.start()
        _LIVE_BOARDS.add(self)

    # --- bench operations ------------------------------------------------------------

    def power_on(self, *, safe_boot: bool = False, key_held: bool = False) -> None:
        """Apply power and boot.

        main.py runs unless `safe_boot` (the board's own safe mode: straight to the REPL).
        `key_held` runs main.py with CARDSHOE_KEY_HELD=1, the firmware's own "dealer key
        held at boot" that returns it to the REPL for reflashing.
        """
        self.flash.create()
        self._create_romfs()
        self.sim.forget_boot()
        self._call(lambda: self._live().power_on(safe_boot, key_held))

    def power_off(self, timeout: float = 2.0) -> None:
        """Switch off in order: SIGTERM (SIGKILL after `timeout`), then what the interpreter
        had written is read and passed on before the device goes. Nothing to do if off."""
        self._call(lambda: self._live().power_off(clean=True, timeout=timeout))
        self.sim.forget_boot()

    def power_cut(self) -> None:
        """Cut the power now: SIGKILL at whatever instant; output in flight is lost."""
        self._call(lambda: self._live().power_off(clean=False, timeout=0.0))
        self.sim.forget_boot()

    def reset(self) -> None:
        """Press the reset button (a hard reset: main.py runs, USB re-enumerates)."""
        self._call(lambda: self._live().hard_reset())
        self.sim.forget_boot()

    def unplug(self) -> None:
        """Pull the USB data link: the host's device vanishes; the board keeps running."""
        self._call(lambda: self._live().unplug())

    def replug(self) -> None:
        """Plug the USB data link back in: the device reappears (maybe as a new /dev/pts/N)."""
        self._call(lambda: self._live().replug())

    def close(self) -> None:
        """Power off, remove the device, stop listening. Safe to call twice."""
        engine = self._engine
        if engine is not None and engine.is_alive():
            try:
                self._call(lambda: engine.shutdown())
            except VirtualBoardError:
                pass
            engine.join(timeout=5)
        self._engine = None
        self.sim.close()
        if self._short_dir is not None:
            for name in (self.workdir / "sim.sock",):
                if name.is_symlink():
                    name.unlink()
            try:
                os.rmdir(self._short_dir)
            except OSError:
                pass
            self._short_dir = None

    def __enter__(self) -> VirtualBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- state -------------------------------------------------------------------------

    @property
    def powered(self) -> bool:
        """True while the board has power."""
        engine = self._engine
        return engine is not None and engine.powered

    @property
    def plugged(self) -> bool:
        """False between unplug() and replug()."""
        engine = self._engine
        return engine is not None and not engine.unplugged

    @property
    def serial_device(self) -> str | None:
        """The host-side /dev/pts/N now, or None while the device is absent."""
        engine = self._engine
        host = engine.host if engine is not None else None
        return host.device if host is not None else None

    @property
    def boots(self) -> int:
        """Interpreter starts since construction (power-ons, soft reboots and resets)."""
        engine = self._engine
        return engine.boots if engine is not None else 0

    @property
    def interpreter_pid(self) -> int | None:
        """The process id of the running interpreter (the firmware's), or None while off."""
        engine = self._engine
        it = engine.interp if engine is not None else None
        return it.proc.pid if it is not None else None

    @property
    def watchdog_resets(self) -> int:
        """Resets by the board's watchdog (the firmware stopped feeding `machine.WDT`)."""
        engine = self._engine
        return engine.watchdog_resets if engine is not None else 0

    @property
    def output_dropped(self) -> int:
        """Console bytes no host received (none had the device open, or it stopped reading)."""
        engine = self._engine
        return engine.dropped if engine is not None else 0

    @property
    def in_raw_repl(self) -> bool:
        """True when the board's console was last seen in the raw REPL."""
        engine = self._engine
        return engine is not None and engine.in_raw

    def wait_boots(self, count: int, timeout: float) -> None:
        """Wait until `boots` reaches `count`; raises VirtualBoardError after `timeout`."""
        engine = self._engine
        if engine is None:
            raise BoardStateError("the board is closed")
        with engine.cond:
            if not engine.cond.wait_for(lambda: engine.boots >= count, timeout):
                raise VirtualBoardError(f"the board booted {engine.boots} times, not {count}, within {timeout} s")

    def output_mark(self) -> int:
        """A position in the interpreter's output, for wait_output(since=...)."""
        engine = self._live()
        with engine.cond:
            return engine.transcript_total

    def wait_output(self, pattern: bytes, timeout: float, *, since: int = 0) -> None:
        """Wait until the interpreter writes `pattern` after the output_mark() `since`.

        The console is watched whether or not a host has the serial device open, so the
        bench can tell that main.py got somewhere while nobody listens.
        """
        engine = self._live()

        def seen() -> bool:
            start = engine.transcript_total - len(engine.transcript)
            return engine.transcript.find(pattern, max(0, since - start)) >= 0

        with engine.cond:
            if not engine.cond.wait_for(seen, timeout):
                raise VirtualBoardError(f"the board did not write {pattern!r} within {timeout} s")

    def transcript(self) -> bytes:
        """The last 64 KiB the interpreter wrote (including what no host was there to read)."""
        engine = self._engine
        if engine is None:
            return b""
        with engine.cond:
            return bytes(engine.transcript)

    def environment(self) -> dict[str, str]:
        """The environment the firmware process gets (besides the inherited one)."""
        env = {
            "CARDSHOE_BOARD": "unix",
            "CARDSHOE_SIM": str(self.sim_path),
            "VBOARD_IMAGE": str(self.flash.path),
            "VBOARD_BLOCK_SIZE": str(self.flash.block_size),
            "VBOARD_UID": self.uid.hex(),
        }
        if self.romfs_size:
            env["VBOARD_ROMFS"] = str(self.romfs_path)
        if self.launcher:
            env["VBOARD_USB"] = "1"
        # A Pico's C stack (runtime/picostack.py) needs the launcher's VBOARD_MP_STATE.
        env["VBOARD_STACK"] = self.stack if self.launcher else "unix"
        return env

    def interpreter(self) -> list[str]:
        """The command that runs the board's MicroPython (before its arguments)."""
        if self.launcher:
            return [sys.executable, xip.__file__]  # run as a file: no package imports per boot
        return [self.micropython]

    def _create_romfs(self) -> None:
        """The ROM partition, erased, the first time the board is powered."""
        if self.romfs_size and not self.romfs_path.exists():
            with open(self.romfs_path, "wb") as f:
                f.write(b"\xff" * self.romfs_size)

    # --- internals -----------------------------------------------------------------------

    def _live(self) -> _Engine:
        if self._engine is None:
            raise BoardStateError("the board is closed")
        return self._engine

    def _call(self, fn: Callable[[], T]) -> T:
        return self._live().call(fn)

    def _sim_socket_path(self) -> Path:
        path = self.workdir / "sim.sock"
        if len(os.fsencode(str(path))) <= _UNIX_SOCKET_PATH_MAX:
            return path
        # Deep workdirs (pytest's tmp_path) overflow sun_path: listen in a short private
        # directory and leave a symlink in the workdir for people to find it.
        self._short_dir = tempfile.mkdtemp(prefix="vb-", dir="/tmp")
        short = Path(self._short_dir) / "sim.sock"
        if path.is_symlink() or path.exists():
            path.unlink()
        os.symlink(short, path)
        return short


class _Engine(threading.Thread):
    """Owns the descriptors and the interpreter; see the module docstring."""

    def __init__(self, board: VirtualBoard) -> None:
        super().__init__(name=f"vboard-{board.workdir.name}", daemon=True)
        self.board = board
        self.cond = threading.Condition()
        self.powered = False
        self.unplugged = False
        self.in_raw = False
        self.boots = 0
        self.host: HostPort | None = None
        self.host_connected = False
        self.interp: _Interpreter | None = None
        self.to_host = bytearray()
        self.to_board = bytearray()
        self.held = bytearray()  # host input kept back while a raw-REPL restart is hidden
        self.transcript = bytearray()
        self.transcript_total = 0
        self.dropped = 0  # console output no host received
        self.watchdog_resets = 0  # interpreter ends the launcher reported as watchdog resets
        self._tail = b""
        self._restarts: collections.deque[float] = collections.deque(maxlen=_RESTART_BURST)
        self._restart_at: float | None = None
        self._restart_kind = KIND_MAIN
        self._commands: collections.deque[_Command] = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        # Guards the wake pipe: the engine closes it when it stops, and a caller on another
        # thread must never write to a closed (or, worse, reused) descriptor.
        self._wake_lock = threading.Lock()
        self._wake_closed = False
        self._stopping = False
        self._failure: BaseException | None = None
        if not board.serial_follows_power:
            self._ensure_host()

    # --- commands (run on this thread) ---------------------------------------------

    def call(self, fn: Callable[[], T]) -> T:
        if not self.is_alive():
            raise BoardStateError(f"the board's engine has stopped ({self._failure!r})")
        cmd = _Command(fn)
        with self._wake_lock:
            if self._wake_closed:
                raise BoardStateError(f"the board's engine has stopped ({self._failure!r})")
            self._commands.append(cmd)
            os.write(self._wake_w, b"x")
        while not cmd.done.wait(0.5):
            if not self.is_alive():
                raise BoardStateError(f"the board's engine has stopped ({self._failure!r})")
        if cmd.error is not None:
            raise cmd.error
        return cmd.result  # type: ignore[return-value]

    def power_on(self, safe_boot: bool, key_held: bool) -> None:
        if self.powered:
            raise BoardStateError("the board is already powered")
        self.powered = True
        self._ensure_host()
        self._start(KIND_REPL if safe_boot else KIND_MAIN, RESET_POWER_ON, key_held=key_held)

    def power_off(self, *, clean: bool, timeout: float) -> None:
        self.powered = False
        self._restart_at = None
        self._stop_interpreter(clean=clean, timeout=timeout)
        if self.board.serial_follows_power:
            self._drop_host()

    def hard_reset(self) -> None:
        if not self.powered:
            raise BoardStateError("the board is off: power_on() it instead of reset()")
        self._stop_interpreter(clean=False, timeout=0.0)
        self._reenumerate()
        self._start(KIND_MAIN, RESET_HARD)

    def unplug(self) -> None:
        if self.unplugged:
            raise BoardStateError("the board is already unplugged")
        self.unplugged = True
        self._drop_host()

    def replug(self) -> None:
        if not self.unplugged:
            raise BoardStateError("the board is not unplugged")
        self.unplugged = False
        self._ensure_host()

    def shutdown(self) -> None:
        self.power_off(clean=True, timeout=1.0)
        self._drop_host()
        self._stopping = True

    # --- the loop ------------------------------------------------------------------------

    def run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # recorded and re-raised to the next caller
            self._failure = exc
            raise
        finally:
            self._stop_interpreter(clean=False, timeout=0.0)
            self._drop_host()
            with self._wake_lock:
                self._wake_closed = True
                for cmd in self._commands:
                    cmd.error = BoardStateError("the board's engine stopped")
                    cmd.done.set()
                os.close(self._wake_r)
                os.close(self._wake_w)

    def _loop(self) -> None:
        while True:
            self._run_commands()
            if self._stopping:
                return
            self._check_host()
            now = time.monotonic()
            if self._restart_at is not None and now >= self._restart_at:
                self._restart_at = None
                self._start(self._restart_kind, RESET_SOFT)
            it = self.interp
            if it is not None and it.gate is not None and now - it.started > _RAW_GATE_TIMEOUT_S:
                self._open_gate(it, bytes(it.gate))  # show what there is rather than hang
            poller = select.poll()
            poller.register(self._wake_r, select.POLLIN)
            timeout_ms: float | None = None
            if it is not None:
                if it.pidfd is not None:
                    poller.register(it.pidfd, select.POLLIN)
                else:
                    timeout_ms = 50
                events = select.POLLIN  # always read: a full host side drops, it does not block
                if self.to_board and it.gate is None:
                    events |= select.POLLOUT
                poller.register(it.master, events)
                if it.gate is not None:
                    timeout_ms = _min(timeout_ms, 100)
            host = self.host
            if host is not None:
                if self.host_connected:
                    events = 0
                    if len(self.to_board) + len(self.held) < _BUFFER_CAP:
                        events |= select.POLLIN
                    if self.to_host:
                        events |= select.POLLOUT
                    if events:
                        poller.register(host.master, events)
                else:
                    timeout_ms = _min(timeout_ms, _UNPLUGGED_POLL_MS)
            if self._restart_at is not None:
                timeout_ms = _min(timeout_ms, max(0.0, (self._restart_at - now) * 1000))
            for fd, ev in poller.poll(timeout_ms):
                if fd == self._wake_r:
                    _drain_pipe(self._wake_r)
                elif it is not None and fd == it.master:
                    if ev & select.POLLIN:
                        self._read_board(it)
                    if ev & select.POLLOUT:
                        self._write_board(it)
                elif host is not None and fd == host.master and self.host is host:
                    self._service_host(host, ev)
            if it is not None and self.interp is it:
                exited = it.proc.poll() is not None
                if exited:
                    self._on_exit(it)

    def _run_commands(self) -> None:
        while self._commands:
            cmd = self._commands.popleft()
            try:
                cmd.result = cmd.fn()
            except BaseException as exc:  # handed to the caller's thread
                cmd.error = exc
            cmd.done.set()

    # --- the interpreter -----------------------------------------------------------------

    def _start(self, kind: str, cause: int, *, key_held: bool = False) -> None:
        board = self.board
        master, slave, _ = open_raw_pty()
        env = dict(os.environ)
        env.pop("MICROPYPATH", None)
        env.update(board.environment())
        env["VBOARD_MAIN"] = "1" if kind == KIND_MAIN else "0"
        env["CARDSHOE_RESET_CAUSE"] = str(cause)
        if key_held:
            env["CARDSHOE_KEY_HELD"] = "1"
        else:
            env.pop("CARDSHOE_KEY_HELD", None)
        argv = [*board.interpreter(), "-X", f"heapsize={board.heapsize}", "-i", str(BOOT_SCRIPT)]
        try:
            proc = subprocess.Popen(
                argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=str(board.workdir),
                env=env,
                start_new_session=True,  # our terminal's ^C must not reach the board
            )
        except OSError:
            os.close(master)
            os.close(slave)
            raise
        pidfd: int | None
        try:
            pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            pidfd = None  # old kernel: the loop polls the process instead
        it = _Interpreter(proc=proc, pidfd=pidfd, master=master, slave=slave, kind=kind, started=time.monotonic())
        if kind == KIND_RAW:
            it.gate = bytearray()
        self.interp = it
        self.in_raw = kind == KIND_RAW
        self._restarts.append(it.started)
        with self.cond:
            self.boots += 1
            self.cond.notify_all()

    def _stop_interpreter(self, *, clean: bool, timeout: float) -> None:
        it = self.interp
        self.interp = None
        if it is None:
            return
        if clean:
            _signal(it.proc, signal.SIGTERM)
            try:
                it.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                _signal(it.proc, signal.SIGKILL)
                it.proc.wait()
            self._drain_board(it)
            self._flush_host_once()
        else:
            _signal(it.proc, signal.SIGKILL)
            it.proc.wait()
            # What was still in flight dies with the USB FIFOs.
            self.to_host.clear()
        self.to_board.clear()
        self.held.clear()
        _close_interpreter(it)

    def _on_exit(self, it: _Interpreter) -> None:
        """The interpreter ended on its own: a soft reboot or a reset the firmware asked for."""
        self._drain_board(it)
        rc = it.proc.wait()
        _close_interpreter(it)
        self.interp = None
        self.to_board.clear()
        self.held.clear()
        if rc == -signal.SIGUSR1:  # machine.reset()
            self._reenumerate()
            self._start(KIND_MAIN, RESET_HARD)
            return
        if rc == xip.WATCHDOG_STATUS:  # the firmware stopped feeding machine.WDT
            with self.cond:
                self.watchdog_resets += 1
            self._reenumerate()
            self._start(KIND_MAIN, RESET_WATCHDOG)
            return
        # Ctrl-D at either REPL, machine.soft_reset() (SIGUSR2), or a crash.
        self._to_host(SOFT_REBOOT)
        kind = KIND_RAW if self.in_raw else KIND_MAIN
        now = time.monotonic()
        if len(self._restarts) == _RESTART_BURST and now - self._restarts[0] < _RESTART_WINDOW_S:
            # A main.py that kills the interpreter at once would spin a core; a real
            # board's reboot takes time too.
            self._restart_at = now + _RESTART_BACKOFF_S
            self._restart_kind = kind
        else:
            self._start(kind, RESET_SOFT)

    def _reenumerate(self) -> None:
        if self.board.serial_follows_power:
            self._drop_host()
            self._ensure_host()

    def _read_board(self, it: _Interpreter) -> None:
        try:
            data = os.read(it.master, 4096)
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            return
        if data:
            self._from_board(it, data)

    def _drain_board(self, it: _Interpreter) -> None:
        while True:
            try:
                data = os.read(it.master, 4096)
            except OSError:
                return
            if not data:
                return
            self._from_board(it, data)

    def _write_board(self, it: _Interpreter) -> None:
        try:
            n = os.write(it.master, self.to_board)
        except BlockingIOError:
            return
        del self.to_board[:n]

    def _from_board(self, it: _Interpreter, data: bytes) -> None:
        with self.cond:
            self.transcript += data
            self.transcript_total += len(data)
            if len(self.transcript) > _TRANSCRIPT_CAP:
                del self.transcript[: len(self.transcript) - _TRANSCRIPT_CAP]
            self.cond.notify_all()
        self._track_mode(data)
        if it.gate is None:
            self._to_host(data)
            return
        it.gate += data
        if not it.sent_ctrl_a and _FRIENDLY_PROMPT in it.gate:
            # The fresh interpreter is at its friendly REPL: take it to the raw REPL, where
            # mpremote left the board before the soft reset.
            os.write(it.master, _CTRL_A)
            it.sent_ctrl_a = True
        at = it.gate.find(RAW_BANNER)
        if at >= 0:
            self._open_gate(it, bytes(it.gate[at:]))

    def _open_gate(self, it: _Interpreter, shown: bytes) -> None:
        it.gate = None
        self._to_host(shown)
        self.to_board += self.held
        self.held.clear()

    def _track_mode(self, data: bytes) -> None:
        seen = self._tail + data
        raw_at = seen.rfind(RAW_BANNER)
        friendly_at = seen.rfind(FRIENDLY_BANNER)
        if raw_at > friendly_at:
            self.in_raw = True
        elif friendly_at > raw_at:
            self.in_raw = False
        self._tail = seen[-64:]

    # --- the host side -------------------------------------------------------------------

    def _ensure_host(self) -> None:
        if self.host is None and not self.unplugged and (self.powered or not self.board.serial_follows_power):
            self.host = HostPort(self.board.tty_path)
            self.host_connected = False

    def _drop_host(self) -> None:
        host = self.host
        self.host = None
        self.host_connected = False
        self.to_host.clear()
        if host is not None:
            host.close()

    def _check_host(self) -> None:
        host = self.host
        if host is None:
            return
        probe = select.poll()
        probe.register(host.master, select.POLLIN)
        hung_up = any(ev & select.POLLHUP for _, ev in probe.poll(0))
        if hung_up and self.host_connected:
            self.to_host.clear()  # nobody to read it: a Pico drops output while DTR is low
        self.host_connected = not hung_up

    def _service_host(self, host: HostPort, ev: int) -> None:
        if ev & (select.POLLHUP | select.POLLERR):
            self.host_connected = False
            self.to_host.clear()
            return
        if ev & select.POLLIN:
            try:
                data = os.read(host.master, 4096)
            except BlockingIOError:
                data = b""
            except OSError:
                self.host_connected = False
                return
            if data:
                self._from_host(data)
        if ev & select.POLLOUT and self.to_host:
            try:
                n = os.write(host.master, self.to_host)
            except BlockingIOError:
                return
            except OSError:
                self.host_connected = False
                return
            del self.to_host[:n]

    def _from_host(self, data: bytes) -> None:
        it = self.interp
        if it is None:
            return  # a board without power hears nothing
        if it.gate is not None:
            self.held += data
        else:
            self.to_board += data

    def _to_host(self, data: bytes) -> None:
        # Like a Pico's USB stack: output is dropped while no host has the port open, and
        # when a host that has it open stops reading (its TX write times out).
        if self.host is not None and self.host_connected and len(self.to_host) + len(data) <= _BUFFER_CAP:
            self.to_host += data
        else:
            self.dropped += len(data)

    def _flush_host_once(self) -> None:
        host = self.host
        if host is None or not self.host_connected or not self.to_host:
            return
        try:
            n = os.write(host.master, self.to_host)
            del self.to_host[:n]
        except OSError:
            pass


# The interpreters run in their own sessions (so a ^C in the bench's terminal does not
# reach them): nothing would stop them if the bench exited without close().
_LIVE_BOARDS: weakref.WeakSet[VirtualBoard] = weakref.WeakSet()


@atexit.register
def _close_live_boards() -> None:
    for board in list(_LIVE_BOARDS):
        board.close()


def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
    if proc.returncode is None:
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            pass


def _close_interpreter(it: _Interpreter) -> None:
    for fd in (it.pidfd, it.master, it.slave):
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


def _drain_pipe(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _min(a: float | None, b: float) -> float:
    return b if a is None else min(a, b)
