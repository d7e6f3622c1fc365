# mypy: ignore-errors
# This file runs under the MicroPython unix port, not CPython: a Raspberry Pi Pico's C
# stack for the virtual board. Imported by the boot scripts (runtime/vboard_boot.py, the
# firmware tests' tests/firmware/mpy/vboot.py), the firmware tests' runner and the
# benchmarks before anything else runs; kept small, as it stays in their heap (under
# 1 KB; the C stack's high-water mark for the benchmark is runtime/stackmark.py).
#
# Why: the stock rp2 build (v1.28, RPI_PICO) runs MicroPython on an 8 KB C stack, on which
# a one-argument recursive function at the REPL's top level reaches depth 30 before
# "RuntimeError: maximum recursion depth exceeded" (shared notes, rp2-port-facts.md). The
# unix port's main thread allows 80,000 bytes (about 200 such calls here): code that
# passes every test on it can kill the shoe on a Pico (issue 26: NEW_SHOE recursed 24
# deep in `store._collect`).
#
# How: MicroPython checks the C stack at every call of Python code (`mp_cstack_check`, py/
# cstack.c) against `MP_STATE_THREAD(stack_limit)`, measured from `stack_top`. On the unix
# port's main thread those are the first two words of `mp_state_ctx` (py/mpstate.h:
# `mp_state_thread_t` begins `char *stack_top; size_t stack_limit;`), whose address the
# launcher (cardshoe.hil.vboard.xip) takes from the port's symbol table and exports as
# VBOARD_MP_STATE. `limit()` lowers the limit to the stack in use now plus BUDGET, so that
# the code run next (main.py, a test's body) has the room a Pico's main.py has.
#
# Not a `_thread` with a small `_thread.stack_size()`, although the check is per thread
# (a thread's limit is its stack size less the port's 8 KB overflow margin: 16,384 bytes
# gives depth 20, 20,000 depth 29): KeyboardInterrupt (`mp_sched_keyboard_interrupt`,
# MP_STATE_MAIN_THREAD) and the scheduler only reach the main thread, so main.py in a
# thread would no longer see a ^C as a Pico's main.py does (xip.py plays the USB stack).
# The main thread's limit also holds for the REPL after main.py, as on a Pico.
import micropython
import os
import struct
import uctypes
from micropython import const

# Calibrated (tests/hil/test_vboard_pico_stack.py): a one-argument recursive function at the top
# level of main.py on the virtual board reaches depth 30 with this budget on the x86-64
# unix port, as on the RP2040's 8 KB. A call costs about 390 bytes of C stack here, 270
# there (64-bit words), so the budget in bytes is larger than 8 KB while the depth is
# the Pico's. (`limit()` is called one level below the code it measures for.)
_BUDGET = const(12000)
# Imports. The unix port builds each import's path in a buffer of MICROPY_ALLOC_PATH_MAX
# bytes on the C stack (py/builtinimport.c, VSTR_FIXED): PATH_MAX, 4,096 bytes, where rp2
# has 128 (ports/rp2/mpconfigport.h). Measured here, an import from main.py's top level
# costs the code it runs 13 levels of calls; on a Pico the same frames and a 128-byte buffer
# are about 3. So that the firmware's imports (a command's module, loaded while the link
# handles it) cost what they cost on a Pico and no more, `limit()` replaces
# `builtins.__import__` by one that raises the limit by the difference while an import
# runs (and its own frame, which a Pico does not run: measured, an import then costs 3
# levels, 31 -> 28).
_IMPORT_EXTRA = const(4096 - 128 + 400)
_UNIX_LIMIT = const(80000)  # the unix port's own limit on a 64-bit machine: 40000 * sizeof(void *) / 4


def limit(budget=_BUDGET):
    """Lower the main thread's C-stack limit to the stack in use here plus `budget`, and make
    imports cost what they cost on a Pico (_IMPORT_EXTRA); returns the limit, the shim's
    counters (imports running, imports made mod 256) and its hook (a one-item list: a
    function called with 1 as an import starts and 0 as it ends), for runtime/stackmark.py.

    Refuses (RuntimeError) unless the limit found is the port's own: another layout of
    `mp_state_ctx` would make this write somewhere else. The limit is written with
    struct.pack_into into a view made once (a uctypes attribute allocates 128 bytes a read
    or a write, and the import shim runs for every import, of a module loaded or not)."""
    address = os.getenv("VBOARD_MP_STATE")
    if not address:
        raise OSError("no VBOARD_MP_STATE: run the port through cardshoe.hil.vboard.xip")
    word = uctypes.bytearray_at(int(address, 16) + 8, 8)  # mp_state_ctx.thread.stack_limit
    found = struct.unpack("<Q", word)[0]
    if found != _UNIX_LIMIT:
        raise RuntimeError("picostack: an unknown mp_state_ctx layout")
    base = micropython.stack_use() + budget
    struct.pack_into("<Q", word, 0, base)
    import builtins

    real = builtins.__import__
    pack = struct.pack_into
    nested = bytearray(2)
    hook = [None]  # hook[0](1) as an import starts and hook[0](0) as it ends (runtime/stackmark.py)

    # No global in here (the caller empties this module's dict, which the function keeps),
    # and no local: its state must stay on the C stack (11 words), or each import allocates.
    def pico_import(name, g=None, l=None, fromlist=(), level=0):  # noqa: E741
        nested[0] += 1
        nested[1] = (nested[1] + 1) & 0xFF
        pack("<Q", word, 0, base + _IMPORT_EXTRA * nested[0])
        if hook[0] is not None:
            hook[0](1)
        try:
            return real(name, g, l, fromlist, level)
        finally:
            nested[0] -= 1
            pack("<Q", word, 0, base + _IMPORT_EXTRA * nested[0])
            if hook[0] is not None:
                hook[0](0)

    builtins.__import__ = pico_import
    return base, nested, hook
