# mypy: ignore-errors
# This file runs under the MicroPython unix port, not CPython: the C stack's high-water mark,
# for `cardshoe bench firmware` (host/benchmarks/firmware_stack.py), on the unix port run
# by the virtual board's launcher with a Pico's stack limit (runtime/picostack.py).
#
# paint() fills the unused C stack below its caller with a pattern; high_water() finds the
# deepest byte written since: the deepest the stack went, C frames included (littlefs, the
# collector, hashlib), which a sample of micropython.stack_use() at the Python level would
# miss. The main thread's `stack_top` and `stack_limit` are the first two words of the
# port's `mp_state_ctx` (VBOARD_MP_STATE, from the launcher).
#
# While a module is imported, picostack allows the import's own path buffer beyond a
# Pico's (its limit is higher): `watch()` hooks its import shim, so that what an operation
# used inside imports and outside them are measured apart (`take()`), each against its limit.
import micropython
import os
import struct
import uctypes

_PAINT = 0xA5
_GAP = 1024  # left unpainted below paint()'s caller: paint()'s own frames
_CHUNK = 256
_DEEPER = 2 * (4096 - 128 + 400)  # painted beyond the limit: two imports' allowance (picostack)

_floor = 0  # the lowest address painted
_counters = None  # picostack.limit()'s counters: imports running, imports made (mod 256)
_levels = {}  # imports running -> the deepest use while that many ran, since take()


def _words():
    """(stack_top, stack_limit) of the main thread now."""
    return struct.unpack("<QQ", uctypes.bytearray_at(int(os.getenv("VBOARD_MP_STATE"), 16), 16))


def stack():
    """(the stack in use here, the limit now), bytes."""
    return micropython.stack_use(), _words()[1]


def paint():
    """Fill the C stack below the caller with the pattern, down to the limit and two imports'
    allowance beyond; returns the stack in use at the caller (bytes)."""
    global _floor
    top, limit = _words()
    use = micropython.stack_use()
    _floor = top - limit - _DEEPER
    n = (top - use - _GAP) - _floor
    mem = uctypes.bytearray_at(_floor, n)
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
    """The deepest C stack use since paint(), in bytes from the stack's top."""
    if not _floor:
        return 0  # nothing painted yet
    top = _words()[0]
    mem = uctypes.bytearray_at(_floor, top - _floor)
    at = 0
    while at < top - _floor and mem[at] == _PAINT:
        at += 1
    return top - _floor - at


def _note(level):
    _levels[level] = max(_levels.get(level, 0), high_water())
    paint()


def _on_import(starting):
    # Called as an import starts (its count already up) and as it ends (already down): the
    # stretch just run ran with one import fewer, or one more, than now.
    if _floor:
        level = _counters[0]
        _note(level - 1 if starting else level + 1)


def watch(limit_result):
    """Hook picostack's import shim (`limit_result`: what picostack.limit() returned)."""
    global _counters
    _counters = limit_result[1]
    limit_result[2][0] = _on_import


def take():
    """{imports running: the deepest use while that many ran} since the last take() (0:
    outside any import; each import running allows picostack's import allowance more); the
    stack is painted again for the next operation."""
    global _levels
    _note(_counters[0] if _counters is not None else 0)
    out = _levels
    _levels = {}
    return out
