"""The firmware's C stack, measured (issue 26 item 1): part of `cardshoe bench firmware`.

The real main.py runs, as on a board, on the unix port with a Pico's C stack
(hil/vboard/runtime/picostack.py: the stack limit at which a one-argument recursive function
at main.py's top level reaches depth 30, as on the stock rp2 build), its flash a littlefs2
image with a Pico's geometry. Its board is a scripted one (put in the build as
boards/unix.mpy, so `boards.load()` picks it): it hands the shoe, one main-loop pass at a
time, every host command (encoded by the firmware's own codec, under the shoe's key), RFID
reads and exits, the host's ACKs and RESEND_FROM, a dealer key and idle passes, ending with
MAINTENANCE. Before each pass the unused C stack is painted and after it the deepest byte
written is found (hil/vboard/runtime/stackmark.py): the high-water mark, C frames included
(littlefs, the collector, hashlib), which a sample of `micropython.stack_use()` would miss.

Printed per operation: the deepest use in bytes of this port, and the margin to the limit
(a Pico's 8 KB as calibrated) in bytes and in calls (a one-argument call costs the bytes
measured in the same run). While a module is imported the limit is higher by what the
unix port's 4 KB import path buffer costs beyond rp2's 128 bytes (picostack.py), so an
operation that imported is measured against that limit when it went deeper than the
plain one. 64-bit frames are larger than the RP2040's (about 390 bytes a call here, 270
there): the margin in calls is the figure that carries over to a Pico.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# The scripted board (MicroPython), compiled in as boards/unix.mpy. `OPS` below is the script.
BOARD = r'''
import struct, sys, time
import stackmark
import wire

KEY = b"K" * 32
SERIAL = 1001
_EV_NONE = 0

def _uid(c):
    return bytes((4, 7, c, 0xA0, 0xB1, 0xC2, c ^ 0x5A))

class Board:
    name = "bench"
    def __init__(self):
        self.readers = 1
        self.root = "/flash/"
        self.reset_cause = 1
        self.ev_buf = bytearray(32)
        self.ev_len = 0
        self.ev_arg = 0
        self.ev_on = 0
        self.ev_ms = 0
        self.enc = wire.Encoder(KEY, SERIAL)
        self.rx = wire.Receiver(KEY, SERIAL, from_shoe=True)
        self.out = bytearray(wire.OUT_SIZE)
        self.seq = 0          # the host's seq
        self.boot = 0
        self.shoe_seq = 0     # the last shoe frame seen
        self.pending = b""    # host bytes for the next read_serial
        self.events = []      # (kind, arg) for poll()
        self.label = "boot (main.py to the first pass)"
        self.script = self._script()
        self.high = {}
        self.order = []  # labels as first seen (this port's dicts keep no order)
        self.idle_until = 0
    def _frame(self, mtype, payload):
        self.seq += 1
        n = self.enc.encode(mtype, 0, 1, self.seq, payload, self.out)
        return bytes(self.out[:n])
    def _ack(self):
        return self._frame(0x81, struct.pack("<II", self.boot, self.shoe_seq))
    def _script(self):
        # Each operation in a pass of its own, then the host's ACK of what it sent in another.
        yield "PING", self._frame(0x86, struct.pack("<I", 7))
        yield "ACK", self._ack()
        yield "TIME", self._frame(0x85, struct.pack("<Q", 1795644000000))
        yield "CONFIG", self._frame(0x84, struct.pack("<HHHH", 2000, 300, 5000, 5))
        yield "ACK", self._ack()
        for part in range(4):
            p = bytearray(struct.pack("<IIBBBB", 5, 7, 1, part, 4, 13))
            for c in range(part * 13, part * 13 + 13):
                p += bytes((c, 7)) + _uid(c)
            label = "NEW_SHOE (manifest part)" if part < 3 else "NEW_SHOE (last part: the session starts)"
            yield label, self._frame(0x83, p)
            yield "ACK", self._ack()
        for c in range(12):
            self.events = [(1, _uid((c * 19) % 52)), (3, 0)]
            yield "card (RFID read and exit: logged, framed)", b""
            yield "ACK", self._ack()
        yield "CARDS_FROM (12 cards framed again from the log)", self._frame(0x89, struct.pack("<IH", 5, 1))
        yield "RESEND_FROM", self._frame(0x82, struct.pack("<II", self.boot, max(1, self.shoe_seq - 3)))
        yield "ACK", self._ack()
        yield "CLEAR", self._frame(0x88, struct.pack("<HH", 0x1F, 0xFFFF))
        yield "ACK", self._ack()
        self.events = [(4, 4)]
        yield "dealer key (END_SHOE: state saved)", b""
        yield "ACK", self._ack()
        self.idle_until = time.ticks_add(time.ticks_ms(), 1200)
        while time.ticks_diff(self.idle_until, time.ticks_ms()) > 0:
            yield "idle pass (heartbeat, resends, memory check)", b""
        yield "MAINTENANCE", self._frame(0x87, struct.pack("<I", 0x43544E4D))
    def _mark(self):
        # What the operation just done used, by the number of imports running (stackmark).
        levels = stackmark.take()
        if self.label not in self.high:
            self.order.append(self.label)
        old = self.high.setdefault(self.label, {})
        for level, deep in levels.items():
            old[level] = max(old.get(level, 0), deep)
    def _next(self):
        self._mark()
        try:
            label, data = next(self.script)
        except StopIteration:
            label, data = "after MAINTENANCE", b""
        self.label = label
        self.pending = data
    # -- the board interface --
    def start(self): pass
    def key_held(self): return False
    def close(self):
        self._mark()
        limit = stackmark.stack()[1]
        for label in self.order:
            levels = self.high[label]
            print("STACK", limit, ",".join("%d:%d" % kv for kv in sorted(levels.items())), label)
    def read_serial(self, buf):
        # A pass reads at most len(buf) bytes: an operation's frame may take several passes,
        # all measured as that operation (painted once, before its first).
        if not self.pending:
            self._next()
        n = min(len(buf), len(self.pending))
        buf[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n
    def write_serial(self, mv):
        for r in self.rx.feed(mv):
            if r == "ok":
                self.boot, self.shoe_seq = self.rx.boot, max(self.shoe_seq, self.rx.seq)
    def poll(self):
        if not self.events:
            return _EV_NONE
        kind, arg = self.events.pop(0)
        self.ev_ms = time.ticks_ms()
        if kind == 1:
            self.ev_buf[:len(arg)] = arg
            self.ev_len = len(arg)
            self.ev_arg = 0
        else:
            self.ev_arg = arg
        return kind
    def wait(self, ms):
        time.sleep_ms(min(ms, 20))
    def ready(self, boot): pass
    def led(self, mode): pass
    def set_debounce(self, ms): pass
    def wdt_start(self, ms): pass
    def wdt_feed(self): pass
'''

# Run as `-c` in the build's folder: the flash, the Pico stack, a calibration, main.py.
PRELUDE = r'''
import gc, os, struct, sys, vfs
from binascii import crc32
sys.path[:] = ["", "lib", RUNTIME]
import picostack, stackmark
sys.path.pop()
BS = 4096
class FileBlocks:
    def __init__(self, path, blocks):
        self.n = blocks
        self.f = open(path, "w+b")
        self.blank = b"\xff" * 256
        for _ in range(blocks * BS // 256):
            self.f.write(self.blank)
    def readblocks(self, b, buf, off=0):
        self.f.seek(b * BS + off); self.f.readinto(buf)
    def writeblocks(self, b, buf, off=None):
        self.f.seek(b * BS + (off or 0)); self.f.write(buf)
    def ioctl(self, op, arg):
        if op == 4: return self.n
        if op == 5: return BS
        if op == 6:
            self.f.seek(arg * BS)
            for _ in range(BS // 256): self.f.write(self.blank)
        return 0
bd = FileBlocks(IMG, 352)
vfs.VfsLfs2.mkfs(bd, progsize=256)
vfs.mount(vfs.VfsLfs2(bd, progsize=256), "/flash")
os.mkdir("/flash/data")
body = struct.pack("<4sI32s", b"CSI1", 1001, b"K" * 32)
with open("/flash/data/ident.bin", "wb") as f:
    f.write(body + struct.pack("<I", crc32(body)))
del body, f
gc.collect()
stackmark.watch(picostack.limit())
picostack.__dict__.clear()
del picostack
def calls(n):
    global deepest
    deepest = n
    calls(n + 1)
deepest = 0
try:
    calls(1)
except RuntimeError:
    pass
top, limit = stackmark.stack()
print("CALLS", deepest, top, limit)
del calls, deepest, top, limit
import machine
class _Machine:
    # A crash (main.py resets after one) ends the run, with the crash record's text.
    def __init__(self, real):
        self._real = real
    def __getattr__(self, name):
        return getattr(self._real, name)
    def reset(self):
        with open("/flash/data/crash.bin", "rb") as f:
            print("CRASHED", f.read()[20:52].rstrip(b"\0").decode())
        sys.exit(80)
sys.modules["machine"] = _Machine(machine)
del machine, _Machine
stackmark.paint()
execfile("main.py")
'''


#: The depth a one-argument recursion reaches at main.py's top level on the stock rp2 build
#: (v1.28, RPI_PICO; /work/shared/notes/rp2-port-facts.md), to which picostack is calibrated.
PICO_CALLS = 30

#: What picostack.py adds to the limit while a module is imported (its `_IMPORT_EXTRA`:
#: the unix port's 4,096-byte import path buffer less rp2's 128, and the shim's own frame).
IMPORT_EXTRA = 4096 - 128 + 400


@dataclass(frozen=True)
class StackUse:
    """The deepest C stack use of one operation (bytes from the stack's top), by how many
    imports were running (0: none; each allows IMPORT_EXTRA more), and the plain limit."""

    label: str
    levels: dict[int, int]
    limit: int

    def margin(self) -> int:
        """Bytes to the limit at the tightest point."""
        return min(self.limit + IMPORT_EXTRA * level - deep for level, deep in self.levels.items())

    @property
    def deepest(self) -> int:
        """The deepest use outside imports."""
        return self.levels.get(0, 0)


def measure(fw_root: Path, workdir: Path, heapsize: str = "256k") -> tuple[list[StackUse], int, int, int]:
    """Run main.py with the scripted board; returns the operations' stack use, the depth a
    one-argument recursion reached at the top level, the stack in use there and the limit."""
    from ..flashing import _tool
    from ..hil.vboard import xip

    import shutil

    runtime = Path(xip.__file__).resolve().parent / "runtime"
    fw_root = Path(shutil.copytree(fw_root, workdir / "stackfw"))  # its boards/unix.mpy is replaced
    board_src = workdir / "benchboard.py"
    board_src.write_text(BOARD)
    subprocess.run([_tool("mpy-cross"), "-s", "boards/unix.py", "-o", str(fw_root / "boards" / "unix.mpy"),
                    str(board_src)], check=True, capture_output=True)
    prelude = f"RUNTIME = {str(runtime)!r}\nIMG = {str(workdir / 'stack.img')!r}\n" + PRELUDE
    proc = subprocess.run([sys.executable, str(xip.__file__), "-X", f"heapsize={heapsize}", "-c", prelude],
                          cwd=fw_root, capture_output=True, text=True, timeout=600,
                          env={"CARDSHOE_BOARD": "unix", **_env()})
    uses: list[StackUse] = []
    calls = top = limit = 0
    for line in proc.stdout.splitlines():
        if line.startswith("STACK "):
            _, lim, levels, label = line.split(" ", 3)
            uses.append(StackUse(label, {int(k): int(v) for k, v in (x.split(":") for x in levels.split(","))},
                                 int(lim)))
        elif line.startswith("CALLS "):
            calls, top, limit = (int(x) for x in line.split()[1:])
    if proc.returncode != 0 or not uses or not calls:
        raise RuntimeError(f"stack benchmark failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return uses, calls, top, limit


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "MICROPYPATH"}


def report(uses: list[StackUse], calls: int, top: int, limit: int) -> list[str]:
    """Lines of figures: per operation the deepest use and the margin to a Pico's stack."""
    per_call = (limit - top) / calls
    lines = [f"C stack, deepest use per operation, with a Pico's limit (hil/vboard/runtime/picostack.py: a "
             f"one-argument recursion at main.py's top level reaches {PICO_CALLS} calls, as on the stock rp2 "
             f"build's 8 KB of stack): limit {limit} bytes from the stack's top; a call costs {per_call:.0f} bytes "
             f"on this 64-bit port (about 270 on the RP2040), so margins are given in calls too"]
    worst: StackUse | None = None
    for u in uses:
        margin = u.margin()
        inside = "".join(f"; {deep} with {level} import{'s' if level > 1 else ''} running"
                         for level, deep in sorted(u.levels.items()) if level)
        lines.append(f"  {u.label}: deepest {u.deepest} bytes{inside}; margin {margin} bytes = "
                     f"{margin / per_call:.1f} calls")
        if worst is None or margin < worst.margin():
            worst = u
    if worst is not None:
        lines.append(f"  smallest margin: {worst.label}, {worst.margin()} bytes = {worst.margin() / per_call:.1f} "
                     f"calls (of the {PICO_CALLS} a Pico's main.py has at its top level)")
    return lines
