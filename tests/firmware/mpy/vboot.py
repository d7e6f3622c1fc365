# Boot script of the firmware tests' virtual shoe (tests/firmware/vshoe.py), run by
# `micropython -X heapsize=64k`: mount the littlefs2 image VS_IMG (a file-backed block
# device) at / and run main.py from it, as a board's boot does. Kept small: it stays
# in the heap under the firmware. (vinstall.py puts the firmware into the image.)
import os
import sys
import vfs

BS = 4096


class FileBlocks:
    # The flash of the virtual board. On a board the flash driver is C and takes no heap;
    # here an erase writes 0xFF from one small buffer made at mount, so the block device
    # never asks the firmware's 64 KB heap for a block-sized piece.
    def __init__(self, path, blocks):
        self.n = blocks
        self.f = open(path, "r+b")
        self.ff = b"\xff" * 256

    def readblocks(self, block, buf, off=0):
        self.f.seek(block * BS + off)
        self.f.readinto(buf)

    def writeblocks(self, block, buf, off=None):
        self.f.seek(block * BS + (off or 0))
        self.f.write(buf)

    def ioctl(self, op, arg):
        if op == 4:
            return self.n
        if op == 5:
            return BS
        if op == 6:
            self.f.seek(arg * BS)
            for _ in range(BS // 256):
                self.f.write(self.ff)
        return 0


# A Pico's C stack (cardshoe.hil.vboard's runtime/picostack.py, whose folder is VS_STACK),
# imported while the host's filesystem is still mounted, applied just before main.py.
stack = os.getenv("VS_STACK")
picostack = None
if stack:
    sys.path.insert(0, stack)
    import picostack

    del sys.modules["picostack"], sys.path[0]
del stack
img = os.getenv("VS_IMG")
vfs.mount(vfs.VfsLfs2(FileBlocks(img, os.stat(img)[6] // BS), progsize=256), "/")  # as the Pico mounts it
del img
os.chdir("/")
sys.path[:] = ["/", "/lib"]
rom = os.getenv("VBOARD_ROMFS_ADDR")  # the code's ROMFS image, mapped by cardshoe.hil.vboard.xip
if rom:
    import uctypes

    vfs.mount(vfs.VfsRom(uctypes.bytearray_at(int(rom, 16), int(os.getenv("VBOARD_ROMFS_SIZE")))), "/rom")
    sys.path[:] = ["/", "/rom", "/rom/lib", "/lib"]
    del uctypes
del rom
import machine


class _Machine:
    # `machine` as the bare unix port has it, and reset(): the process ends with status 80,
    # which VShoe reads as the board resetting itself (firmware/main.py after a crash).
    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def reset(self):
        sys.exit(80)


sys.modules["machine"] = _Machine(machine)
del machine
if picostack is not None:
    budget = os.getenv("VBOARD_STACK_BUDGET")  # bytes; the calibrated Pico's by default
    picostack.limit(int(budget)) if budget else picostack.limit()
    del budget
    picostack.__dict__.clear()  # only its import shim stays (it uses no global)
del picostack
execfile("main.py")  # as a board runs it: compiled from the file, no copy of its text kept
