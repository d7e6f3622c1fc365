"""One arena for the app's large buffers, allocated before the other modules load.

Loading .mpy modules leaves a small heap fragmented; buffers carved out of an arena
made first, low in the heap, cannot be refused later. (No room is held back while
the modules load: on a 64 KB heap every block is needed then; `app.run` collects
after each module instead, see firmware/README.md "Memory".)
"""

from micropython import const

_SIZE = const(2820)
_arena = bytearray(_SIZE)
_mv = memoryview(_arena)
_at = 0


def take(n):
    """A zeroed buffer of `n` bytes (a memoryview) from the arena, or from the heap once it is spent."""
    global _at
    if _at + n <= _SIZE:
        mv = _mv[_at : _at + n]
        _at += n
        return mv
    return memoryview(bytearray(n))
