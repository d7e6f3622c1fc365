"""The real firmware (firmware/main.py under the MicroPython unix port) as the shoe.

A smaller cousin of the bench's virtual board, enough for the daemon's interop test: the
firmware's files are copied to a flash folder with a provisioned `data/ident.bin`, the
interpreter runs with a pseudo-terminal as its serial line (relayed to the daemon's
pluggable pty), and the sim channel of INTERFACES.md (a UNIX socket) presents barcodes,
fires the exit sensor and presses the dealer's keys.
"""

from __future__ import annotations

import os
import select
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import tty
import zlib
from pathlib import Path

from link_ptys import PluggablePty

from cardshoe.protocol.barcode import make_barcode
from cardshoe.protocol.frames import Frame, Receiver
from cardshoe.protocol.messages import message_fields

ROOT = Path(__file__).resolve().parents[2]
XIP = ROOT / "hil" / "vboard" / "xip.py"
RESET_STATUS = 80
# Run as `-c`: a Pico's C stack (picostack), `machine` with the reset() a board has, main.py.
BOOT = f"""
import sys
sys.path.insert(0, {str(ROOT / "hil" / "vboard" / "runtime")!r})
import picostack
del sys.path[0], sys.modules["picostack"]
import machine
class _Machine:
    def __init__(self, real):
        self._real = real
    def __getattr__(self, name):
        return getattr(self._real, name)
    def reset(self):
        sys.exit({RESET_STATUS})
sys.modules["machine"] = _Machine(machine)
del machine, _Machine
picostack.limit()
picostack.__dict__.clear()
del picostack
execfile("main.py")
"""


def _micropython() -> str:
    import sys

    beside = Path(sys.executable).with_name("micropython")
    return str(beside) if beside.exists() else shutil.which("micropython") or "micropython"


class FirmwareShoe:
    """The firmware in a child process, its serial line relayed to `plug`."""

    def __init__(self, workdir: Path, plug: PluggablePty, serial: int, key: bytes,
                 commands: str | None = None) -> None:
        self.flash = workdir / "flash"
        shutil.copytree(ROOT / "firmware", self.flash, ignore=shutil.ignore_patterns("*.md", "__pycache__"))
        if commands is not None:  # app/commands.py replaced (a fault put in: tests/firmware_faults.py)
            (self.flash / "app" / "commands.py").write_text(commands)
        (self.flash / "data").mkdir()
        body = struct.pack("<4sI32s", b"CSI1", serial, key)
        (self.flash / "data" / "ident.bin").write_bytes(body + struct.pack("<I", zlib.crc32(body)))
        self.sim_path = workdir / "sim.sock"
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(self.sim_path))
        self.server.listen(1)
        self.plug = plug
        self.log = workdir / "firmware.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.conn: socket.socket | None = None
        self.lines: list[str] = []
        self._stop = threading.Event()
        # What the firmware sent while the cable was out, decoded: (type name, fields).
        self._tap = Receiver(keys=lambda s: key if s == serial else None, auto_accept=True)
        self.unheard: list[tuple[str, dict[str, object]]] = []
        self.resets = 0  # the firmware's own resets (machine.reset() after a crash): booted again

    def power_on(self, timeout: float = 20) -> int:
        """Start the interpreter; returns the boot counter from the sim channel's `ready`.

        The unix port runs through the virtual board's launcher with a Pico's C stack
        (hil/vboard/runtime/picostack.py) and a `machine.reset()` that ends the process
        with RESET_STATUS, after which the shoe is started again, as a board boots after
        its reset (main.py resets after a crash)."""
        master, slave = os.openpty()
        tty.setraw(master)
        tty.setraw(slave)
        env = dict(os.environ, CARDSHOE_BOARD="unix", CARDSHOE_SIM=str(self.sim_path))
        self.proc = subprocess.Popen([sys.executable, str(XIP), "-X", "heapsize=512k", "-c", BOOT], cwd=self.flash,
                                     stdin=slave, stdout=slave, stderr=self.log.open("ab"), env=env)
        proc = self.proc
        threading.Thread(target=self._watch_reset, args=(proc,), daemon=True).start()
        os.close(slave)
        self._master = master
        self._stop.clear()
        self._relay = threading.Thread(target=self._pump, daemon=True)
        self._relay.start()
        self.server.settimeout(timeout)
        self.conn, _ = self.server.accept()
        self.conn.settimeout(timeout)
        buf = b""
        while b"ready " not in buf:
            chunk = self.conn.recv(256)
            if not chunk:
                raise RuntimeError(f"firmware closed the sim channel: {self.log.read_text()}")
            buf += chunk
        return int(buf.split(b"ready ", 1)[1].split(b"\n", 1)[0])

    def _watch_reset(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.wait() != RESET_STATUS or self.proc is not proc or self._stop.is_set():
            return
        self._stop.set()
        self._relay.join(2)
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        os.close(self._master)
        self.resets += 1
        self.power_on()

    def _pump(self) -> None:
        # Copy bytes both ways between the firmware's pty and the daemon's.
        while not self._stop.is_set():
            fds = [self._master] + ([self.plug.master] if self.plug.plugged else [])
            try:
                ready, _, _ = select.select(fds, [], [], 0.02)
            except (OSError, ValueError):
                continue
            for fd in ready:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    continue
                if fd == self._master:
                    if not self.plug.plugged:
                        self._overhear(data)
                    self.plug.write(data)
                else:
                    os.write(self._master, data)

    def _overhear(self, data: bytes) -> None:
        for got in self._tap.feed(data):
            if isinstance(got, Frame):
                self.unheard.append((got.type.name, message_fields(got.message)))

    def cards_sent_unplugged(self) -> list[int]:
        """The indices of the CARD frames the firmware sent while the cable was out: each
        card was in its flash log before it was framed (SPEC 4)."""
        return [int(str(f["index"])) for name, f in list(self.unheard) if name == "CARD"]

    def send(self, line: str) -> None:
        assert self.conn is not None
        self.conn.sendall(line.encode() + b"\n")

    def deal(self, deck_id: int, code: int) -> None:
        """A barcoded card leaves the shoe: read, then the exit sensor."""
        self.send(f"barcode {make_barcode(deck_id, code)}")
        self.send("exit")
        time.sleep(0.03)  # a dealer's pace; the sim lines are read in order either way

    def power_cut(self) -> None:
        self._stop.set()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        os.close(self._master)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.power_cut()
        self.server.close()
