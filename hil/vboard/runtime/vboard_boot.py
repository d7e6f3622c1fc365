# mypy: ignore-errors
# This file runs under the MicroPython unix port, not CPython: it is the virtual board's
# boot ROM. The host side (cardshoe.hil.vboard) starts it as
#   micropython -X heapsize=N -i vboard_boot.py
# (through xip.py, which maps the ROM partition, when the board has one)
# with VBOARD_* variables in the environment, or as an offline flash tool:
#   micropython vboard_boot.py --tool (format|check|ls|get|put) ...
#
# Boot: mount the littlefs2 image at "/" (replacing the host filesystem, so nothing the
# firmware or mpremote does can touch the host), give `machine` the reset functions and
# the watchdog a board has, run main.py like a board, then `-i` drops into the REPL.
#
# ^C: a Pico's own start-up is C code with the interrupt character off; MicroPython
# turns it on only to run main.py (pyexec). The unix port turns it on for this whole
# script, so it is turned off first and back on for main.py. A KeyboardInterrupt
# scheduled before is raised at the first jump, the `if`, after kbd_intr(-1) has run (a
# call raises nothing pending): so at most one, inside the `try`, and none after it, as ^C
# is then data. (No retry by recursion: firmware/README.md, "Stack".)
#
# The C stack: a Pico's (runtime/picostack.py), for main.py and the REPL after it, unless
# VBOARD_STACK=unix.
import micropython

try:
    micropython.kbd_intr(-1)
    if micropython:
        pass
except:  # noqa: E722
    micropython.kbd_intr(-1)
import os
import sys
import vfs

_BLOCK_ERASED = 0xFF


class FileBlockDevice:
    """A flash chip on a file: littlefs's extended block device protocol.

    Writes go straight to the file with one write() system call each (MicroPython's
    files are unbuffered), so a SIGKILL loses nothing already written: like a flash
    program that completed before the power went.
    """

    def __init__(self, path, block_size, wear=None):
        self._f = open(path, "r+b")
        self._bs = block_size
        self._f.seek(0, 2)
        self._count = self._f.tell() // block_size
        self._erased = bytes([_BLOCK_ERASED]) * block_size
        # Erases and programs since the image was made, in `wear` (`<image>.wear`, two u64
        # LE), kept across power cuts: the bench reads them (FlashImage.wear). Opened here,
        # while the host filesystem is still mounted.
        self._w = None
        self._wb = bytearray(16)
        if wear is not None:
            try:
                self._w = open(wear, "r+b")
                self._w.readinto(self._wb)
            except OSError:
                self._w = open(wear, "w+b")
                self._w.write(self._wb)

    def _count_op(self, erase):
        w = self._w
        if w is None:
            return
        b = self._wb
        i = 0 if erase else 8
        while True:  # a little-endian u64 counter incremented in place: no allocation
            b[i] = (b[i] + 1) & 0xFF
            if b[i] or i in (7, 15):
                break
            i += 1
        w.seek(0)
        w.write(b)

    def readblocks(self, block, buf, offset=0):
        self._f.seek(block * self._bs + offset)
        got = self._f.readinto(buf)
        if got != len(buf):
            raise OSError(5)  # EIO: the image is shorter than the geometry says

    def writeblocks(self, block, buf, offset=None):
        # offset None is the simple protocol (erase then program a whole block).
        if offset is None:
            offset = 0
            self._count_op(True)
        self._count_op(False)
        self._f.seek(block * self._bs + offset)
        self._f.write(buf)

    def ioctl(self, op, arg):
        if op == 4:  # block count
            return self._count
        if op == 5:  # block size
            return self._bs
        if op == 6:  # erase
            self._count_op(True)
            self._f.seek(arg * self._bs)
            self._f.write(self._erased)
            return 0
        if op in (1, 2, 3):  # init, deinit, sync: nothing is buffered
            return 0
        return None


_ROMFS_MAGIC = b"\xd2\xcd\x31"  # a ROMFS image starts so (mpremote's VfsRomWriter)
_ROM_BLOCK = 4096


class _Vfs:
    """`vfs` with the `rom_ioctl` of a board with a ROMFS partition (the unix port has
    none), in the style of the ports whose partition is a buffer: op 1 the number of
    partitions, 2 the partition (the mapped memory, so `mpremote romfs query` and
    `vfs.VfsRom(vfs.rom_ioctl(2, 0))` work as on a board), 3 erase a range for writing,
    4 write, 5 writing done, 6 the erase block size. The memory is the partition file
    mapped by the launcher (cardshoe.hil.vboard.xip), outside the heap: writing it writes
    the file, as `mpremote romfs deploy` writes flash."""

    def __init__(self, real, mem):
        self._real = real
        self._mem = mem
        self._erased = b"\xff" * 256
        self._block = _ROM_BLOCK  # the module's globals are deleted after boot

    def __getattr__(self, name):
        return getattr(self._real, name)

    def rom_ioctl(self, op, *args):
        if op == 1:
            return 1
        if op != 6 and (not args or args[0] != 0):
            return -19  # ENODEV: there is one partition, 0
        mem = self._mem
        if op == 2:
            return mem
        if op == 3:  # (id, length) or (id, offset, length): erase, returns the write granularity
            offset, length = (0, args[1]) if len(args) == 2 else (args[1], args[2])
            if offset < 0 or offset + length > len(mem):
                return -22  # EINVAL
            for at in range(offset, offset + length, 256):
                n = min(256, offset + length - at)
                mem[at : at + n] = self._erased[:n]
            return 4
        if op == 4:  # (id, offset, buf)
            offset, buf = args[1], args[2]
            if offset < 0 or offset + len(buf) > len(mem):
                return -22
            mem[offset : offset + len(buf)] = buf
            return 0
        if op == 5:
            return 0
        if op == 6:
            return self._block
        return -22


def _rom(env):
    """Mount the ROM partition at /rom when it holds an image; True if mounted."""
    address = env("VBOARD_ROMFS_ADDR")
    if not address:
        return False  # a board built without a ROMFS partition
    import uctypes

    mem = uctypes.bytearray_at(int(address, 16), int(env("VBOARD_ROMFS_SIZE")))
    sys.modules["vfs"] = _Vfs(vfs, mem)
    if bytes(mem[:3]) != _ROMFS_MAGIC:
        return False  # erased, or never deployed
    try:
        vfs.mount(vfs.VfsRom(mem), "/rom")
    except OSError as exc:  # a torn image: the port boots without /rom, as a board does
        print("vboard: ROMFS mount failed: OSError %s" % exc)
        return False
    return True


def _lfs(image, block_size, wear=None):
    return vfs.VfsLfs2(FileBlockDevice(image, block_size, wear), progsize=256)


class _Machine:
    """`machine` as the unix port has it, plus what a board has and the unix port lacks.

    reset()/soft_reset() cannot end the process from a script started with `-i` (the
    port drops into the REPL instead), so they ask the host side by signal: the board
    (our parent's relay) sees SIGUSR1 as a hard reset and SIGUSR2 as a soft reset.
    """

    def __init__(self, real, uid):
        self._real = real
        self._uid = uid
        self._wdt = _Wdt  # the module's globals are deleted after boot

    def __getattr__(self, name):
        return getattr(self._real, name)

    def _signal(self, sig):
        # The module's globals are deleted after boot: import what is needed here.
        import os
        import time

        os.system("kill -%s $PPID" % sig)
        while True:  # the board kills us; never return into the caller
            time.sleep(1)

    def reset(self):
        self._signal("USR1")

    def soft_reset(self):
        self._signal("USR2")

    def unique_id(self):
        return self._uid

    def WDT(self, id=0, timeout=5000):
        return self._wdt(timeout)


class _Wdt:
    """machine.WDT as on rp2 (timeout in ms, at most 8388 as on the RP2040; no way to stop
    it through `machine`), served by the launcher (cardshoe.hil.vboard.xip): its two u32
    words, outside the heap, are the timeout (0 = not armed) and a feed counter."""

    def __init__(self, timeout):
        import os
        import uctypes

        if not 1 <= timeout <= 8388:
            raise ValueError("timeout")
        address = os.getenv("VBOARD_WDT_ADDR")
        self._w = None
        if address:  # without the launcher there is no watchdog
            self._w = uctypes.struct(int(address, 16), {"timeout": uctypes.UINT32 | 0, "feeds": uctypes.UINT32 | 4})
            self.feed()
            self._w.timeout = timeout

    def feed(self):
        w = self._w
        if w is not None:
            w.feeds = (w.feeds + 1) & 0xFFFFFF

    def stop(self):
        # What the firmware does on a Pico by clearing the chip's watchdog CTRL.ENABLE.
        if self._w is not None:
            self._w.timeout = 0


def _boot():
    env = os.getenv
    image = env("VBOARD_IMAGE")
    block_size = int(env("VBOARD_BLOCK_SIZE") or "4096")
    try:
        fs = _lfs(image, block_size, image + ".wear")
    except OSError as exc:
        fs = None
        err = exc
    vfs.umount("/")
    if fs is None:
        # Never format here: a torn image must show up on the bench, not be wiped.
        print("vboard: flash mount failed: OSError %s; no filesystem" % err)
        return False
    vfs.mount(fs, "/")
    os.chdir("/")
    # The search path of a port with ROMFS: the flash first, so a file there shadows
    # the image (`cardshoe flash` removes the code files it deploys to the image).
    sys.path[:] = ["", ".frozen", "/rom", "/rom/lib", "/lib"] if _rom(env) else ["", ".frozen", "/lib"]
    import machine

    uid = env("VBOARD_UID") or "0000000000000000"
    sys.modules["machine"] = _Machine(machine, bytes.fromhex(uid))
    if env("VBOARD_MAIN") != "1":
        return False
    try:
        os.stat("main.py")
    except OSError:
        return False
    return True


def _copy(src_path, dst_path):
    buf = bytearray(4096)
    with open(src_path, "rb") as src, open(dst_path, "wb") as dst:
        while True:
            n = src.readinto(buf)
            if not n:
                return
            dst.write(memoryview(buf)[:n])


def _tool(args):
    """Offline access to an image while the board is off (posix root kept at /)."""
    cmd, image, block_size = args[0], args[1], int(args[2])
    rest = args[3:]
    if cmd == "format":
        from_bdev = FileBlockDevice(image, block_size)
        vfs.VfsLfs2.mkfs(from_bdev, progsize=256)
        return
    vfs.mount(_lfs(image, block_size), "/flash")
    if cmd == "check":
        st = os.statvfs("/flash")
        print("ok %d %d %d" % (st[0], st[2], st[3]))
    elif cmd == "ls":
        for entry in os.ilistdir("/flash" + rest[0]):
            print("%s %d %d" % (entry[0], entry[1], entry[3] if len(entry) > 3 else 0))
    elif cmd == "get":
        _copy("/flash" + rest[0], rest[1])
    elif cmd == "put":
        _copy(rest[0], "/flash" + rest[1])
    elif cmd == "mkdir":
        os.mkdir("/flash" + rest[0])
    elif cmd == "rm":
        os.remove("/flash" + rest[0])
    else:
        raise ValueError("unknown tool command " + cmd)
    vfs.umount("/flash")


if len(sys.argv) > 1 and sys.argv[1] == "--tool":
    _tool(sys.argv[2:])
else:
    # Imported from this script's folder while the host filesystem is still mounted.
    _pico = os.getenv("VBOARD_STACK", "pico") == "pico"
    _budget = os.getenv("VBOARD_STACK_BUDGET")  # bytes; the calibrated Pico's by default
    if _pico:
        import picostack as _stack

        del sys.modules["picostack"]
    _run_main = _boot()
    # Leave main.py and the REPL a namespace as bare as a board's.
    del _boot, _tool, _copy, _lfs, _rom, _Machine, _Wdt, _Vfs, FileBlockDevice, _BLOCK_ERASED, _ROMFS_MAGIC, _ROM_BLOCK
    del os, sys, vfs
    import gc

    gc.collect()
    del gc
    if _pico:
        # From here on, main.py and the REPL after it have a Pico's C stack.
        _stack.limit(int(_budget)) if _budget else _stack.limit()
        _stack.__dict__.clear()  # only its import shim stays (it uses no global)
        del _stack
    del _pico, _budget
    if _run_main:
        del _run_main
        # main.py is read and compiled first, then ^C turned on, as pyexec does for it. On
        # a Pico the flash is read by C code, where a pending KeyboardInterrupt is not
        # raised (only at the program's first jump); here the block device is Python
        # (FileBlockDevice), whose jumps would raise it before main.py runs at all.
        with open("main.py") as _f:
            _main = compile(_f.read(), "main.py", "exec")
        del _f
        micropython.kbd_intr(3)
        del micropython
        exec(_main)
    else:
        del _run_main
        micropython.kbd_intr(3)
        del micropython
