"""MicroPython-side helpers for the firmware tests (runs under the real `micropython`).

A littlefs2 filesystem on a block device (a file), and a scripted board that
implements the board interface of boards/unix.py. The host side is in Python: the
tests decode what the shoe wrote (the board prints it in hex as written) with the host codec and
hand it host frames as bytes.
"""

from app import mem  # noqa: F401  first, as in main.py: the arena before other modules load

import os
import struct
import vfs


KEY = b"K" * 32
SERIAL = 1001


class BlockDev:
    """A littlefs block device in RAM, or over a file when `path` is given (persists)."""

    def __init__(self, blocks=96, bs=512, path=None):
        self.bs = bs
        self.n = blocks
        self.refuse = False  # a flash that refuses every program and erase (EIO)
        self.erases = 0  # blocks erased, and programs (writeblocks calls), for wear figures
        self.programs = 0
        self.f = None
        self.blank = None
        if path is None:
            self.data = bytearray(bs * blocks)
        else:
            try:
                self.f = open(path, "r+b")
            except OSError:
                self.f = open(path, "w+b")
                blank = b"\xff" * bs
                for _ in range(blocks):
                    self.f.write(blank)
                self.f.flush()
            self.blank = b"\xff" * bs  # made once: an erase must not need the heap

    def readblocks(self, block, buf, off=0):
        a = block * self.bs + off
        if self.f is None:
            buf[:] = self.data[a : a + len(buf)]
        else:
            self.f.seek(a)
            self.f.readinto(buf)

    def writeblocks(self, block, buf, off=None):
        if self.refuse:
            # EIO as a block device reports it to littlefs (a return code, as rp2.Flash's
            # C driver would): an exception raised here would unwind through littlefs's
            # C code and leave its open-file list broken.
            return -5
        a = block * self.bs + (off or 0)
        if off is None:  # erase implied
            self.erases += 1
        self.programs += 1
        if self.f is None:
            self.data[a : a + len(buf)] = buf
        else:
            self.f.seek(a)
            self.f.write(buf)

    def ioctl(self, op, arg):
        if op == 4:
            return self.n
        if op == 5:
            return self.bs
        if op == 6:
            if self.refuse:
                return -5
            self.erases += 1
            a = arg * self.bs
            if self.f is None:
                for i in range(a, a + self.bs):
                    self.data[i] = 0xFF
            else:
                self.f.seek(a)
                self.f.write(self.blank)
            return 0
        return 0


def mount(bd, point="/flash", fresh=True, progsize=32):
    """Mount littlefs2 on `bd` at `point` (formatting when fresh); returns the root prefix.

    The Pico mounts its 4 KiB blocks with progsize 256, which makes every open file
    cost about 1.1 KB of heap (the cache is 4 x progsize)."""
    if fresh:
        vfs.VfsLfs2.mkfs(bd, progsize=progsize)
    vfs.mount(vfs.VfsLfs2(bd, progsize=progsize), point)
    return point + "/"


def unmount(point="/flash"):
    vfs.umount(point)


def provision(root, serial=SERIAL, key=KEY):
    from app.boot import ident_bytes

    try:
        os.mkdir(root + "data")
    except OSError:
        pass
    with open(root + "data/ident.bin", "wb") as f:
        f.write(ident_bytes(serial, key))


class ScriptBoard:
    """The board interface driven by a test: queue events and host bytes, read `out`."""

    name = "script"

    def __init__(self, root):
        self.readers = 3
        self.root = root
        self.reset_cause = 1
        self.ev_buf = bytearray(32)
        self.ev_len = 0
        self.ev_arg = 0
        self.ev_on = 0
        self.ev_ms = 0
        self.events = []
        self.host = bytearray(300)  # host bytes waiting, preallocated: the heap is 64 KB
        self.host_len = 0
        self.host_pos = 0
        self.leds = []
        self.debounce = None
        self.ready_boot = None

    def start(self):
        pass

    def close(self):
        pass

    def key_held(self):
        return False

    def read_serial(self, buf):
        n = 0
        while n < len(buf) and self.host_pos < self.host_len:
            buf[n] = self.host[self.host_pos]
            self.host_pos += 1
            n += 1
        return n

    def write_serial(self, mv):
        # Printed at once, in hex, in small pieces: a growing buffer of everything the
        # shoe wrote would fragment the 64 KB heap the firmware runs in.
        import sys
        from binascii import hexlify

        w = sys.stdout.buffer.write
        w(b"OUT ")
        for i in range(0, len(mv), 32):
            w(hexlify(mv[i : i + 32]))
        w(b"\n")

    def wait(self, ms):
        pass

    def ready(self, boot):
        self.ready_boot = boot

    def led(self, mode):
        self.leds.append(mode)

    def set_debounce(self, ms):
        self.debounce = ms

    def wdt_start(self, ms):
        pass

    def wdt_feed(self):
        pass

    def poll(self):
        import time

        if not self.events:
            return 0
        ev = self.events.pop(0)
        kind = ev[0]
        self.ev_ms = time.ticks_ms()
        if kind in (1, 2):
            data = ev[1]
            self.ev_buf[: len(data)] = data
            self.ev_len = len(data)
            self.ev_arg = ev[2] if len(ev) > 2 else 0
        elif kind == 4:
            self.ev_arg = ev[1]
        elif kind == 5:
            self.ev_arg = ev[1]
            self.ev_on = ev[2]
        return kind

    # -- helpers for tests --------------------------------------------------
    def rfid(self, uid):
        self.events.append((1, uid))

    def barcode(self, text):
        self.events.append((2, text))

    def exit(self):
        self.events.append((3,))

    def key(self, code):
        self.events.append((4, code))

    def fault(self, code, on):
        self.events.append((5, code, on))


def uid_of(code, deck=7):
    """The test decks' RFID UID of card `code`: 7 bytes (an NTAG), unique per deck."""
    return bytes((0x04, deck, code, 0xA0, 0xB1, 0xC2, code ^ 0x5A))


def barcode_of(deck_id, code):
    from app.barcode import barcode_check

    text = b"CS%08X" % deck_id + bytes((b"23456789TJQKA"[code // 4], b"CDHS"[code % 4]))
    check = barcode_check(text, 12)
    return text + bytes((b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[check],))


def new_shoe(root, fw=b"\x01" * 32):
    """A booted Shoe on a ScriptBoard that has said HELLO."""
    from app.run import boot_shoe

    board = ScriptBoard(root)
    shoe = boot_shoe(board, fw)
    assert shoe is not None
    shoe.hello()
    return shoe, board


def spin(shoe, n=20):
    for _ in range(n):
        shoe.step()


def out(board):
    """Nothing to do: the board prints what the shoe writes as `OUT <hex>` lines when it
    writes it (kept so the tests read as before)."""


def host(board):
    """Bytes from the host: the next line of stdin, in hex (the test passes them there,
    not in the test code, and they are decoded into the board's preallocated buffer)."""
    import sys

    board.host_len = board.host_pos = 0
    stdin = sys.stdin.buffer
    pair = bytearray(2)
    while True:
        if stdin.readinto(pair, 1) != 1 or pair[0] == 10:
            return
        stdin.readinto(memoryview(pair)[1:], 1)
        board.host[board.host_len] = (_hx(pair[0]) << 4) | _hx(pair[1])
        board.host_len += 1


def _hx(c):
    return c - 48 if c < 58 else (c | 32) - 87
