# Installs the firmware tree into the virtual shoe's littlefs2 image (tests/firmware/vshoe.py):
# format the image VS_IMG if new, copy the tree VS_SRC into it. Run without a heap bound
# (it is `cardshoe flash`'s job on a board); vboot.py is the board's boot.
import os
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


img = os.getenv("VS_IMG")
bd = FileBlocks(img, os.stat(img)[6] // BS)
try:
    vfs.mount(vfs.VfsLfs2(bd, progsize=256), "/flash")
except OSError:
    vfs.VfsLfs2.mkfs(bd, progsize=256)
    vfs.mount(vfs.VfsLfs2(bd, progsize=256), "/flash")
src = os.getenv("VS_SRC")

def copy(rel):
    for name, kind, *_ in os.ilistdir(src + rel):
        if kind == 0x4000:
            try:
                os.mkdir("/flash" + rel + "/" + name)
            except OSError:
                pass
            copy(rel + "/" + name)
        else:
            with open(src + rel + "/" + name, "rb") as a, open("/flash" + rel + "/" + name, "wb") as b:
                b.write(a.read())

copy("")
vfs.umount("/flash")
