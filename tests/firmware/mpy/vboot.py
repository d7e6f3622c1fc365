# Boot script of the firmware tests' virtual shoe (tests/firmware/vshoe.py), run by
# `micropython`: a littlefs2 image on a file-backed block device, as on a board.
#   VS_MODE=install  format the image if new, copy the tree VS_SRC into it
#   VS_MODE=run      mount the image at /, run main.py from it (a board's boot)
import os
import sys
import vfs

BS = 4096


class FileBlocks:
    def __init__(self, path, blocks):
        self.n = blocks
        self.f = open(path, "r+b")

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
            self.f.write(b"\xff" * BS)
        return 0


img = os.getenv("VS_IMG")
bd = FileBlocks(img, os.stat(img)[6] // BS)
if os.getenv("VS_MODE") == "install":
    try:
        vfs.mount(vfs.VfsLfs2(bd), "/flash")
    except OSError:
        vfs.VfsLfs2.mkfs(bd)
        vfs.mount(vfs.VfsLfs2(bd), "/flash")
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
else:
    vfs.mount(vfs.VfsLfs2(bd), "/")
    os.chdir("/")
    sys.path[:] = ["/", "/lib"]
    exec(open("main.py").read(), {"__name__": "__main__"})
