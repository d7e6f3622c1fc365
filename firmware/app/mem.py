"""One arena for the app's large buffers, allocated before the other modules load.

Loading .mpy modules leaves a small heap fragmented; buffers carved out of an arena
made first, low in the heap, cannot be refused later. (No room is held back while
the modules load: on a 64 KB heap every block is needed then; `app.run` collects
after each module instead, see firmware/README.md "Memory".)

`ctx` (the arena's last 16 bytes) is the crash context, kept up to date while the
firmware runs so that `app.crash` can write it down if an exception escapes (main.py):
the boot counter once counted (u32 at 0), 1 at 4 once the shoe streams, and the host
command being executed: its type at 5 (0: none), epoch and seq (u32 at 8 and 12). At 6, 1
while the last boot's crash record waits to be sent after HELLO (app/run.py, Shoe.hello).
`root` is the flash root of the board (app/run.py sets it), where `data/` is.
"""

from micropython import const

_SIZE = const(2820)
_CTX = const(16)
_arena = bytearray(_SIZE + _CTX)
_mv = memoryview(_arena)
_at = 0
ctx = _mv[_SIZE:]
root = ""


def take(n):
    """A zeroed buffer of `n` bytes (a memoryview) from the arena, or from the heap once it is spent."""
    global _at
    if _at + n <= _SIZE:
        mv = _mv[_at : _at + n]
        _at += n
        return mv
    return memoryview(bytearray(n))
