"""The firmware hash reported in HELLO (SPEC section 5, firmware/README.md "Manifest").

The manifest of the firmware is every file whose name ends in `.py` or `.mpy` at the
root of the flash (main.py, and anything else there: a boot.py, or a module that
would be imported before the firmware's) or under `app/`, `boards/`, `drivers/` or
`lib/`. The hash is SHA-256 over those files sorted by path, each contributing
`path` (UTF-8, `/`-separated, relative to the root), a NUL byte, its size as u32
little-endian and its bytes. `cardshoe flash` computes the same over the files it
copies, so a file left behind or changed on the board changes the hash.

On a board with a ROMFS partition the code is in the image mounted at /rom and only
main.py is on the flash; the files of both places make one manifest, paths relative to
their own root. A file in both (an old copy on the flash shadowing the image) is listed
twice, so the hash cannot match the build's and `cardshoe flash` says so.
"""

import hashlib
import os
import struct

DIRS = ("app", "boards", "drivers", "lib")
SUFFIXES = (".py", ".mpy")
ROM = "/rom/"


def _walk(root, rel, out):
    """Append the firmware files under `root + rel`, sub-folders included: a list of the
    folders still to read, not a call per level (a folder tree on the flash, however deep,
    must not overflow a Pico's 8 KB C stack at boot)."""
    todo = [rel]
    while todo:
        rel = todo.pop()
        try:
            entries = os.ilistdir(root + rel)
        except OSError:
            continue
        for entry in entries:
            name = entry[0]
            path = rel + "/" + name
            if entry[1] == 0x4000:
                todo.append(path)
            elif name.endswith(SUFFIXES[0]) or name.endswith(SUFFIXES[1]):
                out.append((path, root))


def manifest(root="", rom=ROM):
    """The firmware's files as (path relative to its root, root), sorted by path: those
    under `root` (the flash) and under `rom` (a ROMFS image, when one is mounted)."""
    files = []
    for base in (root, rom):
        try:
            entries = os.ilistdir(base or ".")
        except OSError:
            continue
        for entry in entries:
            name = entry[0]
            if entry[1] != 0x4000 and (name.endswith(SUFFIXES[0]) or name.endswith(SUFFIXES[1])):
                files.append((name, base))
        for d in DIRS:
            _walk(base, d, files)
    files.sort()
    return files


def firmware_hash(root="", rom=ROM):
    """SHA-256 of the firmware files as listed by `manifest(root, rom)`."""
    h = hashlib.sha256()
    buf = bytearray(256)
    mv = memoryview(buf)
    for path, base in manifest(root, rom):
        full = base + path
        size = os.stat(full)[6]
        h.update(path.encode())
        h.update(struct.pack("<BI", 0, size))
        with open(full, "rb") as f:
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                h.update(mv[:n])
    return h.digest()
