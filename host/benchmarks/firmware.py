"""`cardshoe bench firmware`: the firmware's heap and time per card over a full shoe (unix port).

The firmware is compiled with mpy-cross as `cardshoe flash` does and run in-process
under `micropython` (64 KB heap by default) on a littlefs2 image, booted the way
main.py boots it (`app.run.boot_shoe`): a 52-card RFID shoe is loaded and dealt
through the board interface, each card a read then an exit, with the host's ACK given
after every frame. Printed: the heap the loaded code takes (measured in a second process
that only loads it), the heap in use after boot, the peak heap in use while dealing (live
objects, sampled after every card with a collection), the bytes allocated per card
(garbage included: the collector off for one card at a time, 8 cards of a second shoe),
and the time from the read to the card frame written to the serial port (median, worst).
Last, the deepest C stack use of the boot, every host command, a card and an idle pass,
and the margin to a Pico's stack (`cardshoe.benchmarks.firmware_stack`).
Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

_CODE = r"""
import gc
gc.collect()
a = gc.mem_alloc()
from app import mem
from app import run
gc.collect()
r = gc.mem_alloc()
from app.store import Store
from app.deck import Deck
run.load_shoe()
gc.collect()
b = gc.mem_alloc()
import app.boot
gc.collect()
c = gc.mem_alloc()
import app.fwhash
gc.collect()
print('CODE', b - r, c - b, gc.mem_alloc() - c, r - a - len(mem._arena))
"""

_SETUP_BOARD = r"""
import gc, sys, time, os, struct, vfs, micropython
from binascii import crc32
gc.collect()
base0 = gc.mem_alloc()

# The flash first, as a board has it mounted before main.py runs.
BS = 4096
class FileBlocks:
    def __init__(self, path, blocks):
        self.n = blocks
        self.f = open(path, 'w+b')
        self.blank = b'\xff' * 256   # an erase writes this BS // 256 times: no block-sized buffer
        for _ in range(blocks * BS // 256):
            self.f.write(self.blank)
        self.erases = 0      # block erases and programs (writeblocks calls), and bytes programmed
        self.programs = 0
        self.programmed = 0
    def readblocks(self, b, buf, off=0):
        self.f.seek(b * BS + off); self.f.readinto(buf)
    def writeblocks(self, b, buf, off=None):
        if off is None: self.erases += 1
        self.programs += 1; self.programmed += len(buf)
        self.f.seek(b * BS + (off or 0)); self.f.write(buf)
    def ioctl(self, op, arg):
        if op == 4: return self.n
        if op == 5: return BS
        if op == 6:
            self.erases += 1
            self.f.seek(arg * BS)
            for _ in range(BS // 256): self.f.write(self.blank)
        return 0

"""

_SETUP_FLASH = r"""
bd = FileBlocks(IMG, PICO_BLOCKS)
vfs.VfsLfs2.mkfs(bd, progsize=256)
vfs.mount(vfs.VfsLfs2(bd, progsize=256), '/flash')   # 4 KiB blocks, progsize 256: as the Pico's _boot.py
os.mkdir('/flash/data')
body = struct.pack('<4sI32s', b'CSI1', 1001, b'K' * 32)   # data/ident.bin as `cardshoe flash` writes it
with open('/flash/data/ident.bin', 'wb') as f:
    f.write(body + struct.pack('<I', crc32(body)))
del body
gc.collect()
main_start = gc.mem_alloc()   # what a board has in use when main.py starts: its filesystem is mounted
from app import mem   # first, as in main.py
arena = len(mem._arena)

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
gc.collect()
before_boot = gc.mem_alloc()
from app import run
shoe = run.boot_shoe(board, b'\x00' * 32)
assert shoe is not None
shoe.hello()
def uid(c):
    return bytes((4, 7, c, 0xA0, 0xB1, 0xC2, c ^ 0x5A))
U = bytearray(52 * 7)   # every card's UID, made before measuring: the driver allocates nothing per card
for c in range(52):
    U[c * 7:c * 7 + 7] = uid(c)
p = bytearray(227)
def load(shoe_no):
    for part in range(4):
        struct.pack_into('<IIBBBB', p, 0, shoe_no, 7, 1, part, 4, 13)
        o = 12
        for c in range(part * 13, part * 13 + 13):
            p[o] = c; p[o + 1] = 7; p[o + 2:o + 9] = U[c * 7:c * 7 + 7]; o += 9
        assert shoe.command(0x83, memoryview(p)[:o], o) == (0, 0)
    shoe.step()
    shoe.outbox.ack(shoe.outbox.next_seq - 1)
def deal(code):
    ev = board.ev_buf
    for i in range(7):
        ev[i] = U[code * 7 + i]
    board.ev_len = 7; board.ev_arg = 0
    board.pending = 1
    while board.pending or board.armed:
        shoe.step()
"""

_LINKED = r"""
load(5)
# The steady state with the link: each card's frame, then the host's ACK of it read from the
# serial line by the shoe's link (decoded, tag checked, window moved, outbox freed). The ACK
# is encoded between the two counts (the host's work, not the shoe's). Five cards first
# (views made once per frame length, a log segment opened), then 20 counted: four segments.
import wire
henc = wire.Encoder(b'K' * 32, 1001)
ackp = bytearray(8)
ackf = bytearray(wire.OUT_SIZE)
def count(f, *a):
    gc.collect(); gc.disable(); a0 = gc.mem_alloc()
    f(*a)
    d = gc.mem_alloc() - a0
    gc.enable()
    return d
linked = 0
for c in range(25):
    d = count(deal, (c * 19 + 9) % 52)
    struct.pack_into('<II', ackp, 0, shoe.store.boot, shoe.outbox.next_seq - 1)
    an = henc.encode(0x81, 0, 1, c + 1, ackp, ackf)
    d += count(shoe.link.feed, ackf, an)
    assert shoe.outbox.count == 0, 'the ACK did not free the card frame'
    if c >= 5:
        linked += d
hmac = count(shoe.encoder.mac.digest, ackp)
print('LINKED', linked // 20, hmac)
"""

_HEAP = r"""
load(5)
gc.collect()
after_boot = gc.mem_alloc()
free_boot = gc.mem_free()
micropython.mem_info()   # its "max free sz" (in blocks): the largest hole, read by the host
peak = after_boot
times = []
for c in range(52):
    deal((c * 19) % 52)
    times.append(time.ticks_diff(board.t_written, board.t_read))
    shoe.outbox.ack(shoe.outbox.next_seq - 1)
    gc.collect()
    m = gc.mem_alloc()
    if m > peak:
        peak = m
dealt_first = shoe.deck.dealt
logged_first = shoe.store.logged
gc.collect()
free_dealt = gc.mem_free()
micropython.mem_info()   # before the next shoe, which may fail
# A second shoe for the allocation count: the collector off for one card at a time
# (from the read to the frame written), so the count holds every allocation, garbage too.
load(6)
allocated = 0
for c in range(8):
    gc.collect(); gc.disable(); a0 = gc.mem_alloc()
    deal((c * 19 + 1) % 52)
    allocated += gc.mem_alloc() - a0
    gc.enable()
    shoe.outbox.ack(shoe.outbox.next_seq - 1)
per_card = allocated // 8
times.sort()
print('RESULT', base0, before_boot, arena, after_boot, peak, per_card, times[len(times) // 2], times[-1], dealt_first, logged_first, main_start)
print('FREE', free_boot, free_dealt, struct.calcsize('P') * 4)
"""


# Flash wear: the firmware's files on the flash first (as `cardshoe flash` puts them on a
# board without a ROM partition: blocks the card log's wear never reaches, as littlefs
# levels wear over the free blocks only), then one shoe, then SHOES more, each a NEW_SHOE
# (manifest, state, a new log) and 52 cards, every frame ACKed.
_WEAR = r"""
# The firmware's files, as `cardshoe flash` puts them on a board without a ROM partition:
# they hold blocks the card log's wear never reaches (littlefs levels wear over free blocks).
for rel in FILES:
    parts = rel.split('/')
    for k in range(1, len(parts)):
        try: os.mkdir('/flash/' + '/'.join(parts[:k]))
        except OSError: pass
    with open(FW + '/' + rel, 'rb') as src, open('/flash/' + rel, 'wb') as dst:
        while True:
            chunk = src.read(512)
            if not chunk: break
            dst.write(chunk)
    del src, dst, chunk
del FILES, FW
gc.collect()
load(5)
w0 = (bd.erases, bd.programs, bd.programmed)
for c in range(52):
    deal((c * 19) % 52)
    shoe.outbox.ack(shoe.outbox.next_seq - 1)
one = (bd.erases - w0[0], bd.programs - w0[1], bd.programmed - w0[2])
e0 = bd.erases
p0 = array('I', bd.per)
for k in range(SHOES):
    load(100 + k)
    for c in range(52):
        deal((c * 7 + k) % 52)
        shoe.outbox.ack(shoe.outbox.next_seq - 1)
most = max(bd.per[i] - p0[i] for i in range(PICO_BLOCKS))
print('WEAR', one[0], one[1], one[2], bd.erases - e0, SHOES * 52, os.statvfs('/flash')[3], PICO_BLOCKS, most)
"""



# The wear run's block device also counts erases per block.
_PER_BLOCK = r"""
from array import array
class FileBlocks(FileBlocks):
    def __init__(self, path, blocks):
        super().__init__(path, blocks)
        self.per = array('I', [0] * blocks)
    def writeblocks(self, b, buf, off=None):
        if off is None: self.per[b] += 1
        super().writeblocks(b, buf, off)
    def ioctl(self, op, arg):
        if op == 6: self.per[arg] += 1
        return super().ioctl(op, arg)
"""
_SETUP = _SETUP_BOARD + _SETUP_FLASH


def main(argv: Sequence[str]) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(prog="cardshoe bench firmware", description=__doc__.split("\n\n")[0])
    parser.add_argument("--heapsize", default="64k", help="micropython -X heapsize (default 64k, as the tests)")
    parser.add_argument("--shoes", type=int, default=100, help="shoes dealt for the flash wear figures (default 100)")
    args, _ = parser.parse_known_args(list(argv))
    from ..flashing import _tool, build, romfs_image
    from ..hil.vboard import xip

    with tempfile.TemporaryDirectory(prefix="cardshoe-bench-") as tmp:
        fw = build(Path(tmp) / "fw")
        img = Path(tmp) / "flash.img"
        files = sorted(str(p.relative_to(fw.root)) for p in fw.root.rglob("*") if p.is_file())
        geometry = "PICO_BLOCKS = %d\nFW = %r\n" % (PICO_BLOCKS, str(fw.root))
        # The build's tree as a board's root: imported from the current folder, modules keep
        # short names (app/shoe.mpy) as on a board, not this run's temporary path, which each
        # would keep as a qstr (its length, and so the figures, would vary with TMPDIR).
        in_ram = ("import sys, os\nos.chdir(%r)\nsys.path[:] = ['', 'lib']\nIMG = %r\n" % (
            str(fw.root), str(img))) + geometry
        # The flash wear run: the firmware's files on the flash too (as on a stock Pico), then
        # many shoes; in a larger heap, as it holds the file list (its heap is not measured).
        for_wear = in_ram + "FILES = %r\nSHOES = %d\n" % (files, args.shoes)
        # The same build as the ROMFS image `cardshoe flash` deploys to a board with a ROM
        # partition, mapped outside the heap as the virtual board maps its partition
        # (cardshoe.hil.vboard.xip) and mounted at /rom: imports run the bytecode in place.
        rom = romfs_image(fw, Path(tmp))
        in_rom = ("import sys, os, vfs, uctypes\n"
                  "vfs.mount(vfs.VfsRom(uctypes.bytearray_at(int(os.getenv('VBOARD_ROMFS_ADDR'), 16), "
                  "int(os.getenv('VBOARD_ROMFS_SIZE')))), '/rom')\n"
                  "sys.path[:0] = ['/rom', '/rom/lib']\nIMG = %r\n" % str(img)) + geometry

        xip_launcher = str(xip.__file__)

        def run(prelude: str, script: str, in_place: bool, heap: str = args.heapsize) -> subprocess.CompletedProcess[str]:
            head = [sys.executable, xip_launcher] if in_place else [_tool("micropython")]
            env = dict(os.environ, VBOARD_ROMFS=str(rom)) if in_place else None
            return subprocess.run([*head, "-X", f"heapsize={heap}", "-c", prelude + script],
                                  capture_output=True, text=True, timeout=600, env=env)

        runs = [run(in_ram, _CODE, False), run(in_ram, _SETUP + _HEAP, False), run(in_rom, _CODE, True), run(in_rom, _SETUP + _HEAP, True),
                run(for_wear, _SETUP_BOARD + _PER_BLOCK + _SETUP_FLASH + _WEAR, False, "512k"),
                # the allocation with the link: a larger heap for the host's encoder (the count is
                # of bytes allocated, the collector off: the heap's size does not change it)
                run(in_ram, _SETUP + _LINKED, False, "128k")]
        rom_size = rom.stat().st_size
        from .firmware_stack import measure as measure_stack, report as stack_report

        try:
            stack_lines = stack_report(*measure_stack(fw.root, Path(tmp)))
        except RuntimeError as exc:
            stack_lines = [f"C stack: not measured: {exc}"]
    lines = [next((x for x in p.stdout.splitlines() if x.startswith(("RESULT ", "CODE "))), None) for p in runs[:4]]
    wear_line = next((x for x in runs[4].stdout.splitlines() if x.startswith("WEAR ")), None)
    for label, p in (("code in RAM", runs[1]), ("code in ROMFS", runs[3])):
        print(free_heap(label, p.stdout))
    if any(p.returncode != 0 for p in runs) or None in lines or wear_line is None:
        print("firmware benchmark failed:\n" + "\n".join(p.stdout + p.stderr for p in runs))
        return 1
    code, boot_code, hash_code, run_code = (int(x) for x in lines[0].split()[1:])  # type: ignore[union-attr]
    base, before_boot, arena, boot, peak, per_card, median_us, worst_us, dealt, logged, main_start = (
        int(x) for x in lines[1].split()[1:]  # type: ignore[union-attr]
    )
    rom_code = int(lines[2].split()[1])  # type: ignore[union-attr]
    rom_fields = [int(x) for x in lines[3].split()[1:]]  # type: ignore[union-attr]
    rom_peak, rom_main_start, rom_dealt = rom_fields[4], rom_fields[10], rom_fields[8]
    kb = 1024
    print(f"micropython -X heapsize={args.heapsize}, firmware compiled with mpy-cross, littlefs2 image")
    print(f"code loaded while streaming (app + wire codec, .mpy in RAM): {code / kb:.1f} KB; "
          f"boot-only code, loaded then dropped: boot {boot_code / kb:.1f} KB, firmware hash {hash_code / kb:.1f} KB, "
          f"loader (app.run, with app.mem) {run_code / kb:.1f} KB")
    print(f"buffer arena {arena} bytes")
    print(f"heap in use before the firmware loads (interpreter and this benchmark's driver): {base / kb:.1f} KB")
    print(f"heap in use when main.py starts (littlefs mounted, data/ident.bin written): {main_start / kb:.1f} KB")
    print(f"heap in use with the arena and the bench's board: {before_boot / kb:.1f} KB")
    print(f"heap in use after boot and a loaded 52-card manifest: {boot / kb:.1f} KB "
          f"(firmware data, littlefs and board objects: {(boot - base - code) / kb:.1f} KB)")
    print(f"peak heap in use while dealing a 52-card shoe: {peak / kb:.1f} KB, "
          f"of which the firmware's: {(peak - base) / kb:.1f} KB with code, {(peak - base - code) / kb:.1f} KB without")
    print(f"firmware's peak heap counted from main.py's start (as a board measures it): {(peak - main_start) / kb:.1f} KB "
          f"with the code loaded into RAM (.mpy files on littlefs, as `cardshoe flash` deploys to a board without a ROM partition)")
    print(f"firmware's peak heap with the code run in place from its ROMFS image ({rom_size} bytes, as `cardshoe flash` "
          f"deploys it to a board with a ROM partition): {(rom_peak - rom_main_start) / kb:.1f} KB, of which code "
          f"{rom_code / kb:.1f} KB ({rom_dealt} cards dealt)")
    linked, hmac = next((x.split()[1:3] for x in runs[5].stdout.splitlines() if x.startswith("LINKED ")), ["?", "?"])
    print(f"allocated per card (garbage included): {per_card} bytes, read to frame written; "
          f"{linked} bytes with the host's ACK of it read from the line (the steady state: 20 cards, "
          f"the collector off); one HMAC-SHA256 allocates {hmac} bytes (two sha256 objects, two digests: "
          f"MicroPython's sha256 can be neither reset nor copied), and a log segment is opened every 5 cards")
    print(f"time per card, read to frame written: median {median_us} us, worst {worst_us} us")
    print(f"cards dealt in the measured shoe {dealt}, in its flash log {logged}")
    erases, programs, programmed, shoe_erases, shoe_cards, free_blocks, blocks, most = (
        int(x) for x in wear_line.split()[1:]
    )
    print(f"flash per card, dealing one shoe (Pico geometry: {blocks} blocks of 4 KiB, progsize 256): "
          f"{erases / dealt:.3f} erases, {programs / dealt:.2f} programs ({programmed // dealt} bytes)")
    erases_per_card = shoe_erases / shoe_cards
    print(f"flash per card over {shoe_cards // 52} shoes, NEW_SHOE included: {erases_per_card:.3f} erases "
          f"({shoe_erases} erases for {shoe_cards} cards; the most any block took: {most}, "
          f"the mean over the free blocks: {shoe_erases / max(free_blocks, 1):.1f})")
    print(flash_life(erases_per_card, free_blocks))
    print("\n".join(stack_lines))
    return 0


def free_heap(label: str, out: str) -> str:
    """The free heap after boot and a loaded manifest, and after dealing a shoe, with the
    largest hole each time (a littlefs file needs one of about 1.2 KB), from a run's output."""
    free = next((x.split()[1:] for x in out.splitlines() if x.startswith("FREE ")), None)
    holes = [int(x.rsplit(":", 1)[1]) for x in out.splitlines() if "max free sz:" in x]
    if free is None or len(holes) < 2:
        return f"free heap ({label}): not measured (the run stopped before the first shoe was dealt)"
    boot, dealt, block = (int(x) for x in free)
    return (f"free heap ({label}): {boot} bytes after boot and a loaded manifest (largest hole {holes[0] * block}), "
            f"{dealt} after dealing a shoe (largest hole {holes[1] * block})")


#: The wear budget the issue sets: a busy table around the clock, NOR flash's rated cycles.
CARDS_PER_DAY = 30_000
CYCLES_PER_BLOCK = 100_000
PICO_BLOCKS = 352  # the Pico's 1408 KiB littlefs (hil/vboard/flash.py PICO_FLASH_SIZE)


def flash_life(erases_per_card: float, free_blocks: int) -> str:
    """Years until the free blocks (over which littlefs levels wear) reach their rated cycles."""
    per_day = erases_per_card * CARDS_PER_DAY
    years = free_blocks * CYCLES_PER_BLOCK / per_day / 365 if per_day else float("inf")
    return (f"flash life at {CARDS_PER_DAY:,} cards/day and {CYCLES_PER_BLOCK:,} cycles per block: "
            f"{free_blocks} free blocks x {CYCLES_PER_BLOCK:,} / ({erases_per_card:.3f} x {CARDS_PER_DAY:,} "
            f"erases/day) = {years:.1f} years")


