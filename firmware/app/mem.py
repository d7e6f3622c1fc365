"""One arena for the app's large buffers, allocated before the other modules load.

Loading .mpy modules leaves a small heap fragmented; buffers carved out of an arena
made first cannot be refused later. `hole` is room kept free while the modules load
and released (one contiguous piece) before the shoe builds its objects.
"""

import gc

from micropython import const

_SIZE = const(2816)
_arena = bytearray(_SIZE)
_mv = memoryview(_arena)
_at = 0
hole = bytearray(2048)


def take(n):
    """A zeroed buffer of `n` bytes (a memoryview) from the arena, or from the heap once it is spent."""
    global _at
    if _at + n <= _SIZE:
        mv = _mv[_at : _at + n]
        _at += n
        return mv
    return memoryview(bytearray(n))


def release():
    """Give back the room kept while the modules loaded."""
    global hole
    hole = None
    gc.collect()
