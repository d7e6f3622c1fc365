# mypy: ignore-errors
# This file runs under the MicroPython unix port, not CPython: the C stack's high-water mark,
# for `cardshoe bench firmware` (host/benchmarks/firmware_stack.py), on the unix port run
# by the virtual board's launcher with a Pico's stack limit (runtime/picostack.py).
#
# paint() fills the unused C stack below its caller, down to the limit, with a pattern;
# high_water() finds the deepest byte written since: the deepest the stack went, C frames
# included (littlefs, the collector, hashlib), which a sample of micropython.stack_use()
# at the Python level would miss. The main thread's `stack_top` and `stack_limit` are the
# first two words of the port's `mp_state_ctx` (VBOARD_MP_STATE, from the launcher).
import micropython
import os
import struct
import uctypes

_PAINT = 0xA5
_GAP = 1024  # left unpainted below paint()'s caller: paint()'s own frames
_CHUNK = 256


def _words():
    """(stack_top, stack_limit) of the main thread now."""
    return struct.unpack("<QQ", uctypes.bytearray_at(int(os.getenv("VBOARD_MP_STATE"), 16), 16))


def paint():
    """Fill the C stack below the caller, down to the limit, with the pattern; returns the
    stack in use at the caller (bytes)."""
    top, limit = _words()
    use = micropython.stack_use()
    low = top - limit
    n = (top - use - _GAP) - low
    mem = uctypes.bytearray_at(low, n)
    chunk = bytes((_PAINT,)) * _CHUNK
    at = 0
    while at + _CHUNK <= n:
        mem[at : at + _CHUNK] = chunk
        at += _CHUNK
    while at < n:
        mem[at] = _PAINT
        at += 1
    return use


def high_water():
    """The deepest C stack use since paint(), in bytes from the stack's top (C frames
    included), and the limit now."""
    top, limit = _words()
    mem = uctypes.bytearray_at(top - limit, limit)
    at = 0
    while at < limit and mem[at] == _PAINT:
        at += 1
    return limit - at, limit
