"""The crash record: what an exception that escaped the boot or the main loop leaves on
the flash before main.py resets the board (firmware/README.md, "Crash").

Loaded only then (it costs the streaming heap nothing): main.py catches the exception,
the shoe's objects are garbage once the boot or the loop has unwound, a collection gives
their heap back, and `record()` writes `data/crash.bin` (56 bytes, write-temp-then-rename,
CRC-32) from the crash context the firmware keeps in `app.mem.ctx` while it runs (no
allocation there): the boot counter, whether the shoe was streaming, and the host
command being executed (type, epoch, seq). The next boot reports it (`take`, called by app/run.py when the file is there: HELLO
reset_cause 6 and a CRASH frame, SPEC 5) and renames it `crash.old`, which the next crash
reads to count crashes in a row.

Record (`<4sIBBBBII32sI`): magic `CSK1`, boot (0: the crash came before this boot was
counted), where (1 boot, 2 streaming), error (ERRORS), count (crashes in a row, 1-255),
command type (0: none), its epoch and seq, text (the exception's class and the innermost
`file:line`, ASCII, NUL-padded), CRC-32 of what precedes it. The CRASH frame's payload is
the record from `boot` to `text` (48 bytes).
"""

import os
import struct
import sys
from binascii import crc32

from micropython import const

from app import mem

_FMT = "<4sIBBBBII32s"
_SIZE = const(56)
_BODY = const(52)
_TEXT = const(32)
MAGIC = b"CSK1"
WHERE_BOOT = const(1)
WHERE_STREAMING = const(2)
# SPEC 5 CRASH `error`: the exception's class (checked in this order; the text names it).
ERRORS = ((MemoryError, 1), (RuntimeError, 2), (OSError, 3), (ImportError, 4), (KeyboardInterrupt, 5))
_OTHER = const(6)


def read(path):
    """The record at `path` (a bytearray of _SIZE bytes), or None if absent or bad."""
    b = bytearray(_SIZE)
    try:
        with open(path, "rb") as f:
            n = f.readinto(b)
    except OSError:
        return None
    if n != _SIZE or b[:4] != MAGIC or crc32(memoryview(b)[:_BODY]) != struct.unpack_from("<I", b, _BODY)[0]:
        return None
    return b


def take(data):
    """The crash record the last boot left under `data` (the boot's, app/run.py), as the
    CRASH frame's payload (bytes), or None. Reported once: renamed `crash.old`, which the
    next crash reads to count crashes in a row; a bad one is removed."""
    path = data + "crash.bin"
    rec = read(path)
    try:
        if rec is None:
            os.remove(path)
            return None
        os.rename(path, data + "crash.old")
    except OSError:
        pass  # the flash refuses: reported again at the next boot
    return None if rec is None else bytes(memoryview(rec)[4:_BODY])


def _text(e):
    """`Class module:line` of the innermost firmware frame (from the traceback's text), cut
    to fit. The firmware's modules are named by their path in the firmware tree (`cardshoe
    flash` compiles them so: "app/store.py", "main.py"); a frame with an absolute path is the
    board's own code (the virtual board's boot script and its Pico-stack import shim,
    hil/vboard/runtime), not the firmware's, and is passed over."""
    name = type(e).__name__
    where = ""
    try:
        import io

        out = io.BytesIO()
        sys.print_exception(e, out)
        tb = out.getvalue()
        at = tb.rfind(b'  File "')
        while at >= 0 and tb[at + 8] == 47:  # "/": not the firmware's
            at = tb.rfind(b'  File "', 0, at)
        if at >= 0:
            end = tb.find(b'"', at + 8)
            line = tb.find(b", line ", end)
            stop = tb.find(b",", line + 7)
            path = tb[at + 8 : end].decode()
            name_at = path.rfind("/") + 1
            dot = path.rfind(".")
            where = " %s:%s" % (path[name_at : dot if dot > name_at else len(path)], tb[line + 7 : stop].decode())
    except Exception:  # noqa: BLE001 - no heap for the traceback: the class alone
        pass
    return (name + where).encode()[:_TEXT]


def record(e, data=None):
    """Write the crash record of exception `e` under `data` (default: the board's data/)."""
    if data is None:
        data = mem.root + "data/"
    ctx = mem.ctx
    boot = struct.unpack_from("<I", ctx, 0)[0]
    error = _OTHER
    for cls, code in ERRORS:
        if isinstance(e, cls):
            error = code
            break
    count = 1
    prev = read(data + "crash.bin")  # a crash no boot has reported yet: this one follows it
    if prev is None:
        prev = read(data + "crash.old")  # reported: in a row if its boot was the one before
        if prev is not None and not (boot and struct.unpack_from("<I", prev, 4)[0] + 1 == boot):
            prev = None
    if prev is not None:
        count = min(prev[10] + 1, 255)
    b = bytearray(_SIZE)
    struct.pack_into(
        _FMT,
        b,
        0,
        MAGIC,
        boot,
        WHERE_STREAMING if ctx[4] else WHERE_BOOT,
        error,
        count,
        ctx[5],
        struct.unpack_from("<I", ctx, 8)[0],
        struct.unpack_from("<I", ctx, 12)[0],
        _text(e),
    )
    struct.pack_into("<I", b, _BODY, crc32(memoryview(b)[:_BODY]))
    try:
        os.mkdir(data[:-1])
    except OSError:
        pass
    with open(data + "crash.tmp", "wb") as f:
        f.write(b)
    os.rename(data + "crash.tmp", data + "crash.bin")
